/* A struct defined outside sym_alloc.c, for the cast fallback test. */
struct sym_opaque {
    float *data;
};
