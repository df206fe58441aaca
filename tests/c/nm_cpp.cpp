// C++ allocations: new, new[], std::make_unique<T[]>, a std::vector that
// grows, members set in constructors, and a method's frame.
#include <memory>
#include <vector>
#include "gleipnir.h"
struct P {
    double x;
    double y;
};
class Grid {
public:
    explicit Grid(int n) : n_(n) { data_ = new float[n * n]; }
    ~Grid() { delete[] data_; }
    float &at(int i, int j) { return data_[i * n_ + j]; }
private:
    int n_;
    float *data_;
};
class Buf {
public:
    explicit Buf(int n) { this->vals_ = new int[n]; }
    ~Buf() { delete[] vals_; }
    int *vals_;
};
int main()
{
    int n = 4;
    double *a = new double[n];
    P *ps = new P[16];
    P *one = new P;
    std::vector<double> grid(n * n);
    auto u = std::make_unique<double[]>(n);
    Grid g(3);
    Buf b(5);
    GL_START;
    for (int i = 0; i < n; i++) a[i] = i;             // a: 4 stores of 8 bytes
    ps[3].y = 1.0;                                    // ps[3].y: 1 store of 8
    one->x = 2.0;                                     // one.x: 1 store of 8
    for (int i = 0; i < n * n; i++) grid[i] = i;      // grid: 16 stores of 8
    for (int i = 0; i < n; i++) u[i] = a[i];          // u: 4 stores, a: 4 loads
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            g.at(i, j) = 1.0f;                        // data_: 9 stores of 4
    for (int i = 0; i < 5; i++) b.vals_[i] = i;       // vals_: 5 stores of 4
    grid.push_back(7.0);                              // grows: a new buffer
    GL_STOP;
    delete one;
    delete[] ps;
    delete[] a;
    return 0;
}
