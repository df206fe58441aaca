/* Ground truth for the DWARF naming of over-aligned locals
 * (tests/dwarf_names.rs). Each function realigns its frame for a local
 * aligned to 64 bytes, then prints, as "key hex-address" lines, a code
 * address in its body and the stack pointer there (both captured by
 * inline asm, which stays in the body at -O2 too, where a label's address
 * may not), the frame pointer, and the addresses of specific elements,
 * keyed by the name they must get. */
#include <stdint.h>
#include <stdio.h>

static void show(const char *key, const volatile void *p)
{
    printf("%s %lx\n", key, (unsigned long)(uintptr_t)p);
}

/* The stack pointer, and the address of an instruction, here. */
#define HERE(sp, ip) __asm__ volatile("mov %%rsp, %0\n\tlea 0(%%rip), %1" : "=r"(sp), "=r"(ip))

/* Takes eight arguments: the 7th and 8th are passed on the stack. */
__attribute__((noinline)) long eight(long a, long b, long c, long d, long e, long f, long g,
                                     long h)
{
    __asm__ volatile("" : : : "memory");
    return a + b + c + d + e + f + g + h;
}

/* Locals located from rsp: the body never moves it. */
__attribute__((noinline)) double tiles(int n)
{
    double tile[64] __attribute__((aligned(64)));
    double plain[16];
    volatile double s = 0;
    uintptr_t sp, ip;
    for (int i = 0; i < 64; i++)
        tile[i] = i * n;
    for (int i = 0; i < 16; i++)
        plain[i] = i + n;
    HERE(sp, ip);
    show("tiles.ip", (void *)ip);
    show("tiles.sp", (void *)sp);
    show("tiles.fp", __builtin_frame_address(0));
    show("tile[5]", &tile[5]);
    show("tile[63]", &tile[63]);
    show("plain[3]", &plain[3]);
    show("s", &s);
    return tile[5] + plain[3] + s;
}

/* A call with arguments on the stack moves rsp in the body: gcc then
 * locates the locals from rbp and keeps the CFA in memory (DRAP). */
__attribute__((noinline)) long stacked(long n)
{
    long w[8] __attribute__((aligned(64)));
    uintptr_t sp, ip;
    for (int i = 0; i < 8; i++)
        w[i] = n + i;
    HERE(sp, ip);
    show("stacked.ip", (void *)ip);
    show("stacked.sp", (void *)sp);
    show("stacked.fp", __builtin_frame_address(0));
    show("w[6]", &w[6]);
    return eight(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
}

int main(void)
{
    return (int)(tiles(3) + stacked(5)) & 1;
}
