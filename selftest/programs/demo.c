/* The program `make demo` traces: a small key-value cache that forgets to
 * free its evicted entries, so the report has a leak to show. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char *key;
    char *value;
    struct entry *next;
};

static struct entry *cache_insert(struct entry *head, const char *key, const char *value)
{
    struct entry *e = malloc(sizeof(*e));
    e->key = strdup(key);
    e->value = strdup(value);
    e->next = head;
    return e;
}

/* Keeps the newest n entries; the rest are unlinked but, by mistake,
 * only their structs are freed, not their strings. */
static void cache_trim(struct entry *head, int n)
{
    for (int i = 1; head && i < n; i++)
        head = head->next;
    if (!head)
        return;
    struct entry *rest = head->next;
    head->next = NULL;
    while (rest) {
        struct entry *next = rest->next;
        free(rest);
        rest = next;
    }
}

int main(void)
{
    struct entry *cache = NULL;
    char key[32], value[64];
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "key-%d", i);
        snprintf(value, sizeof(value), "value of entry number %d", i);
        cache = cache_insert(cache, key, value);
        if (i % 10 == 9)
            cache_trim(cache, 5);
    }
    char *buffer = calloc(4, 1024);
    buffer = realloc(buffer, 8192);
    free(buffer);
    printf("demo: cache holds %s\n", cache->key);
    return 0;
}
