// Boost.MultiArray (Debian's libboost1.74-dev): a 3-D grid smoothed by a
// seven-point stencil through multi_array's nested operator[], then a
// plane taken through an array view (boost::indices) and summed.
#include "corpus.h"
#include <boost/multi_array.hpp>

typedef boost::multi_array<double, 3> Grid;
typedef Grid::index_range range;
typedef boost::multi_array<double, 2> Plane;

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   const int n = 14;
   Grid A(boost::extents[n][n][n]), B(boost::extents[n][n][n]);
   Plane C(boost::extents[n][n]);
   for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
         for (int k = 0; k < n; k++)
            A[i][j][k] = (i * 7 + j * 3 + k) % 11 * 0.25;
   corpus_array("A", A.data(), sizeof(double) * A.num_elements());
   corpus_array("B", B.data(), sizeof(double) * B.num_elements());
   corpus_array("C", C.data(), sizeof(double) * C.num_elements());
   CORPUS_START;
   for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
         for (int k = 1; k < n - 1; k++)
            B[i][j][k] = (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k] +
                          A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1]) /
                            6.0 -
                         A[i][j][k];
   Grid::array_view<2>::type plane = B[boost::indices[range(1, n - 1)][n / 2][range(1, n - 1)]];
   for (Grid::index i = 0; i < (Grid::index)plane.shape()[0]; i++)
      for (Grid::index k = 0; k < (Grid::index)plane.shape()[1]; k++)
         C[i][k] = plane[i][k] * 2.0;
   double s = 0;
   for (int i = 0; i < n; i++)
      for (int k = 0; k < n; k++)
         s += C[i][k];
   CORPUS_STOP;
   corpus_close();
   printf("%g\n", s);
   return 0;
}
