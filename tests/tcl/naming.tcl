# Names on real code, through the shell: arrays declared with a macro from a
# header found through set_src_path, and a caller's stack array, drawn with
# 2d_memory_access_pattern without giving their shapes.
source [file join [file dirname [info script]] support harness.tcl]

set root [file normalize [file join [file dirname [info script]] .. ..]]
set tmp [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}]
set work [file join $tmp mapvis-naming-[pid]]
file delete -force $work
file mkdir $work
cd $work

proc lines_of {path} {
    set f [open $path]
    set n [llength [split [string trim [read $f]] \n]]
    close $f
    return $n
}

set c [file join $root tests c]
test macro-compile {
    file tail [compile_exe [file join $c nm_macro.c] -I[file join $c nm_inc] [file join $c nm_util.c]]
} nm_macro
test macro-src-path {set_src_path $c; return ok} ok
set_mem_alloc H
test macro-run {dict get [run_gleipnir] regions} 1
memory_trace_analysis
filtering_process
test macro-names {lsort [lmap row [memory_stats] {dict get $row variable}]} {A B C v}
# A is 6 x 5 doubles from the cast in ARRAY_2D_DECL: 30 stores and 30 loads,
# one CSV row per access.
test macro-2d {file tail [2d_memory_access_pattern A save]} 2d_memory_access_pattern_A.html
test macro-2d-rows {lines_of visinfo/2d_memory_access_pattern_A.csv} 61
# C is 2 x 3 x 4 floats: 24 stores.
test macro-3d {file tail [3d_memory_access_pattern C save]} 3d_memory_access_pattern_C.html
test macro-3d-rows {lines_of visinfo/3d_memory_access_pattern_C.csv} 25

test frames-compile {file tail [compile_exe [file join $c nm_frames.c] -pthread]} nm_frames
set_mem_alloc S
test frames-run {dict get [run_gleipnir] regions} 1
memory_trace_analysis
filtering_process
# main's grid[4][8], filled by a callee: 32 stores.
test frames-2d {file tail [2d_memory_access_pattern grid save]} 2d_memory_access_pattern_grid.html
test frames-2d-rows {lines_of visinfo/2d_memory_access_pattern_grid.csv} 33

# A list built in a loop: its 200 nodes are one row by default, and so are
# the rows one array holds (set_heap_grouping root).
test list-compile {file tail [compile_exe [file join $c nm_list.c]]} nm_list
set_mem_alloc H
run_gleipnir
memory_trace_analysis
filtering_process
test list-root {lsort [lmap row [memory_stats] {dict get $row variable}]} {n {rows[i]}}
test list-blocks {dict get [lindex [memory_stats] 0] blocks} 200
test list-instances {set_heap_grouping instances; llength [memory_stats]} 203
test list-site {set_heap_grouping site; lsort [lmap row [memory_stats] {dict get $row variable}]} {n {rows[i]#1} {rows[i]#2} {rows[i]#3}}
# memory_stats prints the list's fields summed over its 200 nodes: 4-byte
# val and 8-byte next, each stored once per node.
test list-fields {
    set rows {}
    foreach l [split [exec [info nameofexecutable] -c memory_stats] \n] {
        if {[lindex $l 0] eq "n" && [string match n.* [lindex $l 1]]} {
            lappend rows [lrange $l 1 end]
        }
    }
    set rows
} {{n.next 200 0 1600 200} {n.val 200 0 800 200}}
test list-figure {file tail [complete_memory_access_pattern]} complete_memory_access_pattern.html

cd $tmp
file delete -force $work
done
