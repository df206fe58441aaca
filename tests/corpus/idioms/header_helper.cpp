// Item: helpers in headers. Blocks returned by a template and an inline
// function of a header are named by the statements that store them.
#include "corpus.h"
#include "alloc.h"

struct Mesh {
   double *m_dxx;
   double *m_dyy;
   float *m_w;
   explicit Mesh(size_t n)
   {
      m_dxx = Allocate<double>(n);
      m_dyy = Allocate<double>(n);
      m_w = Allocate<float>(n);
   }
};

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   const size_t n = 64;
   Mesh mesh(n);
   double *extra = alloc_doubles(32);
   corpus_array("m_dxx|mesh.m_dxx", mesh.m_dxx, n * sizeof(double));
   corpus_array("m_dyy|mesh.m_dyy", mesh.m_dyy, n * sizeof(double));
   corpus_array("m_w|mesh.m_w", mesh.m_w, n * sizeof(float));
   corpus_array("extra", extra, 32 * sizeof(double));
   CORPUS_START;
   for (size_t i = 0; i < n; i++) {
      mesh.m_dxx[i] = i * 0.5;
      mesh.m_w[i] = 1.0f;
   }
   for (size_t i = 0; i < n; i++)
      mesh.m_dyy[i] = mesh.m_dxx[i] * mesh.m_w[i];
   for (size_t i = 0; i < 32; i++)
      extra[i] = mesh.m_dyy[i] + mesh.m_dyy[i + 32];
   CORPUS_STOP;
   corpus_close();
   printf("%g\n", extra[7]);
   return 0;
}
