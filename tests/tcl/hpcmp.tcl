# export_hpcmp for real: what must come first, the scope it picks, and the
# JSON a script reads back (the event-by-event check is tests/heap_hpcmp.rs).
source [file join [file dirname [info script]] support harness.tcl]

set root [file normalize [file join [file dirname [info script]] .. ..]]
set tmp [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}]
set work [file join $tmp mapvis-hpcmp-[pid]]
file delete -force $work
file mkdir $work
cd $work

test needs-exe {catch {export_hpcmp out.json} m; set m} \
    {export_hpcmp traces the loaded program: load_exe PATH (or compile_exe SOURCE.c) first.}

proc slurp {path} {
    set f [open $path]
    set text [read $f]
    close $f
    return $text
}

# No pins: the whole run, as HPCMP.
compile_exe [file join $root tests c hpcmp_two.c]
test bad-scope {catch {export_hpcmp two.json both}} 1
set r [export_hpcmp two.json]
test whole-scope {dict get $r scope} whole
test whole-file {file tail [dict get $r file]} two.json
set text [slurp two.json]
test json-list {
    list [string equal [string index $text 0] "\["] [string equal [string index [string trim $text] end] "\]"]
} {1 1}
test fork {regexp {"thid":1,[^\n]*"fork":2} $text} 1
test rel-key {regexp {"thid":2,[^\n]*"rel":} $text} 1
test trace-kept {file exists .mapvis/hpcmp.mvt} 1
test current-trace-untouched {file exists .mapvis/trace.mvt} 0

# Pins: only the region's writes. Each thread fills its own 64 ints
# (256 bytes); the worker reports them at its exit, main at the join.
compile_exe [file join $root tests c trace_threads.c]
set r [export_hpcmp threads.json]
test pins-scope {dict get $r scope} pins
set text [slurp threads.json]
test worker-exit {regexp {"thid":2,[^\n]*"r":0,"w":256\}[^\n]*"join":null} $text} 1
test main-join {regexp {"thid":1,[^\n]*"r":0,"w":256\}[^\n]*"join":2} $text} 1
test whole-asked {dict get [export_hpcmp threads-all.json whole] scope} whole

cd $tmp
file delete -force $work
done
