// C++ idioms beyond nm_cpp.cpp: a member set in a constructor's member
// initializer list, std::vector buffers that are reallocated as they grow
// (reserve + push_back, resize, a member vector grown in a method),
// a vector declared in a callee, a vector grown through a reference
// parameter, and std::make_unique<T[]>.
#include <memory>
#include <vector>
#include "gleipnir.h"
class Field {
public:
    explicit Field(int n) : n_(n), data_(new float[n]) {}
    ~Field() { delete[] data_; }
    int n_;
    float *data_;
};
class Series {
public:
    void fill()
    {
        vals_.reserve(16);
        for (int i = 0; i < 16; i++)
            vals_.push_back(i);
        vals_.push_back(16.0f);
    }
    std::vector<float> vals_;
};
static double total()
{
    std::vector<double> v = std::vector<double>(8, 0.5);
    double s = 0;
    for (int i = 0; i < 8; i++)
        s += v[i];
    return s;
}
// A known limit: the caller's vector is named after this parameter.
static void fill(std::vector<double> &out)
{
    out.reserve(4);
    for (int i = 0; i < 4; i++)
        out.push_back(1.0);
}
int main()
{
    Field f(6);
    std::vector<double> grid;
    std::vector<double> r(8);
    Series series;
    auto w = std::make_unique<int[]>(5);
    std::vector<double> filled;
    GL_START;
    for (int i = 0; i < 6; i++)
        f.data_[i] = i;
    grid.reserve(8);
    for (int i = 0; i < 17; i++)
        grid.push_back(i);
    for (int i = 0; i < 8; i++)
        r[i] = i;
    r.resize(16);
    series.fill();
    for (int i = 0; i < 5; i++)
        w[i] = i;
    double t = total();
    fill(filled);
    GL_STOP;
    return t > 0 ? 0 : 1;
}
