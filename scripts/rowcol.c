/*
 * rowcol.c: the mapvis demo.  A heap 2D array of ints is written row by row
 * (row-major: consecutive addresses) and then column by column (column-major:
 * a stride of one row), between the pins.  The figures show the difference.
 */
#include <stdio.h>
#include <stdlib.h>
#include "gleipnir.h"

#define ROWS 16
#define COLS 16

int main(void)
{
    int i, j;
    int *arr = (int *) malloc(ROWS * COLS * sizeof(int));
    if (arr == NULL)
        return 1;

    GL_START;
    for (i = 0; i < ROWS; i++)          /* row-major: stride 4 bytes */
        for (j = 0; j < COLS; j++)
            arr[i * COLS + j] = i;
    for (j = 0; j < COLS; j++)          /* column-major: stride 64 bytes */
        for (i = 0; i < ROWS; i++)
            arr[i * COLS + j] += j;
    GL_STOP;

    printf("arr[%d][%d] = %d\n", ROWS - 1, COLS - 1, arr[ROWS * COLS - 1]);
    free(arr);
    return 0;
}
