/* Ground truth for the symbolization tests: prints the runtime address of
 * target_function, the return address of a call made at a marked line, and
 * the process's own memory map. */
#include <stdio.h>

__attribute__((noinline)) void probe(void)
{
    printf("ret %p\n", __builtin_return_address(0));
}

/* The brace shares the marked line: gcc gives the prologue the line of the
 * opening brace. */
__attribute__((noinline)) int target_function(int x) { /* @target_function */
    return x * 2;
}

static void print_maps(void)
{
    char line[4096];
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return;
    while (fgets(line, sizeof line, maps))
        printf("map %s", line);
    fclose(maps);
}

int main(void)
{
    printf("func %p\n", (void *) &target_function);
    probe(); /* @call_probe */
    print_maps();
    return target_function(1) - 2;
}
