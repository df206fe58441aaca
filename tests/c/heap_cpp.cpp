// C++ allocations for the native heap profiler: new, new[], delete,
// delete[], each from a line of its own.
struct Node {
    long key;
    Node *next;
};

int main()
{
    int *v = new int[10];            // NEW_ARRAY: 40 bytes
    Node *head = nullptr;
    for (int i = 0; i < 3; i++) {
        Node *n = new Node{i, head}; // NEW_NODE: 16 bytes, 3 times
        head = n;
    }
    while (head) {
        Node *next = head->next;
        delete head;                 // DELETE_NODE
        head = next;
    }
    delete[] v;                      // DELETE_ARRAY
    return 0;
}
