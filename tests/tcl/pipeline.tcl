# The pipeline commands, for real: argument errors for every command, what
# must come before what, then a traced program whose statistics a script
# walks with proc and foreach. Runs in its own temporary working folder.
source [file join [file dirname [info script]] support harness.tcl]

set root [file normalize [file join [file dirname [info script]] .. ..]]
set tmp [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}]
set work [file join $tmp mapvis-pipeline-[pid]]
file delete -force $work
file mkdir $work
cd $work

# --- Wrong argument counts give the usage line, for every command ---------
proc usage_error {script} {
    if {![catch {uplevel 1 $script} msg]} { return "no error" }
    set cmd [lindex $script 0]
    if {[string match "wrong # args: should be \"$cmd*\"" $msg]} { return usage }
    return $msg
}
foreach cmd {load_exe set_src_path set_valgrind_path set_mem_alloc load_trace compile_exe
             2d_memory_access_pattern 3d_memory_access_pattern set_open_browser} {
    test args-missing-$cmd [list usage_error $cmd] usage
}
foreach cmd {run_gleipnir memory_trace_analysis clear_analysis
             lackey helgrind cachegrind massif dhat} {
    test args-extra-$cmd [list usage_error [list $cmd extra]] usage
}
foreach cmd {memory_stats filtering_process} {
    test args-extra-$cmd [list usage_error [list $cmd save extra]] usage
}
test args-extra-dump_trace [list usage_error {dump_trace t.mvt 10 extra}] usage
test args-extra-history [list usage_error {history extra}] usage
test args-bad-choice {catch {set_mem_alloc X} m; string match {bad value "X"*H, S, G, all*} $m} 1
test args-bad-save {catch {memory_stats keep} m; string match {bad value "keep"*} $m} 1
test args-on-off {catch {set_open_browser maybe} m; string match {bad value "maybe"*} $m} 1

# --- Each step says what must come first -----------------------------------
test needs-exe {catch {run_gleipnir} m; set m} \
    {run_gleipnir needs an executable: use load_exe PATH (or compile_exe SOURCE.c) first.}
test needs-trace {catch {memory_trace_analysis} m; set m} \
    {there is no trace to analyse: run run_gleipnir (or load_trace FILE) first.}
test needs-analysis {catch {memory_stats} m; set m} \
    {there is no analysis yet: run memory_trace_analysis first.}
test missing-exe {catch {load_exe no/such/program} m; string match "*does not exist*load_exe*" $m} 1
test missing-src {catch {set_src_path no/such/dir} m; string match "*does not exist*" $m} 1
test missing-trace {catch {load_trace nothing.mvt} m; string match "*cannot be read*" $m} 1
test lackey-needs-exe {catch {lackey} m; set m} {lackey needs an executable: use load_exe PATH first.}

# --- A real run ------------------------------------------------------------
test compile {file tail [compile_exe [file join $root scripts rowcol.c]]} rowcol
test mem-alloc {set_mem_alloc H} H
test run {dict get [run_gleipnir] regions} 1
test analyse {dict get [memory_trace_analysis] regions} 1
test filter {llength [filtering_process]} 4
# Worked by hand from rowcol.c: 256 stores, then 256 loads and 256 stores
# (each `+=` a load and a store of one element), all of the heap block arr.
test heap-accesses {
    set ms [memory_stats]
    list [llength $ms] [dict get [lindex $ms 0] variable] [dict get [lindex $ms 0] accesses]
} {1 arr 768}

# The order data: one row per heap access, in time order.
proc lines_of {path} {
    set f [open $path]
    set lines [split [string trim [read $f]] \n]
    close $f
    return $lines
}
set od [lines_of visinfo/order_data.csv]
test order-header {lindex $od 0} order,address,operation,variable,size,thread,source
test order-rows {expr {[llength $od] - 1}} 768
test order-first {regexp {^[0-9]+,0x[0-9a-f]+,S,arr,4,1,rowcol\.c:23$} [lindex $od 1]} 1
test order-ops {
    set n [dict create L 0 S 0 M 0]
    set last -1
    set ordered 1
    foreach row [lrange $od 1 end] {
        lassign [split $row ,] order - op
        dict incr n $op
        if {$order <= $last} { set ordered 0 }
        set last $order
    }
    list [dict get $n L] [dict get $n S] [dict get $n M] $ordered
} {256 512 0 1}
# A link in place of an output (here to /dev/full) is replaced by the file,
# never written through. (A full disk is tested in tests/safety.rs.)
if {[file exists /dev/full]} {
    file delete visinfo/order_data.csv
    file link -symbolic visinfo/order_data.csv /dev/full
    test order-link-replaced {
        filtering_process
        file type visinfo/order_data.csv
    } file
    file delete visinfo/order_data.csv
    test order-again {llength [filtering_process]} 4
    # A full disk is an error that names the file, not a silent loss: a
    # file the user names, such as an export's, is written where named.
    test export-disk-full {
        catch {export_memtrace /dev/full} m
        string match "*cannot write /dev/full*is full*" $m
    } 1
}

proc total {stats field} {
    set sum 0
    foreach row $stats { incr sum [dict get $row $field] }
    return $sum
}
set stats [memory_stats save]
test stats-vars {lmap row $stats {dict get $row variable}} arr
test stats-accesses {total $stats accesses} 768
test stats-bytes {list [total $stats load_bytes] [total $stats store_bytes]} {1024 2048}
test stats-files {list [file exists visinfo/memory_stats.csv] [file exists visinfo/memory_stats_addresses.csv]} {1 1}

test figure {file tail [complete_memory_access_pattern]} complete_memory_access_pattern.html
test figure-2d {file tail [2d_memory_access_pattern arr 16 4 save]} 2d_memory_access_pattern_arr.html
test figure-2d-inferred {file tail [2d_memory_access_pattern arr]} 2d_memory_access_pattern_arr.html
test figure-3d {file tail [3d_memory_access_pattern arr 4 4 4]} 3d_memory_access_pattern_arr.html
test unknown-array {catch {2d_memory_access_pattern nosuch 16 4} m; set m} \
    {there is no array named "nosuch" in the analysis; the arrays are: arr.}
test budget-zero {catch {set_point_budget 0} m; string match "*budget*" $m} 1
test budget-huge {catch {set_point_budget 999999999} m; string match "*budget*" $m} 1
test budget-small {set_point_budget 100} 100
test figure-aggregated {file tail [complete_memory_access_pattern]} complete_memory_access_pattern.html
test budget-back {set_point_budget 200000} 200000
test matrix-orientation {set_matrix_orientation on; file tail [2d_memory_access_pattern arr 16 4]} \
    2d_memory_access_pattern_arr.html
set_matrix_orientation off
test bad-dims {catch {2d_memory_access_pattern arr 0 4} m; set m} \
    {COLS must be a positive whole number, not "0".}

# The stack, named from DWARF.
set_mem_alloc S
set names [lmap row [memory_stats] {dict get $row variable}]
test stack-names {lsort [lsearch -all -inline -not $names <*>]} {arr@S i j}

# The complete pattern's variable filter: arrays only, one left out, an
# unknown name.
proc drawn_vars {} {
    lsort -unique [lmap l [lrange [lines_of visinfo/complete_memory_access_pattern.csv] 1 end] {
        lindex [split $l ,] 2
    }]
}
set_mem_alloc all
complete_memory_access_pattern save
test filter-none {expr {[llength [drawn_vars]] > 1 && "arr" in [drawn_vars]}} 1
complete_memory_access_pattern save arrays
test filter-arrays {drawn_vars} arr
complete_memory_access_pattern save -arr
test filter-skip {expr {"arr" in [drawn_vars]}} 0
complete_memory_access_pattern save i
test filter-only {drawn_vars} i
test filter-unknown {catch {complete_memory_access_pattern nosuch} m; string match {there is no variable named "nosuch"*} $m} 1

# A later session in this folder continues without tracing again.
test persist {
    set out [exec [info nameofexecutable] --echo -c {set_mem_alloc H; llength [memory_stats]}]
    lindex [split [string trim $out] \n] end
} 1

# Valgrind's own tools, with a summary.
test cachegrind {file tail [cachegrind]} cachegrind_rowcol.log
test dhat {file tail [dhat]} dhat_rowcol.log

# A stack array: its shape is inferred from its DWARF type (double u[12][12]).
compile_exe [file join $root tests c an_stencil.c]
run_gleipnir
memory_trace_analysis
test stack-2d-inferred {file tail [2d_memory_access_pattern u]} 2d_memory_access_pattern_u.html
test stack-3d-needs-dims {catch {3d_memory_access_pattern u} m; string match "*could not be inferred*" $m} 1

# A name shared by two blocks (realloc) lists its instances.
compile_exe [file join $root tests c an_realloc.c]
run_gleipnir
memory_trace_analysis
test shared-name {catch {2d_memory_access_pattern v 4 4} m; set m} \
    {"v" names 2 blocks: choose one of v#1, v#2.}
test instance {string match 2d_memory_access_pattern_v_2*.html [file tail [2d_memory_access_pattern v#2 8 4]]} 1

test clear {expr {[llength [clear_analysis]] >= 8}} 1
test cleared {file exists .mapvis/trace.mvt} 0

cd $tmp
file delete -force $work
done
