/*
** tqindex.c — the worker's in-memory task queue index (tqindex.h).
**
** Shape, and why:
**   - Strings are interned once into dense ids (0, 1, 2, ...) through an
**     open-addressing hash table (linear probing, FNV-1a, load <= 1/2), so
**     the engine compares uint32 ids and a pilot's strings cost one hash
**     each. Names are never freed while the index lives: the set of
**     distinct owners, groups, sites and CEs of a grid is small and the
**     engine's views hold ids, so recycling ids would buy nothing.
**   - The TQs are two parallel arrays sorted by tq_id: `views`, the
**     contiguous struct tq_view array handed to tq_match as is, and `tqs`,
**     pointers to the private per-TQ data. The per-TQ data is a heap block
**     of its own that never moves, so a view's `levels` and `set[].v`
**     pointers survive inserting or removing other TQs; only the id arrays
**     of a level move (on growth or compaction) and every change to a level
**     re-points its `lowest` at once.
**   - A TQ has at most one level per UserPriority (TQ_MIN_PRIORITY..
**     TQ_MAX_PRIORITY, eleven), kept in a fixed array inside the TQ block,
**     ascending by priority, so creating a level never allocates anything
**     but its id array. A level's ids are ascending in [head, head + njobs)
**     of a growable array: `lowest` is &v[head], taking the lowest id is
**     head++ (what a match usually does), an insertion or removal shifts
**     whichever side of the position is shorter (the gap before head is
**     used for insertions in the front half), and the array is compacted
**     when the gap before head is at least as large as the live ids, so
**     every operation is amortised O(1) plus the move of the shorter side.
**   - A job is found by its TQ and then a probe of each level: the ten
**     lowest ids of every level first (what a match claims: O(1), and in
**     the cache lines the head already uses), then a binary search of the
**     levels whose [first, last] range holds the id. No per-job hash table:
**     that would triple the ~10 bytes a waiting job costs here.
**
** Postings, so that a pilot is matched without reading every view: per
** pilot field (site, gridCE, platform, pilotType, jobType, tags; enum
** tq_pfield) a bitmap per value id of the TQs listing it, and one of the
** TQs listing no value for the field. A TQ owns a bit number (its slot)
** for life, so inserting or removing other TQs moves no bit; slot_pos
** maps a slot to the TQ's current position. tqi_candidates intersects,
** per field the pilot constrains, (none | union of its values' bitmaps),
** and the TQs carrying every required tag (intersection): what is left
** are the views tq_match_among reads; the rest are counted by popcount.
** 500 TQs are 8 words per bitmap.
**
** Failure: every function allocates what it needs before it changes
** anything; a tqi_tq_put that fails after interning new strings drops them
** again, so GB_ENOMEM leaves the index exactly as it was.
*/
#include "model/tqindex.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "rng.h"

#define TQI_NPRIO (TQ_MAX_PRIORITY - TQ_MIN_PRIORITY + 1)
#define TQI_EMPTY UINT32_MAX   /* free hash slot (also TQ_ID_UNKNOWN) */
#define TQI_SLOTS_MIN 64
#define TQI_TQS_MIN 16
#define TQI_IDS_MIN 8          /* first id array of a level */
#define TQI_COMPACT_MIN 64     /* no compaction for a smaller gap */

/* The storage of one level's ids; the count is the level's njobs. */
struct tqi_ids {
	long long *v;
	size_t head; /* first live id */
	size_t cap;  /* entries allocated in v */
};

/* Private per-TQ data; the block never moves while the TQ lives. */
struct tqi_tq {
	long long seq;
	long long rm_seq; /* removals below it applied (tqsync) */
	uint32_t slot;                     /* bit of this TQ in the postings */
	uint32_t *sets;                    /* every field's ids, one block */
	struct tq_level levels[TQI_NPRIO]; /* [0, nlevels) live, ascending */
	struct tqi_ids ids[TQI_NPRIO];     /* parallel to levels */
};

struct tqi_index {
	/* interning */
	char **names;     /* id -> string */
	uint32_t nnames;
	size_t names_cap;
	uint32_t *slots;  /* hash -> id, TQI_EMPTY when free */
	size_t nslots;    /* power of two, or 0 before the first string */
	/* task queues, both arrays sorted by tq_id */
	struct tq_view *views;
	struct tqi_tq **tqs;
	size_t ntqs, tqs_cap;
	size_t njobs;
	/* posting bitmaps (see "Postings" below), over slots */
	size_t slot_cap;                  /* bits per bitmap, a multiple of 64 */
	uint64_t *alive;                  /* slots in use */
	uint32_t *slot_pos;               /* slot -> position in views */
	uint64_t *none[TQ_NPFIELDS];      /* TQs listing no value of field */
	uint64_t **post[TQ_NPFIELDS];     /* value id -> TQs listing it */
	size_t post_cap[TQ_NPFIELDS];     /* entries of post[f] */
	/* one match's scratch (tqi_candidates; one match at a time) */
	uint64_t *sc_bits;                /* 3 bitmaps */
	size_t *sc_cand;                  /* slot_cap positions */
};

/* ---- interning ------------------------------------------------------------ */

/* The slot holding `s`, or the free slot where it would go. nslots > 0. */
static size_t slot_find(const struct tqi_index *x, const char *s, uint64_t h)
{
	size_t mask = x->nslots - 1;
	size_t i = (size_t)h & mask;
	for (;;) {
		uint32_t id = x->slots[i];
		if (id == TQI_EMPTY || strcmp(x->names[id], s) == 0)
			return i;
		i = (i + 1) & mask;
	}
}

/* Put ids 0..nnames-1 into `slots` (all free, nslots of them). */
static void slots_fill(struct tqi_index *x)
{
	for (uint32_t id = 0; id < x->nnames; id++) {
		size_t i = slot_find(x, x->names[id], gb_hash64(x->names[id]));
		x->slots[i] = id;
	}
}

/* Drop the strings interned after the first `keep` (undo of a failed put).
** The table keeps its size, so refilling it needs no allocation. */
static void intern_truncate(struct tqi_index *x, uint32_t keep)
{
	if (x->nnames == keep)
		return;
	for (uint32_t id = keep; id < x->nnames; id++)
		free(x->names[id]);
	x->nnames = keep;
	for (size_t i = 0; i < x->nslots; i++)
		x->slots[i] = TQI_EMPTY;
	slots_fill(x);
}

uint32_t tqi_intern(struct tqi_index *x, const char *s)
{
	if (x == NULL || s == NULL)
		return TQ_ID_UNKNOWN;
	uint64_t h = gb_hash64(s);
	if (x->nslots > 0) {
		uint32_t id = x->slots[slot_find(x, s, h)];
		if (id != TQI_EMPTY)
			return id;
	}
	if (x->nnames >= TQI_EMPTY - 1)
		return TQ_ID_UNKNOWN; /* ids must stay below TQ_ID_UNKNOWN */
	/* Make room first, so a failure leaves every table as it was. */
	if (x->nnames == x->names_cap) {
		size_t cap = x->names_cap ? x->names_cap * 2 : 64;
		char **n = realloc(x->names, cap * sizeof(*n));
		if (n == NULL)
			return TQ_ID_UNKNOWN;
		x->names = n;
		x->names_cap = cap;
	}
	if ((size_t)(x->nnames + 1) * 2 > x->nslots) {
		size_t ns = x->nslots ? x->nslots * 2 : TQI_SLOTS_MIN;
		uint32_t *sl = malloc(ns * sizeof(*sl));
		if (sl == NULL)
			return TQ_ID_UNKNOWN;
		for (size_t i = 0; i < ns; i++)
			sl[i] = TQI_EMPTY;
		free(x->slots);
		x->slots = sl;
		x->nslots = ns;
		slots_fill(x);
	}
	size_t len = strlen(s);
	char *copy = malloc(len + 1);
	if (copy == NULL)
		return TQ_ID_UNKNOWN;
	memcpy(copy, s, len + 1);
	uint32_t id = x->nnames++;
	x->names[id] = copy;
	x->slots[slot_find(x, s, h)] = id;
	return id;
}

uint32_t tqi_lookup(const struct tqi_index *x, const char *s)
{
	if (x == NULL || s == NULL || x->nslots == 0)
		return TQ_ID_UNKNOWN;
	return x->slots[slot_find(x, s, gb_hash64(s))];
}

const char *tqi_name(const struct tqi_index *x, uint32_t id)
{
	if (x == NULL || id >= x->nnames)
		return NULL;
	return x->names[id];
}

/* ---- task queues ---------------------------------------------------------- */

struct tqi_index *tqi_new(void)
{
	struct tqi_index *x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	/* Views are never NULL, so tq_match gets a valid array even when the
	** index is empty. */
	x->views = malloc(TQI_TQS_MIN * sizeof(*x->views));
	x->tqs = malloc(TQI_TQS_MIN * sizeof(*x->tqs));
	if (x->views == NULL || x->tqs == NULL) {
		free(x->views);
		free(x->tqs);
		free(x);
		return NULL;
	}
	x->tqs_cap = TQI_TQS_MIN;
	return x;
}

static void tq_destroy(struct tqi_tq *t, size_t nlevels)
{
	for (size_t l = 0; l < nlevels; l++)
		free(t->ids[l].v);
	free(t->sets);
	free(t);
}

void tqi_free(struct tqi_index *x)
{
	if (x == NULL)
		return;
	for (size_t i = 0; i < x->ntqs; i++)
		tq_destroy(x->tqs[i], x->views[i].nlevels);
	for (uint32_t id = 0; id < x->nnames; id++)
		free(x->names[id]);
	for (int f = 0; f < TQ_NPFIELDS; f++) {
		for (size_t i = 0; i < x->post_cap[f]; i++)
			free(x->post[f][i]);
		free(x->post[f]);
		free(x->none[f]);
	}
	free(x->alive);
	free(x->slot_pos);
	free(x->sc_bits);
	free(x->sc_cand);
	free(x->names);
	free(x->slots);
	free(x->views);
	free(x->tqs);
	free(x);
}

/* Binary search by tq_id: 1 and its position when present, else 0 and
** where it would be inserted. */
static int tq_find(const struct tqi_index *x, long long tq_id, size_t *pos)
{
	size_t lo = 0, hi = x->ntqs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->views[mid].tq_id < tq_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return lo < x->ntqs && x->views[lo].tq_id == tq_id;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Every string of the sets present (NULL set = no requirement at all). */
static int sets_valid(const struct tq_strset *set, size_t *total)
{
	*total = 0;
	if (set == NULL)
		return 1;
	for (int f = 0; f < TQ_NFIELDS; f++) {
		if (set[f].n > 0 && set[f].v == NULL)
			return 0;
		for (size_t i = 0; i < set[f].n; i++)
			if (set[f].v[i] == NULL)
				return 0;
		if (set[f].n > SIZE_MAX / sizeof(uint32_t) - *total)
			return 0;
		*total += set[f].n;
	}
	return 1;
}

/*
** Intern the sets' strings into one block of sorted, unique id arrays
** (*block, owned by the caller; NULL when every set is empty) described by
** out[]. GB_ENOMEM leaves interned strings for the caller to truncate.
*/
static int sets_build(struct tqi_index *x, const struct tq_strset *set,
		      size_t total, uint32_t **block,
		      struct tq_idset out[TQ_NFIELDS])
{
	uint32_t *b = NULL;
	memset(out, 0, TQ_NFIELDS * sizeof(*out));
	*block = NULL;
	if (total == 0)
		return GB_OK;
	b = malloc(total * sizeof(*b));
	if (b == NULL)
		return GB_ENOMEM;
	size_t off = 0;
	for (int f = 0; f < TQ_NFIELDS; f++) {
		uint32_t *p = b + off;
		size_t n = set[f].n, m = 0;
		for (size_t i = 0; i < n; i++) {
			p[i] = tqi_intern(x, set[f].v[i]);
			if (p[i] == TQ_ID_UNKNOWN) {
				free(b);
				return GB_ENOMEM;
			}
		}
		/* Sets arrive as strings in any order with repeats; ids
		** sort differently from strings anyway. */
		qsort(p, n, sizeof(*p), cmp_u32);
		for (size_t i = 0; i < n; i++)
			if (m == 0 || p[m - 1] != p[i])
				p[m++] = p[i];
		out[f].v = m ? p : NULL;
		out[f].n = m;
		off += m;
	}
	*block = b;
	return GB_OK;
}

/* ---- postings ------------------------------------------------------------- */

#define TQI_WORDS(bits) ((bits) / 64)

/* Grow every bitmap (zero-extended) to hold at least `need` slots. A
** failure leaves some arrays larger than slot_cap says, which is harmless:
** only slot_cap bits are ever read. */
static int bits_grow(struct tqi_index *x, size_t need)
{
	if (need <= x->slot_cap)
		return GB_OK;
	size_t cap = x->slot_cap ? x->slot_cap : 64;
	while (cap < need)
		cap *= 2;
	size_t ow = TQI_WORDS(x->slot_cap), nw = TQI_WORDS(cap);
	uint64_t **bm[2 + TQ_NPFIELDS];
	size_t nbm = 0;
	bm[nbm++] = &x->alive;
	for (int f = 0; f < TQ_NPFIELDS; f++)
		bm[nbm++] = &x->none[f];
	for (size_t i = 0; i < nbm; i++) {
		uint64_t *b = realloc(*bm[i], nw * sizeof(*b));
		if (b == NULL)
			return GB_ENOMEM;
		memset(b + ow, 0, (nw - ow) * sizeof(*b));
		*bm[i] = b;
	}
	for (int f = 0; f < TQ_NPFIELDS; f++)
		for (size_t id = 0; id < x->post_cap[f]; id++) {
			if (x->post[f][id] == NULL)
				continue;
			uint64_t *b = realloc(x->post[f][id], nw * sizeof(*b));
			if (b == NULL)
				return GB_ENOMEM;
			memset(b + ow, 0, (nw - ow) * sizeof(*b));
			x->post[f][id] = b;
		}
	uint32_t *sp = realloc(x->slot_pos, cap * sizeof(*sp));
	if (sp == NULL)
		return GB_ENOMEM;
	x->slot_pos = sp;
	uint64_t *sc = realloc(x->sc_bits, 3 * nw * sizeof(*sc));
	if (sc == NULL)
		return GB_ENOMEM;
	x->sc_bits = sc;
	size_t *cd = realloc(x->sc_cand, cap * sizeof(*cd));
	if (cd == NULL)
		return GB_ENOMEM;
	x->sc_cand = cd;
	x->slot_cap = cap;
	return GB_OK;
}

/* The bitmap of value `id` in field f, allocated (empty) when missing. */
static int post_make(struct tqi_index *x, int f, uint32_t id)
{
	if (id >= x->post_cap[f]) {
		size_t cap = x->post_cap[f] ? x->post_cap[f] : 64;
		while (cap <= id)
			cap *= 2;
		uint64_t **p = realloc(x->post[f], cap * sizeof(*p));
		if (p == NULL)
			return GB_ENOMEM;
		memset(p + x->post_cap[f], 0,
		       (cap - x->post_cap[f]) * sizeof(*p));
		x->post[f] = p;
		x->post_cap[f] = cap;
	}
	if (x->post[f][id] == NULL) {
		size_t nw = TQI_WORDS(x->slot_cap);
		x->post[f][id] = calloc(nw ? nw : 1, sizeof(uint64_t));
		if (x->post[f][id] == NULL)
			return GB_ENOMEM;
	}
	return GB_OK;
}

/* Every bitmap the sets need (after bits_grow). */
static int posts_make(struct tqi_index *x, const struct tq_idset *set)
{
	for (int f = 0; f < TQ_NPFIELDS; f++) {
		const struct tq_idset *s = &set[tq_pfield_set[f]];
		for (size_t i = 0; i < s->n; i++)
			if (post_make(x, f, s->v[i]) != GB_OK)
				return GB_ENOMEM;
	}
	return GB_OK;
}

static inline void bit_put(uint64_t *b, uint32_t slot, int on)
{
	uint64_t m = (uint64_t)1 << (slot % 64);
	if (on)
		b[slot / 64] |= m;
	else
		b[slot / 64] &= ~m;
}

/* Set or clear the TQ's bits for its sets (the bitmaps exist). */
static void posts_put(struct tqi_index *x, uint32_t slot,
		      const struct tq_idset *set, int on)
{
	for (int f = 0; f < TQ_NPFIELDS; f++) {
		const struct tq_idset *s = &set[tq_pfield_set[f]];
		if (s->n == 0)
			bit_put(x->none[f], slot, on);
		for (size_t i = 0; i < s->n; i++)
			bit_put(x->post[f][s->v[i]], slot, on);
	}
}

/* The first free slot (bits_grow made room for one more TQ). */
static uint32_t slot_free(const struct tqi_index *x)
{
	size_t nw = TQI_WORDS(x->slot_cap);
	for (size_t w = 0; w < nw; w++)
		if (~x->alive[w])
			return (uint32_t)(w * 64 + (size_t)__builtin_ctzll(
							   ~x->alive[w]));
	return UINT32_MAX; /* unreachable after bits_grow */
}

/* slot_pos of the TQs at positions >= from. */
static void slots_renumber(struct tqi_index *x, size_t from)
{
	for (size_t i = from; i < x->ntqs; i++)
		x->slot_pos[x->tqs[i]->slot] = (uint32_t)i;
}

/* Room for one more TQ in both arrays. */
static int tqs_reserve(struct tqi_index *x)
{
	if (x->ntqs < x->tqs_cap)
		return GB_OK;
	size_t cap = x->tqs_cap * 2;
	/* Grown one after the other: when the second fails the first is just
	** larger than needed, and the next attempt reallocates it in place. */
	struct tq_view *v = realloc(x->views, cap * sizeof(*v));
	if (v == NULL)
		return GB_ENOMEM;
	x->views = v;
	struct tqi_tq **t = realloc(x->tqs, cap * sizeof(*t));
	if (t == NULL)
		return GB_ENOMEM;
	x->tqs = t;
	x->tqs_cap = cap;
	return GB_OK;
}

int tqi_tq_put(struct tqi_index *x, long long tq_id, const char *owner,
	       const char *owner_group, const char *setup, long long cpu_time,
	       const struct tq_strset set[TQ_NFIELDS], double priority)
{
	size_t total;
	if (x == NULL || tq_id <= 0 || owner == NULL || owner_group == NULL ||
	    setup == NULL || !isfinite(priority) || !sets_valid(set, &total))
		return GB_EINVAL;
	size_t pos;
	int present = tq_find(x, tq_id, &pos);
	struct tqi_tq *t = NULL;
	if (!present) {
		if (tqs_reserve(x) != GB_OK)
			return GB_ENOMEM;
		t = calloc(1, sizeof(*t));
		if (t == NULL)
			return GB_ENOMEM;
	}
	uint32_t keep = x->nnames;
	uint32_t o = tqi_intern(x, owner), g = tqi_intern(x, owner_group),
		 su = tqi_intern(x, setup);
	uint32_t *block = NULL;
	struct tq_idset ids[TQ_NFIELDS];
	int rc = GB_ENOMEM;
	if (o != TQ_ID_UNKNOWN && g != TQ_ID_UNKNOWN && su != TQ_ID_UNKNOWN)
		rc = sets_build(x, set, total, &block, ids);
	if (rc == GB_OK)
		rc = bits_grow(x, x->ntqs + 1);
	if (rc == GB_OK)
		rc = posts_make(x, ids);
	if (rc != GB_OK) {
		/* bitmaps made for the dropped ids stay, empty: the next
		** string interned under such an id starts with no TQ */
		free(block);
		free(t);
		intern_truncate(x, keep);
		return rc;
	}
	/* Everything allocated: commit. */
	struct tq_view *v;
	if (present) {
		v = &x->views[pos];
		posts_put(x, x->tqs[pos]->slot, v->set, 0);
		posts_put(x, x->tqs[pos]->slot, ids, 1);
		free(x->tqs[pos]->sets);
		x->tqs[pos]->sets = block;
	} else {
		memmove(&x->views[pos + 1], &x->views[pos],
			(x->ntqs - pos) * sizeof(*x->views));
		memmove(&x->tqs[pos + 1], &x->tqs[pos],
			(x->ntqs - pos) * sizeof(*x->tqs));
		x->ntqs++;
		t->sets = block;
		x->tqs[pos] = t;
		v = &x->views[pos];
		memset(v, 0, sizeof(*v));
		v->tq_id = tq_id;
		v->levels = t->levels;
		t->slot = slot_free(x);
		bit_put(x->alive, t->slot, 1);
		posts_put(x, t->slot, ids, 1);
		slots_renumber(x, pos);
	}
	v->owner = o;
	v->owner_group = g;
	v->setup = su;
	v->cpu_time = cpu_time;
	memcpy(v->set, ids, sizeof(ids));
	v->priority = priority;
	return GB_OK;
}

int tqi_tq_remove(struct tqi_index *x, long long tq_id)
{
	size_t pos;
	if (x == NULL)
		return GB_EINVAL;
	if (!tq_find(x, tq_id, &pos))
		return GB_ENOTFOUND;
	x->njobs -= x->views[pos].njobs;
	posts_put(x, x->tqs[pos]->slot, x->views[pos].set, 0);
	bit_put(x->alive, x->tqs[pos]->slot, 0);
	tq_destroy(x->tqs[pos], x->views[pos].nlevels);
	x->ntqs--;
	memmove(&x->views[pos], &x->views[pos + 1],
		(x->ntqs - pos) * sizeof(*x->views));
	memmove(&x->tqs[pos], &x->tqs[pos + 1],
		(x->ntqs - pos) * sizeof(*x->tqs));
	slots_renumber(x, pos);
	return GB_OK;
}

int tqi_tq_has(const struct tqi_index *x, long long tq_id)
{
	size_t pos;
	return x != NULL && tq_find(x, tq_id, &pos);
}

int tqi_set_priority(struct tqi_index *x, long long tq_id, double priority)
{
	size_t pos;
	if (x == NULL || !isfinite(priority))
		return GB_EINVAL;
	if (!tq_find(x, tq_id, &pos))
		return GB_ENOTFOUND;
	x->views[pos].priority = priority;
	return GB_OK;
}

/* A TQ's seq (rm 0) or rm seq (rm 1), NULL when x or the TQ is absent. */
static long long *seq_of(const struct tqi_index *x, long long tq_id, int rm)
{
	size_t pos;
	if (x == NULL || !tq_find(x, tq_id, &pos))
		return NULL;
	return rm ? &x->tqs[pos]->rm_seq : &x->tqs[pos]->seq;
}

static long long seq_get(const struct tqi_index *x, long long tq_id, int rm)
{
	const long long *v = seq_of(x, tq_id, rm);
	return v ? *v : x == NULL ? GB_EINVAL : GB_ENOTFOUND;
}

static int seq_set(struct tqi_index *x, long long tq_id, long long seq,
		   int rm)
{
	long long *v = seq < 0 ? NULL : seq_of(x, tq_id, rm);
	if (v == NULL)
		return x == NULL || seq < 0 ? GB_EINVAL : GB_ENOTFOUND;
	*v = seq;
	return GB_OK;
}

long long tqi_seq(const struct tqi_index *x, long long tq_id)
{
	return seq_get(x, tq_id, 0);
}

int tqi_set_seq(struct tqi_index *x, long long tq_id, long long seq)
{
	return seq_set(x, tq_id, seq, 0);
}

long long tqi_rm_seq(const struct tqi_index *x, long long tq_id)
{
	return seq_get(x, tq_id, 1);
}

int tqi_set_rm_seq(struct tqi_index *x, long long tq_id, long long seq)
{
	return seq_set(x, tq_id, seq, 1);
}

/* ---- levels and their ids ------------------------------------------------- */

/* Lower bound of id in the ascending b[0..n). */
static size_t ids_lower(const long long *b, size_t n, long long id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Re-point the view's level at its ids after anything moved them. */
static void level_sync(struct tq_level *lv, const struct tqi_ids *d)
{
	lv->lowest = d->v + d->head;
	lv->nlowest = lv->njobs < TQ_PICK_FROM ? lv->njobs : TQ_PICK_FROM;
}

/* 1 and the position (relative to head) when level l holds id. The head
** test first: a match's claim removes one of the lowest ids. */
static int level_has(const struct tqi_tq *t, size_t l, long long id,
		     size_t *pos)
{
	size_t n = t->levels[l].njobs;
	const long long *b = t->ids[l].v + t->ids[l].head;
	if (n == 0 || id < b[0] || id > b[n - 1])
		return 0;
	*pos = ids_lower(b, n, id);
	return b[*pos] == id;
}

/* Insert id (absent) into a level; GB_ENOMEM with nothing changed. */
static int ids_insert(struct tqi_ids *d, struct tq_level *lv, long long id)
{
	size_t n = lv->njobs;
	size_t p = ids_lower(d->v + d->head, n, id);
	if (d->head > 0 && p <= n / 2) {
		/* Front half: use the gap that removals of low ids left. */
		long long *b = d->v + d->head;
		memmove(b - 1, b, p * sizeof(*b));
		d->head--;
		d->v[d->head + p] = id;
	} else {
		if (d->head + n == d->cap) {
			if (d->head > 0) {
				memmove(d->v, d->v + d->head, n * sizeof(*d->v));
				d->head = 0;
			} else {
				/* x1.5 keeps the slack (and ~10 bytes/job)
				** lower than doubling would. */
				size_t cap = d->cap + d->cap / 2;
				if (cap > SIZE_MAX / sizeof(*d->v))
					return GB_ENOMEM;
				long long *v = realloc(d->v, cap * sizeof(*v));
				if (v == NULL)
					return GB_ENOMEM;
				d->v = v;
				d->cap = cap;
			}
		}
		long long *b = d->v + d->head;
		memmove(b + p + 1, b + p, (n - p) * sizeof(*b));
		b[p] = id;
	}
	lv->njobs = n + 1;
	level_sync(lv, d);
	return GB_OK;
}

/* Remove the id at position p (relative to head) of a level. Never fails:
** shrinking is an optimisation and a failed realloc keeps the old array. */
static void ids_remove_at(struct tqi_ids *d, struct tq_level *lv, size_t p)
{
	size_t n = lv->njobs;
	long long *b = d->v + d->head;
	if (p < n / 2 || p == 0) {
		memmove(b + 1, b, p * sizeof(*b));
		d->head++;
	} else {
		memmove(b + p, b + p + 1, (n - p - 1) * sizeof(*b));
	}
	n--;
	lv->njobs = n;
	/* Compacting when the gap is as large as the live ids costs at most
	** one move per id removed since the last compaction. */
	if (d->head >= TQI_COMPACT_MIN && d->head >= n) {
		memmove(d->v, d->v + d->head, n * sizeof(*d->v));
		d->head = 0;
	}
	if (d->cap >= 4 * TQI_IDS_MIN && n < d->cap / 4) {
		if (d->head > 0) {
			memmove(d->v, d->v + d->head, n * sizeof(*d->v));
			d->head = 0;
		}
		size_t cap = d->cap / 2;
		long long *v = realloc(d->v, cap * sizeof(*v));
		if (v != NULL) {
			d->v = v;
			d->cap = cap;
		}
	}
	level_sync(lv, d);
}

int tqi_job_add(struct tqi_index *x, long long tq_id, long long job_id,
		int user_priority)
{
	size_t pos, p;
	if (x == NULL || job_id <= 0 || user_priority < TQ_MIN_PRIORITY ||
	    user_priority > TQ_MAX_PRIORITY)
		return GB_EINVAL;
	if (!tq_find(x, tq_id, &pos))
		return GB_ENOTFOUND;
	struct tq_view *v = &x->views[pos];
	struct tqi_tq *t = x->tqs[pos];
	for (size_t l = 0; l < v->nlevels; l++)
		if (level_has(t, l, job_id, &p))
			return GB_OK; /* idempotent, whatever its priority */
	size_t l = 0;
	while (l < v->nlevels && t->levels[l].user_priority < user_priority)
		l++;
	if (l < v->nlevels && t->levels[l].user_priority == user_priority) {
		if (ids_insert(&t->ids[l], &t->levels[l], job_id) != GB_OK)
			return GB_ENOMEM;
	} else {
		long long *ids = malloc(TQI_IDS_MIN * sizeof(*ids));
		if (ids == NULL)
			return GB_ENOMEM;
		memmove(&t->levels[l + 1], &t->levels[l],
			(v->nlevels - l) * sizeof(t->levels[0]));
		memmove(&t->ids[l + 1], &t->ids[l],
			(v->nlevels - l) * sizeof(t->ids[0]));
		v->nlevels++;
		ids[0] = job_id;
		t->ids[l] = (struct tqi_ids){.v = ids, .head = 0,
					     .cap = TQI_IDS_MIN};
		t->levels[l] = (struct tq_level){.user_priority = user_priority,
						 .njobs = 1};
		level_sync(&t->levels[l], &t->ids[l]);
	}
	v->njobs++;
	x->njobs++;
	return GB_OK;
}

int tqi_job_remove(struct tqi_index *x, long long tq_id, long long job_id)
{
	size_t pos, p = 0, l;
	if (x == NULL)
		return GB_EINVAL;
	if (!tq_find(x, tq_id, &pos))
		return GB_ENOTFOUND;
	struct tq_view *v = &x->views[pos];
	struct tqi_tq *t = x->tqs[pos];
	/* First the ten lowest of each level (a match claims one of them;
	** they share a cache line or two with the head), then the rest. */
	for (l = 0; l < v->nlevels; l++) {
		const struct tq_level *lv = &t->levels[l];
		for (p = 0; p < lv->nlowest && lv->lowest[p] < job_id; p++)
			;
		if (p < lv->nlowest && lv->lowest[p] == job_id)
			break;
	}
	if (l == v->nlevels)
		for (l = 0; l < v->nlevels; l++)
			if (level_has(t, l, job_id, &p))
				break;
	if (l == v->nlevels)
		return GB_ENOTFOUND;
	if (t->levels[l].njobs == 1) {
		/* The level's last job: the level goes (tq_level.njobs > 0). */
		free(t->ids[l].v);
		memmove(&t->levels[l], &t->levels[l + 1],
			(v->nlevels - l - 1) * sizeof(t->levels[0]));
		memmove(&t->ids[l], &t->ids[l + 1],
			(v->nlevels - l - 1) * sizeof(t->ids[0]));
		v->nlevels--;
	} else {
		ids_remove_at(&t->ids[l], &t->levels[l], p);
	}
	v->njobs--;
	x->njobs--;
	return GB_OK;
}

/* ---- reading -------------------------------------------------------------- */

size_t tqi_njobs(const struct tqi_index *x)
{
	return x ? x->njobs : 0;
}

size_t tqi_tq_njobs(const struct tqi_index *x, long long tq_id)
{
	size_t pos;
	if (x == NULL || !tq_find(x, tq_id, &pos))
		return 0;
	return x->views[pos].njobs;
}

size_t tqi_ntqs(const struct tqi_index *x)
{
	return x ? x->ntqs : 0;
}

const struct tq_view *tqi_views(const struct tqi_index *x, size_t *n)
{
	*n = x->ntqs;
	return x->views;
}

const long long *tqi_level_ids(const struct tqi_index *x, size_t pos,
			       size_t l, size_t *n)
{
	*n = 0;
	if (x == NULL || pos >= x->ntqs || l >= x->views[pos].nlevels)
		return NULL;
	*n = x->views[pos].levels[l].njobs;
	return x->tqs[pos]->ids[l].v + x->tqs[pos]->ids[l].head;
}

void tqi_stats(const struct tqi_index *x, struct pr_tq *out)
{
	for (size_t i = 0; i < x->ntqs; i++) {
		const struct tq_view *v = &x->views[i];
		double sum = 0;
		for (size_t l = 0; l < v->nlevels; l++)
			sum += (double)v->levels[l].user_priority *
			       (double)v->levels[l].njobs;
		memset(&out[i], 0, sizeof(out[i]));
		out[i].tq_id = v->tq_id;
		out[i].owner = x->names[v->owner];
		out[i].owner_group = x->names[v->owner_group];
		out[i].njobs = (long long)v->njobs;
		out[i].prio_sum = sum;
	}
}

/* Ids of the strings ss[0..n) into out (sorted, unique; values no TQ
** uses become TQ_ID_UNKNOWN, kept once); returns how many. */
static size_t ids_of(const struct tqi_index *x, const struct tq_strset *ss,
		     uint32_t *out)
{
	size_t n = ss->n < TQ_MAX_PILOT_VALUES ? ss->n : TQ_MAX_PILOT_VALUES;
	for (size_t i = 0; i < n; i++)
		out[i] = tqi_lookup(x, ss->v[i]);
	qsort(out, n, sizeof(*out), cmp_u32);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || out[m - 1] != out[i])
			out[m++] = out[i];
	return m;
}

static struct tq_idset idset_of(const struct tqi_index *x,
				const struct tq_strset *ss, uint32_t **room)
{
	struct tq_idset r = {*room, ids_of(x, ss, *room)};
	*room += TQ_MAX_PILOT_VALUES;
	return r;
}

void tqi_resource(const struct tqi_index *x, const struct tqi_pilot *p,
		  const int *job_sharing, struct tqi_resource_ids *ids,
		  struct tq_resource *out)
{
	memset(out, 0, sizeof(*out));
	uint32_t *room = ids->v;
	out->setup = tqi_lookup(x, p->setup);
	out->cpu_time = p->cpu_time;
	for (int f = 0; f < TQ_NPFIELDS; f++) {
		/* tags: absent is "offers none", a constraint; ANY lifts it.
		** The others: absent, [] and ANY are no constraint. */
		out->has[f] = f == TQ_P_TAG ? !p->any[f]
					    : !p->any[f] && p->want[f].n > 0;
		out->want[f] = idset_of(x, &p->want[f], &room);
		out->banned[f] = idset_of(x, &p->banned[f], &room);
	}
	out->required = idset_of(x, &p->required, &room);
	out->groups = idset_of(x, &p->groups, &room);
	out->owners = idset_of(x, &p->owners, &room);
	/* js_groups: the caller's job_sharing flags, per p->groups value */
	uint32_t *js = room;
	size_t njs = 0;
	size_t ng = p->groups.n < TQ_MAX_PILOT_VALUES ? p->groups.n
						      : TQ_MAX_PILOT_VALUES;
	for (size_t i = 0; i < ng; i++)
		if (job_sharing != NULL && job_sharing[i])
			js[njs++] = tqi_lookup(x, p->groups.v[i]);
	qsort(js, njs, sizeof(*js), cmp_u32);
	size_t m = 0;
	for (size_t i = 0; i < njs; i++)
		if (m == 0 || js[m - 1] != js[i])
			js[m++] = js[i];
	out->js_groups = (struct tq_idset){js, m};
}

/* The pass bitmap of indexed filter f for `r` into pass[0..nw); 0 when
** the pilot does not constrain it (nothing to cut). */
static int pass_of(const struct tqi_index *x, const struct tq_resource *r,
		   int f, uint64_t *pass, size_t nw)
{
	static const enum tq_pfield pf_of[TQ_FL_NINDEXED] = {
		[TQ_FL_PILOT_TYPE] = TQ_P_PILOT_TYPE,
		[TQ_FL_SITE] = TQ_P_SITE,
		[TQ_FL_GRID_CE] = TQ_P_GRID_CE,
		[TQ_FL_PLATFORM] = TQ_P_PLATFORM,
		[TQ_FL_JOB_TYPE] = TQ_P_JOB_TYPE,
		[TQ_FL_REQUIRED_TAG] = TQ_P_TAG,
	};
	int pf = pf_of[f];
	if (f == TQ_FL_REQUIRED_TAG) {
		if (r->required.n == 0)
			return 0;
		memcpy(pass, x->alive, nw * sizeof(*pass));
		for (size_t i = 0; i < r->required.n; i++) {
			uint32_t id = r->required.v[i];
			const uint64_t *b = id < x->post_cap[pf]
						    ? x->post[pf][id]
						    : NULL;
			for (size_t w = 0; w < nw; w++)
				pass[w] &= b ? b[w] : 0;
		}
		return 1;
	}
	if (!r->has[pf])
		return 0;
	memcpy(pass, x->none[pf], nw * sizeof(*pass));
	for (size_t i = 0; i < r->want[pf].n; i++) {
		uint32_t id = r->want[pf].v[i];
		const uint64_t *b = id < x->post_cap[pf] ? x->post[pf][id] : NULL;
		if (b == NULL)
			continue; /* no TQ lists it (or TQ_ID_UNKNOWN) */
		for (size_t w = 0; w < nw; w++)
			pass[w] |= b[w];
	}
	return 1;
}

int tqi_candidates(const struct tqi_index *x, const struct tq_resource *r,
		   const size_t **cand, size_t *ncand,
		   size_t cut[TQ_NFILTERS], uint8_t *verdict)
{
	if (x == NULL || r == NULL || cand == NULL || ncand == NULL ||
	    cut == NULL)
		return GB_EINVAL;
	memset(cut, 0, TQ_NFILTERS * sizeof(*cut));
	*cand = x->sc_cand;
	*ncand = 0;
	if (x->ntqs == 0)
		return GB_OK;
	size_t nw = TQI_WORDS(x->slot_cap);
	uint64_t *acc = x->sc_bits, *pass = acc + nw, *bypos = pass + nw;
	memcpy(acc, x->alive, nw * sizeof(*acc));
	for (int f = 0; f < TQ_FL_NINDEXED; f++) {
		if (!pass_of(x, r, f, pass, nw))
			continue;
		for (size_t w = 0; w < nw; w++) {
			uint64_t out = acc[w] & ~pass[w];
			if (out == 0)
				continue;
			cut[f] += (size_t)__builtin_popcountll(out);
			acc[w] &= pass[w];
			for (; verdict != NULL && out; out &= out - 1) {
				size_t slot = w * 64 + (size_t)__builtin_ctzll(out);
				verdict[x->slot_pos[slot]] = (uint8_t)f;
			}
		}
	}
	/* positions in ascending order: through a bitmap by position */
	memset(bypos, 0, nw * sizeof(*bypos));
	for (size_t w = 0; w < nw; w++)
		for (uint64_t b = acc[w]; b; b &= b - 1) {
			size_t slot = w * 64 + (size_t)__builtin_ctzll(b);
			size_t p = x->slot_pos[slot];
			bypos[p / 64] |= (uint64_t)1 << (p % 64);
		}
	size_t k = 0;
	for (size_t w = 0; w < nw; w++)
		for (uint64_t b = bypos[w]; b; b &= b - 1)
			x->sc_cand[k++] = w * 64 + (size_t)__builtin_ctzll(b);
	*ncand = k;
	return GB_OK;
}
