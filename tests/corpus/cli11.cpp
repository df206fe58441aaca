// CLI11 (Debian's libcli11-dev): a command line parsed by an App whose
// options are bound to the program's variables (numbers, a flag, a string
// and a std::vector<double> that the parse fills).
#include "corpus.h"
#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   CLI::App app("corpus");
   int steps = 0;
   double tol = 0;
   bool verbose = false;
   std::string mode;
   std::vector<double> weights;
   app.add_option("-n,--steps", steps, "steps");
   app.add_option("-t,--tol", tol, "tolerance");
   app.add_option("-w,--weights", weights, "weights");
   app.add_option("--mode", mode, "mode");
   app.add_flag("-v,--verbose", verbose, "verbose");
   /* App::parse takes the arguments last first. */
   std::vector<std::string> args = {"--steps", "40", "-t", "1e-6", "--mode=fine", "-v", "-w"};
   for (int i = 0; i < 12; i++)
      args.push_back(std::to_string(i) + ".25");
   std::reverse(args.begin(), args.end());
   /* args is not listed: the parse ends by moving what is left over into
    * it, which frees its buffer inside the region. */
   corpus_array("mode", &mode, sizeof mode);
   corpus_array("verbose", &verbose, sizeof verbose);
   corpus_array("steps", &steps, sizeof steps);
   corpus_array("tol", &tol, sizeof tol);
   CORPUS_START;
   app.parse(args);
   double s = 0;
   for (double x : weights)
      s += x;
   CORPUS_STOP;
   corpus_array("weights", weights.data(), sizeof(double) * weights.size());
   corpus_close();
   printf("%d %g %d %s %g\n", steps, tol, verbose, mode.c_str(), s);
   return 0;
}
