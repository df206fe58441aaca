/* Over-aligned locals (tests/naming_aligned.rs). A local aligned beyond
   the stack's 16 bytes makes the compiler realign the frame
   (`and $-64,%rsp`): its locals are then located from rsp or rbp, not
   from the canonical frame address. Each function below is not inlined,
   and hands its arrays to keep(), which the compiler cannot see through,
   so that -O2 keeps every array in memory and every store and load. */
#include "gleipnir.h"

#define N 8

/* Neither inlined nor cloned for constant arguments (a gcc attribute). */
#ifdef __clang__
#define OWN __attribute__((noinline))
#else
#define OWN __attribute__((noinline, noclone))
#endif

/* The compiler must assume keep() reads and writes all of *p. */
__attribute__((noinline)) void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

/* Takes eight arguments: the 7th and 8th are passed on the stack. */
__attribute__((noinline)) long eight(long a, long b, long c, long d, long e, long f, long g,
                                     long h)
{
    __asm__ volatile("" : : : "memory");
    return a + b + c + d + e + f + g + h;
}

/* An over-aligned array, an ordinary one and a scalar. */
OWN double tiles(int n)
{
    double tile[N * N] __attribute__((aligned(64)));
    double plain[2 * N];
    volatile double s = 0;                        /* scalar: one store */
    for (int i = 0; i < N * N; i++)
        tile[i] = i * n;                          /* 64 stores of 8 bytes */
    for (int i = 0; i < 2 * N; i++)
        plain[i] = i + n;                         /* 16 stores of 8 bytes */
    keep(tile);
    keep(plain);
    for (int i = 0; i < N * N; i++)
        s += tile[i];                             /* 64 loads of 8 bytes */
    for (int i = 0; i < 2 * N; i++)
        s += plain[i];                            /* 16 loads of 8 bytes */
    return s;
}

/* Each instance stores its own over-aligned array and adds into its
   caller's. */
OWN double rec(int d, double *up)
{
    _Alignas(64) double t[N];
    for (int i = 0; i < N; i++)
        t[i] = d + i;                             /* 8 stores of 8 bytes */
    if (up)
        up[0] += d;                               /* caller's t[0]: 1 load, 1 store */
    if (d > 0)
        rec(d - 1, t);
    keep(t);
    return t[0];
}

/* Calls with arguments on the stack: gcc then moves rsp in the body and
   locates the locals from rbp (a dynamically realigned frame, DRAP). */
OWN long stacked(long n)
{
    long w[N] __attribute__((aligned(64)));
    for (int i = 0; i < N; i++)
        w[i] = n + i;                             /* 8 stores of 8 bytes */
    keep(w);
    return eight(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);  /* 8 loads */
}

/* An over-aligned array beside a variable-length one: gcc locates the
   locals from rbp (DRAP), clang from rbx, a register the trace does not
   record. */
OWN double dynamic(int n)
{
    double fixed[N] __attribute__((aligned(64)));
    double v[n];
    for (int i = 0; i < N; i++)
        fixed[i] = i;                             /* 8 stores of 8 bytes */
    for (int i = 0; i < n; i++)
        v[i] = i;
    keep(fixed);
    keep(v);
    return fixed[1] + v[1];                       /* fixed: 1 load */
}

/* Realigned like stacked, and given its 7th and 8th arguments on the
   stack: gcc locates g and h from the CFA, which this frame keeps in
   memory. */
OWN long both(long a, long b, long c, long d, long e, long f, long g, long h)
{
    long x[N] __attribute__((aligned(64)));
    for (int i = 0; i < N; i++)
        x[i] = a + g + h + i;                     /* 8 stores of 8 bytes */
    keep(x);
    return eight(x[0], b, c, d, e, f, x[6], x[7]); /* x: 3 loads */
}

int main(void)
{
    double r;
    long k;
    GL_START;
    r = tiles(3);
    r += rec(2, 0);
    k = stacked(5);
    r += dynamic(4);
    k += both(1, 2, 3, 4, 5, 6, 7, 8);
    GL_STOP;
    return (int) (r + k) & 1;
}
