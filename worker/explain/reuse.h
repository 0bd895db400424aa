/*
** reuse.h — a scenario reader that keeps what did not change (prefix
** exr_): consecutive stored decisions share most of their inputs, so a
** member whose text is the same as the previous scenario's is not parsed
** again.
**
** Why: replay re-decides every stored decision of a window from its
** stored scenario text (store_inputs.h). A job decision on the sample
** grid holds 350 kB of JSON, of which the sw dictionaries (two thirds)
** change only when software is published and most queues' entries only
** when their job counts or ages move; parsing all of it was most of
** replay's time. Two decisions in a row saw mostly the same grid, so the
** grid is versioned here at read time, from the text itself: no second
** stored form that could drift from the scenario the decision stored.
**
** What is reused: a top-level member whose value text is byte for byte
** the previous scenario's value of the same key; and, inside a top-level
** array of at least EXR_ELEMENTS_MIN bytes ("queues", "taskQueues"), an
** element whose text is byte for byte the previous scenario's element at
** the same index. The object exr_load returns is new; the reused members
** and elements are the previous scenario's json_t values (referenced, not
** copied). An element of such an array that is an object with the same
** keys in the same order as the previous element at its index, only some
** of its members' values changed (a queue's ages when `now` moves, its
** job counts when the task is of another share), is a new object whose
** unchanged members are the previous json_t values and whose changed ones
** are parsed from their text. The result is the value json_loads(text,
** 0) gives: reuse is decided by comparing bytes, never by a hash.
**
** Sharing: a reused value is the same json_t in both scenarios. A caller
** that changes a scenario after loading it (exw_apply) changes the
** previous one's value too; that is harmless only when it makes the same
** change to every scenario it loads, as replay's --set does (a set
** replaces a value with the same value the next time). Not thread-safe:
** one reader per thread.
**
** Pure: no I/O, no clock, no globals.
*/
#ifndef GB_EXPLAIN_REUSE_H
#define GB_EXPLAIN_REUSE_H

#include <stddef.h>

#include <jansson.h>

/* Arrays shorter than this (bytes of text) are compared whole only. */
#define EXR_ELEMENTS_MIN 4096

struct exr_reader;

/* What a reader parsed and what it reused, in bytes of text. */
struct exr_stats {
	long long scenarios;      /* exr_load calls that returned a value */
	long long bytes;          /* their text */
	long long bytes_reused;   /* of which taken from the previous one */
	long long fallbacks;      /* texts parsed whole (not an object of
				     plain keys) */
	long long elements_patched; /* elements made from the previous
				       scenario's with members changed */
};

/* A new reader with no previous scenario, or NULL when out of memory. */
struct exr_reader *exr_new(void);

/* Free `r` and its hold on the previous scenario's values (NULL: no-op). */
void exr_free(struct exr_reader *r);

/*
** Parse text[0..len) (a JSON object, as store_inputs.h stores a scenario)
** as json_loadb(text, len, 0) would, reusing the previous call's values
** as described above. Returns a new reference, or NULL with a message in
** err (json_loadb's) when the text is not JSON; after a failure nothing
** is reused by the next call. A text that is not an object of keys
** without escapes is parsed whole (counted in fallbacks).
*/
json_t *exr_load(struct exr_reader *r, const char *text, size_t len,
		 char *err, size_t errlen);

/* What `r` has parsed and reused so far. */
void exr_get_stats(const struct exr_reader *r, struct exr_stats *out);

#endif
