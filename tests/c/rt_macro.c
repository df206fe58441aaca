/* A block whose type the source spells through an object-like macro, as
 * PCRE2 spells its public types (pcre2_match_data is pcre2_match_data_8):
 * the statement names `box`, a type the debug information does not know,
 * so the block's members are read with the type its holder points to.
 * The block is one structure with trailing data (a flexible array
 * allocated past its declared bound), not an array of them. */
#include <stdlib.h>
#include "gleipnir.h"

struct real_box_8 {
    void *(*alloc)(size_t);
    void (*release)(void *);
    size_t n;
    double *buf;
    size_t cap;
    double ovector[1];
};
typedef struct real_box_8 box_8;
#define box box_8

static box *box_create(size_t n) {
    box *b = malloc(sizeof(box) + 15 * sizeof(double));
    b->alloc = malloc;
    b->release = free;
    b->n = n;
    b->cap = n;
    b->buf = malloc(n * sizeof(double));
    return b;
}

int main(void) {
    box *b = box_create(64);
    GL_START;
    for (size_t i = 0; i < b->n; i++)
        b->buf[i] = i;
    GL_STOP;
    double s = b->buf[3];
    free(b->buf);
    free(b);
    return s > 0 ? 0 : 1;
}
