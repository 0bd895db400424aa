/*
** cmd_replay.c — `gridbroker replay --since TIME [--until TIME] [--kind K]
** [--set NAME=VALUE ...] [--subject ID ...] [--limit N] [--all-tables]
** [--json]`: re-decide the stored
** decisions of a window offline, from the inputs stored with each
** (store/store_inputs.h), optionally under a change, and say what would
** have gone differently.
**
** Why: an operator who changes a parameter (a disk threshold, a cap, a
** group's share) learns its effect beforehand instead of from complaints;
** and with no change, replay is a differential check of the decision
** path: every stored decision must come out with the digest it was
** stored with (tests/integration/it_replay.sh).
**
** Offline: nothing is published and nothing is written. The window is
** read in batches of ST_IN_SCAN_MAX rows, each one autocommit statement,
** so no transaction or read view is held across the run and the workers
** never wait for it. With no --set a batch brings each decision's inputs
** and the digest stored beside them, not its record (tens of kB, most of
** the database's time): a record is read, once the batch is re-decided,
** only for a decision whose new record is not the one that digest names
** (replay_pending); with --set, where most may differ, the records come
** with the batch; run it with the read-only account's config
** (run/gridbroker-readonly.conf), and the session is also set READ ONLY.
** Each decision is re-decided by explain's ex_run, the same decision path
** the workers and `explain` use, so a rule is fixed in one place.
**
** Threads (--threads, default the CPUs online, at most RP_MAX_THREADS):
** the decision path has no shared state (engine/ has no globals; each
** decision parses its own inputs into its own arena), so the rows of a
** batch are shared out and each thread keeps tallies of its own, added
** together after the batch; the largest changes are ranked by size and
** then by row order, so the report does not depend on the thread count.
*/
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/clock.h"
#include "base/timefmt.h"
#include "base/zbuf.h"
#include "cli/cli.h"
#include "explain/explain.h"
#include "explain/reuse.h"
#include "explain/whatif.h"
#include "gb_error.h"
#include "report/decrec.h"
#include "store/store_inputs.h"

/* Most --set options one replay takes. */
#define RP_MAX_SETS 32
/* --until's default: 9999-12-31T23:59:59Z, the last time tf_format
** writes. */
#define RP_NO_END 253402300799LL
/* The largest changes listed. */
#define RP_TOP 10
/* Most threads one replay runs. */
#define RP_MAX_THREADS 16
/* What one scenario's decision may allocate: as explain's job scenario. */
#define RP_ARENA (512u << 20)

/* The kinds replay reads (the decision_inputs kind column). */
static const char *const rp_kinds[] = {"task", "jobs", "analysis", "pilot",
				       "timeout"};
#define RP_NKINDS (sizeof(rp_kinds) / sizeof(rp_kinds[0]))

/* One change worth listing. */
struct rp_change {
	double size; /* how large: see change_size */
	long long seq; /* the row's place in the window: ties go to the first */
	long long decision_id;
	char kind[16];
	char subject[96];
	char before[160], after[160];
	char why[PATH_MAX + 256];
};

struct rp {
	long long total, done, skipped, differ, outcome_changed,
		chosen_changed;
	long long by_kind[RP_NKINDS];
	json_t *assign_before, *assign_after; /* "kind chosen" -> count */
	json_t *drops_before, *drops_after;   /* rule -> count */
	json_t *skips;                        /* reason -> count */
	struct rp_change top[RP_TOP];
	size_t ntop;
	/* input bytes read (and reused) again by replay_pending: the rows
	** re-read for their record count once in the totals */
	long long bytes_again, reused_again;
	const char *cfg; /* the config replay runs with, for the why lines */
};

static int kind_index(const char *k)
{
	for (size_t i = 0; i < RP_NKINDS; i++)
		if (k && strcmp(k, rp_kinds[i]) == 0)
			return (int)i;
	return -1;
}

static void bump(json_t *o, const char *key, long long by)
{
	if (by == 0)
		return;
	json_t *v = json_object_get(o, key);
	long long n = v ? json_integer_value(v) : 0;
	json_object_set_new(o, key, json_integer(n + by));
}

/* "N/A" for a missing string. */
static const char *s_or(const char *s, const char *none)
{
	return s && s[0] ? s : none;
}

/* A decision record's assignments into `o` under "<kind> <where>": a
** task's nucleus, a job request's queues (by jobs), a pilot's task queue,
** a timeout's action. */
static void count_assign(json_t *o, const char *kind, json_t *rec)
{
	char key[320];
	if (rec == NULL)
		return;
	if (strcmp(kind, "jobs") == 0 || strcmp(kind, "analysis") == 0) {
		size_t i;
		json_t *a;
		json_array_foreach(json_object_get(rec, "assignments"), i, a)
		{
			snprintf(key, sizeof(key), "%s queue %s", kind,
				 s_or(json_string_value(
					      json_object_get(a, "queue")),
				      "?"));
			bump(o, key,
			     json_integer_value(json_object_get(a, "count")));
		}
		return;
	}
	if (strcmp(kind, "task") == 0) {
		const char *n =
			json_string_value(json_object_get(rec, "nucleus"));
		if (n == NULL)
			return;
		snprintf(key, sizeof(key), "task nucleus %s", n);
	} else if (strcmp(kind, "pilot") == 0) {
		json_t *tq = json_object_get(rec, "tq");
		if (!json_is_integer(tq))
			return;
		snprintf(key, sizeof(key), "pilot TQ %lld",
			 (long long)json_integer_value(tq));
	} else {
		const char *act =
			json_string_value(json_object_get(rec, "action"));
		if (act == NULL)
			return;
		snprintf(key, sizeof(key), "timeout %s", act);
	}
	bump(o, key, 1);
}

/* Most (rule, code) pairs one record drops by: a job record over a large
** grid meets most of the job brokerage's rules. */
#define RP_MAX_DROPS 256

/* The candidates each rule dropped in record `rec`, counted as `explain
** --set` counts them (exw_drops_by_rule: each candidate once, for its
** first reason), into `o` by rule, and into `also` too when not NULL. */
static void count_drops(json_t *o, json_t *also, json_t *rec)
{
	if (rec == NULL)
		return;
	struct exw_drop d[RP_MAX_DROPS];
	size_t n = 0;
	if (exw_drops_by_rule(rec, d, RP_MAX_DROPS, &n) != GB_OK &&
	    n == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		bump(o, d[i].rule[0] ? d[i].rule : "?", d[i].count);
		if (also)
			bump(also, d[i].rule[0] ? d[i].rule : "?", d[i].count);
	}
}

static const char *rec_digest(json_t *rec)
{
	return json_string_value(
		json_object_get(json_object_get(rec, "record"), "digest"));
}

/* A record's outcome and where it went, one line: "assigned CERN-PROD". */
static void summarise(char *buf, size_t n, const char *outcome,
		      const char *chosen)
{
	snprintf(buf, n, "%s%s%s", s_or(outcome, "none"),
		 chosen[0] ? " " : "", chosen);
}

/* A record's outcome: its "decision" (assigned, pending, throttled,
** matched, nomatch, a timeout's action); "none" without a record. */
static void rec_outcome(json_t *rec, char *buf, size_t n)
{
	snprintf(buf, n, "%s",
		 rec ? s_or(json_string_value(json_object_get(rec, "decision")),
			    "?")
		     : "none");
}

/* Where a record sent its subject: a task's nucleus, a job request's
** best queue, a pilot's job (with its task queue), a timeout's rule;
** "" for nowhere. */
static void rec_chosen(const char *kind, json_t *rec, char *buf, size_t n)
{
	buf[0] = '\0';
	if (rec == NULL)
		return;
	if (strcmp(kind, "task") == 0) {
		snprintf(buf, n, "%s",
			 s_or(json_string_value(json_object_get(rec, "nucleus")),
			      ""));
	} else if (strcmp(kind, "jobs") == 0 || strcmp(kind, "analysis") == 0) {
		snprintf(buf, n, "%s",
			 s_or(json_string_value(json_array_get(
				      json_object_get(rec, "best"), 0)),
			      ""));
	} else if (strcmp(kind, "pilot") == 0) {
		json_t *j = json_object_get(rec, "job");
		if (json_is_integer(j))
			snprintf(buf, n, "job %lld (TQ %lld)",
				 (long long)json_integer_value(j),
				 (long long)json_integer_value(
					 json_object_get(rec, "tq")));
	} else {
		snprintf(buf, n, "%s",
			 s_or(json_string_value(json_object_get(rec, "rule")),
			      ""));
	}
}

/* How many jobs a job decision placed differently (half the L1 distance
** between the two queue counts), or 0. */
static long long moved_jobs(const char *kind, json_t *a, json_t *b)
{
	if (strcmp(kind, "jobs") != 0 && strcmp(kind, "analysis") != 0)
		return 0;
	json_t *x = json_object(), *y = json_object();
	count_assign(x, kind, a);
	count_assign(y, kind, b);
	long long d = 0;
	const char *k;
	json_t *v;
	json_object_foreach(x, k, v)
	{
		long long m = json_integer_value(json_object_get(y, k));
		long long p = json_integer_value(v);
		d += p > m ? p - m : m - p;
	}
	json_object_foreach(y, k, v)
	{
		if (json_object_get(x, k) == NULL)
			d += json_integer_value(v);
	}
	json_decref(x);
	json_decref(y);
	return d / 2;
}

/* `w` as one shell word: quoted unless it is plain. */
static void shell_word(char *buf, size_t n, const char *w)
{
	if (w[strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			"0123456789_./-+=:,@")] == '\0' && w[0] != '\0') {
		snprintf(buf, n, "%s", w);
		return;
	}
	size_t o = 0;
	if (o + 1 < n)
		buf[o++] = '\'';
	for (const char *c = w; *c && o + 5 < n; c++) {
		if (*c == '\'') {
			memcpy(buf + o, "'\\''", 4);
			o += 4;
		} else {
			buf[o++] = *c;
		}
	}
	if (o + 1 < n)
		buf[o++] = '\'';
	buf[o < n ? o : n - 1] = '\0';
}

/* The `why` command that shows the decision of row `r` (--decision), with
** the config replay ran with (`cfg`; the read-only account reads what
** `why` reads), so that it runs as printed. */
static void why_cmd(char *buf, size_t n, const char *cfg,
		    const struct st_in_row *r, json_t *stored)
{
	char what[160];
	if (strcmp(r->kind, "task") == 0) {
		snprintf(what, sizeof(what), "task %s", s_or(r->subject, "?"));
	} else if (strcmp(r->kind, "pilot") == 0) {
		snprintf(what, sizeof(what), "pilot %s", s_or(r->subject, "?"));
	} else if (strcmp(r->kind, "timeout") == 0) {
		snprintf(what, sizeof(what), "job %s", s_or(r->subject, "?"));
	} else {
		/* a job request: any of its jobs finds it */
		json_t *id = json_array_get(
			json_object_get(json_array_get(json_object_get(
							       stored,
							       "assignments"),
						       0),
					"jobIDs"),
			0);
		if (!json_is_integer(id))
			id = json_array_get(json_object_get(stored,
							    "unassigned"),
					    0);
		if (json_is_integer(id))
			snprintf(what, sizeof(what), "job %lld",
				 (long long)json_integer_value(id));
		else
			snprintf(what, sizeof(what), "job (task %s)",
				 s_or(r->subject, "?"));
	}
	/* this decision, not the subject's latest: a pending task is
	** decided again and again */
	if (r->decision_id > 0)
		snprintf(what + strlen(what), sizeof(what) - strlen(what),
			 " --decision %lld", r->decision_id);
	if (cfg == NULL || cfg[0] == '\0') {
		snprintf(buf, n, "gridbroker why %s", what);
		return;
	}
	char w[PATH_MAX + 64];
	shell_word(w, sizeof(w), cfg);
	snprintf(buf, n, "gridbroker -c %s why %s", w, what);
}

/* 1 when `a` is listed before `b`: larger first, then earlier in the
** window. */
static int ranks_before(const struct rp_change *a, const struct rp_change *b)
{
	return a->size > b->size || (a->size == b->size && a->seq < b->seq);
}

static void keep_top(struct rp *p, const struct rp_change *c)
{
	if (p->ntop == RP_TOP && !ranks_before(c, &p->top[RP_TOP - 1]))
		return;
	size_t at = p->ntop < RP_TOP ? p->ntop++ : RP_TOP - 1;
	p->top[at] = *c;
	/* insertion: largest first, then earliest */
	while (at > 0 && ranks_before(&p->top[at], &p->top[at - 1])) {
		struct rp_change t = p->top[at - 1];
		p->top[at - 1] = p->top[at];
		p->top[at] = t;
		at--;
	}
}

/* Fresh tallies; 0, or GB_ENOMEM. */
static int rp_init(struct rp *p)
{
	memset(p, 0, sizeof(*p));
	p->assign_before = json_object();
	p->assign_after = json_object();
	p->drops_before = json_object();
	p->drops_after = json_object();
	p->skips = json_object();
	return p->assign_before && p->assign_after && p->drops_before &&
			       p->drops_after && p->skips
		       ? GB_OK
		       : GB_ENOMEM;
}

static void rp_fini(struct rp *p)
{
	json_decref(p->assign_before);
	json_decref(p->assign_after);
	json_decref(p->drops_before);
	json_decref(p->drops_after);
	json_decref(p->skips);
}

static void add_counts(json_t *dst, json_t *src)
{
	const char *k;
	json_t *v;
	json_object_foreach(src, k, v)
		bump(dst, k, json_integer_value(v));
}

/* Add a thread's tallies `s` to `d` (the window's total stays d's). */
static void rp_add(struct rp *d, const struct rp *s)
{
	d->done += s->done;
	d->skipped += s->skipped;
	d->differ += s->differ;
	d->outcome_changed += s->outcome_changed;
	d->chosen_changed += s->chosen_changed;
	for (size_t i = 0; i < RP_NKINDS; i++)
		d->by_kind[i] += s->by_kind[i];
	add_counts(d->assign_before, s->assign_before);
	add_counts(d->assign_after, s->assign_after);
	add_counts(d->drops_before, s->drops_before);
	add_counts(d->drops_after, s->drops_after);
	add_counts(d->skips, s->skips);
	for (size_t i = 0; i < s->ntop; i++)
		keep_top(d, &s->top[i]);
}

/* The timeout scenario holds one job; its record is the one whose job is
** that job (none when no rule fires now). */
static const struct ex_record *pick_record(const struct ex_result *res,
					   const char *subject)
{
	if (res->nrecords == 0)
		return NULL;
	if (res->kind != EX_TIMEOUT)
		return &res->records[0];
	long long job = subject ? strtoll(subject, NULL, 10) : 0;
	for (size_t i = 0; i < res->nrecords; i++)
		if (res->records[i].job_id == job)
			return &res->records[i];
	return NULL;
}

/* Most --subject options one replay takes. */
#define RP_MAX_SUBJECTS 256

/* 1 when `r` is about one of subj[0..n) (n == 0: every decision). */
static int wanted(const struct st_in_row *r, const char *const *subj,
		  size_t n)
{
	if (n == 0)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (r->subject && strcmp(r->subject, subj[i]) == 0)
			return 1;
	return 0;
}

/* A decision of `kind` not re-decided, counted by "kind: why". */
static void count_skip(struct rp *p, const char *kind, const char *why)
{
	char sk[96];
	snprintf(sk, sizeof(sk), "%s: %s", s_or(kind, "?"), why);
	p->skipped++;
	bump(p->skips, sk, 1);
}

/* What one thread keeps from one decision to the next: the reader of the
** inputs and the parsed grid (the sw dictionaries, the queues). */
struct rp_keep {
	struct exr_reader *rd;
	struct scj_memo memo;
};

/* Re-decide one stored decision and add it to the tallies; `k` reads its
** inputs and grid, reusing what the thread's previous decision had.
** Returns 0; or 1, counting nothing, when the row came without its record
** (a scan without records) and the new record is not the one its stored
** digest names: the caller reads the record and calls again. */
static int replay_one(struct rp *p, struct rp_keep *k,
		      const struct st_in_row *r, long long seq,
		      const struct exw_set *sets, size_t nsets)
{
	char err[512] = "";
	const char *skip = NULL;
	char *text = NULL;
	json_t *root = NULL, *stored = NULL, *now = NULL;
	struct arena a;
	arena_init(&a, RP_ARENA);
	int ki = kind_index(r->kind);
	if (zb_inflate(r->body, r->len, r->raw, &text) != GB_OK)
		skip = "inputs not inflated";
	else if ((root = exr_load(k->rd, text, r->raw, err, sizeof(err))) ==
		 NULL)
		skip = "inputs not JSON";
	else if (nsets && exw_apply(root, sets, nsets, err, sizeof(err)) !=
				  GB_OK)
		skip = "a --set does not apply";
	free(text);
	struct ex_result res;
	memset(&res, 0, sizeof(res));
	/* Only the records are read: the sw dictionaries need no text; each
	** record is kept as an object too, so it is not parsed back. */
	const struct ex_opts opts = {.no_sw_text = 1, .memo = &k->memo,
				     .keep_json = 1};
	if (skip == NULL &&
	    ex_run_opts(root, &a, &res, err, sizeof(err), &opts) != GB_OK)
		skip = "not re-decided";
	const struct ex_record *x =
		skip ? NULL : pick_record(&res, r->subject);
	if (x != NULL)
		now = x->json ? json_incref(x->json)
			      : json_loads(x->text, 0, NULL);
	if (skip == NULL && x != NULL && now == NULL)
		skip = "record not JSON";
	/* The stored record is parsed only when it is not the new one: the
	** same digest (the new text's, and the stored text's or the digest
	** stored beside the inputs) is the same record. */
	char dg0[65], dg1[65];
	int have1 = skip == NULL && x != NULL &&
		    dr_text_digest(x->text, dg1) == GB_OK;
	int same = have1 && (r->detail ? dr_text_digest(r->detail, dg0) ==
							 GB_OK &&
						 strcmp(dg0, dg1) == 0
				       : r->digest != NULL &&
						 strcmp(r->digest, dg1) == 0);
	if (skip == NULL && !same && r->detail == NULL) {
		ex_result_release(&res);
		json_decref(now);
		json_decref(root);
		arena_free(&a);
		return 1;
	}
	if (same)
		stored = json_incref(now);
	else if (skip == NULL &&
		 (stored = json_loads(s_or(r->detail, "{}"), 0, NULL)) == NULL)
		skip = "stored record not JSON";
	ex_result_release(&res);
	if (skip != NULL) {
		count_skip(p, r->kind, skip);
		goto out;
	}
	p->done++;
	if (ki >= 0)
		p->by_kind[ki]++;
	count_assign(p->assign_before, r->kind, stored);
	count_assign(p->assign_after, r->kind, now);
	/* the same record (no change): its drops counted once, for both */
	count_drops(p->drops_before, stored == now ? p->drops_after : NULL,
		    stored);
	if (stored != now)
		count_drops(p->drops_after, NULL, now);
	const char *d0 = rec_digest(stored), *d1 = rec_digest(now);
	int differs = d0 == NULL || d1 == NULL || strcmp(d0, d1) != 0;
	/* Outcome and choice from the two records alike (the decision rows
	** spell them per table); a timeout with no record now: no rule. */
	char out0[48], out1[48], ch0[96], ch1[96];
	rec_outcome(stored, out0, sizeof(out0));
	rec_outcome(now, out1, sizeof(out1));
	rec_chosen(r->kind, stored, ch0, sizeof(ch0));
	rec_chosen(r->kind, now, ch1, sizeof(ch1));
	int oc = strcmp(out0, out1) != 0;
	int cc = !oc && strcmp(ch0, ch1) != 0;
	long long moved = moved_jobs(r->kind, stored, now);
	if (differs)
		p->differ++;
	if (oc)
		p->outcome_changed++;
	if (cc)
		p->chosen_changed++;
	if (differs) {
		struct rp_change c;
		memset(&c, 0, sizeof(c));
		c.size = (oc ? 1e9 : 0) + (cc ? 1e6 : 0) + (double)moved + 1;
		c.seq = seq;
		c.decision_id = r->decision_id;
		snprintf(c.kind, sizeof(c.kind), "%s", r->kind);
		snprintf(c.subject, sizeof(c.subject), "%s",
			 s_or(r->subject, "?"));
		summarise(c.before, sizeof(c.before), out0, ch0);
		summarise(c.after, sizeof(c.after), out1, ch1);
		if (moved)
			snprintf(c.after + strlen(c.after),
				 sizeof(c.after) - strlen(c.after),
				 " (%lld jobs placed differently)", moved);
		else if (!oc && !cc)
			/* listed for its record: say so, or the line reads
			** as no change at all */
			snprintf(c.after + strlen(c.after),
				 sizeof(c.after) - strlen(c.after),
				 " (same choice; other candidates changed)");
		why_cmd(c.why, sizeof(c.why), p->cfg, r, stored);
		keep_top(p, &c);
	}
out:
	json_decref(now);
	json_decref(stored);
	json_decref(root);
	arena_free(&a);
	return 0;
}

/* Rows a thread takes at a time: consecutive decisions, which share most
** of their inputs (explain/reuse.h). */
#define RP_CHUNK 32

/* A batch of rows, taken RP_CHUNK at a time by every thread. */
struct rp_batch {
	const struct st_in_row *rows;
	size_t n;
	size_t next; /* the next row to take (atomic) */
	long long seq0; /* the first row's place in the window */
	const char *const *subj;
	size_t nsubj;
	const struct exw_set *sets;
	size_t nsets;
	size_t *pend;   /* rows whose stored record is needed (n slots) */
	size_t npend;   /* (atomic) */
};

/* One thread: its tallies over the rows it took, and what it keeps. */
struct rp_share {
	struct rp p;
	struct rp_batch *b;
	struct rp_keep *keep;
	pthread_t th;
};

static void *rp_share_run(void *arg)
{
	struct rp_share *s = arg;
	struct rp_batch *b = s->b;
	for (;;) {
		size_t i0 = __atomic_fetch_add(&b->next, RP_CHUNK,
					       __ATOMIC_RELAXED);
		if (i0 >= b->n)
			break;
		for (size_t i = i0; i < i0 + RP_CHUNK && i < b->n; i++)
			if (wanted(&b->rows[i], b->subj, b->nsubj) &&
			    replay_one(&s->p, s->keep, &b->rows[i],
				       b->seq0 + (long long)i, b->sets,
				       b->nsets) == 1)
				b->pend[__atomic_fetch_add(&b->npend, 1,
							   __ATOMIC_RELAXED)] =
					i;
	}
	return NULL;
}

/* Re-decide a batch with `nth` threads (this one among them), thread t
** keeping keep[t], and add their tallies to `p`; 0, or GB_ENOMEM. */
static int replay_batch(struct rp *p, struct rp_batch *b,
			struct rp_keep *keep, size_t nth)
{
	struct rp_share sh[RP_MAX_THREADS];
	int started[RP_MAX_THREADS] = {0};
	if (nth < 1)
		nth = 1;
	if (nth > RP_MAX_THREADS)
		nth = RP_MAX_THREADS;
	/* A share whose tallies cannot be made is left out: the others take
	** its rows. */
	size_t ok = 0;
	for (; ok < nth; ok++) {
		if (rp_init(&sh[ok].p) != GB_OK) {
			rp_fini(&sh[ok].p);
			break;
		}
		sh[ok].b = b;
		sh[ok].keep = &keep[ok];
		sh[ok].p.cfg = p->cfg;
	}
	if (ok == 0)
		return GB_ENOMEM;
	/* A thread that cannot start leaves its rows to the others. */
	for (size_t t = 1; t < ok; t++)
		started[t] = pthread_create(&sh[t].th, NULL, rp_share_run,
					    &sh[t]) == 0;
	rp_share_run(&sh[0]);
	for (size_t t = 0; t < ok; t++) {
		if (t > 0 && started[t])
			pthread_join(sh[t].th, NULL);
		rp_add(p, &sh[t].p);
		rp_fini(&sh[t].p);
	}
	return GB_OK;
}

/* One batch read from the window: the next one is read on a thread of
** its own while the threads re-decide this one, so the database's time
** and replay's overlap. */
struct rp_read {
	struct st_db *db;
	struct st_in_cursor *cur; /* shared: one read at a time */
	long long until;
	const char *kind;
	int records;              /* read each row's stored record too */
	size_t want;              /* rows asked for; 0: none (the limit) */
	struct arena a;           /* the rows' strings and bodies */
	struct st_in_row rows[ST_IN_SCAN_MAX];
	size_t n;
	int rc;
	pthread_t th;
};

/* How many rows the batch after `seen` rows asks for, under --limit; and
** a fresh arena for them. */
static void read_want(struct rp_read *x, long long limit, long long seen)
{
	x->want = ST_IN_SCAN_MAX;
	if (limit > 0 && limit - seen < (long long)x->want)
		x->want = limit > seen ? (size_t)(limit - seen) : 0;
	x->n = 0;
	x->rc = GB_OK;
	arena_init(&x->a, 1024u << 20);
}

static void *rp_read_run(void *arg)
{
	struct rp_read *x = arg;
	if (x->want > 0)
		x->rc = st_in_scan(x->db, x->cur, x->until, x->kind, x->want,
				   x->records, &x->a, x->rows, &x->n);
	return NULL;
}

/* What one row read again with its record may hold (its inputs and its
** record: a pilot's can be megabytes). */
#define RP_ROW_ARENA (256u << 20)

/* The rows of batch `b` that replay_one gave back for their stored
** record: each read again with it and re-decided, on this thread once
** the batch is done and the connection is free. With no change these are
** the decisions that came out differently (and any stored before the
** digest was kept beside the inputs), so few. Returns 0 or the store's
** error. */
static int replay_pending(struct rp *p, const struct rp_batch *b,
			  struct st_db *db, struct rp_keep *k)
{
	int rc = GB_OK;
	for (size_t i = 0; rc == GB_OK && i < b->npend; i++) {
		const struct st_in_row *r = &b->rows[b->pend[i]];
		struct arena a;
		arena_init(&a, RP_ROW_ARENA);
		struct st_in_row full;
		int found = 0;
		rc = st_in_get(db, r->src, r->decision_id, &a, &full, &found);
		const char *skip = NULL;
		if (rc == GB_OK && !found)
			skip = "deleted while replayed"; /* the retention */
		else if (rc == GB_OK && full.detail == NULL)
			skip = "stored record not JSON";
		else if (rc == GB_OK) {
			struct exr_stats s0, s1;
			exr_get_stats(k->rd, &s0);
			if (replay_one(p, k, &full,
				       b->seq0 + (long long)b->pend[i], b->sets,
				       b->nsets) != 0)
				skip = "stored record not read"; /* not reached */
			exr_get_stats(k->rd, &s1);
			p->bytes_again += s1.bytes - s0.bytes;
			p->reused_again += s1.bytes_reused - s0.bytes_reused;
		}
		if (skip != NULL)
			count_skip(p, r->kind, skip);
		arena_free(&a);
	}
	return rc;
}

/* TIME: RFC 3339, unix seconds, or an age before now: 30m, 6h, 2d. */
static int read_time(const char *w, void *dst)
{
	long long *t = dst;
	char *end = NULL;
	long long v = strtoll(w, &end, 10);
	if (end != w && *end == '\0') {
		*t = v;
		return 0;
	}
	if (end != w && v >= 0 && end[0] && end[1] == '\0' &&
	    strchr("smhd", end[0])) {
		long long mul = end[0] == 's'   ? 1
				: end[0] == 'm' ? 60
				: end[0] == 'h' ? 3600
						: 86400;
		*t = clk_now() - v * mul;
		return 0;
	}
	if (tf_parse(w, t) == GB_OK)
		return 0;
	fprintf(stderr,
		"gridbroker: replay: '%s' is not a time (RFC 3339, unix "
		"seconds, or an age such as 30m, 6h, 2d)\n",
		w);
	return 2;
}

static int read_limit(const char *w, void *dst)
{
	long long *n = dst;
	char *end = NULL;
	*n = strtoll(w, &end, 10);
	if (end == w || *end != '\0' || *n < 0) {
		fprintf(stderr, "gridbroker: replay: --limit takes a count "
				">= 0\n");
		return 2;
	}
	return 0;
}

/* --threads N: 1 .. RP_MAX_THREADS. */
static int read_threads(const char *w, void *dst)
{
	long long *n = dst;
	char *end = NULL;
	*n = strtoll(w, &end, 10);
	if (end == w || *end != '\0' || *n < 1 || *n > RP_MAX_THREADS) {
		fprintf(stderr, "gridbroker: replay: --threads takes 1 to %d\n",
			RP_MAX_THREADS);
		return 2;
	}
	return 0;
}

/* The before/after table of two count objects, as text or JSON. */
static json_t *pairs(json_t *b, json_t *a)
{
	json_t *o = json_object();
	const char *k;
	json_t *v;
	json_object_foreach(b, k, v)
	{
		json_object_set_new(
			o, k,
			json_pack("{s:I,s:I}", "before", json_integer_value(v),
				  "after",
				  json_integer_value(json_object_get(a, k))));
	}
	json_object_foreach(a, k, v)
	{
		if (json_object_get(b, k) == NULL)
			json_object_set_new(o, k,
					    json_pack("{s:i,s:I}", "before",
						      0, "after",
						      json_integer_value(v)));
	}
	return o;
}

static void print_pairs(const char *title, json_t *o, int changed_only)
{
	const char **keys = NULL;
	size_t n = json_object_size(o), k = 0;
	keys = calloc(n ? n : 1, sizeof(*keys));
	if (keys == NULL)
		return;
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v) keys[k++] = key;
	/* names in order: stable output */
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0;
		     j--) {
			const char *t = keys[j];
			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	size_t shown = 0;
	printf("%s\n", title);
	for (size_t i = 0; i < k; i++) {
		json_t *x = json_object_get(o, keys[i]);
		long long b = json_integer_value(json_object_get(x, "before"));
		long long a = json_integer_value(json_object_get(x, "after"));
		if (changed_only && a == b)
			continue;
		printf("  %-44s %8lld -> %-8lld%s\n", keys[i], b, a,
		       a == b ? "" : (a > b ? " +" : " -"));
		shown++;
	}
	if (shown == 0)
		printf("  (none%s)\n", changed_only ? " changed" : "");
	free(keys);
}

static int cmd_replay(struct cli *cli, int argc, char **argv)
{
	long long since = -1, until = -1, limit = 0;
	/* One thread a CPU: the decision path is CPU only. */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	long long threads = ncpu < 1 ? 1 : ncpu > RP_MAX_THREADS ? RP_MAX_THREADS : ncpu;
	const char *kind = NULL;
	const char *setw[RP_MAX_SETS];
	size_t nsetw = 0;
	const char *subj[RP_MAX_SUBJECTS];
	size_t nsubj = 0;
	int as_json = 0, all_rows = 0;
	/* --set and --subject repeat: take them out of argv before the
	** option parser, which keeps the last of a repeated option. */
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));
	if (rest == NULL)
		return 1;
	int nrest = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--set") == 0) {
			if (i + 1 >= argc || nsetw == RP_MAX_SETS) {
				fprintf(stderr,
					"gridbroker: replay: --set needs "
					"NAME=VALUE (at most %d)\n",
					RP_MAX_SETS);
				free(rest);
				return 2;
			}
			setw[nsetw++] = argv[++i];
		} else if (strcmp(argv[i], "--subject") == 0) {
			if (i + 1 >= argc || nsubj == RP_MAX_SUBJECTS) {
				fprintf(stderr,
					"gridbroker: replay: --subject needs "
					"an id (at most %d)\n",
					RP_MAX_SUBJECTS);
				free(rest);
				return 2;
			}
			subj[nsubj++] = argv[++i];
		} else {
			rest[nrest++] = argv[i];
		}
	}
	const struct cli_opt opts[] = {
		CLI_READ("--since", NULL, read_time, &since),
		CLI_READ("--until", NULL, read_time, &until),
		CLI_WORD("--kind", NULL, &kind),
		CLI_FLAG("--json", NULL, &as_json),
		CLI_FLAG("--all-tables", NULL, &all_rows),
		CLI_READ("--limit", NULL, read_limit, &limit),
		CLI_READ("--threads", NULL, read_threads, &threads),
		CLI_OPT_END,
	};
	int nw = cli_parse_opts(nrest, rest, opts, NULL, 0, 0);
	free(rest);
	if (nw < 0)
		return -nw;
	if (since < 0) {
		fprintf(stderr, "gridbroker: replay: --since TIME is "
				"required\n");
		return 2;
	}
	/* No end by default: a worker's clock ahead of this one (or the
	** clock seam) stores decisions "after" now, and they belong in. */
	if (until < 0)
		until = RP_NO_END;
	if (kind != NULL && kind_index(kind) < 0) {
		fprintf(stderr,
			"gridbroker: replay: --kind is one of task, jobs, "
			"analysis, pilot, timeout\n");
		return 2;
	}
	struct exw_set sets[RP_MAX_SETS];
	for (size_t i = 0; i < nsetw; i++) {
		char err[256] = "";
		if (exw_parse_set(setw[i], &sets[i], err, sizeof(err)) !=
		    GB_OK) {
			fprintf(stderr, "gridbroker: replay: --set %s: %s\n",
				setw[i], err);
			return 2;
		}
	}
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	int rc = st_in_read_only(db);
	long long total = 0;
	if (rc == GB_OK)
		rc = st_in_count(db, since, until, kind, &total);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: replay: %s (%s)\n",
			gb_strerror(rc), st_error(db));
		st_close(db);
		return 1;
	}
	if (limit > 0 && total > limit)
		total = limit;
	struct rp p;
	if (rp_init(&p) != GB_OK) {
		fprintf(stderr, "gridbroker: replay: out of memory\n");
		rp_fini(&p);
		st_close(db);
		return 1;
	}
	p.total = total;
	p.cfg = cli->cfg_path;
	/* Every decision allocates and frees a few buffers of hundreds of kB
	** (the inflated scenario, the record's text): above glibc's mmap
	** threshold, each would be mapped, faulted in page by page and
	** unmapped again (a twentieth of replay's time). Replay is a batch
	** command whose memory is bounded by its batches; keep the heap.
	** And no fastbins: freeing such a buffer first consolidates every
	** small chunk in the fastbins, and a decision frees tens of
	** thousands of them (jansson's values); without them, 5 % faster. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_MXFAST, 0);
	/* one reader per thread, kept across batches: a batch's first rows
	** follow the previous batch's last */
	struct rp_keep keep[RP_MAX_THREADS];
	for (long long t = 0; t < threads; t++) {
		keep[t].rd = exr_new();
		if (keep[t].rd == NULL ||
		    scj_memo_init(&keep[t].memo) != GB_OK) {
			exr_free(keep[t].rd);
			scj_memo_fini(&keep[t].memo);
			threads = t;
			break;
		}
	}
	if (threads == 0) {
		fprintf(stderr, "gridbroker: replay: out of memory\n");
		rp_fini(&p);
		st_close(db);
		return 1;
	}
	struct st_in_cursor cur = {since, 0, 0};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double last = 0;
	int tty = isatty(STDERR_FILENO);
	long long seen = 0;
	/* Two batches: the next is read while this one is re-decided. */
	struct rp_read *bat[2] = {calloc(1, sizeof(struct rp_read)),
				  calloc(1, sizeof(struct rp_read))};
	if (bat[0] == NULL || bat[1] == NULL)
		rc = GB_ENOMEM;
	for (int i = 0; i < 2 && rc == GB_OK; i++)
		*bat[i] = (struct rp_read){.db = db, .cur = &cur,
					   .until = until, .kind = kind,
					   .records = nsetw > 0};
	if (rc == GB_OK) {
		read_want(bat[0], limit, 0);
		rp_read_run(bat[0]);
	}
	for (int i = 0; rc == GB_OK; i = 1 - i) {
		struct rp_read *now = bat[i], *next = bat[1 - i];
		size_t n = now->n;
		rc = now->rc;
		int end = rc != GB_OK || n == 0 || n < now->want;
		int ahead = 0, pending = !end;
		if (pending) {
			read_want(next, limit, seen + (long long)n);
			ahead = pthread_create(&next->th, NULL, rp_read_run,
					       next) == 0;
		}
		struct rp_batch b = {now->rows, n, 0, seen,
				     (const char *const *)subj, nsubj,
				     sets, nsetw, NULL, 0};
		if (rc == GB_OK && n > 0) {
			b.pend = malloc(n * sizeof(*b.pend));
			rc = b.pend ? replay_batch(&p, &b, keep, (size_t)threads)
				    : GB_ENOMEM;
		}
		if (ahead)
			pthread_join(next->th, NULL);
		else if (pending)
			rp_read_run(next); /* no thread: read it now */
		if (rc == GB_OK && b.npend > 0)
			rc = replay_pending(&p, &b, db, &keep[0]);
		free(b.pend);
		seen += (long long)n;
		arena_free(&now->a);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double el = (double)(t1.tv_sec - t0.tv_sec) +
			    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		end = end || rc != GB_OK;
		if (el - last >= 1.0 || end) {
			last = el;
			fprintf(stderr,
				"%sreplay: %lld/%lld decisions (%.0f%%), %.0f/s, "
				"%lld differ%s",
				tty ? "\r" : "", seen, p.total,
				p.total ? 100.0 * (double)seen / (double)p.total
					: 100.0,
				el > 0 ? (double)seen / el : 0.0, p.differ,
				tty && !end ? "" : "\n");
		}
		if (end) {
			/* a batch read ahead that will not be re-decided */
			if (pending)
				arena_free(&next->a);
			break;
		}
	}
	free(bat[0]);
	free(bat[1]);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double el = (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: replay: %s (%s)\n",
			gb_strerror(rc), st_error(db));
	}
	st_close(db);
	struct exr_stats rs = {0};
	for (long long t = 0; t < threads; t++) {
		struct exr_stats x;
		exr_get_stats(keep[t].rd, &x);
		rs.bytes += x.bytes;
		rs.bytes_reused += x.bytes_reused;
		exr_free(keep[t].rd);
		scj_memo_fini(&keep[t].memo);
	}
	rs.bytes -= p.bytes_again;
	rs.bytes_reused -= p.reused_again;
	char s0[32] = "", s1[32] = "";
	tf_format(since, s0, sizeof(s0));
	if (until == RP_NO_END)
		snprintf(s1, sizeof(s1), "now");
	else
		tf_format(until, s1, sizeof(s1));
	json_t *assign = pairs(p.assign_before, p.assign_after);
	json_t *drops = pairs(p.drops_before, p.drops_after);
	if (as_json) {
		json_t *o = json_object();
		json_t *js = json_array(), *jk = json_object(),
		       *jt = json_array();
		for (size_t i = 0; i < nsetw; i++)
			json_array_append_new(js, json_string(setw[i]));
		for (size_t i = 0; i < RP_NKINDS; i++)
			json_object_set_new(jk, rp_kinds[i],
					    json_integer(p.by_kind[i]));
		for (size_t i = 0; i < p.ntop; i++)
			json_array_append_new(
				jt, json_pack("{s:I,s:s,s:s,s:s,s:s,s:s}",
					      "decision", p.top[i].decision_id,
					      "kind", p.top[i].kind, "subject",
					      p.top[i].subject, "before",
					      p.top[i].before, "after",
					      p.top[i].after, "why",
					      p.top[i].why));
		json_object_set_new(o, "since", json_string(s0));
		json_object_set_new(o, "until", json_string(s1));
		json_object_set_new(o, "kind", kind ? json_string(kind)
						    : json_null());
		json_object_set_new(o, "sets", js);
		json_object_set_new(o, "decisions", json_integer(p.total));
		json_object_set_new(o, "replayed", json_integer(p.done));
		json_object_set_new(o, "byKind", jk);
		json_object_set_new(o, "skipped", json_integer(p.skipped));
		json_object_set_new(o, "skipReasons", json_incref(p.skips));
		json_object_set_new(o, "digestDiffers", json_integer(p.differ));
		json_object_set_new(o, "outcomeChanged",
				    json_integer(p.outcome_changed));
		json_object_set_new(o, "chosenChanged",
				    json_integer(p.chosen_changed));
		json_object_set_new(o, "assignments", json_incref(assign));
		json_object_set_new(o, "drops", json_incref(drops));
		json_object_set_new(o, "largestChanges", jt);
		json_object_set_new(o, "seconds", json_real(el));
		json_object_set_new(o, "perSecond",
				    json_real(el > 0 ? (double)p.done / el : 0));
		/* how much of the inputs' text was the previous decision's
		** (explain/reuse.h): what makes this window cheap or not */
		json_object_set_new(o, "inputBytes", json_integer(rs.bytes));
		json_object_set_new(o, "inputBytesReused",
				    json_integer(rs.bytes_reused));
		cli_print_json(o, JSON_INDENT(2) | JSON_SORT_KEYS, "{}");
	} else {
		printf("replay of %s .. %s, %s, ", s0, s1,
		       kind ? kind : "every kind");
		if (nsetw == 0)
			printf("no change\n");
		for (size_t i = 0; i < nsetw; i++)
			printf("%s--set %s%s", i ? " " : "", setw[i],
			       i + 1 == nsetw ? "\n" : "");
		printf("  decisions       %lld with stored inputs\n", p.total);
		printf("  re-decided      %lld (", p.done);
		for (size_t i = 0; i < RP_NKINDS; i++)
			printf("%s%s %lld", i ? ", " : "", rp_kinds[i],
			       p.by_kind[i]);
		printf(") in %.1f s, %.0f/s\n", el,
		       el > 0 ? (double)p.done / el : 0.0);
		printf("  inputs          %.1f MB of JSON, %.0f%% the same as "
		       "the previous decision's (not parsed again)\n",
		       (double)rs.bytes / 1e6,
		       rs.bytes ? 100.0 * (double)rs.bytes_reused /
					  (double)rs.bytes
				: 0.0);
		printf("  skipped         %lld", p.skipped);
		const char *k;
		json_t *v;
		json_object_foreach(p.skips, k, v)
		{
			printf(" (%s: %lld)", k, (long long)json_integer_value(v));
		}
		printf("\n  record differs  %lld\n", p.differ);
		printf("  outcome changed %lld\n", p.outcome_changed);
		printf("  chosen changed  %lld (same outcome)\n",
		       p.chosen_changed);
		print_pairs("assignments (before -> after):", assign,
			    nsetw > 0 && !all_rows);
		print_pairs("dropped by rule (before -> after):", drops,
			    nsetw > 0 && !all_rows);
		printf("largest changes:\n");
		if (p.ntop == 0)
			printf("  (none)\n");
		for (size_t i = 0; i < p.ntop; i++)
			printf("  decision %lld (%s %s): %s -> %s\n      %s\n",
			       p.top[i].decision_id, p.top[i].kind,
			       p.top[i].subject, p.top[i].before,
			       p.top[i].after, p.top[i].why);
	}
	json_decref(assign);
	json_decref(drops);
	rp_fini(&p);
	return rc != GB_OK ? 1 : 0;
}

/* clang-format off */
const struct cli_cmd_entry cli_cmd_replay = {"replay", "--since TIME [--until TIME] [--kind task|jobs|analysis|pilot|timeout] [--set NAME=VALUE ...] [--subject ID ...] [--limit N] [--threads N] [--all-tables] [--json]", "re-decide the stored decisions of a window offline from the inputs stored with each (nothing is published or written), optionally under changed parameters, queue/nucleus fields or shares (--set, as explain): decisions whose record, outcome or choice would change, assignments and drops by rule before and after (with --set only the rows that change, unless --all-tables), the ten largest changes with their `why` commands. --subject keeps only the decisions about these ids (a task, a pilot, a timed-out job). TIME: RFC 3339, unix seconds, or an age (30m, 6h, 2d); --until defaults to no end. --threads: decisions re-decided at once (default: the CPUs online). Use the read-only account's config", 1, cmd_replay, NULL};
/* clang-format on */
