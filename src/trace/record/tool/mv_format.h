/* The mapvis trace format's numbers: the one definition that both the
   Valgrind tool (mv_main.c) and the Rust reader use. build.rs turns every
   `#define NAME NUMBER` below into `pub(crate) const NAME: u64` in
   src/trace/record/format.rs, so writer and reader cannot drift apart.
   docs/trace-format.md documents every record kind; a test checks that it
   does, and that the reader decodes each one.

   Only plain decimal or hexadecimal numbers (and character constants) are
   turned into Rust constants. */

#ifndef MV_FORMAT_H
#define MV_FORMAT_H


#define MV_MAGIC          "MVTRACE\n"
#define MV_FORMAT_VERSION 7

#define REC_SITE          1
#define REC_THREAD        2
#define REC_SP            3
#define REC_ALLOC         4
#define REC_FREE          5
#define REC_MAP           6
#define REC_UNMAP         7
#define REC_THREAD_CREATE 8
#define REC_THREAD_EXIT   9
#define REC_REGION_START  10
#define REC_REGION_STOP   11
#define REC_WARNING       12
#define REC_FOOTER        13
#define REC_FP            14
#define REC_EXIT          15   /* appended by mapvis after the run */
#define REC_END           0    /* followed by "MVEND\n": the last bytes of a complete trace */
#define REC_SYNC          16   /* version 2 */
#define REC_ICOUNT        17   /* version 2 */
#define REC_STACK_ALLOC   18   /* version 3 */
#define REC_MMAP          19   /* version 3 */
#define REC_RECODE        20   /* version 5 */
#define REC_ROOTS         21   /* version 6: words that point into heap blocks */
#define REC_ROOT_REGS     22   /* version 6: registers that point into heap blocks */
#define REC_PTR_STORE     23   /* version 6: the next access stores a new block's address */
#define REC_BLOCK         24   /* version 7: a checked block of records follows */
#define BLOCK_HEADER_BYTES 13  /* version 7: key, length (4 bytes), XXH64 (8 bytes) */
#define MAX_BLOCK_BYTES   4194304 /* version 7: a block's records; the tool's buffer */
#define KEY_ACCESS_BASE   32   /* keys 0..31 are control records */
#define HOT_CODES         48   /* site codes whose access keys take one byte */

/* Kinds of SYNC records, as in reader.rs SyncKind. */
#define SK_FORK     1
#define SK_JOIN     2
#define SK_EXIT     3
#define SK_ACQUIRE  4
#define SK_RELEASE  5
#define SK_NEWSYNC  6
#define SK_DELSYNC  7
/* Version 4: the high four bits of a SYNC kind byte say which primitive
   an acquire, release, new or delete is about (0, a mutex, in earlier
   versions). */
#define SYNC_PRIM_SHIFT 4
#define SP_MUTEX    0
#define SP_RWLOCK   1
#define SP_COND     2
#define SP_SEM      3

#define OP_LOAD   'L'
#define OP_STORE  'S'
#define OP_MODIFY 'M'

/* Allocation kinds, as in reader.rs AllocKind. */
#define AK_MALLOC   1
#define AK_CALLOC   2
#define AK_REALLOC  3
#define AK_MEMALIGN 4
#define AK_NEW      5
#define AK_NEW_ARR  6
#define FK_FREE     1
#define FK_DELETE   2
#define FK_DEL_ARR  3

/* Warning codes, as in reader.rs. */
#define W_NESTED_START   1
#define W_STOP_NO_START  2
#define W_OPEN_AT_EXIT   3
#define W_BAD_FREE       4
#define W_FORKED         5
#define W_EXEC           6   /* the program called exec: the trace may end here */
#define W_EXEC_FAILED    7   /* ... and the exec failed: the trace goes on */
#define W_SNAPSHOT_PARTIAL 8 /* version 6: the root snapshot left memory out */
#define W_REGION_CALLS   9   /* a code region's entries: "entered N, traced M" */

/* Added to an ALLOC record's kind: a block the process inherited at
   fork(), not one it allocated. */
#define AK_INHERITED     0x80

#endif
