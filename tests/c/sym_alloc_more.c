/* More allocation shapes for the C source naming tests ("@key" markers). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { if (!(x)) abort(); } while (0)
#define R 4
#define C 6

struct node {
    int value;
    struct node *next;
};

typedef struct node *nodep;

struct matrix {
    int nrows;
    double **rows;
};

static struct node *new_node(int v)
{
    struct node *n;
    n = (struct node *) malloc(sizeof *n); /* @assign_then_return */
    if (!n)
        return NULL;
    n->value = v;
    n->next = NULL;
    return n;
}

static void *pool_alloc(void *pool, size_t n)
{
    (void) pool;
    return malloc(n); /* @pool_inner */
}

int main(int argc, char **argv)
{
    size_t n = (size_t) argc;
    int *p = NULL;
    p = n > 0 ? malloc(n * sizeof *p) : NULL; /* @conditional */
    free(p);

    int *q;
    CHECK(q = malloc(C * sizeof(int))); /* @in_macro_call */

    nodep head = malloc(sizeof *head); /* @typedef_pointer */
    head->next = new_node(3); /* @user_function */

    int **grid = malloc(R * sizeof(int *)); /* @grid */
    for (int i = 0; i < R; i++)
        grid[i] = malloc(C * sizeof(int)); /* @grid_row */

    struct matrix mat;
    mat.nrows = R;
    mat.rows = calloc(R, sizeof(double *)); /* @matrix_rows */
    for (int i = 0; i < R; i++)
        mat.rows[i] = calloc(C, sizeof(double)); /* @matrix_row */

    for (char *scratch = malloc(16); scratch; free(scratch), scratch = NULL) /* @for_init */
        scratch[0] = 0;

    struct matrix m2 = { .nrows = R, .rows = calloc(R, sizeof(double *)) }; /* @designated */
    int *pair[2] = { malloc(sizeof(int)), NULL }; /* @positional */
    free(m2.rows); free(pair[0]);

    char *copy = strdup(argv[0]); /* @strdup */
    long *pooled = (long *) pool_alloc(NULL, 8 * sizeof(long)); /* @two_arg_wrapper */

    free(q); free(head->next); free(head); free(copy); free(pooled);
    for (int i = 0; i < R; i++) {
        free(grid[i]);
        free(mat.rows[i]);
    }
    free(grid); free(mat.rows);
    return 0;
}
