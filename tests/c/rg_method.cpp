// A C++ class with an overloaded method: Grid::smooth(int) adds to the
// first n cells (n loads and n stores of 8 bytes at -O0), and
// Grid::smooth(double) scales every cell. Between the pins one call of
// smooth(int) with n = 40: under set_region function Grid::smooth(int)
// the same 40 loads and 40 stores of the cells; "Grid::smooth" alone
// names both overloads and is refused.
#include <cstdio>
#include <vector>
#include "gleipnir.h"

class Grid {
public:
    explicit Grid(int n) : cells(n, 1.0) {}
    void smooth(int n)
    {
        for (int i = 0; i < n; i++)
            cells[i] += 0.5;
    }
    void smooth(double f)
    {
        for (double &c : cells)
            c *= f;
    }
    double first() const { return cells[0]; }

private:
    std::vector<double> cells;
};

int main()
{
    Grid g(64);
    g.smooth(2.0);
    GL_START;
    g.smooth(40);
    GL_STOP;
    std::printf("%f\n", g.first());
    return 0;
}
