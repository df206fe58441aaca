// A library's header, as installed under a usr/include folder: a class
// that keeps its buffer in a private member, and a structure whose
// members are public.
#ifndef RTLIB_HPP
#define RTLIB_HPP
#include <cstdlib>

namespace rtlib {

class Table {
public:
   explicit Table(int n) : n_(n), cells_(new double[n]()) {}
   ~Table() { delete[] cells_; }
   Table(const Table &) = delete;
   Table &operator=(const Table &) = delete;
   double &at(int i) { return cells_[i]; }
   int size() const { return n_; }

private:
   int n_;
   double *cells_;
};

struct Span {
   double *data;
   int len;
};

} // namespace rtlib
#endif
