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

/* Gleipnir's names, kept so existing programs build. */
#define GL_START VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__GL_START, 0, 0, 0, 0, 0)
#define GL_STOP VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__GL_STOP, 0, 0, 0, 0, 0)
#define GL_START_INSTR GL_START
#define GL_STOP_INSTR GL_STOP

#endif
