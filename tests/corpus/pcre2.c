/* PCRE2 (10.46, the sources bundled in the pcre2-sys crate, 8-bit code
 * units): inside the region the harness builds character tables for the
 * C locale (pcre2_maketables), compiles two patterns with them, one for
 * e-mail addresses with named groups and caseless matching, one for ISO
 * dates, and scans a log text for every match of each (pcre2_match from
 * one offset to the next, as a grep does), recording each match's span
 * and copying each address's host into its own buffer.
 *
 * The harness's arrays: the log text (`text`, read by the matcher), the
 * spans of the matches (`spans`) and the hosts copied out of the text
 * (`hosts`, written by pcre2_substring_copy_byname).
 *
 * PCRE2's own blocks that it returns to the harness are named by the
 * harness's variables that receive them, as a user would name them: the
 * compiled patterns (`emails`, `dates`: the code block pcre2_compile
 * allocates and fills) and the match data (`mdata`, whose ovector the
 * matcher writes).
 *
 * Two more blocks are reached through a member of a PCRE2 structure, and
 * are listed only when built with -DCORPUS_PCRE2_MEMBERS (see the test):
 * the character tables, `ctypes`, which the compile context keeps as
 * `cc->tables` and each compiled pattern as `emails->tables` (where an
 * optimised main keeps `ctypes` in a register only, those members are
 * where the program keeps the address), and the match data's
 * backtracking frames, a block pcre2_match allocates at the first match
 * and keeps in the match data, `mdata->heapframes`. The harness reads
 * those members through PCRE2's internal header, as a debugger shows them
 * (the public header keeps the structures opaque). */
#include "corpus.h"
/* PCRE2's configuration, then its internal header (and through it the
 * public one), as its own sources include them. */
#include <config.h>
#include <pcre2_internal.h>
#include <string.h>

#define LINES 48
#define TEXT 4096
#define MAXM 128
#define HOSTS 2048

static size_t page_round(size_t n)
{
   return (n + 4095) & ~(size_t)4095;
}

/* Scans `text` for every match of `re`, each from where the last ended;
 * records the spans in `spans` from index `n` and returns the new count.
 * With `hosts`, copies each match's group "host" there, one after the
 * other, from `*hat`. */
static int scan(const pcre2_code *re, const char *text, size_t len, pcre2_match_data *mdata,
                size_t *spans, int n, char *hosts, size_t *hat)
{
   PCRE2_SIZE at = 0;
   while (n < MAXM && at < len) {
      int rc = pcre2_match(re, (PCRE2_SPTR)text, len, at, 0, mdata, NULL);
      if (rc < 0)
         break;
      PCRE2_SIZE *ov = pcre2_get_ovector_pointer(mdata);
      spans[2 * n] = ov[0];
      spans[2 * n + 1] = ov[1];
      n++;
      if (hosts) {
         PCRE2_SIZE room = HOSTS - *hat;
         if (pcre2_substring_copy_byname(mdata, (PCRE2_SPTR) "host",
                                         (PCRE2_UCHAR *)hosts + *hat, &room) == 0)
            *hat += room + 1;
      }
      at = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
   }
   return n;
}

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   char *text = aligned_alloc(4096, TEXT);
   size_t len = 0;
   static const char *users[] = {"ada", "Brian", "grace", "KEN", "dennis", "barbara"};
   static const char *tlds[] = {"org", "com", "net", "io"};
   for (int i = 0; i < LINES; i++)
      len += (size_t)snprintf(text + len, TEXT - len,
                              "2024-%02d-%02d %s sent %d bytes to %s.%d@mail%d.example.%s\n",
                              1 + i % 12, 1 + (i * 7) % 28, i % 5 ? "ok" : "retry",
                              100 + 37 * i, users[i % 6], i, i % 3, tlds[i % 4]);
   size_t *spans = aligned_alloc(4096, page_round(2 * MAXM * sizeof *spans));
   char *hosts = aligned_alloc(4096, HOSTS);
   corpus_array("text", text, len);
   corpus_array("spans", spans, 2 * MAXM * sizeof *spans);
   corpus_array("hosts", hosts, HOSTS);

   static const char email[] = "\\b(?<user>[a-z][a-z0-9._]*)@"
                               "(?<host>[a-z0-9-]+(?:\\.[a-z0-9-]+)*)\\.(?:org|com|net)\\b";
   static const char date[] = "\\b(\\d{4})-(0[1-9]|1[0-2])-(\\d\\d)\\b";
   int err;
   PCRE2_SIZE erroff;
   int n = 0, ne;
   size_t hat = 0;
   CORPUS_START;
   const uint8_t *ctypes = pcre2_maketables(NULL);
   pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
   pcre2_set_character_tables(cc, ctypes);
   pcre2_code *emails = pcre2_compile((PCRE2_SPTR)email, PCRE2_ZERO_TERMINATED,
                                      PCRE2_CASELESS, &err, &erroff, cc);
   pcre2_code *dates =
      pcre2_compile((PCRE2_SPTR)date, PCRE2_ZERO_TERMINATED, 0, &err, &erroff, cc);
   pcre2_match_data *mdata = pcre2_match_data_create(8, NULL);
   n = scan(emails, text, len, mdata, spans, n, hosts, &hat);
   ne = n;
   n = scan(dates, text, len, mdata, spans, n, NULL, NULL);
   CORPUS_STOP;
   corpus_array("emails", emails, emails->blocksize);
   corpus_array("dates", dates, dates->blocksize);
   size_t ovec = 2 * mdata->oveccount * sizeof(PCRE2_SIZE);
   corpus_array("mdata", mdata, offsetof(pcre2_match_data, ovector) + ovec);
#ifdef CORPUS_PCRE2_MEMBERS
   corpus_array("ctypes|cc->tables|emails->tables", ctypes, TABLES_LENGTH);
   corpus_array("mdata->heapframes", mdata->heapframes, mdata->heapframes_size);
#endif
   corpus_close();
   printf("%zu %d %d %zu %.*s\n", len, ne, n - ne, hat, (int)strlen(hosts), hosts);
   return 0;
}
