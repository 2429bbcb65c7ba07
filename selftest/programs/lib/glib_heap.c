/* A small GLib program (built by heaps_glib.sh with pkg-config), linked
 * with libgobject, whose start builds the type system: GLib's fundamental
 * type nodes are g_malloc0 blocks that gtype.c marks, always, with
 * VALGRIND_MALLOCLIKE_BLOCK (the node starts 8 bytes into its block).
 * "base": that start and one type lookup only.  "work": GStrings, a
 * GSList of strings, a GQueue, a GPtrArray, g_slice blocks, some kept
 * (reachable), some forgotten (definitely lost; one GString with its
 * characters: one definite, one indirect), the rest given back.
 *
 * Not used, because GLib 2.74 takes another path under valgrind
 * (RUNNING_ON_VALGRIND, docs/custom-heaps.md): GHashTable (no 32-bit key
 * and value arrays), GObject instances and signals (closures and
 * instances with private data made of extra blocks).  "hash" adds a
 * GHashTable, to measure that. */
#include <glib-object.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <valgrind/valgrind.h>

#define N 200

static GSList *list;
static gpointer slices[N];
static GString *kept_string;
static GQueue queue = G_QUEUE_INIT;
static GPtrArray *array;
static GHashTable *table;

static void work(void)
{
    for (int i = 0; i < 50; i++) {
        GString *s = g_string_new("line");
        for (int k = 0; k < i; k++)
            g_string_append_printf(s, " %d", k);
        if (i == 7)
            kept_string = s;
        else if (i != 9) /* 9: forgotten, its characters with it */
            g_string_free(s, TRUE);
    }
    for (int i = 0; i < 100; i++)
        list = g_slist_prepend(list, g_strdup_printf("item %d", i));
    while (g_slist_length(list) > 60) {
        g_free(list->data);
        list = g_slist_delete_link(list, list);
    }
    for (int i = 0; i < N; i++)
        slices[i] = g_slice_alloc0(24 + (gsize)(i % 5) * 8);
    for (int i = 0; i < N; i++)
        if (i % 3) {
            g_slice_free1(24 + (gsize)(i % 5) * 8, slices[i]);
            slices[i] = NULL;
        }
    slices[0] = NULL; /* forgotten */
    array = g_ptr_array_new_with_free_func(g_free);
    for (int i = 0; i < 80; i++)
        g_ptr_array_add(array, g_strdup_printf("%d", i));
    g_ptr_array_remove_range(array, 0, 20);
    for (int i = 0; i < 30; i++)
        g_queue_push_tail(&queue, g_strdup("queued"));
    for (int i = 0; i < 10; i++)
        g_free(g_queue_pop_head(&queue));
}

static void hash(void)
{
    table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    for (int i = 0; i < N; i++)
        g_hash_table_insert(table, g_strdup_printf("key-%d", i), g_strdup("value"));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "work";
    if (strcmp(mode, "base") != 0)
        work();
    if (strcmp(mode, "hash") == 0)
        hash();
    printf("%s: type %s, running on valgrind: %u\n", mode, g_type_name(G_TYPE_OBJECT),
           RUNNING_ON_VALGRIND);
    return 0;
}
