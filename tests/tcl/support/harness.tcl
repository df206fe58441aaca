# A tiny test harness for the mapvis Tcl suite.
#
#   test NAME BODY EXPECTED
#
# evaluates BODY in the caller's scope and compares its result with EXPECTED.
# An error in BODY gives the result "ERROR: message". `done` prints a summary
# and exits with status 1 if any test failed.

set ::tests_run 0
set ::tests_failed 0

proc test {name body expected} {
    incr ::tests_run
    if {[catch {uplevel 1 $body} result options]} {
        if {[dict get $options -code] == 1} {
            set result "ERROR: $result"
        }
    }
    if {$result ne $expected} {
        incr ::tests_failed
        puts stderr "FAIL $name\n  expected: $expected\n  got:      $result"
    }
}

proc done {} {
    puts "[file tail [info script]]: $::tests_run tests, $::tests_failed failed"
    if {$::tests_failed > 0} {
        exit 1
    }
}
