/* Many blocks from one site (a list built in a loop), and blocks that are
   really distinct arrays (rows[i]). */
#include <stdlib.h>
#include "gleipnir.h"
struct node {
    int val;
    struct node *next;
};
int main(void)
{
    struct node *head = NULL;
    double *rows[3];
    int i, j;
    for (i = 0; i < 3; i++)
        rows[i] = malloc(4 * sizeof(double));
    GL_START;
    for (i = 0; i < 200; i++) {
        struct node *n = malloc(sizeof *n);
        n->val = i;                             /* 4-byte store */
        n->next = head;                         /* 8-byte store */
        head = n;
    }
    for (i = 0; i < 3; i++)
        for (j = 0; j < 4; j++)
            rows[i][j] = i + j;                 /* 4 stores of 8 per row */
    GL_STOP;
    while (head) {
        struct node *next = head->next;
        free(head);
        head = next;
    }
    for (i = 0; i < 3; i++)
        free(rows[i]);
    return 0;
}
