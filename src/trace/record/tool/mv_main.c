/*--------------------------------------------------------------------*/
/*--- mapvis: a Valgrind tool that records the memory accesses     ---*/
/*--- between the GL_START / GL_STOP pins, and every heap event.    ---*/
/*---                                                     mv_main.c ---*/
/*--------------------------------------------------------------------*/

/*
   This file is part of mapvis.  It links Valgrind's GPL-2.0 libraries
   and is therefore licensed under the GNU General Public License,
   version 2 or (at your option) any later version.

   What it records
   ---------------
   * Every load (L), store (S) and modify (M: one instruction loads and
     stores the same place with the same size) executed while a region is
     open, i.e. between GL_START and GL_STOP, by any thread.  Each access
     carries its instruction address, size, thread and the stack and frame
     pointers before the instruction, so stack variables and source lines
     can be named offline from DWARF.
   * From program start: malloc, calloc, realloc, free, memalign,
     posix_memalign, aligned_alloc and C++ new/delete, each with up to
     --stack-depth return addresses.
   * The load map (file-backed mappings, including dlopen'ed objects),
     thread creation and exit, the regions, and a footer with counts.
   * With --sync-events=yes, for the whole run: thread create, join and
     exit, and the acquire, release, init and destroy of mutexes,
     rwlocks, condition variables and semaphores (the pthread wrappers of
     mv_pthread.c report them), and each thread's instruction count at
     every such event and every heap event.

   The trace format
   ----------------
   A binary, versioned stream, documented in docs/trace-format.md and
   read by src/trace/record/reader.rs.  In short: a header, then records that
   each start with an unsigned LEB128 "key".  Keys 0..31 are control
   records; a key k >= 32 is an access by the site whose code is
   (k-32)/2, and its low bit says whether the address differs from the
   site's prediction (previous address + previous stride), in which case a
   zig-zag LEB128 correction follows.  A "site" is one memory operation of
   one instruction, defined once by a SITE record; its code starts as its
   id, and the hottest sites are given the 48 codes whose keys take one
   byte (RECODE records, see recode()).  The stream is written in large
   buffers; a truncated stream is readable up to its last whole record.

   Cost model
   ----------
   Outside regions the tool adds no instrumentation at all (code runs as
   under --tool=none); GL_START and GL_STOP discard the translation cache
   so that code is re-instrumented.  Inside a region each access costs one
   helper call that appends one to three bytes to the buffer in the
   common (predicted) case.  --sync-events=yes adds, to every superblock
   of the whole run, one add to a counter per exit (no helper call).
*/

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_replacemalloc.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_transtab.h"
#include "pub_tool_xarray.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "libvex_guest_offsets.h"

#include "../../../../pins/gleipnir.h"
#include "mv_sync.h"
#include "mv_region.h"

#ifndef MAPVIS_VG_VERSION
#define MAPVIS_VG_VERSION "unknown"
#endif

/*------------------------------------------------------------*/
/*--- Format constants: mv_format.h, shared with the reader ---*/
/*------------------------------------------------------------*/

#include "mv_format.h"

/*------------------------------------------------------------*/
/*--- Command line options                                 ---*/
/*------------------------------------------------------------*/

static const HChar* clo_trace_file = "mapvis.mvt";
static Int  clo_stack_depth = 8;
static Bool clo_trace_from_start = False;
static Bool clo_heap_only = False;
static Bool clo_sync_events = False;

static Bool mv_process_cmd_line_option(const HChar* arg)
{
   if      VG_STR_CLO(arg, "--trace-file", clo_trace_file) {}
   else if VG_INT_CLO(arg, "--stack-depth", clo_stack_depth) {
      if (clo_stack_depth < 1) clo_stack_depth = 1;
      if (clo_stack_depth > 64) clo_stack_depth = 64;
   }
   else if VG_BOOL_CLO(arg, "--trace-from-start", clo_trace_from_start) {}
   else if VG_BOOL_CLO(arg, "--heap-only", clo_heap_only) {}
   else if VG_BOOL_CLO(arg, "--sync-events", clo_sync_events) {}
   else if (mv_rg_option(arg)) {}
   else
      return VG_(replacement_malloc_process_cmd_line_option)(arg);
   return True;
}

static void mv_print_usage(void)
{
   VG_(printf)(
"    --trace-file=<file>       write the binary trace to <file> [mapvis.mvt]\n"
"    --stack-depth=<n>         return addresses kept per heap event, 1..64 [8]\n"
"    --trace-from-start=no|yes record the accesses of the whole run, from\n"
"                              program start to exit, as one region; the\n"
"                              pins are then ignored [no]\n"
"    --heap-only=no|yes        keep only accesses that fall inside a live\n"
"                              heap block [no]\n"
"    --sync-events=no|yes      record thread create/join/exit and the\n"
"                              acquire/release/init/destroy of mutexes,\n"
"                              rwlocks, condition variables and semaphores\n"
"                              for the whole run,\n"
"                              with per-thread instruction counts [no]\n"
"    --region-object=<file>    the object whose code --region-range gives\n"
"    --region-range=f:LO-HI    a region by code instead of the pins: a\n"
"                              function's own code (f) or inlined code or\n"
"                              source lines (i), file addresses in hex;\n"
"                              repeated for each range\n"
"    --region-calls=A-B        trace entries A to B (B 0: all after A) [1-0]\n"
"    --region-label=<text>     what the header says the regions are\n"
   );
}

static void mv_print_debug_usage(void)
{
   VG_(printf)("    (none)\n");
}

/*------------------------------------------------------------*/
/*--- The output buffer                                    ---*/
/*------------------------------------------------------------*/

#define BUF_SIZE   MAX_BLOCK_BYTES
#define BUF_SLACK  512    /* room always left for one small record */

/* What a SIGKILL can lose is bounded: the buffer is written out once it
   holds FLUSH_AT bytes, and, once FLUSH_MS have passed since the last
   write, at the next multiple of 4096 accesses or of 64 other records.
   docs/trace-format.md states the bound. */
#define FLUSH_AT   (64 * 1024)
#define FLUSH_MS   1000

static UChar* buf;
static UInt   buf_pos;
static Int    out_fd = -1;
static ULong  bytes_written;
static UInt   header_len;       /* bytes of the header at the file's start */
static UInt   last_flush_ms;
static UInt   n_records;        /* control records, for the time check */

/* After fork(): the child writes its own trace, <trace file>.<pid>,
   holding only its own events, after a preamble that restates what it
   inherited (see mv_child_after_fork). The file is created when the
   child first writes, so a child that execs first leaves no file. */
static Bool   child_pending;

static void write_header(void);
static void open_child_trace(void);
static void warn(UInt code, const HChar* text);

/*------------------------------------------------------------*/
/*--- Checksums: XXH64                                     ---*/
/*------------------------------------------------------------*/

/* XXH64 (the xxHash specification, 64-bit variant), which the reader
   computes with the xxhash-rust crate. A tool cannot link a library, so
   the one-shot form is written out here; it runs at several GB/s, far
   above the rate the tool writes a trace. */
#define XXP1 0x9E3779B185EBCA87ULL
#define XXP2 0xC2B2AE3D27D4EB4FULL
#define XXP3 0x165667B19E3779F9ULL
#define XXP4 0x85EBCA77C2B2AE63ULL
#define XXP5 0x27D4EB2F165667C5ULL

static __inline__ ULong xx_rotl(ULong x, UInt r) { return (x << r) | (x >> (64 - r)); }

static __inline__ ULong xx_read64(const UChar* p)
{
   ULong v;
   __builtin_memcpy(&v, p, 8);      /* x86-64: little-endian, unaligned ok */
   return v;
}

static __inline__ ULong xx_round(ULong acc, ULong input)
{
   acc += input * XXP2;
   acc = xx_rotl(acc, 31);
   return acc * XXP1;
}

static __inline__ ULong xx_merge(ULong acc, ULong v)
{
   acc ^= xx_round(0, v);
   return acc * XXP1 + XXP4;
}

static ULong xxh64(const UChar* p, SizeT len, ULong seed)
{
   const UChar* end = p + len;
   ULong h;
   if (len >= 32) {
      ULong v1 = seed + XXP1 + XXP2, v2 = seed + XXP2, v3 = seed, v4 = seed - XXP1;
      do {
         v1 = xx_round(v1, xx_read64(p));
         v2 = xx_round(v2, xx_read64(p + 8));
         v3 = xx_round(v3, xx_read64(p + 16));
         v4 = xx_round(v4, xx_read64(p + 24));
         p += 32;
      } while (p + 32 <= end);
      h = xx_rotl(v1, 1) + xx_rotl(v2, 7) + xx_rotl(v3, 12) + xx_rotl(v4, 18);
      h = xx_merge(h, v1);
      h = xx_merge(h, v2);
      h = xx_merge(h, v3);
      h = xx_merge(h, v4);
   } else {
      h = seed + XXP5;
   }
   h += (ULong)len;
   for (; p + 8 <= end; p += 8) {
      h ^= xx_round(0, xx_read64(p));
      h = xx_rotl(h, 27) * XXP1 + XXP4;
   }
   if (p + 4 <= end) {
      UInt w;
      __builtin_memcpy(&w, p, 4);
      h ^= (ULong)w * XXP1;
      h = xx_rotl(h, 23) * XXP2 + XXP3;
      p += 4;
   }
   for (; p < end; p++) {
      h ^= (ULong)(*p) * XXP5;
      h = xx_rotl(h, 11) * XXP1;
   }
   h ^= h >> 33;
   h *= XXP2;
   h ^= h >> 29;
   h *= XXP3;
   h ^= h >> 32;
   return h;
}

static void put_le(UChar* at, ULong v, UInt bytes)
{
   UInt i;
   for (i = 0; i < bytes; i++) at[i] = (UChar)(v >> (8 * i));
}

/* Version 7: the buffer's first BLOCK_HEADER_BYTES are kept for the BLOCK
   record that precedes its records in the file: its length, and the
   XXH64 of its records seeded with the record's file offset (so a block
   moved, repeated or dropped does not check either). A reader checks each
   block before it decodes a record of it. */
static void seal_block(void)
{
   UInt len = buf_pos - BLOCK_HEADER_BYTES;
   ULong at = bytes_written;
   buf[0] = REC_BLOCK;
   put_le(buf + 1, len, 4);
   put_le(buf + 5, xxh64(buf + BLOCK_HEADER_BYTES, len, at), 8);
}

static void flush_buf(void)
{
   UInt done = 0;
   if (child_pending) open_child_trace();
   if (out_fd < 0) return;          /* before the file is open: keep */
   if (buf_pos <= BLOCK_HEADER_BYTES) {
      last_flush_ms = VG_(read_millisecond_timer)();
      return;
   }
   seal_block();
   while (done < buf_pos) {
      Int n = VG_(write)(out_fd, buf + done, buf_pos - done);
      if (n <= 0) {
         VG_(umsg)("mapvis: error: could not write the trace file '%s'%s; "
                   "the trace is incomplete.\n", clo_trace_file,
                   n == -VKI_ENOSPC ? " because the disk is full" : "");
         VG_(close)(out_fd);
         out_fd = -1;
         break;
      }
      done += n;
   }
   bytes_written += done;
   buf_pos = BLOCK_HEADER_BYTES;
   last_flush_ms = VG_(read_millisecond_timer)();
}

/* The time half of the bound: called now and then, not per access. */
static void flush_if_old(void)
{
   if (buf_pos > BLOCK_HEADER_BYTES
       && VG_(read_millisecond_timer)() - last_flush_ms >= FLUSH_MS)
      flush_buf();
}

/* Make room for a record of at most n bytes. Called once per record,
   before its first byte: it may write the buffer out as a block, and a
   record must lie whole inside one block (the reader refuses one that runs
   past its block's end), so nothing that writes part of a record may call
   it again. */
static void ensure(UInt n)
{
   if (buf_pos + n + BUF_SLACK > BUF_SIZE || buf_pos >= FLUSH_AT) flush_buf();
   else if ((++n_records & 63) == 0) flush_if_old();
   tl_assert(buf_pos + n <= BUF_SIZE);
}

static __inline__ void put_u8(UChar b) { buf[buf_pos++] = b; }

static __inline__ void put_uv(ULong v)
{
   while (v >= 0x80) {
      buf[buf_pos++] = (UChar)(v | 0x80);
      v >>= 7;
   }
   buf[buf_pos++] = (UChar)v;
}

static __inline__ void put_sv(Long v)
{
   put_uv(((ULong)v << 1) ^ (ULong)(v >> 63));
}

/* Strings are length-prefixed and cut at `cap` bytes; the caller has made
   room for cap + 10 bytes in its record's ensure. */
static void put_str_cap(const HChar* s, UInt cap)
{
   UInt len = s ? VG_(strlen)(s) : 0;
   if (len > cap) len = cap;
   put_uv(len);
   if (len) VG_(memcpy)(buf + buf_pos, s, len);
   buf_pos += len;
}

/* Names and notes in records are cut at 4000 bytes; a record with a
   string asks ensure for STR_ROOM more bytes than its other fields. */
#define MAX_RECORD_STR 4000
#define STR_ROOM (MAX_RECORD_STR + 16)

static void put_str(const HChar* s)
{
   put_str_cap(s, MAX_RECORD_STR);
}

/*------------------------------------------------------------*/
/*--- Global state                                         ---*/
/*------------------------------------------------------------*/

static Bool  tracing;          /* a region is open */
static UInt  region_id;        /* id of the current or last region */
static ULong n_allocs;
static ULong n_frees;
static ULong n_regions;

/* Thread bookkeeping mirrored by the reader. Valgrind's thread ids are
   below VG_N_THREADS (--max-threads), so every thread has its slots; the
   arrays are sized in post_clo_init, once the option is known. */
static ThreadId emitted_tid = 0;     /* thread of the last access record */
/* Valgrind gives a new thread the slot (ThreadId) of one that exited, so
   the trace names threads by number instead: 1 for the main thread, then
   2, 3, ... in order of creation, never reused. Per-thread state stays by
   slot and is reset when a slot is reused (mv_thread_create). */
static UInt*    thread_no;           /* each slot's thread number */
static UInt     threads_numbered;    /* numbers given so far */
static ThreadId early_thread;        /* created before post_clo_init (main) */
static Addr*    last_sp;             /* last stack pointer sent, per thread */
static Addr*    last_fp;             /* last frame pointer (rbp) sent, per thread */

/*------------------------------------------------------------*/
/*--- Instruction counts and sync events (--sync-events)   ---*/
/*------------------------------------------------------------*/

/* The instrumentation adds every instruction executed to icount_all (one
   add per superblock exit, see add_count).  Threads run one at a time,
   so the instructions since the last thread switch belong to the thread
   that has been running: icount_of() credits them to it. */
static ULong    icount_all;
static ULong    icount_mark;             /* icount_all when it was last credited */
static ThreadId icount_tid;              /* the thread running since then */
/* Per thread, VG_N_THREADS slots each, allocated in post_clo_init. */
static ULong*    thread_icount;  /* instructions per thread */
static Bool*     thread_alive;   /* started and not yet exited */
static ThreadId* last_child;     /* the last thread each thread created */
static UWord*    pthread_of;     /* each thread's pthread_t, once known */

/* Threads not joined yet whose slot went to a new thread: their pthread_t
   and number, the newest last, so that a later join still names them.
   A ring: past UNJOINED such threads (detached ones are never joined)
   the oldest are forgotten and a join of one names no thread (0). */
#define UNJOINED 1024
static UWord unjoined_pt[UNJOINED];
static UInt  unjoined_no[UNJOINED];
static UInt  unjoined_next;

/* Keeps the pthread_t of the thread leaving slot `t`, if it had one and
   was not joined. */
static void keep_unjoined(ThreadId t)
{
   if (pthread_of == NULL || pthread_of[t] == 0) return;
   unjoined_pt[unjoined_next % UNJOINED] = pthread_of[t];
   unjoined_no[unjoined_next % UNJOINED] = thread_no[t];
   unjoined_next++;
}

/* The number of the kept thread with pthread_t `pt` (the newest one),
   forgotten once joined; 0 when none is kept. */
static UInt take_unjoined(UWord pt)
{
   UInt i, n = unjoined_next < UNJOINED ? unjoined_next : UNJOINED;
   for (i = 1; i <= n && pt != 0; i++) {
      UInt k = (unjoined_next - i) % UNJOINED;
      if (unjoined_pt[k] == pt) {
         unjoined_pt[k] = 0;
         return unjoined_no[k];
      }
   }
   return 0;
}

static void credit_icount(void)
{
   if (icount_tid > 0 && icount_tid < VG_N_THREADS)
      thread_icount[icount_tid] += icount_all - icount_mark;
   icount_mark = icount_all;
}

static void mv_start_client_code(ThreadId tid, ULong blocks_done)
{
   if (!clo_sync_events) return;
   credit_icount();
   icount_tid = tid;
}

/* Instructions thread tid has executed so far. */
static ULong icount_of(ThreadId tid)
{
   credit_icount();
   return tid < VG_N_THREADS ? thread_icount[tid] : 0;
}

/* The number the trace gives the thread in slot `tid` (see thread_no).
   Before post_clo_init numbers the threads (the main thread's creation
   record), the slot itself, which is the main thread's number 1; slot 0
   (no thread) stays 0. */
static ULong tno(ThreadId tid)
{
   return thread_no && tid < VG_N_THREADS && thread_no[tid] ? thread_no[tid] : tid;
}

/* SYNC: kind, thread, its instruction count, the object (a thread number or
   a mutex address). */
static void record_sync(UChar kind, ThreadId tid, ULong obj)
{
   ULong ic = icount_of(tid);
   ensure(48);
   put_uv(REC_SYNC);
   put_u8(kind);
   put_uv(tno(tid));
   put_uv(ic);
   put_uv(obj);
}

/* ICOUNT: the thread's instruction count at the heap event that follows. */
static void record_icount(ThreadId tid)
{
   ULong ic;
   if (!clo_sync_events) return;
   ic = icount_of(tid);
   ensure(32);
   put_uv(REC_ICOUNT);
   put_uv(tno(tid));
   put_uv(ic);
}

/* The Valgrind thread id of a pthread_t, or 0. */
static ThreadId tid_of_pthread(UWord pt)
{
   ThreadId t;
   for (t = 1; t < VG_N_THREADS; t++)
      if (pthread_of[t] == pt && pt != 0) return t;
   return 0;
}

/* A SYNC kind byte: the kind, with the primitive (SP_*) in its high
   bits; an unknown primitive is recorded as a mutex. */
static UChar sync_kind(UChar kind, UWord prim)
{
   if (prim > SP_SEM) prim = SP_MUTEX;
   return (UChar)(kind | (prim << SYNC_PRIM_SHIFT));
}

/* The requests of the pthread wrappers (mv_pthread.c). */
static Bool handle_sync_request(ThreadId tid, UWord* arg, UWord* ret)
{
   ThreadId t;
   *ret = 0;
   switch (arg[0]) {
      case MV_USERREQ__SYNC_ON:
         *ret = clo_sync_events ? 1 : 0;
         return True;
      case MV_USERREQ__CREATED:
         if (tid < VG_N_THREADS && last_child[tid] && last_child[tid] < VG_N_THREADS)
            pthread_of[last_child[tid]] = arg[1];
         return True;
      case MV_USERREQ__JOINED:
         /* A live slot first: a pthread_t can be used again once its
            thread was joined (or, detached, has exited). */
         t = tid_of_pthread(arg[1]);
         if (clo_sync_events)
            record_sync(SK_JOIN, tid, t ? tno(t) : take_unjoined(arg[1]));
         if (t) pthread_of[t] = 0;
         return True;
      case MV_USERREQ__ACQUIRED:
         if (clo_sync_events) record_sync(sync_kind(SK_ACQUIRE, arg[2]), tid, arg[1]);
         return True;
      case MV_USERREQ__RELEASING:
         if (clo_sync_events) record_sync(sync_kind(SK_RELEASE, arg[2]), tid, arg[1]);
         return True;
      case MV_USERREQ__SYNC_INIT:
         if (clo_sync_events) record_sync(sync_kind(SK_NEWSYNC, arg[2]), tid, arg[1]);
         return True;
      case MV_USERREQ__SYNC_DESTROY:
         if (clo_sync_events) record_sync(sync_kind(SK_DELSYNC, arg[2]), tid, arg[1]);
         return True;
      default:
         return False;
   }
}

/*------------------------------------------------------------*/
/*--- Sites: one memory operation of one instruction       ---*/
/*------------------------------------------------------------*/

typedef struct {
   Addr  ip;
   UInt  ordinal;     /* which memory operation of the instruction */
   UChar op;
   UInt  size;
   Addr  last;        /* prediction state, mirrored by the reader */
   Long  stride;
   UInt  code;        /* what its accesses' keys name (see recode()) */
   ULong count;       /* accesses since its count was last halved */
} Site;

static Site*  sites;
static UInt   n_sites;
static UInt   cap_sites;
static UInt*  site_hash;       /* open addressing: index+1, 0 = empty */
static UInt   cap_hash;
static UInt*  code_site;       /* code -> site id (as many as sites) */

/* A site whose code takes more than one byte becomes a candidate for a
   one-byte code after PROMOTE_AT accesses since its count was halved. */
#define PROMOTE_AT     256
#define MAX_CANDIDATES 64
static UInt   candidates[MAX_CANDIDATES];
static UInt   n_candidates;

static UInt hash_site(Addr ip, UInt ordinal, UChar op, UInt size)
{
   ULong h = (ULong)ip * 0x9E3779B97F4A7C15ULL;
   h ^= ((ULong)ordinal << 48) ^ ((ULong)op << 40) ^ ((ULong)size << 8);
   h ^= h >> 29;
   return (UInt)h;
}

static void rehash_sites(void)
{
   UInt i;
   UInt new_cap = cap_hash ? cap_hash * 2 : 4096;
   UInt* t = VG_(calloc)("mv.site_hash", new_cap, sizeof(UInt));
   for (i = 0; i < n_sites; i++) {
      UInt j = hash_site(sites[i].ip, sites[i].ordinal, sites[i].op,
                         sites[i].size) & (new_cap - 1);
      while (t[j]) j = (j + 1) & (new_cap - 1);
      t[j] = i + 1;
   }
   if (site_hash) VG_(free)(site_hash);
   site_hash = t;
   cap_hash = new_cap;
}

/* Called at instrumentation time: the id of a site, defining it in the
   stream (SITE record) the first time it is seen. */
static UInt site_id(Addr ip, UInt ordinal, UChar op, UInt size)
{
   UInt j;
   if (2 * (n_sites + 1) > cap_hash) rehash_sites();
   j = hash_site(ip, ordinal, op, size) & (cap_hash - 1);
   while (site_hash[j]) {
      Site* s = &sites[site_hash[j] - 1];
      if (s->ip == ip && s->ordinal == ordinal && s->op == op && s->size == size)
         return site_hash[j] - 1;
      j = (j + 1) & (cap_hash - 1);
   }
   if (n_sites == cap_sites) {
      cap_sites = cap_sites ? cap_sites * 2 : 4096;
      sites = VG_(realloc)("mv.sites", sites, cap_sites * sizeof(Site));
      code_site = VG_(realloc)("mv.code_site", code_site, cap_sites * sizeof(UInt));
   }
   sites[n_sites].code = n_sites;
   sites[n_sites].count = 0;
   code_site[n_sites] = n_sites;
   sites[n_sites].ip = ip;
   sites[n_sites].ordinal = ordinal;
   sites[n_sites].op = op;
   sites[n_sites].size = size;
   sites[n_sites].last = 0;
   sites[n_sites].stride = 0;
   site_hash[j] = n_sites + 1;

   ensure(64);
   put_uv(REC_SITE);
   put_uv(n_sites);
   put_uv(ip);
   put_u8(op);
   put_uv(size);
   return n_sites++;
}

/*------------------------------------------------------------*/
/*--- Live heap blocks                                     ---*/
/*------------------------------------------------------------*/

typedef struct _Block {
   struct _Block* next;
   UWord          key;      /* address */
   SizeT          size;
   /* The rest restates the block in a forked child's trace: 8 bytes per
      return address kept, at most --stack-depth of them. */
   UInt           tid;      /* the allocating thread's number (tno) */
   UChar          kind;
   /* Stores of its address still to report (PTR_STORE), 0 when none: a
      block allocated inside a region is reported until its address is
      stored outside a stack, or MAX_PTR_STACK_STORES times into stacks. */
   UChar          pending;
   ULong          serial;   /* allocation number, for the root snapshot */
   UInt           n_ips;
   Addr           ips[];    /* return addresses, innermost first */
} Block;

static VgHashTable* blocks;

/*------------------------------------------------------------*/
/*--- Where the program keeps new blocks' addresses         ---*/
/*------------------------------------------------------------*/

/* A block allocated inside a region is "pending" until the program
   stores its address somewhere that outlives a call: each 8-byte store of
   a pending block's address (its start, or 8 or 16 bytes in, where C++
   array cookies and aligning wrappers put the pointer they return) is
   announced by a PTR_STORE record before the store's access. A store into
   a heap block or static data ends the reports; stores into stacks (a
   helper's local, then its caller's) are reported up to
   MAX_PTR_STACK_STORES times, within PENDING_ACCESSES accesses of the
   allocation. The analysis names the block from these
   stores (docs/naming.md). Cost on the hot path: one subtraction and one
   compare per 8-byte store of a register value, against the span of the
   pending blocks, which is empty when none is pending. */
#define MAX_PTR_STACK_STORES 32
/* A block's address is looked for in the stores of the next this many
   accesses after its allocation (a helper returns it long before), and in
   those of at most MAX_PENDING blocks at once: the span stays narrow when
   a block's address never reaches a lasting place (a tree's root kept in
   a local), so other pointer stores rarely take the slow path. */
#define PENDING_ACCESSES 65536
#define MAX_PENDING      256
static UInt   n_pending;
static Addr   pend_lo = ~(Addr)0;   /* lowest pending start, minus 16 */
static Addr   pend_span;            /* pend_hi - pend_lo, 0 when none */
static Block* pend_list[MAX_PENDING];
static ULong  pend_since[MAX_PENDING];  /* n_accesses at its allocation */
static UInt   n_pend_list;
static ULong  alloc_serial;         /* blocks allocated so far */
static ULong  snap_serial;          /* alloc_serial at the last snapshot */
static ULong  n_accesses;

/* A block stops being pending. It leaves the list at once: the program
   may free it, and the list must never point at freed memory (a stale
   pointer there once wrote into memory reused for the site table). Cost:
   the list's length, once per pending block. */
static void pending_done(Block* b)
{
   UInt i;
   if (!b->pending) return;
   b->pending = 0;
   for (i = 0; i < n_pend_list; i++)
      if (pend_list[i] == b) pend_list[i] = NULL;
   if (--n_pending == 0) { pend_lo = ~(Addr)0; pend_span = 0; n_pend_list = 0; }
}

/* Drops the blocks that are no longer pending or have waited too long
   (and the oldest when the list is full), and makes the span that of the
   rest. Cost: the list's length. */
static void pending_expire(void)
{
   UInt i, k = 0, n = n_pend_list;
   Addr lo = ~(Addr)0, hi = 0;
   for (i = 0; i < n; i++) {
      Block* b = pend_list[i];
      if (!b) continue;
      if (b->pending && n_accesses - pend_since[i] > PENDING_ACCESSES)
         pending_done(b);
      if (!b->pending) continue;
      pend_list[k] = b;
      pend_since[k] = pend_since[i];
      k++;
      if (b->key - 16 < lo) lo = b->key >= 16 ? b->key - 16 : 0;
      if (b->key + 1 > hi) hi = b->key + 1;
   }
   n_pend_list = k;
   if (k == 0) { pend_lo = ~(Addr)0; pend_span = 0; }
   else { pend_lo = lo; pend_span = hi - lo; }
}

static void pending_add(Block* b)
{
   Addr lo = b->key >= 16 ? b->key - 16 : 0, hi = b->key + 1;
   Addr cur_hi;
   if (n_pend_list == MAX_PENDING || (alloc_serial & 63) == 0) pending_expire();
   if (n_pend_list == MAX_PENDING) {
      /* Still full: the oldest gives way. */
      if (pend_list[0]) pending_done(pend_list[0]);
      VG_(memmove)(pend_list, pend_list + 1, (MAX_PENDING - 1) * sizeof(Block*));
      VG_(memmove)(pend_since, pend_since + 1, (MAX_PENDING - 1) * sizeof(ULong));
      n_pend_list = MAX_PENDING - 1;
   }
   cur_hi = pend_lo + pend_span;
   if (n_pend_list == 0) { pend_lo = lo; cur_hi = hi; }
   if (lo < pend_lo) pend_lo = lo;
   if (hi > cur_hi) cur_hi = hi;
   pend_span = cur_hi - pend_lo;
   b->pending = MAX_PTR_STACK_STORES;
   n_pending++;
   pend_list[n_pend_list] = b;
   pend_since[n_pend_list] = n_accesses;
   n_pend_list++;
}

/* A pending block is freed: it leaves the list. */
static void pending_forget(Block* b)
{
   pending_done(b);
}

/* Sorted interval index of live blocks, rebuilt lazily, used only with
   --heap-only=yes. */
static Addr*  iv_start;
static Addr*  iv_end;
static UInt   iv_n;
static Bool   iv_dirty = True;

static Int cmp_addr(const void* a, const void* b)
{
   Addr x = *(const Addr*)a, y = *(const Addr*)b;
   return x < y ? -1 : x > y ? 1 : 0;
}

static void rebuild_intervals(void)
{
   UInt n = VG_(HT_count_nodes)(blocks), i = 0;
   Block* b;
   Addr* tmp;
   if (iv_start) { VG_(free)(iv_start); VG_(free)(iv_end); }
   iv_start = VG_(malloc)("mv.iv", (n + 1) * sizeof(Addr));
   iv_end   = VG_(malloc)("mv.iv", (n + 1) * sizeof(Addr));
   tmp      = VG_(malloc)("mv.iv", (n + 1) * 2 * sizeof(Addr));
   VG_(HT_ResetIter)(blocks);
   while ((b = VG_(HT_Next)(blocks)) != NULL) {
      tmp[2 * i] = b->key;
      tmp[2 * i + 1] = b->key + b->size;
      i++;
   }
   /* sort pairs by start */
   VG_(ssort)(tmp, n, 2 * sizeof(Addr), cmp_addr);
   for (i = 0; i < n; i++) { iv_start[i] = tmp[2 * i]; iv_end[i] = tmp[2 * i + 1]; }
   VG_(free)(tmp);
   iv_n = n;
   iv_dirty = False;
}

static Bool in_heap_block(Addr a)
{
   UInt lo = 0, hi;
   if (iv_dirty) rebuild_intervals();
   hi = iv_n;
   while (lo < hi) {
      UInt mid = (lo + hi) / 2;
      if (iv_start[mid] <= a) lo = mid + 1; else hi = mid;
   }
   return lo > 0 && a < iv_end[lo - 1];
}

/*------------------------------------------------------------*/
/*--- The access helper (hot path)                         ---*/
/*------------------------------------------------------------*/

static void emit_thread_and_sp(ThreadId tid, Addr sp, Addr fp)
{
   if (tid != emitted_tid) {
      put_uv(REC_THREAD);
      put_uv(tno(tid));
      emitted_tid = tid;
   }
   if (sp != last_sp[tid]) {
      put_uv(REC_SP);
      put_sv((Long)(sp - last_sp[tid]));
      last_sp[tid] = sp;
   }
   if (fp != last_fp[tid]) {
      put_uv(REC_FP);
      put_sv((Long)(fp - last_fp[tid]));
      last_fp[tid] = fp;
   }
}

/* Gives codes a and b each other's site, and says so in the stream. */
static void swap_codes(UInt a, UInt b)
{
   UInt sa = code_site[a], sb = code_site[b];
   code_site[a] = sb;
   code_site[b] = sa;
   sites[sa].code = b;
   sites[sb].code = a;
   ensure(24);
   put_uv(REC_RECODE);
   put_uv(a);
   put_uv(b);
}

/* Gives each candidate (a site with a longer code that was accessed
   PROMOTE_AT times since its count was last halved) the one-byte code of
   the least used site holding one, when the candidate was used more than
   twice as often; then halves the counts of the candidates and of the
   one-byte codes' sites, so counts follow what the program does now.
   Runs every 4096 accesses while there are candidates: the keys of a loop's
   sites take one byte once the loop has run a little, whatever code ran
   before it in the region (a lazy binding inside the region defines
   hundreds of sites first). Cost: 48 counts read per candidate. */
static void recode(void)
{
   UInt i, k, hot = n_sites < HOT_CODES ? n_sites : HOT_CODES;
   for (k = 0; k < n_candidates; k++) {
      Site* c = &sites[candidates[k]];
      UInt cold = 0;
      ULong least = ~0ULL;
      if (c->code >= HOT_CODES) {
         for (i = 0; i < hot; i++) {
            ULong n = sites[code_site[i]].count;
            if (n < least) {
               least = n;
               cold = i;
            }
         }
         if (c->count > 2 * least) swap_codes(cold, c->code);
      }
      c->count /= 2;
   }
   n_candidates = 0;
   for (i = 0; i < hot; i++) sites[code_site[i]].count /= 2;
}

static void mv_access(UWord id, Addr addr, Addr sp, Addr fp)
{
   Site* s = &sites[id];
   ThreadId tid = VG_(get_running_tid)();
   Addr predicted;

   if (UNLIKELY(mv_rg_gate) && !mv_rg_on[tid]) {
      if (UNLIKELY(mv_win_on)) mv_win_run++;
      return;
   }
   if (UNLIKELY(clo_heap_only) && !in_heap_block(addr)) return;
   if (UNLIKELY(tid != emitted_tid
                || sp != last_sp[tid] || fp != last_fp[tid]))
      emit_thread_and_sp(tid, sp, fp);

   predicted = s->last + s->stride;
   if (LIKELY(addr == predicted)) {
      put_uv(KEY_ACCESS_BASE + 2 * (ULong)s->code);
   } else {
      put_uv(KEY_ACCESS_BASE + 2 * (ULong)s->code + 1);
      put_sv((Long)(addr - predicted));
      s->stride = (Long)(addr - s->last);
   }
   s->last = addr;
   if (UNLIKELY(++s->count == PROMOTE_AT) && s->code >= HOT_CODES) {
      if (n_candidates < MAX_CANDIDATES) candidates[n_candidates++] = id;
      else s->count = PROMOTE_AT / 2;   /* the list is full: noted later */
   }
   n_accesses++;
   if (UNLIKELY(mv_win_on)) mv_win_recorded(tid);
   if (UNLIKELY(buf_pos >= FLUSH_AT)) flush_buf();
   else if (UNLIKELY((n_accesses & 4095) == 0)) flush_if_old();
   if (UNLIKELY((n_accesses & 4095) == 0) && n_candidates) recode();
}

/* A pending block whose start is `v`, 8 or 16 bytes before it (the
   pointer a C++ array `new` or an aligning wrapper hands out), or NULL. */
static Block* pending_at(Addr v, Addr* off)
{
   UInt k;
   for (k = 0; k <= 16; k += 8) {
      Block* b = v >= k ? VG_(HT_lookup)(blocks, v - k) : NULL;
      if (b && b->pending && k < b->size) { *off = k; return b; }
   }
   return NULL;
}

/* The slow path of an 8-byte store of a value inside the pending span:
   writes PTR_STORE (before the store's own access record) when the value
   is a pending block's address. */
static void note_ptr_store(ThreadId tid, Addr addr, Addr sp, UWord value)
{
   Addr off = 0, top;
   Block* b = pending_at(value, &off);
   if (!b) return;
   ensure(32);
   put_uv(REC_PTR_STORE);
   put_uv(b->key);
   put_uv(off);
   /* Into this thread's stack (at or above its red zone): a local, which
      may be a helper's that dies when the helper returns. */
   top = VG_(thread_get_stack_max)(tid);
   if (addr + 128 >= sp && addr <= top) {
      /* The last stack store ends it through pending_done, which
         counts it out of n_pending. */
      if (b->pending == 1) pending_done(b);
      else b->pending--;
   } else {
      pending_done(b);
   }
}

/* mv_access for an 8-byte store of a register's value: first reports the
   store of a pending block's address (see pending_add). */
static void mv_access_ptr(UWord id, Addr addr, Addr sp, Addr fp, UWord value)
{
   if (UNLIKELY(value - pend_lo < pend_span)) {
      ThreadId tid = VG_(get_running_tid)();
      if (!(UNLIKELY(clo_heap_only) && !in_heap_block(addr))
          && !(UNLIKELY(mv_rg_gate) && !mv_rg_on[tid])) {
         if (UNLIKELY(tid != emitted_tid
                      || sp != last_sp[tid] || fp != last_fp[tid]))
            emit_thread_and_sp(tid, sp, fp);
         note_ptr_store(tid, addr, sp, value);
      }
   }
   mv_access(id, addr, sp, fp);
}

/*------------------------------------------------------------*/
/*--- Instrumentation                                      ---*/
/*------------------------------------------------------------*/

/* Memory events of the current guest instruction, emitted together when
   the instruction ends, so that a load and a store of the same place by
   the same instruction can be merged into one modify. */
#define MAX_EVENTS 16

typedef struct {
   UChar   op;
   IRExpr* addr;
   Int     size;
   IRExpr* guard;   /* NULL: unconditional */
   IRExpr* data;    /* an 8-byte store's value (a temporary), or NULL */
} Event;

static Event   events[MAX_EVENTS];
static Int     n_events;
static Addr    cur_ip;
static UInt    cur_ordinal;
static ULong   n_instrs;        /* instructions not yet added to icount_all */
static IRTemp  cur_sp_tmp;
static IRTemp  cur_fp_tmp;
/* Accesses of the superblock not yet added to mv_win_run (windows). */
static ULong   n_win_events;
/* The current instruction is in a code region's ranges (mv_region.c):
   its accesses are instrumented even while no thread is traced. */
static Bool    cur_in_region;

static void flush_events(IRSB* sb)
{
   Int i;
   if (!tracing && !cur_in_region) {
      /* Windows: outside them the accesses are only counted. */
      n_win_events += n_events;
      n_events = 0;
      return;
   }
   for (i = 0; i < n_events; i++) {
      Event* ev = &events[i];
      UInt id = site_id(cur_ip, cur_ordinal++, ev->op, ev->size);
      IRDirty* di;
      if (ev->data && ev->op == OP_STORE) {
         IRExpr** args = mkIRExprVec_5(mkIRExpr_HWord(id), ev->addr,
                                       IRExpr_RdTmp(cur_sp_tmp),
                                       IRExpr_RdTmp(cur_fp_tmp), ev->data);
         di = unsafeIRDirty_0_N(0, "mv_access_ptr",
                                VG_(fnptr_to_fnentry)(&mv_access_ptr), args);
      } else {
         IRExpr** args = mkIRExprVec_4(mkIRExpr_HWord(id), ev->addr,
                                       IRExpr_RdTmp(cur_sp_tmp),
                                       IRExpr_RdTmp(cur_fp_tmp));
         di = unsafeIRDirty_0_N(0, "mv_access",
                                VG_(fnptr_to_fnentry)(&mv_access), args);
      }
      if (ev->guard) di->guard = ev->guard;
      addStmtToIRSB(sb, IRStmt_Dirty(di));
   }
   n_events = 0;
}

/* Adds the instructions seen since the last add to icount_all: before
   each side exit and at the end of the superblock, so every executed
   instruction is counted once whichever way the block is left. */
/* Adds `n` to the 64-bit counter at `counter` (a load, an add, a store);
   returns the temporary holding the new value. */
static IRTemp add_to_counter(IRSB* sb, ULong* counter, ULong n)
{
   IRTemp old = newIRTemp(sb->tyenv, Ity_I64);
   IRTemp sum = newIRTemp(sb->tyenv, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64,
                                                  mkIRExpr_HWord((HWord)counter))));
   addStmtToIRSB(sb, IRStmt_WrTmp(sum, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old),
                                        IRExpr_Const(IRConst_U64(n)))));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)counter),
                                  IRExpr_RdTmp(sum)));
   return sum;
}

static void add_count(IRSB* sb)
{
   if (!clo_sync_events || n_instrs == 0) return;
   add_to_counter(sb, &icount_all, n_instrs);
   n_instrs = 0;
}

static void add_event_data(IRSB* sb, UChar op, IRExpr* addr, Int size,
                           IRExpr* guard, IRExpr* data);

/* Windows: adds the accesses counted since the last add to mv_win_run, and
   opens a window (mv_win_cross) when that reaches mv_win_next; before each
   side exit and at the end, as add_count. A guarded access is counted
   whether or not it happens, so a window may open a few accesses after
   its nominal start; inside a window the helper counts exactly. */
static void add_window_count(IRSB* sb)
{
   IRTemp sum, next, cross;
   IRDirty* di;
   if (!mv_win_on || n_win_events == 0) return;
   sum = add_to_counter(sb, &mv_win_run, n_win_events);
   next = newIRTemp(sb->tyenv, Ity_I64);
   cross = newIRTemp(sb->tyenv, Ity_I1);
   addStmtToIRSB(sb, IRStmt_WrTmp(next, IRExpr_Load(Iend_LE, Ity_I64,
                                        mkIRExpr_HWord((HWord)&mv_win_next))));
   addStmtToIRSB(sb, IRStmt_WrTmp(cross, IRExpr_Binop(Iop_CmpLE64U, IRExpr_RdTmp(next),
                                                     IRExpr_RdTmp(sum))));
   di = unsafeIRDirty_0_N(0, "mv_win_cross", VG_(fnptr_to_fnentry)(&mv_win_cross),
                          mkIRExprVec_0());
   di->guard = IRExpr_RdTmp(cross);
   addStmtToIRSB(sb, IRStmt_Dirty(di));
   n_win_events = 0;
}

static void add_event(IRSB* sb, UChar op, IRExpr* addr, Int size, IRExpr* guard)
{
   add_event_data(sb, op, addr, size, guard, NULL);
}

/* add_event, with the stored value of an unconditional 8-byte store of a
   temporary (NULL otherwise), for PTR_STORE. */
static void add_event_data(IRSB* sb, UChar op, IRExpr* addr, Int size,
                           IRExpr* guard, IRExpr* data)
{
   tl_assert(isIRAtom(addr));
   if (size <= 0 || !(tracing || cur_in_region || mv_win_on)) return;  /* counting instructions only */
   if (op == OP_STORE && guard == NULL && n_events > 0) {
      Event* prev = &events[n_events - 1];
      if (prev->op == OP_LOAD && prev->size == size && prev->guard == NULL
          && eqIRAtom(prev->addr, addr)) {
         prev->op = OP_MODIFY;
         return;
      }
   }
   if (n_events == MAX_EVENTS) flush_events(sb);
   events[n_events].op = op;
   events[n_events].addr = addr;
   events[n_events].size = size;
   events[n_events].guard = guard;
   events[n_events].data = data;
   n_events++;
}

/* Does the statement touch memory (so its instruction needs the SP)? */
static Bool stmt_accesses_memory(IRStmt* st)
{
   switch (st->tag) {
      case Ist_WrTmp: return st->Ist.WrTmp.data->tag == Iex_Load;
      case Ist_Store: case Ist_StoreG: case Ist_LoadG:
      case Ist_CAS: case Ist_LLSC: return True;
      case Ist_Dirty: return st->Ist.Dirty.details->mFx != Ifx_None;
      default: return False;
   }
}

/*------------------------------------------------------------*/
/*--- Stack allocations (VLAs, alloca)                     ---*/
/*------------------------------------------------------------*/

/* A drop of the stack pointer larger than this is a switch to another
   stack (a coroutine, longjmp into a lower frame), not an allocation. */
#define STACK_ALLOC_MAX ((Addr)256 << 20)

/* Called, guarded by new < old, when an instruction sets the stack
   pointer to a value the instrumenter could not prove to be the old one
   plus a constant: a variable-length array or an alloca block
   (`sub rsp, rax`). Written outside regions too, since the array is
   usually declared before GL_START. */
static void mv_sp_drop(Addr old, Addr new_sp, Addr fp, Addr ip)
{
   ThreadId tid = VG_(get_running_tid)();
   if (old - new_sp > STACK_ALLOC_MAX) return;
   ensure(64);
   put_uv(REC_STACK_ALLOC);
   put_uv(tno(tid));
   put_uv(ip);
   put_uv(new_sp);
   put_uv(old - new_sp);
   put_uv(fp);
}

/* Temporaries known to hold the stack pointer plus a constant, as
   Valgrind's own stack-tracking pass (m_translate.c) tells them apart:
   a `GET(rsp)` and Add64/Sub64 of one of them and a constant. Sized per
   superblock. */
static Bool*  sp_rel;
static Int    sp_rel_size;
/* Per temporary: the expression that defined it and the instruction it
   belongs to, so that a stack pointer computed over several instructions
   (Valgrind's optimiser keeps only the last PUT of rsp before a memory
   access) can be walked back to each instruction that moved it. */
static IRExpr** tmp_def;
static Addr*    tmp_ip;

static void sp_rel_reset(Int n_temps)
{
   Int i;
   if (n_temps > sp_rel_size) {
      if (sp_rel) {
         VG_(free)(sp_rel);
         VG_(free)(tmp_def);
         VG_(free)(tmp_ip);
      }
      sp_rel_size = n_temps * 2;
      sp_rel = VG_(malloc)("mv.sprel", sp_rel_size * sizeof(Bool));
      tmp_def = VG_(malloc)("mv.tmpdef", sp_rel_size * sizeof(IRExpr*));
      tmp_ip = VG_(malloc)("mv.tmpip", sp_rel_size * sizeof(Addr));
   }
   for (i = 0; i < n_temps; i++) {
      sp_rel[i] = False;
      tmp_def[i] = NULL;
   }
}

static Bool is_sp_rel_atom(IRExpr* e)
{
   return e->tag == Iex_RdTmp && e->Iex.RdTmp.tmp < sp_rel_size
          && sp_rel[e->Iex.RdTmp.tmp];
}

/* Notes whether `t = data` is the stack pointer plus a constant. */
static void note_sp_rel(IRTemp t, IRExpr* data)
{
   Bool rel = False;
   if (data->tag == Iex_Get && data->Iex.Get.offset == OFFSET_amd64_RSP
       && data->Iex.Get.ty == Ity_I64)
      rel = True;
   else if (data->tag == Iex_RdTmp)
      rel = is_sp_rel_atom(data);
   else if (data->tag == Iex_Binop
            && (data->Iex.Binop.op == Iop_Add64 || data->Iex.Binop.op == Iop_Sub64)
            && data->Iex.Binop.arg2->tag == Iex_Const)
      rel = is_sp_rel_atom(data->Iex.Binop.arg1);
   if (t < sp_rel_size) {
      sp_rel[t] = rel;
      tmp_def[t] = data;
      tmp_ip[t] = cur_ip;
   }
}

/* The definition of temporary `e` when it is `Op(tmp, x)`, else NULL. */
static IRExpr* binop_on_tmp(IRExpr* e)
{
   IRExpr* d;
   if (e->tag != Iex_RdTmp || e->Iex.RdTmp.tmp >= sp_rel_size) return NULL;
   d = tmp_def[e->Iex.RdTmp.tmp];
   if (!d || d->tag != Iex_Binop || d->Iex.Binop.arg1->tag != Iex_RdTmp) return NULL;
   return d;
}

/* Adds the guarded call of mv_sp_drop for one instruction at `ip` that
   moved the stack pointer from `old` to `now`. */
static void add_sp_drop(IRSB* sbOut, IRExpr* old, IRExpr* now, IRTemp fp, Addr ip)
{
   IRTemp guard = newIRTemp(sbOut->tyenv, Ity_I1);
   IRDirty* di;
   addStmtToIRSB(sbOut, IRStmt_WrTmp(guard, IRExpr_Binop(Iop_CmpLT64U, now, old)));
   di = unsafeIRDirty_0_N(0, "mv_sp_drop", VG_(fnptr_to_fnentry)(&mv_sp_drop),
                          mkIRExprVec_4(old, now, IRExpr_RdTmp(fp), mkIRExpr_HWord(ip)));
   di->guard = IRExpr_RdTmp(guard);
   addStmtToIRSB(sbOut, IRStmt_Dirty(di));
}

/* Instruments `PUT(rsp) = data` when data is not the stack pointer plus
   a constant. The value is walked back through the subtractions of a
   computed amount that made it (each an instruction such as
   `sub rsp, rax`, one per array when several are made in a row), passing
   over constant adjustments and alignments; each gets a call of
   mv_sp_drop, in program order, when it moved the pointer down. A value
   that is no such chain (a `leave`, a load) is one step from the old
   pointer. */
#define MAX_SP_STEPS 16
static void instrument_sp_put(IRSB* sbOut, IRStmt* put)
{
   IRExpr* data = put->Ist.Put.data;
   IRExpr* at = data;
   IRExpr *olds[MAX_SP_STEPS], *nows[MAX_SP_STEPS];
   Addr ips[MAX_SP_STEPS];
   Int n = 0, k;
   IRTemp old, fp;
   if (put->Ist.Put.offset != OFFSET_amd64_RSP || is_sp_rel_atom(data)
       || data->tag == Iex_Const || typeOfIRExpr(sbOut->tyenv, data) != Ity_I64) {
      addStmtToIRSB(sbOut, put);
      return;
   }
   old = newIRTemp(sbOut->tyenv, Ity_I64);
   fp = newIRTemp(sbOut->tyenv, Ity_I64);
   addStmtToIRSB(sbOut, IRStmt_WrTmp(old, IRExpr_Get(OFFSET_amd64_RSP, Ity_I64)));
   addStmtToIRSB(sbOut, IRStmt_WrTmp(fp, IRExpr_Get(OFFSET_amd64_RBP, Ity_I64)));
   addStmtToIRSB(sbOut, put);
   while (n < MAX_SP_STEPS) {
      IRExpr* d = binop_on_tmp(at);
      IROp op;
      if (!d || is_sp_rel_atom(at)) break;
      op = d->Iex.Binop.op;
      if (op == Iop_Sub64 && d->Iex.Binop.arg2->tag != Iex_Const) {
         olds[n] = d->Iex.Binop.arg1;
         nows[n] = at;
         ips[n] = tmp_ip[at->Iex.RdTmp.tmp];
         n++;
      } else if (!((op == Iop_Add64 || op == Iop_Sub64 || op == Iop_And64)
                   && d->Iex.Binop.arg2->tag == Iex_Const)) {
         break;
      }
      at = d->Iex.Binop.arg1;
   }
   /* The chain must start from the stack pointer as the block found it;
      otherwise the whole move is one step at this instruction. */
   if (n == 0 || !is_sp_rel_atom(at))
      add_sp_drop(sbOut, IRExpr_RdTmp(old), data, fp, cur_ip);
   else
      for (k = n - 1; k >= 0; k--) add_sp_drop(sbOut, olds[k], nows[k], fp, ips[k]);
   /* From here on the value is the stack pointer itself: a later PUT
      computed from it walks back to here, not past it. */
   if (data->tag == Iex_RdTmp && data->Iex.RdTmp.tmp < sp_rel_size)
      sp_rel[data->Iex.RdTmp.tmp] = True;
}

static IRSB* mv_instrument(VgCallbackClosure* closure, IRSB* sbIn,
                           const VexGuestLayout* layout,
                           const VexGuestExtents* vge,
                           const VexArchInfo* archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
   IRSB* sbOut;
   Int i, j;

   /* Outside regions only stack allocations are instrumented (no
      accesses): a guarded call at each SP update of unknown size. */
   if (gWordTy != hWordTy) VG_(tool_panic)("host/guest word size mismatch");
   sp_rel_reset(sbIn->tyenv->types_used);

   sbOut = deepCopyIRSBExceptStmts(sbIn);
   i = 0;
   while (i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark) {
      addStmtToIRSB(sbOut, sbIn->stmts[i]);
      i++;
   }
   n_events = 0;
   n_instrs = 0;
   n_win_events = 0;
   cur_ip = 0;
   cur_in_region = False;
   mv_rg_prepare();

   for (; i < sbIn->stmts_used; i++) {
      IRStmt* st = sbIn->stmts[i];
      if (!st || st->tag == Ist_NoOp) continue;

      switch (st->tag) {
         case Ist_IMark: {
            Bool touches = False;
            Bool first = cur_ip == 0;
            Bool was_in = cur_in_region;
            flush_events(sbOut);
            addStmtToIRSB(sbOut, st);
            cur_ip = st->Ist.IMark.addr + st->Ist.IMark.delta;
            cur_ordinal = 0;
            n_instrs++;
            if (mv_rg_gate && first)
               mv_rg_add_epoch_check(sbOut, st->Ist.IMark.addr);
            if (mv_rg_gate) {
               /* Where execution passes into a code region's ranges, or
                  (while a thread is inside) out of them. */
               cur_in_region = mv_rg_in(st->Ist.IMark.addr);
               if (cur_in_region && (first || !was_in))
                  mv_rg_add_call(sbOut, st->Ist.IMark.addr, True);
               else if (!cur_in_region && (first || was_in) && mv_rg_checking())
                  mv_rg_add_call(sbOut, st->Ist.IMark.addr, False);
            }
            for (j = i + 1; (tracing || cur_in_region) && j < sbIn->stmts_used
                            && sbIn->stmts[j]->tag != Ist_IMark; j++)
               if (stmt_accesses_memory(sbIn->stmts[j])) { touches = True; break; }
            if (touches) {
               /* The stack pointer before this instruction executes. */
               cur_sp_tmp = newIRTemp(sbOut->tyenv, Ity_I64);
               addStmtToIRSB(sbOut, IRStmt_WrTmp(cur_sp_tmp,
                               IRExpr_Get(OFFSET_amd64_RSP, Ity_I64)));
               /* And the frame pointer, which makes the CFA exact at -O0. */
               cur_fp_tmp = newIRTemp(sbOut->tyenv, Ity_I64);
               addStmtToIRSB(sbOut, IRStmt_WrTmp(cur_fp_tmp,
                               IRExpr_Get(OFFSET_amd64_RBP, Ity_I64)));
            }
            break;
         }
         case Ist_Put:
            instrument_sp_put(sbOut, st);
            break;
         case Ist_WrTmp: {
            IRExpr* data = st->Ist.WrTmp.data;
            note_sp_rel(st->Ist.WrTmp.tmp, data);
            addStmtToIRSB(sbOut, st);
            if (data->tag == Iex_Load)
               add_event(sbOut, OP_LOAD, data->Iex.Load.addr,
                         sizeofIRType(data->Iex.Load.ty), NULL);
            break;
         }
         case Ist_Store: {
            IRExpr* data = st->Ist.Store.data;
            IRType ty = typeOfIRExpr(sbIn->tyenv, data);
            addStmtToIRSB(sbOut, st);
            add_event_data(sbOut, OP_STORE, st->Ist.Store.addr, sizeofIRType(ty),
                           NULL, ty == Ity_I64 && data->tag == Iex_RdTmp
                                 && !clo_heap_only ? data : NULL);
            break;
         }
         case Ist_StoreG: {
            IRStoreG* sg = st->Ist.StoreG.details;
            addStmtToIRSB(sbOut, st);
            add_event(sbOut, OP_STORE, sg->addr,
                      sizeofIRType(typeOfIRExpr(sbIn->tyenv, sg->data)), sg->guard);
            break;
         }
         case Ist_LoadG: {
            IRLoadG* lg = st->Ist.LoadG.details;
            IRType ty = Ity_INVALID, ty_wide = Ity_INVALID;
            typeOfIRLoadGOp(lg->cvt, &ty_wide, &ty);
            addStmtToIRSB(sbOut, st);
            add_event(sbOut, OP_LOAD, lg->addr, sizeofIRType(ty), lg->guard);
            break;
         }
         case Ist_Dirty: {
            IRDirty* d = st->Ist.Dirty.details;
            addStmtToIRSB(sbOut, st);
            if (d->mFx != Ifx_None) {
               tl_assert(d->mAddr != NULL && d->mSize != 0);
               if (d->mFx == Ifx_Read)
                  add_event(sbOut, OP_LOAD, d->mAddr, d->mSize, NULL);
               else if (d->mFx == Ifx_Write)
                  add_event(sbOut, OP_STORE, d->mAddr, d->mSize, NULL);
               else {
                  add_event(sbOut, OP_LOAD, d->mAddr, d->mSize, NULL);
                  add_event(sbOut, OP_STORE, d->mAddr, d->mSize, NULL);
               }
            }
            break;
         }
         case Ist_CAS: {
            IRCAS* cas = st->Ist.CAS.details;
            Int sz = sizeofIRType(typeOfIRExpr(sbIn->tyenv, cas->dataLo));
            if (cas->dataHi != NULL) sz *= 2;
            addStmtToIRSB(sbOut, st);
            add_event(sbOut, OP_LOAD, cas->addr, sz, NULL);
            add_event(sbOut, OP_STORE, cas->addr, sz, NULL);
            break;
         }
         case Ist_LLSC: {
            IRType ty;
            addStmtToIRSB(sbOut, st);
            if (st->Ist.LLSC.storedata == NULL) {
               ty = typeOfIRTemp(sbIn->tyenv, st->Ist.LLSC.result);
               add_event(sbOut, OP_LOAD, st->Ist.LLSC.addr, sizeofIRType(ty), NULL);
            } else {
               ty = typeOfIRExpr(sbIn->tyenv, st->Ist.LLSC.storedata);
               add_event(sbOut, OP_STORE, st->Ist.LLSC.addr, sizeofIRType(ty), NULL);
            }
            break;
         }
         case Ist_Exit:
            /* A side exit leaves the block: emit what happened before it. */
            flush_events(sbOut);
            add_count(sbOut);
            add_window_count(sbOut);
            addStmtToIRSB(sbOut, st);
            break;
         default:
            addStmtToIRSB(sbOut, st);
            break;
      }
   }
   flush_events(sbOut);
   add_count(sbOut);
   add_window_count(sbOut);
   return sbOut;
}

/*------------------------------------------------------------*/
/*--- Heap events                                          ---*/
/*------------------------------------------------------------*/

/* The call stack of a heap event of `tid` into ips[0..n), n returned:
   the caller of the replacement function first (ips[0] as Valgrind gives
   it is inside the replacement function in the preload). `ips` has room
   for clo_stack_depth + 1 entries. */
static UInt heap_callers(ThreadId tid, Addr* ips)
{
   UInt n = VG_(get_StackTrace)(tid, ips, clo_stack_depth + 1, NULL, NULL, 0), k;
   if (n == 0) return 0;
   for (k = 1; k < n; k++) ips[k - 1] = ips[k];
   return n - 1;
}

/* A call stack: its frame count, then its n frames, inside a record
   whose ensure() counted 10 bytes a frame (the widest varint). The one
   writer of the call stacks of ALLOC, FREE and MMAP records. */
static void put_ips(UInt n, const Addr* ips)
{
   UInt k;
   put_uv(n);
   for (k = 0; k < n; k++) put_uv(ips[k]);
}

/* ALLOC of thread number `thread` (tno). */
static void put_alloc(UChar kind, ULong thread, Addr a, SizeT size, Addr old,
                      UInt n, const Addr* ips)
{
   ensure(64 + 10 * n);
   put_uv(REC_ALLOC);
   put_u8(kind);
   put_uv(thread);
   put_uv(a);
   put_uv(size);
   put_uv(old);
   put_ips(n, ips);
}

static void record_alloc(ThreadId tid, UChar kind, Addr a, SizeT size, Addr old)
{
   Addr ips[65];
   UInt n = heap_callers(tid, ips), k;
   Block* b;
   b = VG_(malloc)("mv.block", sizeof(Block) + n * sizeof(Addr));
   b->key = a;
   b->size = size;
   b->tid = tno(tid);
   b->kind = kind;
   b->n_ips = n;
   b->pending = 0;
   b->serial = ++alloc_serial;
   for (k = 0; k < n; k++) b->ips[k] = ips[k];
   VG_(HT_add_node)(blocks, b);
   if (tracing && !(mv_rg_gate && !mv_rg_on[tid])) pending_add(b);
   iv_dirty = True;
   n_allocs++;
   record_icount(tid);
   put_alloc(kind, b->tid, a, size, old, n, b->ips);
}

/* Returns the size of the removed block, or -1 if none was live. */
static SSizeT forget_block(Addr a)
{
   Block* b = VG_(HT_remove)(blocks, a);
   SSizeT size;
   if (!b) return -1;
   size = b->size;
   pending_forget(b);
   VG_(free)(b);
   iv_dirty = True;
   return size;
}

static void record_free(ThreadId tid, UChar kind, Addr a)
{
   Addr ips[65];
   UInt n = heap_callers(tid, ips);
   n_frees++;
   record_icount(tid);
   ensure(48 + 10 * n);
   put_uv(REC_FREE);
   put_u8(kind);
   put_uv(tno(tid));
   put_uv(a);
   put_ips(n, ips);
}

static void* new_block(ThreadId tid, SizeT n, SizeT align, Bool zero, UChar kind)
{
   void* p;
   if ((SSizeT)n < 0) return NULL;
   p = VG_(cli_malloc)(align, n);
   if (!p) return NULL;
   if (zero) VG_(memset)(p, 0, n);
   record_alloc(tid, kind, (Addr)p, n, 0);
   return p;
}

static void free_block(ThreadId tid, void* p, UChar kind)
{
   if (!p) return;
   if (forget_block((Addr)p) < 0) {
      warn(W_BAD_FREE, "free of an address that is not a live heap block");
      return;
   }
   record_free(tid, kind, (Addr)p);
   VG_(cli_free)(p);
}

static void* mv_malloc(ThreadId tid, SizeT n)
{ return new_block(tid, n, VG_(clo_alignment), False, AK_MALLOC); }
static void* mv_builtin_new(ThreadId tid, SizeT n)
{ return new_block(tid, n, VG_(clo_alignment), False, AK_NEW); }
static void* mv_builtin_new_aligned(ThreadId tid, SizeT n, SizeT align)
{ return new_block(tid, n, align, False, AK_NEW); }
static void* mv_builtin_vec_new(ThreadId tid, SizeT n)
{ return new_block(tid, n, VG_(clo_alignment), False, AK_NEW_ARR); }
static void* mv_builtin_vec_new_aligned(ThreadId tid, SizeT n, SizeT align)
{ return new_block(tid, n, align, False, AK_NEW_ARR); }
static void* mv_memalign(ThreadId tid, SizeT align, SizeT n)
{ return new_block(tid, n, align, False, AK_MEMALIGN); }
static void* mv_calloc(ThreadId tid, SizeT nmemb, SizeT size1)
{
   ULong total = (ULong)nmemb * (ULong)size1;
   if (size1 != 0 && total / size1 != nmemb) return NULL;
   return new_block(tid, total, VG_(clo_alignment), True, AK_CALLOC);
}
static void mv_free(ThreadId tid, void* p) { free_block(tid, p, FK_FREE); }
static void mv_builtin_delete(ThreadId tid, void* p) { free_block(tid, p, FK_DELETE); }
static void mv_builtin_delete_aligned(ThreadId tid, void* p, SizeT align)
{ free_block(tid, p, FK_DELETE); }
static void mv_builtin_vec_delete(ThreadId tid, void* p) { free_block(tid, p, FK_DEL_ARR); }
static void mv_builtin_vec_delete_aligned(ThreadId tid, void* p, SizeT align)
{ free_block(tid, p, FK_DEL_ARR); }

static void* mv_realloc(ThreadId tid, void* p_old, SizeT new_size)
{
   Block* b;
   void* p_new;
   SizeT old_size;
   if (p_old == NULL) return new_block(tid, new_size, VG_(clo_alignment), False, AK_REALLOC);
   if ((SSizeT)new_size < 0) return NULL;
   b = VG_(HT_lookup)(blocks, (UWord)p_old);
   if (!b) return NULL;             /* not ours: like glibc, fail */
   old_size = b->size;
   p_new = VG_(cli_malloc)(VG_(clo_alignment), new_size);
   if (!p_new) return NULL;
   VG_(memcpy)(p_new, p_old, old_size < new_size ? old_size : new_size);
   forget_block((Addr)p_old);
   VG_(cli_free)(p_old);
   /* One record: the new block, naming the old one it replaces. */
   record_alloc(tid, AK_REALLOC, (Addr)p_new, new_size, (Addr)p_old);
   return p_new;
}

static SizeT mv_malloc_usable_size(ThreadId tid, void* p)
{
   Block* b = VG_(HT_lookup)(blocks, (UWord)p);
   return b ? b->size : 0;
}

/*------------------------------------------------------------*/
/*--- Load map and threads                                 ---*/
/*------------------------------------------------------------*/

/* Every MAP and UNMAP record written, in order, so that a forked child's
   trace can restate the load map it inherited. File mappings are few
   (tens); an unmap is kept only if it meets a kept mapping. */
typedef struct {
   Bool   unmap;
   Addr   start;
   SizeT  len;
   ULong  offset;
   UChar  perms;
   HChar* name;
} MapEntry;

static XArray* map_log;

static void put_map(const MapEntry* m)
{
   ensure(32 + STR_ROOM);
   put_uv(m->unmap ? REC_UNMAP : REC_MAP);
   put_uv(m->start);
   put_uv(m->len);
   if (m->unmap) return;
   put_uv(m->offset);
   put_u8(m->perms);
   put_str(m->name);
}

static void record_mapping(Addr a, SizeT len, Bool rr, Bool ww, Bool xx)
{
   NSegment const* seg = VG_(am_find_nsegment)(a);
   const HChar* name;
   MapEntry m;
   if (!seg || seg->kind != SkFileC) return;
   name = VG_(am_get_filename)(seg);
   if (!name) return;
   m.unmap = False;
   m.start = a;
   m.len = len;
   m.offset = (ULong)seg->offset + (a - seg->start);
   m.perms = (rr ? 4 : 0) | (ww ? 2 : 0) | (xx ? 1 : 0);
   m.name = VG_(strdup)("mv.mapname", name);
   VG_(addToXA)(map_log, &m);
   put_map(&m);
}

static void mv_new_mem_startup(Addr a, SizeT len, Bool rr, Bool ww, Bool xx,
                               ULong di_handle)
{ record_mapping(a, len, rr, ww, xx); }

/* A mapping the program made for data (not code, not an object file
   whose debug information Valgrind read): an MMAP record with the call
   stack, so the analysis can name it by the statement that mapped it. */
static void record_data_mapping(Addr a, SizeT len)
{
   ThreadId tid = VG_(get_running_tid)();
   Addr ips[65];
   UInt n;
   if (tid == VG_INVALID_THREADID) return;
   n = VG_(get_StackTrace)(tid, ips, clo_stack_depth, NULL, NULL, 0);
   ensure(48 + 10 * n);
   put_uv(REC_MMAP);
   put_uv(tno(tid));
   put_uv(a);
   put_uv(len);
   put_ips(n, ips);
}

static void mv_new_mem_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx,
                            ULong di_handle)
{
   record_mapping(a, len, rr, ww, xx);
   if (!xx && di_handle == 0) record_data_mapping(a, len);
}

static void mv_die_mem_munmap(Addr a, SizeT len)
{
   MapEntry m;
   Word i, n = VG_(sizeXA)(map_log);
   m.unmap = True;
   m.start = a;
   m.len = len;
   m.name = NULL;
   for (i = 0; i < n; i++) {
      const MapEntry* e = VG_(indexXA)(map_log, i);
      if (!e->unmap && e->start < a + len && a < e->start + e->len) {
         VG_(addToXA)(map_log, &m);
         break;
      }
   }
   put_map(&m);
}

static void mv_thread_create(ThreadId parent, ThreadId child)
{
   /* The slot may be a reused one: the thread takes a new number, and
      starts with no stack pointers sent and no instructions. */
   if (thread_no == NULL) {
      early_thread = child;
   } else if (child < VG_N_THREADS) {
      keep_unjoined(child);
      mv_rg_thread_create(child);
      thread_no[child] = ++threads_numbered;
      last_sp[child] = last_fp[child] = 0;
      if (emitted_tid == child) emitted_tid = 0;
   }
   ensure(32);
   put_uv(REC_THREAD_CREATE);
   put_uv(tno(parent));
   put_uv(tno(child));
   if (thread_alive == NULL) return;    /* before post_clo_init */
   if (child < VG_N_THREADS) {
      credit_icount();
      thread_icount[child] = 0;
      thread_alive[child] = True;
      pthread_of[child] = 0;
   }
   if (parent < VG_N_THREADS) last_child[parent] = child;
   /* The fork is the parent's event, before the child runs at all.  The
      main thread has no parent (0). */
   if (clo_sync_events && parent != VG_INVALID_THREADID)
      record_sync(SK_FORK, parent, tno(child));
}

static void mv_thread_exit(ThreadId tid)
{
   mv_rg_thread_exit(tid);
   if (thread_alive && tid < VG_N_THREADS) {
      if (clo_sync_events && thread_alive[tid]) record_sync(SK_EXIT, tid, 0);
      thread_alive[tid] = False;
   }
   ensure(32);
   put_uv(REC_THREAD_EXIT);
   put_uv(tno(tid));
}

/*------------------------------------------------------------*/
/*--- Client requests: the pins                            ---*/
/*------------------------------------------------------------*/

static void warn(UInt code, const HChar* text)
{
   ensure(32 + STR_ROOM);
   put_uv(REC_WARNING);
   put_uv(code);
   put_str(text);
}

static void set_tracing(Bool on)
{
   tracing = on;
   /* Re-instrument everything: code is instrumented only inside regions. */
   VG_(discard_translations_safely)((Addr)0x1000, ~(SizeT)0xfff, "mapvis");
}

/* The open region's start, kept so that a child forked inside it can
   restate it. */
static struct {
   ThreadId tid;
   Addr     arg_block;
   UInt     n;
   Addr     ips[32], sps[32], fps[32];
} open_region;

static void put_region_start(void)
{
   UInt k;
   ensure(64 + 30 * open_region.n);
   put_uv(REC_REGION_START);
   put_uv(region_id);
   put_uv(open_region.tid);
   put_uv(open_region.arg_block);
   put_uv(open_region.n);
   for (k = 0; k < open_region.n; k++) {
      put_uv(open_region.ips[k]);
      put_uv(open_region.sps[k]);
      put_uv(open_region.fps[k]);
   }
}

/*------------------------------------------------------------*/
/*--- The root snapshot                                     ---*/
/*------------------------------------------------------------*/

/* At a region's start the tool writes where the program keeps the
   addresses of the blocks allocated since the last snapshot (all of them,
   at the first): every 8-aligned word of the threads' live stacks, of the
   client's other writable memory (static data, mappings) and of the live
   heap blocks whose value points into such a block (ROOTS), and every
   general register that does (ROOT_REGS). Memcheck's leak checker scans
   the same roots. Cost: one read of every writable byte the program has
   and a binary search per word inside the heap's span; measured in
   docs/PERFORMANCE.md. */
typedef struct { Addr start, end; } Span;

static Span* snap_targets;    /* blocks allocated since the last snapshot */
static UInt  n_snap_targets;
#define ROOTS_PER_RECORD 1024
static Addr  roots_where[ROOTS_PER_RECORD], roots_value[ROOTS_PER_RECORD];
static UInt  n_roots;
static ULong roots_written;

static Int cmp_span(const void* a, const void* b)
{
   Addr x = ((const Span*)a)->start, y = ((const Span*)b)->start;
   return x < y ? -1 : x > y ? 1 : 0;
}

static void flush_roots(void)
{
   UInt k;
   Addr prev = 0;
   if (n_roots == 0) return;
   ensure(16 + 20 * n_roots);
   put_uv(REC_ROOTS);
   put_uv(n_roots);
   for (k = 0; k < n_roots; k++) {
      put_uv(roots_where[k] - prev);
      put_uv(roots_value[k]);
      prev = roots_where[k];
   }
   roots_written += n_roots;
   n_roots = 0;
   flush_buf();
}

/* Whether `v` points into a snapshot target. */
static Bool is_target(Addr v)
{
   UInt lo = 0, hi = n_snap_targets;
   if (n_snap_targets == 0 || v < snap_targets[0].start
       || v >= snap_targets[n_snap_targets - 1].end) return False;
   while (lo < hi) {
      UInt mid = (lo + hi) / 2;
      if (snap_targets[mid].start <= v) lo = mid + 1; else hi = mid;
   }
   return lo > 0 && v < snap_targets[lo - 1].end;
}

/* Writes the words of [lo, hi) that point into a target; words must be
   written in ascending order within a record (their gaps are unsigned),
   so each range is scanned upwards and the record flushed first when a
   range starts below the last word written. */
static void scan_words(Addr lo, Addr hi)
{
   Addr a = (lo + 7) & ~(Addr)7;
   if (n_roots && a < roots_where[n_roots - 1]) flush_roots();
   for (; a + 8 <= hi; a += 8) {
      Addr v = *(const Addr*)a;
      if (is_target(v)) {
         if (n_roots == ROOTS_PER_RECORD) flush_roots();
         roots_where[n_roots] = a;
         roots_value[n_roots] = v;
         n_roots++;
      }
   }
}

/* DWARF's numbers of the x86-64 general registers, by Valgrind's names. */
static Int dwarf_regno(const HChar* name)
{
   static const HChar* names[16] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi",
                                     "rbp", "rsp", "r8", "r9", "r10", "r11",
                                     "r12", "r13", "r14", "r15" };
   Int k;
   for (k = 0; k < 16; k++)
      if (VG_(strcmp)(name, names[k]) == 0) return k;
   return -1;
}

static void root_reg(ThreadId tid, const HChar* name, UWord value)
{
   Int r = dwarf_regno(name);
   if (r < 0 || !is_target(value)) return;
   ensure(32);
   put_uv(REC_ROOT_REGS);
   put_uv(tno(tid));
   put_u8((UChar)r);
   put_uv(value);
}

/* Scans the writable client segments, each thread's live stack from its
   stack pointer up (the part of a stack segment below it is dead), and the
   live heap blocks. */
#define MAX_SNAP_SEGMENTS 8192
#define MAX_SNAP_STACKS   1024
static void scan_roots(void)
{
   static Addr starts[MAX_SNAP_SEGMENTS];
   static Addr smin[MAX_SNAP_STACKS], smax[MAX_SNAP_STACKS];
   Int n_seg = VG_(am_get_segment_starts)(SkFileC | SkAnonC | SkShmC, starts,
                                          MAX_SNAP_SEGMENTS);
   Int i, n_stacks = 0, k;
   UInt n_live = VG_(HT_count_nodes)(blocks), j = 0;
   Span* live;
   ThreadId t;
   Block* b;
   VG_(thread_stack_reset_iter)(&t);
   while (n_stacks < MAX_SNAP_STACKS
          && VG_(thread_stack_next)(&t, &smin[n_stacks], &smax[n_stacks]))
      n_stacks++;
   if (n_seg < 0) {
      warn(W_SNAPSHOT_PARTIAL, "the root snapshot scanned no static data or "
           "mappings: the program has more than 8192 memory segments");
      n_seg = 0;
   }
   for (i = 0; i < n_seg; i++) {
      NSegment const* seg = VG_(am_find_nsegment)(starts[i]);
      Addr lo, hi;
      if (!seg || !seg->hasR || !seg->hasW || seg->isCH) continue;
      lo = seg->start;
      hi = seg->end + 1;
      for (k = 0; k < n_stacks; k++)
         if (smin[k] >= lo && smin[k] < hi) lo = smin[k];
      scan_words(lo, hi);
   }
   /* The heap blocks in address order, so that their words share records. */
   live = VG_(malloc)("mv.snap.live", (n_live + 1) * sizeof(Span));
   VG_(HT_ResetIter)(blocks);
   while ((b = VG_(HT_Next)(blocks)) != NULL && j < n_live) {
      live[j].start = b->key;
      live[j].end = b->key + b->size;
      j++;
   }
   VG_(ssort)(live, j, sizeof(Span), cmp_span);
   for (i = 0; i < (Int)j; i++) scan_words(live[i].start, live[i].end);
   VG_(free)(live);
   flush_roots();
   VG_(apply_to_GP_regs)(root_reg);
}

/* The snapshot for the blocks allocated since the last one (none: no
   record). */
static void root_snapshot(void)
{
   Block* b;
   UInt n = 0;
   VG_(HT_ResetIter)(blocks);
   while ((b = VG_(HT_Next)(blocks)) != NULL) n += b->serial > snap_serial;
   if (n == 0) return;
   snap_targets = VG_(malloc)("mv.snap", n * sizeof(Span));
   n_snap_targets = 0;
   VG_(HT_ResetIter)(blocks);
   while ((b = VG_(HT_Next)(blocks)) != NULL)
      if (b->serial > snap_serial && b->size > 0) {
         snap_targets[n_snap_targets].start = b->key;
         snap_targets[n_snap_targets].end = b->key + b->size;
         n_snap_targets++;
      }
   VG_(ssort)(snap_targets, n_snap_targets, sizeof(Span), cmp_span);
   scan_roots();
   VG_(free)(snap_targets);
   snap_targets = NULL;
   n_snap_targets = 0;
   snap_serial = alloc_serial;
}

/* Numbers a new region opened by thread `tid` (0: none, at start-up)
   and keeps its start in open_region, with the thread's stack as the
   guest state has it; the caller writes the record. */
static void number_region(ThreadId tid, Addr arg_block)
{
   region_id++;
   n_regions++;
   open_region.tid = tid;
   open_region.arg_block = arg_block;
   open_region.n = tid == 0 ? 0
                   : VG_(get_StackTrace)(tid, open_region.ips, 32, open_region.sps,
                                         open_region.fps, 0);
}

/* REGION_STOP of the current region, stopped by thread `tid`. */
static void put_region_stop(ThreadId tid, Addr arg_block)
{
   ensure(48);
   put_uv(REC_REGION_STOP);
   put_uv(region_id);
   put_uv(tno(tid));
   put_uv(arg_block);
}

static void start_region(ThreadId tid, Addr arg_block)
{
   number_region(tid, arg_block);
   put_region_start();
   root_snapshot();
   set_tracing(True);
}

/* A code region (mv_region.c) opens: its first traced thread `tid`
   entered at `ip` with stack pointer `sp` and frame pointer `fp`. As
   start_region, without a client request (argument block 0) and without
   changing what is instrumented, which mv_region.c decides.

   Inside a helper the guest state's instruction pointer may lag behind
   (it is exact only at memory accesses), so the innermost frame is the
   one the helper was given; when it entered at a function's first
   instruction (`call`), the caller's frame is the return address at sp,
   and the unwound frames at or below sp are dropped. */
void mv_region_begin(ThreadId tid, Addr ip, Addr sp, Addr fp, Bool call)
{
   Addr ips[32], sps[32], fps[32];
   UInt n, k, m = 0;
   number_region(tid, 0);
   n = open_region.n;
   VG_(memcpy)(ips, open_region.ips, n * sizeof(Addr));
   VG_(memcpy)(sps, open_region.sps, n * sizeof(Addr));
   VG_(memcpy)(fps, open_region.fps, n * sizeof(Addr));
   open_region.ips[m] = ip;
   open_region.sps[m] = sp;
   open_region.fps[m++] = fp;
   if (call) {
      open_region.ips[m] = *(Addr*)sp;
      open_region.sps[m] = sp + 8;
      open_region.fps[m++] = fp;
   }
   for (k = 0; k < n && m < 32; k++)
      if (sps[k] > open_region.sps[m - 1]) {
         open_region.ips[m] = ips[k];
         open_region.sps[m] = sps[k];
         open_region.fps[m++] = fps[k];
      }
   open_region.n = m;
   put_region_start();
   root_snapshot();
}

void mv_region_begin_here(ThreadId tid)
{
   number_region(tid, 0);
   put_region_start();
   if (tid != 0) root_snapshot();
}

void mv_region_end(ThreadId tid)
{
   put_region_stop(tid, 0);
}

void mv_set_instrumentation(Bool trace)
{
   tracing = trace;
}

void mv_region_note(const HChar* text)
{
   warn(W_REGION_CALLS, text);
}

/* Whether accesses are being recorded now: a region is open. */
static Bool region_open(void)
{
   return mv_rg_gate ? mv_rg_recording() : tracing;
}

static void stop_region(ThreadId tid, Addr arg_block)
{
   put_region_stop(tid, arg_block);
   set_tracing(False);
}

static Bool mv_handle_client_request(ThreadId tid, UWord* arg, UWord* ret)
{
   if (!VG_IS_TOOL_USERREQ('G', 'L', arg[0])) return False;
   if (arg[0] >= MV_USERREQ__SYNC_ON) return handle_sync_request(tid, arg, ret);
   /* Recording the whole run or a code region: the pins change nothing. */
   if ((clo_trace_from_start || mv_rg_gate)
       && (arg[0] == VG_USERREQ__GL_START || arg[0] == VG_USERREQ__GL_STOP)) {
      *ret = 0;
      return True;
   }
   switch (arg[0]) {
      case VG_USERREQ__GL_START:
         if (tracing) {
            VG_(umsg)("mapvis: warning: GL_START while region %u is open; "
                      "ignored.\n", region_id);
            warn(W_NESTED_START, "GL_START while a region is open; ignored");
         } else {
            start_region(tid, (Addr)arg);
         }
         break;
      case VG_USERREQ__GL_STOP:
         if (!tracing) {
            VG_(umsg)("mapvis: warning: GL_STOP without a matching GL_START; "
                      "ignored.\n");
            warn(W_STOP_NO_START, "GL_STOP without a matching GL_START; ignored");
         } else {
            stop_region(tid, (Addr)arg);
         }
         break;
      default:
         return False;
   }
   *ret = 0;
   return True;
}

/*------------------------------------------------------------*/
/*--- Start and finish                                     ---*/
/*------------------------------------------------------------*/

/* The longest argument the kernel passes (MAX_ARG_STRLEN, 32 pages): the
   header keeps every argument whole. The reader accepts strings up to this
   length and up to MAX_HEADER_ARGS arguments. */
#define MAX_ARG_BYTES 131072
#define MAX_HEADER_ARGS 262144

static void write_header(void)
{
   struct vki_timeval tv;
   UInt i, n = VG_(sizeXA)(VG_(args_for_client));
   SizeT cap = 128 + 2 * MAX_RECORD_STR + MAX_ARG_BYTES + 10;
   UChar* saved = buf;
   UInt saved_pos = buf_pos;
   UChar* hdr;
   VG_(gettimeofday)(&tv, NULL);
   if (n > MAX_HEADER_ARGS - 1) n = MAX_HEADER_ARGS - 1;
   for (i = 0; i < n; i++) {
      SizeT len = VG_(strlen)(*(HChar**)VG_(indexXA)(VG_(args_for_client), i));
      cap += (len > MAX_ARG_BYTES ? MAX_ARG_BYTES : len) + 10;
   }
   /* The header goes before anything buffered at start-up: build it in a
      buffer of its own, sized for every argument (a whole command line can
      be megabytes), and write it first. */
   hdr = VG_(malloc)("mapvis.header", cap);
   buf = hdr;
   VG_(memcpy)(buf, MV_MAGIC, 8);
   buf_pos = 8;
   put_uv(MV_FORMAT_VERSION);
   put_uv(VG_(getpid)());
   put_uv((ULong)tv.tv_sec * 1000000ULL + tv.tv_usec);
   put_str_cap(MAPVIS_VG_VERSION, MAX_RECORD_STR);
   put_uv(clo_stack_depth);
   put_u8(clo_heap_only ? 1 : 0);
   put_u8(clo_sync_events ? 1 : 0);
   put_uv(n + 1);
   put_str_cap(VG_(args_the_exename), MAX_ARG_BYTES);
   for (i = 0; i < n; i++)
      put_str_cap(*(HChar**)VG_(indexXA)(VG_(args_for_client), i), MAX_ARG_BYTES);
   /* Version 7: what the regions are, then the header's own checksum. */
   put_str_cap(clo_trace_from_start ? "whole" : mv_rg_asked() ? mv_rg_label() : "pins",
               MAX_RECORD_STR);
   put_le(buf + buf_pos, xxh64(buf, buf_pos, 0), 8);
   buf_pos += 8;
   tl_assert(buf_pos <= cap);
   VG_(write)(out_fd, hdr, buf_pos);
   bytes_written += buf_pos;
   header_len = buf_pos;
   buf = saved;
   buf_pos = saved_pos;
   VG_(free)(hdr);
}

/*------------------------------------------------------------*/
/*--- fork(): one trace per process                        ---*/
/*------------------------------------------------------------*/

/* Restates, at the start of a forked child's stream, what the child
   inherited and its events refer to: the fork itself (a WARNING naming the
   parent), the load map, every site (with its prediction state reset, as
   the reader starts it), every live heap block (ALLOC with AK_INHERITED,
   not counted as an allocation) and the open region. Nothing the parent
   did is repeated: the child's trace holds only the child's own events.
   Runs in the child right after fork(), before it executes anything. */
static void mv_child_after_fork(ThreadId tid)
{
   HChar note[160];
   Word i, n;
   Block* b;
   /* The inherited descriptor shares its offset with the parent's: never
      write through it. Whatever the buffer held is the parent's. */
   if (out_fd >= 0) VG_(close)(out_fd);
   out_fd = -1;
   child_pending = True;
   buf_pos = BLOCK_HEADER_BYTES;
   n_accesses = n_allocs = n_frees = n_regions = 0;
   emitted_tid = 0;
   VG_(memset)(last_sp, 0, VG_N_THREADS * sizeof(Addr));
   VG_(memset)(last_fp, 0, VG_N_THREADS * sizeof(Addr));
   /* Only the thread that called fork() lives on in the child. */
   VG_(memset)(thread_alive, 0, VG_N_THREADS * sizeof(Bool));
   thread_alive[tid] = True;
   VG_(snprintf)(note, sizeof note, "process %d was forked from process %d; "
                 "its trace holds only its own events after the fork",
                 VG_(getpid)(), VG_(getppid)());
   warn(W_FORKED, note);
   n = VG_(sizeXA)(map_log);
   for (i = 0; i < n; i++) put_map(VG_(indexXA)(map_log, i));
   n_candidates = 0;
   for (i = 0; i < (Word)n_sites; i++) {
      Site* st = &sites[i];
      st->last = 0;
      st->stride = 0;
      /* The child's reader starts with every code its site's id. */
      st->code = (UInt)i;
      st->count = 0;
      code_site[i] = (UInt)i;
      ensure(64);
      put_uv(REC_SITE);
      put_uv(i);
      put_uv(st->ip);
      put_u8(st->op);
      put_uv(st->size);
   }
   VG_(HT_ResetIter)(blocks);
   while ((b = VG_(HT_Next)(blocks)) != NULL)
      put_alloc(b->kind | AK_INHERITED, b->tid, b->key, b->size, 0, b->n_ips, b->ips);
   if (region_open()) {
      n_regions = 1;
      put_region_start();
   }
}

/* Valgrind's own: moves a descriptor above the limit the client sees,
   where the client's system calls on it are refused (m_libcfile.c). Not
   in the tool headers, but in libcoregrind, which every tool links. */
extern Int VG_(safe_fd)(Int oldfd);

#define MV_O_NOFOLLOW 0400000   /* x86-64 Linux; vki names no O_NOFOLLOW */

/* Creates the trace file `path` as a new file, never opening an existing
   name (a stale file or a link someone left there: mapvis removes those
   before the run), and moves its descriptor out of the client's reach, so
   a program that writes to every descriptor cannot write into its trace.
   Returns the descriptor, or -1. */
static Int create_trace_file(const HChar* path)
{
   SysRes sres = VG_(open)(path, VKI_O_CREAT | VKI_O_EXCL | VKI_O_WRONLY
                                 | MV_O_NOFOLLOW, 0644);
   if (sr_isError(sres))
      return -1;
   return VG_(safe_fd)(sr_Res(sres));
}

/* Opens <trace file>.<pid> and writes the header naming this process; the
   buffer then holds the preamble and the child's records. */
static void open_child_trace(void)
{
   HChar path[4200];
   Int fd;
   child_pending = False;
   VG_(snprintf)(path, sizeof path, "%s.%d", clo_trace_file, VG_(getpid)());
   fd = create_trace_file(path);
   if (fd < 0) {
      VG_(umsg)("mapvis: error: can't create the trace file '%s' of the "
                "forked child (a file of that name was left in the way?).\n",
                path);
      return;
   }
   out_fd = fd;
   bytes_written = 0;
   write_header();
}

static void mv_post_clo_init(void)
{
   last_sp = VG_(calloc)("mapvis.last_sp", VG_N_THREADS, sizeof(Addr));
   last_fp = VG_(calloc)("mapvis.last_fp", VG_N_THREADS, sizeof(Addr));
   thread_icount = VG_(calloc)("mapvis.icount", VG_N_THREADS, sizeof(ULong));
   thread_alive = VG_(calloc)("mapvis.alive", VG_N_THREADS, sizeof(Bool));
   last_child = VG_(calloc)("mapvis.child", VG_N_THREADS, sizeof(ThreadId));
   pthread_of = VG_(calloc)("mapvis.pthread", VG_N_THREADS, sizeof(UWord));
   thread_no = VG_(calloc)("mapvis.thread_no", VG_N_THREADS, sizeof(UInt));
   if (early_thread > 0 && early_thread < VG_N_THREADS)
      thread_no[early_thread] = ++threads_numbered;
   out_fd = create_trace_file(clo_trace_file);
   if (out_fd < 0) {
      VG_(umsg)("mapvis: error: can't create the trace file '%s': check that "
                "its folder exists and is writable, and that no file has "
                "its name.\n", clo_trace_file);
      VG_(exit)(1);
   }
   write_header();
   flush_buf();
   VG_(atfork)(NULL, NULL, mv_child_after_fork);
   thread_alive[1] = True;    /* the main thread */
   mv_rg_init();
   if (mv_rg_asked() && clo_trace_from_start) {
      VG_(umsg)("mapvis: error: --trace-from-start and --region-range ask for "
                "two kinds of region; give one.\n");
      VG_(exit)(1);
   }
   if (clo_trace_from_start) {
      region_id = 1;
      n_regions = 1;
      ensure(48);
      put_uv(REC_REGION_START);
      put_uv(region_id);
      put_uv(1);
      put_uv(0);
      put_uv(0);
      tracing = True;
   }
}

/*------------------------------------------------------------*/
/*--- exec(): the trace ends with what came before          ---*/
/*------------------------------------------------------------*/

/* A successful exec replaces the process image, and Valgrind calls no
   tool function after it (mv_fini does not run). So before an exec the
   tool records a warning saying so, with whether a region was open, and
   writes out everything buffered: the trace then holds every event up to
   the exec, ending without its footer, and the reader names the exec as
   the reason. If the exec fails, the program goes on and so does the
   trace, after a second warning that cancels the first. */
static Bool is_exec(UInt syscallno)
{
   return syscallno == __NR_execve
#if defined(__NR_execveat)
          || syscallno == __NR_execveat
#endif
      ;
}

static void mv_pre_syscall(ThreadId tid, UInt syscallno, UWord* args,
                           UInt nArgs)
{
   if (!is_exec(syscallno)) return;
   warn(W_EXEC, region_open()
        ? "the program called exec inside the region: the new program replaced "
          "the traced one, so the trace ends at the exec"
        : "the program called exec after its regions: the new program replaced "
          "the traced one, so the trace ends at the exec (its regions are whole)");
   flush_buf();
}

static void mv_post_syscall(ThreadId tid, UInt syscallno, UWord* args,
                            UInt nArgs, SysRes res)
{
   if (!is_exec(syscallno)) return;
   /* Reached only when the exec failed. */
   warn(W_EXEC_FAILED, "the exec failed and the program went on");
}

static void mv_fini(Int exitcode)
{
   ThreadId t;
   /* Threads still alive at the end (the main thread at least) exit here,
      with the instructions they ran since their last event. */
   for (t = 1; clo_sync_events && t < VG_N_THREADS; t++)
      if (thread_alive[t]) {
         record_sync(SK_EXIT, t, 0);
         thread_alive[t] = False;
      }
   mv_rg_finish();
   if (region_open() && !clo_trace_from_start) {
      VG_(umsg)("mapvis: warning: region %u was still open at exit "
                "(GL_STOP not reached).\n", region_id);
      warn(W_OPEN_AT_EXIT, "a region was still open at exit (GL_STOP not reached)");
   }
   ensure(96);
   put_uv(REC_FOOTER);
   put_uv(n_accesses);
   put_uv(n_regions);
   put_uv(n_allocs);
   put_uv(n_frees);
   put_uv(n_sites);
   put_sv(exitcode);
   /* The end marker: mapvis appends the program's exit status or fatal
      signal (which Valgrind does not tell tools) after it. */
   put_uv(REC_END);
   VG_(memcpy)(buf + buf_pos, "MVEND\n", 6);
   buf_pos += 6;
   flush_buf();
   if (out_fd >= 0) VG_(close)(out_fd);
   /* The summary is for someone running the tool by hand; under -q (as
      mapvis runs it, and prints its own summary) it stays quiet. */
   if (VG_(clo_verbosity) > 0)
      VG_(umsg)("mapvis: %llu accesses in %llu region(s), %llu allocations, "
                "%llu frees; trace '%s' (%llu bytes).\n",
                n_accesses, n_regions, n_allocs, n_frees, clo_trace_file,
                bytes_written);
   if (n_regions == 0 && VG_(clo_verbosity) > 0)
      VG_(umsg)("mapvis: no region was traced: are GL_START/GL_STOP in the "
                "code that ran?\n");
}

static void mv_pre_clo_init(void)
{
   VG_(details_name)            ("mapvis");
   VG_(details_version)         (NULL);
   VG_(details_description)     ("records memory accesses between GL_START and GL_STOP");
   VG_(details_copyright_author)("mapvis authors; GNU GPL'd.");
   VG_(details_bug_reports_to)  (VG_BUGS_TO);
   VG_(details_avg_translation_sizeB)(275);

   VG_(basic_tool_funcs)        (mv_post_clo_init, mv_instrument, mv_fini);
   VG_(needs_command_line_options)(mv_process_cmd_line_option,
                                   mv_print_usage, mv_print_debug_usage);
   VG_(needs_client_requests)   (mv_handle_client_request);
   VG_(needs_syscall_wrapper)   (mv_pre_syscall, mv_post_syscall);
   VG_(needs_malloc_replacement)(mv_malloc, mv_builtin_new,
                                 mv_builtin_new_aligned, mv_builtin_vec_new,
                                 mv_builtin_vec_new_aligned, mv_memalign,
                                 mv_calloc, mv_free, mv_builtin_delete,
                                 mv_builtin_delete_aligned,
                                 mv_builtin_vec_delete,
                                 mv_builtin_vec_delete_aligned, mv_realloc,
                                 mv_malloc_usable_size, 0);

   VG_(track_new_mem_startup)   (mv_new_mem_startup);
   VG_(track_new_mem_mmap)      (mv_new_mem_mmap);
   VG_(track_die_mem_munmap)    (mv_die_mem_munmap);
   VG_(track_pre_thread_ll_create)(mv_thread_create);
   VG_(track_pre_thread_ll_exit)(mv_thread_exit);
   VG_(track_start_client_code)(mv_start_client_code);

   buf = VG_(malloc)("mv.buf", BUF_SIZE);
   buf_pos = BLOCK_HEADER_BYTES;
   blocks = VG_(HT_construct)("mv.blocks");
   map_log = VG_(newXA)(VG_(malloc), "mv.maps", VG_(free), sizeof(MapEntry));
}

VG_DETERMINE_INTERFACE_VERSION(mv_pre_clo_init)

/*--------------------------------------------------------------------*/
/*--- end                                                 mv_main.c ---*/
/*--------------------------------------------------------------------*/
