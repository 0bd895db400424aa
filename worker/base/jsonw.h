/*
** jsonw.h — a JSON writer for jansson values that writes the same bytes as
** jansson's json_dumps for the compact flags the decision records use
** (prefix jw_).
**
** Why: every decision is written twice (report/decrec.c): keys sorted with
** 17 digits for its digest, in insertion order with 12 digits for the
** stored record. jansson's writer hands each token to a callback, keeps a
** hashtable of the containers it is inside (keyed by "%p" text, to catch
** cycles) and sorts each object's keys through an array it allocates; for
** a 35 kB record of a job brokerage that was a third of the CPU of a
** replayed decision. This writer walks the tree once into one buffer.
**
** Same bytes, by construction and by test: whatever this writer is not
** sure to write as jansson does (a flag other than JSON_COMPACT,
** JSON_SORT_KEYS, JSON_REAL_PRECISION, JSON_ENCODE_ANY; a string or key
** with a byte above 0x7F, whose UTF-8 jansson checks; a real whose text
** would be longer than jansson's buffer; a locale whose decimal point is
** not '.'; nesting deeper than JW_MAX_DEPTH, which is also where a cycle
** ends) is handed to json_dumps itself. tests/unit/test_jsonw.c compares
** the two on a table of edge cases and on generated trees. The digest of
** a stored record depends on these bytes, so a difference would show as
** every replayed decision differing.
*/
#ifndef GB_JSONW_H
#define GB_JSONW_H

#include <stddef.h>

#include <jansson.h>

/* Nesting this writer follows before leaving a value to jansson. */
#define JW_MAX_DEPTH 256

/*
** `v` serialised as json_dumps(v, flags) would: a malloc'd NUL-terminated
** string for free(), and its length in *len when `len` is not NULL; NULL
** where json_dumps gives NULL (out of memory; a top-level value that is
** not an array or object without JSON_ENCODE_ANY; what jansson refuses).
*/
char *jw_dumps(const json_t *v, size_t flags, size_t *len);

/* Where jw_dump_sink hands the text, a piece at a time: 0 to go on, else
** the dump stops and fails. buf NULL (n 0): forget every piece so far,
** the text is handed again from its start (jansson writes a value this
** writer leaves to it). Also jansson's json_dump_callback_t. */
typedef int (*jw_sink)(const char *buf, size_t n, void *arg);

/* The buffer jw_dump_sink fills before each hand-over. */
#define JW_SINK_BUF 16384

/*
** The text of jw_dumps(v, flags), handed to `sink` in pieces of at most
** JW_SINK_BUF bytes (more for a string longer than that): for a reader of
** the text that needs none of it whole (a hash), so that nothing as large
** as the text is allocated. Returns 0, or -1 where json_dump_callback
** fails or when `sink` does.
*/
int jw_dump_sink(const json_t *v, size_t flags, jw_sink sink, void *arg);

#endif
