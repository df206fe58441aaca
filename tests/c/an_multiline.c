/* A malloc statement spread over three lines. */
#include <stdlib.h>
#include "gleipnir.h"
#define ROWS 4
#define COLS 5
int main(void)
{
    int i;
    int *grid =
        (int *) malloc(
            ROWS * COLS * sizeof(int));
    GL_START;
    for (i = 0; i < ROWS * COLS; i++) grid[i] = i;  /* grid: 20 stores of 4 bytes */
    GL_STOP;
    free(grid);
    return 0;
}
