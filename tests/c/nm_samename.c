/* One name in two functions: main's arrays C and A, and kernel_gemm's
 * pointer parameters C and A (as PolyBench writes its kernels). */
#include "gleipnir.h"
#define N 8

static void kernel_gemm(int n, double C[N][N], double A[N][N])
{
    int i, j;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            C[i][j] += A[i][j]; /* update */
}

int main(void)
{
    double C[N][N], A[N][N];
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            C[i][j] = A[i][j] = i + j;
    GL_START;
    kernel_gemm(N, C, A);
    GL_STOP;
    return C[1][2] > 100;
}
