/*
** codec.h — msgpack encoding and validating decoding of gridbroker messages.
**
** Decoding never trusts the input: every field's type and range is checked
** before use, unknown enum words are rejected, arrays and strings have hard
** upper bounds, nesting is limited, and all memory comes from a capped arena.
** A failure names the field and the problem (cod_error), which the worker puts
** in the x-gridbroker-error header of the dead-lettered copy.
**
** Field names are the seeds' (taskID, taskPriority, ioIntensity, ...); see
** schemas/messages/ for one document per message type.
*/
#ifndef GB_CODEC_H
#define GB_CODEC_H

#include <stddef.h>

#include <jansson.h>
#include <msgpack.h>

#include "base/arena.h"
#include "base/limits.h"
#include "decision.h"
#include "taskbroker.h"

#define COD_MAX_DATASETS 1000
#define COD_MAX_STRING GB_MAX_STRING /* base/limits.h */
#define COD_MAX_DEPTH 8

struct cod_error {
	char field[96];   /* e.g. "inputDatasets[2].size" */
	char problem[160]; /* e.g. "expected a number >= 0, got -3" */
};

/*
** Decode a task.broker request into `out`; strings and arrays live in `a`.
** Returns 0, or GB_EDECODE (not msgpack / trailing bytes), GB_ETYPE,
** GB_EMISSING, GB_ERANGE, GB_ETOOBIG, GB_EDUP (a key given twice),
** GB_ENOMEM with `err` filled, or GB_EINVAL when `a` or `out` is NULL.
** `err->field` is "" when the problem is the whole message (not a map,
** trailing bytes). Fields are checked in the order of the message
** contract (taskID, gshare, ...); the first problem found is reported.
*/
int cod_decode_task(const void *buf, size_t len, struct arena *a,
		    struct tb_task *out, struct cod_error *err);

/* Encode a task.broker request (what `gridbroker task submit` sends). */
int cod_encode_task(const struct tb_task *t, msgpack_sbuffer *out);

/* What a task.assigned / task.pending event says. */
struct cod_task_event {
	const char *event;        /* "task.assigned" or "task.pending" */
	long long decision_id;
	const char *request_id;   /* the request's message id */
	const struct tb_task *task;
	const struct tb_nucleus *nuclei; /* the candidates, as decided */
	const struct dec_decision *dec;
	long long decided_at;     /* unix s */
	long long retry_at;       /* unix s when pending, else 0 */
};

/*
** Encode an event: event, decisionId, requestId, taskID, gshare, decidedAt,
** and for assigned: nucleus, weight, jobScope; for pending: retryAfter,
** retryAt; always stages [{name,rule,in,out}], reasons: the histogram
** [{rule, code, count}] (most frequent first) and rejected: up to 50
** [{name, rule, code, detail}].
*/
int cod_encode_task_event(const struct cod_task_event *ev,
			  msgpack_sbuffer *out);

/*
** Pack the three keys every decision event ends with, after the caller's
** own keys (the caller's map header must count them as 3): "stages"
** [{name, rule, in, out}], "reasons", the histogram [{rule, code, count}]
** over every recorded reason of every dropped candidate (most frequent
** first, ties by rule then code), and "rejected", the first 50 dropped
** candidates in candidate order [{name, rule, code, detail}] with their
** first reason rendered. Returns 0, GB_EINVAL (NULL, cands missing) or
** GB_ENOMEM (histogram or buffer allocation failed).
*/
int cod_pack_outcome(msgpack_packer *pk, const struct dec_decision *d);

/*
** Convert any msgpack document to JSON (for printing events and dead
** letters). Binary becomes a base64-free "<N bytes>" string; depth and size
** are bounded. NULL when `buf` is not one complete msgpack object.
*/
json_t *cod_to_json(const void *buf, size_t len);

/* ---- building blocks shared with the other message codecs ------------
** codec_jobs.c, codec_tq.c and codec_panda.c decode and encode with the
** same scanner, field checks, array readers, error wording and event
** start and tail as task.broker, so a producer sees one style of message
** contract and one style of dead-letter reason. */

#if defined(__GNUC__)
#define COD_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define COD_PRINTF(a, b)
#endif

/* Fill `err` (when non-NULL) with `field` and the formatted problem, and
** return `rc`, so a check can `return cod_fail(...)`. */
int cod_fail(struct cod_error *err, int rc, const char *field,
	     const char *fmt, ...) COD_PRINTF(4, 5);

/*
** Check that `buf` holds exactly one well-formed msgpack object, nested at
** most `max_depth` deep with at most `max_values` values (map entries count
** twice), whose object tree would take at most `zone_budget` bytes (0: no
** budget), and only then unpack it into `up` (initialised by the caller,
** who destroys it in every case). Every length header is checked against
** the bytes present before msgpack-c allocates for it. Returns 0,
** GB_EDECODE, GB_ETOOBIG or GB_ENOMEM with `err` naming the path.
*/
int cod_unpack(const void *buf, size_t len, int max_depth, size_t max_values,
	       size_t zone_budget, msgpack_unpacked *up, struct cod_error *err);

/* Copy at most `max` bytes of untrusted text `s` (length `len`, need not
** be NUL-terminated) into `dst` for an error message, with every byte
** outside printable ASCII replaced by '?' and "..." marking a cut; `dst`
** (dstlen > 0) is always NUL-terminated. */
void cod_sanitize(char *dst, size_t dstlen, const char *s, size_t len,
		  size_t max);

/* "null", "boolean", "integer", "float", "string", "array", "map", ... */
const char *cod_type_name(const msgpack_object *o);

/* Typed reads of one value at path `field`. Integers: an int or uint in
** [min, max] (a float is GB_ETYPE even when whole). Numbers: any int or
** float, finite and >= min (min may be -INFINITY). Strings: at most
** COD_MAX_STRING - 1 bytes of UTF-8 without NUL, non-empty if asked,
** copied into `a`. Each returns 0 or GB_ETYPE / GB_ERANGE / GB_ETOOBIG /
** GB_ENOMEM with `err` filled; `*out` is written only on success. */
int cod_get_int(const msgpack_object *o, const char *field, long long min,
		long long max, long long *out, struct cod_error *err);
int cod_get_num(const msgpack_object *o, const char *field, double min,
		double *out, struct cod_error *err);
int cod_get_bool(const msgpack_object *o, const char *field, int *out,
		 struct cod_error *err);
int cod_get_str(const msgpack_object *o, const char *field, int nonempty,
		struct arena *a, const char **out, struct cod_error *err);
/*
** An array of at most `max` elements: *n gets its size. Returns 0, or
** GB_ETYPE ("expected array, got ...") / GB_ETOOBIG ("array of N exceeds
** the limit of MAX") with `err` naming `field`. Checked before anything is
** allocated for the elements, so input sizes never drive allocation.
*/
int cod_get_array(const msgpack_object *o, const char *field, size_t max,
		  size_t *n, struct cod_error *err);

/*
** A string value that must be one of `words` (NULL-terminated, exact
** case). Returns the word's index, or GB_ETYPE / GB_ERANGE ("unknown value
** 'x'; expected <expected>") with `err` naming `field`.
*/
int cod_get_word(const msgpack_object *o, const char *field,
		 const char *const *words, const char *expected,
		 struct cod_error *err);

/* A value and where it was, for finding duplicates by sorting: a request
** may hold thousands of ids, so never n^2. */
struct cod_iref {
	long long v;
	size_t idx;
};

/* Sort tmp[0..n) and report the first pair of equal values in sorted
** order: *first the earlier, *second the later index. 1 when found. */
int cod_find_dup(struct cod_iref *tmp, size_t n, size_t *first,
		 size_t *second);

/*
** The encoder side of the same rules, so an encoder refuses what the
** decoder would: GB_EINVAL when two of the n values are equal, GB_ENOMEM
** when that cannot be checked (the sort needs memory), else 0. Ids are the
** long long at `off` in each of the n structs of `stride` bytes at
** `items`, all of them or only those > 0 (`only_positive`: 0 is an absent
** value); strings are compared byte for byte.
*/
int cod_ids_unique(const void *items, size_t n, size_t stride, size_t off,
		   int only_positive);
int cod_strs_unique(const char *const *s, size_t n);

/* How a field-table row is read. */
enum cod_kind {
	COD_F_LLONG,  /* integer into long long, [imin, imax] */
	COD_F_LONG,   /* integer into long, [imin, imax] */
	COD_F_NUM,    /* finite number into double, >= dmin */
	COD_F_BOOL,   /* boolean into int */
	COD_F_STR,    /* string into const char *, copied to the arena */
	COD_F_CUSTOM, /* `fn` decides (enum words, nested arrays, ...) */
};

/*
** One field of a message map: its key, how to check it and where the value
** goes (an offset into the output struct). A message type is a table of
** these, so every field gets the same checks and the same error wording.
** `fn` (COD_F_CUSTOM only) gets the value, its path, its row and the
** output struct; it returns 0 or an error code after cod_fail().
*/
struct cod_field {
	const char *key;
	enum cod_kind kind;
	int required;  /* else absent or nil keeps the caller's default */
	long long imin, imax;
	double dmin;
	int nonempty;  /* strings */
	size_t off;
	int (*fn)(const msgpack_object *o, const char *field,
		  const struct cod_field *spec, void *base, struct arena *a,
		  struct cod_error *err);
};

#define COD_MAX_FIELDS 48 /* rows per table */

/*
** "path.key" ("key" when path is ""), cut to fit `len` bytes with its NUL,
** as snprintf("%s%s%s") would write it: the name decoders give a field in
** an error. Without snprintf, because every field of every message gets
** one (it was most of a job.submit's decoding time, in a profile).
*/
void cod_path_join(char *dst, size_t len, const char *path, const char *key);

/*
** Decode the map `o` found at `path` ("" for the root, "jobs[3]") into the
** struct at `base` following the `nf` rows of `f`: keys must be strings
** and unique (GB_EDUP names the key), unknown keys are ignored, rows are
** checked in table order and the first problem is reported. Absent or nil
** optional fields leave `base` untouched, so the caller sets defaults
** first. Strings and arrays are copied into `a`. Returns 0 or an error
** code with `err` filled (GB_EINVAL when nf > COD_MAX_FIELDS).
*/
int cod_decode_fields(const msgpack_object *o, const char *path,
		      const struct cod_field *f, size_t nf, void *base,
		      struct arena *a, struct cod_error *err);

/* Rows of a field table (or elements of any array). */
#define COD_NELEM(x) (sizeof(x) / sizeof((x)[0]))

/*
** One message type: how much its tree may hold and the table of its root
** map. `then` (may be NULL) runs after the table was read, on the same
** tree, for rows whose presence depends on another field (job.broker's
** analysis rows); it returns 0 or an error code after cod_fail().
*/
struct cod_msg {
	size_t max_values; /* cod_unpack's bound on values */
	const struct cod_field *f;
	size_t nf;
	int (*then)(const msgpack_object *root, void *base, struct arena *a,
		    struct cod_error *err);
};

/*
** The start of every decoder: clear `err`, refuse a NULL `a` or `out`
** (GB_EINVAL, "no arena or output"; `out` is the caller's output and only
** checked), unpack `buf` with COD_MAX_DEPTH and m->max_values, charging
** the tree against what is left of `a`'s cap, and walk m's table (then
** m->then) into `base`, which the caller filled with its defaults.
** Returns 0 or cod_unpack's / cod_decode_fields' error with `err` filled.
** The tree is gone on return: everything kept was copied into `a`.
*/
int cod_decode_msg(const void *buf, size_t len, struct arena *a,
		   const void *out, const struct cod_msg *m, void *base,
		   struct cod_error *err);

/* A field that no two elements of an array may share (cod_get_maps). */
struct cod_unique {
	const char *key;  /* its row, for the path "field[i].key" */
	const char *what; /* "duplicate <what> (also field[j])" */
	size_t off;       /* where an element holds it */
	int is_str;       /* 1: a const char *; 0: a long long, of which
			     only values > 0 are compared (0: row absent) */
};

#define COD_MAX_UNIQUE 2

/*
** How cod_get_maps reads an array of maps: at most `max` of them (and at
** least one when `what` is not NULL: "expected at least one <what>"),
** each decoded with the `nf` rows of `f` into the next `size` bytes, which
** start as a copy of `init` (NULL: zero) so absent rows keep its values.
** `check` (may be NULL) then looks at each element as soon as it is
** decoded, with its path and the caller's `base`. Last, the `uniq` fields
** must differ between elements; a value twice is GB_EDUP at the later
** element, naming the earlier one (the first pair in sorted order).
*/
struct cod_maps {
	size_t max;
	const char *what;
	const struct cod_field *f;
	size_t nf;
	size_t size;
	const void *init;
	int (*check)(const void *elem, const char *path, void *base,
		     struct cod_error *err);
	struct cod_unique uniq[COD_MAX_UNIQUE];
};

/*
** Read the array of maps `o` at `field` as `m` says. The elements and the
** space to sort their unique fields are allocated in `a` (freed with it)
** before the first element is decoded, sized by the array, which is
** refused first when longer than m->max. *elems gets the elements (NULL
** when the array is empty), *n their number; `base` is passed to
** m->check. Returns 0 or an error code with `err` naming the field.
*/
int cod_get_maps(const msgpack_object *o, const char *field,
		 const struct cod_maps *m, void *base, struct arena *a,
		 void **elems, size_t *n, struct cod_error *err);

/*
** An array of at most `max` non-empty strings (cod_get_str at "field[i]"),
** copied into `a` (freed with it): *v gets them (NULL when the array is
** empty), *n their number. With `dup_what` not NULL a string twice is GB_EDUP at the later
** one, "duplicate <dup_what> (also field[j])". Returns 0 or an error code
** with `err` filled.
*/
int cod_get_strs(const msgpack_object *o, const char *field, size_t max,
		 const char *dup_what, struct arena *a, const char ***v,
		 size_t *n, struct cod_error *err);

/* 1 when cod_get_str would accept `s` (non-NULL, length, UTF-8). */
int cod_str_ok(const char *s, int nonempty);

/* Pack a string; a key and a value (a NULL string packs nil). Each returns
** 0 or msgpack's non-zero write failure. */
int cod_pack_str(msgpack_packer *pk, const char *s);
int cod_pack_kstr(msgpack_packer *pk, const char *k, const char *v);
int cod_pack_kint(msgpack_packer *pk, const char *k, long long v);
int cod_pack_kdbl(msgpack_packer *pk, const char *k, double v);
int cod_pack_kbool(msgpack_packer *pk, const char *k, int v);

/*
** Start an event of `nkeys` keys (these three included) in `out` with
** `pk`: the map header, then event, decisionId and requestId (nil when
** NULL), the keys every decision event begins with, so a consumer finds
** them first whatever the event. Returns 0 or msgpack's non-zero write
** failure.
*/
int cod_pack_event_start(msgpack_packer *pk, msgpack_sbuffer *out,
			 size_t nkeys, const char *event, long long decision_id,
			 const char *request_id);

#endif
