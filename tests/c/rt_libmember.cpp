// A library's private member is left out of a path, its public member is
// not: t's buffer is held by t.cells_ (private to a class of a header
// under usr/include) and is named `t`; s's buffer is held by s.data (a
// public member of a library's structure) and is named `s.data`.
#include "gleipnir.h"
#include <rtlib.hpp>
#include <cstdio>
#include <cstdlib>

int main(void)
{
   rtlib::Table t(100);
   rtlib::Span s;
   s.len = 50;
   s.data = static_cast<double *>(malloc(sizeof(double) * s.len));
   GL_START;
   for (int i = 0; i < t.size(); i++)
      t.at(i) = i;
   for (int i = 0; i < s.len; i++)
      s.data[i] = 2.0;
   double sum = 0;
   for (int i = 0; i < t.size(); i++)
      sum += t.at(i);
   GL_STOP;
   printf("%g %g\n", sum, s.data[7]);
   free(s.data);
   return 0;
}
