# Did my change help? A block-size sweep: the transpose of scripts/transpose.c
# traced naive and with tiles of 4, 8 and 16 doubles, each kept as a run,
# then L1 misses of each variable drawn against the runs (README).
#   cargo run --release -- scripts/sweep.tcl
# (set N first for another matrix size: mapvis -c 'set N 64; source scripts/sweep.tcl')
set here [file dirname [file normalize [info script]]]
if {![info exists N]} { set N 256 }
set_mem_alloc G
set_cache L1 32K 8 64
set_cache L2 256K 8 64
set_cache L3 off
foreach {label flags} {naive {} b4 {-DBLOCK=4} b8 {-DBLOCK=8} b16 {-DBLOCK=16}} {
    compile_exe $here/transpose.c -DN=$N {*}$flags
    run_gleipnir
    memory_trace_analysis
    catch {drop_run $label}
    save_run $label
}
plot_runs misses_L1 naive b4 b8 b16
