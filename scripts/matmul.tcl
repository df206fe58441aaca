# matmul.tcl: trace a 16 x 16 int matrix multiplication (ijk order) and draw it.
#   mapvis> source scripts/matmul.tcl
#   mapvis> 2d_memory_access_pattern X 16 4 save
# Pass another loop order as the first script argument: jik or blocked.

set here [file dirname [file normalize [info script]]]
set order [expr {[info exists argv] && [llength $argv] > 0 ? [lindex $argv 0] : "ijk"}]

compile_exe [file join $here matmul.c]
set_src_path $here
set_arguments $order 16
set_mem_alloc H
run_gleipnir
memory_trace_analysis
filtering_process
complete_memory_access_pattern
