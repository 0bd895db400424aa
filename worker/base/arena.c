/*
** arena.c — chunked bump allocation with a byte cap.
*/
#include "base/arena.h"

#include <stdlib.h>
#include <string.h>

struct arena_chunk {
	struct arena_chunk *next;
	size_t size; /* usable bytes in data[] */
	size_t off;  /* next free byte */
	_Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK_MIN 4096

void arena_init(struct arena *a, size_t cap)
{
	a->head = NULL;
	a->used = 0;
	a->cap = cap;
}

void *arena_alloc(struct arena *a, size_t size)
{
	size_t need = (size + 15u) & ~(size_t)15u;
	if (need < size || a->used + need > a->cap || a->used + need < a->used)
		return NULL;
	struct arena_chunk *c = a->head;
	if (c == NULL || c->size - c->off < need) {
		size_t sz = need > ARENA_CHUNK_MIN ? need : ARENA_CHUNK_MIN;
		if (c && c->size * 2 > sz && c->size * 2 <= 1u << 20)
			sz = c->size * 2; /* grow geometrically up to 1 MiB */
		c = malloc(sizeof(*c) + sz);
		if (c == NULL)
			return NULL;
		c->next = a->head;
		c->size = sz;
		c->off = 0;
		a->head = c;
	}
	void *p = c->data + c->off;
	c->off += need;
	a->used += need;
	memset(p, 0, size);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t len)
{
	char *p = arena_alloc(a, len + 1);
	if (p == NULL)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

void arena_free(struct arena *a)
{
	struct arena_chunk *c = a->head;
	while (c) {
		struct arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	a->head = NULL;
	a->used = 0;
}
