/*
 * scale_sweep.c: the program of tests/scale_duckdb.rs and
 * tests/scale_spark.rs, run as a parameter sweep.
 *
 *   scale_sweep N NODES
 *
 * Region 1: Z = X * Y for N x N doubles on the heap, ijk order.
 * Region 2: the sum of a list of NODES nodes, all allocated on one line
 * (one allocation site, so memory_stats shows them as one row, `head`).
 */
#include <stdio.h>
#include <stdlib.h>
#include "gleipnir.h"

struct node {
    long val;
    struct node *next;
};

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 4;
    int nodes = argc > 2 ? atoi(argv[2]) : 3;
    int i, j, k;
    double tmp;
    long sum = 0;
    struct node *head = NULL, *p;
    double *X = (double *) malloc(N * N * sizeof(double));
    double *Y = (double *) malloc(N * N * sizeof(double));
    double *Z = (double *) malloc(N * N * sizeof(double));
    if (!X || !Y || !Z || N <= 0)
        return 1;
    for (i = 0; i < N * N; i++) {
        X[i] = i % 7;
        Y[i] = i % 5;
    }
    for (i = 0; i < nodes; i++) {
        struct node *n = (struct node *) malloc(sizeof(struct node));
        n->val = i;
        n->next = head;
        head = n;
    }

    GL_START;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            tmp = 0;
            for (k = 0; k < N; k++)
                tmp += X[i * N + k] * Y[k * N + j];
            Z[i * N + j] = tmp;
        }
    GL_STOP;

    GL_START;
    for (p = head; p != NULL; p = p->next)
        sum += p->val;
    GL_STOP;

    printf("Z[0] = %g, sum = %ld\n", Z[0], sum);
    return 0;
}
