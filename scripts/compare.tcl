# Did my change help? A naive and a cache-blocked transpose, traced and
# kept as two runs, then compared variable by variable (README).
#   cargo run --release -- scripts/compare.tcl
set here [file dirname [file normalize [info script]]]
set_mem_alloc G
set_cache L1 32K 8 64
set_cache L2 256K 8 64
set_cache L3 off
foreach {label flags} {naive {} blocked {-DBLOCK=16}} {
    compile_exe $here/transpose.c -DN=256 {*}$flags
    run_gleipnir
    memory_trace_analysis
    catch {drop_run $label}
    save_run $label
}
compare_runs naive blocked save
