/* Traversals with known shapes, one statement per pattern, for the
 * pattern labels. */
#include "gleipnir.h"
#define N 32
#define B 8
#define K 8
struct point { double x, y, z; };
static double m[N][N];
static float cube[K][K][K];
static struct point aos[256];
static struct { double x[256], y[256], z[256]; } soa;
int main(void)
{
    int i, j, k, bi, bj;
    double s = 0;
    GL_START;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            s += m[i][j]; /* row walk */
    for (j = 0; j < N; j++)
        for (i = 0; i < N; i++)
            s += m[i][j]; /* column walk */
    for (i = 0; i < N; i++)
        s += m[i][i]; /* diagonal walk */
    for (bi = 0; bi < N; bi += B)
        for (bj = 0; bj < N; bj += B)
            for (i = bi; i < bi + B; i++)
                for (j = bj; j < bj + B; j++)
                    s += m[i][j]; /* tiled walk */
    for (k = 0; k < K; k++)
        for (j = 0; j < K; j++)
            for (i = 0; i < K; i++)
                s += cube[i][j][k]; /* cube walk */
    for (i = 0; i < 256; i++)
        s += aos[i].x; /* aos walk */
    for (i = 0; i < 256; i++)
        s += soa.x[i]; /* soa walk */
    GL_STOP;
    return s > 0;
}
