/*
   mv_region.h: regions by code (mapvis's set_region function and lines).

   The region is the execution of a set of code ranges, callees included,
   per thread: a thread enters it when it executes an instruction in the
   ranges and is not inside yet, and leaves it when it executes an
   instruction outside them at a stack pointer that shows it is no longer
   in a callee (see mv_region.c).  mv_main.c owns the trace; this module
   tells it when the first traced thread enters (mv_region_begin) and the
   last one leaves (mv_region_end), and which instrumentation to add.

   This file is part of mapvis, GPL-2.0-or-later like mv_main.c.
*/
#ifndef MAPVIS_MV_REGION_H
#define MAPVIS_MV_REGION_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

/* --region-object, --region-range, --region-calls, --region-label. */
Bool mv_rg_option(const HChar* arg);
/* Whether a code region was asked for (some --region-range). */
Bool mv_rg_asked(void);
/* Allocates the per-thread state; after the options are read. */
void mv_rg_init(void);
/* The header's description of the regions ("function kernel, calls all"). */
const HChar* mv_rg_label(void);
/* Once per superblock, before mv_rg_in: places the ranges in memory once
   their object is mapped. */
void mv_rg_prepare(void);
/* Whether the instruction at `ip` is in the region's code (and the region
   is still wanted). */
Bool mv_rg_in(Addr ip);
/* Adds, at the start of the superblock at `start`, the test that sends a
   superblock translated before the latest change of instrumentation back
   to be translated again. */
void mv_rg_add_epoch_check(IRSB* sb, Addr start);
/* Adds, before the instruction at `ip`, the call that enters the region
   (`in`: ip is in the code) or checks whether the thread left it. */
void mv_rg_add_call(IRSB* sb, Addr ip, Bool in);
/* Whether some thread's accesses are being recorded: a traced call is
   under way or a window is open. */
Bool mv_rg_recording(void);
/* Whether the checks of leaving are to be added to code outside the
   ranges: some thread is inside. */
Bool mv_rg_checking(void);
/* The thread ends: it leaves the region. */
void mv_rg_thread_exit(ThreadId tid);
/* A new thread takes slot `tid`. */
void mv_rg_thread_create(ThreadId tid);
/* Writes the count of entries (a warning record) at the end. */
void mv_rg_finish(void);

/* Set when a code region or windows were asked for: the access helpers
   then record only threads whose mv_rg_on slot is set. */
extern Bool  mv_rg_gate;
extern Bool* mv_rg_on;

/* Windows of the run (--region-window=SKIP,COUNT,EVERY): the run's
   accesses are counted (mv_win_run), inline per superblock outside the
   windows and by the access helper inside them. */
extern Bool  mv_win_on;          /* windows were asked for */
extern ULong mv_win_run;         /* the run's accesses so far */
extern ULong mv_win_next;        /* where the next window starts */
/* Helper, called where mv_win_run reached mv_win_next: opens a window. */
void mv_win_cross(void);
/* An access was recorded inside a window (or dropped by the gate). */
void mv_win_recorded(ThreadId tid);

/* mv_main.c's side. */
/* The first traced thread `tid` entered at `ip` with these stack and
   frame pointers; `call`: at a function's own code, so that sp holds the
   return address. */
void mv_region_begin(ThreadId tid, Addr ip, Addr sp, Addr fp, Bool call);
/* A region opens without a precise frame (a window): the thread's stack as
   the guest state has it, or none when tid is 0 (at start-up). */
void mv_region_begin_here(ThreadId tid);
void mv_region_end(ThreadId tid);
/* Sets whether accesses are instrumented everywhere (`trace`), for the
   superblocks translated from now on. */
void mv_set_instrumentation(Bool trace);
void mv_region_note(const HChar* text);

#endif
