/* Ground truth for the DWARF naming tests (tests/dwarf_names.rs).
 *
 * The program prints "key hex-address" lines from inside the functions under
 * test: a code address in the body (a label address, GCC extension), the
 * stack pointer captured by inline asm, the frame address, and the addresses
 * of specific elements. The test compares what the DWARF lookup says about
 * those addresses with the names the program knows they have. */
#include <stdint.h>
#include <stdio.h>

struct hist {
    int nbins;
    double *counts;
};

struct point {
    double x, y, z;
};

struct view {
    int id;
    struct point data[8];
};

typedef struct hist hist_t;
typedef double row_t[6];
enum color { RED, GREEN, BLUE };

int garr[64];
static double gscale = 2.5;
struct view gview;
const int gconst[3] = {1, 2, 3};

static void show(const char *key, const volatile void *p)
{
    printf("%s %lx\n", key, (unsigned long)(uintptr_t)p);
}

double stencil(int n, double w)
{
    double u[12][12];
    struct hist h;
    struct view view;
    struct point grid[2][3];
    hist_t h2;
    row_t rows[4];
    double *p;
    enum color c;
    volatile int vcount;
    union {
        int i;
        float f;
    } un;
    static int calls;
    uintptr_t sp;
    int i, j;

    calls++;
    for (i = 0; i < 12; i++)
        for (j = 0; j < 12; j++)
            u[i][j] = i * 12 + j + w;
    h.nbins = n;
    h.counts = &u[0][0];
    h2 = h;
    view.id = n;
    view.data[3].z = w;
    grid[1][2].y = w;
    rows[2][5] = w;
    p = &u[1][1];
    c = GREEN;
    vcount = n;
    un.i = n;
body:
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    show("ip", &&body);
    show("sp", (void *)sp);
    show("fp", __builtin_frame_address(0));
    show("u[3][4]", &u[3][4]);
    show("u[11][11]", &u[11][11]);
    show("h.nbins", &h.nbins);
    show("h.counts", &h.counts);
    show("h2.counts", &h2.counts);
    show("view.id", &view.id);
    show("view.data[3].z", &view.data[3].z);
    show("grid[1][2].y", &grid[1][2].y);
    show("rows[2][5]", &rows[2][5]);
    show("p", &p);
    show("c", &c);
    show("vcount", &vcount);
    show("un.i", &un.i);
    show("n", &n);
    show("w", &w);
    show("calls", &calls);
    {
        int inner[4];
        inner[0] = n;
    inner:
        inner[1] = inner[0] + 1;
        show("ip_inner", &&inner);
        show("inner[2]", &inner[2]);
    }
    return u[3][4] + view.data[3].z + h.nbins + *p + c + vcount + un.i;
}

int main(void)
{
    int k;
    for (k = 0; k < 64; k++)
        garr[k] = k;
    gview.data[2].y = gscale;
    show("main", (void *)&main);
    show("stencil", (void *)&stencil);
    show("garr[10]", &garr[10]);
    show("garr[63]", &garr[63]);
    show("gview.data[2].y", &gview.data[2].y);
    show("gscale", &gscale);
    show("gconst[2]", &gconst[2]);
    return (int)stencil(3, 0.5) & 1;
}
