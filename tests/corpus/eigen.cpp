// Eigen (Debian's libeigen3-dev): dense matrix products and a vector
// update; the matrices' storage is allocated inside Eigen's templates.
#include "corpus.h"
#include <Eigen/Core>

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   const int n = 20;
   Eigen::MatrixXd A(n, n), B(n, n);
   Eigen::VectorXd x(n);
   for (int i = 0; i < n; i++) {
      x(i) = 1.0 / (i + 1);
      for (int j = 0; j < n; j++) {
         A(i, j) = i + 0.5 * j;
         B(i, j) = (i == j) ? 2.0 : 0.1;
      }
   }
   /* Eigen allocates a matrix's storage in DenseStorage's constructor or
    * resize, into its member m_data: the matrix holds it, and Eigen's
    * members are left out of the name. */
   corpus_array("A", A.data(), sizeof(double) * n * n);
   corpus_array("B", B.data(), sizeof(double) * n * n);
   corpus_array("x", x.data(), sizeof(double) * n);
   CORPUS_START;
   Eigen::MatrixXd C = A * B;
   Eigen::VectorXd y = C * x;
   y += 0.5 * x;
   double s = y.sum();
   CORPUS_STOP;
   corpus_array("C", C.data(), sizeof(double) * n * n);
   corpus_array("y", y.data(), sizeof(double) * n);
   corpus_close();
   printf("%g\n", s);
   return 0;
}
