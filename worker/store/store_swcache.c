/*
** store_swcache.c — parsed software dictionaries (RC-01) kept between
** grid loads.
**
** Why: every job decision loads the queues of its gshare, and each AUTO
** queue carries its published software as JSON text. Parsing that text
** again for every decision took about 60 % of a job decision's CPU (a
** profile of one worker deciding 5-job requests over the sample grid's
** 166 queues). The text changes only when the grid is loaded again, so
** the parsed dictionary is kept, keyed by the text itself: a queue whose
** dictionary changed has different text and is parsed again, and nothing
** has to tell the cache that the grid changed.
**
** Lifetime: an entry lives until the cache is emptied, which happens only
** at the start of a grid load (stc_sw_begin) once it holds STC_MAX
** entries or its arena is full. So every dictionary a load hands out
** stays valid for the whole decision that load serves, and the cache
** holds at most STC_MAX dictionaries and STC_ARENA bytes.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "gb_error.h"
#include "model/gridmodel.h"
#include "store/store_internal.h"

#define STC_MAX 4096                  /* dictionaries kept */
#define STC_SLOTS (2 * STC_MAX)       /* open addressing, half full at most */
#define STC_ARENA ((size_t)256 << 20) /* bytes of parsed dictionaries */

struct stc_entry {
	uint64_t hash;
	size_t len;
	const char *text;       /* in the cache's arena */
	const struct rc_sw *sw; /* likewise */
};

struct st_swcache {
	struct arena a;
	struct stc_entry slot[STC_SLOTS];
	size_t n;
	int full; /* the arena refused an entry: empty it at the next load */
};

static void stc_empty(struct st_swcache *c)
{
	arena_free(&c->a);
	arena_init(&c->a, STC_ARENA);
	memset(c->slot, 0, sizeof(c->slot));
	c->n = 0;
	c->full = 0;
}

int stc_sw_begin(struct st_db *db)
{
	if (db->swc != NULL && (db->swc->n >= STC_MAX || db->swc->full)) {
		stc_empty(db->swc);
		return 1;
	}
	return 0;
}

void stc_sw_free(struct st_db *db)
{
	if (db->swc == NULL)
		return;
	arena_free(&db->swc->a);
	free(db->swc);
	db->swc = NULL;
}

int stc_sw_get(struct st_db *db, const char *json, const char *what,
	       struct arena *a, const struct rc_sw **out)
{
	char err[256] = "";
	struct st_swcache *c = db->swc;
	if (c == NULL && (c = calloc(1, sizeof(*c))) != NULL) {
		arena_init(&c->a, STC_ARENA);
		db->swc = c;
	}
	uint64_t h = gb_hash64(json);
	size_t len = strlen(json), i = 0;
	if (c != NULL) {
		for (i = (size_t)(h % STC_SLOTS); c->slot[i].text != NULL;
		     i = (i + 1) % STC_SLOTS) {
			const struct stc_entry *e = &c->slot[i];
			if (e->hash == h && e->len == len &&
			    memcmp(e->text, json, len) == 0) {
				*out = e->sw;
				return GB_OK;
			}
		}
	}
	/* Not cached: parse into the cache when it has room (the load that
	** asks never empties it, see the header), else into the caller's
	** arena, as before the cache. */
	int cached = c != NULL && !c->full && c->n < STC_MAX;
	struct arena *into = cached ? &c->a : a;
	struct rc_sw *sw = arena_alloc(into, sizeof(*sw));
	char *text = cached ? arena_strndup(&c->a, json, len) : NULL;
	if (cached && (sw == NULL || text == NULL)) {
		c->full = 1;
		cached = 0;
		into = a;
		sw = arena_alloc(a, sizeof(*sw));
	}
	if (sw == NULL)
		return st_too_big(db, "sw dictionaries", 1);
	int rc = gm_parse_sw_text(json, what, into, sw, err, sizeof(err));
	if (rc != GB_OK && cached && (rc == GB_ENOMEM || rc == GB_ETOOBIG)) {
		/* The cache's arena ran out in the middle: parse again where
		** the request's own memory is. */
		c->full = 1;
		cached = 0;
		sw = arena_alloc(a, sizeof(*sw));
		rc = sw ? gm_parse_sw_text(json, what, a, sw, err, sizeof(err))
			: GB_ETOOBIG;
	}
	if (rc == GB_ENOMEM || rc == GB_ETOOBIG)
		return st_failf(db, GB_ETOOBIG, "%s: %s", what, err);
	if (rc != GB_OK)
		return st_failf(db, GB_ERANGE, "stored %s does not parse: %s",
				what, err);
	if (cached) {
		c->slot[i] = (struct stc_entry){h, len, text, sw};
		c->n++;
	}
	*out = sw;
	return GB_OK;
}
