// GLM (Debian's libglm-dev): points in std::vectors transformed by a
// matrix built with GLM's templates.
#include "corpus.h"
#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>
#include <vector>

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   const int n = 200;
   std::vector<glm::vec4> pts(n);
   for (int i = 0; i < n; i++)
      pts[i] = glm::vec4(i * 0.1f, i * 0.2f, 1.0f - i * 0.01f, 1.0f);
   std::vector<glm::vec4> out(n);
   glm::mat4 M(1.0f);
   corpus_array("pts", pts.data(), sizeof(glm::vec4) * n);
   corpus_array("out", out.data(), sizeof(glm::vec4) * n);
   corpus_array("M", &M, sizeof M);
   CORPUS_START;
   M = glm::rotate(M, 0.3f, glm::vec3(0.0f, 0.0f, 1.0f));
   M = glm::translate(M, glm::vec3(1.0f, 2.0f, 3.0f));
   for (int i = 0; i < n; i++)
      out[i] = M * pts[i];
   float len = 0;
   for (int i = 0; i < n; i++)
      len += glm::length(glm::vec3(out[i]));
   CORPUS_STOP;
   corpus_close();
   printf("%f\n", len);
   return 0;
}
