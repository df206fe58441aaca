// nanoflann (Debian's libnanoflann-dev): a k-d tree over a point cloud
// whose points are a std::vector member; the tree's nodes and index come
// from the header's own allocators.
#include "corpus.h"
#include "nanoflann_cloud.h"

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   Cloud cloud;
   cloud.pts.resize(120);
   for (size_t i = 0; i < cloud.pts.size(); i++)
      cloud.pts[i] = {double((i * 37) % 101), double((i * 53) % 89)};
   corpus_array("cloud", cloud.pts.data(), sizeof(Cloud::Point) * cloud.pts.size());
   unsigned found[3];
   double dist[3];
   corpus_array("found", found, sizeof found);
   corpus_array("dist", dist, sizeof dist);
   CORPUS_START;
   Tree tree(2, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(8));
   tree.buildIndex();
   double q[2] = {40.0, 40.0};
   tree.knnSearch(q, 3, found, dist);
   CORPUS_STOP;
   corpus_close();
   printf("%u %g\n", found[0], dist[0]);
   return 0;
}
