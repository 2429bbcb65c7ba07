#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *next; int key; char name[16]; };

static struct node *push(struct node *head, int key)
{
    struct node *n = malloc(sizeof(*n));
    if (!n)
        return head;
    n->next = head;
    n->key = key;
    snprintf(n->name, sizeof(n->name), "node-%d", key);
    return n;
}

int main(int argc, char **argv)
{
    struct node *list = NULL;
    for (int i = 0; i < argc * 10; i++)
        list = push(list, i);
    int sum = 0;
    for (struct node *n = list; n; n = n->next)
        sum += n->key + (int)strlen(n->name);
    printf("%s: %d\n", argv[0], sum);
    while (list) {
        struct node *next = list->next;
        free(list);
        list = next;
    }
    return 0;
}
