/* Array declarations in the style of benchmark suites: a macro expands to a
   declaration plus an allocation through a library wrapper. Kept outside
   tests/c's own folder so that only set_src_path finds it. */
#ifndef NM_ARRAYS_H
#define NM_ARRAYS_H
void *alloc_data(unsigned long n, int elt_size);
#define ARRAY_1D_DECL(var, type, n) type *var = (type *) alloc_data((n), sizeof(type))
#define ARRAY_2D_DECL(var, type, n, m) \
    type (*var)[m] = (type (*)[m]) alloc_data((n) * (m), sizeof(type))
#define ARRAY_3D_DECL(var, type, n, m, p) \
    type (*var)[m][p] = (type (*)[m][p]) alloc_data((n) * (m) * (p), sizeof(type))
/* Nested: the element type and dimensions are picked by other macros. */
#define DATA_TYPE double
#define MAT_DECL(var, n, m) ARRAY_2D_DECL(var, DATA_TYPE, n, m)
#endif
