/*
 * gleipnir.h: the pins of mapvis.
 *
 * Put GL_START; before and GL_STOP; after the code whose memory accesses you
 * want to see.  Under the mapvis Valgrind tool every load and store executed
 * between the two pins is recorded; every region (START ... STOP pair) gets its
 * own number.  Heap allocations are recorded from program start, so arrays
 * allocated before GL_START are still named.
 *
 * The pins are Valgrind client requests: when the program runs natively (or
 * under another Valgrind tool) they cost a few instructions and do nothing.
 * Programs written for the original Gleipnir compile unchanged: only the
 * #include path changes.
 *
 * Under mapvis's native heap profiler (heap_profile) the pins also mark the
 * region in the profile: they call mapvis_heap_pin(), which that profiler's
 * preloaded library defines.  The symbol is weak here, so without the
 * profiler it is null and the pins skip the call.  GL_START calls it before
 * its client request and GL_STOP after its own, so under Valgrind the test
 * of the pointer lies outside the traced region.
 *
 * Built with -DGL_NOPINS the pins are empty statements (see below).
 *
 * This header is in the public domain.
 */
#ifndef MAPVIS_GLEIPNIR_H
#define MAPVIS_GLEIPNIR_H

#include <valgrind/valgrind.h>

typedef enum {
   /* Start recording accesses: a new numbered region begins. */
   VG_USERREQ__GL_START = VG_USERREQ_TOOL_BASE('G', 'L'),
   /* Stop recording accesses: the current region ends. */
   VG_USERREQ__GL_STOP
} Vg_GleipnirClientRequest;

#ifdef __cplusplus
extern "C"
#else
extern
#endif
void mapvis_heap_pin(int start) __attribute__((weak));

/* Gleipnir's names, kept so existing programs build.  Built with
   -DGL_NOPINS the pins are empty: the program is the one you did not
   edit, for tracing it with set_region off (or by function or lines). */
#ifdef GL_NOPINS
#define GL_START do { } while (0)
#define GL_STOP do { } while (0)
#else
#define GL_START                                                               \
   do {                                                                        \
      if (mapvis_heap_pin)                                                     \
         mapvis_heap_pin(1);                                                   \
      VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__GL_START, 0, 0, 0, 0, 0);    \
   } while (0)
#define GL_STOP                                                                \
   do {                                                                        \
      VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__GL_STOP, 0, 0, 0, 0, 0);     \
      if (mapvis_heap_pin)                                                     \
         mapvis_heap_pin(0);                                                   \
   } while (0)
#endif
#define GL_START_INSTR GL_START
#define GL_STOP_INSTR GL_STOP

#endif
