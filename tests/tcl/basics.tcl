# The embedded interpreter is a real Tcl 8.6.
source [file join [file dirname [info script]] support harness.tcl]

test version {package vsatisfies [info patchlevel] 8.6} 1

proc fact {n} {
    if {$n <= 1} { return 1 }
    return [expr {$n * [fact [expr {$n - 1}]]}]
}
test proc-recursion {fact 10} 3628800

test foreach-sum {
    set sum 0
    foreach x {1 2 3 4} { incr sum $x }
    set sum
} 10

test foreach-pairs {
    set out {}
    foreach {k v} {a 1 b 2} { lappend out $v$k }
    set out
} {1a 2b}

test if-else {
    if {3 > 4} { set r more } elseif {3 == 4} { set r same } else { set r less }
} less

test expr-float {expr {7 / 2.0}} 3.5
test expr-int {expr {2 ** 40}} 1099511627776
test string-ops {string toupper [string range mapvis 0 2]} MAP
test dict-ops {dict get [dict create a 1 b 2] b} 2

test catch-error {
    list [catch {error "went wrong"} msg] $msg
} {1 {went wrong}}

test catch-unknown-command {
    catch {no_such_command_here} msg
    set msg
} {invalid command name "no_such_command_here"}

test error-reported {error boom} {ERROR: boom}

test while-break {
    set i 0
    while 1 { if {[incr i] == 5} break }
    set i
} 5

test init-tcl-loaded {llength [info procs auto_load]} 1

done
