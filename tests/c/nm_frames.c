/* Stack arrays of callers, touched only by callees: two levels of calls,
   recursion, a thread's own stack, and arguments passed on the stack. */
#include <pthread.h>
#include "gleipnir.h"
#define N 16
static void init(int n, double *v)
{
    for (int i = 0; i < n; i++)
        v[i] = i;                               /* n stores of 8 bytes */
}
static void blur(int n, const double *src, double *dst)
{
    for (int i = 1; i < n - 1; i++)
        dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3;  /* 3 loads, 1 store */
}
static void step(int n, double *x, double *y)
{
    init(n, x);
    blur(n, x, y);
}
/* Each instance stores its own two ints and adds into its caller's. */
static void rec(int d, int *up)
{
    int mine[2];
    mine[0] = d;
    mine[1] = 0;
    up[1] += mine[0];
    if (d > 0)
        rec(d - 1, mine);
}
static double total(int n, const double *v)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];                              /* n loads of 8 bytes */
    return s;
}
static void *worker(void *arg)
{
    double buf[8];
    init(8, buf);
    *(double *) arg = total(8, buf);
    return 0;
}
static void fill2(double (*m)[8])
{
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            m[i][j] = i * j;                    /* 32 stores of 8 bytes */
}
/* g and h are the 7th and 8th arguments: x86-64 passes them on the stack. */
static long seven(long a, long b, long c, long d, long e, long f, long g, long h)
{
    return a + b + c + d + e + f + g + h;
}
int main(void)
{
    double in[N], out[N];
    double grid[4][8];
    int top[2] = {0, 0};
    double res = 0;
    long r;
    pthread_t t;
    GL_START;
    step(N, in, out);
    rec(2, top);
    pthread_create(&t, 0, worker, &res);
    pthread_join(t, 0);
    r = seven(1, 2, 3, 4, 5, 6, 7, 8);
    fill2(grid);
    GL_STOP;
    return (int) (r + res + out[1] + grid[1][1]);
}
