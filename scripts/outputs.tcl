# outputs.tcl: every saved table, page and dataset of three programs, for
# scripts/same_outputs.sh, which runs it under two builds of mapvis and
# compares what they wrote. The demo (rowcol.c), the README's transpose
# (naive and blocked, kept as runs and compared) and the N = 256 matrix
# multiply; each command that saves, saves.
set here [file dirname [file normalize [info script]]]

proc analyse_and_save {name cols bytes} {
    memory_trace_analysis
    filtering_process save
    memory_stats save
    cache_stats save
    sharing_stats save
    complete_memory_access_pattern save
    2d_memory_access_pattern $name $cols $bytes save
}

# The demo.
compile_exe [file join $here rowcol.c]
set_mem_alloc H
run_gleipnir
analyse_and_save arr 16 4
heap_profile
alloc_sites 10 save
heap_stats save
heap_figures 10 save
lifetime_histogram save
export_memtrace demo.memtrace
export_hpcmp demo.hpcmp.json

# The transpose, naive and blocked, compared.
set_mem_alloc G
set_cache L1 32K 8 64
set_cache L2 256K 8 64
set_cache L3 off
foreach {label flags} {naive {} blocked {-DBLOCK=16}} {
    compile_exe [file join $here transpose.c] -DN=256 {*}$flags
    run_gleipnir
    analyse_and_save Y 256 8
    save_run $label
}
compare_runs naive blocked save
what_if Y pad 64
plot_runs misses_L1 naive blocked

# The matrix multiply at N = 256.
set_mem_alloc H
set_cache L3 8M 16 64
compile_exe [file join $here matmul.c]
set_arguments ijk 256
run_gleipnir
analyse_and_save Y 256 4
