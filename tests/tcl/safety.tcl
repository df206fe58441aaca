# Nothing the user made is ever lost: clear_analysis removes only what
# mapvis wrote, a stale analysis is never shown as current, a failed run
# keeps the previous trace, bad settings are refused or reported, and
# figure commands refuse shapes they cannot draw. Runs in its own folder.
source [file join [file dirname [info script]] support harness.tcl]

set root [file normalize [file join [file dirname [info script]] .. ..]]
set tmp [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}]
set top [file join $tmp mapvis-safety-[pid]]
file delete -force $top
set work [file join $top work]
file mkdir $work
cd $work
set mapvis [info nameofexecutable]

proc write {path text} {
    file mkdir [file dirname $path]
    set f [open $path w]
    puts -nonewline $f $text
    close $f
}
proc slurp {path} {
    set f [open $path]
    set t [read $f]
    close $f
    return $t
}
# Output of another mapvis session in this folder (stdout and stderr).
proc session {script} {
    catch {exec $::mapvis -c $script 2>@1} out
    return $out
}

# --- clear_analysis removes only the files mapvis wrote ---------------------
compile_exe [file join $root scripts rowcol.c]
set_mem_alloc H
run_gleipnir
memory_trace_analysis
filtering_process
complete_memory_access_pattern
2d_memory_access_pattern arr 16 4 save
set mine {
    figures/2d_memory_access_pattern_for_paper.html
    figures/complete_memory_access_pattern_v2.html
    visinfo/complete_memory_access_pattern_notes.csv
    visinfo/my_table.csv
    grindanalysis/my_notes.txt
}
foreach f $mine { write $f "the user's own file" }
test clear-removes-ours {expr {[llength [clear_analysis]] >= 10}} 1
test clear-keeps-users {lmap f $mine {file exists $f}} {1 1 1 1 1}
test clear-removed {
    lmap f {.mapvis/trace.mvt .mapvis/analysis visinfo/order_data.csv
            figures/complete_memory_access_pattern.html
            figures/2d_memory_access_pattern_arr.html} {file exists $f}
} {0 0 0 0 0}

# A folder that is a symbolic link out of the working folder is not
# written through (the command refuses, naming the link), and
# clear_analysis removes nothing through it.
set precious [file join $top precious]
write [file join $precious notes.txt] "keep me"
write [file join $precious cachegrind_rowcol.log] "mine too"
file delete -force grindanalysis
file link -symbolic grindanalysis $precious
test dhat-through-link {
    catch {dhat} m
    string match "*grindanalysis is a symbolic link*nothing was written*Remove the link*" $m
} 1
clear_analysis
test clear-no-symlink {lsort [glob -tails -directory $precious *]} \
    {cachegrind_rowcol.log notes.txt}
file delete grindanalysis

# --- A failed run keeps the previous trace and its analysis ----------------
run_gleipnir
memory_trace_analysis
set trace_before [slurp .mapvis/trace.mvt]
set stats_before [memory_stats]
compile_exe [file join $root tests c safety_nopins.c]
test run-without-region {
    catch {run_gleipnir} m
    string match "*no region was traced*previous trace*is kept*" $m
} 1
test previous-trace-kept {expr {[slurp .mapvis/trace.mvt] eq $trace_before}} 1
test previous-analysis-current {expr {[memory_stats] eq $stats_before}} 1

# --- A stale analysis is never shown as current ----------------------------
# Another session traces another program into this folder.
session "compile_exe [file join $root tests c an_five.c]; run_gleipnir"
test stale-in-this-session {
    catch {memory_stats} m
    string match "*analysis was made from the trace*Run memory_trace_analysis*" $m
} 1
test stale-in-a-new-session {
    string match "*analysis was made from the trace*" [session {set_mem_alloc H; memory_stats}]
} 1
test fresh-again {
    memory_trace_analysis
    expr {[llength [memory_stats]] > 0}
} 1

# --- Settings -------------------------------------------------------------
test valgrind-true {
    catch {set_valgrind_path /bin/true} m
    string match "*/bin/true is not Valgrind*" $m
} 1
test valgrind-true-not-saved {string first /bin/true [slurp .mapvis/session.json]} -1
set g [file join $top garbage]
write [file join $g .mapvis session.json] "{not json"
cd $g
test garbage-settings {
    string match "*saved settings*session.json are damaged*" [session {set_mem_alloc H}]
} 1
test garbage-kept {file exists .mapvis/session.json.bad} 1
cd $work

# A % in the folder's name reaches Valgrind's --log-file unexpanded.
set pct [file join $top "pct%p%%dir"]
file mkdir $pct
cd $pct
load_exe [file join $work .mapvis bin rowcol]
test percent-folder {file exists [dhat]} 1
cd $work

# --- Figure shapes that cannot be drawn are refused, quickly --------------
compile_exe [file join $root scripts rowcol.c]
run_gleipnir
memory_trace_analysis
test grid-too-wide {
    catch {2d_memory_access_pattern arr 281474976710656 4} m
    string match "*cannot be drawn with 281474976710656 columns*" $m
} 1
test grid-3d-overflow {
    catch {3d_memory_access_pattern arr 4294967296 4294967296 4} m
    string match "*cannot be drawn*" $m
} 1
test grid-one-row {file tail [2d_memory_access_pattern arr 256 4]} 2d_memory_access_pattern_arr.html
# arr's 16 x 16 comes from its size expression, which declares no shape:
# another shape is drawn without a warning about it, into mapvisual's file,
# saying which figure it replaced.
test size-expression-declares-no-shape {
    set out [exec [info nameofexecutable] -c {2d_memory_access_pattern arr 8 4}]
    list [string match "*declared*" $out] [string match "*showed `1 x 256 array*" $out] \
        [file exists figures/2d_memory_access_pattern_arr.html]
} {0 1 1}

# --- Names from a trace: any length, no escape sequences ------------------
set long [string repeat n 65536]
set esc "evil\x1b\]0;pwned\x07\x1b\[2J"
write odd.txt "X START 0:1 at 0\nS 1fff000600 8 1 S LV $long \nS 1fff000610 8 1 S LV $esc \nL ffffffffffffffff 8 1 S LV top \n"
test odd-trace {
    load_trace odd.txt
    dict get [memory_trace_analysis] accesses
} 3
set_mem_alloc all
test long-name-stats {llength [memory_stats]} 3
test escapes-filtered {
    set out [session {set_mem_alloc all; memory_stats}]
    list [string first \x1b $out] [string match {*evil\\x1b]0;pwned\\x07*} $out]
} {-1 1}
test near-2-64-figure {file tail [complete_memory_access_pattern]} complete_memory_access_pattern.html
clear_analysis

# --- Every command that writes into the folder records what it wrote -------
# The locality and heap commands, their saved tables and pages included:
# clear_analysis removes all of them, and only them. Files the user named
# (export_memtrace FILE) and the user's own files beside them stay.
set every [file join $top every]
file mkdir $every
cd $every
compile_exe [file join $root tests c an_five.c]
run_gleipnir
memory_trace_analysis
set_mem_alloc all
cache_stats save
sharing_stats save
heap_profile
alloc_sites 5 save
heap_stats save
heap_figures 3 save
lifetime_histogram save
export_memtrace visinfo/my_memtrace.txt
export_ops my_ops.txt
foreach f {figures/my_figure.html visinfo/notes.csv grindanalysis/my_notes.txt} {
    write $f "the user's own file"
}
proc files_in {dirs} {
    set out {}
    foreach d $dirs {
        foreach f [glob -nocomplain -types f -directory $d *] {
            lappend out [string range $f [string length [pwd]/] end]
        }
    }
    lsort $out
}
test every-wrote-something {
    foreach f {figures/cache_stats.html visinfo/sharing_stats.csv
               visinfo/sharing_stats.parquet visinfo/alloc_sites.csv
               figures/heap_profile.html figures/lifetime_histogram.html
               .mapvis/heap.mvh} {
        if {![file exists $f]} { return "missing $f" }
    }
    llength [glob figures/source_*.html]
} 1
clear_analysis
test every-cleared {
    files_in [list [pwd]/figures [pwd]/visinfo [pwd]/grindanalysis]
} [lsort {figures/my_figure.html visinfo/my_memtrace.txt visinfo/notes.csv
          grindanalysis/my_notes.txt}]
test every-state-cleared {
    lmap f {.mapvis/heap.mvh .mapvis/trace.mvt .mapvis/analysis} {file exists $f}
} {0 0 0}
test every-user-export-kept {file exists my_ops.txt} 1
cd $work

# --- Thread counts say what the thread numbers are -----------------------
test threads-note {
    set out [session "compile_exe [file join $root tests c trace_threads.c]; set_mem_alloc H; run_gleipnir; memory_trace_analysis; memory_stats"]
    list [regexp {accesses by 2 thread} $out] [string match "*number of its own*serialises*" $out]
} {1 1}
# The same note wherever thread counts are shown: the cache model's
# per-thread L1s and the lines shared between threads.
test threads-note-locality {
    set out [session "compile_exe [file join $root tests c trace_threads.c]; set_mem_alloc H; run_gleipnir; memory_trace_analysis; puts ====; cache_stats; puts ====; sharing_stats"]
    set parts [lrange [split [string map {==== \x01} $out] \x01] 1 end]
    lmap part $parts {string match "*number of its own*serialises*" $part}
} {1 1}

cd $tmp
file delete -force $top
done
