/* A program using a Valgrind client request: the macro declares locals
 * named _zzq_args and _zzq_result, which the DWARF naming must recognise
 * (tests/dwarf_names.rs). */
#include <stdio.h>
#include <valgrind/valgrind.h>

int main(void)
{
    int total = 0;
    int i;
    for (i = 0; i < 4; i++)
        total += i;
    if (RUNNING_ON_VALGRIND)
        total++;
    printf("%d\n", total);
    return 0;
}
