# A failure reaches the user with the file it concerns and its cause, once;
# the command table alone decides which argument counts a command takes.
# Runs in its own temporary working folder.
source [file join [file dirname [info script]] support harness.tcl]

set root [file normalize [file join [file dirname [info script]] .. ..]]
set tmp [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}]
set work [file join $tmp mapvis-errors-[pid]]
file delete -force $work
file mkdir $work
cd $work
set work [pwd]
set mapvis [info nameofexecutable]

proc write {path text} {
    file mkdir [file dirname $path]
    set f [open $path w]
    puts -nonewline $f $text
    close $f
}
# The error line of a script run by another mapvis session in this folder.
proc session_error {script} {
    catch {exec $::mapvis -c $script 2>@1} out
    return [lsearch -inline [split $out \n] error:*]
}

# --- The system's reason follows the shell's sentence ----------------------
test missing-trace {catch {load_trace nothing.mvt} m; set m} \
    {the trace nothing.mvt cannot be read: No such file or directory (os error 2).}

# .mapvis/bin is a file, so compile_exe cannot make the folder.
write .mapvis/bin "not a folder"
test folder-is-a-file {catch {compile_exe [file join $root scripts rowcol.c]} m; set m} \
    "cannot create $work/.mapvis/bin: File exists (os error 17)."
file delete .mapvis/bin

# --- A stage's error keeps its cause, said once ------------------------------
compile_exe [file join $root scripts rowcol.c]
run_gleipnir
memory_trace_analysis
# A trace damaged in its middle: the reader's reason reaches the user
# through dump_trace's error, with the file and the block that failed its
# checksum.
set f [open .mapvis/trace.mvt rb]
set bytes [read $f]
close $f
set half [expr {[string length $bytes] / 2}]
set f [open mid.mvt wb]
puts -nonewline $f [string range $bytes 0 $half-1][string repeat \xff 64][string range $bytes $half+64 end]
close $f
test corrupt-trace {
    catch {dump_trace mid.mvt 100000} m
    string match "mid.mvt is corrupt: block * (bytes * to *) does not match its checksum, so the trace was changed after it was written. The * accesses before that block were read and are intact; *" $m
} 1
# A missing trace: the reader's sentence holds the system's reason, which
# is not said a second time.
test missing-dump {catch {dump_trace gone.mvt} m; set m} \
    {cannot read the trace gone.mvt: No such file or directory (os error 2).}
# A damaged file of the saved analysis: refused before it is read, with
# the file's name, its size against the size mapvis saved, and the fix.
set saved [file join $work .mapvis analysis locations.parquet]
write $saved "PAR1 damaged by a test"
set saved_dir [file join $work .mapvis analysis]
test damaged-analysis {
    string match "error: the saved analysis in $saved_dir is not the one mapvis saved: $saved has 22 bytes, but mapvis saved * bytes. It is not used, so that counts and names from different files are never mixed: run memory_trace_analysis again to analyse the trace anew (and save_run again for a saved run)." [session_error memory_stats]
} 1

# --- Argument counts come from the table -------------------------------------
set usage2 {wrong # args: should be "2d_memory_access_pattern NAME ?COLS? ?TYPEBYTES? ?save?"}
set usage3 {wrong # args: should be "3d_memory_access_pattern NAME ?COLS? ?DEPTH? ?TYPEBYTES? ?save?"}
test cols-without-typebytes {catch {2d_memory_access_pattern arr 16} m; set m} $usage2
test cols-and-save {catch {2d_memory_access_pattern arr 16 save} m; set m} $usage2
test depth-missing {catch {3d_memory_access_pattern arr 4 4 save} m; set m} $usage3
test shape-inferred-and-saved {file tail [2d_memory_access_pattern arr save]} \
    2d_memory_access_pattern_arr.html
test shape-given {file tail [3d_memory_access_pattern arr 4 4 4]} 3d_memory_access_pattern_arr.html
# `save` alone leaves N out: the 16 x 16 ints of rowcol.c line 16 are one
# site of 1024 bytes.
test sites-save {
    set found 0
    foreach site [alloc_sites save] {
        if {[dict get $site bytes] == 1024
            && [string match *rowcol.c:16* [lindex [dict get $site backtrace] 0]]} {
            incr found
        }
    }
    list $found [file exists visinfo/alloc_sites.csv]
} {1 1}

# Damaged cache settings are said to be damaged, with the parser's reason,
# not silently replaced by the defaults.
write .mapvis/locality.json "{\"cache\": 12"
test damaged-cache-settings {
    catch {exec $mapvis -c {set_cache} 2>@1} out
    string match "*warning: the saved cache settings $work/.mapvis/locality.json are damaged (* line 1 column *); *" $out
} 1

cd $tmp
file delete -force $work
done
