/* Figures named by the user's words: a global array, a heap row reached
 * through a structure's member, and two arrays of one name in two scopes. */
#include <stdlib.h>
#include "gleipnir.h"

struct net {
    double *w1[2];
};

double grid[4][4];

static void fill(double *v, int n) {
    for (int i = 0; i < n; i++)
        v[i] = i;
}

int main(void) {
    struct net *net = malloc(sizeof *net);
    net->w1[0] = malloc(16 * sizeof(double));
    net->w1[1] = malloc(16 * sizeof(double));
    static double cell[16];
    GL_START;
    fill(net->w1[1], 16);
    fill(&grid[0][0], 16);
    fill(cell, 16);
    GL_STOP;
    free(net->w1[0]);
    free(net->w1[1]);
    free(net);
    return 0;
}
