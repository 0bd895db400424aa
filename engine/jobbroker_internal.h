/*
** jobbroker_internal.h — what jobbroker.c (the pipeline, weights and
** distribution) and jobbroker_filters.c (the filter rows PJ-01..PJ-27)
** share, and nothing else includes.
**
** The filter rows read the per-task facts jobbroker.c computes once per
** decision (struct jb_ctx), so the context's layout has to be visible in
** both files; jobbroker.h keeps it opaque for every other module. The
** string helpers are static inline here rather than exported because rows
** use them for every candidate (f_ip splits a queue's wnconnectivity,
** f_status compares its status), and a decision over 1000 queues has a
** 50 us budget: the compiler should be free to inline them in both files
** as it did when they were one.
*/
#ifndef GB_JOBBROKER_INTERNAL_H
#define GB_JOBBROKER_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "jobbroker.h"

/* Rows of jb_filters[] before its NULL terminator; jobbroker_filters.c
** checks the table against it at compile time. A constant (not a sizeof of
** the table) because jobbroker.c sizes its per-row counters with it and
** sees only the table's extern declaration. */
#define JB_NFILTERS 26

/* A piece of a string: the words of "conn#stack" without copying. */
struct jb_word {
	const char *s;
	size_t n;
};

/* Facts of the queue being filtered, computed once before its rows run. */
struct jb_qfacts {
	int associated;  /* PJ-03: at the task's nucleus */
	int preassigned; /* PJ-01: in the pre-assigned list, list in force */
	long cores;      /* PJ-13: cores a job uses on this queue */
};

/* One decision's working context. Filled by jobbroker.c (setup once per
** task, `f` once per queue, `stage` once per row); the filter rows only
** read it. Every pointer borrows the caller's inputs of jb_broker(). */
struct jb_ctx {
	const struct jb_task *t;
	const struct jb_params *p;
	const struct jb_env *env;
	const char *ptype;       /* processing type, never NULL */
	int preassign_active;    /* PJ-01 list in force (PJ-02 not applied) */
	int prio_or_scout;       /* PJ-08 */
	int check_inactive;      /* PJ-09 */
	int scout_or_merge;      /* PJ-20, PJ-25 */
	int express;             /* PJ-27 */
	int links_full;          /* PJ-07 */
	long min_nevents;        /* PJ-17/PJ-21: the smallest job */
	double min_input_mb;
	double disk_mb[2];       /* PJ-17: its disk, [direct_access != 0] */
	struct jb_word ip_conn;  /* PJ-22: the task's ipConnectivity */
	struct jb_word ip_stack;
	struct nw_params nwp;    /* PJ-27, PJ-32 */
	double nw_min;           /* NW_THRESHOLD x NW_WEIGHT_MULTIPLIER */
	struct jb_qfacts f;      /* the current queue */
	const char *stage;       /* the current row's name, for dec_reject */
};

/* fmax and fmin without the library call the compiler keeps for their
** NaN rules (several per queue in the weights and caps): a NaN argument
** gives the other one, and otherwise the result is the C library's on
** x86-64 (maxsd/minsd), `b` for two equal values, so two zeros of
** opposite sign come out with the same sign as before as well. */
static inline double jb_fmax(double a, double b)
{
	return (isnan(b) || a > b) ? a : b;
}

static inline double jb_fmin(double a, double b)
{
	return (isnan(b) || a < b) ? a : b;
}

/* `s`, or "" for NULL: optional strings of the inputs read as empty. */
static inline const char *jb_str_or_empty(const char *s)
{
	return s ? s : "";
}

/* 1 when `s` (NULL reads as "") is the `n` bytes of `lit`, which has no
** NUL among them. Never reads past the end of `s`: its NUL differs from
** every byte of `lit`. Called through JB_STR_IS with a literal, whose
** length the compiler then knows, so the loop unrolls into n byte
** compares where strcmp is a library call for every queue. */
static inline int jb_str_is_n(const char *s, const char *lit, size_t n)
{
	s = jb_str_or_empty(s);
	for (size_t i = 0; i < n; i++)
		if (s[i] != lit[i])
			return 0;
	return s[n] == '\0';
}

/* jb_str_is_n for a string literal `lit` ("" lit refuses anything else). */
#define JB_STR_IS(s, lit) jb_str_is_n((s), "" lit, sizeof(lit) - 1)

/* Split "conn#stack" (either part optional, NULL reads as "") into its two
** words; both point into `s`, which must outlive them. */
static inline void jb_split_ip(const char *s, struct jb_word *conn,
			       struct jb_word *stack)
{
	s = jb_str_or_empty(s);
	const char *hash = strchr(s, '#');
	conn->s = s;
	if (hash == NULL) {
		conn->n = strlen(s);
		stack->s = s + conn->n;
		stack->n = 0;
		return;
	}
	conn->n = (size_t)(hash - s);
	stack->s = hash + 1;
	stack->n = strlen(hash + 1);
}

/*
** Whether filter row `f` (a row of jb_filters[]) can drop anything for the
** task of `ctx` at all; rows that cannot are left out of the per-queue loop.
** Reads ctx's per-task fields only (not `f`/`stage`). Returns 1 or 0.
*/
int jb_row_applies(const struct jb_ctx *ctx, const struct jb_filter *f);

/*
** Run the rows whose bits are set in `rows` (bit r = row r of jb_filters[],
** r < 32) on queue `q`, in table order, with the per-queue facts in ctx->f
** already set; ctx->stage is set to each row's name as it runs. Returns
** the index of the first row that dropped `q` (its reason recorded in
** `c`), or -1 when all kept it.
*/
int jb_filter_queue(struct jb_ctx *ctx, uint32_t rows, const struct jb_queue *q,
		    struct dec_candidate *c);

#endif
