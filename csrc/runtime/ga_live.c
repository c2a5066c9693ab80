/* ga_live.c: the registry of live storages (see ga_live.h). */
#include "ga_live.h"

#include <stdlib.h>
#include <string.h>

#include "ga_error.h"

static int live_on;
/* A doubly linked list through the storages, oldest first, so removal is O(1). */
static ga_storage *live_head, *live_tail;
static size_t live_n;
/* Tags are kept for the life of the process (a storage may outlive its tag's test):
 * one copy per distinct tag in a row, which is one per test. */
static char **tags;
static int32_t ntags, cap_tags, cur_tag = -1;

void
ga_live_enable(void)
{
    live_on = 1;
}

int
ga_live_set_tag(const char *tag)
{
    if (tag == NULL) {
        cur_tag = -1;
        return GA_OK;
    }
    if (cur_tag >= 0 && strcmp(tags[cur_tag], tag) == 0) {
        return GA_OK;
    }
    if (ntags == cap_tags) {
        int32_t cap = cap_tags ? 2 * cap_tags : 256;
        char **t = (char **)realloc(tags, (size_t)cap * sizeof(*t));
        if (t == NULL) {
            return ga_error(GA_ERR_NOMEM, "out of host memory for a leak-check tag");
        }
        tags = t;
        cap_tags = cap;
    }
    size_t n = strlen(tag) + 1;
    char *copy = (char *)malloc(n);
    if (copy == NULL) {
        return ga_error(GA_ERR_NOMEM, "out of host memory for a leak-check tag");
    }
    memcpy(copy, tag, n);
    tags[ntags] = copy;
    cur_tag = ntags++;
    return GA_OK;
}

void
ga_live_add(ga_storage *s)
{
    if (!live_on) {
        return;
    }
    s->live_tag = cur_tag;
    s->live_prev = live_tail;
    s->live_next = NULL;
    if (live_tail != NULL) {
        live_tail->live_next = s;
    }
    else {
        live_head = s;
    }
    live_tail = s;
    s->live_listed = 1;
    live_n++;
}

void
ga_live_remove(ga_storage *s)
{
    if (!s->live_listed) {
        return; /* made before the registry was on */
    }
    if (s->live_prev != NULL) {
        s->live_prev->live_next = s->live_next;
    }
    else {
        live_head = s->live_next;
    }
    if (s->live_next != NULL) {
        s->live_next->live_prev = s->live_prev;
    }
    else {
        live_tail = s->live_prev;
    }
    s->live_listed = 0;
    live_n--;
}

size_t
ga_live_count(void)
{
    return live_n;
}

void
ga_live_foreach(void (*fn)(void *ctx, const ga_storage *s, const char *tag), void *ctx)
{
    for (const ga_storage *s = live_head; s != NULL; s = s->live_next) {
        fn(ctx, s, s->live_tag >= 0 ? tags[s->live_tag] : NULL);
    }
}
