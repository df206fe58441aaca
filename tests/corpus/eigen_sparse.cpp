// Eigen (Debian's libeigen3-dev) beyond dense products: a sparse matrix
// assembled from triplets, multiplied by a vector, and a dense symmetric
// system solved by Eigen's Cholesky factorisation (LLT), in place through
// an Eigen::Ref (a copy of the matrix into the factorisation would be a
// memcpy whose loads depend on the blocks' alignment, which differs
// between the two runs the test compares).
#include "corpus.h"
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <vector>

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   const int n = 30;
   std::vector<Eigen::Triplet<double> > trips;
   trips.reserve(3 * n);
   for (int i = 0; i < n; i++) {
      trips.push_back(Eigen::Triplet<double>(i, i, 4.0));
      if (i + 1 < n) {
         trips.push_back(Eigen::Triplet<double>(i, i + 1, -1.0));
         trips.push_back(Eigen::Triplet<double>(i + 1, i, -1.0));
      }
   }
   Eigen::MatrixXd M(n, n);
   for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
         M(i, j) = (i == j) ? n + 1.0 : 1.0 / (1 + i + j);
   Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(n, 1.0, 2.0);
   corpus_array("trips", trips.data(), sizeof(Eigen::Triplet<double>) * trips.size());
   corpus_array("M", M.data(), sizeof(double) * n * n);
   corpus_array("v", v.data(), sizeof(double) * n);
   CORPUS_START;
   Eigen::SparseMatrix<double> S(n, n);
   S.setFromTriplets(trips.begin(), trips.end());
   Eigen::VectorXd w = S * v;
   Eigen::LLT<Eigen::Ref<Eigen::MatrixXd> > llt(M);
   Eigen::VectorXd x = llt.solve(w);
   double r = x.sum();
   CORPUS_STOP;
   corpus_array("S", S.valuePtr(), sizeof(double) * S.nonZeros());
   corpus_array("S", S.innerIndexPtr(), sizeof(int) * S.nonZeros());
   corpus_array("S", S.outerIndexPtr(), sizeof(int) * (n + 1));
   corpus_array("w", w.data(), sizeof(double) * n);
   corpus_array("x", x.data(), sizeof(double) * n);
   corpus_close();
   printf("%g\n", r);
   return 0;
}
