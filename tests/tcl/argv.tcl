# Command-line arguments reach the script as argv, argc and argv0.
# The suite runner calls every script as: mapvis SCRIPT alpha {b c}
source [file join [file dirname [info script]] support harness.tcl]

test argc {set argc} 2
test argv {set argv} {alpha {b c}}
test argv-second {lindex $argv 1} {b c}
test argv0 {file tail $argv0} argv.tcl
test info-script {file tail [info script]} argv.tcl

done
