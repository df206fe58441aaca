# The allocation-side commands, for real: what must come first, then a
# program profiled natively (heap_profile) and traced (run_gleipnir), with
# the sites, statistics, figures and exports a script reads back.
source [file join [file dirname [info script]] support harness.tcl]

set root [file normalize [file join [file dirname [info script]] .. ..]]
set tmp [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}]
set work [file join $tmp mapvis-heap-[pid]]
file delete -force $work
file mkdir $work
cd $work

test needs-exe {catch {heap_profile} m; set m} \
    {no program is loaded: load_exe PATH (or compile_exe SOURCE.c) first.}
test needs-run {catch {alloc_sites} m; set m} \
    {there is no run to analyse: run heap_profile (native) or run_gleipnir (Valgrind) first.}
test needs-trace {catch {export_memtrace out.memtrace} m; set m} \
    {there is no trace to analyse: run run_gleipnir (or load_trace FILE) first.}
test bad-count {catch {alloc_sites many} m; string match {expected a non-negative integer for N*} $m} 1
test args-extra {catch {heap_stats save extra} m; string match "wrong # args*" $m} 1

compile_exe [file join $root tests c heap_sites.c]
set p [heap_profile]
# 3 + 5 + 1 + 1 + 1 allocations by the program (libc may add its own).
test profile-allocs {expr {[dict get $p allocations] >= 11}} 1
test profile-file {file exists .mapvis/heap.mvh} 1

set sites [alloc_sites 3 save]
set top [lindex $sites 0]
# By bytes, the realloc'd 1000-byte block comes first.
test top-bytes {dict get $top bytes} 1000
test top-frame {string match "main (heap_sites.c:*)" [lindex [dict get $top backtrace] 0]} 1
test sites-csv {file exists visinfo/alloc_sites.csv} 1

set st [heap_stats save]
test stats-peak {expr {[dict get $st peak] >= 1556}} 1
test stats-rss {expr {[dict get $st peak_rss] > 0}} 1
test stats-usable {expr {[dict get $st usable] >= [dict get $st bytes]}} 1
test stats-csv {file exists visinfo/heap_op_times.csv} 1
test figures {file tail [heap_figures 3]} heap_profile.html
test lifetimes {file tail [lifetime_histogram]} lifetime_histogram.html

# The same commands on the Valgrind trace, which is now the newer run.
after 1100
run_gleipnir
set sites [alloc_sites 1]
test traced-top {dict get [lindex $sites 0] bytes} 1000
set st [heap_stats]
test traced-no-rss {dict exists $st peak_rss} 0
test memtrace {file tail [export_memtrace heap.memtrace]} heap.memtrace
test memtrace-first {string range [lindex [split [read [set f [open heap.memtrace]]] \n] 0] 0 3} ">>> "
close $f
test ops {file tail [export_ops heap.ops]} heap.ops

cd $tmp
file delete -force $work
done
