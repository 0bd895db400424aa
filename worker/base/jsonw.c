/*
** jsonw.c — jansson values to compact JSON text, byte for byte as
** json_dumps writes them (see jsonw.h for why and for what is left to
** jansson).
*/
#include "base/jsonw.h"

#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a step returns besides 0: out of memory, or "let jansson write
** this value" (the whole value, not the part: the caller starts over). */
#define JW_OOM (-1)
#define JW_JANSSON (-2)

/* The flags written here; any other leaves the value to json_dumps. */
#define JW_FLAGS                                                          \
	(JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(0x1F) |      \
	 JSON_ENCODE_ANY | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII)

/* Objects of at most this many keys are sorted in place on the stack. */
#define JW_STACK_KEYS 64

struct jw_buf {
	char *p;
	size_t n, cap; /* cap > n always leaves room for the NUL */
	size_t flags;
	int prec;
	jw_sink sink; /* jw_dump_sink: where full buffers go */
	void *arg;
};

static int grow(struct jw_buf *b, size_t more)
{
	/* a sink takes what is written so far, and the buffer is reused */
	if (b->sink && b->n > 0) {
		if (b->sink(b->p, b->n, b->arg) != 0)
			return JW_OOM;
		b->n = 0;
		if (b->cap > more)
			return 0;
	}
	size_t c = b->cap ? b->cap : 4096;
	while (c - b->n <= more) {
		if (c > SIZE_MAX / 2)
			return JW_OOM;
		c *= 2;
	}
	char *q = realloc(b->p, c);
	if (q == NULL)
		return JW_OOM;
	b->p = q;
	b->cap = c;
	return 0;
}

static inline int put(struct jw_buf *b, const char *s, size_t n)
{
	if (b->cap - b->n <= n && grow(b, n) != 0)
		return JW_OOM;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	return 0;
}

static inline int put1(struct jw_buf *b, char c)
{
	if (b->cap - b->n <= 1 && grow(b, 1) != 0)
		return JW_OOM;
	b->p[b->n++] = c;
	return 0;
}

/* 1 for the bytes a string cannot hold as they are: control characters,
** '"', '\\', and (left to jansson) those above 0x7F. */
static const unsigned char jw_special[256] = {
	[0x00 ... 0x1F] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xFF] = 1,
};

/* A string or key as jansson's dump_string writes it without
** JSON_ESCAPE_SLASH: '"', '\\' and control characters escaped, \u00XX in
** upper-case hex for those without a short form. A byte above 0x7F goes
** to jansson, which checks the UTF-8 (and escapes it under
** JSON_ENSURE_ASCII). */

static int put_str(struct jw_buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	/* Most strings (every key, names, rule codes) need no escape: copied
	** as they are scanned, in one pass and one reservation. */
	if (b->cap - b->n <= len + 2 && grow(b, len + 2) != 0)
		return JW_OOM;
	char *o = b->p + b->n + 1;
	size_t k = 0;
	while (k < len && !jw_special[(unsigned char)s[k]]) {
		o[k] = s[k];
		k++;
	}
	if (k == len) {
		o[-1] = '"';
		o[len] = '"';
		b->n += len + 2;
		return 0;
	}
	int rc = put1(b, '"');
	size_t i = 0;
	while (rc == 0 && i < len) {
		size_t j = i;
		while (j < len && !jw_special[(unsigned char)s[j]])
			j++;
		if (j > i && (rc = put(b, s + i, j - i)) != 0)
			return rc;
		if (j == len)
			break;
		unsigned char c = (unsigned char)s[j];
		char e[6] = {'\\', 0, 0, 0, 0, 0};
		size_t en = 2;
		switch (c) {
		case '\\': e[1] = '\\'; break;
		case '"': e[1] = '"'; break;
		case '\b': e[1] = 'b'; break;
		case '\f': e[1] = 'f'; break;
		case '\n': e[1] = 'n'; break;
		case '\r': e[1] = 'r'; break;
		case '\t': e[1] = 't'; break;
		default:
			if (c >= 0x80)
				return JW_JANSSON;
			e[1] = 'u';
			e[2] = '0';
			e[3] = '0';
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			en = 6;
		}
		rc = put(b, e, en);
		i = j + 1;
	}
	return rc ? rc : put1(b, '"');
}

/* "%lld" without printf. */
static int put_int(struct jw_buf *b, json_int_t v)
{
	char t[24];
	char *end = t + sizeof(t), *p = end;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v
				     : (unsigned long long)v;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	return put(b, p, (size_t)(end - p));
}

/* A real as jansson's jsonp_dtostr writes it: "%.*g"; ".0" added when
** that has neither '.' nor 'e'; the exponent without '+' or leading
** zeros. A text as long as jansson's buffer (25 bytes; it fails on it)
** is left to jansson; "%.17g" never writes one. */
static int put_real(struct jw_buf *b, double d, int prec)
{
	char t[40];
	int n = snprintf(t, sizeof(t), "%.*g", prec, d);
	if (n < 0 || n >= 25)
		return JW_JANSSON;
	size_t len = (size_t)n;
	if (memchr(t, '.', len) == NULL && memchr(t, 'e', len) == NULL) {
		if (len + 3 >= 25)
			return JW_JANSSON;
		t[len++] = '.';
		t[len++] = '0';
		t[len] = '\0';
	}
	char *start = memchr(t, 'e', len);
	if (start) {
		start++;
		char *end = start + 1;
		if (*start == '-')
			start++;
		while (*end == '0')
			end++;
		if (end != start) {
			memmove(start, end, len - (size_t)(end - t) + 1);
			len -= (size_t)(end - start);
		}
	}
	return put(b, t, len);
}

struct jw_kv {
	const char *k;
	size_t len;
	json_t *v;
};

/* jansson's order of keys: bytes, then length. */
static int kv_cmp(const void *x, const void *y)
{
	const struct jw_kv *a = x, *b = y;
	size_t m = a->len < b->len ? a->len : b->len;
	int r = memcmp(a->k, b->k, m);
	if (r)
		return r;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int put_value(struct jw_buf *b, const json_t *v, int depth);

static int put_member(struct jw_buf *b, int first, const char *k, size_t len,
		      const json_t *v, int depth)
{
	int rc = first ? 0 : put1(b, ',');
	if (rc == 0)
		rc = put_str(b, k, len);
	if (rc == 0)
		rc = put1(b, ':');
	return rc ? rc : put_value(b, v, depth + 1);
}

static int put_object(struct jw_buf *b, const json_t *o, int depth)
{
	json_t *obj = (json_t *)o; /* jansson's iterators take non-const */
	size_t n = json_object_size(o);
	if (n == 0)
		return put(b, "{}", 2);
	int rc = put1(b, '{');
	if (rc)
		return rc;
	if (!(b->flags & JSON_SORT_KEYS)) {
		int first = 1;
		for (void *it = json_object_iter(obj); it && rc == 0;
		     it = json_object_iter_next(obj, it)) {
			rc = put_member(b, first, json_object_iter_key(it),
					json_object_iter_key_len(it),
					json_object_iter_value(it), depth);
			first = 0;
		}
		return rc ? rc : put1(b, '}');
	}
	struct jw_kv stack[JW_STACK_KEYS];
	struct jw_kv *kv = n <= JW_STACK_KEYS ? stack : malloc(n * sizeof(*kv));
	if (kv == NULL)
		return JW_OOM;
	size_t m = 0;
	for (void *it = json_object_iter(obj); it && m < n;
	     it = json_object_iter_next(obj, it)) {
		kv[m].k = json_object_iter_key(it);
		kv[m].len = json_object_iter_key_len(it);
		kv[m].v = json_object_iter_value(it);
		/* insertion sort for the small objects records are made of */
		size_t i = m++;
		if (n <= 16) {
			struct jw_kv t = kv[i];
			while (i > 0 && kv_cmp(&kv[i - 1], &t) > 0) {
				kv[i] = kv[i - 1];
				i--;
			}
			kv[i] = t;
		}
	}
	if (n > 16)
		qsort(kv, m, sizeof(*kv), kv_cmp);
	for (size_t i = 0; i < m && rc == 0; i++)
		rc = put_member(b, i == 0, kv[i].k, kv[i].len, kv[i].v, depth);
	if (kv != stack)
		free(kv);
	return rc ? rc : put1(b, '}');
}

static int put_array(struct jw_buf *b, const json_t *a, int depth)
{
	size_t n = json_array_size(a);
	if (n == 0)
		return put(b, "[]", 2);
	int rc = put1(b, '[');
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (i > 0)
			rc = put1(b, ',');
		if (rc == 0)
			rc = put_value(b, json_array_get(a, i), depth + 1);
	}
	return rc ? rc : put1(b, ']');
}

static int put_value(struct jw_buf *b, const json_t *v, int depth)
{
	if (depth > JW_MAX_DEPTH)
		return JW_JANSSON;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return put_object(b, v, depth);
	case JSON_ARRAY:
		return put_array(b, v, depth);
	case JSON_STRING:
		return put_str(b, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return put_int(b, json_integer_value(v));
	case JSON_REAL:
		return put_real(b, json_real_value(v), b->prec);
	case JSON_TRUE:
		return put(b, "true", 4);
	case JSON_FALSE:
		return put(b, "false", 5);
	case JSON_NULL:
		return put(b, "null", 4);
	}
	return JW_JANSSON;
}

/* How a dump of `v` under `flags` starts: JW_JANSSON when jansson writes
** it all (a flag or a locale this writer does not take), -1 when jansson
** refuses it (a scalar without JSON_ENCODE_ANY), else 0 with `b` set up. */
static int jw_begin(const json_t *v, size_t flags, struct jw_buf *b)
{
	const struct lconv *lc = localeconv();
	if ((flags & ~(size_t)JW_FLAGS) != 0 || !(flags & JSON_COMPACT) ||
	    lc == NULL || strcmp(lc->decimal_point, ".") != 0)
		return JW_JANSSON;
	if (!(flags & JSON_ENCODE_ANY) && !json_is_object(v) &&
	    !json_is_array(v))
		return -1;
	int prec = (int)((flags >> 11) & 0x1F);
	*b = (struct jw_buf){.flags = flags, .prec = prec ? prec : 17};
	return 0;
}

int jw_dump_sink(const json_t *v, size_t flags, jw_sink sink, void *arg)
{
	if (v == NULL || sink == NULL)
		return -1;
	struct jw_buf b;
	int start = jw_begin(v, flags, &b);
	if (start != 0)
		return start == JW_JANSSON
			       ? json_dump_callback(v, sink, arg, flags)
			       : -1;
	b.sink = sink;
	b.arg = arg;
	b.p = malloc(JW_SINK_BUF);
	if (b.p == NULL)
		return -1;
	b.cap = JW_SINK_BUF;
	int rc = put_value(&b, v, 0);
	if (rc == 0 && b.n > 0)
		rc = sink(b.p, b.n, arg) == 0 ? 0 : JW_OOM;
	free(b.p);
	if (rc == JW_JANSSON) /* what was written goes, jansson writes all */
		return sink(NULL, 0, arg) == 0
			       ? json_dump_callback(v, sink, arg, flags)
			       : -1;
	return rc == 0 ? 0 : -1;
}

/* json_dumps itself, with its length. */
static char *by_jansson(const json_t *v, size_t flags, size_t *len)
{
	char *s = json_dumps(v, flags);
	if (len)
		*len = s ? strlen(s) : 0;
	return s;
}

char *jw_dumps(const json_t *v, size_t flags, size_t *len)
{
	if (len)
		*len = 0;
	if (v == NULL)
		return NULL;
	struct jw_buf b;
	int start = jw_begin(v, flags, &b);
	if (start != 0)
		return start == JW_JANSSON ? by_jansson(v, flags, len) : NULL;
	int rc = put_value(&b, v, 0);
	if (rc == 0 && b.p == NULL)
		rc = grow(&b, 1);
	if (rc != 0) {
		free(b.p);
		return rc == JW_JANSSON ? by_jansson(v, flags, len) : NULL;
	}
	b.p[b.n] = '\0';
	if (len)
		*len = b.n;
	/* The buffer grew by doubling: a large text gives its slack back,
	** as jansson's copy of the text does, so that a caller holding it
	** (and the allocator after) sees what the text needs. */
	if (b.n >= 65536 && b.cap - b.n > b.n / 4) {
		char *q = realloc(b.p, b.n + 1);
		if (q)
			b.p = q;
	}
	return b.p;
}
