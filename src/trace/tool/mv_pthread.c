/*--------------------------------------------------------------------*/
/*--- mapvis: pthread wrappers, part of the tool's preload.         ---*/
/*---                                                  mv_pthread.c ---*/
/*--------------------------------------------------------------------*/

/*
   This file is part of mapvis, GPL-2.0-or-later like mv_main.c.

   Valgrind loads vgpreload_mapvis-amd64-linux.so into every traced
   program and redirects the functions named below to these wrappers
   (the symbol names encode the soname and function, see valgrind.h's
   I_WRAP_SONAME_FNNAME_ZZ: both Z-encoded).  Each wrapper calls the real function and
   tells the tool what happened with a client request (mv_sync.h), as
   Helgrind and DRD do.  glibc 2.34 and later define the pthread
   functions in libc.so.6; older ones in libpthread.so.0: both are
   wrapped.

   Cost: when the tool does not record sync events (the default), the
   first wrapper called asks the tool once and every later call costs
   one test of a static flag on top of the redirection.
*/

#include "mv_sync.h"

/* The soname patterns, Z-encoded: libc.so* and libpthread.so.0. */
#define LIBC_SO       libcZdsoZa
#define LIBPTHREAD_SO libpthreadZdsoZd0

/* -1: not asked yet; 0: off; 1: on.  Threads run one at a time under
   Valgrind, so the unsynchronised first write is harmless. */
static int mv_sync_on = -1;

static int sync_on(void)
{
   if (mv_sync_on < 0)
      mv_sync_on = (int)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, MV_USERREQ__SYNC_ON,
                                                        0, 0, 0, 0, 0);
   return mv_sync_on > 0;
}

static void tell(int req, void* what)
{
   if (sync_on())
      VALGRIND_DO_CLIENT_REQUEST_STMT(req, what, 0, 0, 0, 0);
}

/* Defines a wrapper of FN in both sonames; the body follows the
   parameters. */
#define WRAP_BOTH(ret, fn, params, ...)                                    \
   ret I_WRAP_SONAME_FNNAME_ZZ(LIBC_SO, fn) params;                        \
   ret I_WRAP_SONAME_FNNAME_ZZ(LIBC_SO, fn) params __VA_ARGS__             \
   ret I_WRAP_SONAME_FNNAME_ZZ(LIBPTHREAD_SO, fn) params;                  \
   ret I_WRAP_SONAME_FNNAME_ZZ(LIBPTHREAD_SO, fn) params __VA_ARGS__

/* pthread_create@* (the symbol is versioned in glibc). */
WRAP_BOTH(int, pthreadZucreateZAZa,
          (void** thread, void* attr, void* (*start)(void*), void* arg),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   CALL_FN_W_WWWW(ret, orig, thread, attr, start, arg);
   if (ret == 0) tell(MV_USERREQ__CREATED, *thread);
   return ret;
})

/* pthread_join@* */
WRAP_BOTH(int, pthreadZujoinZAZa, (void* thread, void** value),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   CALL_FN_W_WW(ret, orig, thread, value);
   if (ret == 0) tell(MV_USERREQ__JOINED, thread);
   return ret;
})

WRAP_BOTH(int, pthreadZumutexZulock, (void* m),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   CALL_FN_W_W(ret, orig, m);
   if (ret == 0) tell(MV_USERREQ__MUTEX_LOCKED, m);
   return ret;
})

WRAP_BOTH(int, pthreadZumutexZutrylock, (void* m),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   CALL_FN_W_W(ret, orig, m);
   if (ret == 0) tell(MV_USERREQ__MUTEX_LOCKED, m);
   return ret;
})

WRAP_BOTH(int, pthreadZumutexZutimedlock, (void* m, void* abstime),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   CALL_FN_W_WW(ret, orig, m, abstime);
   if (ret == 0) tell(MV_USERREQ__MUTEX_LOCKED, m);
   return ret;
})

/* The release is told before the real unlock, so that it comes before
   the acquire of a thread that was waiting. */
WRAP_BOTH(int, pthreadZumutexZuunlock, (void* m),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   tell(MV_USERREQ__MUTEX_UNLOCK, m);
   CALL_FN_W_W(ret, orig, m);
   return ret;
})

WRAP_BOTH(int, pthreadZumutexZuinit, (void* m, void* attr),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   CALL_FN_W_WW(ret, orig, m, attr);
   if (ret == 0) tell(MV_USERREQ__MUTEX_INIT, m);
   return ret;
})

WRAP_BOTH(int, pthreadZumutexZudestroy, (void* m),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   CALL_FN_W_W(ret, orig, m);
   if (ret == 0) tell(MV_USERREQ__MUTEX_DESTROY, m);
   return ret;
})

/*--------------------------------------------------------------------*/
/*--- end                                              mv_pthread.c ---*/
/*--------------------------------------------------------------------*/
