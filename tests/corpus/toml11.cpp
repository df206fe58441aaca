// toml11 (Debian's libtoml11-dev): a configuration in TOML copied from a
// std::string into a string buffer read through a std::istream, parsed
// into toml11's value tree and read back into the program's own variables
// with toml::find. The text stays under 256 bytes: glibc's memcpy picks
// its loads of a longer copy by the blocks' alignment, which differs
// between the two runs the test compares.
#include "corpus.h"
#include <sstream>
#include <string>
#include <toml.hpp>
#include <vector>

/* A string buffer that shows where its text lies. */
struct Source : std::stringbuf {
   explicit Source(const std::string &s) : std::stringbuf(s, std::ios_base::in) {}
   const char *text() const { return eback(); }
};

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   std::string text = "title = \"corpus\"\n[solver]\nsteps = 40\ntolerance = 1e-6\nweights = [";
   for (int i = 0; i < 16; i++)
      text += (i ? ", " : "") + std::to_string(i) + ".5";
   text += "]\n[[stage]]\nname = \"coarse\"\nsize = 8\n[[stage]]\nname = \"fine\"\nsize = 64\n";
   corpus_array("text", text.data(), text.size() + 1);
   CORPUS_START;
   Source buf(text);
   std::istream in(&buf);
   const toml::value conf = toml::parse(in, "conf.toml");
   const toml::value &solver = toml::find(conf, "solver");
   long steps = toml::find<long>(solver, "steps");
   double tol = toml::find<double>(solver, "tolerance");
   std::vector<double> weights = toml::find<std::vector<double> >(solver, "weights");
   long total = 0;
   for (const toml::value &st : toml::find<toml::array>(conf, "stage"))
      total += toml::find<long>(st, "size");
   CORPUS_STOP;
   corpus_array("buf", buf.text(), text.size());
   corpus_array("weights", weights.data(), sizeof(double) * weights.size());
   corpus_close();
   if (text.size() >= 256)
      return 1;
   printf("%ld %g %g %ld\n", steps, tol, weights[5], total);
   return 0;
}
