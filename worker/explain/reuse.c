/*
** reuse.c — a scenario reader that keeps what did not change (reuse.h).
**
** The text is walked once at the top level (keys, and the elements of
** arrays) with a skipper that only finds where a value ends (strings by
** memchr, brackets by depth); what it finds is either the previous
** scenario's bytes at the same place, reused, or handed to json_loadb,
** which validates it. Anything the walk does not expect (whitespace is
** fine; escapes in keys, a top level that is not an object, trailing
** bytes) sends the whole text to json_loadb, so the result and the error
** are json_loadb's own.
*/
#include "explain/reuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One element of a large top-level array: its text in the reader's copy
** of the scenario, and its value (a reference held). */
struct exr_elem {
	size_t off, len;
	json_t *v;
};

/* One top-level member. */
struct exr_member {
	size_t koff, klen; /* the key's text (unquoted) */
	size_t off, len;   /* the value's text */
	json_t *v;         /* a reference held */
	struct exr_elem *el; /* when the value is an array of at least
				EXR_ELEMENTS_MIN bytes, else NULL */
	size_t nel;
};

/* A scenario's members and its text. */
struct exr_scen {
	char *text;
	size_t len;
	struct exr_member *m;
	size_t nm;
};

struct exr_reader {
	struct exr_scen prev;
	struct exr_stats st;
};

static void scen_clear(struct exr_scen *s)
{
	for (size_t i = 0; i < s->nm; i++) {
		for (size_t j = 0; j < s->m[i].nel; j++)
			json_decref(s->m[i].el[j].v);
		free(s->m[i].el);
		json_decref(s->m[i].v);
	}
	free(s->m);
	free(s->text);
	memset(s, 0, sizeof(*s));
}

struct exr_reader *exr_new(void)
{
	return calloc(1, sizeof(struct exr_reader));
}

void exr_free(struct exr_reader *r)
{
	if (r == NULL)
		return;
	scen_clear(&r->prev);
	free(r);
}

void exr_get_stats(const struct exr_reader *r, struct exr_stats *out)
{
	if (out)
		*out = r ? r->st : (struct exr_stats){0};
}

/* ---- the walk ------------------------------------------------------------ */

#define BAD ((size_t)-1)

static size_t ws(const char *t, size_t i, size_t n)
{
	while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' ||
			 t[i] == '\r'))
		i++;
	return i;
}

/* The end (one past the closing quote) of the string at t[i] == '"'. */
static size_t skip_string(const char *t, size_t i, size_t n)
{
	size_t j = i + 1;
	for (;;) {
		const char *q = j < n ? memchr(t + j, '"', n - j) : NULL;
		if (q == NULL)
			return BAD;
		size_t k = (size_t)(q - t), b = 0;
		while (k - b > i + 1 && t[k - 1 - b] == '\\')
			b++;
		if (b % 2 == 0)
			return k + 1;
		j = k + 1;
	}
}

/* Where the value at t[i] ends; BAD when the text ends first. Does not
** validate: json_loadb does that for what is parsed. */
static size_t skip_value(const char *t, size_t i, size_t n)
{
	if (i >= n)
		return BAD;
	if (t[i] == '"')
		return skip_string(t, i, n);
	if (t[i] == '{' || t[i] == '[') {
		size_t depth = 0;
		for (size_t j = i; j < n; j++) {
			char c = t[j];
			if (c == '"') {
				j = skip_string(t, j, n);
				if (j == BAD)
					return BAD;
				j--;
			} else if (c == '{' || c == '[') {
				depth++;
			} else if (c == '}' || c == ']') {
				if (--depth == 0)
					return j + 1;
			}
		}
		return BAD;
	}
	size_t j = i;
	while (j < n && !strchr(",}] \t\r\n", t[j]))
		j++;
	return j > i ? j : BAD;
}

/* 1 when the value at t[i] is the value p[0..plen): the same bytes, and
** (a number or literal) not followed by more of its token. An object,
** array or string ends where its text says, so equal bytes are an equal
** value. */
static int same_value(const char *t, size_t i, size_t n, const char *p,
		      size_t plen)
{
	if (plen == 0 || i + plen > n || memcmp(t + i, p, plen) != 0)
		return 0;
	if (p[0] == '{' || p[0] == '[' || p[0] == '"')
		return 1;
	return i + plen == n || strchr(",}] \t\r\n", t[i + plen]) != NULL;
}

static json_t *load_span(const char *t, size_t i, size_t end)
{
	json_error_t e;
	return json_loadb(t + i, end - i, JSON_DECODE_ANY, &e);
}

/* The previous scenario's member with key t[k..k+klen), or NULL. A hint
** (the member at the same position) is tried first: keys come sorted. */
static const struct exr_member *prev_member(const struct exr_reader *r,
					    const char *t, size_t k,
					    size_t klen, size_t hint)
{
	const struct exr_scen *p = &r->prev;
	for (size_t c = 0; c < p->nm; c++) {
		size_t i = (hint + c) % p->nm;
		if (p->m[i].klen == klen &&
		    memcmp(p->text + p->m[i].koff, t + k, klen) == 0)
			return &p->m[i];
	}
	return NULL;
}

/* ---- elements that differ in some members --------------------------------- */

/*
** The element at b[0..nb), when it is the previous element a[0..la) (an
** object, value `old`) with the same keys in the same order and only some
** members' values changed: a new object whose unchanged members are
** `old`'s very values and whose changed ones are parsed from their own
** text; its end in *end. NULL otherwise (the caller parses it whole).
** Keys are compared byte for byte and every value by its bytes, so the
** result is json_loadb's value, members in the same order; a key twice in
** either text, or a key with an escape, is left to json_loadb.
**
** Why: a job decision's queue entries hold ages that count back from the
** decision's `now`, and job counts of the task's shares; when `now`
** moves or the next task is of another share, every entry's text changes
** in those members alone, and parsing 166 entries again was a fifth of
** replay's time.
*/
static json_t *patch_members(const char *a, size_t la, const json_t *old,
			     const char *b, size_t nb, size_t *end)
{
	if (!json_is_object(old) || la < 2 || a[0] != '{' || nb < 2 ||
	    b[0] != '{')
		return NULL;
	json_t *nv = json_object();
	size_t i = ws(a, 1, la), j = ws(b, 1, nb), nkeys = 0, changed = 0;
	if (nv == NULL)
		return NULL;
	for (;;) {
		if (i >= la || a[i] != '"' || j >= nb || b[j] != '"')
			goto none;
		size_t kae = skip_string(a, i, la), kbe = skip_string(b, j, nb);
		if (kae == BAD || kbe == BAD || kae - i != kbe - j ||
		    memcmp(a + i, b + j, kae - i) != 0 ||
		    memchr(b + j + 1, '\\', kbe - j - 2) != NULL)
			goto none;
		const char *key = b + j + 1;
		size_t klen = kbe - j - 2;
		i = ws(a, kae, la);
		j = ws(b, kbe, nb);
		if (i >= la || a[i] != ':' || j >= nb || b[j] != ':')
			goto none;
		i = ws(a, i + 1, la);
		j = ws(b, j + 1, nb);
		size_t vae = skip_value(a, i, la), vbe = skip_value(b, j, nb);
		if (vae == BAD || vbe == BAD)
			goto none;
		json_t *v;
		if (vae - i == vbe - j && memcmp(a + i, b + j, vae - i) == 0) {
			v = json_object_getn(old, key, klen);
			if (v == NULL)
				goto none;
			json_incref(v);
		} else {
			v = load_span(b, j, vbe);
			if (v == NULL)
				goto none;
			changed++;
		}
		if (json_object_setn_new_nocheck(nv, key, klen, v) != 0)
			goto none;
		nkeys++;
		i = ws(a, vae, la);
		j = ws(b, vbe, nb);
		if (i < la && a[i] == ',' && j < nb && b[j] == ',') {
			i = ws(a, i + 1, la);
			j = ws(b, j + 1, nb);
			continue;
		}
		if (i < la && a[i] == '}' && j < nb && b[j] == '}')
			break;
		goto none;
	}
	/* a key twice (in both texts alike: their keys are the same): the
	** parsed object kept one of them */
	if (i + 1 != la || changed == 0 || nkeys != json_object_size(old))
		goto none;
	*end = j + 1;
	return nv;
none:
	json_decref(nv);
	return NULL;
}

/* The array at t[vs] == '[', element by element against `pm`'s elements
** (NULL: none). Sets *end and, when the array is large, the member's
** element list. Returns the array (a new reference) or NULL. */
static json_t *load_array(struct exr_reader *r, const char *t, size_t n,
			  size_t vs, const struct exr_member *pm,
			  struct exr_member *nm, size_t *end)
{
	json_t *arr = json_array();
	struct exr_elem *el = NULL;
	size_t nel = 0, cap = 0;
	size_t j = ws(t, vs + 1, n);
	if (arr == NULL)
		return NULL;
	if (j < n && t[j] == ']') {
		*end = j + 1;
		return arr;
	}
	for (;;) {
		const struct exr_elem *pe =
			pm && nel < pm->nel ? &pm->el[nel] : NULL;
		json_t *v;
		size_t ee;
		if (pe && same_value(t, j, n, r->prev.text + pe->off,
				     pe->len)) {
			ee = j + pe->len;
			v = json_incref(pe->v);
			r->st.bytes_reused += (long long)pe->len;
		} else if (pe && (v = patch_members(r->prev.text + pe->off,
						     pe->len, pe->v, t + j,
						     n - j, &ee)) != NULL) {
			ee += j;
			r->st.elements_patched++;
		} else {
			ee = skip_value(t, j, n);
			v = ee == BAD ? NULL : load_span(t, j, ee);
		}
		if (v == NULL || json_array_append(arr, v) != 0)
			goto fail;
		if (nel == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct exr_elem *g = realloc(el, nc * sizeof(*el));
			if (g == NULL)
				goto fail;
			el = g;
			cap = nc;
		}
		el[nel++] = (struct exr_elem){j, ee - j, v};
		j = ws(t, ee, n);
		if (j < n && t[j] == ',') {
			j = ws(t, j + 1, n);
			continue;
		}
		if (j < n && t[j] == ']')
			break;
		v = NULL;
	fail:
		json_decref(v);
		for (size_t x = 0; x < nel; x++)
			json_decref(el[x].v);
		free(el);
		json_decref(arr);
		return NULL;
	}
	*end = j + 1;
	if (*end - vs >= EXR_ELEMENTS_MIN) {
		nm->el = el;
		nm->nel = nel;
	} else {
		for (size_t x = 0; x < nel; x++)
			json_decref(el[x].v);
		free(el);
	}
	return arr;
}

/* Walk t[0..n) into `root` and `cur` (members in cur->m). Returns 0, or
** -1 when the walk or a parse failed (the caller parses whole). */
static int walk(struct exr_reader *r, const char *t, size_t n, json_t *root,
		struct exr_scen *cur)
{
	size_t i = ws(t, 0, n), cap = 0;
	if (i >= n || t[i] != '{')
		return -1;
	i = ws(t, i + 1, n);
	if (i < n && t[i] == '}')
		return ws(t, i + 1, n) == n ? 0 : -1;
	for (;;) {
		if (i >= n || t[i] != '"')
			return -1;
		size_t ks = i + 1, ke = skip_string(t, i, n);
		if (ke == BAD || memchr(t + ks, '\\', ke - 1 - ks) != NULL)
			return -1;
		ke--; /* the closing quote */
		i = ws(t, ke + 1, n);
		if (i >= n || t[i] != ':')
			return -1;
		size_t vs = ws(t, i + 1, n), ve;
		if (cur->nm == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct exr_member *g =
				realloc(cur->m, nc * sizeof(*g));
			if (g == NULL)
				return -1;
			cur->m = g;
			cap = nc;
		}
		struct exr_member *nm = &cur->m[cur->nm];
		memset(nm, 0, sizeof(*nm));
		const struct exr_member *pm =
			prev_member(r, t, ks, ke - ks, cur->nm);
		json_t *v;
		if (pm && same_value(t, vs, n, r->prev.text + pm->off,
				     pm->len)) {
			ve = vs + pm->len;
			v = json_incref(pm->v);
			r->st.bytes_reused += (long long)pm->len;
			/* the elements too, for the next scenario */
			if (pm->nel) {
				nm->el = malloc(pm->nel * sizeof(*nm->el));
				if (nm->el == NULL) {
					json_decref(v);
					return -1;
				}
				for (size_t x = 0; x < pm->nel; x++)
					nm->el[x] = (struct exr_elem){
						pm->el[x].off - pm->off + vs,
						pm->el[x].len,
						json_incref(pm->el[x].v)};
				nm->nel = pm->nel;
			}
		} else if (vs < n && t[vs] == '[') {
			v = load_array(r, t, n, vs, pm, nm, &ve);
		} else {
			ve = skip_value(t, vs, n);
			v = ve == BAD ? NULL : load_span(t, vs, ve);
		}
		if (v == NULL)
			return -1;
		*nm = (struct exr_member){ks, ke - ks, vs, ve - vs, v, nm->el,
					  nm->nel};
		cur->nm++;
		if (json_object_setn(root, t + ks, ke - ks, v) != 0)
			return -1;
		i = ws(t, ve, n);
		if (i < n && t[i] == ',') {
			i = ws(t, i + 1, n);
			continue;
		}
		if (i < n && t[i] == '}')
			return ws(t, i + 1, n) == n ? 0 : -1;
		return -1;
	}
}

json_t *exr_load(struct exr_reader *r, const char *text, size_t len,
		 char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (r == NULL || text == NULL) {
		if (err && errlen)
			snprintf(err, errlen, "invalid arguments");
		return NULL;
	}
	struct exr_scen cur = {0};
	json_t *root = json_object();
	long long reused0 = r->st.bytes_reused;
	int ok = root != NULL && walk(r, text, len, root, &cur) == 0;
	if (ok) {
		cur.text = malloc(len ? len : 1);
		ok = cur.text != NULL;
		if (ok) {
			memcpy(cur.text, text, len);
			cur.len = len;
		}
	}
	if (!ok) {
		/* parse whole: json_loadb's value, or its error */
		json_decref(root);
		scen_clear(&cur);
		r->st.bytes_reused = reused0;
		json_error_t e;
		root = json_loadb(text, len, 0, &e);
		if (root == NULL && err && errlen)
			snprintf(err, errlen, "line %d column %d: %s", e.line,
				 e.column, e.text);
		/* nothing of the previous one is reused after this: its
		** members would be compared against a text that was not
		** walked */
		scen_clear(&r->prev);
		if (root == NULL)
			return NULL;
		r->st.fallbacks++;
		r->st.scenarios++;
		r->st.bytes += (long long)len;
		return root;
	}
	scen_clear(&r->prev);
	r->prev = cur;
	r->st.scenarios++;
	r->st.bytes += (long long)len;
	return root;
}
