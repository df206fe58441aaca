/* A macro bomb: Ek(x) repeats x 2^k times, so E40 is 2^40 tokens. gcc
   never expands it here (BOMB is unused, and the branch that uses E40
   is not the one gcc takes), but a reader that cannot decide
   __has_include takes that branch. The analysis must still finish:
   a is named by its site with a note, b by its variable. */
#include <stdlib.h>
#include "gleipnir.h"
#define E0(x) x
#define E1(x) E0(x) E0(x)
#define E2(x) E1(x) E1(x)
#define E3(x) E2(x) E2(x)
#define E4(x) E3(x) E3(x)
#define E5(x) E4(x) E4(x)
#define E6(x) E5(x) E5(x)
#define E7(x) E6(x) E6(x)
#define E8(x) E7(x) E7(x)
#define E9(x) E8(x) E8(x)
#define E10(x) E9(x) E9(x)
#define E11(x) E10(x) E10(x)
#define E12(x) E11(x) E11(x)
#define E13(x) E12(x) E12(x)
#define E14(x) E13(x) E13(x)
#define E15(x) E14(x) E14(x)
#define E16(x) E15(x) E15(x)
#define E17(x) E16(x) E16(x)
#define E18(x) E17(x) E17(x)
#define E19(x) E18(x) E18(x)
#define E20(x) E19(x) E19(x)
#define E21(x) E20(x) E20(x)
#define E22(x) E21(x) E21(x)
#define E23(x) E22(x) E22(x)
#define E24(x) E23(x) E23(x)
#define E25(x) E24(x) E24(x)
#define E26(x) E25(x) E25(x)
#define E27(x) E26(x) E26(x)
#define E28(x) E27(x) E27(x)
#define E29(x) E28(x) E28(x)
#define E30(x) E29(x) E29(x)
#define E31(x) E30(x) E30(x)
#define E32(x) E31(x) E31(x)
#define E33(x) E32(x) E32(x)
#define E34(x) E33(x) E33(x)
#define E35(x) E34(x) E34(x)
#define E36(x) E35(x) E35(x)
#define E37(x) E36(x) E36(x)
#define E38(x) E37(x) E37(x)
#define E39(x) E38(x) E38(x)
#define E40(x) E39(x) E39(x)
#define BOMB E40(1)
#if __has_include(<mapvis_no_such_header.h>)
#if E40(1)
#endif
#define ALLOC(p, n) double *p = E40(malloc)(n)
#else
#define ALLOC(p, n) double *p = malloc(n)
#endif
int main(void)
{
    int i;
    ALLOC(a, 8 * sizeof(double)); /* @a */
    double *b = malloc(4 * sizeof(double));
    GL_START;
    for (i = 0; i < 8; i++)
        a[i] = i;                 /* a: 8 stores */
    for (i = 0; i < 4; i++)
        b[i] = a[i];              /* a: 4 loads, b: 4 stores */
    GL_STOP;
    free(a);
    free(b);
    return 0;
}
