/* SQLite (the amalgamation bundled in the libsqlite3-sys crate): an
 * in-memory database; inside the region a table and an index are made,
 * rows are inserted through a prepared statement bound from the
 * harness's arrays (`vals`, `tags`, read by the bind calls and by SQLite
 * when it builds each record), updated, and queried with a grouping and
 * an ordering whose rows are copied into the harness's result arrays
 * (`grp`, `cnt`, `sums`, `first`).
 *
 * SQLite allocates everything else (pages, the statements, the sorter)
 * with its own allocator, memsys5, from one block the harness gives it
 * (SQLITE_CONFIG_HEAP), as an embedded user would: `pool`, where all of
 * SQLite's memory is named by the harness's pointer to it. (With malloc
 * instead, naming SQLite's thousands of blocks by their statements in the
 * amalgamation takes the analysis more than ten minutes.) The pool is
 * page-aligned: SQLite copies with memcpy, and glibc's memcpy picks its
 * moves by the destination's alignment, so the two runs the test
 * compares (whose allocators differ) see the same moves only when the
 * blocks lie at the same offsets in their pages.
 *
 * The test's -D flags build SQLite without threads and with its
 * randomness seeded by zeros (it would read /dev/urandom), so that the
 * two runs the test compares do the same work. */
#include "corpus.h"
#include <sqlite3.h>
#include <string.h>

#define N 240
#define GROUPS 12
#define TAG 12
#define POOL (4u << 20)

static const char *const words[] = {"alpha", "bravo", "charlie", "delta",
                                    "echo",  "foxtrot", "golf", "hotel"};

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   double *vals = malloc(N * sizeof *vals);
   char(*tags)[TAG] = malloc(N * sizeof *tags);
   int *grp = malloc(GROUPS * sizeof *grp);
   long long *cnt = malloc(GROUPS * sizeof *cnt);
   double *sums = malloc(GROUPS * sizeof *sums);
   char(*first)[TAG] = malloc(GROUPS * sizeof *first);
   int taglen[N];
   for (int i = 0; i < N; i++) {
      vals[i] = (i * 53) % 97 + 0.5 * (i % 7);
      const char *w = words[(i * 5) % 8];
      int n = 0;
      while (w[n] && n < TAG - 3) {
         tags[i][n] = w[n];
         n++;
      }
      tags[i][n++] = (char)('0' + i % 10);
      tags[i][n] = 0;
      taglen[i] = n;
   }
   memset(grp, 0, GROUPS * sizeof *grp);
   memset(cnt, 0, GROUPS * sizeof *cnt);
   memset(sums, 0, GROUPS * sizeof *sums);
   memset(first, 0, GROUPS * sizeof *first);
   unsigned char *pool = aligned_alloc(4096, POOL);
   if (sqlite3_config(SQLITE_CONFIG_HEAP, pool, (int)POOL, 64) != SQLITE_OK)
      return 1;
   sqlite3 *db;
   if (sqlite3_open(":memory:", &db) != SQLITE_OK)
      return 1;
   corpus_array("vals", vals, N * sizeof *vals);
   corpus_array("tags", tags, N * sizeof *tags);
   corpus_array("grp", grp, GROUPS * sizeof *grp);
   corpus_array("cnt", cnt, GROUPS * sizeof *cnt);
   corpus_array("sums", sums, GROUPS * sizeof *sums);
   corpus_array("first", first, GROUPS * sizeof *first);
   /* From -O2 -flto on, main keeps `pool` nowhere once it has handed
    * it to sqlite3_config: SQLite's global configuration is then all
    * that holds its address, in the member pHeap. */
   corpus_array("pool|sqlite3Config.pHeap", pool, POOL);
   int rows = 0, r1, r2, r3;
   CORPUS_START;
   r1 = sqlite3_exec(db,
                     "CREATE TABLE t(id INTEGER PRIMARY KEY, g INTEGER, v REAL, tag TEXT);"
                     "CREATE INDEX t_g ON t(g, v);",
                     NULL, NULL, NULL);
   sqlite3_stmt *ins;
   sqlite3_prepare_v2(db, "INSERT INTO t(g, v, tag) VALUES (?1, ?2, ?3)", -1, &ins, NULL);
   sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
   for (int i = 0; i < N; i++) {
      sqlite3_bind_int(ins, 1, (i * 7) % GROUPS);
      sqlite3_bind_double(ins, 2, vals[i]);
      sqlite3_bind_text(ins, 3, tags[i], taglen[i], SQLITE_STATIC);
      sqlite3_step(ins);
      sqlite3_reset(ins);
   }
   sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
   sqlite3_finalize(ins);
   r2 = sqlite3_exec(db, "UPDATE t SET v = v * 2 WHERE g % 3 = 0", NULL, NULL, NULL);
   sqlite3_stmt *q;
   sqlite3_prepare_v2(db,
                      "SELECT g, count(*), sum(v), min(tag) FROM t WHERE v > ?1 "
                      "GROUP BY g ORDER BY sum(v) DESC",
                      -1, &q, NULL);
   sqlite3_bind_double(q, 1, 10.0);
   while ((r3 = sqlite3_step(q)) == SQLITE_ROW && rows < GROUPS) {
      grp[rows] = sqlite3_column_int(q, 0);
      cnt[rows] = sqlite3_column_int64(q, 1);
      sums[rows] = sqlite3_column_double(q, 2);
      const unsigned char *t = sqlite3_column_text(q, 3);
      for (int k = 0; t && t[k] && k < TAG - 1; k++)
         first[rows][k] = (char)t[k];
      rows++;
   }
   sqlite3_finalize(q);
   CORPUS_STOP;
   corpus_close();
   printf("%d %d %d %d %d %lld %g %s\n", r1, r2, r3, rows, grp[0], cnt[0], sums[0], first[0]);
   sqlite3_close(db);
   return 0;
}
