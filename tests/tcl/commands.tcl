# The mapvis command framework: help, argument checking, aliases, history.
source [file join [file dirname [info script]] support harness.tcl]

# A fresh working folder: nothing loaded, traced or saved.
set work [file join [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}] mapvis-commands-[pid]]
file delete -force $work
file mkdir $work
cd $work

test help-lists-groups {
    set h [help all]
    set found {}
    foreach title {Setup Pipeline Figures {Caches and locality} {Comparing runs}
                   Heap Exports Housekeeping {Valgrind tools}} {
        if {[string first "$title ('help " $h] >= 0} { lappend found $title }
    }
    llength $found
} 9

test help-lists-every-command {
    set h [help all]
    set missing {}
    foreach cmd {load_exe set_src_path set_valgrind_path set_arguments set_mem_alloc
                 run_gleipnir memory_trace_analysis filtering_process memory_stats
                 complete_memory_access_pattern 2d_memory_access_pattern
                 3d_memory_access_pattern clear_analysis help history exit
                 lackey helgrind cachegrind massif dhat compile_exe load_trace
                 set_open_browser dump_trace} {
        if {[string first "  $cmd" $h] < 0} { lappend missing $cmd }
    }
    set missing
} {}

test help-command-usage {
    lindex [split [help 2d_memory_access_pattern] \n] 0
} {usage: 2d_memory_access_pattern NAME ?COLS? ?TYPEBYTES? ?save?}

test help-alias {
    lindex [split [help 3darray_memory_access_pattern] \n] 0
} {usage: 3d_memory_access_pattern NAME ?COLS? ?DEPTH? ?TYPEBYTES? ?save?}

test help-unknown {
    list [catch {help nosuchcmd} msg] $msg
} {1 {unknown command "nosuchcmd": type 'help' to list the mapvis commands}}

test help-too-many-args {help a b} {ERROR: wrong # args: should be "help ?COMMAND|GROUP|all?"}

test wrong-args-usage {
    catch {2d_memory_access_pattern} msg
    set msg
} {wrong # args: should be "2d_memory_access_pattern NAME ?COLS? ?TYPEBYTES? ?save?"}

test wrong-args-alias {
    catch {2darray_memory_access_pattern} msg
    set msg
} {wrong # args: should be "2d_memory_access_pattern NAME ?COLS? ?TYPEBYTES? ?save?"}

test wrong-args-extra {load_exe a b} {ERROR: wrong # args: should be "load_exe PATH"}

test bad-choice {set_mem_alloc X} {ERROR: bad value "X" for H|S|G|all: use one of H, S, G, all (usage: "set_mem_alloc H|S|G|all")}

test bad-save-word {memory_stats keep} {ERROR: bad value "keep" for save: use one of save (usage: "memory_stats ?save?")}

test bad-integer {
    catch {dump_trace t.mvt four} msg
    string match {expected a non-negative integer for LIMIT but got "four"*} $msg
} 1

test prerequisite-reports {
    catch {run_gleipnir} msg
    set msg
} {run_gleipnir needs an executable: use load_exe PATH (or compile_exe SOURCE.c) first.}

test history-empty-in-scripts {history} {}

test errorinfo-set {
    catch {set_open_browser maybe}
    string match {bad value "maybe"*} $::errorInfo
} 1

test exit-code-range {exit 300} {ERROR: exit codes range from 0 to 255, so 300 cannot be used}

cd /
file delete -force $work
done
