/*--------------------------------------------------------------------*/
/*--- mapvis: regions by code (set_region function / lines).       ---*/
/*---                                                   mv_region.c ---*/
/*--------------------------------------------------------------------*/

/*
   This file is part of mapvis, GPL-2.0-or-later like mv_main.c.

   What a code region is
   ---------------------
   mapvis gives the tool a set of code ranges (file addresses of one
   object, from DWARF: a function's own code and each copy the compiler
   inlined, or the code of some source lines) and which of their
   executions to trace.  Per thread:

   * The thread ENTERS when it executes an instruction in the ranges and
     is not inside yet.  Its stack pointer then is its entry SP.  Entries
     are numbered across threads in the order they happen ("calls"); a
     recursive call, or a loop's code re-entered from a callee, is inside
     already and not counted.
   * It LEAVES when it executes an instruction outside the ranges with a
     stack pointer showing that it is not in a callee: above the entry SP
     when it entered at a function's own code (a return pops the return
     address; a tail call keeps the SP, so the tail-called function is
     still inside), at or above it when it entered inlined code or lines
     (they run in their caller's frame, and a callee's frame lies below).
     A longjmp or an exception past the frame leaves the same way.
   * Source lines are seldom one block of code at -O2: an instruction of
     another line (an address computed once, a loop's test) may sit inside
     a loop nest's code, and running it leaves the lines.  So when a thread
     leaves lines and comes back into them in the same frame (the same
     entry SP) before any other entry, that is the same execution going
     on: nothing of the gap is recorded, but the region stays one, instead
     of one region per pass of the loop.

   Cost model
   ----------
   The checks are calls added to the translated code: an entry check
   where execution passes into the ranges (a superblock's first
   instruction in them, or one after an instruction outside), and, while
   some thread is inside, a leave check where it passes out of them (a
   superblock's first instruction outside, or one after an instruction in
   them).  Code in the ranges always has its accesses instrumented, so
   the superblock that enters records its own accesses; code elsewhere is
   instrumented only while a traced thread is inside.

   What is instrumented changes inside a helper, where Valgrind refuses to
   discard translations.  So every superblock starts with an inline test
   (a load and a compare, no call) of the epoch it was translated in
   against the current one (mv_rg_epoch), and a stale superblock leaves
   at once to the scheduler asking to be discarded (Ijk_InvalICache, as
   VEX's own self-checking translations do), which translates it afresh.
   At the start of a superblock the guest state is exact, so leaving
   there loses nothing.  Each change of epoch thus costs a translation of
   every superblock run afterwards; a region entered and left often would
   pay that each time, so after STICKY_AFTER changes the instrumentation
   stays on (the helper drops the accesses of threads outside), and once
   the last wanted call has ended it is all removed.
*/

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "libvex_guest_offsets.h"
#include "libvex_guest_amd64.h"

#include "mv_region.h"

#define MAX_RANGES 65536
#define STICKY_AFTER 64

typedef struct {
   Addr lo, hi;   /* [lo, hi): file addresses, then addresses in memory */
   Bool fn;       /* a function's own code: leave above the entry SP */
   Bool lines;    /* source lines: a return in the same frame goes on */
} Range;

static Range* ranges;
static UInt   n_ranges;
static const HChar* object;        /* the object the ranges belong to */
static const HChar* label = "code";
static ULong  calls_first = 1;     /* first call traced */
static ULong  calls_last = 0;      /* last call traced; 0: no last */
static Bool   relocated;

Bool  mv_rg_gate;
Bool* mv_rg_on;
/* Bumped at every change of what is instrumented. */
static ULong epoch = 1;

static Addr* entry_sp;      /* per thread slot: 0 when not inside */
static Bool* strict;        /* per thread slot: entered at a function's code */
static Bool* lines_of;      /* per thread slot: entered source lines */
static UInt  inside_n;      /* threads inside */
static UInt  traced_n;      /* threads inside a traced call */
static ULong calls;         /* entries so far */
static ULong calls_traced;
static Bool  done;          /* the last wanted call has ended */
static Bool  sticky;
static UInt  switches;
static Bool  now_checking, now_tracing, now_done;
/* Lines left by the last traced thread, whose region is kept open in case
   the thread comes back into them in the same frame. */
static Bool     lingering;
static ThreadId linger_tid;
static Addr     linger_sp;

/*------------------------------------------------------------*/
/*--- Options                                              ---*/
/*------------------------------------------------------------*/

/* "f:LO-HI" (a function's own code), "i:LO-HI" (inlined code) or
   "l:LO-HI" (source lines), hexadecimal. */
static void parse_range(const HChar* arg, const HChar* v)
{
   HChar* end;
   Range r;
   if ((v[0] != 'f' && v[0] != 'i' && v[0] != 'l') || v[1] != ':')
      VG_(fmsg_bad_option)(arg, "expected f:LO-HI, i:LO-HI or l:LO-HI (hexadecimal)\n");
   r.fn = v[0] == 'f';
   r.lines = v[0] == 'l';
   r.lo = VG_(strtoull16)(v + 2, &end);
   if (*end != '-')
      VG_(fmsg_bad_option)(arg, "expected f:LO-HI or i:LO-HI (hexadecimal)\n");
   r.hi = VG_(strtoull16)(end + 1, &end);
   if (*end != '\0' || r.hi <= r.lo)
      VG_(fmsg_bad_option)(arg, "expected f:LO-HI or i:LO-HI with LO < HI\n");
   if (ranges == NULL) ranges = VG_(malloc)("mv.rg.ranges", MAX_RANGES * sizeof(Range));
   if (n_ranges == MAX_RANGES)
      VG_(fmsg_bad_option)(arg, "more than %d ranges\n", MAX_RANGES);
   ranges[n_ranges++] = r;
}

/* "A-B", decimal; B 0 for no last call. */
static void parse_calls(const HChar* arg, const HChar* v)
{
   HChar* end;
   calls_first = VG_(strtoull10)(v, &end);
   if (*end != '-' || calls_first == 0)
      VG_(fmsg_bad_option)(arg, "expected FIRST-LAST, FIRST >= 1\n");
   calls_last = VG_(strtoull10)(end + 1, &end);
   if (*end != '\0' || (calls_last != 0 && calls_last < calls_first))
      VG_(fmsg_bad_option)(arg, "expected FIRST-LAST with LAST 0 or >= FIRST\n");
}

Bool  mv_win_on;
ULong mv_win_run;
ULong mv_win_next = ~0ULL;
static ULong win_skip, win_count, win_every;
static ULong win_left;        /* accesses still to record in the open window */
static ULong win_n;           /* windows opened */
static Bool  win_open;

/* "SKIP,COUNT,EVERY", decimal; EVERY 0 for one window. */
static void parse_window(const HChar* arg, const HChar* v)
{
   HChar* end;
   win_skip = VG_(strtoull10)(v, &end);
   if (*end != ',') VG_(fmsg_bad_option)(arg, "expected SKIP,COUNT,EVERY\n");
   win_count = VG_(strtoull10)(end + 1, &end);
   if (*end != ',') VG_(fmsg_bad_option)(arg, "expected SKIP,COUNT,EVERY\n");
   win_every = VG_(strtoull10)(end + 1, &end);
   if (*end != '\0' || win_count == 0 || (win_every != 0 && win_every < win_count))
      VG_(fmsg_bad_option)(arg, "expected SKIP,COUNT,EVERY with COUNT >= 1 and "
                           "EVERY 0 or >= COUNT\n");
   mv_win_on = True;
   mv_win_next = win_skip;
}

Bool mv_rg_option(const HChar* arg)
{
   const HChar* v;
   if VG_STR_CLO(arg, "--region-object", object) {}
   else if VG_STR_CLO(arg, "--region-window", v) parse_window(arg, v);
   else if VG_STR_CLO(arg, "--region-label", label) {}
   else if VG_STR_CLO(arg, "--region-calls", v) parse_calls(arg, v);
   else if VG_STR_CLO(arg, "--region-range", v) parse_range(arg, v);
   else return False;
   return True;
}

Bool mv_rg_asked(void) { return n_ranges > 0 || mv_win_on; }

const HChar* mv_rg_label(void) { return label; }

static void set_all_on(Bool on)
{
   UInt t;
   for (t = 0; t < VG_N_THREADS; t++) mv_rg_on[t] = on;
}

static void window_open(ThreadId tid)
{
   win_open = True;
   win_left = win_count;
   win_n++;
   set_all_on(True);
   mv_region_begin_here(tid);
   mv_set_instrumentation(True);
   epoch++;
}

void mv_win_cross(void)
{
   if (win_open || mv_win_run < mv_win_next) return;
   window_open(VG_(get_running_tid)());
}

void mv_win_recorded(ThreadId tid)
{
   mv_win_run++;
   if (!win_open || --win_left > 0) return;
   win_open = False;
   set_all_on(False);
   mv_region_end(tid);
   mv_win_next = win_every == 0 ? ~0ULL : win_skip + win_n * win_every;
   mv_set_instrumentation(False);
   epoch++;
}

void mv_rg_init(void)
{
   if (mv_win_on) {
      if (n_ranges > 0)
         VG_(fmsg_bad_option)("--region-window", "is not for --region-range too\n");
      mv_rg_gate = True;
      mv_rg_on = VG_(calloc)("mv.rg.on", VG_N_THREADS, sizeof(Bool));
      /* A window at the run's start opens before its first instruction. */
      if (win_skip == 0) window_open(0);
      return;
   }
   if (!mv_rg_asked()) return;
   if (object == NULL)
      VG_(fmsg_bad_option)("--region-range", "needs --region-object\n");
   mv_rg_gate = True;
   mv_rg_on = VG_(calloc)("mv.rg.on", VG_N_THREADS, sizeof(Bool));
   entry_sp = VG_(calloc)("mv.rg.sp", VG_N_THREADS, sizeof(Addr));
   strict = VG_(calloc)("mv.rg.strict", VG_N_THREADS, sizeof(Bool));
   lines_of = VG_(calloc)("mv.rg.lines", VG_N_THREADS, sizeof(Bool));
}

/*------------------------------------------------------------*/
/*--- The ranges in memory                                 ---*/
/*------------------------------------------------------------*/

static Int cmp_range(const void* a, const void* b)
{
   const Range* x = a;
   const Range* y = b;
   return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

static const HChar* base_name(const HChar* p)
{
   const HChar* s = VG_(strrchr)(p, '/');
   return s ? s + 1 : p;
}

/* The object's DebugInfo, by path or else by file name. */
static const DebugInfo* find_object(void)
{
   const DebugInfo* di;
   const DebugInfo* by_name = NULL;
   for (di = VG_(next_DebugInfo)(NULL); di; di = VG_(next_DebugInfo)(di)) {
      const HChar* f = VG_(DebugInfo_get_filename)(di);
      if (f == NULL) continue;
      if (VG_(strcmp)(f, object) == 0) return di;
      if (by_name == NULL && VG_(strcmp)(base_name(f), base_name(object)) == 0)
         by_name = di;
   }
   return by_name;
}

void mv_rg_prepare(void)
{
   const DebugInfo* di;
   PtrdiffT bias;
   UInt i;
   if (relocated || n_ranges == 0) return;
   di = find_object();
   if (di == NULL) return;
   bias = VG_(DebugInfo_get_text_bias)(di);
   for (i = 0; i < n_ranges; i++) {
      ranges[i].lo += bias;
      ranges[i].hi += bias;
   }
   VG_(ssort)(ranges, n_ranges, sizeof(Range), cmp_range);
   relocated = True;
}

/* The range holding `ip`, or NULL. mapvis passes disjoint ranges. */
static const Range* find(Addr ip)
{
   UInt lo = 0, hi = n_ranges;
   if (!relocated) return NULL;
   while (lo < hi) {
      UInt mid = (lo + hi) / 2;
      if (ranges[mid].lo <= ip) lo = mid + 1; else hi = mid;
   }
   return lo > 0 && ip < ranges[lo - 1].hi ? &ranges[lo - 1] : NULL;
}

Bool mv_rg_in(Addr ip)
{
   return !done && find(ip) != NULL;
}

Bool mv_rg_checking(void) { return now_checking; }

Bool mv_rg_recording(void) { return traced_n > 0 || win_open; }

/*------------------------------------------------------------*/
/*--- Entering and leaving                                 ---*/
/*------------------------------------------------------------*/

/* Instruments what the state needs; re-instruments all code when that
   changes. */
static void update(void)
{
   Bool check = !done && (sticky || inside_n > 0);
   Bool trace = !done && (sticky || traced_n > 0);
   if (check == now_checking && trace == now_tracing && done == now_done) return;
   if (!done && !sticky && ++switches > STICKY_AFTER) {
      sticky = True;
      check = trace = True;
   }
   now_checking = check;
   now_tracing = trace;
   now_done = done;
   mv_set_instrumentation(trace);
   epoch++;
}

void mv_rg_add_epoch_check(IRSB* sb, Addr start)
{
   IRTemp now = newIRTemp(sb->tyenv, Ity_I64);
   IRTemp stale = newIRTemp(sb->tyenv, Ity_I1);
   addStmtToIRSB(sb, IRStmt_WrTmp(now, IRExpr_Load(Iend_LE, Ity_I64,
                                                  mkIRExpr_HWord((HWord)&epoch))));
   addStmtToIRSB(sb, IRStmt_WrTmp(stale, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(now),
                                                     IRExpr_Const(IRConst_U64(epoch)))));
   addStmtToIRSB(sb, IRStmt_Put(__builtin_offsetof(VexGuestAMD64State, guest_CMSTART),
                                IRExpr_Const(IRConst_U64(start))));
   addStmtToIRSB(sb, IRStmt_Put(__builtin_offsetof(VexGuestAMD64State, guest_CMLEN),
                                IRExpr_Const(IRConst_U64(1))));
   addStmtToIRSB(sb, IRStmt_Exit(IRExpr_RdTmp(stale), Ijk_InvalICache,
                                 IRConst_U64(start), OFFSET_amd64_RIP));
}

/* Ends a region kept open for lines that were not come back to. */
static void end_lingering(void)
{
   if (!lingering) return;
   lingering = False;
   mv_region_end(linger_tid);
}

static void leave(ThreadId tid, Bool lines)
{
   Addr sp = entry_sp[tid];
   entry_sp[tid] = 0;
   inside_n--;
   if (mv_rg_on[tid]) {
      mv_rg_on[tid] = False;
      traced_n--;
      if (traced_n == 0 && lines) {
         lingering = True;
         linger_tid = tid;
         linger_sp = sp;
      } else if (traced_n == 0) {
         mv_region_end(tid);
      }
   }
   if (calls_last != 0 && calls >= calls_last && traced_n == 0) done = True;
   update();
}

static void rg_enter(Addr ip, Addr sp, Addr fp)
{
   ThreadId tid = VG_(get_running_tid)();
   const Range* r;
   if (tid >= VG_N_THREADS || entry_sp[tid] != 0 || done) return;
   r = find(ip);
   if (r == NULL) return;
   if (lingering && r->lines && tid == linger_tid && sp == linger_sp) {
      /* The same execution of the lines goes on. */
      lingering = False;
      entry_sp[tid] = sp;
      strict[tid] = False;
      inside_n++;
      mv_rg_on[tid] = True;
      traced_n++;
      update();
      return;
   }
   end_lingering();
   calls++;
   entry_sp[tid] = sp;
   strict[tid] = r->fn;
   lines_of[tid] = r->lines;
   inside_n++;
   if (calls >= calls_first && (calls_last == 0 || calls <= calls_last)) {
      calls_traced++;
      mv_rg_on[tid] = True;
      traced_n++;
      if (traced_n == 1) mv_region_begin(tid, ip, sp, fp, r->fn);
   }
   update();
}

static void rg_check(Addr ip, Addr sp, Addr fp)
{
   ThreadId tid = VG_(get_running_tid)();
   Addr e;
   if (tid >= VG_N_THREADS) return;
   e = entry_sp[tid];
   if (e == 0 || (strict[tid] ? sp <= e : sp < e)) return;
   leave(tid, lines_of[tid]);
}

void mv_rg_add_call(IRSB* sb, Addr ip, Bool in)
{
   IRTemp sp = newIRTemp(sb->tyenv, Ity_I64);
   IRTemp fp = newIRTemp(sb->tyenv, Ity_I64);
   IRExpr** args;
   IRDirty* di;
   addStmtToIRSB(sb, IRStmt_WrTmp(sp, IRExpr_Get(OFFSET_amd64_RSP, Ity_I64)));
   addStmtToIRSB(sb, IRStmt_WrTmp(fp, IRExpr_Get(OFFSET_amd64_RBP, Ity_I64)));
   args = mkIRExprVec_3(mkIRExpr_HWord(ip), IRExpr_RdTmp(sp), IRExpr_RdTmp(fp));
   if (in)
      di = unsafeIRDirty_0_N(0, "rg_enter", VG_(fnptr_to_fnentry)(&rg_enter), args);
   else
      di = unsafeIRDirty_0_N(0, "rg_check", VG_(fnptr_to_fnentry)(&rg_check), args);
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

void mv_rg_thread_exit(ThreadId tid)
{
   if (n_ranges == 0 || tid >= VG_N_THREADS) return;
   if (entry_sp[tid] != 0) leave(tid, False);
   if (lingering && linger_tid == tid) end_lingering();
}

void mv_rg_thread_create(ThreadId tid)
{
   mv_rg_thread_exit(tid);
}

void mv_rg_finish(void)
{
   HChar text[128];
   if (mv_win_on) {
      VG_(snprintf)(text, sizeof text, "windows %llu, short %llu, run %llu", win_n,
                    win_open ? win_left : 0ULL, mv_win_run);
      if (win_open) {
         set_all_on(False);
         mv_region_end(1);
      }
      mv_region_note(text);
      return;
   }
   if (!mv_rg_asked()) return;
   end_lingering();
   VG_(snprintf)(text, sizeof text, "entered %llu, traced %llu", calls, calls_traced);
   mv_region_note(text);
}
