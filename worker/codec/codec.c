/*
** codec.c — msgpack encoding and validating decoding of gridbroker messages.
**
** Decoding happens in two passes. The first pass (scan_value) walks the raw
** bytes without allocating anything: it checks that the buffer holds exactly
** one well-formed msgpack object, that nesting stays within COD_MAX_DEPTH and
** that every array or map length is backed by bytes that are really there.
** Only then does msgpack_unpack_next build the object tree. The order matters:
** msgpack-c allocates `n * sizeof(msgpack_object)` as soon as it reads an
** array header, so a five-byte message claiming four billion elements would
** otherwise ask malloc for ~100 GB before noticing the message is short. After
** the scan, the tree's size is bounded by the message length, and we also
** charge an estimate of it against the request's arena cap.
**
** The second pass validates the tree field by field (types, ranges, enum
** words, limits) and copies what it keeps into the caller's arena, so the
** decoded task does not point into the message buffer or the msgpack zone.
** Unknown keys are ignored so that producers may add fields before workers
** know them; duplicate keys are rejected because which one wins would depend
** on the decoder.
**
** Every failure names the field with its path ("inputDatasets[2].size") and
** the problem, for the dead-letter header.
**
** The scanner, the typed reads, the field-table walker, the readers built
** on it (a whole message, an array of maps with its unique fields, an
** array of names), the event start and the event tail (stages, reason
** histogram, rejected) are exported through codec.h for the other message
** codecs, so every message follows exactly these rules and words, and a
** rule such as "a jobID twice is refused at the second copy" is written
** once.
*/
#include "codec/codec.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "base/timefmt.h"

/* cod_to_json accepts any document the parser can hold (its stack is 32
** deep) but bounds the number of values so a dead letter cannot make the
** CLI allocate without limit. */
#define COD_JSON_MAX_DEPTH 32
#define COD_JSON_MAX_VALUES 262144
/* A task request has a few thousand values at most (1000 datasets x 5). */
#define COD_MAX_VALUES 65536
#define COD_MAX_REJECTED 50

/* ---- errors ----------------------------------------------------------- */

int cod_fail(struct cod_error *err, int rc, const char *field,
	     const char *fmt, ...)
{
	if (err) {
		snprintf(err->field, sizeof(err->field), "%s", field);
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->problem, sizeof(err->problem), fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* Copy at most `max` bytes of untrusted text for an error message: anything
** outside printable ASCII becomes '?', so a header stays readable. */
void cod_sanitize(char *dst, size_t dstlen, const char *s, size_t len,
		  size_t max)
{
	size_t n = len < max ? len : max;
	if (n >= dstlen)
		n = dstlen - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		dst[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	dst[n] = '\0';
	if (len > n && n >= 3)
		memcpy(dst + n - 3, "...", 3);
}

/* ---- UTF-8 ------------------------------------------------------------ */

/* Strict UTF-8 (no overlongs, no surrogates, at most U+10FFFF): decoded
** strings end up in JSON events and database rows, which need valid text. */
static int utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned char c = s[i];
		size_t k;
		unsigned lo = 0x80, hi = 0xbf;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			k = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			k = 2;
			if (c == 0xe0)
				lo = 0xa0;
			else if (c == 0xed)
				hi = 0x9f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 3;
			if (c == 0xf0)
				lo = 0x90;
			else if (c == 0xf4)
				hi = 0x8f;
		} else {
			return 0;
		}
		if (n - i <= k)
			return 0;
		if (s[i + 1] < lo || s[i + 1] > hi)
			return 0;
		for (size_t j = 2; j <= k; j++)
			if (s[i + j] < 0x80 || s[i + j] > 0xbf)
				return 0;
		i += k + 1;
	}
	return 1;
}

/* Text we can put in JSON, a header or a C string: UTF-8 without NUL. */
static int is_text(const char *p, size_t n)
{
	return (n == 0 || memchr(p, '\0', n) == NULL) &&
	       utf8_valid((const unsigned char *)p, n);
}

/* ---- pass 1: structural scan ------------------------------------------ */

struct scan {
	const unsigned char *p;
	const unsigned char *end;
	size_t values;     /* values seen so far, containers' elements included */
	size_t max_values;
	int max_depth;
	struct cod_error *err;
	char path[sizeof(((struct cod_error *)0)->field)];
	size_t pathlen;
};

static uint64_t be_read(const unsigned char *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Append ".key" (or "key" at the root) to the path; returns the previous
** length for path_pop. A path too long for the buffer is cut short. */
static size_t path_push(struct scan *s, const char *key, size_t idx)
{
	size_t old = s->pathlen;
	size_t room = sizeof(s->path) - old;
	if (key) {
		/* A key is the hot case (every map member): no snprintf. */
		size_t dot = old ? 1 : 0, n = strlen(key);
		if (dot + n >= room) {
			/* cut short, as snprintf would have written it */
			if (dot && room > 1)
				s->path[old] = '.';
			if (room > dot)
				cod_path_join(s->path + old + dot, room - dot, "",
					      key);
			s->pathlen = sizeof(s->path) - 1;
			return old;
		}
		if (dot)
			s->path[old] = '.';
		memcpy(s->path + old + dot, key, n + 1);
		s->pathlen = old + dot + n;
		return old;
	}
	int n = snprintf(s->path + old, room, "[%zu]", idx);
	if (n < 0 || (size_t)n >= room)
		s->pathlen = sizeof(s->path) - 1;
	else
		s->pathlen = old + (size_t)n;
	return old;
}

static void path_pop(struct scan *s, size_t old)
{
	s->pathlen = old;
	s->path[old] = '\0';
}

static int scan_truncated(struct scan *s)
{
	return cod_fail(s->err, GB_EDECODE, s->path,
			"truncated: the message ends inside this value");
}

/* Need `n` more bytes; advance past them. */
static int scan_skip(struct scan *s, uint64_t n)
{
	if ((uint64_t)(s->end - s->p) < n)
		return scan_truncated(s);
	s->p += n;
	return GB_OK;
}

static int scan_value(struct scan *s, int depth);

/* A container of `n` elements (2n values for a map) at nesting `depth`. */
static int scan_container(struct scan *s, int depth, uint64_t n, int is_map)
{
	const char *what = is_map ? "map" : "array";
	if (depth > s->max_depth)
		return cod_fail(s->err, GB_ETOOBIG, s->path,
				"nesting deeper than %d", s->max_depth);
	uint64_t nvalues = is_map ? 2 * n : n;
	size_t left = (size_t)(s->end - s->p);
	/* Every value takes at least one byte, so a length that the rest of
	** the buffer cannot hold is a lie; refuse it before anyone allocates. */
	if (nvalues > left)
		return cod_fail(s->err, GB_EDECODE, s->path,
				"%s claims %llu elements but only %zu bytes "
				"follow",
				what, (unsigned long long)n, left);
	if (nvalues > s->max_values - s->values)
		return cod_fail(s->err, GB_ETOOBIG, s->path,
				"more than %zu values in the message",
				s->max_values);
	s->values += (size_t)nvalues;
	for (uint64_t i = 0; i < n; i++) {
		size_t old;
		if (is_map) {
			/* Name the value by its key when the key is a string. */
			const unsigned char *k = s->p;
			int rc = scan_value(s, depth + 1);
			if (rc != GB_OK)
				return rc;
			char key[48] = "?";
			uint64_t klen = 0;
			const unsigned char *kp = NULL;
			if (*k >= 0xa0 && *k <= 0xbf) {
				klen = *k & 0x1f;
				kp = k + 1;
			} else if (*k == 0xd9 || *k == 0xda || *k == 0xdb) {
				size_t hl = *k == 0xd9 ? 1 : *k == 0xda ? 2 : 4;
				klen = be_read(k + 1, hl);
				kp = k + 1 + hl;
			}
			/* an empty key is named "" so a path never ends
			** in a bare dot or vanishes at the root */
			if (kp && klen == 0)
				snprintf(key, sizeof(key), "\"\"");
			else if (kp)
				cod_sanitize(key, sizeof(key),
					     (const char *)kp, (size_t)klen,
					     40);
			old = path_push(s, key, 0);
		} else {
			old = path_push(s, NULL, (size_t)i);
		}
		int rc = scan_value(s, depth + 1);
		path_pop(s, old);
		if (rc != GB_OK)
			return rc;
	}
	return GB_OK;
}

/* One value at nesting `depth` (the root is at depth 1; scalars inside a
** container do not add a level, only containers count). */
static int scan_value(struct scan *s, int depth)
{
	if (s->p >= s->end)
		return scan_truncated(s);
	unsigned char b = *s->p++;
	if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
		return GB_OK; /* fixint, nil, bool */
	if (b >= 0x80 && b <= 0x8f)
		return scan_container(s, depth, b & 0x0f, 1);
	if (b >= 0x90 && b <= 0x9f)
		return scan_container(s, depth, b & 0x0f, 0);
	if (b >= 0xa0 && b <= 0xbf)
		return scan_skip(s, b & 0x1f);
	switch (b) {
	case 0xc4: case 0xc5: case 0xc6:   /* bin 8/16/32 */
	case 0xd9: case 0xda: case 0xdb: { /* str 8/16/32 */
		size_t hl = (b == 0xc4 || b == 0xd9) ? 1
			    : (b == 0xc5 || b == 0xda) ? 2 : 4;
		if ((size_t)(s->end - s->p) < hl)
			return scan_truncated(s);
		uint64_t n = be_read(s->p, hl);
		s->p += hl;
		return scan_skip(s, n);
	}
	case 0xc7: case 0xc8: case 0xc9: { /* ext 8/16/32: len, type, data */
		size_t hl = b == 0xc7 ? 1 : b == 0xc8 ? 2 : 4;
		if ((size_t)(s->end - s->p) < hl)
			return scan_truncated(s);
		uint64_t n = be_read(s->p, hl);
		s->p += hl;
		return scan_skip(s, n + 1);
	}
	case 0xca: case 0xcb:              /* float 32/64 */
	case 0xcc: case 0xcd: case 0xce: case 0xcf: /* uint 8..64 */
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: /* int 8..64 */
	case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: {
		/* payload bytes of the fixed-size types 0xca..0xd8; a fixext
		** has a type byte before its 1..16 data bytes */
		static const unsigned char fixed[] = {4, 8, 1, 2, 4, 8, 1,
						      2, 4, 8, 2, 3, 5, 9, 17};
		return scan_skip(s, fixed[b - 0xca]);
	}
	case 0xdc: case 0xdd: case 0xde: case 0xdf: {
		size_t hl = (b == 0xdc || b == 0xde) ? 2 : 4;
		if ((size_t)(s->end - s->p) < hl)
			return scan_truncated(s);
		uint64_t n = be_read(s->p, hl);
		s->p += hl;
		return scan_container(s, depth, n, b >= 0xde);
	}
	default:
		break;
	}
	return cod_fail(s->err, GB_EDECODE, s->path,
			"invalid msgpack type byte 0x%02x", b);
}

/*
** Check that buf holds exactly one well-formed object within the limits,
** then unpack it into `up` (which the caller destroys). `zone_budget` is how
** many bytes the object tree may take (0 = no budget beyond max_values).
*/
int cod_unpack(const void *buf, size_t len, int max_depth, size_t max_values,
	       size_t zone_budget, msgpack_unpacked *up, struct cod_error *err)
{
	if (buf == NULL || len == 0)
		return cod_fail(err, GB_EDECODE, "", "empty message");
	struct scan s = {
		.p = buf,
		.end = (const unsigned char *)buf + len,
		.max_values = max_values,
		.max_depth = max_depth,
		.err = err,
	};
	int rc = scan_value(&s, 1);
	if (rc != GB_OK)
		return rc;
	/* Text (JSON sent by mistake, a log line) scans as one positive
	** fixint and trailing bytes; say what the producer sent instead. */
	const unsigned char *first = buf;
	if (s.p != s.end && first[0] >= 0x20 && first[0] < 0x7f &&
	    is_text(buf, len)) {
		char shown[48];
		cod_sanitize(shown, sizeof(shown), buf, len, 40);
		return cod_fail(err, GB_EDECODE, "",
				"not msgpack: %zu bytes of text ('%s')", len,
				shown);
	}
	if (s.p != s.end)
		return cod_fail(err, GB_EDECODE, "",
				"trailing data after the message (%zu bytes)",
				(size_t)(s.end - s.p));
	/* The zone holds one msgpack_object per array element and one pair
	** per map entry; strings stay in `buf`. Add a chunk for overhead. */
	size_t need = s.values * sizeof(msgpack_object) + 8192;
	if (zone_budget && need > zone_budget)
		return cod_fail(err, GB_ETOOBIG, "",
				"decoding needs about %zu bytes, over the "
				"limit of %zu",
				need, zone_budget);
	size_t off = 0;
	msgpack_unpack_return r = msgpack_unpack_next(up, buf, len, &off);
	if (r == MSGPACK_UNPACK_NOMEM_ERROR)
		return cod_fail(err, GB_ENOMEM, "", "out of memory while "
						    "unpacking");
	if (r != MSGPACK_UNPACK_SUCCESS || off != len)
		return cod_fail(err, GB_EDECODE, "", "msgpack parse error");
	return GB_OK;
}

/* ---- pass 2: field validation ------------------------------------------ */

const char *cod_type_name(const msgpack_object *o)
{
	/* indexed by msgpack_object_type (0x00..0x0a) */
	static const char *const names[] = {
		"null",	  "boolean", "integer", "integer", "float",    "string",
		"array", "map",	    "binary",  "extension", "float"};
	unsigned t = (unsigned)o->type;
	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

static int is_nil(const msgpack_object *o)
{
	return o == NULL || o->type == MSGPACK_OBJECT_NIL;
}

/* An integer in [min, max]; a float is refused even if it is whole, so that
** a producer sending 1e3 for a count learns about it at once. */
int cod_get_int(const msgpack_object *o, const char *field, long long min,
		long long max, long long *out, struct cod_error *err)
{
	char want[64];
	if (max == LLONG_MAX && min == 1)
		snprintf(want, sizeof(want), "a positive integer");
	else if (max == LLONG_MAX)
		snprintf(want, sizeof(want), "an integer >= %lld", min);
	else
		snprintf(want, sizeof(want), "an integer in [%lld, %lld]", min,
			 max);
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		if (o->via.u64 > (uint64_t)max || (long long)o->via.u64 < min)
			return cod_fail(err, GB_ERANGE, field,
					"expected %s, got %llu", want,
					(unsigned long long)o->via.u64);
		*out = (long long)o->via.u64;
		return GB_OK;
	}
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		if (o->via.i64 < min || o->via.i64 > max)
			return cod_fail(err, GB_ERANGE, field,
					"expected %s, got %lld", want,
					(long long)o->via.i64);
		*out = o->via.i64;
		return GB_OK;
	}
	return cod_fail(err, GB_ETYPE, field, "expected integer, got %s",
			cod_type_name(o));
}

/* A finite number >= min (min may be -INFINITY); integers are accepted. */
int cod_get_num(const msgpack_object *o, const char *field, double min,
		double *out, struct cod_error *err)
{
	double v;
	switch (o->type) {
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		v = (double)o->via.u64;
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		v = (double)o->via.i64;
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		v = o->via.f64;
		break;
	default:
		return cod_fail(err, GB_ETYPE, field,
				"expected a number, got %s", cod_type_name(o));
	}
	if (!isfinite(v) || v < min) {
		char got[40];
		snprintf(got, sizeof(got), isnan(v) ? "NaN" : "%g", v);
		if (isinf(v)) /* "Inf", as NaN, rather than the C library's */
			snprintf(got, sizeof(got), "%sInf", v < 0 ? "-" : "");
		if (isinf(min))
			return cod_fail(err, GB_ERANGE, field,
					"expected a finite number, got %s", got);
		return cod_fail(err, GB_ERANGE, field,
				"expected a number >= %g, got %s", min, got);
	}
	*out = v;
	return GB_OK;
}

int cod_get_bool(const msgpack_object *o, const char *field, int *out,
		 struct cod_error *err)
{
	if (o->type != MSGPACK_OBJECT_BOOLEAN)
		return cod_fail(err, GB_ETYPE, field,
				"expected boolean, got %s", cod_type_name(o));
	*out = o->via.boolean ? 1 : 0;
	return GB_OK;
}

/* A string of at most COD_MAX_STRING - 1 bytes of valid UTF-8 without NUL,
** copied into the arena. */
int cod_get_array(const msgpack_object *o, const char *field, size_t max,
		  size_t *n, struct cod_error *err)
{
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return cod_fail(err, GB_ETYPE, field, "expected array, got %s",
				cod_type_name(o));
	*n = o->via.array.size;
	if (*n > max)
		return cod_fail(err, GB_ETOOBIG, field,
				"array of %zu exceeds the limit of %zu", *n, max);
	return GB_OK;
}

int cod_get_word(const msgpack_object *o, const char *field,
		 const char *const *words, const char *expected,
		 struct cod_error *err)
{
	if (o->type != MSGPACK_OBJECT_STR)
		return cod_fail(err, GB_ETYPE, field, "expected string, got %s",
				cod_type_name(o));
	size_t n = o->via.str.size;
	for (int i = 0; words[i]; i++)
		if (strlen(words[i]) == n &&
		    (n == 0 || memcmp(words[i], o->via.str.ptr, n) == 0))
			return i;
	char shown[48];
	cod_sanitize(shown, sizeof(shown), o->via.str.ptr, n, 40);
	return cod_fail(err, GB_ERANGE, field,
			"unknown value '%s'; expected %s", shown, expected);
}

static int iref_cmp(const void *x, const void *y)
{
	const struct cod_iref *a = x, *b = y;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

int cod_find_dup(struct cod_iref *tmp, size_t n, size_t *first,
		 size_t *second)
{
	qsort(tmp, n, sizeof(*tmp), iref_cmp);
	for (size_t i = 1; i < n; i++) {
		if (tmp[i - 1].v == tmp[i].v) {
			*first = tmp[i - 1].idx;
			*second = tmp[i].idx;
			return 1;
		}
	}
	return 0;
}

/* A string and where it was: cod_iref for text. */
struct sref {
	const char *s;
	size_t idx;
};

static int sref_cmp(const void *x, const void *y)
{
	const struct sref *a = x, *b = y;
	int c = strcmp(a->s, b->s);
	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* cod_find_dup over the n strings in tmp[0..n), which it sorts. */
static int find_dup_str(struct sref *tmp, size_t n, size_t *first,
			size_t *second)
{
	qsort(tmp, n, sizeof(*tmp), sref_cmp);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(tmp[i - 1].s, tmp[i].s) == 0) {
			*first = tmp[i - 1].idx;
			*second = tmp[i].idx;
			return 1;
		}
	}
	return 0;
}

int cod_ids_unique(const void *items, size_t n, size_t stride, size_t off,
		   int only_positive)
{
	if (n < 2)
		return GB_OK;
	struct cod_iref *tmp = malloc(n * sizeof(*tmp));
	if (tmp == NULL)
		return GB_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		long long v;
		memcpy(&v, (const char *)items + i * stride + off, sizeof(v));
		if (!only_positive || v > 0)
			tmp[k++] = (struct cod_iref){v, i};
	}
	size_t first, second;
	int dup = cod_find_dup(tmp, k, &first, &second);
	free(tmp);
	return dup ? GB_EINVAL : GB_OK;
}

int cod_strs_unique(const char *const *s, size_t n)
{
	if (n < 2)
		return GB_OK;
	struct sref *tmp = malloc(n * sizeof(*tmp));
	if (tmp == NULL)
		return GB_ENOMEM;
	for (size_t i = 0; i < n; i++)
		tmp[i] = (struct sref){s[i], i};
	size_t first, second;
	int dup = find_dup_str(tmp, n, &first, &second);
	free(tmp);
	return dup ? GB_EINVAL : GB_OK;
}

int cod_get_str(const msgpack_object *o, const char *field, int nonempty,
		struct arena *a, const char **out, struct cod_error *err)
{
	if (o->type != MSGPACK_OBJECT_STR)
		return cod_fail(err, GB_ETYPE, field, "expected string, got %s",
				cod_type_name(o));
	const char *p = o->via.str.ptr;
	size_t n = o->via.str.size;
	if (n > COD_MAX_STRING - 1)
		return cod_fail(err, GB_ETOOBIG, field,
				"string of %zu bytes exceeds the limit of %d",
				n, COD_MAX_STRING - 1);
	if (nonempty && n == 0)
		return cod_fail(err, GB_ERANGE, field,
				"expected a non-empty string");
	if (n && memchr(p, '\0', n))
		return cod_fail(err, GB_ERANGE, field,
				"string contains a NUL byte");
	if (!utf8_valid((const unsigned char *)p, n))
		return cod_fail(err, GB_ERANGE, field,
				"string is not valid UTF-8");
	char *copy = arena_strndup(a, n ? p : "", n);
	if (copy == NULL)
		return cod_fail(err, GB_ENOMEM, field,
				"out of decoding memory");
	*out = copy;
	return GB_OK;
}

/* A key or name and where it was, for finding duplicates by sorting. */
struct keyref {
	const char *p;
	size_t n;
	size_t idx;
};

static int keyref_cmp(const void *x, const void *y)
{
	const struct keyref *a = x, *b = y;
	size_t n = a->n < b->n ? a->n : b->n;
	int c = n ? memcmp(a->p, b->p, n) : 0;
	if (c == 0)
		c = (a->n > b->n) - (a->n < b->n);
	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

static int keyref_same(const struct keyref *a, const struct keyref *b)
{
	return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
}

/* The field tables of task.broker. The two task-specific kinds (fullChain,
** inputDatasets) are COD_F_CUSTOM rows, so the table walker itself knows
** nothing about any one message type and codec_jobs.c reuses it. */
static int get_fullchain(const msgpack_object *o, const char *field,
			 const struct cod_field *spec, void *base,
			 struct arena *a, struct cod_error *err);
static int decode_datasets(const msgpack_object *arr, const char *field,
			   const struct cod_field *spec, void *base,
			   struct arena *a, struct cod_error *err);

static const struct cod_field ds_fields[] = {
	{"name", COD_F_STR, 1, 0, 0, 0, 1, offsetof(struct tb_dataset, name),
	 NULL},
	{"size", COD_F_NUM, 1, 0, 0, 0, 0, offsetof(struct tb_dataset, size),
	 NULL},
	{"files", COD_F_LONG, 1, 0, LONG_MAX, 0, 0,
	 offsetof(struct tb_dataset, files), NULL},
	{"primary", COD_F_BOOL, 0, 0, 0, 0, 0,
	 offsetof(struct tb_dataset, primary), NULL},
	{"onTape", COD_F_BOOL, 0, 0, 0, 0, 0,
	 offsetof(struct tb_dataset, on_tape), NULL},
};

static const struct cod_field task_fields[] = {
	{"taskID", COD_F_LLONG, 1, 1, LLONG_MAX, 0, 0,
	 offsetof(struct tb_task, task_id), NULL},
	{"gshare", COD_F_STR, 1, 0, 0, 0, 1, offsetof(struct tb_task, gshare),
	 NULL},
	{"taskPriority", COD_F_LONG, 1, 0, 1000000, 0, 0,
	 offsetof(struct tb_task, priority), NULL},
	{"inputDatasets", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, decode_datasets},
	{"ioIntensity", COD_F_NUM, 0, 0, 0, 0, 0,
	 offsetof(struct tb_task, io_intensity), NULL},
	{"t1Weight", COD_F_NUM, 0, 0, 0, -INFINITY, 0,
	 offsetof(struct tb_task, t1_weight), NULL},
	{"inputPreStaging", COD_F_BOOL, 0, 0, 0, 0, 0,
	 offsetof(struct tb_task, input_prestaging), NULL},
	{"taskBrokerOnMaster", COD_F_BOOL, 0, 0, 0, 0, 0,
	 offsetof(struct tb_task, broker_on_master), NULL},
	{"fullChain", COD_F_CUSTOM, 0, 0, 0, 0, 0,
	 offsetof(struct tb_task, full_chain), get_fullchain},
	{"parentNucleus", COD_F_STR, 0, 0, 0, 0, 0,
	 offsetof(struct tb_task, parent_nucleus), NULL},
	{"normalizedExpOutSize", COD_F_NUM, 0, 0, 0, 0, 0,
	 offsetof(struct tb_task, norm_exp_out_size), NULL},
};

/*
** Check a map's keys (strings, no duplicates) and pick the values of the
** fields in `f` into vals[] (NULL where absent). `path` is the map's path.
*/
static int map_fields(const msgpack_object *map, const char *path,
		      const struct cod_field *f, size_t nf,
		      const msgpack_object **vals, struct arena *a,
		      struct cod_error *err)
{
	const msgpack_object_map *m = &map->via.map;
	for (size_t k = 0; k < nf; k++)
		vals[k] = NULL;
	if (m->size == 0)
		return GB_OK;
	struct keyref *keys = arena_alloc(a, m->size * sizeof(*keys));
	if (keys == NULL)
		return cod_fail(err, GB_ENOMEM, path,
				"out of decoding memory");
	for (uint32_t i = 0; i < m->size; i++) {
		const msgpack_object *k = &m->ptr[i].key;
		if (k->type != MSGPACK_OBJECT_STR)
			return cod_fail(err, GB_ETYPE, path,
					"map key of type %s; keys must be "
					"strings",
					cod_type_name(k));
		keys[i] = (struct keyref){k->via.str.ptr, k->via.str.size, i};
		for (size_t j = 0; j < nf; j++)
			if (strlen(f[j].key) == keys[i].n &&
			    memcmp(f[j].key, keys[i].p, keys[i].n) == 0)
				vals[j] = &m->ptr[i].val;
	}
	qsort(keys, m->size, sizeof(*keys), keyref_cmp);
	for (uint32_t i = 1; i < m->size; i++) {
		if (keyref_same(&keys[i - 1], &keys[i])) {
			char key[48], field[96];
			if (keys[i].n == 0) /* named "", not a bare dot */
				snprintf(key, sizeof(key), "\"\"");
			else
				cod_sanitize(key, sizeof(key), keys[i].p,
					     keys[i].n, 40);
			snprintf(field, sizeof(field), "%s%s%s", path,
				 path[0] ? "." : "", key);
			return cod_fail(err, GB_EDUP, field, "duplicate key");
		}
	}
	return GB_OK;
}

/* fullChain: nil (handled by the walker) or one of the seed's words. */
static int get_fullchain(const msgpack_object *o, const char *field,
			 const struct cod_field *spec, void *base,
			 struct arena *a, struct cod_error *err)
{
	(void)a;
	enum tb_fullchain *out =
		(enum tb_fullchain *)(void *)((char *)base + spec->off);
	if (o->type != MSGPACK_OBJECT_STR)
		return cod_fail(err, GB_ETYPE, field,
				"expected null or string, got %s",
				cod_type_name(o));
	char word[16];
	size_t n = o->via.str.size;
	int fc = -1;
	if (n < sizeof(word) && is_text(o->via.str.ptr, n)) {
		memcpy(word, o->via.str.ptr, n);
		word[n] = '\0';
		fc = tb_fullchain_parse(word);
	}
	if (fc < 0) {
		char shown[48];
		cod_sanitize(shown, sizeof(shown), o->via.str.ptr, n, 40);
		return cod_fail(err, GB_ERANGE, field, "unknown value '%s'",
				shown);
	}
	*out = (enum tb_fullchain)fc;
	return GB_OK;
}

void cod_path_join(char *dst, size_t len, const char *path, const char *key)
{
	if (len == 0)
		return;
	size_t at = 0;
	const char *parts[3] = {path, path[0] ? "." : "", key};
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(parts[k]);
		if (n > len - 1 - at)
			n = len - 1 - at;
		memcpy(dst + at, parts[k], n);
		at += n;
	}
	dst[at] = '\0';
}

int cod_decode_fields(const msgpack_object *o, const char *path,
		      const struct cod_field *f, size_t nf, void *base,
		      struct arena *a, struct cod_error *err)
{
	if (nf > COD_MAX_FIELDS)
		return cod_fail(err, GB_EINVAL, path,
				"field table of %zu rows exceeds %d", nf,
				COD_MAX_FIELDS);
	if (o->type != MSGPACK_OBJECT_MAP)
		return cod_fail(err, GB_ETYPE, path, "expected a map, got %s",
				cod_type_name(o));
	const msgpack_object *v[COD_MAX_FIELDS];
	int rc = map_fields(o, path, f, nf, v, a, err);
	for (size_t k = 0; rc == GB_OK && k < nf; k++) {
		char field[96];
		cod_path_join(field, sizeof(field), path, f[k].key);
		if (v[k] == NULL && f[k].required)
			return cod_fail(err, GB_EMISSING, field, "missing");
		if (is_nil(v[k]) && !f[k].required)
			continue;
		char *dst = (char *)base + f[k].off;
		long long ll = 0;
		switch (f[k].kind) {
		case COD_F_LLONG:
			rc = cod_get_int(v[k], field, f[k].imin, f[k].imax,
					 (long long *)(void *)dst, err);
			break;
		case COD_F_LONG:
			rc = cod_get_int(v[k], field, f[k].imin, f[k].imax,
					 &ll, err);
			*(long *)(void *)dst = (long)ll;
			break;
		case COD_F_NUM:
			rc = cod_get_num(v[k], field, f[k].dmin,
					 (double *)(void *)dst, err);
			break;
		case COD_F_BOOL:
			rc = cod_get_bool(v[k], field, (int *)(void *)dst,
					  err);
			break;
		case COD_F_STR:
			rc = cod_get_str(v[k], field, f[k].nonempty, a,
					 (const char **)(void *)dst, err);
			break;
		case COD_F_CUSTOM:
			rc = f[k].fn ? f[k].fn(v[k], field, &f[k], base, a,
					       err)
				     : cod_fail(err, GB_EINVAL, field,
						"no decoder for this field");
			break;
		}
	}
	return rc;
}

/* ---- arrays and messages ------------------------------------------------ */

/* GB_EDUP at the later of two equal values, naming the earlier one. */
static int dup_fail(struct cod_error *err, const char *field, size_t second,
		    const char *key, const char *what, size_t first)
{
	char path[sizeof(err->field)];
	snprintf(path, sizeof(path), "%s[%zu]%s%s", field, second,
		 key ? "." : "", key ? key : "");
	return cod_fail(err, GB_EDUP, path, "duplicate %s (also %s[%zu])", what,
			field, first);
}

int cod_get_strs(const msgpack_object *o, const char *field, size_t max,
		 const char *dup_what, struct arena *a, const char ***v_out,
		 size_t *n_out, struct cod_error *err)
{
	size_t n = 0;
	int rc = cod_get_array(o, field, max, &n, err);
	if (rc != GB_OK)
		return rc;
	*v_out = NULL;
	*n_out = 0;
	if (n == 0) /* [] lists nothing, as absent and nil do */
		return GB_OK;
	const char **v = arena_alloc(a, n * sizeof(*v));
	struct sref *tmp = dup_what ? arena_alloc(a, n * sizeof(*tmp)) : NULL;
	if (v == NULL || (dup_what && tmp == NULL))
		return cod_fail(err, GB_ENOMEM, field,
				"out of decoding memory");
	for (size_t i = 0; i < n; i++) {
		char path[sizeof(err->field)];
		snprintf(path, sizeof(path), "%s[%zu]", field, i);
		rc = cod_get_str(&o->via.array.ptr[i], path, 1, a, &v[i], err);
		if (rc != GB_OK)
			return rc;
		if (tmp)
			tmp[i] = (struct sref){v[i], i};
	}
	size_t first, second;
	if (tmp && find_dup_str(tmp, n, &first, &second))
		return dup_fail(err, field, second, NULL, dup_what, first);
	*v_out = v;
	*n_out = n;
	return GB_OK;
}

/* The first pair of elements sharing q's field, in sorted order; the
** scratch space for the sort was allocated by the caller. */
static int find_dup_field(const char *el, size_t n, size_t size,
			  const struct cod_unique *q, struct cod_iref *ids,
			  struct sref *strs, size_t *first, size_t *second)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *p = el + i * size + q->off;
		if (q->is_str) {
			const char *s;
			memcpy(&s, p, sizeof(s));
			if (s)
				strs[k++] = (struct sref){s, i};
		} else {
			long long v;
			memcpy(&v, p, sizeof(v));
			if (v > 0)
				ids[k++] = (struct cod_iref){v, i};
		}
	}
	return q->is_str ? find_dup_str(strs, k, first, second)
			 : cod_find_dup(ids, k, first, second);
}

int cod_get_maps(const msgpack_object *o, const char *field,
		 const struct cod_maps *m, void *base, struct arena *a,
		 void **elems, size_t *n_out, struct cod_error *err)
{
	size_t n = 0;
	int rc = cod_get_array(o, field, m->max, &n, err);
	if (rc != GB_OK)
		return rc;
	*elems = NULL;
	*n_out = 0;
	if (n == 0)
		return m->what ? cod_fail(err, GB_ERANGE, field,
					  "expected at least one %s", m->what)
			       : GB_OK;
	size_t nuniq = 0;
	int ints = 0, strs = 0;
	for (; nuniq < COD_MAX_UNIQUE && m->uniq[nuniq].key; nuniq++) {
		strs |= m->uniq[nuniq].is_str;
		ints |= !m->uniq[nuniq].is_str;
	}
	char *el = arena_alloc(a, n * m->size);
	struct cod_iref *ids = ints ? arena_alloc(a, n * sizeof(*ids)) : NULL;
	struct sref *tmp = strs ? arena_alloc(a, n * sizeof(*tmp)) : NULL;
	if (el == NULL || (ints && ids == NULL) || (strs && tmp == NULL))
		return cod_fail(err, GB_ENOMEM, field,
				"out of decoding memory");
	for (size_t i = 0; i < n; i++) {
		char path[sizeof(err->field)];
		snprintf(path, sizeof(path), "%s[%zu]", field, i);
		char *e = el + i * m->size;
		if (m->init)
			memcpy(e, m->init, m->size);
		rc = cod_decode_fields(&o->via.array.ptr[i], path, m->f, m->nf,
				       e, a, err);
		if (rc == GB_OK && m->check)
			rc = m->check(e, path, base, err);
		if (rc != GB_OK)
			return rc;
	}
	for (size_t u = 0; u < nuniq; u++) {
		size_t first, second;
		if (find_dup_field(el, n, m->size, &m->uniq[u], ids, tmp,
				   &first, &second))
			return dup_fail(err, field, second, m->uniq[u].key,
					m->uniq[u].what, first);
	}
	*elems = el;
	*n_out = n;
	return GB_OK;
}

int cod_decode_msg(const void *buf, size_t len, struct arena *a,
		   const void *out, const struct cod_msg *m, void *base,
		   struct cod_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (a == NULL || out == NULL)
		return cod_fail(err, GB_EINVAL, "", "no arena or output");
	/* the tree is charged against what the arena has left, so the arena
	** cap bounds everything */
	size_t budget = a->cap > a->used ? a->cap - a->used : 1;
	msgpack_unpacked up;
	msgpack_unpacked_init(&up);
	int rc = cod_unpack(buf, len, COD_MAX_DEPTH, m->max_values, budget,
			    &up, err);
	if (rc == GB_OK)
		rc = cod_decode_fields(&up.data, "", m->f, m->nf, base, a, err);
	if (rc == GB_OK && m->then)
		rc = m->then(&up.data, base, a, err);
	msgpack_unpacked_destroy(&up);
	return rc;
}

/* A dataset twice would count its size twice in TB-07/TB-10. */
static const struct cod_maps ds_maps = {
	.max = COD_MAX_DATASETS,
	.f = ds_fields,
	.nf = COD_NELEM(ds_fields),
	.size = sizeof(struct tb_dataset),
	.uniq = {{"name", "dataset", offsetof(struct tb_dataset, name), 1}},
};

static int decode_datasets(const msgpack_object *arr, const char *field,
			   const struct cod_field *spec, void *base,
			   struct arena *a, struct cod_error *err)
{
	(void)spec;
	struct tb_task *t = base;
	void *ds = NULL;
	int rc = cod_get_maps(arr, field, &ds_maps, base, a, &ds,
			      &t->ndatasets, err);
	t->datasets = ds;
	return rc;
}

static const struct cod_msg task_msg = {COD_MAX_VALUES, task_fields,
					COD_NELEM(task_fields), NULL};

int cod_decode_task(const void *buf, size_t len, struct arena *a,
		    struct tb_task *out, struct cod_error *err)
{
	struct tb_task t;
	memset(&t, 0, sizeof(t));
	int rc = cod_decode_msg(buf, len, a, out, &task_msg, &t, err);
	if (rc == GB_OK)
		*out = t;
	else if (a != NULL && out != NULL) /* a refused task reads as none */
		memset(out, 0, sizeof(*out));
	return rc;
}

/* ---- encoding ----------------------------------------------------------- */

int cod_pack_str(msgpack_packer *pk, const char *s)
{
	size_t n = strlen(s);
	if (msgpack_pack_str(pk, n) != 0)
		return -1;
	return msgpack_pack_str_body(pk, s, n);
}

int cod_pack_kstr(msgpack_packer *pk, const char *k, const char *v)
{
	if (cod_pack_str(pk, k) != 0)
		return -1;
	return v ? cod_pack_str(pk, v) : msgpack_pack_nil(pk);
}

int cod_pack_kint(msgpack_packer *pk, const char *k, long long v)
{
	if (cod_pack_str(pk, k) != 0)
		return -1;
	return msgpack_pack_long_long(pk, v);
}

int cod_pack_kdbl(msgpack_packer *pk, const char *k, double v)
{
	if (cod_pack_str(pk, k) != 0)
		return -1;
	return msgpack_pack_double(pk, v);
}

int cod_pack_kbool(msgpack_packer *pk, const char *k, int v)
{
	if (cod_pack_str(pk, k) != 0)
		return -1;
	return v ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
}

int cod_pack_event_start(msgpack_packer *pk, msgpack_sbuffer *out,
			 size_t nkeys, const char *event, long long decision_id,
			 const char *request_id)
{
	msgpack_packer_init(pk, out, msgpack_sbuffer_write);
	int bad = msgpack_pack_map(pk, nkeys);
	bad |= cod_pack_kstr(pk, "event", event);
	bad |= cod_pack_kint(pk, "decisionId", decision_id);
	bad |= cod_pack_kstr(pk, "requestId", request_id);
	return bad;
}

/* What the decoder accepts for a string field. */
int cod_str_ok(const char *s, int nonempty)
{
	if (s == NULL)
		return 0;
	size_t n = strlen(s);
	return n <= COD_MAX_STRING - 1 && (!nonempty || n > 0) &&
	       utf8_valid((const unsigned char *)s, n);
}

/* Everything cod_decode_task would refuse, refused before encoding. */
static int task_encodable(const struct tb_task *t)
{
	if (t->task_id < 1 || !cod_str_ok(t->gshare, 1) || t->priority < 0 ||
	    t->priority > 1000000 || !isfinite(t->io_intensity) ||
	    t->io_intensity < 0 || !isfinite(t->t1_weight) ||
	    !isfinite(t->norm_exp_out_size) || t->norm_exp_out_size < 0 ||
	    t->ndatasets > COD_MAX_DATASETS ||
	    (t->ndatasets && t->datasets == NULL) ||
	    (unsigned)t->full_chain > TB_FC_CAPABLE ||
	    (t->parent_nucleus && !cod_str_ok(t->parent_nucleus, 0)))
		return 0;
	for (size_t i = 0; i < t->ndatasets; i++) {
		const struct tb_dataset *d = &t->datasets[i];
		if (!cod_str_ok(d->name, 1) || !isfinite(d->size) ||
		    d->size < 0 || d->files < 0)
			return 0;
		for (size_t j = 0; j < i; j++)
			if (strcmp(t->datasets[j].name, d->name) == 0)
				return 0;
	}
	return 1;
}

int cod_encode_task(const struct tb_task *t, msgpack_sbuffer *out)
{
	if (t == NULL || out == NULL || !task_encodable(t))
		return GB_EINVAL;
	msgpack_packer pk;
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	int bad = msgpack_pack_map(&pk, COD_NELEM(task_fields));
	bad |= cod_pack_kint(&pk, "taskID", t->task_id);
	bad |= cod_pack_kstr(&pk, "gshare", t->gshare);
	bad |= cod_pack_kint(&pk, "taskPriority", t->priority);
	bad |= cod_pack_kdbl(&pk, "ioIntensity", t->io_intensity);
	bad |= cod_pack_kdbl(&pk, "t1Weight", t->t1_weight);
	bad |= cod_pack_kbool(&pk, "inputPreStaging", t->input_prestaging);
	bad |= cod_pack_kbool(&pk, "taskBrokerOnMaster", t->broker_on_master);
	bad |= cod_pack_kstr(&pk, "fullChain",
			     tb_fullchain_name(t->full_chain));
	bad |= cod_pack_kstr(&pk, "parentNucleus", t->parent_nucleus);
	bad |= cod_pack_kdbl(&pk, "normalizedExpOutSize", t->norm_exp_out_size);
	bad |= cod_pack_str(&pk, "inputDatasets");
	bad |= msgpack_pack_array(&pk, t->ndatasets);
	for (size_t i = 0; i < t->ndatasets && !bad; i++) {
		const struct tb_dataset *d = &t->datasets[i];
		bad |= msgpack_pack_map(&pk, COD_NELEM(ds_fields));
		bad |= cod_pack_kstr(&pk, "name", d->name);
		bad |= cod_pack_kbool(&pk, "primary", d->primary);
		bad |= cod_pack_kdbl(&pk, "size", d->size);
		bad |= cod_pack_kint(&pk, "files", d->files);
		bad |= cod_pack_kbool(&pk, "onTape", d->on_tape);
	}
	return bad ? GB_ENOMEM : GB_OK;
}

/* ---- events ------------------------------------------------------------- */

struct hist {
	const char *rule;
	const char *code;
	long count;
};

static int str_cmp0(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int hist_cmp(const void *x, const void *y)
{
	const struct hist *a = x, *b = y;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	int c = str_cmp0(a->rule, b->rule);
	return c ? c : str_cmp0(a->code, b->code);
}

/* The reason histogram: one row per (rule, code) over every recorded
** reason of every dropped candidate, most frequent first. */
static int build_hist(const struct dec_decision *d, struct hist **out,
		      size_t *n)
{
	*out = NULL;
	*n = 0;
	size_t cap = d->ncands * DEC_MAX_REASONS;
	if (cap == 0)
		return GB_OK;
	struct hist *h = calloc(cap, sizeof(*h));
	if (h == NULL)
		return GB_ENOMEM;
	size_t used = 0;
	for (size_t i = 0; i < d->ncands; i++) {
		const struct dec_candidate *c = &d->cands[i];
		if (!dec_dropped(c))
			continue;
		unsigned nr = c->nreasons < DEC_MAX_REASONS ? c->nreasons
							    : DEC_MAX_REASONS;
		for (unsigned r = 0; r < nr; r++) {
			const struct dec_reason *x = &c->reasons[r];
			size_t k = 0;
			while (k < used && (str_cmp0(h[k].rule, x->rule) ||
					    str_cmp0(h[k].code, x->code)))
				k++;
			if (k == used) {
				h[used].rule = x->rule;
				h[used].code = x->code;
				used++;
			}
			h[k].count++;
		}
	}
	qsort(h, used, sizeof(*h), hist_cmp);
	*out = h;
	*n = used;
	return GB_OK;
}

int cod_pack_outcome(msgpack_packer *pk, const struct dec_decision *d)
{
	if (pk == NULL || d == NULL || (d->ncands && d->cands == NULL))
		return GB_EINVAL;
	struct hist *h = NULL;
	size_t nh = 0;
	if (build_hist(d, &h, &nh) != GB_OK)
		return GB_ENOMEM;
	int bad = 0;
	bad |= cod_pack_str(pk, "stages");
	bad |= msgpack_pack_array(pk, d->nstages);
	for (size_t i = 0; i < d->nstages; i++) {
		const struct dec_stage *s = &d->stages[i];
		bad |= msgpack_pack_map(pk, 4);
		bad |= cod_pack_kstr(pk, "name", s->name);
		bad |= cod_pack_kstr(pk, "rule", s->rule);
		bad |= cod_pack_kint(pk, "in", s->in);
		bad |= cod_pack_kint(pk, "out", s->out);
	}

	bad |= cod_pack_str(pk, "reasons");
	bad |= msgpack_pack_array(pk, nh);
	for (size_t i = 0; i < nh; i++) {
		bad |= msgpack_pack_map(pk, 3);
		bad |= cod_pack_kstr(pk, "rule", h[i].rule);
		bad |= cod_pack_kstr(pk, "code", h[i].code);
		bad |= cod_pack_kint(pk, "count", h[i].count);
	}
	free(h);

	size_t nrej = 0;
	for (size_t i = 0; i < d->ncands && nrej < COD_MAX_REJECTED; i++)
		nrej += dec_dropped(&d->cands[i]) && d->cands[i].nreasons > 0;
	bad |= cod_pack_str(pk, "rejected");
	bad |= msgpack_pack_array(pk, nrej);
	for (size_t i = 0, done = 0; i < d->ncands && done < nrej; i++) {
		const struct dec_candidate *c = &d->cands[i];
		if (!dec_dropped(c) || c->nreasons == 0)
			continue;
		char detail[256];
		dec_reason_format(&c->reasons[0], detail, sizeof(detail));
		bad |= msgpack_pack_map(pk, 4);
		bad |= cod_pack_kstr(pk, "name", c->name);
		bad |= cod_pack_kstr(pk, "rule", c->reasons[0].rule);
		bad |= cod_pack_kstr(pk, "code", c->reasons[0].code);
		bad |= cod_pack_kstr(pk, "detail", detail);
		done++;
	}
	return bad ? GB_ENOMEM : GB_OK;
}

int cod_encode_task_event(const struct cod_task_event *ev,
			  msgpack_sbuffer *out)
{
	if (ev == NULL || out == NULL || ev->event == NULL ||
	    ev->task == NULL || ev->dec == NULL || ev->task->gshare == NULL)
		return GB_EINVAL;
	const struct dec_decision *d = ev->dec;
	if (d->ncands && d->cands == NULL)
		return GB_EINVAL;
	int assigned = d->outcome == DEC_ASSIGNED;
	if (assigned && (d->chosen < 0 || (size_t)d->chosen >= d->ncands ||
			 ev->nuclei == NULL))
		return GB_EINVAL;
	char decided[40], retry[40] = "";
	if (tf_format(ev->decided_at, decided, sizeof(decided)) != GB_OK)
		return GB_EINVAL;
	if (!assigned &&
	    tf_format(ev->retry_at, retry, sizeof(retry)) != GB_OK)
		return GB_EINVAL;

	/* event, decisionId, requestId, taskID, gshare, decidedAt,
	** decidedAtUnix, the outcome's fields (assigned: nucleus, weight,
	** jobScope; pending: retryAfter, retryAt), stages, reasons, rejected.
	** A pending event has no nucleus key at all, not a null one. */
	msgpack_packer pk;
	int bad = cod_pack_event_start(&pk, out, assigned ? 13 : 12, ev->event,
				       ev->decision_id, ev->request_id);
	bad |= cod_pack_kint(&pk, "taskID", ev->task->task_id);
	bad |= cod_pack_kstr(&pk, "gshare", ev->task->gshare);
	bad |= cod_pack_kstr(&pk, "decidedAt", decided);
	bad |= cod_pack_kint(&pk, "decidedAtUnix", ev->decided_at);
	if (assigned) {
		const struct dec_candidate *c = &d->cands[d->chosen];
		const struct tb_nucleus *nu = &ev->nuclei[d->chosen];
		bad |= cod_pack_kstr(&pk, "nucleus",
				     c->name ? c->name : nu->name);
		bad |= cod_pack_kdbl(&pk, "weight", c->weight);
		bad |= cod_pack_kstr(&pk, "jobScope",
				     tb_job_scope_name(tb_job_scope(
					     ev->task->full_chain, nu->bare)));
	} else {
		bad |= cod_pack_kint(&pk, "retryAfter", d->retry_after_s);
		bad |= cod_pack_kstr(&pk, "retryAt", retry);
	}

	if (bad)
		return GB_ENOMEM;
	return cod_pack_outcome(&pk, d);
}

/* ---- msgpack -> JSON ------------------------------------------------------ */

static json_t *text_or_note(const char *p, size_t n)
{
	if (is_text(p, n))
		return json_stringn(n ? p : "", n);
	char note[64];
	snprintf(note, sizeof(note), "<%zu bytes, not UTF-8 text>", n);
	return json_string(note);
}

/* A map key as JSON text: a text string as it is, an integer in decimal,
** anything else as a "<type key>" marker. */
static const char *key_text(const msgpack_object *k, char *buf, size_t n,
			    size_t *len)
{
	int w;
	if (k->type == MSGPACK_OBJECT_STR &&
	    is_text(k->via.str.ptr, k->via.str.size)) {
		*len = k->via.str.size;
		return k->via.str.size ? k->via.str.ptr : "";
	}
	if (k->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		w = snprintf(buf, n, "%llu", (unsigned long long)k->via.u64);
	else if (k->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		w = snprintf(buf, n, "%lld", (long long)k->via.i64);
	else
		w = snprintf(buf, n, "<%s key>", cod_type_name(k));
	*len = w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
	return buf;
}

static json_t *obj_to_json(const msgpack_object *o)
{
	char note[64];
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		return json_null();
	case MSGPACK_OBJECT_BOOLEAN:
		return json_boolean(o->via.boolean);
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		if (o->via.u64 > (uint64_t)LLONG_MAX)
			return json_real((double)o->via.u64);
		return json_integer((json_int_t)o->via.u64);
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return json_integer((json_int_t)o->via.i64);
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		/* JSON has no NaN or Inf. */
		return isfinite(o->via.f64) ? json_real(o->via.f64)
					    : json_null();
	case MSGPACK_OBJECT_STR:
		return text_or_note(o->via.str.ptr, o->via.str.size);
	case MSGPACK_OBJECT_BIN:
		snprintf(note, sizeof(note), "<%u bytes>",
			 (unsigned)o->via.bin.size);
		return json_string(note);
	case MSGPACK_OBJECT_EXT:
		snprintf(note, sizeof(note), "<extension %d, %u bytes>",
			 (int)o->via.ext.type, (unsigned)o->via.ext.size);
		return json_string(note);
	case MSGPACK_OBJECT_ARRAY: {
		json_t *arr = json_array();
		for (uint32_t i = 0; arr && i < o->via.array.size; i++) {
			json_t *v = obj_to_json(&o->via.array.ptr[i]);
			if (v == NULL || json_array_append_new(arr, v) != 0) {
				json_decref(arr);
				return NULL;
			}
		}
		return arr;
	}
	case MSGPACK_OBJECT_MAP: {
		json_t *obj = json_object();
		for (uint32_t i = 0; obj && i < o->via.map.size; i++) {
			char kbuf[64];
			size_t kn;
			const char *kp = key_text(&o->via.map.ptr[i].key, kbuf,
						  sizeof(kbuf), &kn);
			json_t *v = obj_to_json(&o->via.map.ptr[i].val);
			if (v == NULL ||
			    json_object_setn_new(obj, kp, kn, v) != 0) {
				json_decref(obj);
				return NULL;
			}
		}
		return obj;
	}
	}
	return json_null();
}

json_t *cod_to_json(const void *buf, size_t len)
{
	msgpack_unpacked up;
	msgpack_unpacked_init(&up);
	struct cod_error err;
	json_t *j = NULL;
	if (cod_unpack(buf, len, COD_JSON_MAX_DEPTH, COD_JSON_MAX_VALUES, 0,
		       &up, &err) == GB_OK)
		j = obj_to_json(&up.data);
	msgpack_unpacked_destroy(&up);
	return j;
}
