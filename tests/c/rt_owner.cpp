/* Objects that own their buffer through a member initializer: each
   Vec's coefficients are one std::vector member. The statement reader
   saw only the member initializer's line; the rows must be the objects,
   x, r and p, with the full path x.coefs under set_heap_grouping
   instances. A Model with two vectors keeps its members in the names. */
#include <cstdio>
#include <vector>
#include "gleipnir.h"

struct Vec {
   explicit Vec(int n) : len(n), coefs(n) {}
   int len;
   std::vector<double> coefs;
};

struct Model {
   explicit Model(int n) : w(n), b(n) {}
   std::vector<double> w;
   std::vector<double> b;
};

int main()
{
   Vec x(100), r(100), p(100);
   Model m(10);
   GL_START;
   for (int i = 0; i < 100; i++)
      r.coefs[i] = 1.0 + i;
   for (int i = 0; i < 100; i++)
      p.coefs[i] = 0.5 * r.coefs[i];
   for (int i = 0; i < 100; i++)
      x.coefs[i] += 2.0 * p.coefs[i];
   for (int i = 0; i < 10; i++)
      m.w[i] = m.b[i] + 1.0;
   GL_STOP;
   std::printf("%g %g\n", x.coefs[7], m.w[3]);
   return 0;
}
