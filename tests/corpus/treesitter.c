/* tree-sitter (the runtime bundled in the tree-sitter crate, src/lib.c)
 * with its C grammar (the parser generated into the tree-sitter-c crate):
 * inside the region a small C text is parsed into a syntax tree, which a
 * tree cursor walks depth first; the harness records each node's kind,
 * start and depth in arrays of its own and counts the kinds.
 *
 * The arrays are the harness's: the source text handed to the parser
 * (`text`, read by the lexer), the walk's records (`kinds`, `starts`,
 * `depths`) and the histogram of node kinds (`counts`), sized by the
 * grammar's symbol count. The parser, the tree and the cursor's stack
 * are the library's own. */
#include "corpus.h"
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_c(void);

#define MAXN 1024

static const char program[] =
   "#include <stdio.h>\n"
   "struct point { int x, y; };\n"
   "static int sq(int v) { return v * v; }\n"
   "int dist2(const struct point *a, const struct point *b)\n"
   "{\n"
   "   int dx = a->x - b->x, dy = a->y - b->y;\n"
   "   return sq(dx) + sq(dy);\n"
   "}\n"
   "int main(void)\n"
   "{\n"
   "   struct point p[4] = {{0, 0}, {3, 4}, {6, 8}, {1, 1}};\n"
   "   long total = 0;\n"
   "   for (int i = 0; i < 4; i++)\n"
   "      for (int j = i + 1; j < 4; j++)\n"
   "         total += dist2(&p[i], &p[j]);\n"
   "   if (total > 100 && total % 2 == 0)\n"
   "      printf(\"%ld\\n\", total);\n"
   "   else\n"
   "      puts(\"small\");\n"
   "   return (int)(total & 0xff);\n"
   "}\n";

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   size_t len = sizeof program - 1;
   char *text = malloc(len);
   for (size_t i = 0; i < len; i++)
      text[i] = program[i];
   TSSymbol *kinds = malloc(MAXN * sizeof *kinds);
   uint32_t *starts = malloc(MAXN * sizeof *starts);
   unsigned char *depths = malloc(MAXN);
   const TSLanguage *c = tree_sitter_c();
   uint32_t nsym = ts_language_symbol_count(c);
   int *counts = calloc(nsym, sizeof *counts);
   TSParser *parser = ts_parser_new();
   ts_parser_set_language(parser, c);
   corpus_array("text", text, len);
   corpus_array("kinds", kinds, MAXN * sizeof *kinds);
   corpus_array("starts", starts, MAXN * sizeof *starts);
   corpus_array("depths", depths, MAXN);
   corpus_array("counts", counts, nsym * sizeof *counts);
   int n = 0, errors = 0;
   CORPUS_START;
   TSTree *tree = ts_parser_parse_string(parser, NULL, text, (uint32_t)len);
   TSTreeCursor cur = ts_tree_cursor_new(ts_tree_root_node(tree));
   int depth = 0;
   for (;;) {
      TSNode node = ts_tree_cursor_current_node(&cur);
      if (n < MAXN) {
         kinds[n] = ts_node_symbol(node);
         starts[n] = ts_node_start_byte(node);
         depths[n] = (unsigned char)depth;
         n++;
      }
      counts[ts_node_symbol(node)]++;
      if (ts_node_is_error(node))
         errors++;
      if (ts_tree_cursor_goto_first_child(&cur)) {
         depth++;
         continue;
      }
      while (!ts_tree_cursor_goto_next_sibling(&cur)) {
         if (!ts_tree_cursor_goto_parent(&cur))
            goto done;
         depth--;
      }
   }
done:
   ts_tree_cursor_delete(&cur);
   CORPUS_STOP;
   corpus_close();
   int most = 0;
   for (uint32_t s = 1; s < nsym; s++)
      if (counts[s] > counts[most])
         most = (int)s;
   printf("%d nodes, %d errors, most %s (%d), last depth %d\n", n, errors,
          ts_language_symbol_name(c, (TSSymbol)most), counts[most], depths[n - 1]);
   ts_tree_delete(tree);
   ts_parser_delete(parser);
   return 0;
}
