# The locality commands for real: set_cache and its errors, cache_stats on a
# traced program with exact miss counts, its files, a what-if run with
# another cache on the saved analysis, sharing_stats and sampling.
source [file join [file dirname [info script]] support harness.tcl]

set root [file normalize [file join [file dirname [info script]] .. ..]]
set tmp [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}]
set work [file join $tmp mapvis-locality-[pid]]
file delete -force $work
file mkdir $work
cd $work

# --- The model and its errors ------------------------------------------------
test model-default {dict get [lindex [set_cache] 0] level} L1
test bad-level {catch {set_cache L4 32K 8 64} m; string match {bad value "L4" for LEVEL: use one of L1, L2, L3, default*} $m} 1
test bad-size {catch {set_cache L1 lots 8 64} m; set m} \
    {"lots" is not a cache size: give bytes, or a number with K or M, such as 32K or 8M.}
test bad-line {catch {set_cache L1 32K 8 48} m; set m} \
    {the line size must be a power of two from 8 to 4096 bytes, not 48.}
test bad-geometry {catch {set_cache L1 1000 8 64} m; string match "*no whole number of sets*" $m} 1
test bad-arity {catch {set_cache L1 32K} m; string match "set_cache takes LEVEL SIZE WAYS LINE*" $m} 1
test needs-analysis {catch {cache_stats} m; set m} \
    {there is no analysis yet: run memory_trace_analysis first.}
test set-l1 {dict get [lindex [set_cache L1 4K 8 64] 0] size} 4096
test set-l2 {llength [set_cache L2 64K 8 64]} [expr {[llength [set_cache]]}]
set_cache L3 off
test levels {lmap l [set_cache] {dict get $l level}} {L1 L2}
test bad-rate {catch {set_reuse_sampling 2} m; set m} {the sampling rate must be above 0 and at most 1, not 2.}

# --- A traced program ----------------------------------------------------------
compile_exe [file join $root tests c loc_small.c]
set_mem_alloc G
run_gleipnir
memory_trace_analysis
proc field {stats var key} {
    foreach row $stats {
        if {[dict get $row variable] eq $var} { return [dict get $row $key] }
    }
    return "no $var"
}
set stats [cache_stats save]
test sweep-misses {field $stats sweep misses_L1} 512
test sweep-compulsory {field $stats sweep compulsory} 512
test grid-misses {field $stats grid misses_L1} 4096
test grid-accesses {field $stats grid accesses} 4096
proc first_line {path} {
    set f [open $path]
    set l [gets $f]
    close $f
    return $l
}
test csv-vars {first_line visinfo/cache_stats.csv} \
    variable,accesses,misses_L1,misses_L2,compulsory,miss_ratio,line_bytes_used,compulsory_L1,capacity_L1,conflict_L1,compulsory_L2,capacity_L2,conflict_L2
test csv-lines {first_line visinfo/cache_stats_lines.csv} \
    source,accesses,misses_L1,misses_L2,compulsory,miss_ratio,line_bytes_used,compulsory_L1,capacity_L1,conflict_L1,compulsory_L2,capacity_L2,conflict_L2,variables
test parquet {file exists visinfo/cache_stats.parquet} 1
test reuse-csv {file exists visinfo/reuse_distance.csv} 1
test mrc-csv {file exists visinfo/miss_ratio_curves.csv} 1
test source-page {file exists figures/source_loc_small.c.html} 1
test summary-figure {file exists figures/cache_stats.html} 1

# What if the L1 were 64 KiB? No new trace: a new session in this folder
# takes the saved analysis and the saved model.
set_cache L1 64K 8 64
set trace_time [file mtime .mapvis/trace.mvt]
test what-if {
    set out [exec [info nameofexecutable] -c {set_mem_alloc G; set s [cache_stats]; foreach r $s { if {[dict get $r variable] eq "grid"} { puts GRID=[dict get $r misses_L1] } }}]
    regexp {GRID=([0-9]+)} $out - n
    set n
} 512
test no-new-trace {file mtime .mapvis/trace.mvt} $trace_time

# One thread: nothing is shared.
test sharing-none {sharing_stats} {}
test sampling {set_reuse_sampling 0.5} 0.5
test sampled-still-simulates {field [cache_stats] grid misses_L1} 512
set_reuse_sampling off
# A one-dimensional array of known length is drawn as one row.
test one-row {file tail [2d_memory_access_pattern sweep]} 2d_memory_access_pattern_sweep.html
# A script that only wants the value asks for it quietly: nothing of the
# report is printed.
test quiet-prints-nothing {
    set out [exec [info nameofexecutable] -c {set_mem_alloc G; set s [cache_stats quiet]; puts RESULT=[llength $s]}]
    list [regexp {RESULT=[1-9]} $out] [regexp -nocase {miss|wrote} $out]
} {1 0}
test patterns-in-memory-stats {llength [memory_stats]} 2

# Colour modes: a setting kept for later sessions; the column walk of grid
# misses a 4 KiB L1 on every access, and the figure's data says so.
test colour-bad {catch {set_figure_colour misses} m; string match {bad value "misses" for default|hit|reuse*} $m} 1
test colour-hit {set_figure_colour hit} hit
set_cache L1 4K 8 64
set_cache L2 off
test colour-miss {set_figure_colour miss} {miss L1}
test colour-miss-no-level {
    catch {set_figure_colour miss L2} m
    string match {the cache model has no L2 (it has L1 4 KiB*): add it with set_cache, or colour by a level it has.} $m
} 1
test colour-miss-back {set_figure_colour hit} hit
proc count_class {path class} {
    set f [open $path]
    set n 0
    while {[gets $f l] >= 0} { if {[string match "*,$class" $l]} { incr n } }
    close $f
    return $n
}
2d_memory_access_pattern grid save
test colour-grid-misses {count_class visinfo/2d_memory_access_pattern_grid.csv "miss to memory"} 4096
test colour-grid-hits {count_class visinfo/2d_memory_access_pattern_grid.csv "L1 hit"} 0
test colour-kept {
    exec [info nameofexecutable] -c {puts [dict get [lindex [set_cache] 0] size]; set_figure_colour reuse}
    set out [exec [info nameofexecutable] -c {set_mem_alloc G; complete_memory_access_pattern sweep save}]
    string match "*colour: reuse distance*" $out
} 1
test colour-reuse-csv {count_class visinfo/complete_memory_access_pattern.csv "first touch"} 512
set_figure_colour default
test colour-default {
    complete_memory_access_pattern sweep save
    string match *class [first_line visinfo/complete_memory_access_pattern.csv]
} 0

cd $tmp
file delete -force $work
done
