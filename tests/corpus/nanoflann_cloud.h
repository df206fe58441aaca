// nanoflann_cloud.h: the point cloud of the nanoflann harnesses
// (nanoflann.cpp, rg_nanoflann.cpp): 2-D points in a std::vector member,
// as nanoflann's dataset adaptor reads them, and the k-d tree over them.
#ifndef MAPVIS_NANOFLANN_CLOUD_H
#define MAPVIS_NANOFLANN_CLOUD_H

#include <nanoflann.hpp>
#include <vector>

struct Cloud {
   struct Point {
      double x, y;
   };
   std::vector<Point> pts;
   size_t kdtree_get_point_count() const { return pts.size(); }
   double kdtree_get_pt(size_t i, size_t d) const { return d == 0 ? pts[i].x : pts[i].y; }
   template <class B> bool kdtree_get_bbox(B &) const { return false; }
};

typedef nanoflann::KDTreeSingleIndexAdaptor<
   nanoflann::L2_Simple_Adaptor<double, Cloud>, Cloud, 2> Tree;

#endif
