# demo.tcl: the mapvis demo, run with `cargo run --release -- scripts/demo.tcl`.
#
# It compiles scripts/rowcol.c (a heap 2D array written row by row, then
# column by column), traces it, names every access, prints the statistics
# and draws the complete memory access pattern and the array's reconstruction.

set here [file dirname [file normalize [info script]]]

compile_exe [file join $here rowcol.c]
set_src_path $here
set_mem_alloc H
run_gleipnir
memory_trace_analysis
filtering_process
memory_stats
complete_memory_access_pattern save
# The array's shape (16 x 16 ints) comes from its malloc statement.
2d_memory_access_pattern arr save
puts "open [file normalize figures/index.html] in a browser"
