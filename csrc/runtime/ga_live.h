/* ga_live.h: the storages alive now, for leak checks that name who made them.
 *
 * Why: LeakSanitizer reports an array still alive at exit as a leak of its storage
 * header (CPython keeps objects and frames in mmap'ed memory that LeakSanitizer does
 * not scan), with a C stack that names no test, and whether it sees one at all depends
 * on when the last garbage collection ran. When the registry is on, every storage
 * remembers the tag that was current when it was made (the test suite sets each test's
 * node id) and the binding lists the storages still alive after the interpreter has
 * finished (Py_AtExit), so a leak names its test in every run, sanitizer or not.
 *
 * Off by default: then it costs one predictable branch per storage made or freed.
 * Storage changes happen under the GIL (ga_array.h), and so do these calls.
 */
#ifndef GA_LIVE_H
#define GA_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "ga_array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start recording (storages made before are not listed). */
void ga_live_enable(void);
/* The tag that storages made from now on carry (copied; NULL for none).
 * GA_ERR_NOMEM when the copy fails (the previous tag stays). */
int ga_live_set_tag(const char *tag);

/* ga_array.c's hooks: a storage was made, or is about to be freed. */
void ga_live_add(ga_storage *s);
void ga_live_remove(ga_storage *s);

/* The storages alive now, oldest first: fn(ctx, storage, its tag or NULL). */
size_t ga_live_count(void);
void ga_live_foreach(void (*fn)(void *ctx, const ga_storage *s, const char *tag),
                     void *ctx);

#ifdef __cplusplus
}
#endif

#endif
