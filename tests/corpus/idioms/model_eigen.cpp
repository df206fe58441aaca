// Item: a C++ class holding two std::vector members and an
// Eigen::MatrixXd, built in its constructor's member initializers: each
// buffer is named by the object's member (`m.w`, `m.b`, `m.K`), the
// standard library's and Eigen's internals left out of the path.
#include "corpus.h"
#include <Eigen/Core>
#include <vector>

struct Model {
   explicit Model(int n) : w(n, 0.5), b(n, 1.0), K(n, n) { K.setIdentity(); }
   std::vector<double> w;
   std::vector<double> b;
   Eigen::MatrixXd K;
};

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   const int n = 24;
   Model m(n);
   corpus_array("m.w", m.w.data(), n * sizeof(double));
   corpus_array("m.b", m.b.data(), n * sizeof(double));
   corpus_array("m.K", m.K.data(), n * n * sizeof(double));
   CORPUS_START;
   for (int i = 0; i < n; i++) {
      double s = m.b[i];
      for (int j = 0; j < n; j++)
         s += m.K(i, j) * m.w[j];
      m.b[i] = s;
   }
   CORPUS_STOP;
   corpus_close();
   printf("%g\n", m.b[n - 1]);
   return 0;
}
