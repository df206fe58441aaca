/* Prints the runtime address of a function in a shared library and the
 * process's memory map, for the shared-library symbolization test. */
#include <stdio.h>

int sym_lib_function(int x);

int main(void)
{
    char line[4096];
    FILE *maps = fopen("/proc/self/maps", "r");
    printf("func %p\n", (void *) &sym_lib_function);
    if (!maps)
        return 1;
    while (fgets(line, sizeof line, maps))
        printf("map %s", line);
    fclose(maps);
    return sym_lib_function(-1);
}
