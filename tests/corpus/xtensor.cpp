// xtensor (Debian's libxtensor-dev, with xtl-dev): lazy expressions over
// two xarrays evaluated into a third, a reduction along an axis and a
// strided view, all through xtensor's expression templates.
#include "corpus.h"
#include <xtensor/xarray.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xreducer.hpp>
#include <xtensor/xview.hpp>

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   const size_t n = 24;
   xt::xarray<double> a = xt::zeros<double>({n, n});
   xt::xarray<double> b = xt::zeros<double>({n, n});
   for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) {
         a(i, j) = 0.5 * i - 0.25 * j;
         b(i, j) = (i + 2 * j) % 7 * 0.125;
      }
   corpus_array("a", a.data(), sizeof(double) * a.size());
   corpus_array("b", b.data(), sizeof(double) * b.size());
   CORPUS_START;
   xt::xarray<double> c = a * b + 2.0 * xt::abs(a) - b;
   xt::xarray<double> rows = xt::sum(c, {1});
   auto odd = xt::view(c, xt::range(1, n, 2), xt::all());
   double s = 0;
   for (auto v : odd)
      s += v;
   s += rows(3);
   CORPUS_STOP;
   corpus_array("c", c.data(), sizeof(double) * c.size());
   corpus_array("rows", rows.data(), sizeof(double) * rows.size());
   corpus_close();
   printf("%g\n", s);
   return 0;
}
