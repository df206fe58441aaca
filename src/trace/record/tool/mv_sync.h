/*
   mv_sync.h: the client requests by which mapvis's pthread wrappers
   (mv_pthread.c, in the tool's preload) tell the tool (mv_main.c) about
   thread, mutex, rwlock, condition variable and semaphore operations.  Private to the two files; the numbers
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
   /* A sync object was acquired: arg1 its address, arg2 its primitive
      (SP_* of mv_format.h).  A mutex or rwlock locked, a semaphore
      taken, a condition variable's wait woken by a signal. */
   MV_USERREQ__ACQUIRED,
   /* A sync object is about to be released: a mutex or rwlock unlocked,
      a semaphore posted, a condition variable signalled; the mutex of a
      condition wait before the wait. */
   MV_USERREQ__RELEASING,
   /* A sync object was initialised (pthread_*_init, sem_init). */
   MV_USERREQ__SYNC_INIT,
   /* A sync object was destroyed (pthread_*_destroy, sem_destroy). */
   MV_USERREQ__SYNC_DESTROY
} Mv_SyncClientRequest;

#endif
