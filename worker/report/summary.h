/*
** summary.h — the counting and the tables of `gridbroker summary`: what a
** grid operator reads after a run (tasks by nucleus, jobs by queue, pilot
** outcomes, the most frequent rejection reasons), built from the grouped
** rows and stored explanations that store_summary.h reads.
**
** No I/O but the FILE the tables are printed to, no allocation: a table
** holds at most SM_MAX_ROWS distinct keys and counts the rest in one
** "other" row, so a grid with more queues than that still prints (the
** largest first) and memory stays fixed.
*/
#ifndef GB_SUMMARY_H
#define GB_SUMMARY_H

#include <stdio.h>

#define SM_MAX_ROWS 512
#define SM_KEY 96

struct sm_row {
	char k1[SM_KEY]; /* "" stands for none (SQL NULL) */
	char k2[SM_KEY];
	long long n;
};

struct sm_table {
	struct sm_row rows[SM_MAX_ROWS];
	size_t nrows;
	long long other; /* counts of keys that found no free row */
	long long total; /* everything added */
};

/* An empty table. */
void sm_init(struct sm_table *t);

/*
** Add `n` to the row (k1, k2); k1 NULL means none. Keys longer than
** SM_KEY - 1 bytes are cut (at a UTF-8 boundary). When the table is full
** a new key's count goes to `other`.
*/
void sm_add(struct sm_table *t, const char *k1, const char *k2, long long n);

/* Sort by count, largest first; equal counts by k1 then k2. */
void sm_sort(struct sm_table *t);

/*
** Count the rejection reasons of one stored explanation (the JSON text of
** decisions.detail or pilot_matches.detail, decrec.h): every object with
** a "rule" inside an array named "reasons", anywhere in the document,
** adds 1 to (rule, code); a truncated record's "rejected" array of
** {rule, code, count} adds each count; a pilot record (it has
** "rejectedBy") adds each stage's cut {rule, code, count}; an older pilot
** record's "rejected" map of filter names to counts adds each count to
** ("pilot filter", name). Returns the number counted, or GB_EDECODE when
** `json` is not JSON (nothing is added then).
*/
long long sm_add_reasons(struct sm_table *t, const char *json);

/*
** Print `t` as a table with one line per k1 and one column per entry of
** `cols` (rows whose k2 is not in `cols` count in a last "other" column
** when `other_col` is set), a TOTAL column, at most `max_lines` lines
** (then a line saying how many more), and a total line. `title1` heads
** the first column; `none` names the rows without k1. The table must be
** sorted (sm_sort) for "largest first".
*/
void sm_print_pivot(FILE *out, const struct sm_table *t, const char *title1,
		    const char *none, const char *const *cols, size_t ncols,
		    int other_col, size_t max_lines);

/*
** Print `t` as a list: one line per row (k1, k2, count) under the headings
** h1, h2 and "COUNT", at most `max_lines` lines, then the share of the
** total each line has.
*/
void sm_print_list(FILE *out, const struct sm_table *t, const char *h1,
		   const char *h2, size_t max_lines);

#endif
