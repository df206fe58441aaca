/* QuickJS (the QuickJS-ng sources bundled in the rquickjs-sys crate): a
 * script evaluated through the C API fills a typed array that lies over
 * the harness's own memory, splits, maps and sorts strings, calls back
 * into a C function of the harness, and returns JSON that the harness
 * copies out.
 *
 * The arrays are the harness's: the script's text (`code`, read by the
 * parser), the samples the script writes through a Float64Array over an
 * ArrayBuffer made on the harness's block without a copy (`samples`), a
 * block the harness allocated with QuickJS's own allocation wrapper,
 * js_malloc, and fills from a C function the script calls (`notes`), and
 * the JSON text copied out (`json`).
 *
 * QuickJS seeds Map and Set hashes and Math.random from the time: the
 * script uses none of them, so that the two runs the test compares do the
 * same work. */
#include "corpus.h"
#include <quickjs.h>
#include <string.h>

#define N 256
#define NOTES 32
#define JSON 2048

static int *notes;

static const char code[] =
   "const a = new Float64Array(buf);\n"
   "for (let i = 0; i < a.length; i++) a[i] = Math.sqrt(i) * 3 + (i % 7);\n"
   "const words = text.split(' ').map(w => w.toUpperCase()).sort();\n"
   "const sums = [];\n"
   "for (let k = 0; k < 8; k++) {\n"
   "  let s = 0;\n"
   "  for (let i = k; i < a.length; i += 8) s += a[i];\n"
   "  sums.push(Math.round(s * 100) / 100);\n"
   "}\n"
   "words.forEach((w, i) => note(i % 32, w.length));\n"
   "const o = { words: words.filter((w, i) => words.indexOf(w) === i), sums };\n"
   "JSON.stringify(o);\n";

/* note(k, n): adds n to the harness's note k. */
static JSValue note(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
   int32_t k = 0, n = 0;
   (void)this_val;
   if (argc >= 2) {
      JS_ToInt32(ctx, &k, argv[0]);
      JS_ToInt32(ctx, &n, argv[1]);
   }
   notes[k & (NOTES - 1)] += n;
   return JS_UNDEFINED;
}

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   JSRuntime *rt = JS_NewRuntime();
   JSContext *ctx = JS_NewContext(rt);
   double *samples = malloc(N * sizeof *samples);
   memset(samples, 0, N * sizeof *samples);
   notes = js_malloc(ctx, NOTES * sizeof *notes);
   memset(notes, 0, NOTES * sizeof *notes);
   char *json = malloc(JSON);
   memset(json, 0, JSON);
   JSValue global = JS_GetGlobalObject(ctx);
   JS_SetPropertyStr(ctx, global, "buf",
                     JS_NewArrayBuffer(ctx, (uint8_t *)samples, N * sizeof *samples, 0,
                                       NULL, NULL, false));
   JS_SetPropertyStr(ctx, global, "text",
                     JS_NewString(ctx, "the engine parses and runs a script that fills "
                                       "a typed array and sorts the words of this text "
                                       "for the harness to read back"));
   JS_SetPropertyStr(ctx, global, "note", JS_NewCFunction(ctx, note, "note", 2));
   corpus_array("code", code, sizeof code);
   corpus_array("samples", samples, N * sizeof *samples);
#ifdef CORPUS_QUICKJS_NOTES
   /* Left out of the quickjs case: see the test quickjs_js_malloc. */
   corpus_array("notes", notes, NOTES * sizeof *notes);
#endif
   corpus_array("json", json, JSON);
   size_t len = 0;
   int exc;
   CORPUS_START;
   JSValue r = JS_Eval(ctx, code, sizeof code - 1, "<corpus>", JS_EVAL_TYPE_GLOBAL);
   exc = JS_IsException(r);
   const char *s = JS_ToCStringLen(ctx, &len, r);
   for (size_t i = 0; s && i < len && i < JSON - 1; i++)
      json[i] = s[i];
   JS_FreeCString(ctx, s);
   JS_FreeValue(ctx, r);
   CORPUS_STOP;
   corpus_close();
   printf("%d %zu %g %d %.60s\n", exc, len, samples[N - 1], notes[1], json);
   JS_FreeValue(ctx, global);
   return 0;
}
