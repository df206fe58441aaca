# Arrays of structures drawn one column per field: 2d_memory_access_pattern
# with no shape names the columns after the structure's fields, touched or
# not.
source [file join [file dirname [info script]] support harness.tcl]

set root [file normalize [file join [file dirname [info script]] .. ..]]
set tmp [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}]
set work [file join $tmp mapvis-aos-[pid]]
file delete -force $work
file mkdir $work
cd $work

proc slurp {path} {
    set f [open $path]
    set t [read $f]
    close $f
    return $t
}

# Element touches per (column, field, operation) in a figure's data file,
# as sorted {col field op count} lists.
proc touches {csv} {
    set c [dict create]
    foreach line [lrange [split [string trim [slurp $csv]] \n] 1 end] {
        lassign [split $line ,] - - - - row col field op
        dict incr c "$col $field $op"
    }
    lsort [lmap k [dict keys $c] {list {*}$k [dict get $c $k]}]
}

test compile {file tail [compile_exe [file join $root tests c vis_aos.c]]} vis_aos
set_mem_alloc all
test run {dict get [run_gleipnir] regions} 1
memory_trace_analysis
filtering_process
test ps-figure {file tail [2d_memory_access_pattern ps save]} 2d_memory_access_pattern_ps.html
test ps-header {
    lindex [split [slurp visinfo/2d_memory_access_pattern_ps.csv] \n] 0
} index,address,variable,occurrence,row,col,field,operation,thread,time
# By hand, per element i of 16: x stored then loaded (y = x * 2), y stored,
# id stored; the second loop loads ps[i].id for i < 8. m is never touched,
# so it has no touch (its column stays blank).
test ps-touches {
    touches visinfo/2d_memory_access_pattern_ps.csv
} {{0 x load 16} {0 x store 16} {1 y store 16} {2 id load 8} {2 id store 16}}
# Row 5's field id is at ps + 5 * 24 + 16.
test ps-address {
    foreach line [split [slurp visinfo/2d_memory_access_pattern_ps.csv] \n] {
        lassign [split $line ,] - addr - - row col field
        if {$row eq "5" && $field eq "id"} { set a5 $addr }
        if {$row eq "0" && $field eq "x"} { set a0 $addr }
    }
    expr {$a5 - $a0}
} 136
# The heatmaps' columns are the field names, m too, and the hover names
# the field.
test ps-heatmap-columns {
    set html [slurp figures/2d_memory_access_pattern_ps.html]
    list [string match {*"x":\["x","y","id","m"\]*} $html] [string match {*ps\[%{y}\].%{x}*} $html]
} {1 1}
test hp-figure {file tail [2d_memory_access_pattern hp save]} 2d_memory_access_pattern_hp.html
# hp's x and y are never touched, but keep their columns 0 and 1.
test hp-touches {
    touches visinfo/2d_memory_access_pattern_hp.csv
} {{2 id store 8} {3 m store 8}}
# A shape given by hand still draws numbered columns.
test ps-by-hand {
    file tail [2d_memory_access_pattern ps 4 24]
} 2d_memory_access_pattern_ps.html

cd $tmp
file delete -force $work
done
