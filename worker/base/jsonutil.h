/*
** jsonutil.h — the JSON helpers the scenario parsers and the decision
** renderers share (prefix ju_).
**
** Two halves. Reading: the strict parsing of files people write (scenario
** and grid files, job requests) — "PATH: problem" errors with the JSON path
** of the offending value, type names, string and array limits, duplicate
** names, and the table-driven record parser that scenario_jobs.c and
** scenario_jobs_grid.c describe their flat records with. Writing: the
** jansson building blocks of the decision JSON (report.c, report_jobs.c).
** They live here once so that an error text or a JSON shape cannot drift
** apart between task and job brokerage.
**
** Every parsing function takes a struct ju_ctx: the arena that receives
** copies (so results outlive the json_t) and the caller's error buffer.
** They return GB_OK or a negative GB_E* code with the error written.
*/
#ifndef GB_JSONUTIL_H
#define GB_JSONUTIL_H

#include <math.h>
#include <stddef.h>

#include <jansson.h>

#include "base/arena.h"
#include "decision.h"

#define JU_PATH 224 /* path buffers of the record parser */

#if defined(__GNUC__)
#define JU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define JU_PRINTF(a, b)
#endif

/* One parse: where copies go, where the error goes, and two knobs of the
** record parser (JU_F_REQOPT rows, JU_K_AGE rows). */
struct ju_ctx {
	struct arena *a;
	char *err;     /* may be NULL: then only the code is returned */
	size_t errlen;
	int req_opt;   /* JU_F_REQOPT fields are required */
	long long now; /* JU_K_AGE counts back from it */
};

/* ---- errors and paths --------------------------------------------------- */

/*
** Write "PATH: <fmt...>" into c->err ("(root)" for an empty path) and
** return rc unchanged, so callers write `return ju_fail(...)`. Truncates to
** c->errlen; writes nothing when c->err is NULL or c->errlen is 0.
*/
int ju_fail(const struct ju_ctx *c, int rc, const char *path, const char *fmt,
	    ...) JU_PRINTF(4, 5);

/* After snprintf into buf[n] returned w: a path cut short by its buffer
** ends in "..." rather than mid-name. */
void ju_path_done(char *buf, size_t n, int w);

/* buf = "path.key" ("key" at the root); truncated as ju_path_done. */
void ju_path_key(char *buf, size_t n, const char *path, const char *key);

/* buf = "path[i]"; truncated as ju_path_done. */
void ju_path_idx(char *buf, size_t n, const char *path, size_t i);

/* buf = path["key"]: map keys (dataset, queue and file names) hold dots
** and colons, so they are quoted. Truncated as ju_path_done. */
void ju_path_qkey(char *buf, size_t n, const char *path, const char *key);

/* The JSON type of j as errors name it ("object", "integer", "boolean"...);
** a static string. */
const char *ju_type_name(const json_t *j);

/* ---- values ------------------------------------------------------------- */

/* GB_OK when v is an object, else GB_ETYPE with "expected object, got T". */
int ju_want_object(const struct ju_ctx *c, json_t *v, const char *path);

/* GB_OK when v is an array of at most `limit` elements; GB_ETYPE or
** GB_ETOOBIG otherwise. */
int ju_want_array(const struct ju_ctx *c, json_t *v, const char *path,
		  size_t limit);

/* n elements of `size` bytes from c->a; NULL when n is 0, the product
** overflows or the arena is full. Not zeroed. */
void *ju_alloc_n(const struct ju_ctx *c, size_t n, size_t size);

/*
** Check s[0..n) against the string limit of base/limits.h (GB_MAX_STRING - 1
** bytes, no NUL inside, non-empty when `nonempty`) and copy it into c->a;
** *out points at the copy. `f` is the path used in errors.
*/
int ju_str_copy(const struct ju_ctx *c, const char *s, size_t n,
		const char *f, int nonempty, const char **out);

/* ju_str_copy of a JSON string; GB_ETYPE when v is not a string. */
int ju_str_value(const struct ju_ctx *c, json_t *v, const char *f,
		 int nonempty, const char **out);

/*
** An array of at most `limit` strings (each as ju_str_value) into an arena
** array: *out and *n, NULL and 0 when v is NULL or the array is empty.
*/
int ju_str_list(const struct ju_ctx *c, json_t *v, const char *f,
		size_t limit, int nonempty, const char *const **out,
		size_t *n);

/* ---- duplicate names ---------------------------------------------------- */

/* A name and the index of the element it came from. */
struct ju_nameref {
	const char *name;
	size_t idx;
};

/* qsort order of ju_nameref: by name, then by index (so the first of two
** equal names keeps its place). */
int ju_nameref_cmp(const void *x, const void *y);

/* bsearch comparison of a name (const char *) against a ju_nameref. */
int ju_nameref_key_cmp(const void *key, const void *elem);

/*
** Sort r[0..n) with ju_nameref_cmp; the later of two equal names is
** GB_EDUP at "<path>[i]<suffix>: duplicate <what> 'X' (also <path>[j])".
*/
int ju_dups(const struct ju_ctx *c, struct ju_nameref *r, size_t n,
	    const char *path, const char *suffix, const char *what);

/* ---- table-driven records ----------------------------------------------- */

enum ju_kind {
	JU_K_NUM,   /* double */
	JU_K_LONG,  /* long */
	JU_K_LLONG, /* long long */
	JU_K_BOOL,  /* int 0/1 */
	JU_K_STR,   /* const char *, copied */
	JU_K_LIST,  /* const char *const * at off, size_t count at off2 */
	JU_K_ENUM,  /* one of `words`: its index as an int (an enum member) */
	JU_K_WORD,  /* one of `words`: the static word itself */
	JU_K_TIME,  /* RFC 3339 string -> long long unix s; null -> 0 */
	JU_K_AGE,   /* seconds before ju_ctx.now -> long long unix s; null
		     * -> 0 (never) */
	JU_K_TEXT,  /* free text checked for type only, not stored */
};

enum {
	JU_F_REQ = 1,      /* required */
	JU_F_NONEMPTY = 2, /* strings (list elements): not "" */
	JU_F_POS = 4,      /* numbers: > min rather than >= min */
	JU_F_REQOPT = 8,   /* required when ju_ctx.req_opt is set */
};

/*
** One field of a record. An optional field that is absent or null takes
** `def` (`sdef` for strings, word 0 for enums; NAN = unknown); a list's
** limit is `max`. A string row with `check` must also satisfy it, else
** "expected <expect>, got '<value>'".
*/
struct ju_fld {
	const char *key;
	unsigned char kind;
	unsigned char flags;
	size_t off, off2;
	double min, max; /* max INFINITY: none */
	double def;
	const char *sdef;
	const char *const *words;
	int (*check)(const char *s);
	const char *expect;
};

/* Rows of a table: key, then where the value goes in struct s. */
#define JU_F(k, kd, f, s, m, lo, hi, d)                                      \
	{.key = k, .kind = kd, .flags = f, .off = offsetof(s, m), .min = lo, \
	 .max = hi, .def = d}
#define JU_NUMF(k, s, m, f, lo, hi, d) JU_F(k, JU_K_NUM, f, s, m, lo, hi, d)
#define JU_NUM(k, s, m, lo, hi, d) JU_F(k, JU_K_NUM, 0, s, m, lo, hi, d)
#define JU_NUMNULL(k, s, m, lo, hi) JU_F(k, JU_K_NUM, 0, s, m, lo, hi, NAN)
#define JU_LNG(k, s, m, lo, hi, d) JU_F(k, JU_K_LONG, 0, s, m, lo, hi, d)
#define JU_LLNG(k, s, m, f, lo) JU_F(k, JU_K_LLONG, f, s, m, lo, INFINITY, 0)
#define JU_BOOL(k, s, m) JU_F(k, JU_K_BOOL, 0, s, m, 0, 0, 0)
#define JU_TIME(k, s, m, f) JU_F(k, JU_K_TIME, f, s, m, 0, 0, 0)
#define JU_AGE(k, s, m, hi) JU_F(k, JU_K_AGE, 0, s, m, 0, hi, 0)
#define JU_STR(k, s, m, f, d)                                          \
	{.key = k, .kind = JU_K_STR, .flags = f, .off = offsetof(s, m), \
	 .sdef = d}
#define JU_STRCHK(k, s, m, f, d, fn, ex)                               \
	{.key = k, .kind = JU_K_STR, .flags = f, .off = offsetof(s, m), \
	 .sdef = d, .check = fn, .expect = ex}
#define JU_LIST(k, s, m, n, f, lim)                                     \
	{.key = k, .kind = JU_K_LIST, .flags = f, .off = offsetof(s, m), \
	 .off2 = offsetof(s, n), .max = lim}
#define JU_ENUM(k, s, m, w) \
	{.key = k, .kind = JU_K_ENUM, .off = offsetof(s, m), .words = w}
#define JU_WORD(k, s, m, f, w)                                           \
	{.key = k, .kind = JU_K_WORD, .flags = f, .off = offsetof(s, m), \
	 .words = w}
#define JU_TEXT(k) {.key = k, .kind = JU_K_TEXT}
#define JU_FLD_END {.key = NULL}

/* A `check` for JU_STRCHK rows shared by queues and job requests (PJ-22
** connectivity): "" or full|http|none, optionally followed by #IPv4 or
** #IPv6, in any case as the engine compares them. 1 when s is acceptable
** (NULL counts as ""). JU_IPCONN_EXPECT is the matching `expect` text. */
int ju_ipconn_ok(const char *s);
#define JU_IPCONN_EXPECT \
	"\"\" or full|http|none with an optional #IPv4 or #IPv6"

/*
** Parse the row `d` of object `obj` (at `path`) into base + d->off (and
** base + d->off2 for a list). Absent or null optional fields store the
** default; JU_K_ENUM stores an int, so enum members it writes must be
** int-sized. The field's path ("path.key") is built only for an error
** message, so a valid field costs no string formatting.
*/
int ju_fld_parse(const struct ju_ctx *c, json_t *obj, const char *path,
		 const struct ju_fld *d, void *base);

/*
** The start of every scenario parser: NULL `out` or `c->a` is GB_EINVAL
** "invalid arguments"; `out` (size bytes) is zeroed; a NULL root is
** GB_EMISSING "no scenario". Returns 0 or the error, with c's message.
*/
int ju_scenario_begin(const struct ju_ctx *c, const json_t *root, void *out,
		      size_t size);

/*
** The head every decision scenario shares: "$schema" and "description"
** (free text), "now" (RFC 3339, required) into *now and "seed" (an integer
** >= 0, required) into *seed; any other top-level key must be in `others`
** (NULL-ended), else GB_EINVAL "unknown field". Returns 0 or the error.
*/
int ju_scenario_head(const struct ju_ctx *c, json_t *root,
		     const char *const *others, long long *now,
		     unsigned long long *seed);

/*
** `obj` must be an object whose keys are in table `t` (ended by
** JU_FLD_END) or in `extra` (NULL-ended, may be NULL): any other key is
** GB_EINVAL "unknown field". Then every row of `t` is parsed in order, so
** the first error reported is the first field of the table that is wrong.
** The keys of `t` and `extra` together must be distinct: the unknown-key
** check counts the keys present (one lookup per row) and compares the
** count with the object's size.
*/
int ju_parse_record(const struct ju_ctx *c, json_t *obj, const char *path,
		    const struct ju_fld *t, const char *const *extra,
		    void *base);

/* Parse one element `v` (at `path`; `key` is its map key, NULL in an
** array) into `elem`. */
typedef int (*ju_item_fn)(const struct ju_ctx *c, json_t *v, const char *path,
			  const char *key, void *elem);

/*
** An array (map == 0) or an object (map != 0) of at most `limit` elements
** into an arena array of `size`-byte elements, each parsed by `fn` at
** "path[i]" or path["key"]. Absent or null gives none: *out NULL, *n 0.
** On error *out and *n are not meaningful.
*/
int ju_parse_items(const struct ju_ctx *c, json_t *v, const char *path,
		   int map, size_t limit, size_t size, ju_item_fn fn,
		   void **out, size_t *n);

/* ---- writing ------------------------------------------------------------ */

/* A new JSON string, json null for NULL, or the string "<not UTF-8>" when
** s is not valid UTF-8. NULL only when out of memory. */
json_t *ju_str(const char *s);

/* o[k] = v, stealing v; non-zero when v is NULL or the set failed (v is
** released then too), so results can be OR-ed into one `bad` flag. */
int ju_set(json_t *o, const char *k, json_t *v);

/* Append v to array a, stealing v; non-zero as ju_set. */
int ju_push(json_t *a, json_t *v);

/* {"rule", "code", "detail"} of a reason, detail rendered by
** dec_reason_format. New reference, NULL when out of memory. */
json_t *ju_reason_json(const struct dec_reason *r);

/* {"name", "rule", "in", "out"} of a stage. New reference or NULL. */
json_t *ju_stage_json(const struct dec_stage *s);

/*
** {"name", "weight" (null when dropped or not finite), "stage" (null when
** alive), "reasons" (a dropped candidate's kept reasons), "moreReasons"
** (only when reasons were not kept), "weightDetail"} of candidate c under
** `name`. weightDetail is the wexpl reason when there is one and the
** candidate is alive or `dropped_detail` is set (job brokerage shows what
** a capped queue weighed), else null. New reference or NULL.
*/
json_t *ju_candidate_json(const struct dec_candidate *c, const char *name,
			  int dropped_detail);

#endif
