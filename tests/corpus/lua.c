/* Lua 5.4 (the interpreter's C sources bundled in the lua-src crate): a
 * script run through the C API builds tables and strings, sorts, calls
 * back into C functions of the harness, and leaves results that the
 * harness copies out.
 *
 * The arrays are the harness's: the numbers it hands the script (`input`,
 * read into a Lua table), the script's text (`script`, read by Lua's
 * lexer), a userdata block that Lua allocated and the harness keeps a
 * pointer to (`acc`, filled by a C function the script calls), a
 * histogram of word lengths that another C function fills (`hist`) and
 * the sorted results copied out of the script's table (`out`).
 *
 * Lua seeds its string hashes with the time and addresses, and sort picks
 * random pivots from the clock: the test's -D flags make both constant,
 * so that the two runs the test compares do the same work. */
#include "corpus.h"
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <string.h>

#define N 160
#define WORDS 64

static int *hist;

static const char script[] =
   "local t = {}\n"
   "for i = 1, #input do t[i] = input[i] * 3 % 101 + i / 1000 end\n"
   "table.sort(t, function(a, b) return a > b end)\n"
   "local seen, words = {}, {}\n"
   "for w in string.gmatch(text, '%a+') do\n"
   "  local u = string.upper(w)\n"
   "  if not seen[u] then seen[u] = true; words[#words + 1] = u end\n"
   "  count(#w)\n"
   "end\n"
   "table.sort(words)\n"
   "for i = 1, #t, 4 do accumulate(acc, i % 16, t[i]) end\n"
   "result = t\n"
   "joined = table.concat(words, ',')\n";

/* accumulate(ud, k, x): adds x to element k of the userdata of doubles. */
static int accumulate(lua_State *L)
{
   double *a = lua_touserdata(L, 1);
   lua_Integer k = luaL_checkinteger(L, 2);
   a[k] += luaL_checknumber(L, 3);
   return 0;
}

/* count(n): one more word of length n. */
static int count(lua_State *L)
{
   lua_Integer n = luaL_checkinteger(L, 1);
   hist[n < WORDS ? n : WORDS - 1]++;
   return 0;
}

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   double *input = malloc(N * sizeof *input);
   double *out = malloc(N * sizeof *out);
   hist = calloc(WORDS, sizeof *hist);
   for (int i = 0; i < N; i++)
      input[i] = (i * 37) % 89 + 0.25 * i;
   lua_State *L = luaL_newstate();
   luaL_openlibs(L);
   lua_register(L, "accumulate", accumulate);
   lua_register(L, "count", count);
   lua_pushstring(L, "the quick brown fox jumps over the lazy dog while the "
                     "interpreter builds tables of strings and numbers and "
                     "sorts them for the harness to read back");
   lua_setglobal(L, "text");
   double *acc = lua_newuserdata(L, 16 * sizeof *acc);
   memset(acc, 0, 16 * sizeof *acc);
   lua_setglobal(L, "acc");
   corpus_array("input", input, N * sizeof *input);
   corpus_array("out", out, N * sizeof *out);
   corpus_array("hist", hist, WORDS * sizeof *hist);
#ifdef CORPUS_LUA_USERDATA
   /* Left out of the lua case: see the test lua_userdata. */
   corpus_array("acc", acc, 16 * sizeof *acc);
#endif
   corpus_array("script", script, sizeof script);
   int r;
   size_t jlen = 0;
   CORPUS_START;
   lua_createtable(L, N, 0);
   for (int i = 0; i < N; i++) {
      lua_pushnumber(L, input[i]);
      lua_rawseti(L, -2, i + 1);
   }
   lua_setglobal(L, "input");
   r = luaL_dostring(L, script);
   lua_getglobal(L, "result");
   for (int i = 0; i < N; i++) {
      lua_rawgeti(L, -1, i + 1);
      out[i] = lua_tonumber(L, -1);
      lua_pop(L, 1);
   }
   lua_pop(L, 1);
   lua_getglobal(L, "joined");
   lua_tolstring(L, -1, &jlen);
   lua_pop(L, 1);
   CORPUS_STOP;
   corpus_close();
   printf("%d %g %g %g %d %zu\n", r, out[0], out[N - 1], acc[1], hist[3], jlen);
   lua_close(L);
   return 0;
}
