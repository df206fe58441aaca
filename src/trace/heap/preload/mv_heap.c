/*
 * mv_heap.c: mapvis's native heap profiler, loaded with LD_PRELOAD.
 *
 * It wraps malloc, calloc, realloc, free, memalign, posix_memalign,
 * aligned_alloc, valloc, pvalloc and every C++ operator new and delete
 * (plain, array, nothrow, sized, aligned), and records each call with its
 * address, size, usable size (malloc_usable_size), thread, timestamp
 * (rdtsc) and, for allocations, the call stack's return addresses; a
 * sample of the calls also gets its own duration (rdtsc around the real
 * allocator only, see `timed_now`).
 *
 * Design (the low-latency layout of the Heapprof thesis):
 *   - Each thread appends fixed-size records to its own 256 KiB chunk. No
 *     lock and no atomic read-modify-write is taken on the allocation path:
 *     a full chunk is handed to the collector through a single-producer,
 *     single-consumer ring, and empty chunks come back through another.
 *   - Stacks are walked with frame pointers, bounded to the thread's own
 *     stack (every read stays between the current frame and the top of the
 *     stack, and frames must grow upwards), and interned per thread in an
 *     open-addressing table keyed by a 64-bit hash of the return addresses;
 *     a new stack takes a global id with one atomic increment and is
 *     written once, before its first use.
 *   - A collector thread drains the rings every millisecond, encodes the
 *     records compactly (docs/heap-profile-format.md: per-thread
 *     references and a size dictionary, varints, columns compressed with
 *     zstd when libzstd.so.1 can be loaded) into the output file, samples
 *     the resident set size (/proc/self/statm) every 10 ms, and keeps the
 *     summary heap_profile and alloc_sites show, taking the calls of all
 *     threads in time order as they come (see `summarise`).
 *   - GL_START / GL_STOP of pins/gleipnir.h call mapvis_heap_pin() (a weak
 *     symbol there, so a no-op without this library): a region mark.
 *
 * Environment: MAPVIS_HEAP_OUT=FILE turns recording on (it is removed from
 * the environment, so programs the profiled one starts are not profiled);
 * MAPVIS_HEAP_DEPTH=N keeps N return addresses (default 16, at most 62);
 * MAPVIS_HEAP_TIME=all times every call (default: about 1 in 64).
 * For tests: MAPVIS_HEAP_ENCODER (who encodes the chunks, see `help`) and
 * MAPVIS_HEAP_COLLECTOR_DELAY_MS (the collector starts late).
 * A forked child that does not exec stops recording.
 *
 * This file is part of mapvis (GPL-2.0-or-later).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/*--------------------------------------------------------------------*/
/*--- Record kinds (shared with docs/heap-profile-format.md)       ---*/
/*--------------------------------------------------------------------*/

enum {
   K_MALLOC = 1, K_CALLOC = 2, K_REALLOC = 3, K_MEMALIGN = 4,
   K_NEW = 5, K_NEW_ARRAY = 6,
   K_FREE = 17, K_DELETE = 18, K_DELETE_ARRAY = 19,
   K_REGION = 32, K_STACK = 33
};

enum {
   R_THREAD = 1, R_STACK = 2, R_ALLOC = 3, R_FREE = 4, R_REALLOC = 5,
   R_RSS = 6, R_REGION = 7, R_MAP = 8, R_FOOTER = 9, R_END = 0,
   R_CHUNK = 10, R_REGION_AT = 11, R_ZCHUNK = 12, R_SUMMARY = 13, R_CLOCK = 14
};

/* The profile format version written (docs/heap-profile-format.md);
 * build.rs hands this number to the Rust reader, so they cannot drift. */
#define FORMAT_VERSION 7
/* Call times are kept in units of 2^TICK_SHIFT ticks, durations in units
 * of 2^DUR_SHIFT ticks (both in the header; docs/heap-profile-format.md). */
#define TICK_SHIFT 6
#define DUR_SHIFT 4
/* By default a thread times about one call in DUR_SAMPLE (a power of
 * two), chosen by a per-thread pseudo-random sequence; the rest carry no
 * duration. The sampling period is in the header. */
#define DUR_SAMPLE 64u
/* `struct rec`'s dur of a call that was not timed. */
#define UNTIMED 0xffffffffu
/* Tag bit of format 4: the call was timed (a duration follows). */
#define T_TIMED 0x80
/* Per-thread encoding tables of format 3 (powers of two). */
#define FREED_RING 4096u /* recent frees, by number */
#define AGE_RING 4096u   /* recent allocations, by number */
#define AMAP_SLOTS 4096u /* address -> allocation number, direct-mapped */
#define INFO_IDS 4096u   /* (size, slack, stack) dictionary entries */
#define INFO_SLOTS 4096u /* its direct-mapped cache */
#define MAX_DEPTH 62
#define CHUNK_BYTES (256u * 1024u)
#define RING 64u

/* One recorded call, as the thread writes it (48 bytes). A K_STACK record
 * is followed by `size` return addresses in the next 8-byte words. */
struct rec {
   uint64_t tsc;   /* rdtsc after an allocation, before a free or realloc */
   uint64_t addr;  /* block returned / freed */
   uint64_t size;  /* requested bytes; frame count of K_STACK; 1/0 for K_REGION */
   uint64_t aux;   /* old address for realloc */
   uint32_t stack; /* interned stack id (0: none) */
   uint32_t dur;   /* ticks spent in the real call; UNTIMED: not timed */
   uint32_t kind;
   uint32_t pad;   /* usable size minus size */
};

/* A chunk of one thread's records. The thread publishes `used` with a
 * release store after writing each record, so the collector may read a
 * chunk's records while the thread still appends to it (the summary does,
 * see `sum_peek`). */
struct chunk {
   _Atomic uint32_t used; /* bytes of data written and published */
   uint32_t seq;          /* the thread's chunks are numbered 0, 1, ... */
   uint32_t final_used;   /* collector: `used` when handed over */
   uint32_t pad;
   struct chunk *next;    /* collector: the thread's chunks awaiting the summary */
   uint8_t *enc;          /* the thread's own encoding of it (see `self_encode`) */
   uint32_t enc_len;      /* bytes of `enc` used */
   _Atomic int pre;       /* encoded by its thread: the collector copies `enc` */
   uint8_t data[CHUNK_BYTES];
};

/* An open-addressing map from a stack's frame hash (never 0: 0 marks an
 * empty slot) to its id, probed linearly and doubled once half full: each
 * thread's stacks, and the collector's first id of each distinct stack. */
struct idtab {
   uint64_t *keys;
   uint32_t *ids;
   uint32_t cap, used;
};

/* A thread's state. Fields above `coll_*` are the thread's; the rings are
 * shared with the collector (single producer, single consumer each). */
struct tstate {
   struct tstate *next_all;
   uint32_t tid, os_tid;
   uintptr_t stack_hi;
   uint32_t next_seq; /* the number of the thread's next chunk */
   struct idtab stacks; /* frame hash -> stack id */
   struct cols *own_cols; /* column buffers of `self_encode` (mapped at first use) */
   void *own_cctx;        /* its zstd context */
   /* Written on every call and read by the collector: a cache line of
    * their own, so that the collector's reads of the fields above and
    * below do not take the line from the thread. */
   _Alignas(64) _Atomic(struct chunk *) cur; /* read by the summary too */
   /* 1 from before a call's time stamp is taken until its record is
    * published: the summary's horizon (see `summarise`). */
   _Atomic int busy;
   /* The time stamp of the thread's latest call, stored once taken: a
    * busy thread's pending call is no earlier than any value seen here. */
   _Atomic uint64_t busy_tsc;
   _Alignas(64) _Atomic uint32_t full_head, full_tail;
   /* Held by whoever encodes one of the thread's chunks (the collector,
    * or the thread itself: `self_encode`); it guards the encoding state
    * (coll_*) and enc_next, the number of the next chunk to encode. */
   _Atomic int enc_lock;
   uint32_t enc_next;
   struct chunk *full[RING];
   _Atomic uint32_t free_head, free_tail;
   struct chunk *freeq[RING];
   _Atomic int exited;
   /* encoding state (docs/heap-profile-format.md): the collector's, lent
    * to the thread while it encodes a chunk itself (`self_encode`) */
   _Alignas(64) uint64_t coll_tsc, coll_addr;
   uint64_t coll_floor;   /* least time unit the next call may take */
   uint64_t coll_seq;     /* allocations encoded so far */
   uint64_t coll_freed_nr; /* frees encoded so far */
   struct amap_slot *coll_amap; /* address -> allocation number */
   struct amap_slot *coll_fmap; /* address -> free number */
   struct info_slot *coll_info;     /* dictionary, by number */
   uint32_t *coll_info_cache;       /* hash -> number */
   uint32_t coll_info_next;         /* numbers given */
   int coll_done;
   uint32_t coll_seen_head; /* full_head at the collector's last `judge_help` */
   /* collector-only summary state (see `summarise`) */
   struct chunk *sum_first, *sum_last; /* encoded chunks the summary has not passed */
   uint32_t sum_seq, sum_off;          /* the summary's place: chunk number, offset */
   uint64_t sum_tsc, sum_floor;        /* the encoder's time units, mirrored */
   uint64_t sum_safe;                  /* no record to come takes a unit below this */
   int sum_has_head;                   /* sum_head* hold the next record */
   uint64_t sum_head_unit;
   const struct rec *sum_head_rec; /* in a chunk not given back before it is taken */
   uint32_t sum_head_key;              /* marks before calls, then thread number */
   uint64_t sum_seen_epoch;            /* when the current chunk was last looked at */
   uint32_t sum_seen_used, sum_seen_seq; /* its length and number then */
   int sum_cur_still;                  /* unchanged since the horizon before */
   int sum_blocked;                    /* published records not read yet */
};

/* The collector's map from a block to the number of its allocation. */
struct amap_slot {
   uint64_t addr, seq;
};

/* One entry of the collector's (size, slack, stack) dictionary. */
struct info_slot {
   uint64_t size;
   uint32_t slack, stack;
   int used;
};

/*--------------------------------------------------------------------*/
/*--- Globals                                                      ---*/
/*--------------------------------------------------------------------*/

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef void *(*memalign_fn)(size_t, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef size_t (*usable_fn)(void *);
typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *,
                                 void *(*)(void *), void *);

static malloc_fn real_malloc, real_valloc, real_pvalloc;
static calloc_fn real_calloc;
static realloc_fn real_realloc;
static free_fn real_free;
static memalign_fn real_memalign, real_aligned_alloc;
static posix_memalign_fn real_posix_memalign;
static usable_fn real_usable;
static pthread_create_fn real_pthread_create;

static int enabled;                 /* recording on */
/* The calls are written (MAPVIS_HEAP_CALLS=1, or without membarrier):
 * else only the summary is (docs/heap-profile-format.md, "Two kinds of
 * profile"), and chunks are summarised and dropped, never encoded. */
static int keep_calls;
static _Atomic int stopping;        /* set at exit: pass through */
static int out_fd = -1;
static unsigned depth = 16;
static uint64_t dur_mask = DUR_SAMPLE - 1; /* 0: every call is timed */
static _Atomic uint32_t next_tid = 1;
static _Atomic uint32_t next_stack = 1;
static _Atomic(struct tstate *) all_threads;
static pthread_key_t exit_key;
static pthread_t collector;
static _Atomic int collector_stop;
static uint64_t tsc0, mono0;
extern void *__libc_stack_end;

static TLS struct tstate *ts;      /* (struct tstate *)1: thread has exited */
static TLS int in_hook;            /* inside a wrapper: nested calls pass through */
static TLS uintptr_t tls_stack_hi; /* set by the pthread_create trampoline */
static TLS uint64_t tls_rng;       /* the thread's sampling sequence (0: unseeded) */

/* Bootstrap arena: dlsym may allocate before the real functions are known. */
static char boot_arena[64 * 1024] __attribute__((aligned(64)));
static size_t boot_used;
static int resolving;

static int in_boot(const void *p)
{
   return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof boot_arena;
}

static void *boot_alloc(size_t n)
{
   size_t at = (boot_used + 15) & ~(size_t)15;
   if (at + n > sizeof boot_arena)
      return NULL;
   boot_used = at + n;
   return boot_arena + at;
}

static uint64_t mono_ns(void)
{
   struct timespec t;
   clock_gettime(CLOCK_MONOTONIC, &t);
   return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*--------------------------------------------------------------------*/
/*--- Resolving the real functions                                 ---*/
/*--------------------------------------------------------------------*/

static void resolve(void)
{
   if (real_malloc || resolving)
      return;
   resolving = 1;
   real_calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
   real_realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
   real_free = (free_fn)dlsym(RTLD_NEXT, "free");
   real_memalign = (memalign_fn)dlsym(RTLD_NEXT, "memalign");
   real_aligned_alloc = (memalign_fn)dlsym(RTLD_NEXT, "aligned_alloc");
   real_posix_memalign = (posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
   real_valloc = (malloc_fn)dlsym(RTLD_NEXT, "valloc");
   real_pvalloc = (malloc_fn)dlsym(RTLD_NEXT, "pvalloc");
   real_usable = (usable_fn)dlsym(RTLD_NEXT, "malloc_usable_size");
   real_pthread_create = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
   real_malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
   resolving = 0;
}

/*--------------------------------------------------------------------*/
/*--- Per-thread buffers                                           ---*/
/*--------------------------------------------------------------------*/

static void *map_pages(size_t n)
{
   void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
   return p == MAP_FAILED ? NULL : p;
}

/* Doubles `m` (or makes it `first` slots when it has none); 0 when out of
 * memory, `m` unchanged. */
static int idtab_grow(struct idtab *m, uint32_t first)
{
   uint32_t cap = m->cap ? m->cap * 2 : first;
   uint64_t *keys = map_pages(cap * sizeof(uint64_t));
   uint32_t *ids = map_pages(cap * sizeof(uint32_t));
   if (!keys || !ids) {
      if (keys)
         munmap(keys, cap * sizeof(uint64_t));
      if (ids)
         munmap(ids, cap * sizeof(uint32_t));
      return 0;
   }
   for (uint32_t i = 0; i < m->cap; i++) {
      if (!m->keys[i])
         continue;
      uint32_t j = (uint32_t)m->keys[i] & (cap - 1);
      while (keys[j])
         j = (j + 1) & (cap - 1);
      keys[j] = m->keys[i];
      ids[j] = m->ids[i];
   }
   if (m->cap) {
      munmap(m->keys, m->cap * sizeof(uint64_t));
      munmap(m->ids, m->cap * sizeof(uint32_t));
   }
   m->keys = keys;
   m->ids = ids;
   m->cap = cap;
   return 1;
}

/* Puts `key` -> `id` into slot `j`, the empty slot the caller's probe for
 * `key` ended on, and grows `m` once half full. */
static void idtab_put(struct idtab *m, uint32_t j, uint64_t key, uint32_t id)
{
   m->keys[j] = key;
   m->ids[j] = id;
   if (++m->used * 2 > m->cap)
      idtab_grow(m, 0);
}

/* Chunks taken by threads and not yet given back (the threads' current
 * ones, those in their rings and those waiting for the summary): past
 * MAX_IN_FLIGHT (64 MiB of chunks) a thread with a chunk still in its ring
 * waits before it hands over another, so that many threads do not each
 * fill a ring of RING chunks (at 64 threads on 2 CPUs the program's peak
 * RSS was about 1 GB). A thread with an empty ring never waits on it: the
 * summary may need its chunk to go on. */
#define MAX_IN_FLIGHT 256u
static _Atomic uint32_t in_flight;

static struct chunk *take_chunk(struct tstate *t)
{
   atomic_fetch_add_explicit(&in_flight, 1, memory_order_relaxed);
   uint32_t tail = atomic_load_explicit(&t->free_tail, memory_order_relaxed);
   if (tail != atomic_load_explicit(&t->free_head, memory_order_acquire)) {
      struct chunk *c = t->freeq[tail % RING];
      atomic_store_explicit(&t->free_tail, tail + 1, memory_order_release);
      atomic_store_explicit(&c->used, 0, memory_order_relaxed);
      atomic_store_explicit(&c->pre, 0, memory_order_relaxed);
      c->seq = t->next_seq++;
      return c;
   }
   struct chunk *c = map_pages(sizeof(struct chunk));
   if (c) {
      atomic_store_explicit(&c->used, 0, memory_order_relaxed);
      c->seq = t->next_seq++;
   } else {
      atomic_fetch_sub_explicit(&in_flight, 1, memory_order_relaxed);
   }
   return c;
}

/* Hands the current chunk to the collector; waits while its ring is full
 * (or holds a chunk while MAX_IN_FLIGHT are taken).
 * The wait yields a few times, then sleeps 50 us at a time: with more
 * allocating threads than cores the collector is what limits the rate,
 * and threads spinning on sched_yield took the CPU it needed (at 4
 * threads on 2 cores, 15% of all CPU time went to yielding). A chunk
 * takes the collector about 0.2 ms, so a sleep loses little. */
static void self_encode(struct tstate *t, struct chunk *c);

static void hand_over(struct tstate *t)
{
   struct chunk *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
   if (!c)
      return;
   self_encode(t, c);
   uint32_t head = atomic_load_explicit(&t->full_head, memory_order_relaxed);
   unsigned waits = 0;
   for (;;) {
      uint32_t queued = head - atomic_load_explicit(&t->full_tail, memory_order_acquire);
      if (queued < RING &&
          (!queued || atomic_load_explicit(&in_flight, memory_order_relaxed) < MAX_IN_FLIGHT))
         break;
      if (++waits <= 8) {
         sched_yield();
      } else {
         struct timespec d = {0, 50000};
         nanosleep(&d, NULL);
      }
   }
   t->full[head % RING] = c;
   atomic_store_explicit(&t->full_head, head + 1, memory_order_release);
   /* Only now: a collector that finds `cur` empty finds the chunk queued. */
   atomic_store_explicit(&t->cur, NULL, memory_order_release);
}

static void drop_own_encoder(struct tstate *t);

static void thread_gone(void *arg)
{
   struct tstate *t = arg;
   in_hook++;
   hand_over(t);
   drop_own_encoder(t);
   atomic_store_explicit(&t->exited, 1, memory_order_release);
   ts = (struct tstate *)1;
   in_hook--;
}

static struct tstate *new_thread(void)
{
   struct tstate *t = map_pages(sizeof(struct tstate));
   if (!t)
      return NULL;
   t->tid = atomic_fetch_add(&next_tid, 1);
   t->os_tid = (uint32_t)syscall(SYS_gettid);
   t->stack_hi = tls_stack_hi;
   if (t->tid == 1 && !t->stack_hi)
      t->stack_hi = (uintptr_t)__libc_stack_end;
   idtab_grow(&t->stacks, 1u << 12);
   t->coll_tsc = tsc0 >> TICK_SHIFT;
   /* Every call of the thread is stamped later: while it is busy in its
    * first call (an allocation publishes its stamp only once the real
    * allocator returns, and a new thread's first one may wait long for a
    * new arena) the summary's horizon need not fall back to 0. */
   atomic_store_explicit(&t->busy_tsc, __rdtsc(), memory_order_relaxed);
   struct tstate *head = atomic_load(&all_threads);
   do {
      t->next_all = head;
   } while (!atomic_compare_exchange_weak(&all_threads, &head, t));
   pthread_setspecific(exit_key, t);
   return t;
}

/* Room for a record of `bytes` in the thread's chunk (handing a full one
 * over); the record is the collector's once `commit` publishes it. */
static inline void *reserve(struct tstate *t, uint32_t bytes)
{
   struct chunk *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
   if (UNLIKELY(!c || atomic_load_explicit(&c->used, memory_order_relaxed) + bytes > CHUNK_BYTES)) {
      hand_over(t);
      c = take_chunk(t);
      if (!c)
         return NULL;
      atomic_store_explicit(&t->cur, c, memory_order_release);
   }
   return c->data + atomic_load_explicit(&c->used, memory_order_relaxed);
}

/* Publishes the record `reserve` gave room for (a plain store on x86-64). */
static inline void commit(struct tstate *t, uint32_t bytes)
{
   struct chunk *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
   uint32_t u = atomic_load_explicit(&c->used, memory_order_relaxed);
   atomic_store_explicit(&c->used, u + bytes, memory_order_release);
}

/*--------------------------------------------------------------------*/
/*--- Stacks                                                       ---*/
/*--------------------------------------------------------------------*/

/* Return addresses starting at the wrapper's frame `fp`: [fp+8] is the
 * wrapper's return address; saved frame pointers are followed while they
 * stay inside the thread's stack and grow upwards. */
static unsigned walk(uintptr_t fp, uintptr_t hi, uint64_t *out)
{
   unsigned n = 0;
   uintptr_t lo = fp;
   if (!hi || hi <= lo || hi - lo > (64u << 20))
      hi = lo + 16; /* unknown stack: the first frame only */
   while (n < depth && fp >= lo && fp + 16 <= hi && (fp & 7) == 0) {
      uint64_t ret = ((uint64_t *)fp)[1];
      if (!ret)
         break;
      out[n++] = ret;
      uintptr_t next = ((uintptr_t *)fp)[0];
      if (next <= fp)
         break;
      fp = next;
   }
   return n;
}

static uint64_t hash_frames(const uint64_t *f, unsigned n)
{
   uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
   for (unsigned i = 0; i < n; i++) {
      h ^= f[i];
      h *= 0xff51afd7ed558ccdull;
      h ^= h >> 32;
   }
   return h | 1; /* 0 marks an empty slot */
}


/* The id of the stack at `fp`, writing a K_STACK record the first time. */
static uint32_t intern(struct tstate *t, uintptr_t fp)
{
   uint64_t frames[MAX_DEPTH];
   unsigned n = walk(fp, t->stack_hi, frames);
   struct idtab *m = &t->stacks;
   if (!m->cap)
      return 0;
   uint64_t h = hash_frames(frames, n);
   uint32_t mask = m->cap - 1, j = (uint32_t)h & mask;
   while (m->keys[j]) {
      if (m->keys[j] == h)
         return m->ids[j];
      j = (j + 1) & mask;
   }
   uint32_t id = atomic_fetch_add_explicit(&next_stack, 1, memory_order_relaxed);
   struct rec *r = reserve(t, sizeof(struct rec) + n * 8);
   if (!r)
      return 0;
   r->kind = K_STACK;
   r->size = n;
   r->stack = id;
   memcpy(r + 1, frames, n * 8);
   commit(t, sizeof(struct rec) + n * 8);
   idtab_put(m, j, h, id);
   return id;
}

/*--------------------------------------------------------------------*/
/*--- Recording                                                    ---*/
/*--------------------------------------------------------------------*/

static inline struct tstate *me(void)
{
   struct tstate *t = ts;
   if (LIKELY((uintptr_t)t > 1))
      return t;
   if (t || !enabled || atomic_load_explicit(&stopping, memory_order_relaxed))
      return NULL;
   in_hook++;
   t = ts = new_thread();
   in_hook--;
   return t;
}

/* MAPVIS_HEAP_SLOW_CALL=N, for tests: the Nth recorded call of the
 * process stays inside the profiler for 1.5 s before it is published, as
 * a thread that stays inside the allocator would hold the summary up. */
static uint64_t slow_call_at;
static _Atomic uint64_t calls_counted;

static void maybe_slow(void)
{
   if (atomic_fetch_add_explicit(&calls_counted, 1, memory_order_relaxed) + 1 == slow_call_at) {
      struct timespec d = {1, 500000000};
      nanosleep(&d, NULL);
   }
}

static void record(uint32_t kind, uint64_t tsc, uint64_t dur, void *addr, uint64_t size,
                   uint64_t aux, uint64_t usable_size, uintptr_t fp)
{
   struct tstate *t = me();
   if (!t)
      return;
   in_hook++;
   if (UNLIKELY(slow_call_at))
      maybe_slow();
   /* The record's time stamp bounds this call and the thread's next
    * ones: an allocation's, taken after the real call, is published only
    * here, and without it a thread seen inside its next allocation would
    * hold the summary back to the last horizon it was seen idle at (with
    * many threads some thread nearly always is, and the summary stalled). */
   atomic_store_explicit(&t->busy_tsc, tsc, memory_order_relaxed);
   uint32_t stack = fp ? intern(t, fp) : 0;
   struct rec *r = reserve(t, sizeof(struct rec));
   if (r) {
      r->tsc = tsc;
      r->addr = (uint64_t)addr;
      r->size = size;
      r->aux = aux;
      r->stack = stack;
      r->dur = dur == UNTIMED ? UNTIMED : dur >= UNTIMED ? UNTIMED - 1 : (uint32_t)dur;
      r->kind = kind;
      uint64_t slack = usable_size > size ? usable_size - size : 0;
      r->pad = slack > 0xffffffffu ? 0xffffffffu : (uint32_t)slack;
      commit(t, sizeof(struct rec));
   }
   atomic_store_explicit(&t->busy, 0, memory_order_release);
   in_hook--;
}

/* Marks the thread as inside a call, before its time stamp is taken
 * (`record` clears the mark once the call is published, `unbusy` when the
 * call is not recorded). A relaxed store: the collector's membarrier makes
 * it visible when it matters (see `summarise`). */
static inline struct tstate *enter_call(void)
{
   struct tstate *t = me();
   if (t) {
      atomic_store_explicit(&t->busy, 1, memory_order_relaxed);
      atomic_signal_fence(memory_order_seq_cst);
   }
   return t;
}

/* Publishes a busy thread's time stamp (a plain store): the summary's
 * horizon need not wait for the call to end. */
static inline void took_time(struct tstate *t, uint64_t tsc)
{
   if (t)
      atomic_store_explicit(&t->busy_tsc, tsc, memory_order_relaxed);
}

/* Clears the mark of `enter_call` for a call that is not recorded. */
static inline void unbusy(void)
{
   struct tstate *t = ts;
   if ((uintptr_t)t > 1)
      atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* The cleanup of a C++ wrapper's frame: a std::bad_alloc that unwinds
 * through it would leave the mark set. */
static void unbusy_at_exit(int *unused)
{
   (void)unused;
   unbusy();
}

/* True when this call should be recorded. */
#define ACTIVE() (LIKELY(enabled) && !in_hook && !atomic_load_explicit(&stopping, memory_order_relaxed))

static inline uint64_t usable(void *p)
{
   return p && real_usable ? real_usable(p) : 0;
}

#define FP() ((uintptr_t)__builtin_frame_address(0))

/* Whether this thread times its current call: true for about one call in
 * dur_mask + 1, by a per-thread 64-bit linear congruential sequence (its
 * top bits are well mixed; a different sequence from any the program
 * uses, so patterns such as alternating malloc and free cannot line up
 * with the sample). Cost: one multiply-add on a TLS word; an untimed call
 * takes one rdtsc (its time stamp) instead of two. */
static inline int timed_now(void)
{
   uint64_t x = tls_rng;
   if (UNLIKELY(!x))
      x = __rdtsc() ^ ((uint64_t)(uintptr_t)&tls_rng << 16) ^ 0x9e3779b97f4a7c15ull;
   x = x * 6364136223846793005ull + 1442695040888963407ull;
   tls_rng = x;
   return ((x >> 40) & dur_mask) == 0;
}

/* Times `call` into t0 (time stamp, before the call) and dur (ticks in the
 * call, or UNTIMED when this call is not in the sample). */
#define TIMED_CALL(call)                                                     \
   do {                                                                      \
      struct tstate *bt_ = enter_call();                                     \
      if (timed_now()) {                                                     \
         t0 = __rdtsc();                                                     \
         took_time(bt_, t0);                                                 \
         call;                                                               \
         dur = __rdtsc() - t0;                                               \
      } else {                                                               \
         t0 = __rdtsc();                                                     \
         took_time(bt_, t0);                                                 \
         call;                                                               \
         dur = UNTIMED;                                                      \
      }                                                                      \
   } while (0)

/* As TIMED_CALL, for a call that returns a block (every allocation but
 * realloc): its time stamp t0 is taken after the call, when the block is
 * the program's. A block freed by one thread and handed out by a call
 * already running on another then takes a later time than its free, so a
 * reader never sees a block allocated before it was freed (with stamps
 * before the calls, about 150 of 20 000 blocks passed between two threads
 * were). The duration of a timed call is measured as in TIMED_CALL. */
#define TIMED_ALLOC(call)                                                    \
   do {                                                                      \
      enter_call();                                                          \
      if (timed_now()) {                                                     \
         uint64_t s_ = __rdtsc();                                            \
         call;                                                               \
         t0 = __rdtsc();                                                     \
         dur = t0 - s_;                                                      \
      } else {                                                               \
         call;                                                               \
         t0 = __rdtsc();                                                     \
         dur = UNTIMED;                                                      \
      }                                                                      \
   } while (0)

/*--------------------------------------------------------------------*/
/*--- The C allocator                                              ---*/
/*--------------------------------------------------------------------*/

/* A one-size allocation (malloc, valloc, pvalloc) through `fn`, timed and
   recorded as `kind`; `fp` is the exported function's frame, whose caller
   the stack walk starts from. Inlined, so the hot path makes no extra call. */
static inline __attribute__((always_inline)) void *sized_alloc(uint32_t kind, malloc_fn fn,
                                                               size_t n, uintptr_t fp)
{
   if (!ACTIVE())
      return fn(n);
   in_hook++;
   uint64_t t0, dur;
   void *p;
   TIMED_ALLOC(p = fn(n));
   uint64_t u = usable(p);
   in_hook--;
   if (p)
      record(kind, t0, dur, p, n, 0, u, fp);
   else
      unbusy();
   return p;
}

EXPORT void *malloc(size_t n)
{
   if (UNLIKELY(!real_malloc)) {
      resolve();
      if (!real_malloc)
         return boot_alloc(n);
   }
   return sized_alloc(K_MALLOC, real_malloc, n, FP());
}

EXPORT void *calloc(size_t k, size_t n)
{
   if (UNLIKELY(!real_calloc)) {
      resolve();
      if (!real_calloc) {
         void *p = boot_alloc(k * n);
         return p; /* the arena is zeroed */
      }
   }
   if (!ACTIVE())
      return real_calloc(k, n);
   in_hook++;
   uint64_t t0, dur;
   void *p;
   TIMED_ALLOC(p = real_calloc(k, n));
   uint64_t u = usable(p);
   in_hook--;
   if (p)
      record(K_CALLOC, t0, dur, p, (uint64_t)k * n, 0, u, FP());
   else
      unbusy();
   return p;
}

EXPORT void *realloc(void *old, size_t n)
{
   if (UNLIKELY(in_boot(old) || !real_realloc)) {
      resolve();
      void *p = malloc(n);
      if (p && old) {
         size_t room = (size_t)(boot_arena + sizeof boot_arena - (char *)old);
         memcpy(p, old, n < room ? n : room);
      }
      return p;
   }
   if (!ACTIVE())
      return real_realloc(old, n);
   in_hook++;
   uint64_t t0, dur;
   void *p;
   TIMED_CALL(p = real_realloc(old, n));
   uint64_t u = usable(p);
   in_hook--;
   if (p || (old && n == 0))
      record(K_REALLOC, t0, dur, p, p ? n : 0, (uint64_t)old, u, FP());
   else
      unbusy();
   return p;
}

EXPORT void free(void *p)
{
   if (UNLIKELY(!p || in_boot(p)))
      return;
   if (UNLIKELY(!real_free))
      resolve();
   if (!ACTIVE()) {
      real_free(p);
      return;
   }
   in_hook++;
   uint64_t t0, dur;
   TIMED_CALL(real_free(p));
   in_hook--;
   record(K_FREE, t0, dur, p, 0, 0, 0, 0);
}

static inline __attribute__((always_inline)) void *aligned_common(memalign_fn fn, size_t al, size_t n, uintptr_t fp)
{
   if (UNLIKELY(!real_malloc))
      resolve();
   if (!ACTIVE())
      return fn(al, n);
   in_hook++;
   uint64_t t0, dur;
   void *p;
   TIMED_ALLOC(p = fn(al, n));
   uint64_t u = usable(p);
   in_hook--;
   if (p)
      record(K_MEMALIGN, t0, dur, p, n, 0, u, fp);
   else
      unbusy();
   return p;
}

EXPORT void *memalign(size_t al, size_t n)
{
   if (UNLIKELY(!real_memalign))
      resolve();
   return aligned_common(real_memalign, al, n, FP());
}

EXPORT void *aligned_alloc(size_t al, size_t n)
{
   if (UNLIKELY(!real_aligned_alloc))
      resolve();
   return aligned_common(real_aligned_alloc, al, n, FP());
}

EXPORT int posix_memalign(void **out, size_t al, size_t n)
{
   if (UNLIKELY(!real_posix_memalign))
      resolve();
   if (!ACTIVE())
      return real_posix_memalign(out, al, n);
   in_hook++;
   uint64_t t0, dur;
   int rc;
   TIMED_ALLOC(rc = real_posix_memalign(out, al, n));
   uint64_t u = rc == 0 ? usable(*out) : 0;
   in_hook--;
   if (rc == 0)
      record(K_MEMALIGN, t0, dur, *out, n, 0, u, FP());
   else
      unbusy();
   return rc;
}

EXPORT void *valloc(size_t n)
{
   if (UNLIKELY(!real_valloc))
      resolve();
   return sized_alloc(K_MEMALIGN, real_valloc, n, FP());
}

EXPORT void *pvalloc(size_t n)
{
   if (UNLIKELY(!real_pvalloc))
      resolve();
   return sized_alloc(K_MEMALIGN, real_pvalloc, n, FP());
}

/*--------------------------------------------------------------------*/
/*--- C++ operator new and delete                                  ---*/
/*--------------------------------------------------------------------*/

/* The real operators live in libstdc++, loaded after this library; each is
 * looked up on first use. With -fexceptions a std::bad_alloc unwinds
 * through the wrapper, and the cleanup handler restores in_hook. */
static void leave_hook(int *unused)
{
   (void)unused;
   in_hook--;
}

typedef void *(*new_fn)(size_t);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void *(*new_nt_fn)(size_t, const void *);
typedef void *(*new_al_nt_fn)(size_t, size_t, const void *);
typedef void (*del_fn)(void *);
typedef void (*del_sz_fn)(void *, size_t);
typedef void (*del_al_fn)(void *, size_t);
typedef void (*del_sz_al_fn)(void *, size_t, size_t);
typedef void (*del_al_nt_fn)(void *, size_t, const void *);

static void *next_sym(void **slot, const char *name)
{
   void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
   if (!f) {
      f = dlsym(RTLD_NEXT, name);
      __atomic_store_n(slot, f, __ATOMIC_RELEASE);
   }
   return f;
}

/* Defines an operator new wrapper: NAME(PARAMS) calls the next NAME with
 * ARGS; SIZE is the requested size. */
#define NEW_WRAPPER(NAME, KIND, TYPE, PARAMS, ARGS, SIZE)                             \
   EXPORT void *NAME PARAMS                                                          \
   {                                                                                 \
      static void *slot;                                                             \
      TYPE f = (TYPE)next_sym(&slot, #NAME);                                         \
      if (!ACTIVE())                                                                 \
         return f ARGS;                                                              \
      void *p;                                                                       \
      uint64_t t0, dur, u;                                                           \
      int busy_guard __attribute__((cleanup(unbusy_at_exit))) = 0;                   \
      (void)busy_guard;                                                              \
      {                                                                              \
         int guard __attribute__((cleanup(leave_hook))) = in_hook++;                 \
         (void)guard;                                                                \
         TIMED_ALLOC(p = f ARGS);                                                    \
         u = usable(p);                                                              \
      }                                                                              \
      if (p)                                                                         \
         record(KIND, t0, dur, p, SIZE, 0, u, FP());                                 \
      return p;                                                                      \
   }

NEW_WRAPPER(_Znwm, K_NEW, new_fn, (size_t n), (n), n)
NEW_WRAPPER(_Znam, K_NEW_ARRAY, new_fn, (size_t n), (n), n)
NEW_WRAPPER(_ZnwmRKSt9nothrow_t, K_NEW, new_nt_fn, (size_t n, const void *nt), (n, nt), n)
NEW_WRAPPER(_ZnamRKSt9nothrow_t, K_NEW_ARRAY, new_nt_fn, (size_t n, const void *nt), (n, nt), n)
NEW_WRAPPER(_ZnwmSt11align_val_t, K_NEW, new_al_fn, (size_t n, size_t al), (n, al), n)
NEW_WRAPPER(_ZnamSt11align_val_t, K_NEW_ARRAY, new_al_fn, (size_t n, size_t al), (n, al), n)
NEW_WRAPPER(_ZnwmSt11align_val_tRKSt9nothrow_t, K_NEW, new_al_nt_fn,
            (size_t n, size_t al, const void *nt), (n, al, nt), n)
NEW_WRAPPER(_ZnamSt11align_val_tRKSt9nothrow_t, K_NEW_ARRAY, new_al_nt_fn,
            (size_t n, size_t al, const void *nt), (n, al, nt), n)

/* Defines an operator delete wrapper. */
#define DELETE_WRAPPER(NAME, KIND, TYPE, PARAMS, ARGS)                                \
   EXPORT void NAME PARAMS                                                           \
   {                                                                                 \
      static void *slot;                                                             \
      TYPE f = (TYPE)next_sym(&slot, #NAME);                                         \
      if (!p)                                                                        \
         return;                                                                     \
      if (!ACTIVE()) {                                                               \
         f ARGS;                                                                     \
         return;                                                                     \
      }                                                                              \
      in_hook++;                                                                     \
      uint64_t t0, dur;                                                              \
      TIMED_CALL(f ARGS);                                                            \
      in_hook--;                                                                     \
      record(KIND, t0, dur, p, 0, 0, 0, 0);                                          \
   }

DELETE_WRAPPER(_ZdlPv, K_DELETE, del_fn, (void *p), (p))
DELETE_WRAPPER(_ZdaPv, K_DELETE_ARRAY, del_fn, (void *p), (p))
DELETE_WRAPPER(_ZdlPvm, K_DELETE, del_sz_fn, (void *p, size_t n), (p, n))
DELETE_WRAPPER(_ZdaPvm, K_DELETE_ARRAY, del_sz_fn, (void *p, size_t n), (p, n))
DELETE_WRAPPER(_ZdlPvSt11align_val_t, K_DELETE, del_al_fn, (void *p, size_t al), (p, al))
DELETE_WRAPPER(_ZdaPvSt11align_val_t, K_DELETE_ARRAY, del_al_fn, (void *p, size_t al), (p, al))
DELETE_WRAPPER(_ZdlPvmSt11align_val_t, K_DELETE, del_sz_al_fn, (void *p, size_t n, size_t al),
               (p, n, al))
DELETE_WRAPPER(_ZdaPvmSt11align_val_t, K_DELETE_ARRAY, del_sz_al_fn,
               (void *p, size_t n, size_t al), (p, n, al))
DELETE_WRAPPER(_ZdlPvRKSt9nothrow_t, K_DELETE, del_sz_fn, (void *p, size_t nt), (p, nt))
DELETE_WRAPPER(_ZdaPvRKSt9nothrow_t, K_DELETE_ARRAY, del_sz_fn, (void *p, size_t nt), (p, nt))
DELETE_WRAPPER(_ZdlPvSt11align_val_tRKSt9nothrow_t, K_DELETE, del_al_nt_fn,
               (void *p, size_t al, const void *nt), (p, al, nt))
DELETE_WRAPPER(_ZdaPvSt11align_val_tRKSt9nothrow_t, K_DELETE_ARRAY, del_al_nt_fn,
               (void *p, size_t al, const void *nt), (p, al, nt))

/*--------------------------------------------------------------------*/
/*--- Threads and pins                                             ---*/
/*--------------------------------------------------------------------*/

struct start_args {
   void *(*fn)(void *);
   void *arg;
};

static void *trampoline(void *p)
{
   struct start_args a = *(struct start_args *)p;
   in_hook++;
   real_free(p);
   in_hook--;
   /* Frames above this one belong to libc's thread start: stop here. */
   tls_stack_hi = FP() + 16;
   void *r = a.fn(a.arg);
   __asm__ volatile("" ::: "memory"); /* keep this frame: no tail call */
   return r;
}

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg)
{
   if (UNLIKELY(!real_pthread_create))
      resolve();
   if (!enabled)
      return real_pthread_create(th, attr, fn, arg);
   in_hook++;
   struct start_args *a = real_malloc(sizeof *a);
   in_hook--;
   if (!a)
      return EAGAIN;
   a->fn = fn;
   a->arg = arg;
   int rc = real_pthread_create(th, attr, trampoline, a);
   if (rc) {
      in_hook++;
      real_free(a);
      in_hook--;
   }
   return rc;
}

/* Called by GL_START (1) and GL_STOP (0) of pins/gleipnir.h. */
EXPORT void mapvis_heap_pin(int start)
{
   if (!ACTIVE())
      return;
   struct tstate *t = enter_call();
   uint64_t tsc = __rdtsc();
   took_time(t, tsc);
   record(K_REGION, tsc, 0, NULL, start ? 1 : 0, 0, 0, 0);
}

/*--------------------------------------------------------------------*/
/*--- The collector: encoding and writing                          ---*/
/*--------------------------------------------------------------------*/

/* Where the put_* functions write: the file's buffer, or a chunk's own
 * buffer while its thread encodes it (`self_encode`), which is sized so
 * that it never fills (ENC_BYTES). */
struct out {
   uint8_t *buf;
   size_t len, cap;
   int file; /* written to out_fd when full */
};
static uint8_t file_bytes[1 << 20];
static struct out file_out = {file_bytes, 0, sizeof file_bytes, 1};
static TLS struct out *out = &file_out;

static void out_flush(void)
{
   if (!out->file)
      return;
   size_t off = 0;
   while (off < out->len) {
      ssize_t w = write(out_fd, out->buf + off, out->len - off);
      if (w < 0 && errno == EINTR)
         continue;
      if (w <= 0)
         break; /* disk full: the reader sees a truncated profile */
      off += (size_t)w;
   }
   out->len = 0;
}

static void need(size_t n)
{
   if (out->len + n > out->cap)
      out_flush();
}

static void put_u8(uint8_t b)
{
   out->buf[out->len++] = b;
}

/* Writes v as a uv at b[n] (room for 10 bytes); returns the end. The
 * length is kept in a register: stores to b could alias a length in
 * memory. */
static inline size_t uv_at(uint8_t *b, size_t n, uint64_t v)
{
   while (v >= 0x80) {
      b[n++] = (uint8_t)(v | 0x80);
      v >>= 7;
   }
   b[n++] = (uint8_t)v;
   return n;
}

/* The sv form of v: zig-zag, so that small negative values stay small. */
static inline uint64_t zigzag(int64_t v)
{
   return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void put_uv(uint64_t v)
{
   out->len = uv_at(out->buf, out->len, v);
}

static void put_str(const char *s, size_t n)
{
   if (n > 4000)
      n = 4000;
   need(n + 16);
   put_uv(n);
   memcpy(out->buf + out->len, s, n);
   out->len += n;
}

/* zstd, looked up at run time (libzstd.so.1), so that building the
 * library needs no zstd headers; without it blocks are stored raw. */
typedef size_t (*zbound_fn)(size_t);
typedef void *(*zcctx_fn)(void);
typedef size_t (*zcompress_fn)(void *, void *, size_t, const void *, size_t, int);
typedef unsigned (*ziserror_fn)(size_t);
static zbound_fn z_bound;
static zcompress_fn z_compress;
static ziserror_fn z_iserror;
static zcctx_fn z_create;
static size_t (*z_free)(void *);
static void *coll_cctx;      /* the collector's context */
static TLS void *z_cctx;     /* the context of the encoding in this thread */
#define ZSTD_LEVEL 1

static void zstd_open(void)
{
   void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
   if (!h)
      return;
   zcctx_fn create = (zcctx_fn)dlsym(h, "ZSTD_createCCtx");
   z_bound = (zbound_fn)dlsym(h, "ZSTD_compressBound");
   z_compress = (zcompress_fn)dlsym(h, "ZSTD_compressCCtx");
   z_iserror = (ziserror_fn)dlsym(h, "ZSTD_isError");
   z_free = (size_t(*)(void *))dlsym(h, "ZSTD_freeCCtx");
   z_create = create && z_bound && z_compress && z_iserror && z_free ? create : NULL;
   z_cctx = coll_cctx = z_create ? z_create() : NULL;
}

/* The calls of one chunk, encoded column by column before compression
 * (each column compresses better alone): tags, time deltas, durations,
 * addresses, (size, slack, stack) slots. A call adds at most 41 bytes to
 * one column and takes 48 bytes in the chunk.
 *
 * The time deltas (format 6) are two bits a call, four calls a byte, the
 * first call in the low bits: 0, 1 or 2 units, or 3 for a delta written
 * as an sv among the escapes (`esc`), which follow the packed bytes in the
 * column. Most deltas are 0 or 1 (calls are tens of ns apart, a unit
 * about 20 ns): a byte a call before, 0.27 bytes after zstd, and zstd took
 * a third of its time for that column; packed, zstd makes 0.19 bytes a
 * call in 40% of the time (docs/PERFORMANCE.md). A chunk holds at most
 * CHUNK_BYTES / 48 calls, an escape takes at most 10 bytes. */
enum { S_TAG, S_TIME, S_DUR, S_ADDR, S_INFO, STREAMS };
#define ESC_BYTES (CHUNK_BYTES / 4u)
struct cols {
   size_t len[STREAMS];
   size_t esc_len;
   uint8_t buf[STREAMS][CHUNK_BYTES];
   uint8_t esc[ESC_BYTES];
};
static struct cols coll_cols;
static TLS struct cols *cols = &coll_cols; /* the encoding's in this thread */

static void c_uv(struct cols *k, int s, uint64_t v)
{
   k->len[s] = uv_at(k->buf[s], k->len[s], v);
}

static void c_sv(struct cols *k, int s, int64_t v)
{
   c_uv(k, s, zigzag(v));
}

/* Packs call `i`'s time delta `dt` (units, never negative in practice;
 * a wrapped one is an escape like any delta from 3 up). */
static void c_time(struct cols *k, size_t i, uint64_t dt)
{
   unsigned code = dt < 3 ? (unsigned)dt : 3u;
   uint8_t *b = &k->buf[S_TIME][i / 4];
   if (i % 4 == 0)
      *b = (uint8_t)code;
   else
      *b |= (uint8_t)(code << (2 * (i % 4)));
   if (code == 3)
      k->esc_len = uv_at(k->esc, k->esc_len, zigzag((int64_t)dt));
}

static uint32_t amap_slot(uint64_t addr)
{
   return (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 40) & (AMAP_SLOTS - 1);
}

/* Encodes a freed block's address: as the number of the thread's
 * allocations since the one that returned it (flag 0x20 on `tag_at`),
 * else as a delta from the last literal address. */
static void c_freed_addr(struct tstate *t, struct cols *k, size_t tag_at, uint64_t addr)
{
   struct amap_slot *m = &t->coll_amap[amap_slot(addr)];
   if (addr && m->addr == addr && t->coll_seq - m->seq <= AGE_RING) {
      k->buf[S_TAG][tag_at] |= 0x20;
      c_uv(k, S_ADDR, t->coll_seq - m->seq - 1);
   } else {
      c_sv(k, S_ADDR, (int64_t)(addr - t->coll_addr));
      if (addr)
         t->coll_addr = addr;
   }
   t->coll_freed_nr++;
   if (addr) {
      if (m->addr == addr)
         m->addr = 0; /* no longer an allocation to refer to */
      struct amap_slot *f = &t->coll_fmap[amap_slot(addr)];
      f->addr = addr;
      f->seq = t->coll_freed_nr;
   }
}

/* Encodes a returned block's address: as the number of the thread's frees
 * since the one that freed that address (flag 0x20), else as a delta. */
static void c_new_addr(struct tstate *t, struct cols *k, size_t tag_at, uint64_t addr)
{
   struct amap_slot *f = &t->coll_fmap[amap_slot(addr)];
   if (f->addr == addr && t->coll_freed_nr - f->seq < FREED_RING) {
      k->buf[S_TAG][tag_at] |= 0x20;
      c_uv(k, S_ADDR, t->coll_freed_nr - f->seq);
   } else {
      c_sv(k, S_ADDR, (int64_t)(addr - t->coll_addr));
      t->coll_addr = addr;
   }
   if (f->addr == addr)
      f->addr = 0;
   struct amap_slot *m = &t->coll_amap[amap_slot(addr)];
   m->addr = addr;
   m->seq = t->coll_seq++;
}

/* Encodes (size, slack, stack) as its number in the thread's dictionary,
 * defining the next number (flag 0x40) when it is not there. Numbers are
 * given in turn, modulo INFO_IDS (a new entry replaces the oldest), so the
 * common ones are small; a direct-mapped cache finds them. */
static void c_info(struct tstate *t, struct cols *k, size_t tag_at, const struct rec *r)
{
   uint64_t h = (r->size * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)r->stack * 0xff51afd7ed558ccdull) ^
                ((uint64_t)r->pad * 0xc4ceb9fe1a85ec53ull);
   uint32_t *slot = &t->coll_info_cache[(uint32_t)(h >> 40) & (INFO_SLOTS - 1)];
   struct info_slot *i = &t->coll_info[*slot];
   if (i->used && i->size == r->size && i->slack == r->pad && i->stack == r->stack) {
      c_uv(k, S_INFO, *slot);
      return;
   }
   uint32_t id = t->coll_info_next++ % INFO_IDS;
   i = &t->coll_info[id];
   *slot = id;
   k->buf[S_TAG][tag_at] |= 0x40;
   c_uv(k, S_INFO, r->size);
   c_uv(k, S_INFO, r->pad);
   c_uv(k, S_INFO, r->stack);
   i->used = 1;
   i->size = r->size;
   i->slack = r->pad;
   i->stack = r->stack;
}

/* The time unit of a call or mark at `tsc`, never before `least`. */
static uint64_t c_unit(uint64_t tsc, uint64_t least)
{
   uint64_t u = tsc >> TICK_SHIFT;
   return u < least ? least : u;
}

/* Encodes one call into the columns. */
static void c_call(struct tstate *t, struct cols *k, const struct rec *r)
{
   uint64_t u = c_unit(r->tsc, t->coll_floor);
   size_t tag_at = k->len[S_TAG]++;
   k->buf[S_TAG][tag_at] = (uint8_t)r->kind;
   c_time(k, tag_at, u - t->coll_tsc);
   t->coll_tsc = t->coll_floor = u;
   if (r->dur != UNTIMED) {
      k->buf[S_TAG][tag_at] |= T_TIMED;
      c_uv(k, S_DUR, ((uint64_t)r->dur + (1u << (DUR_SHIFT - 1))) >> DUR_SHIFT);
   }
   if (r->kind >= K_FREE) {
      c_freed_addr(t, k, tag_at, r->addr);
   } else if (r->kind == K_REALLOC) {
      c_uv(k, S_ADDR, r->addr ? 1 : 0);
      if (r->addr) {
         c_new_addr(t, k, tag_at, r->addr);
         c_sv(k, S_ADDR, (int64_t)(r->aux - r->addr));
      } else {
         c_uv(k, S_ADDR, r->aux);
      }
      c_info(t, k, tag_at, r);
   } else {
      c_new_addr(t, k, tag_at, r->addr);
      c_info(t, k, tag_at, r);
   }
}

/* Writes a stack record (top level). */
static void put_frames(uint32_t id, const uint64_t *frames, uint64_t n)
{
   need(32 + n * 10);
   put_uv(R_STACK);
   put_uv(id);
   put_uv(n);
   for (uint64_t i = 0; i < n; i++)
      put_uv(frames[i]);
}

static void put_stack(const struct rec *r)
{
   put_frames(r->stack, (const uint64_t *)(r + 1), r->size);
}

/* Writes a region mark (top level) at a time unit that keeps it on the
 * right side of the thread's calls: calls before a GL_START take earlier
 * units, calls after it the same or later; calls after a GL_STOP later. */
static void put_region_at(uint32_t tid, uint64_t u, int start)
{
   need(32);
   put_uv(R_REGION_AT);
   put_uv(tid);
   put_uv(u << TICK_SHIFT);
   put_u8((uint8_t)start);
}

static void put_region(struct tstate *t, const struct rec *r)
{
   uint64_t u = c_unit(r->tsc, r->size ? t->coll_tsc + 1 : t->coll_tsc);
   t->coll_floor = r->size ? u : u + 1;
   put_region_at(t->tid, u, (int)r->size);
}

/* Appends one column to out->buf: raw length uv, codec u8 (0 stored, 1 zstd),
 * length uv, bytes. */
static size_t column_room(int s)
{
   return 32 + (z_cctx ? z_bound(cols->len[s]) : cols->len[s]);
}

/* Appends column `s`; out->buf has column_room(s) bytes free. */
static void put_column(int s)
{
   size_t room = column_room(s) - 32;
   put_uv(cols->len[s]);
   size_t codec_at = out->len++;
   size_t n = 0;
   /* Compress into the space after a maximal length field, then move. */
   size_t data_at = out->len + 10;
   if (z_cctx && cols->len[s] >= 64) {
      n = z_compress(z_cctx, out->buf + data_at, room, cols->buf[s], cols->len[s], ZSTD_LEVEL);
      if (z_iserror(n) || n >= cols->len[s])
         n = 0;
   }
   out->buf[codec_at] = n ? 1 : 0;
   if (!n) {
      n = cols->len[s];
      memcpy(out->buf + data_at, cols->buf[s], n);
   }
   put_uv(n);
   memmove(out->buf + out->len, out->buf + data_at, n);
   out->len += n;
}

/* Encodes one chunk: its stacks and region marks as top-level records,
 * its calls as one ZCHUNK block of columns whose byte length comes first,
 * so a reader can skip it. */
static void encode_chunk(struct tstate *t, const struct chunk *c)
{
   if (!t->coll_amap) {
      t->coll_amap = map_pages(AMAP_SLOTS * sizeof(struct amap_slot));
      t->coll_fmap = map_pages(AMAP_SLOTS * sizeof(struct amap_slot));
      t->coll_info = map_pages(INFO_IDS * sizeof(struct info_slot));
      t->coll_info_cache = map_pages(INFO_SLOTS * sizeof(uint32_t));
      if (!t->coll_amap || !t->coll_fmap || !t->coll_info || !t->coll_info_cache)
         return;
   }
   /* In a local: the columns' byte stores could alias the TLS pointer. */
   struct cols *k = cols;
   memset(k->len, 0, sizeof k->len);
   k->esc_len = 0;
   uint32_t off = 0;
   while (off + sizeof(struct rec) <= c->final_used) {
      const struct rec *r = (const struct rec *)(c->data + off);
      off += sizeof(struct rec);
      if (r->kind == K_STACK) {
         put_stack(r);
         off += (uint32_t)r->size * 8;
      } else if (r->kind == K_REGION) {
         put_region(t, r);
      } else {
         c_call(t, k, r);
      }
   }
   if (!k->len[S_TAG])
      return;
   k->len[S_TIME] = (k->len[S_TAG] + 3) / 4;
   memcpy(k->buf[S_TIME] + k->len[S_TIME], k->esc, k->esc_len);
   k->len[S_TIME] += k->esc_len;
   size_t room = 64;
   for (int s = 0; s < STREAMS; s++)
      room += column_room(s);
   need(room);
   put_uv(R_ZCHUNK);
   put_uv(t->tid);
   put_uv(t->os_tid);
   put_uv(cols->len[S_TAG]);
   size_t len_at = out->len;
   out->len += 4;
   size_t body = out->len;
   for (int s = 0; s < STREAMS; s++)
      put_column(s);
   uint32_t n = (uint32_t)(out->len - body);
   memcpy(out->buf + len_at, &n, 4); /* little-endian (x86-64 only) */
}

/*--------------------------------------------------------------------*/
/*--- Threads that encode their own chunks                         ---*/
/*--------------------------------------------------------------------*/

/* When at least as many threads allocate as the process has CPUs, the
 * collector limits the rate: threads whose rings are full sleep while it
 * encodes and summarises, and a CPU stays idle. The threads then
 * encode their own chunks (`help`): before handing a chunk over, a thread
 * encodes it, and any of its handed-over chunks the collector has not
 * encoded yet, into each chunk's own buffer; the collector copies those
 * bytes to the file in the usual order. The profile is byte for byte the
 * one the collector would have written: the encoding state (the coll_*
 * fields) is one per thread, taken by whoever holds the thread's
 * `enc_lock`, and chunks are encoded in their order (`enc_next`). With a
 * CPU to spare a thread would only be slower, so `help` is off then.
 *
 * Measured on 2 CPUs (scripts/alloc_bench.c, 5 000 000 pairs a thread,
 * interleaved runs, medians; docs/PERFORMANCE.md): at 4 threads the
 * recording went from 2.75 to 2.54 s and from 3.38 to 2.95 s in two
 * rounds of 10, `heap_profile; alloc_sites 5` from 2.63 to 2.49 s. At 2
 * threads (as many as the CPUs) it made no difference beyond noise while
 * the collector only encoded; since it also keeps the summary (format 5)
 * it is the busiest thread there, and the recording went from 0.642 to
 * 0.609 s (10 interleaved pairs, 9 faster). So `help` takes as many
 * threads as CPUs, from 2 CPUs: with 1 CPU the collector's thread
 * would only be interrupted more.
 *
 * A thread encodes while it is inside a call, so the summary waits on it:
 * once for up to its whole ring (RING chunks, about 13 ms) when it takes
 * over, then one chunk (about 0.2 ms) at a time.
 *
 * ENC_BYTES bounds what one chunk encodes to: a stack record of n frames
 * (48 + 8n bytes in the chunk) writes at most 7 + 10n, a region mark (48)
 * at most 17, and a call (48) at most 57 bytes over all its columns, which
 * zstd's bound grows by under 1% and 64 bytes a column: at most 1.26
 * times the chunk, plus 64 + 5 * 32 of framing. */
#define ENC_BYTES (2u * CHUNK_BYTES + 4096u)

static _Atomic int help;  /* set by the collector (`judge_help`) */
static unsigned cpus = 1; /* CPUs the process may run on */
/* MAPVIS_HEAP_ENCODER, for tests and measurements: "threads" keeps
 * `help` on, "collector" off, "alternate" turns it over at every
 * `judge_help` (so that the encoding state changes hands often), and each
 * reports at exit on stderr how many chunks the threads and the collector
 * encoded; unset (or anything else), `judge_help` decides. */
enum { ENC_AUTO, ENC_BY_THREADS, ENC_BY_COLLECTOR, ENC_ALTERNATE };
static int encoder_mode;
static _Atomic uint64_t chunks_by_threads;
static uint64_t chunks_by_collector;

/* Takes the thread's encoding lock if it is free. */
static int enc_try(struct tstate *t)
{
   return !atomic_exchange_explicit(&t->enc_lock, 1, memory_order_acquire);
}

/* Takes the lock for the exit, waiting for the thread to finish encoding
 * (it never waits while it holds the lock); 0 when the exiting thread
 * itself holds it (it was interrupted inside `self_encode`). */
static int enc_take_at_exit(struct tstate *t, struct tstate *self)
{
   while (!enc_try(t)) {
      if (t == self)
         return 0;
      sched_yield();
   }
   return 1;
}

static void enc_release(struct tstate *t)
{
   atomic_store_explicit(&t->enc_lock, 0, memory_order_release);
}

/* Encodes chunk `c`, the thread's next to encode, into the chunk's own
 * buffer (the thread, holding its encoding lock); 0 when there is no
 * memory for the buffer. */
static int encode_own(struct tstate *t, struct chunk *c)
{
   if (!c->enc && !(c->enc = map_pages(ENC_BYTES)))
      return 0;
   struct out o = {c->enc, 0, ENC_BYTES, 0};
   struct out *saved_out = out;
   struct cols *saved_cols = cols;
   void *saved_cctx = z_cctx;
   out = &o;
   cols = t->own_cols;
   z_cctx = t->own_cctx;
   c->final_used = atomic_load_explicit(&c->used, memory_order_relaxed);
   encode_chunk(t, c);
   out = saved_out;
   cols = saved_cols;
   z_cctx = saved_cctx;
   c->enc_len = (uint32_t)o.len;
   t->enc_next = c->seq + 1;
   atomic_store_explicit(&c->pre, 1, memory_order_release);
   atomic_fetch_add_explicit(&chunks_by_threads, 1, memory_order_relaxed);
   return 1;
}

/* Before the thread hands `cur` over, while `help` is on: encodes its
 * handed-over chunks the collector has not encoded yet, then `cur`. A
 * chunk numbered s sits at s % RING in the ring, and the collector takes
 * no chunk before it is encoded, so those from enc_next to full_head - 1
 * are still there. */
static void self_encode(struct tstate *t, struct chunk *cur)
{
   if (!keep_calls || !atomic_load_explicit(&help, memory_order_relaxed) ||
       atomic_load_explicit(&stopping, memory_order_relaxed))
      return;
   if (!t->own_cols && !(t->own_cols = map_pages(sizeof *t->own_cols)))
      return;
   if (z_create && !t->own_cctx)
      t->own_cctx = z_create(); /* its allocations pass through: in_hook is set */
   if (!enc_try(t))
      return;
   uint32_t head = atomic_load_explicit(&t->full_head, memory_order_relaxed);
   /* `stopping` again: the exit takes every lock once it is set. */
   if (!atomic_load(&stopping)) {
      while (t->enc_next != head && encode_own(t, t->full[t->enc_next % RING]))
         ;
      if (t->enc_next == cur->seq)
         encode_own(t, cur);
   }
   enc_release(t);
}

/* Writes a chunk its thread encoded (collector). */
static void copy_encoded(const struct chunk *c)
{
   need(c->enc_len);
   memcpy(out->buf + out->len, c->enc, c->enc_len);
   out->len += c->enc_len;
}

/* Frees an exiting thread's encoder (its chunks keep their buffers). */
static void drop_own_encoder(struct tstate *t)
{
   if (t->own_cctx)
      z_free(t->own_cctx);
   if (t->own_cols)
      munmap(t->own_cols, sizeof *t->own_cols);
   t->own_cctx = NULL;
   t->own_cols = NULL;
}

/* Sets `help` (collector, every 20 ms: `judge_soon`): on while the
 * threads that handed over a chunk in the window are as many as the CPUs
 * (more than 1) or more. */
static void judge_help(void)
{
   unsigned active = 0;
   for (struct tstate *t = atomic_load(&all_threads); t; t = t->next_all) {
      uint32_t head = atomic_load_explicit(&t->full_head, memory_order_relaxed);
      active += head != t->coll_seen_head;
      t->coll_seen_head = head;
   }
   int on = cpus > 1 ? active >= cpus : active > cpus;
   if (encoder_mode == ENC_ALTERNATE)
      on = !atomic_load_explicit(&help, memory_order_relaxed);
   else if (encoder_mode != ENC_AUTO)
      on = encoder_mode == ENC_BY_THREADS;
   atomic_store_explicit(&help, on, memory_order_relaxed);
}

/* Calls judge_help when 20 ms have passed, looking at the clock once in
 * 4096 calls (the collector may spend long in one merge). */
static void judge_soon(int now_too)
{
   static uint64_t next_judge, ticks;
   if (!now_too && (++ticks & 4095))
      return;
   uint64_t now = mono_ns();
   if (now >= next_judge) {
      judge_help();
      next_judge = now + 20000000u;
   }
}

/*--------------------------------------------------------------------*/
/*--- The summary: what heap_profile and alloc_sites report        ---*/
/*--------------------------------------------------------------------*/

/* The collector also summarises the calls as they come (the SUMMARY
 * record of docs/heap-profile-format.md), so that reading the profile's
 * summary costs nothing per call. It takes every thread's calls in the
 * reader's order, (time unit, thread number), and keeps what the reader's
 * one pass keeps (filter/heap.rs, HeapReport::build): the live blocks by
 * address, per-site and per-size-class counts, the peak of live bytes,
 * temporaries, and duration histograms.
 *
 * The order is exact, not a guess. A thread's records are read as soon as
 * they are published (`commit`), from its queued chunks and its current
 * one. A call's time stamp is taken after the thread sets `busy` and its
 * record is published before `busy` is cleared, so at a horizon H (a time
 * stamp the collector takes, followed by a membarrier(2) that makes every
 * thread's earlier stores visible) a thread seen idle makes no call below
 * H later; a thread seen busy makes none below the horizon it was last
 * seen idle at. Calls below the least of these bounds are taken in order.
 * Without membarrier, or when the summary cannot keep up (more than
 * SUM_MAX_PENDING chunks waiting: a thread stuck inside the allocator),
 * or when it runs out of memory, no summary is written and the reader
 * takes its one pass over the calls instead. */

#define SUM_MAX_PENDING 512u /* chunks (128 MiB) waiting for the summary */
#define SUM_SOFT 32u         /* above this many, threads wait on their rings */
/* ... for this long at most: then no summary. A thread can hold the
 * horizon that long without being stuck: inside the allocator waiting for
 * an arena's lock, or not scheduled. With 64 threads of alloc_bench and 3
 * busy loops on 2 CPUs the longest wait without progress was 84 to 454
 * ms (30 runs), and 200 ms, the bound before, lost the summary in 13 of
 * them; a lost summary costs the reader a pass over every call. */
#define SUM_STALL_NS 1000000000u
#define SIZE_CLASSES 18
#define DUR_EXACT 1024u
#define DUR_SUB 64u
#define DUR_BUCKETS (DUR_EXACT + (32u - 10u) * DUR_SUB)

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)
#endif

struct live_slot {
   uint64_t addr; /* 0: empty */
   uint64_t size;
   uint64_t unit; /* of its allocation, for its lifetime */
   uint32_t site;
};

struct site_sum {
   uint64_t allocs, bytes, peak, live, live_blocks, temporary, in_region;
   /* Its live bytes at the latest peak of the total: `at_peak` holds
    * them when `peak_epoch` is the current one, else `live` does (the
    * site did not change since). O(1) a call, whatever the sites. */
   uint64_t at_peak, peak_epoch;
   /* Its live-heap series: points pts_off .. pts_off + pts_n in `ser_pool`. */
   uint64_t pts_off;
   uint32_t pts_n, pts_cap;
};

/* Durations of one group (a size class or a thread, alloc or free), in
 * the file's duration units: the histogram of filter/heap.rs's DurHist,
 * on units instead of nanoseconds. */
struct dur_group {
   uint64_t calls, n;
   uint32_t max;
   uint64_t *counts; /* DUR_BUCKETS, mapped on the first timed call */
};

struct class_sum {
   uint64_t allocs, bytes, usable, frees;
};

static int sum_ok;         /* the summary is being kept */
static int sum_final;      /* at exit: every chunk is drained */
static uint64_t sum_merged; /* calls and marks taken so far */
static uint64_t sum_epoch;  /* horizons taken */
static uint32_t sum_pending; /* chunks waiting for it */
static struct live_slot *live_tab;
static uint64_t live_cap, live_used;
static struct site_sum *sites;
static uint64_t sites_cap;
static uint32_t *canon;     /* stack id -> the first id with the same frames */
static uint64_t canon_cap;
static struct idtab first_ids; /* frame hash -> the first id with those frames */
static uint64_t *stack_at; /* first id -> offset of [n, frames...] in frame_pool */
static uint64_t stack_at_cap;
static uint64_t *frame_pool;
static uint64_t frame_pool_len, frame_pool_cap;
static struct class_sum classes[SIZE_CLASSES];
static struct dur_group class_durs[SIZE_CLASSES + 1][2];
static struct dur_group *thread_durs; /* [tid][op] */
static uint64_t thread_durs_cap;
static uint64_t *last_alloc; /* by thread number */
static uint64_t last_alloc_cap;
static uint64_t s_allocs, s_frees, s_bytes, s_peak, s_peak_unit, s_total_live, s_temporary,
    s_unknown_frees, s_region_allocs;
static uint32_t s_threads;
static int reg_open, reg_closed;
static uint64_t reg_open_start, reg_last_start, reg_last_end;
static uint64_t s_peak_epoch = 1; /* bumped at every new peak (site_sum.at_peak) */
static uint64_t s_last_unit;      /* of the latest call taken */
static uint64_t s_late;           /* calls taken below s_last_unit (`sum_lax`) */
static uint64_t s_upto;           /* every call below this unit is taken */
static int sum_lax; /* one merge without busy threads' bounds (stalled, no calls) */

static void sum_fail(void)
{
   sum_ok = 0;
}

/* Grows the mapped array *p of *cap elements of `size` bytes to hold
 * index `need`; 0 when out of memory. */
static int grow_slow(void **p, uint64_t *cap, uint64_t need, size_t size)
{
   uint64_t n = *cap ? *cap : 64;
   while (n <= need)
      n *= 2;
   void *q = map_pages(n * size);
   if (!q)
      return 0;
   if (*p) {
      memcpy(q, *p, *cap * size);
      munmap(*p, *cap * size);
   }
   *p = q;
   *cap = n;
   return 1;
}

static inline int grow(void **p, uint64_t *cap, uint64_t need, size_t size)
{
   return LIKELY(need < *cap) || grow_slow(p, cap, need, size);
}

static unsigned live_shift = 64; /* 64 - log2(live_cap) */

/* Fibonacci hashing: the top bits of the product, which mix every bit of
 * the address (its low bits are mostly alignment). */
static uint64_t live_hash(uint64_t addr)
{
   return (addr * 0x9e3779b97f4a7c15ull) >> live_shift;
}

static int live_grow(void)
{
   uint64_t cap = live_cap ? live_cap * 2 : 1024;
   struct live_slot *t = map_pages(cap * sizeof *t);
   if (!t)
      return 0;
   live_shift = 64u - (unsigned)__builtin_ctzll(cap);
   for (uint64_t i = 0; i < live_cap; i++) {
      if (!live_tab[i].addr)
         continue;
      uint64_t j = live_hash(live_tab[i].addr) & (cap - 1);
      while (t[j].addr)
         j = (j + 1) & (cap - 1);
      t[j] = live_tab[i];
   }
   if (live_tab)
      munmap(live_tab, live_cap * sizeof *live_tab);
   live_tab = t;
   live_cap = cap;
   return 1;
}

/* Removes the live block at `addr` into *out; 0 when there is none.
 * Linear probing with backward-shift deletion: no tombstones. */
static int live_remove(uint64_t addr, struct live_slot *out)
{
   if (!live_cap || !addr)
      return 0;
   uint64_t mask = live_cap - 1, i = live_hash(addr) & mask;
   while (live_tab[i].addr != addr) {
      if (!live_tab[i].addr)
         return 0;
      i = (i + 1) & mask;
   }
   *out = live_tab[i];
   for (uint64_t j = (i + 1) & mask;; j = (j + 1) & mask) {
      if (!live_tab[j].addr)
         break;
      uint64_t home = live_hash(live_tab[j].addr) & mask;
      /* Move j into the hole at i unless its home lies in (i, j]. */
      if (((j - home) & mask) >= ((j - i) & mask)) {
         live_tab[i] = live_tab[j];
         i = j;
      }
   }
   live_tab[i].addr = 0;
   live_used--;
   return 1;
}

/* Inserts a live block; returns the block it replaced at that address
 * (addr 0: none) in *old. */
static int live_insert(uint64_t addr, uint64_t size, uint64_t unit, uint32_t site,
                       struct live_slot *old)
{
   old->addr = 0;
   if ((live_used + 1) * 2 > live_cap && !live_grow())
      return 0;
   uint64_t mask = live_cap - 1, i = live_hash(addr) & mask;
   while (live_tab[i].addr && live_tab[i].addr != addr)
      i = (i + 1) & mask;
   if (live_tab[i].addr)
      *old = live_tab[i];
   else
      live_used++;
   live_tab[i].addr = addr;
   live_tab[i].size = size;
   live_tab[i].unit = unit;
   live_tab[i].site = site;
   return 1;
}

/*--- The live-heap series and the lifetimes (format 7) ---------------*/

/* The series: SER_BUCKETS buckets of 2^ser_w time units from `ser_base`;
 * when a call falls beyond them, every two become one (`ser_halve`), so a
 * run longer than SER_BUCKETS units keeps between half and all of them.
 * Per site, a point (bucket, live bytes after the bucket's last call of
 * the site) for each bucket in which the site changed, in `ser_pool`:
 * memory is at most SER_BUCKETS points a site, and SER_POINTS over all
 * sites before the series halves early (coarser, never wrong). Points
 * that moved when a site's array grew are reclaimed (`ser_compact`), so
 * the pool stays within about four times the points. */
#define SER_BUCKETS 2048u
#define SER_POINTS (1u << 20)
#define SER_NONE UINT64_MAX
struct ser_pt {
   uint64_t live;
   uint32_t bucket;
} __attribute__((packed));
static uint32_t ser_w;
static uint64_t ser_base;             /* tsc0 >> TICK_SHIFT */
static uint64_t ser_cur = SER_NONE;   /* bucket of the latest call */
static uint64_t ser_total[SER_BUCKETS], ser_high[SER_BUCKETS];
static uint8_t ser_touched[SER_BUCKETS];
static struct ser_pt *ser_pool;
static uint64_t ser_pool_cap, ser_pool_len, ser_points;

/* Lifetimes of freed blocks in time units: exact below 512, then 512
 * buckets a power of two, each under 0.2% wide (docs/heap-profile-format.md):
 * a histogram binned later by shares of the run (`lifetime_histogram`)
 * has few buckets straddling its bins' edges. 229 KB. */
#define LIFE_BUCKETS (512u + 55u * 512u)
static uint64_t life_counts[LIFE_BUCKETS];

static uint32_t life_bucket(uint64_t l)
{
   if (l < 512)
      return (uint32_t)l;
   unsigned o = 63u - (unsigned)__builtin_clzll(l);
   return 512u + (o - 9u) * 512u + (uint32_t)((l >> (o - 9u)) & 511u);
}

/* Every two buckets become one; each site's points follow. */
static void ser_halve(void)
{
   for (uint32_t i = 0; i < SER_BUCKETS / 2; i++) {
      uint32_t a = 2 * i, b = 2 * i + 1;
      uint64_t ha = ser_touched[a] ? ser_high[a] : 0, hb = ser_touched[b] ? ser_high[b] : 0;
      ser_touched[i] = ser_touched[a] | ser_touched[b];
      ser_total[i] = ser_touched[b] ? ser_total[b] : ser_total[a];
      ser_high[i] = ha > hb ? ha : hb;
   }
   memset(ser_touched + SER_BUCKETS / 2, 0, SER_BUCKETS / 2);
   ser_w++;
   if (ser_cur != SER_NONE)
      ser_cur >>= 1;
   ser_points = 0;
   for (uint64_t i = 0; i < sites_cap; i++) {
      struct site_sum *st = &sites[i];
      struct ser_pt *p = ser_pool + st->pts_off;
      uint32_t k = 0;
      for (uint32_t j = 0; j < st->pts_n; j++) {
         uint32_t nb = p[j].bucket >> 1;
         if (k && p[k - 1].bucket == nb) {
            p[k - 1].live = p[j].live;
         } else {
            p[k].bucket = nb;
            p[k].live = p[j].live;
            k++;
         }
      }
      st->pts_n = k;
      ser_points += k;
   }
}

/* The bucket of unit u, halving the series until it has one, or while
 * the points are over their budget (which doubles when halving cannot
 * bring them under half of it: more sites than the budget). */
static uint64_t ser_bucket(uint64_t u)
{
   static uint64_t budget = SER_POINTS;
   uint64_t rel = u > ser_base ? u - ser_base : 0;
   while ((rel >> ser_w) >= SER_BUCKETS)
      ser_halve();
   if (UNLIKELY(ser_points > budget)) {
      ser_halve();
      if (ser_points > budget / 2)
         budget *= 2;
   }
   uint64_t b = rel >> ser_w;
   return ser_cur != SER_NONE && b < ser_cur ? ser_cur : b; /* a late call */
}

/* Moves every site's points to a new pool without the space left by
 * arrays that grew; 0 when out of memory. */
static int ser_compact(void)
{
   uint64_t need = 0;
   for (uint64_t i = 0; i < sites_cap; i++)
      need += sites[i].pts_n ? sites[i].pts_n + 4u : 0;
   uint64_t cap = 2 * need + 4096;
   struct ser_pt *np = map_pages(cap * sizeof *np);
   if (!np)
      return 0;
   uint64_t len = 0;
   for (uint64_t i = 0; i < sites_cap; i++) {
      struct site_sum *st = &sites[i];
      if (!st->pts_n) {
         st->pts_cap = 0;
         continue;
      }
      memcpy(np + len, ser_pool + st->pts_off, st->pts_n * sizeof *np);
      st->pts_off = len;
      st->pts_cap = st->pts_n + 4u;
      len += st->pts_cap;
   }
   munmap(ser_pool, ser_pool_cap * sizeof *ser_pool);
   ser_pool = np;
   ser_pool_cap = cap;
   ser_pool_len = len;
   return 1;
}

/* Gives site `st` room for one more point; 0 when out of memory. */
static int ser_room(struct site_sum *st)
{
   if (st->pts_n < st->pts_cap)
      return 1;
   uint32_t cap = st->pts_cap ? st->pts_cap * 2 : 4;
   if (ser_pool_len + cap > ser_pool_cap && ser_pool_len > 2 * ser_points + 4096) {
      if (!ser_compact())
         return 0;
      if (st->pts_n < st->pts_cap)
         return 1;
   }
   if (!grow((void **)&ser_pool, &ser_pool_cap, ser_pool_len + cap, sizeof *ser_pool))
      return 0;
   memcpy(ser_pool + ser_pool_len, ser_pool + st->pts_off, st->pts_n * sizeof *ser_pool);
   st->pts_off = ser_pool_len;
   st->pts_cap = cap;
   ser_pool_len += cap;
   return 1;
}

/* Notes site `st`'s live bytes after a call in bucket `b`; 0 when out of
 * memory. */
static int ser_site(struct site_sum *st, uint32_t b)
{
   struct ser_pt *p = ser_pool + st->pts_off;
   if (st->pts_n && p[st->pts_n - 1].bucket == b) {
      p[st->pts_n - 1].live = st->live;
      return 1;
   }
   if (!ser_room(st))
      return 0;
   p = ser_pool + st->pts_off;
   p[st->pts_n].bucket = b;
   p[st->pts_n].live = st->live;
   st->pts_n++;
   ser_points++;
   return 1;
}

/* Before site `s` changes: keeps its value at the latest peak. */
static inline void site_changing(struct site_sum *st)
{
   if (st->peak_epoch != s_peak_epoch) {
      st->at_peak = st->live;
      st->peak_epoch = s_peak_epoch;
   }
}

/* Notes stack `id` with `n` frames: stacks with the same frames (interned
 * apart by different threads) count as one site, as the reader merges
 * them. */
static void sum_stack(uint32_t id, const uint64_t *frames, uint32_t n)
{
   if (!grow((void **)&canon, &canon_cap, id, sizeof *canon) ||
       !grow((void **)&stack_at, &stack_at_cap, id, sizeof *stack_at)) {
      sum_fail();
      return;
   }
   /* No frame walked: the reader's empty stack, as calls without one. */
   canon[id] = n ? id : 0;
   if (!n)
      return;
   struct idtab *m = &first_ids;
   if (!m->cap && !idtab_grow(m, 1024)) {
      sum_fail();
      return;
   }
   uint64_t h = hash_frames(frames, n);
   uint32_t mask = m->cap - 1, j = (uint32_t)h & mask;
   for (; m->keys[j]; j = (j + 1) & mask) {
      if (m->keys[j] != h)
         continue;
      const uint64_t *f = frame_pool + stack_at[m->ids[j]];
      if (f[0] == n && memcmp(f + 1, frames, n * 8) == 0) {
         canon[id] = m->ids[j];
         return;
      }
   }
   if (!grow((void **)&frame_pool, &frame_pool_cap, frame_pool_len + n + 1, 8)) {
      sum_fail();
      return;
   }
   stack_at[id] = frame_pool_len;
   frame_pool[frame_pool_len] = n;
   memcpy(frame_pool + frame_pool_len + 1, frames, n * 8);
   frame_pool_len += n + 1;
   idtab_put(m, j, h, id);
   if (!keep_calls)
      put_frames(id, frames, n); /* the sites' stacks, before a summary names them */
}

static uint32_t dur_bucket(uint32_t d)
{
   if (d < DUR_EXACT)
      return d;
   uint32_t e = 31u - (uint32_t)__builtin_clz(d); /* 10..31 */
   uint32_t sub = (d >> (e - 6)) & (DUR_SUB - 1);
   return DUR_EXACT + (e - 10) * DUR_SUB + sub;
}

/* Counts one call of group g, with its duration in units when timed. */
static void dur_add(struct dur_group *g, uint32_t dur_ticks)
{
   g->calls++;
   if (dur_ticks == UNTIMED)
      return;
   uint32_t d = (uint32_t)(((uint64_t)dur_ticks + (1u << (DUR_SHIFT - 1))) >> DUR_SHIFT);
   if (!g->counts) {
      g->counts = map_pages(DUR_BUCKETS * sizeof(uint64_t));
      if (!g->counts) {
         sum_fail();
         return;
      }
   }
   g->counts[dur_bucket(d)]++;
   g->n++;
   if (d > g->max)
      g->max = d;
}

static void durs_add(int class, uint32_t tid, int op, uint32_t dur)
{
   if (!grow((void **)&thread_durs, &thread_durs_cap, (uint64_t)tid * 2 + 1, sizeof *thread_durs)) {
      sum_fail();
      return;
   }
   dur_add(&class_durs[class][op], dur);
   dur_add(&thread_durs[(uint64_t)tid * 2 + (uint64_t)op], dur);
}

static int size_class(uint64_t size)
{
   if (size <= 16)
      return 0;
   int c = (64 - __builtin_clzll(size - 1)) - 4;
   return c > 17 ? 17 : c;
}

static int in_region(uint64_t u)
{
   return (reg_open && reg_open_start <= u) ||
          (reg_closed && reg_last_start <= u && u <= reg_last_end);
}

/* A region mark at unit u (the reader's profile_regions). */
static void sum_mark(uint64_t u, int start)
{
   if (start && !reg_open) {
      reg_open = 1;
      reg_open_start = u;
   } else if (!start && reg_open) {
      reg_open = 0;
      reg_closed = 1;
      reg_last_start = reg_open_start;
      reg_last_end = u;
   }
}

static void sum_alloc(const struct rec *r, uint32_t tid, uint64_t u, uint32_t bucket);

/* Takes live block `b` off its site and the total (a free, or a block
 * the allocator handed out again), noting the site in bucket `bucket`;
 * returns the site, or NULL when out of memory (the summary is given up). */
static struct site_sum *site_lose(const struct live_slot *b, uint32_t bucket)
{
   struct site_sum *s = &sites[b->site];
   site_changing(s);
   s_total_live -= b->size;
   s->live -= b->size;
   s->live_blocks--;
   if (!ser_site(s, bucket)) {
      sum_fail();
      return NULL;
   }
   return s;
}

/* Takes one call of thread `tid` at unit u (HeapReport::take), and
 * notes it in the live-heap series and the lifetimes. */
static void sum_call(const struct rec *r, uint32_t tid, uint64_t u)
{
   if (tid > s_threads)
      s_threads = tid;
   if (u < s_last_unit)
      s_late++;
   else
      s_last_unit = u;
   int is_free = r->kind >= K_FREE;
   int has_freed = is_free || (r->kind == K_REALLOC && r->aux);
   uint64_t freed = is_free ? r->addr : r->aux;
   int freed_class = SIZE_CLASSES;
   if (!grow((void **)&last_alloc, &last_alloc_cap, tid, sizeof *last_alloc)) {
      sum_fail();
      return;
   }
   uint32_t bucket = (uint32_t)ser_bucket(u);
   if (bucket != ser_cur) {
      ser_cur = bucket;
      ser_touched[bucket] = 1;
      ser_high[bucket] = s_total_live;
   }
   struct live_slot b;
   if (has_freed) {
      if (live_remove(freed, &b)) {
         s_frees++;
         struct site_sum *s = site_lose(&b, bucket);
         if (!s)
            return;
         life_counts[life_bucket(u > b.unit ? u - b.unit : 0)]++;
         if (last_alloc[tid] == freed) {
            s->temporary++;
            s_temporary++;
            last_alloc[tid] = 0;
         }
         int k = size_class(b.size);
         classes[k].frees++;
         freed_class = k;
      } else {
         s_unknown_frees++;
      }
   }
   ser_total[bucket] = s_total_live;
   if (is_free || !r->addr) {
      /* A free, or a realloc that only freed: timed as a free. */
      durs_add(freed_class, tid, 1, r->dur);
      return;
   }
   sum_alloc(r, tid, u, bucket);
}

/* The allocation part of a call (sum_call). */
static void sum_alloc(const struct rec *r, uint32_t tid, uint64_t u, uint32_t bucket)
{
   uint32_t site = r->stack < canon_cap ? canon[r->stack] : 0;
   if (!grow((void **)&sites, &sites_cap, site, sizeof *sites)) {
      sum_fail();
      return;
   }
   int inr = in_region(u);
   s_allocs++;
   s_bytes += r->size;
   s_region_allocs += (uint64_t)inr;
   s_total_live += r->size;
   struct site_sum *s = &sites[site];
   site_changing(s);
   s->allocs++;
   s->bytes += r->size;
   s->live += r->size;
   s->live_blocks++;
   if (s->live > s->peak)
      s->peak = s->live;
   if (s_total_live > s_peak) {
      s_peak = s_total_live;
      s_peak_unit = u;
      s_peak_epoch++;
      s->at_peak = s->live;
      s->peak_epoch = s_peak_epoch;
   }
   s->in_region += (uint64_t)inr;
   int k = size_class(r->size);
   classes[k].allocs++;
   classes[k].bytes += r->size;
   classes[k].usable += r->size + r->pad;
   durs_add(k, tid, 0, r->dur);
   last_alloc[tid] = r->addr;
   struct live_slot b;
   if (!live_insert(r->addr, r->size, u, site, &b) || !ser_site(s, bucket)) {
      sum_fail();
      return;
   }
   /* A live address returned by the allocator: a free was missed. */
   if (b.addr && !site_lose(&b, bucket))
      return;
   ser_total[bucket] = s_total_live;
   if (s_total_live > ser_high[bucket])
      ser_high[bucket] = s_total_live;
}

/* Gives a chunk the summary has passed back to its thread (or unmaps it). */
static void recycle(struct tstate *t, struct chunk *c)
{
   atomic_fetch_sub_explicit(&in_flight, 1, memory_order_relaxed);
   uint32_t fh = atomic_load_explicit(&t->free_head, memory_order_relaxed);
   if (!atomic_load_explicit(&t->exited, memory_order_acquire) &&
       fh - atomic_load_explicit(&t->free_tail, memory_order_acquire) < RING) {
      t->freeq[fh % RING] = c;
      atomic_store_explicit(&t->free_head, fh + 1, memory_order_release);
   } else {
      if (c->enc)
         munmap(c->enc, ENC_BYTES);
      munmap(c, sizeof *c);
   }
}

/* Queues an encoded chunk for the summary (or recycles it at once). */
static void sum_queue(struct tstate *t, struct chunk *c)
{
   if (!sum_ok) {
      recycle(t, c);
      return;
   }
   c->next = NULL;
   if (t->sum_last)
      t->sum_last->next = c;
   else
      t->sum_first = c;
   t->sum_last = c;
   if (++sum_pending > SUM_MAX_PENDING && !sum_final)
      sum_fail();
}

/* Gives back every queued chunk (the summary was given up). */
static void sum_release(void)
{
   for (struct tstate *t = atomic_load(&all_threads); t; t = t->next_all) {
      while (t->sum_first) {
         struct chunk *c = t->sum_first;
         t->sum_first = c->next;
         recycle(t, c);
      }
      t->sum_last = NULL;
   }
   sum_pending = 0;
}

static int drain_thread(struct tstate *t, int force);

/* The thread's next published record for the summary, or NULL when it has
 * none yet: from its queued chunks, then its current one. */
static const struct rec *sum_peek(struct tstate *t)
{
   int drained_once = 0;
   for (;;) {
      struct chunk *c = t->sum_first;
      uint32_t end;
      if (c) {
         end = c->final_used;
      } else {
         c = atomic_load_explicit(&t->cur, memory_order_acquire);
         if (!c || c->seq != t->sum_seq) {
            /* Its chunk was handed over: it is queued in the ring. */
            if (drained_once) {
               t->sum_blocked = c != NULL; /* (cannot happen: a chunk is queued first) */
               return NULL;
            }
            drained_once = 1;
            drain_thread(t, 1);
            continue;
         }
         /* Read a current chunk only once its thread has stopped writing
          * to it (its length did not move since the last horizon): lines
          * the thread is still writing would bounce between the cores. */
         end = atomic_load_explicit(&c->used, memory_order_acquire);
         if (t->sum_seen_epoch != sum_epoch) {
            t->sum_cur_still = end == t->sum_seen_used && c->seq == t->sum_seen_seq;
            t->sum_seen_used = end;
            t->sum_seen_seq = c->seq;
            t->sum_seen_epoch = sum_epoch;
         }
         if (!t->sum_cur_still) {
            t->sum_blocked = 1; /* records may wait there */
            return NULL;
         }
         end = t->sum_seen_used;
      }
      if (t->sum_off + sizeof(struct rec) <= end) {
         __builtin_prefetch(c->data + t->sum_off + 1024);
         return (const struct rec *)(c->data + t->sum_off);
      }
      if (c != t->sum_first)
         return NULL;
      t->sum_first = c->next;
      if (!t->sum_first)
         t->sum_last = NULL;
      sum_pending--;
      t->sum_seq++;
      t->sum_off = 0;
      recycle(t, c);
   }
}

/* Finds the thread's next call or mark (taking stacks on the way) and its
 * time unit, as the encoder gives it; 0 when none is published yet. */
static int sum_fill_head(struct tstate *t)
{
   t->sum_blocked = 0;
   for (;;) {
      const struct rec *r = sum_peek(t);
      if (!r)
         return 0;
      if (r->kind == K_STACK) {
         sum_stack(r->stack, (const uint64_t *)(r + 1), (uint32_t)r->size);
         t->sum_off += (uint32_t)(sizeof *r + r->size * 8);
         continue;
      }
      uint64_t u;
      if (r->kind == K_REGION) {
         u = c_unit(r->tsc, r->size ? t->sum_tsc + 1 : t->sum_tsc);
         t->sum_floor = r->size ? u : u + 1;
         t->sum_head_key = t->tid; /* marks before calls of the same unit */
      } else {
         u = c_unit(r->tsc, t->sum_floor);
         t->sum_tsc = t->sum_floor = u;
         t->sum_head_key = 0x80000000u | t->tid;
      }
      t->sum_head_unit = u;
      t->sum_head_rec = r;
      t->sum_has_head = 1;
      return 1;
   }
}

static int head_before(const struct tstate *a, const struct tstate *b)
{
   return a->sum_head_unit < b->sum_head_unit ||
          (a->sum_head_unit == b->sum_head_unit && a->sum_head_key < b->sum_head_key);
}

/* A binary min-heap of the threads with a head, by (unit, key). */
static struct tstate **heap;
static uint64_t heap_cap, heap_len;

static void heap_down(uint64_t i)
{
   for (;;) {
      uint64_t l = 2 * i + 1, m = i;
      if (l < heap_len && head_before(heap[l], heap[m]))
         m = l;
      if (l + 1 < heap_len && head_before(heap[l + 1], heap[m]))
         m = l + 1;
      if (m == i)
         return;
      struct tstate *x = heap[i];
      heap[i] = heap[m];
      heap[m] = x;
      i = m;
   }
}

/* Takes, in order, every call and mark whose unit is below `bound`. */
static void sum_merge(uint64_t bound)
{
   heap_len = 0;
   for (struct tstate *t = atomic_load(&all_threads); t; t = t->next_all) {
      if (!t->sum_has_head && !sum_fill_head(t)) {
         /* Its next record, not read yet, takes no unit below its floor. */
         if (t->sum_blocked && t->sum_floor < bound)
            bound = t->sum_floor;
         continue;
      }
      if (!grow((void **)&heap, &heap_cap, heap_len, sizeof *heap)) {
         sum_fail();
         return;
      }
      heap[heap_len++] = t;
   }
   for (uint64_t i = heap_len; i-- > 0;)
      heap_down(i);
   while (heap_len && sum_ok) {
      struct tstate *t = heap[0];
      if (t->sum_head_unit >= bound)
         return;
      const struct rec *r = t->sum_head_rec;
      if (r->kind == K_REGION) {
         sum_mark(t->sum_head_unit, (int)r->size);
         if (!keep_calls)
            put_region_at(t->tid, t->sum_head_unit, (int)r->size);
      } else
         sum_call(r, t->tid, t->sum_head_unit);
      t->sum_off += sizeof *r;
      t->sum_has_head = 0;
      sum_merged++;
      judge_soon(0);
      if (!sum_fill_head(t)) {
         if (t->sum_blocked && t->sum_floor < bound)
            bound = t->sum_floor;
         heap[0] = heap[--heap_len];
      }
      heap_down(0);
   }
}

/* Takes every call below the horizon (see the section's comment); at the
 * end (`final`) every call left. */
static void summarise(int final)
{
   if (!sum_ok) {
      if (sum_pending)
         sum_release();
      return;
   }
   uint64_t bound = UINT64_MAX, h = 0;
   sum_epoch++;
   if (!final) {
      _mm_lfence();
      h = __rdtsc() >> TICK_SHIFT;
      _mm_lfence();
      if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
         sum_fail();
         sum_release();
         return;
      }
      for (struct tstate *t = atomic_load(&all_threads); t; t = t->next_all) {
         if (sum_lax || !atomic_load_explicit(&t->busy, memory_order_acquire)) {
            t->sum_safe = h;
         } else {
            uint64_t b = atomic_load_explicit(&t->busy_tsc, memory_order_relaxed) >> TICK_SHIFT;
            if (b > t->sum_safe)
               t->sum_safe = b;
         }
         if (t->sum_safe < bound)
            bound = t->sum_safe;
      }
   }
   sum_merge(bound);
   /* Every call below the bound is taken (below the horizon when no
    * thread has called yet). */
   uint64_t reach = bound == UINT64_MAX ? h : bound;
   if (!final && reach > s_upto)
      s_upto = reach;
   if (!sum_ok)
      sum_release();
}

/* The SUMMARY record's body, built whole so that its length can come
 * first (a reader skips it, or reads it at once). */
static uint8_t *sbuf;
static uint64_t scap, slen;

static void sb_uv(uint64_t v)
{
   if (!grow((void **)&sbuf, &scap, slen + 10, 1)) {
      sum_fail();
      return;
   }
   slen = uv_at(sbuf, slen, v);
}

static void sb_dur_group(int kind, uint64_t index, int op, const struct dur_group *g)
{
   sb_uv((uint64_t)kind);
   sb_uv(index);
   sb_uv((uint64_t)op);
   sb_uv(g->calls);
   sb_uv(g->n);
   sb_uv(g->max);
   uint64_t nb = 0;
   for (uint32_t b = 0; g->counts && b < DUR_BUCKETS; b++)
      nb += g->counts[b] != 0;
   sb_uv(nb);
   uint32_t last = 0;
   for (uint32_t b = 0; g->counts && b < DUR_BUCKETS; b++) {
      if (!g->counts[b])
         continue;
      sb_uv(b - last);
      sb_uv(g->counts[b]);
      last = b;
   }
}

/* The series and lifetimes of format 7, appended to the summary's body;
 * `nsites`: the sites that allocated, as the body's site list counts them. */
static void sb_series(uint64_t nsites)
{
   sb_uv(ser_w);
   uint64_t n = 0, last = 0;
   for (uint32_t i = 0; i < SER_BUCKETS; i++)
      n += ser_touched[i];
   sb_uv(n);
   for (uint32_t i = 0; i < SER_BUCKETS; i++) {
      if (!ser_touched[i])
         continue;
      sb_uv(i - last);
      sb_uv(ser_total[i]);
      sb_uv(ser_high[i]);
      last = i;
   }
   sb_uv(nsites);
   for (uint64_t i = 0; i < sites_cap; i++) {
      const struct site_sum *st = &sites[i];
      if (!st->allocs)
         continue;
      sb_uv(i);
      sb_uv(st->peak_epoch == s_peak_epoch ? st->at_peak : st->live);
      sb_uv(st->pts_n);
      last = 0;
      for (uint32_t j = 0; j < st->pts_n; j++) {
         const struct ser_pt *p = ser_pool + st->pts_off + j;
         sb_uv(p->bucket - last);
         sb_uv(p->live);
         last = p->bucket;
      }
   }
   n = 0;
   for (uint32_t b = 0; b < LIFE_BUCKETS; b++)
      n += life_counts[b] != 0;
   sb_uv(n);
   last = 0;
   for (uint32_t b = 0; b < LIFE_BUCKETS; b++) {
      if (!life_counts[b])
         continue;
      sb_uv(b - last);
      sb_uv(life_counts[b]);
      last = b;
   }
}

/* Writes a SUMMARY record (docs/heap-profile-format.md): at exit
 * (`final`), or a checkpoint of what is taken so far. O(sites, series
 * points, buckets); the live blocks are not walked. */
static void put_summary(int final)
{
   slen = 0;
   uint64_t nsites = 0;
   for (uint64_t i = 0; i < sites_cap; i++)
      nsites += sites[i].allocs != 0;
   const uint64_t totals[] = {s_allocs,     s_frees,     s_bytes,         s_peak,
                              s_peak_unit << TICK_SHIFT, s_total_live,    live_used,
                              s_temporary,  s_unknown_frees, s_threads,   s_region_allocs};
   for (size_t i = 0; i < sizeof totals / sizeof *totals; i++)
      sb_uv(totals[i]);
   sb_uv(nsites);
   for (uint64_t i = 0; i < sites_cap; i++) {
      const struct site_sum *s = &sites[i];
      if (!s->allocs)
         continue;
      const uint64_t f[] = {i,       s->allocs,      s->bytes,     s->peak,
                            s->live, s->live_blocks, s->temporary, s->in_region};
      for (size_t k = 0; k < sizeof f / sizeof *f; k++)
         sb_uv(f[k]);
   }
   sb_uv(SIZE_CLASSES);
   for (int k = 0; k < SIZE_CLASSES; k++) {
      sb_uv(classes[k].allocs);
      sb_uv(classes[k].bytes);
      sb_uv(classes[k].usable);
      sb_uv(classes[k].frees);
   }
   uint64_t ngroups = 0;
   for (int k = 0; k <= SIZE_CLASSES; k++)
      for (int op = 0; op < 2; op++)
         ngroups += class_durs[k][op].calls != 0;
   for (uint64_t i = 0; i < thread_durs_cap; i++)
      ngroups += thread_durs[i].calls != 0;
   sb_uv(ngroups);
   for (int k = 0; k <= SIZE_CLASSES; k++)
      for (int op = 0; op < 2; op++)
         if (class_durs[k][op].calls)
            sb_dur_group(0, (uint64_t)k, op, &class_durs[k][op]);
   for (uint64_t i = 0; i < thread_durs_cap; i++)
      if (thread_durs[i].calls)
         sb_dur_group(1, i / 2, (int)(i % 2), &thread_durs[i]);
   sb_uv((uint64_t)final);
   sb_uv((final ? __rdtsc() >> TICK_SHIFT : s_upto) << TICK_SHIFT);
   sb_uv(s_late);
   sb_series(nsites);
   if (!sum_ok || slen > 0xffffffffu)
      return;
   need(16);
   put_uv(R_SUMMARY);
   uint32_t n = (uint32_t)slen;
   memcpy(out->buf + out->len, &n, 4); /* little-endian (x86-64 only) */
   out->len += 4;
   for (uint64_t off = 0; off < slen;) {
      size_t room = out->cap - out->len;
      if (!room) {
         out_flush();
         continue;
      }
      size_t k = slen - off < room ? (size_t)(slen - off) : room;
      memcpy(out->buf + out->len, sbuf + off, k);
      out->len += k;
      off += k;
   }
}

/* Turns the summary on when membarrier(2) can give its horizon. */
static void sum_start(void)
{
   sum_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* Writes chunk `c`, the oldest in the thread's ring, to the file: the
 * bytes its thread encoded, or encoded now; 0 when the thread is
 * encoding (the chunk waits). */
static int take_encoded(struct tstate *t, struct chunk *c)
{
   if (!keep_calls) {
      c->final_used = atomic_load_explicit(&c->used, memory_order_acquire);
      return 1;
   }
   if (!atomic_load_explicit(&c->pre, memory_order_acquire)) {
      if (!enc_try(t))
         return 0;
      int pre = atomic_load_explicit(&c->pre, memory_order_relaxed);
      if (!pre) {
         c->final_used = atomic_load_explicit(&c->used, memory_order_acquire);
         encode_chunk(t, c);
         t->enc_next = c->seq + 1;
         chunks_by_collector++;
      }
      enc_release(t);
      if (!pre)
         return 1;
   }
   copy_encoded(c);
   return 1;
}

/* Encodes the thread's handed-over chunks and queues them for the
 * summary; returns whether there were any. */
static int drain_thread(struct tstate *t, int force)
{
   int did = 0;
   uint32_t tail = atomic_load_explicit(&t->full_tail, memory_order_relaxed);
   while (tail != atomic_load_explicit(&t->full_head, memory_order_acquire)) {
      if (sum_ok && sum_pending >= SUM_SOFT && !force && !sum_final)
         break; /* let the summary catch up; the thread waits on its ring */
      force = 0;
      struct chunk *c = t->full[tail % RING];
      judge_soon(1); /* a drain may take long: one look at the clock a chunk */
      if (!take_encoded(t, c))
         break; /* the thread is encoding its chunks: take them later */
      atomic_store_explicit(&t->full_tail, ++tail, memory_order_release);
      sum_queue(t, c);
      did = 1;
   }
   return did;
}

/* Drains every thread's ring; returns whether anything was written. */
static int drain(void)
{
   int did = 0;
   for (struct tstate *t = atomic_load(&all_threads); t; t = t->next_all) {
      if (t->coll_done)
         continue;
      int exited = atomic_load_explicit(&t->exited, memory_order_acquire);
      did |= drain_thread(t, 0);
      if (exited && t->full_tail == atomic_load_explicit(&t->full_head, memory_order_acquire))
         t->coll_done = 1; /* its last chunk was handed over before `exited` */
   }
   return did;
}

static void sample_rss(void)
{
   static int fd = -2;
   char buf[128];
   if (fd == -2)
      fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
   if (fd < 0)
      return;
   ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
   if (n <= 0)
      return;
   buf[n] = 0;
   const char *s = buf;
   while (*s && *s != ' ')
      s++;
   uint64_t pages = 0;
   while (*s == ' ')
      s++;
   while (*s >= '0' && *s <= '9')
      pages = pages * 10 + (uint64_t)(*s++ - '0');
   need(32);
   put_uv(R_RSS);
   put_uv(__rdtsc());
   put_uv(pages * (uint64_t)sysconf(_SC_PAGESIZE));
}

/* The summary is stuck behind a thread that stays inside a call (or left
 * one by longjmp). With calls, it is given up: the reader takes its pass
 * over the calls. Without, there is no such pass: one merge goes on
 * without the busy threads' bounds, and their calls below it are taken
 * late and counted (`s_late`), so no thread waits long. */
static void stall(void)
{
   if (keep_calls) {
      sum_fail();
      summarise(0);
      return;
   }
   sum_lax = 1;
   summarise(0);
   sum_lax = 0;
}

/* About every CHECKPOINT_NS the collector writes a clock pair (CLOCK:
 * the tick rate of a profile without footer) and the mappings when they
 * changed, and in a profile without calls a checkpoint (a SUMMARY
 * record), all flushed to the file: a program that ends without exit()
 * (a signal, _exit, killed) keeps what was taken up to then. Returns the
 * time to the next one: at least twenty times what this one took, so
 * checkpoints cost at most 5% of the collector's time, and at least a
 * 32nd of the run so far, so a long run holds about 32 checkpoints more
 * each time its length grows e-fold (a one-hour run about 180, where one
 * a second would make 3600), and a killed program loses at most the last
 * 32nd of its run. */
#define CHECKPOINT_NS 1000000000u
static void write_maps(int if_changed);
static uint64_t checkpoint(void)
{
   uint64_t t0 = mono_ns();
   need(32);
   put_uv(R_CLOCK);
   put_uv(__rdtsc());
   put_uv(t0);
   write_maps(1);
   if (!keep_calls && sum_ok)
      put_summary(0);
   out_flush();
   uint64_t took = mono_ns() - t0, next = CHECKPOINT_NS;
   if (took * 20 > next)
      next = took * 20;
   if ((t0 - mono0) / 32 > next)
      next = (t0 - mono0) / 32;
   return next;
}

/* MAPVIS_HEAP_COLLECTOR_DELAY_MS, for tests: the collector starts that
 * late, as on a machine with more busy threads than CPUs. */
static unsigned collector_delay_ms;

static void *collect(void *unused)
{
   (void)unused;
   in_hook = 1; /* the collector's own allocations are not the program's */
   ts = (struct tstate *)1;
   if (collector_delay_ms) {
      struct timespec d = {collector_delay_ms / 1000, (long)(collector_delay_ms % 1000) * 1000000};
      nanosleep(&d, NULL);
   }
   if (keep_calls)
      zstd_open();
   uint64_t next_rss = 0;
   /* The stall clock starts now: from 0, a collector that first ran
    * after the threads had filled SUM_SOFT chunks (4 threads on 2 CPUs)
    * found "no progress for SUM_STALL_NS" at its first look, before its first
    * merge, and gave the summary up in about 1 run in 5. */
   uint64_t last_merged = 0, stall_since = mono_ns();
   uint64_t next_checkpoint = stall_since + CHECKPOINT_NS;
   while (!atomic_load(&collector_stop)) {
      int did = drain();
      summarise(0);
      uint64_t now = mono_ns();
      /* A summary stuck behind a thread that stays inside a call (or
       * left one by longjmp) is given up, so no thread waits long. */
      if (sum_pending < SUM_SOFT || sum_merged != last_merged) {
         last_merged = sum_merged;
         stall_since = now;
      } else if (sum_ok && now - stall_since > SUM_STALL_NS) {
         stall();
         stall_since = now;
      }
      if (now >= next_checkpoint)
         next_checkpoint = now + checkpoint();
      judge_soon(1);
      if (now >= next_rss) {
         sample_rss();
         next_rss = now + 10000000u;
      }
      if (!did) {
         struct timespec d = {0, 1000000};
         nanosleep(&d, NULL);
      }
   }
   return NULL;
}

/* The file mappings, from /proc/self/maps, for symbolization. Runs at
 * exit with in_hook set, so stdio's own allocations pass through. */
static uint64_t maps_hash(FILE *f)
{
   char line[4200];
   uint64_t h = 1469598103934665603ull;
   while (fgets(line, sizeof line, f))
      if (strchr(line, '/')) /* the file mappings, which are written */
         for (const char *c = line; *c; c++)
            h = (h ^ (uint8_t)*c) * 1099511628211ull;
   rewind(f);
   return h;
}

/* Writes the mappings; with `if_changed`, only when they changed since
 * the last time (the checkpoints': a program killed later still has them
 * for symbolization). */
static void write_maps(int if_changed)
{
   static uint64_t written;
   FILE *f = fopen("/proc/self/maps", "re");
   char line[4200];
   if (!f)
      return;
   if (if_changed) {
      uint64_t h = maps_hash(f);
      if (h == written) {
         fclose(f);
         return;
      }
      written = h;
   }
   while (fgets(line, sizeof line, f)) {
      unsigned long lo, hi, off;
      char perms[8];
      int pos = 0;
      if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perms, &off, &pos) < 4 || !pos)
         continue;
      char *path = line + pos;
      size_t n = strcspn(path, "\n");
      if (path[0] != '/')
         continue;
      uint8_t p = (perms[0] == 'r' ? 4 : 0) | (perms[1] == 'w' ? 2 : 0) | (perms[2] == 'x' ? 1 : 0);
      need(64);
      put_uv(R_MAP);
      put_uv(lo);
      put_uv(hi - lo);
      put_uv(off);
      put_u8(p);
      put_str(path, n);
   }
   fclose(f);
}

/*--------------------------------------------------------------------*/
/*--- Start and end                                                ---*/
/*--------------------------------------------------------------------*/

static void write_header(void)
{
   char exe[4096], cmd[4096];
   ssize_t el = readlink("/proc/self/exe", exe, sizeof exe);
   int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
   ssize_t cl = fd >= 0 ? read(fd, cmd, sizeof cmd) : 0;
   if (fd >= 0)
      close(fd);
   memcpy(out->buf, "MVHEAPP\n", 8);
   out->len = 8;
   put_uv(FORMAT_VERSION);
   put_uv((uint64_t)getpid());
   struct timespec rt;
   clock_gettime(CLOCK_REALTIME, &rt);
   put_uv((uint64_t)rt.tv_sec * 1000000u + (uint64_t)rt.tv_nsec / 1000u);
   put_uv(tsc0);
   put_uv(mono0);
   put_uv(depth);
   put_uv(TICK_SHIFT);
   put_uv(DUR_SHIFT);
   put_uv(dur_mask + 1);
   put_uv((uint64_t)keep_calls);
   put_str(exe, el > 0 ? (size_t)el : 0);
   uint64_t argc = 0;
   for (ssize_t i = 0; i < cl; i++)
      argc += cmd[i] == 0;
   put_uv(argc);
   for (ssize_t i = 0; i < cl;) {
      size_t l = strnlen(cmd + i, (size_t)(cl - i));
      put_str(cmd + i, l);
      i += (ssize_t)l + 1;
   }
}

static void child_after_fork(void)
{
   enabled = 0;
   if (out_fd >= 0)
      close(out_fd);
   out_fd = -1;
}

__attribute__((constructor)) static void start(void)
{
   resolve();
   const char *out = getenv("MAPVIS_HEAP_OUT");
   if (!out || !*out || !real_malloc)
      return;
   const char *d = getenv("MAPVIS_HEAP_DEPTH");
   if (d && *d) {
      unsigned v = 0;
      for (; *d >= '0' && *d <= '9'; d++)
         v = v * 10 + (unsigned)(*d - '0');
      depth = v > MAX_DEPTH ? MAX_DEPTH : v;
   }
   const char *enc = getenv("MAPVIS_HEAP_ENCODER");
   if (enc && strcmp(enc, "threads") == 0)
      encoder_mode = ENC_BY_THREADS;
   else if (enc && strcmp(enc, "collector") == 0)
      encoder_mode = ENC_BY_COLLECTOR;
   else if (enc && strcmp(enc, "alternate") == 0)
      encoder_mode = ENC_ALTERNATE;
   help = encoder_mode == ENC_BY_THREADS;
   const char *late = getenv("MAPVIS_HEAP_COLLECTOR_DELAY_MS");
   for (; late && *late >= '0' && *late <= '9' && collector_delay_ms < 100000; late++)
      collector_delay_ms = collector_delay_ms * 10 + (unsigned)(*late - '0');
   const char *tm = getenv("MAPVIS_HEAP_TIME");
   if (tm && strcmp(tm, "all") == 0)
      dur_mask = 0;
   const char *calls = getenv("MAPVIS_HEAP_CALLS");
   keep_calls = calls && strcmp(calls, "1") == 0;
   const char *slow = getenv("MAPVIS_HEAP_SLOW_CALL");
   for (; slow && *slow >= '0' && *slow <= '9' && slow_call_at < (1ull << 40); slow++)
      slow_call_at = slow_call_at * 10 + (uint64_t)(*slow - '0');
   /* A new file only: mapvis removed whatever had the name, so a link
      placed there since is not followed. */
   out_fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
   unsetenv("MAPVIS_HEAP_OUT");
   if (out_fd < 0)
      return;
   tsc0 = __rdtsc();
   mono0 = mono_ns();
   ser_base = tsc0 >> TICK_SHIFT;
   sum_start();
   if (!sum_ok)
      keep_calls = 1; /* no summary without membarrier: the calls then */
   write_header();
   pthread_key_create(&exit_key, thread_gone);
   pthread_atfork(NULL, NULL, child_after_fork);
   cpu_set_t set;
   if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
      cpus = (unsigned)CPU_COUNT(&set);
   enabled = 1;
   in_hook++;
   if (real_pthread_create(&collector, NULL, collect, NULL) != 0)
      enabled = 0;
   in_hook--;
}

__attribute__((destructor)) static void finish(void)
{
   if (!enabled || out_fd < 0)
      return;
   struct tstate *t = ts;
   in_hook++;
   atomic_store(&stopping, 1);
   if ((uintptr_t)t > 1)
      hand_over(t);
   atomic_store(&collector_stop, 1);
   pthread_join(collector, NULL);
   /* Threads still running: take their handed-over chunks, then their
    * current ones (they no longer record: `stopping` is set). */
   sum_final = 1;
   z_cctx = coll_cctx;
   /* Once a thread's lock is free, no thread encodes any more (`stopping`
    * is set): the exit encodes what is left. */
   for (struct tstate *o = atomic_load(&all_threads); o; o = o->next_all)
      if (enc_take_at_exit(o, (uintptr_t)t > 1 ? t : NULL))
         enc_release(o);
   drain();
   for (struct tstate *o = atomic_load(&all_threads); o; o = o->next_all)
      if (!o->coll_done && o->cur && o != t) {
         struct chunk *c = o->cur;
         c->final_used = atomic_load_explicit(&c->used, memory_order_acquire);
         if (keep_calls) {
            encode_chunk(o, c);
            chunks_by_collector++;
         }
         atomic_store_explicit(&o->cur, NULL, memory_order_relaxed);
         sum_queue(o, c);
      }
   summarise(1);
   if (sum_ok)
      put_summary(1);
   sample_rss();
   write_maps(1);
   uint64_t tsc1 = __rdtsc(), mono1 = mono_ns();
   need(64);
   put_uv(R_FOOTER);
   put_uv(tsc1);
   put_uv(mono1);
   put_uv(atomic_load(&next_tid) - 1);
   put_uv(atomic_load(&next_stack) - 1);
   put_uv(R_END);
   memcpy(out->buf + out->len, "MVEND\n", 6);
   out->len += 6;
   out_flush();
   close(out_fd);
   if (encoder_mode != ENC_AUTO) {
      char line[160];
      int n = snprintf(line, sizeof line,
                       "mapvis heap profiler: %llu chunks encoded by their threads, %llu by the collector\n",
                       (unsigned long long)atomic_load(&chunks_by_threads),
                       (unsigned long long)chunks_by_collector);
      if (n > 0 && write(2, line, (size_t)n) < 0)
         n = 0;
   }
   out_fd = -1;
   enabled = 0;
   in_hook--;
}
