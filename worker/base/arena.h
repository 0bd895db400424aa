/*
** arena.h — a bounded bump allocator for one request.
**
** Decoded messages and scenario files own their strings and arrays through
** an arena: one free() per request, and a hard cap so that no input can make
** the worker allocate without bound (the cap is a config value; a message
** that needs more is rejected as too big, not half-decoded).
*/
#ifndef GB_ARENA_H
#define GB_ARENA_H

#include <stddef.h>

struct arena_chunk;
struct arena {
	struct arena_chunk *head; /* newest chunk first */
	size_t used;              /* bytes handed out, all chunks */
	size_t cap;               /* hard limit on `used` */
};

/* Start an empty arena that will hand out at most `cap` bytes. */
void arena_init(struct arena *a, size_t cap);

/* Zeroed, 16-byte aligned memory, or NULL when the cap or malloc fails. */
void *arena_alloc(struct arena *a, size_t size);

/* Copy `len` bytes and add a NUL; NULL on failure. */
char *arena_strndup(struct arena *a, const char *s, size_t len);

/* Copy a NUL-terminated string (NULL in -> NULL out). */
char *arena_strdup(struct arena *a, const char *s);

/* Free every chunk; the arena can be reused after arena_init. */
void arena_free(struct arena *a);

#endif
