/*
   mv_sync.h: the client requests by which mapvis's pthread wrappers
   (mv_pthread.c, in the tool's preload) tell the tool (mv_main.c) about
   thread and mutex operations.  Private to the two files; the numbers
   follow the pins' GL_START and GL_STOP (gleipnir.h) in the same 'G','L'
   tool range.

   This file is part of mapvis, GPL-2.0-or-later like mv_main.c.
*/
#ifndef MAPVIS_MV_SYNC_H
#define MAPVIS_MV_SYNC_H

#include <valgrind/valgrind.h>

typedef enum {
   /* Returns 1 when the tool records sync events (--sync-events=yes). */
   MV_USERREQ__SYNC_ON = VG_USERREQ_TOOL_BASE('G', 'L') + 0x100,
   /* pthread_create returned 0: arg1 is the new thread's pthread_t. */
   MV_USERREQ__CREATED,
   /* pthread_join returned 0: arg1 is the joined thread's pthread_t. */
   MV_USERREQ__JOINED,
   /* A mutex was acquired (lock, or a trylock/timedlock that succeeded). */
   MV_USERREQ__MUTEX_LOCKED,
   /* A mutex is about to be released. */
   MV_USERREQ__MUTEX_UNLOCK,
   /* pthread_mutex_init returned 0. */
   MV_USERREQ__MUTEX_INIT,
   /* pthread_mutex_destroy returned 0. */
   MV_USERREQ__MUTEX_DESTROY
} Mv_SyncClientRequest;

#endif
