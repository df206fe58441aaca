// nanoflann traced by a method (set_region function
// KDTreeSingleIndexAdaptor::knnSearch, the pins ignored): the tree is
// built before the region, and the markers enclose exactly the one
// query, so that Lackey's bytes between them are the method's: the
// points it reads and the results it writes.
#include "corpus.h"
#include "nanoflann_cloud.h"

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   Cloud cloud;
   cloud.pts.resize(200);
   for (size_t i = 0; i < cloud.pts.size(); i++)
      cloud.pts[i] = {double((i * 37) % 101), double((i * 53) % 89)};
   corpus_array("cloud", cloud.pts.data(), sizeof(Cloud::Point) * cloud.pts.size());
   unsigned found[4];
   double dist[4];
   corpus_array("found", found, sizeof found);
   corpus_array("dist", dist, sizeof dist);
   Tree tree(2, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(8));
   tree.buildIndex();
   double q[2] = {40.0, 40.0};
   CORPUS_START;
   tree.knnSearch(q, 4, found, dist);
   CORPUS_STOP;
   corpus_close();
   printf("%u %g\n", found[0], dist[0]);
   return 0;
}
