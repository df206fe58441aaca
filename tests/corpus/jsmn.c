/* jsmn (Debian's libjsmn-dev): tokenizes a JSON text from the heap into a
 * stack array of tokens. */
#include "corpus.h"
#include <jsmn.h>
#include <string.h>

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   const char *src = "{\"name\": \"grid\", \"dims\": [64, 32, 8], \"scale\": 0.25, "
                     "\"tags\": [\"a\", \"bb\", \"ccc\"], \"nested\": {\"k\": true, \"v\": null}}";
   size_t len = strlen(src);
   char *text = malloc(len + 1);
   memcpy(text, src, len + 1);
   jsmntok_t tokens[64];
   jsmn_parser parser;
   corpus_array("text", text, len + 1);
   corpus_array("tokens", tokens, sizeof tokens);
   corpus_array("parser", &parser, sizeof parser);
   CORPUS_START;
   jsmn_init(&parser);
   int n = jsmn_parse(&parser, text, len, tokens, 64);
   int strings = 0;
   for (int i = 0; i < n; i++)
      strings += tokens[i].type == JSMN_STRING;
   CORPUS_STOP;
   corpus_close();
   printf("%d %d\n", n, strings);
   return 0;
}
