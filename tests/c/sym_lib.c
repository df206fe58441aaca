/* A shared library for the symbolization tests. */
__attribute__((noinline)) int sym_lib_function(int x) { /* @lib_function */
    return x + 1;
}
