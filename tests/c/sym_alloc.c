/* Allocation statements for the C source naming tests. Each allocation is
 * marked with a comment "@key"; the test looks the line up by its key. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "sym_opaque.h"

#define ROWS 8
#define COLS 16
#define CELLS (ROWS * COLS)
#define BLOCK (16*4)
#define ALIGN 64
#define NAME "not a number"

enum { NBUCKETS = 32, NEXTRA };

struct point {
    double x, y;
};

struct stack {
    int *buf;
    size_t cap;
};

typedef struct {
    unsigned long *counts;
    int nbins;
} hist_t;

static void *xmalloc(size_t n)
{
    void *p = malloc(n); /* @wrapper_inner */
    if (!p)
        abort();
    return p;
}

static double *make_vector(size_t n)
{
    return (double *) calloc(n, sizeof(double)); /* @return_direct */
}

static struct point *make_points(int n)
{
    struct point *pts;
    pts = malloc(n * sizeof(struct point)); /* @returned_later */
    for (int i = 0; i < n; i++)
        pts[i].x = pts[i].y = 0.0;
    return pts;
}

static void stack_init(struct stack *s, size_t cap)
{
    s->buf = malloc(cap * sizeof *s->buf); /* @member_arrow */
    s->cap = cap;
}

static void grow(struct stack *s)
{
    s->cap *= 2;
    s->buf = realloc(s->buf, s->cap * sizeof(int)); /* @realloc */
}

static void fill_out(int **out, int n)
{
    *out = malloc(n * sizeof **out); /* @deref_target */
}

int main(int argc, char **argv)
{
    int *arr;
    size_t n = (size_t) argc * 10;
    arr = (int *) malloc(n * sizeof(int)); /* @arr */

    int *A = malloc(ROWS * COLS * sizeof(int)); /* @A */

    double **m = (double **) calloc(ROWS, sizeof(double *)); /* @m */

    int count = 3, *B = malloc(CELLS * sizeof(*B)), last = 0; /* @multi_decl */

    float *grid = /* @multi_line_start */
        malloc(ROWS
               * COLS /* @multi_line_mid */
               * sizeof(float)); /* @multi_line_end */

    char *name = ((char *) (malloc(BLOCK)));   /* @parens */

    hist_t h;
    h.counts = calloc(NBUCKETS, sizeof(unsigned long)); /* @member_dot */

    int *rows[ROWS];
    for (int i = 0; i < ROWS; i++)
        rows[i] = malloc(COLS * sizeof(int)); /* @element */

    uint8_t *aligned = aligned_alloc(ALIGN, 4096); /* @aligned_alloc */

    int32_t *p = NULL;
    if (posix_memalign((void **) &p, ALIGN, n * sizeof(int32_t)) != 0) /* @posix_memalign */
        return 1;

    long *v = xmalloc(n * sizeof(long)); /* @wrapper_call */

    int (*mat)[COLS] = malloc(ROWS * sizeof *mat); /* @array_pointer */

    short *sp;
    if ((sp = malloc(BLOCK * sizeof(short))) == NULL) /* @in_condition */
        return 1;

    struct point *one = malloc(sizeof(struct point)); /* @struct_size */
    double *vec = make_vector(n);
    struct point *pts = make_points(4);
    struct stack st;
    stack_init(&st, 4);
    grow(&st);
    int *filled;
    fill_out(&filled, 5);

    free(arr); arr = malloc(sizeof arr[0] * 7); /* @two_statements */

    printf("%zu\n", strlen(strdup(argv[0]))); /* @not_stored */

    puts("no allocation here"); /* @no_alloc */

    free(A); free(m); free(B); free(grid); free(name); free(h.counts);
    for (int i = 0; i < ROWS; i++)
        free(rows[i]);
    free(aligned); free(p); free(v); free(mat); free(sp); free(one);
    free(vec); free(pts); free(st.buf); free(filled); free(arr);
    return count + last;
}

/* The target's struct is defined in a header, which CSource does not read:
 * the cast gives the element type. */
void set_data(struct sym_opaque *o);
void set_data(struct sym_opaque *o)
{
    o->data = (float *) malloc(2 * sizeof(float)); /* @cast_only */
}
