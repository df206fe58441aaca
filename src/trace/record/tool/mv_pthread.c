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
   Helgrind and DRD do: thread create and join, and the acquire, release,
   init and destroy of mutexes, rwlocks, semaphores and condition
   variables.  glibc 2.34 and later define the pthread
   functions in libc.so.6; older ones in libpthread.so.0: both are
   wrapped.

   Cost: when the tool does not record sync events (the default), the
   first wrapper called asks the tool once and every later call costs
   one test of a static flag on top of the redirection.
*/

#include "mv_format.h"
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

/* Tells the tool about sync object OBJ of primitive PRIM (SP_*). */
static void tell_sync(int req, void* obj, long prim)
{
   if (sync_on())
      VALGRIND_DO_CLIENT_REQUEST_STMT(req, obj, prim, 0, 0, 0);
}

/* A call that acquires its first argument when it returns 0. */
#define ACQUIRE_1(fn, prim)                                                \
   WRAP_BOTH(int, fn, (void* o),                                           \
   {                                                                       \
      int ret;                                                             \
      OrigFn orig;                                                         \
      VALGRIND_GET_ORIG_FN(orig);                                          \
      CALL_FN_W_W(ret, orig, o);                                           \
      if (ret == 0) tell_sync(MV_USERREQ__ACQUIRED, o, prim);              \
      return ret;                                                          \
   })

/* The same with a second argument (a timeout, a clock id). */
#define ACQUIRE_2(fn, prim)                                                \
   WRAP_BOTH(int, fn, (void* o, void* a),                                  \
   {                                                                       \
      int ret;                                                             \
      OrigFn orig;                                                         \
      VALGRIND_GET_ORIG_FN(orig);                                          \
      CALL_FN_W_WW(ret, orig, o, a);                                       \
      if (ret == 0) tell_sync(MV_USERREQ__ACQUIRED, o, prim);              \
      return ret;                                                          \
   })

/* A call that releases its first argument: told before the real call,
   so that the release comes before the acquire of a waiting thread. */
#define RELEASE_1(fn, prim)                                                \
   WRAP_BOTH(int, fn, (void* o),                                           \
   {                                                                       \
      int ret;                                                             \
      OrigFn orig;                                                         \
      VALGRIND_GET_ORIG_FN(orig);                                          \
      tell_sync(MV_USERREQ__RELEASING, o, prim);                           \
      CALL_FN_W_W(ret, orig, o);                                           \
      return ret;                                                          \
   })

/* init (object, attribute) and destroy (object), told on success. */
#define INIT_2(fn, prim)                                                   \
   WRAP_BOTH(int, fn, (void* o, void* attr),                               \
   {                                                                       \
      int ret;                                                             \
      OrigFn orig;                                                         \
      VALGRIND_GET_ORIG_FN(orig);                                          \
      CALL_FN_W_WW(ret, orig, o, attr);                                    \
      if (ret == 0) tell_sync(MV_USERREQ__SYNC_INIT, o, prim);             \
      return ret;                                                          \
   })
#define DESTROY_1(fn, prim)                                                \
   WRAP_BOTH(int, fn, (void* o),                                           \
   {                                                                       \
      int ret;                                                             \
      OrigFn orig;                                                         \
      VALGRIND_GET_ORIG_FN(orig);                                          \
      CALL_FN_W_W(ret, orig, o);                                           \
      if (ret == 0) tell_sync(MV_USERREQ__SYNC_DESTROY, o, prim);          \
      return ret;                                                          \
   })

/* Mutexes. */
ACQUIRE_1(pthreadZumutexZulock, SP_MUTEX)
ACQUIRE_1(pthreadZumutexZutrylock, SP_MUTEX)
ACQUIRE_2(pthreadZumutexZutimedlock, SP_MUTEX)
ACQUIRE_2(pthreadZumutexZuclocklock, SP_MUTEX)
RELEASE_1(pthreadZumutexZuunlock, SP_MUTEX)
INIT_2(pthreadZumutexZuinit, SP_MUTEX)
DESTROY_1(pthreadZumutexZudestroy, SP_MUTEX)

/* Reader-writer locks: a read or a write lock is an acquire. */
ACQUIRE_1(pthreadZurwlockZurdlock, SP_RWLOCK)
ACQUIRE_1(pthreadZurwlockZuwrlock, SP_RWLOCK)
ACQUIRE_1(pthreadZurwlockZutryrdlock, SP_RWLOCK)
ACQUIRE_1(pthreadZurwlockZutrywrlock, SP_RWLOCK)
ACQUIRE_2(pthreadZurwlockZutimedrdlock, SP_RWLOCK)
ACQUIRE_2(pthreadZurwlockZutimedwrlock, SP_RWLOCK)
RELEASE_1(pthreadZurwlockZuunlock, SP_RWLOCK)
INIT_2(pthreadZurwlockZuinit, SP_RWLOCK)
DESTROY_1(pthreadZurwlockZudestroy, SP_RWLOCK)

/* Semaphores: a wait that returns 0 acquires, a post releases.  glibc
   versions these symbols (sem_wait@@GLIBC_2.34, sem_wait@GLIBC_2.2.5):
   the patterns take any version. */
ACQUIRE_1(semZuwaitZAZa, SP_SEM)
ACQUIRE_1(semZutrywaitZAZa, SP_SEM)
ACQUIRE_2(semZutimedwaitZAZa, SP_SEM)
RELEASE_1(semZupostZAZa, SP_SEM)
DESTROY_1(semZudestroyZAZa, SP_SEM)

/* sem_init@* (sem, pshared, value). */
WRAP_BOTH(int, semZuinitZAZa, (void* s, long pshared, long value),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   CALL_FN_W_WWW(ret, orig, s, pshared, value);
   if (ret == 0) tell_sync(MV_USERREQ__SYNC_INIT, s, SP_SEM);
   return ret;
})

/* Condition variables (versioned like the semaphores).  A signal or
   broadcast releases the condition variable; a wait releases its mutex
   before it waits, and when it returns it has acquired the condition
   variable (unless it timed out) and its mutex again. */
RELEASE_1(pthreadZucondZusignalZAZa, SP_COND)
RELEASE_1(pthreadZucondZubroadcastZAZa, SP_COND)
INIT_2(pthreadZucondZuinitZAZa, SP_COND)
DESTROY_1(pthreadZucondZudestroyZAZa, SP_COND)

WRAP_BOTH(int, pthreadZucondZuwaitZAZa, (void* c, void* m),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   tell_sync(MV_USERREQ__RELEASING, m, SP_MUTEX);
   CALL_FN_W_WW(ret, orig, c, m);
   if (ret == 0) tell_sync(MV_USERREQ__ACQUIRED, c, SP_COND);
   tell_sync(MV_USERREQ__ACQUIRED, m, SP_MUTEX);
   return ret;
})

WRAP_BOTH(int, pthreadZucondZutimedwaitZAZa, (void* c, void* m, void* abstime),
{
   int ret;
   OrigFn orig;
   VALGRIND_GET_ORIG_FN(orig);
   tell_sync(MV_USERREQ__RELEASING, m, SP_MUTEX);
   CALL_FN_W_WWW(ret, orig, c, m, abstime);
   if (ret == 0) tell_sync(MV_USERREQ__ACQUIRED, c, SP_COND);
   tell_sync(MV_USERREQ__ACQUIRED, m, SP_MUTEX);
   return ret;
})

/*--------------------------------------------------------------------*/
/*--- end                                              mv_pthread.c ---*/
/*--------------------------------------------------------------------*/
