/*
** jobbroker.c — production job brokerage (PJ-01..PJ-36, FC-06; RC-* through
** swcheck.c, NW-* through netweight.c).
**
** A decision runs candidate-major: for each queue the rows of jb_filters[]
** run in table order and the first row that rejects drops the queue (one
** reason, the rule ID, a stable code and the numbers compared). A per-row
** drop counter then becomes the PanDA-style stage summary ("150 -> 120
** candidates, 20% cut : memory"). Candidate-major rather than stage-major
** because the per-queue facts (associated with the nucleus, pre-assigned,
** cores) are computed once per queue and stay in cache while every rule
** reads them; a decision over 1000 queues must stay under 100 us. Nothing
** here allocates, formats text per queue or parses per queue what can be
** parsed once per task: the task's ipConnectivity, its smallest job and
** its flags are read once into struct jb_ctx. Rows that cannot drop
** anything for this task (the scout rules for non-scouts, ...) are left out
** of the per-queue loop and show in == out. Queues are validated in the
** same pass, so on GB_EINVAL the outputs hold a partial decision to ignore.
**
** After the filters: weights (PJ-28..PJ-32), the cap filters (PJ-33,
** PJ-34, MIN_WEIGHT), the best JB_BEST_N (PJ-35) and the distribution of
** the jobs by weighted draws whose counts move with every job (PJ-36).
** Each of these is a stage too, so the stage list is one chain where every
** stage's `in` is the previous stage's `out`.
**
** Interpretations (where the seeds are silent or the public code differs):
** - PJ-01: "test" in the name, any case, drops a queue unless it is
**   pre-assigned. With pre-assigned queues (not voided by PJ-02) only those
**   are candidates. A queue counts as pre-assigned only while the
**   pre-assignment is in force: after PJ-02 it is an ordinary queue.
** - PJ-02: the pre-assignment is ignored for merge jobs when it has been
**   skipped for JB_PREASSIGN_GIVEUP_S (since > 0); out->note says so.
** - PJ-03 / FC-06: a queue is associated when its nucleus equals the task's
**   (both non-empty). A nucleus-only (full-chain) task drops the others.
** - PJ-04: only "online" (the public code also takes "standby"; the seed
**   says online and we follow the seed). Pre-assigned queues pass any status.
** - PJ-05/06/07 apply to non-associated queues only: an associated queue is
**   at the nucleus, its "link" is local. PJ-07 in the seed skips all
**   queues; the public code skips the satellites only, and so do we.
** - PJ-10: the policy is a comma-separated list; only "type=X:N%" entries
**   count. X matches a processing type when X is "any", when X equals it,
**   or when X is "evgensimul" and the type is "evgen" or "simul". The most
**   specific matching entry decides (equal > evgensimul > any; the first of
**   equally specific ones); zero share when it says 0% or when type entries
**   exist but none matches. An entry without a readable "N%" gives a share.
** - PJ-13: queue coreCount 0 accepts any task. The cores used for memory,
**   disk and walltime are the queue's coreCount, or the task's on a 0 queue.
** - PJ-14: with no software need (task->sw NULL) every queue passes. A
**   LIST queue needs the task's swVersion in its list; an AUTO queue goes
**   through rc_check(), or is dropped (RC-01 "no_sw") when it publishes no
**   dictionary.
** - PJ-17: outDiskCount per event is in kB: divided by 1000 to get MB.
**   nEvents and the input are those of the task's smallest job (fewest
**   events, first on ties).
** - PJ-22 connectivity table (words compared case-insensitively; a value
**   is "conn#stack" with either part optional):
**       task conn ""      accepted by every queue
**       queue conn full   accepts every task conn
**       queue conn http   accepts task http, none
**       queue conn none   accepts task none
**       queue conn ""     accepts only a task conn ""
**       (another word accepts only the same word)
**       task stack ""     accepted by every queue stack
**       task stack IPv4   needs queue stack IPv4 (IPv6 likewise; a queue
**                         with no stack accepts only tasks with none)
** - PJ-24 compares with the raw running count, PJ-33/34 with PJ-28's.
** - PJ-27: express is processingType containing "urgent" or priority >=
**   1000 (the seed's >=; the public code has > 1000). Only with NW_ACTIVE,
**   as in the public code.
** - PJ-28: the bootstrap terms (nBatchJob, numSlots, starting) apply only up
**   to MAX_PRIO_TO_BOOTSTRAP, as in the public code.
** - PJ-30: manyAssigned = clamp((assigned+1)/(activated+1), 1, 2), the
**   public code's smoothing (the seed's assigned/activated divides by zero
**   on an empty queue).
** - PJ-33/34: cap = max(NQUEUELIMITSITE, 2 x running): the public code's
**   floor; "2 x running" alone would never let an empty queue start.
**   MIN_WEIGHT (off at 0) is reported as rule PJ-35, "below_min_weight".
** - PJ-35: ties in weight keep the lower queue index first.
** - PJ-36: a best queue accepts jobs while activated + starting (+ assigned
**   when its input is not local) < cap; each job raises activated (input
**   local: the job is activated) or assigned (the job waits for its input)
**   and the queue's weight is recomputed from the new counts. A job no best
**   queue accepts stays unassigned; with none assigned the task is pending.
** - A request places at least one job: njobs == 0 is GB_EINVAL.
** - Candidates dropped after weighting (caps, best 10) keep their weight
**   breakdown in wexpl so the explanation can say what they weighed.
*/
#include "jobbroker.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gb_error.h"

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
	struct jb_word ip_conn;  /* PJ-22: the task's ipConnectivity */
	struct jb_word ip_stack;
	struct nw_params nwp;    /* PJ-27, PJ-32 */
	double nw_min;           /* NW_THRESHOLD x NW_WEIGHT_MULTIPLIER */
	struct jb_qfacts f;      /* the current queue */
	const char *stage;       /* the current row's name, for dec_reject */
};

/* ---- small helpers ---------------------------------------------------- */

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

/* Case-insensitive "test" anywhere in s; ASCII only, no locale. */
static int has_test(const char *s)
{
	for (; *s; s++)
		if ((s[0] | 0x20) == 't' && (s[1] | 0x20) == 'e' &&
		    (s[2] | 0x20) == 's' && (s[3] | 0x20) == 't')
			return 1;
	return 0;
}

static int contains(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

static int word_eq(struct jb_word w, const char *lit)
{
	size_t n = strlen(lit);
	return w.n == n && strncasecmp(w.s, lit, n) == 0;
}

static int words_eq(struct jb_word a, struct jb_word b)
{
	return a.n == b.n && strncasecmp(a.s, b.s, a.n) == 0;
}

/* Split "conn#stack" (either part optional) into its two words. */
static void split_ip(const char *s, struct jb_word *conn, struct jb_word *stack)
{
	s = str_or_empty(s);
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

/* PJ-22, the table of the file header, on pre-split words. */
static int ip_words_accept(struct jb_word qc, struct jb_word qs,
			   struct jb_word tc, struct jb_word ts)
{
	int conn_ok;
	if (tc.n == 0 || word_eq(qc, "full"))
		conn_ok = 1;
	else if (word_eq(qc, "http"))
		conn_ok = word_eq(tc, "http") || word_eq(tc, "none");
	else
		conn_ok = qc.n > 0 && words_eq(qc, tc);
	if (!conn_ok)
		return 0;
	return ts.n == 0 || words_eq(qs, ts);
}

/* PJ-03: the queue is associated with the task's nucleus. */
static int is_associated(const struct jb_task *t, const struct jb_queue *q)
{
	/* The first-byte test spares a strcmp call for most satellites. */
	return t->nucleus && t->nucleus[0] && q->nucleus &&
	       q->nucleus[0] == t->nucleus[0] &&
	       strcmp(q->nucleus, t->nucleus) == 0;
}

static int is_preassigned(const struct jb_task *t, const char *name)
{
	for (size_t i = 0; i < t->npreassigned; i++)
		if (strcmp(t->preassigned[i], name) == 0)
			return 1;
	return 0;
}

static void note_append(struct dec_decision *out, const char *fmt, ...)
{
	size_t used = strlen(out->note);
	if (used + 3 >= sizeof(out->note))
		return;
	if (used > 0) {
		memcpy(out->note + used, "; ", 3);
		used += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->note + used, sizeof(out->note) - used, fmt, ap);
	va_end(ap);
}

/* ---- exported pieces -------------------------------------------------- */

double jb_running(const struct jb_queue *q, const struct jb_task *t,
		  const struct jb_params *p)
{
	const struct jb_counts *k = &q->counts;
	double r = k->running;
	if ((double)t->priority > p->max_prio_bootstrap)
		return r; /* bootstrap terms are for low-priority work only */
	if (r < JB_BOOTSTRAP_BATCH_CAP && k->nbatchjob > r)
		r = fmax(r, fmin(k->nbatchjob, JB_BOOTSTRAP_BATCH_CAP));
	if (q->num_slots > 0)
		r = fmax(r, (double)q->num_slots);
	else if (q->num_slots == 0)
		r = fmax(r, k->starting);
	return r;
}

double jb_base_weight(const struct jb_counts *k, double running,
		      int input_local)
{
	if (input_local) /* PJ-29: assigned jobs wait for other data */
		return (running + 1) /
		       (k->activated + k->starting + k->defined + 10);
	double many = fmin(2.0, fmax(1.0, (k->assigned + 1) /
						   (k->activated + 1)));
	return (running + 1) / ((k->activated + k->assigned + k->starting +
				 k->defined + 10) *
				many);
}

double jb_data_factor(double local_gb, double total_gb, long missing_files)
{
	if (!(total_gb > 0))
		return 1.0;
	return (local_gb + total_gb) /
	       (total_gb * ((double)missing_files / 100.0 + 1.0));
}

double jb_memory_mb(const struct jb_task *t, long cores)
{
	return (t->base_ram + t->ram_count * (double)cores) *
	       JB_MEM_COMPENSATION;
}

double jb_disk_mb(const struct jb_task *t, long nevents, double input_mb,
		  int direct_access)
{
	double out = t->out_disk_per_event
			     ? t->out_disk_count * (double)nevents / 1000.0
			     : t->out_disk_count * input_mb;
	return (direct_access ? 0.0 : input_mb) +
	       fmax(JB_MIN_OUT_DISK_MB, out) + t->work_disk_count;
}

double jb_walltime_s(const struct jb_task *t, long nevents, long cores,
		     double corepower)
{
	return t->cpu_time * (double)nevents /
		       ((double)cores * corepower * t->cpu_efficiency / 100.0) +
	       t->base_time;
}

int jb_ip_accepts(const char *queue_wnconn, const char *task_ipconn)
{
	struct jb_word qc, qs, tc, ts;
	split_ip(queue_wnconn, &qc, &qs);
	split_ip(task_ipconn, &tc, &ts);
	return ip_words_accept(qc, qs, tc, ts);
}

/* How specifically the policy word w (length n) names processing type pt:
** 3 equal, 2 the evgensimul group, 1 any, 0 no match. */
static int type_match(const char *w, size_t n, const char *pt)
{
	size_t ptn = strlen(pt);
	if (n == ptn && strncmp(w, pt, n) == 0)
		return 3;
	if (n == 10 && strncmp(w, "evgensimul", 10) == 0 &&
	    (strcmp(pt, "evgen") == 0 || strcmp(pt, "simul") == 0))
		return 2;
	if (n == 3 && strncmp(w, "any", 3) == 0)
		return 1;
	return 0;
}

/* 1 when the entry's ":N%" part reads as zero (digits, all '0', with an
** optional '.'); an entry without a readable share gives a share. */
static int share_is_zero(const char *s, const char *end)
{
	const char *p = memchr(s, ':', (size_t)(end - s));
	int digits = 0;
	for (p = p ? p + 1 : end; p < end && *p != '%'; p++) {
		if (*p != '0' && *p != '.')
			return 0;
		digits += *p == '0';
	}
	return digits > 0;
}

int jb_zero_share(const char *policy, const char *processing_type)
{
	const char *pt = str_or_empty(processing_type);
	int typed = 0, best = 0, zero = 0;
	for (const char *s = str_or_empty(policy); *s;) {
		const char *end = strchr(s, ',');
		if (end == NULL)
			end = s + strlen(s);
		while (s < end && *s == ' ')
			s++;
		if ((size_t)(end - s) > 5 && strncmp(s, "type=", 5) == 0) {
			const char *w = s + 5;
			const char *colon = memchr(w, ':', (size_t)(end - w));
			size_t wn = (size_t)((colon ? colon : end) - w);
			int m = type_match(w, wn, pt);
			typed = 1;
			if (m > best) { /* the most specific entry decides */
				best = m;
				zero = share_is_zero(s, end);
			}
		}
		s = *end ? end + 1 : end;
	}
	return typed && (best == 0 || zero);
}

const char *jb_job_status_name(enum jb_job_status s)
{
	switch (s) {
	case JB_JOB_ASSIGNED:
		return "assigned";
	case JB_JOB_ACTIVATED:
		return "activated";
	case JB_JOB_UNASSIGNED:
		break;
	}
	return "unassigned";
}

void jb_params_resolve(const struct prm_set *set, const char *gshare,
		       struct jb_params *out)
{
	out->nqueued_sat_cap = prm_get(set, "NQUEUED_SAT_CAP");
	out->nqueued_nuc_cap = prm_get(set, "NQUEUED_NUC_CAP_FOR_JOBS");
	out->io_cutoff = prm_get(set, "IO_INTENSITY_CUTOFF");
	out->size_cutoff_move = prm_get(set, "SIZE_CUTOFF_TO_MOVE_INPUT");
	out->num_cutoff_move = prm_get(set, "NUM_CUTOFF_TO_MOVE_INPUT");
	out->max_diskio_default = prm_get(set, "MAX_DISKIO_DEFAULT");
	out->nw_active = prm_get(set, "NW_ACTIVE") != 0;
	out->nw_queue_importance = prm_get(set, "NW_QUEUE_IMPORTANCE");
	out->nw_threshold = prm_get(set, "NW_THRESHOLD");
	out->nw_multiplier = prm_get(set, "NW_WEIGHT_MULTIPLIER");
	out->max_prio_bootstrap = prm_get(set, "MAX_PRIO_TO_BOOTSTRAP");
	out->nqueue_limit = prm_get_sfx(set, "NQUEUELIMITSITE", gshare);
	out->storage_min_free = prm_get(set, "STORAGE_MIN_FREE_SIZE");
	out->min_weight = prm_get_sfx(set, "MIN_WEIGHT", gshare);
}

/* ---- filters (one per row of jb_filters[]) ---------------------------- */

/* PJ-01/PJ-02: test queues and the pre-assigned list. */
static int f_candidates(const struct jb_ctx *ctx, const struct jb_queue *q,
			struct dec_candidate *c)
{
	if (ctx->f.preassigned)
		return 1;
	if (ctx->preassign_active)
		return dec_reject(c, ctx->stage, "PJ-01", "not_preassigned",
				  "not among the %.0f pre-assigned queues",
				  NULL, (double)ctx->t->npreassigned, 0, 0, 0);
	if (has_test(q->name))
		return dec_reject(c, ctx->stage, "PJ-01", "test_queue",
				  "name %s contains 'test'", q->name, 0, 0, 0,
				  0);
	return 1;
}

/* FC-06: a full-chain task on a bare nucleus keeps to the nucleus. */
static int f_full_chain(const struct jb_ctx *ctx, const struct jb_queue *q,
			struct dec_candidate *c)
{
	(void)q;
	if (ctx->t->scope != TB_SCOPE_NUCLEUS_ONLY || ctx->f.associated)
		return 1;
	return dec_reject(c, ctx->stage, "FC-06", "full_chain",
			  "full-chain task uses only queues of nucleus %s",
			  str_or_empty(ctx->t->nucleus), 0, 0, 0, 0);
}

/* PJ-04: online, unless pre-assigned. */
static int f_status(const struct jb_ctx *ctx, const struct jb_queue *q,
		    struct dec_candidate *c)
{
	const char *st = q->status;
	if (ctx->f.preassigned ||
	    (st && st[0] == 'o' && strcmp(st, "online") == 0))
		return 1;
	return dec_reject(c, ctx->stage, "PJ-04", "status",
			  "status %s is not online",
			  q->status ? q->status : "(none)", 0, 0, 0, 0);
}

/* PJ-05: blocked link to the nucleus. */
static int f_link(const struct jb_ctx *ctx, const struct jb_queue *q,
		  struct dec_candidate *c)
{
	if (ctx->f.associated)
		return 1;
	double closeness = q->link ? q->link->closeness : NAN;
	if (!q->link_blocked && closeness != -1)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-05", "link_blocked",
			  "link from %s to the nucleus is blocked "
			  "(closeness %g)",
			  str_or_empty(q->site), closeness, 0, 0, 0);
}

/* PJ-06: too many files queued on the link. */
static int f_link_queue(const struct jb_ctx *ctx, const struct jb_queue *q,
			struct dec_candidate *c)
{
	if (ctx->f.associated || q->link == NULL)
		return 1;
	double nq = q->link->queued_files, cap = ctx->p->nqueued_sat_cap;
	if (!(nq > cap))
		return 1;
	return dec_reject(c, ctx->stage, "PJ-06", "link_unusable",
			  "%.0f files queued on the link > NQUEUED_SAT_CAP "
			  "%.0f",
			  NULL, nq, cap, 0, 0);
}

/* PJ-07: the nucleus is flooded; satellites wait. */
static int f_links_full(const struct jb_ctx *ctx, const struct jb_queue *q,
			struct dec_candidate *c)
{
	(void)q;
	if (!ctx->links_full || ctx->f.associated)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-07", "links_full",
			  "%.0f files queued to the nucleus > "
			  "NQUEUED_NUC_CAP_FOR_JOBS %.0f",
			  NULL, ctx->env->nucleus_queued_files,
			  ctx->p->nqueued_nuc_cap, 0, 0);
}

/* PJ-08: high priority or scouts stay at the nucleus. */
static int f_high_prio(const struct jb_ctx *ctx, const struct jb_queue *q,
		       struct dec_candidate *c)
{
	(void)q;
	if (!ctx->prio_or_scout || ctx->f.associated)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-08", "high_priority",
			  "priority %.0f (>= %.0f) or scout %.0f: only queues "
			  "at the nucleus",
			  NULL, (double)ctx->t->priority, JB_HIGH_PRIO,
			  (double)ctx->t->scout, 0);
}

/* PJ-09: no job started for 2 hours although jobs were activated. */
static int f_inactive(const struct jb_ctx *ctx, const struct jb_queue *q,
		      struct dec_candidate *c)
{
	if (!ctx->check_inactive || !(q->counts.activated > 0))
		return 1;
	if (q->last_start != 0 &&
	    ctx->env->now - q->last_start <= JB_INACTIVE_S)
		return 1;
	if (q->last_start == 0)
		return dec_reject(c, ctx->stage, "PJ-09", "inactive",
				  "no job ever started with %.0f activated",
				  NULL, q->counts.activated, 0, 0, 0);
	return dec_reject(c, ctx->stage, "PJ-09", "inactive",
			  "last job start %.0f s ago > %.0f s with %.0f "
			  "activated",
			  NULL, (double)(ctx->env->now - q->last_start),
			  JB_INACTIVE_S, q->counts.activated, 0);
}

/* PJ-10: the queue's fair-share policy gives the type no share. */
static int f_zero_share(const struct jb_ctx *ctx, const struct jb_queue *q,
			struct dec_candidate *c)
{
	if (q->fairsharepolicy == NULL || q->fairsharepolicy[0] == '\0' ||
	    !jb_zero_share(q->fairsharepolicy, ctx->ptype))
		return 1;
	return dec_reject(c, ctx->stage, "PJ-10", "zeroshare",
			  "fairsharepolicy '%s' gives the processing type no "
			  "share",
			  q->fairsharepolicy, 0, 0, 0, 0);
}

/* PJ-11: IO-intensive tasks do not move much input. */
static int f_move_input(const struct jb_ctx *ctx, const struct jb_queue *q,
			struct dec_candidate *c)
{
	const struct jb_params *p = ctx->p;
	if (!(ctx->t->io_intensity > p->io_cutoff))
		return 1;
	if (!(q->missing_size < p->size_cutoff_move))
		return dec_reject(c, ctx->stage, "PJ-11", "io",
				  "%.4g GB of input to move >= "
				  "SIZE_CUTOFF_TO_MOVE_INPUT %.4g GB "
				  "(ioIntensity %.0f kB/s)",
				  NULL, q->missing_size, p->size_cutoff_move,
				  ctx->t->io_intensity, 0);
	if (!((double)q->missing_files < p->num_cutoff_move))
		return dec_reject(c, ctx->stage, "PJ-11", "io",
				  "%.0f files to move >= "
				  "NUM_CUTOFF_TO_MOVE_INPUT %.0f "
				  "(ioIntensity %.0f kB/s)",
				  NULL, (double)q->missing_files,
				  p->num_cutoff_move, ctx->t->io_intensity, 0);
	return 1;
}

/* PJ-12: an IO-saturated queue refuses IO-heavy tasks. */
static int f_diskio(const struct jb_ctx *ctx, const struct jb_queue *q,
		    struct dec_candidate *c)
{
	double limit = isfinite(q->max_diskio) ? q->max_diskio
					       : ctx->p->max_diskio_default;
	if (!(q->diskio_avg > limit && ctx->t->diskio > limit))
		return 1;
	return dec_reject(c, ctx->stage, "PJ-12", "diskIO",
			  "task diskIO %g and queue average %g kB/s/core > "
			  "limit %g",
			  NULL, ctx->t->diskio, q->diskio_avg, limit, 0);
}

/* PJ-13: core count matching. */
static int f_cores(const struct jb_ctx *ctx, const struct jb_queue *q,
		   struct dec_candidate *c)
{
	const struct jb_task *t = ctx->t;
	double qc = (double)q->core_count;
	if (q->core_count == 0)
		return 1;
	if (t->max_core_count > 0 && q->core_count > t->max_core_count)
		return dec_reject(c, ctx->stage, "PJ-13", "max_cpucore",
				  "queue coreCount %.0f > task maxCoreCount "
				  "%.0f",
				  NULL, qc, (double)t->max_core_count, 0, 0);
	if ((t->core_count == 1 && q->core_count > 1) ||
	    (t->core_count > 1 && q->core_count == 1))
		return dec_reject(c, ctx->stage, "PJ-13", "cpucore",
				  "queue coreCount %.0f does not fit task "
				  "coreCount %.0f",
				  NULL, qc, (double)t->core_count, 0, 0);
	return 1;
}

/* PJ-14: release/cache availability, RC-* for AUTO queues. */
static int f_software(const struct jb_ctx *ctx, const struct jb_queue *q,
		      struct dec_candidate *c)
{
	const struct rc_need *need = ctx->t->sw;
	if (need == NULL || q->releases == JB_REL_ANY)
		return 1;
	if (q->releases == JB_REL_LIST) {
		const char *v = str_or_empty(need->sw_version);
		for (size_t i = 0; i < q->nrelease_list; i++)
			if (strcmp(q->release_list[i], v) == 0)
				return 1;
		return dec_reject(c, ctx->stage, "PJ-14", "cache",
				  "release %s not among the queue's %.0f "
				  "releases",
				  v, (double)q->nrelease_list, 0, 0, 0);
	}
	if (q->sw == NULL)
		return dec_reject(c, ctx->stage, "RC-01", "no_sw",
				  "releases AUTO but no software published",
				  NULL, 0, 0, 0, 0);
	return rc_check(need, q->sw, ctx->env->all_sw, c, ctx->stage);
}

/* PJ-15: memory within [minrss, maxrss] x cores. */
static int f_memory(const struct jb_ctx *ctx, const struct jb_queue *q,
		    struct dec_candidate *c)
{
	double cores = (double)ctx->f.cores;
	double mem = jb_memory_mb(ctx->t, ctx->f.cores);
	if (q->max_rss_per_core > 0 && mem > q->max_rss_per_core * cores)
		return dec_reject(c, ctx->stage, "PJ-15", "highmemory",
				  "memory %g MB > maxrss %g MB (%g cores)",
				  NULL, mem, q->max_rss_per_core * cores,
				  cores, 0);
	if (q->min_rss_per_core > 0 && mem < q->min_rss_per_core * cores)
		return dec_reject(c, ctx->stage, "PJ-15", "lowmemory",
				  "memory %g MB < minrss %g MB (%g cores)",
				  NULL, mem, q->min_rss_per_core * cores,
				  cores, 0);
	return 1;
}

/* PJ-16: direct-access-only tasks need direct access. */
static int f_direct(const struct jb_ctx *ctx, const struct jb_queue *q,
		    struct dec_candidate *c)
{
	if (!ctx->t->direct_access_only || q->direct_access)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-16", "remoteio",
			  "task reads input directly, queue has no direct "
			  "access",
			  NULL, 0, 0, 0, 0);
}

/* PJ-17: scratch disk of the smallest job. */
static int f_disk(const struct jb_ctx *ctx, const struct jb_queue *q,
		  struct dec_candidate *c)
{
	if (!(q->maxwdir > 0))
		return 1;
	double disk = jb_disk_mb(ctx->t, ctx->min_nevents, ctx->min_input_mb,
				 q->direct_access);
	double limit = q->maxwdir / (double)ctx->f.cores;
	if (disk < limit)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-17", "disk",
			  "disk %g MB >= maxwdir %g MB / %g cores",
			  NULL, disk, q->maxwdir, (double)ctx->f.cores, 0);
}

/* PJ-18: free space at the queue's storage. */
static int f_space(const struct jb_ctx *ctx, const struct jb_queue *q,
		   struct dec_candidate *c)
{
	double min = ctx->p->storage_min_free;
	if (q->storage_free > min)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-18", "space",
			  "%s: %.0f GB free <= STORAGE_MIN_FREE_SIZE %.0f GB",
			  str_or_empty(q->storage), q->storage_free, min, 0, 0);
}

/* PJ-19: blacklisted storage endpoint. */
static int f_blacklist(const struct jb_ctx *ctx, const struct jb_queue *q,
		       struct dec_candidate *c)
{
	if (!q->storage_blacklisted)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-19", "blacklist",
			  "storage %s is blacklisted",
			  str_or_empty(q->storage), 0, 0, 0, 0);
}

/* PJ-20: scouts and merges need a long enough maxtime. */
static int f_scout_wall(const struct jb_ctx *ctx, const struct jb_queue *q,
			struct dec_candidate *c)
{
	if (!ctx->scout_or_merge || !(q->maxtime > 0) ||
	    !(q->maxtime < JB_SCOUT_MIN_MAXTIME_S))
		return 1;
	return dec_reject(c, ctx->stage, "PJ-20", "scout_walltime",
			  "maxtime %.0f s < %.0f s for scout or merge jobs",
			  NULL, q->maxtime, JB_SCOUT_MIN_MAXTIME_S, 0, 0);
}

/* PJ-21: walltime of the smallest job within [mintime, maxtime]. */
static int f_walltime(const struct jb_ctx *ctx, const struct jb_queue *q,
		      struct dec_candidate *c)
{
	if (!(q->maxtime > 0) && !(q->mintime > 0))
		return 1;
	double wall = jb_walltime_s(ctx->t, ctx->min_nevents, ctx->f.cores,
				    q->corepower);
	if (q->maxtime > 0 && wall > q->maxtime)
		return dec_reject(c, ctx->stage, "PJ-21", "longwalltime",
				  "walltime %.0f s > maxtime %.0f s "
				  "(%.0f events, %.0f cores)",
				  NULL, wall, q->maxtime,
				  (double)ctx->min_nevents,
				  (double)ctx->f.cores);
	if (q->mintime > 0 && wall < q->mintime)
		return dec_reject(c, ctx->stage, "PJ-21", "shortwalltime",
				  "walltime %.0f s < mintime %.0f s "
				  "(%.0f events, %.0f cores)",
				  NULL, wall, q->mintime,
				  (double)ctx->min_nevents,
				  (double)ctx->f.cores);
	return 1;
}

/* PJ-22: worker-node connectivity. */
static int f_ip(const struct jb_ctx *ctx, const struct jb_queue *q,
		struct dec_candidate *c)
{
	if (ctx->ip_conn.n == 0 && ctx->ip_stack.n == 0)
		return 1; /* the task asks nothing: every queue accepts it */
	struct jb_word qc, qs;
	split_ip(q->wnconnectivity, &qc, &qs);
	if (ip_words_accept(qc, qs, ctx->ip_conn, ctx->ip_stack))
		return 1;
	return dec_reject(c, ctx->stage, "PJ-22", "network",
			  "wnconnectivity '%s' does not accept the task's "
			  "ipConnectivity",
			  str_or_empty(q->wnconnectivity), 0, 0, 0, 0);
}

/* PJ-23: event service and dynamic number of events. */
static int f_es(const struct jb_ctx *ctx, const struct jb_queue *q,
		struct dec_candidate *c)
{
	const struct jb_task *t = ctx->t;
	if (t->use_es && q->es == JB_ES_NONE)
		return dec_reject(c, ctx->stage, "PJ-23", "es",
				  "event service task, queue runs none", NULL,
				  0, 0, 0, 0);
	if (!t->use_es && q->es == JB_ES_ONLY)
		return dec_reject(c, ctx->stage, "PJ-23", "nones",
				  "queue runs event service jobs only", NULL,
				  0, 0, 0, 0);
	if (t->dynamic_nevents && !q->dynamic_nevents)
		return dec_reject(c, ctx->stage, "PJ-23", "dynamic_nevents",
				  "task uses a dynamic number of events, queue "
				  "does not support it",
				  NULL, 0, 0, 0, 0);
	return 1;
}

/* PJ-24: too many transferring jobs. */
static int f_transferring(const struct jb_ctx *ctx, const struct jb_queue *q,
			  struct dec_candidate *c)
{
	double limit = q->transferring_limit > 0 ? q->transferring_limit
						 : JB_TRANSFERRING_LIMIT;
	double cap = fmax(limit, 2 * q->counts.running);
	if (!(q->counts.transferring > cap))
		return 1;
	return dec_reject(c, ctx->stage, "PJ-24", "transferring",
			  "%.0f transferring > max(limit %.0f, 2 x running "
			  "%.0f)",
			  NULL, q->counts.transferring, limit,
			  q->counts.running, 0);
}

/* PJ-25: t1Weight -1 keeps normal jobs at the nucleus. */
static int f_t1weight(const struct jb_ctx *ctx, const struct jb_queue *q,
		      struct dec_candidate *c)
{
	(void)q;
	if (ctx->t->t1_weight != -1 || ctx->scout_or_merge ||
	    ctx->f.associated)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-25", "t1weight",
			  "t1Weight %g: only queues at the nucleus", NULL,
			  ctx->t->t1_weight, 0, 0, 0);
}

/* PJ-26: no pilot for 3 hours. */
static int f_pilot(const struct jb_ctx *ctx, const struct jb_queue *q,
		   struct dec_candidate *c)
{
	if (q->last_pilot == 0)
		return dec_reject(c, ctx->stage, "PJ-26", "nopilot",
				  "no pilot ever", NULL, 0, JB_NOPILOT_S, 0,
				  0);
	double age = (double)(ctx->env->now - q->last_pilot);
	if (age <= JB_NOPILOT_S)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-26", "nopilot",
			  "last pilot %.0f s ago > %.0f s", NULL, age,
			  JB_NOPILOT_S, 0, 0);
}

/* PJ-27: express tasks need a good network weight. */
static int f_network(const struct jb_ctx *ctx, const struct jb_queue *q,
		     struct dec_candidate *c)
{
	if (!ctx->express || !ctx->p->nw_active)
		return 1;
	struct nw_weight nw;
	nw_compute(q->link, ctx->f.associated, &ctx->nwp, &nw);
	if (nw.weight >= ctx->nw_min)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-27", "lowNetworkWeight",
			  "network weight %.3g < NW_THRESHOLD x "
			  "NW_WEIGHT_MULTIPLIER %.3g (express)",
			  NULL, nw.weight, ctx->nw_min, 0, 0);
}

/* clang-format off */
const struct jb_filter jb_filters[] = {
	{"candidates",      "PJ-01", f_candidates},
	{"full chain",      "FC-06", f_full_chain},
	{"status",          "PJ-04", f_status},
	{"link blocked",    "PJ-05", f_link},
	{"link queue",      "PJ-06", f_link_queue},
	{"links full",      "PJ-07", f_links_full},
	{"high priority",   "PJ-08", f_high_prio},
	{"inactive",        "PJ-09", f_inactive},
	{"zero share",      "PJ-10", f_zero_share},
	{"move input",      "PJ-11", f_move_input},
	{"disk io",         "PJ-12", f_diskio},
	{"core count",      "PJ-13", f_cores},
	{"software",        "PJ-14", f_software},
	{"memory",          "PJ-15", f_memory},
	{"direct access",   "PJ-16", f_direct},
	{"disk",            "PJ-17", f_disk},
	{"space",           "PJ-18", f_space},
	{"blacklist",       "PJ-19", f_blacklist},
	{"scout walltime",  "PJ-20", f_scout_wall},
	{"walltime",        "PJ-21", f_walltime},
	{"ip connectivity", "PJ-22", f_ip},
	{"event service",   "PJ-23", f_es},
	{"transferring",    "PJ-24", f_transferring},
	{"t1 weight",       "PJ-25", f_t1weight},
	{"pilot",           "PJ-26", f_pilot},
	{"network",         "PJ-27", f_network},
	{NULL, NULL, NULL},
};
/* clang-format on */

#define JB_NFILTERS (sizeof(jb_filters) / sizeof(jb_filters[0]) - 1)

/*
** Whether a row can drop anything for this task at all. Rows that cannot
** (a rule for scouts when the jobs are not scouts, ...) are left out of
** the per-queue loop: they keep every queue, in == out, and skipping them
** saves a third of the calls for a typical task.
*/
static int row_applies(const struct jb_ctx *ctx, const struct jb_filter *f)
{
	const struct jb_task *t = ctx->t;
	if (f->fn == f_full_chain)
		return t->scope == TB_SCOPE_NUCLEUS_ONLY;
	if (f->fn == f_links_full)
		return ctx->links_full;
	if (f->fn == f_high_prio)
		return ctx->prio_or_scout;
	if (f->fn == f_inactive)
		return ctx->check_inactive;
	if (f->fn == f_move_input)
		return t->io_intensity > ctx->p->io_cutoff;
	if (f->fn == f_software)
		return t->sw != NULL;
	if (f->fn == f_direct)
		return t->direct_access_only;
	if (f->fn == f_scout_wall)
		return ctx->scout_or_merge;
	if (f->fn == f_ip)
		return ctx->ip_conn.n > 0 || ctx->ip_stack.n > 0;
	if (f->fn == f_t1weight)
		return t->t1_weight == -1 && !ctx->scout_or_merge;
	if (f->fn == f_network)
		return ctx->express && ctx->p->nw_active;
	return 1;
}

/* ---- weights ---------------------------------------------------------- */

/* The pieces of one queue's weight (PJ-28..PJ-32). */
struct jb_wparts {
	double running; /* PJ-28 */
	double base;    /* PJ-29/30 */
	double data;    /* PJ-31 */
	double nw;      /* PJ-32, reported even when not applied */
	double mult;    /* data x (nw when NW_ACTIVE) */
	double weight;
	int input_local;
};

static void weigh(const struct jb_ctx *ctx, const struct jb_queue *q,
		  int associated, struct jb_wparts *w)
{
	struct nw_weight nw;
	w->running = jb_running(q, ctx->t, ctx->p);
	w->input_local = q->missing_files == 0;
	w->base = jb_base_weight(&q->counts, w->running, w->input_local);
	w->data = jb_data_factor(q->local_size, ctx->t->total_input_gb,
				 q->missing_files);
	nw_compute(q->link, associated, &ctx->nwp, &nw);
	w->nw = nw.weight;
	w->mult = w->data * (ctx->p->nw_active ? w->nw : 1.0);
	w->weight = w->base * w->mult;
}

static void explain_weight(const struct jb_ctx *ctx,
			   const struct jb_wparts *w, struct dec_reason *r)
{
	memset(r, 0, sizeof(*r));
	r->rule = "PJ-30";
	r->code = "weight";
	r->fmt = ctx->p->nw_active
			 ? "(running+1)/(queued+10)/manyAssigned %.4g x data "
			   "%.4g x network %.4g = %.4g"
			 : "(running+1)/(queued+10)/manyAssigned %.4g x data "
			   "%.4g (network %.4g, not applied) = %.4g";
	r->v[0] = w->base;
	r->v[1] = w->data;
	r->v[2] = w->nw;
	r->v[3] = w->weight;
}

/* The per-queue cap of PJ-33/PJ-34/PJ-36. */
static double queue_cap(const struct jb_params *p, double running)
{
	return fmax(p->nqueue_limit, 2 * running);
}

/* ---- validation ------------------------------------------------------- */

/* Finite and >= 0; two comparisons, both false for NaN. */
static inline int nonneg(double x)
{
	return x >= 0 && x <= DBL_MAX;
}

static int counts_valid(const struct jb_counts *k)
{
	return nonneg(k->running) && nonneg(k->defined) &&
	       nonneg(k->assigned) && nonneg(k->activated) &&
	       nonneg(k->starting) && nonneg(k->transferring) &&
	       nonneg(k->nbatchjob);
}

static int queue_valid(const struct jb_queue *q)
{
	if (q->name == NULL || q->core_count < 0 || !nonneg(q->corepower) ||
	    q->corepower == 0 || !nonneg(q->min_rss_per_core) ||
	    !nonneg(q->max_rss_per_core) || !nonneg(q->maxwdir) ||
	    !nonneg(q->mintime) || !nonneg(q->maxtime) ||
	    (q->nrelease_list > 0 && q->release_list == NULL) ||
	    (unsigned)q->releases > JB_REL_LIST ||
	    (unsigned)q->es > JB_ES_ONLY ||
	    (!isnan(q->max_diskio) && !(q->max_diskio >= 0)) ||
	    !nonneg(q->diskio_avg) || !nonneg(q->transferring_limit) ||
	    q->num_slots < -1 || !isfinite(q->storage_free) ||
	    !nonneg(q->local_size) || !nonneg(q->missing_size) ||
	    q->missing_files < 0 || q->last_pilot < 0 || q->last_start < 0 ||
	    !counts_valid(&q->counts))
		return 0;
	for (size_t i = 0; i < q->nrelease_list; i++)
		if (q->release_list[i] == NULL)
			return 0;
	return 1;
}

static int task_valid(const struct jb_task *t)
{
	if (!nonneg(t->io_intensity) || !nonneg(t->diskio) ||
	    t->core_count < 1 || t->max_core_count < 0 ||
	    !nonneg(t->base_ram) || !nonneg(t->ram_count) ||
	    !nonneg(t->out_disk_count) || !nonneg(t->work_disk_count) ||
	    !nonneg(t->cpu_time) || !isfinite(t->cpu_efficiency) ||
	    !(t->cpu_efficiency > 0) || t->cpu_efficiency > 100 ||
	    !nonneg(t->base_time) || !isfinite(t->t1_weight) ||
	    !nonneg(t->total_input_gb) || t->njobs == 0 || t->jobs == NULL ||
	    (t->npreassigned > 0 && t->preassigned == NULL) ||
	    t->preassign_skipped_since < 0 || (unsigned)t->scope > 1)
		return 0;
	for (size_t i = 0; i < t->npreassigned; i++)
		if (t->preassigned[i] == NULL)
			return 0;
	for (size_t i = 0; i < t->njobs; i++) {
		const struct jb_job *j = &t->jobs[i];
		if (j->nevents < 0 || !nonneg(j->input_mb) ||
		    j->input_files < 0)
			return 0;
	}
	return 1;
}

static int params_valid(const struct jb_params *p)
{
	/* Compared only; NaN would make every comparison silently false. */
	return !isnan(p->nqueued_sat_cap) && !isnan(p->nqueued_nuc_cap) &&
	       !isnan(p->io_cutoff) && !isnan(p->size_cutoff_move) &&
	       !isnan(p->num_cutoff_move) && !isnan(p->max_diskio_default) &&
	       nonneg(p->nw_queue_importance) && !isnan(p->nw_threshold) &&
	       !isnan(p->nw_multiplier) && !isnan(p->max_prio_bootstrap) &&
	       nonneg(p->nqueue_limit) && !isnan(p->storage_min_free) &&
	       !isnan(p->min_weight);
}

/* ---- the pipeline ----------------------------------------------------- */

static void setup_ctx(struct jb_ctx *ctx, const struct jb_task *t,
		      const struct jb_params *p, const struct jb_env *env,
		      struct dec_decision *out)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->t = t;
	ctx->p = p;
	ctx->env = env;
	ctx->ptype = str_or_empty(t->processing_type);
	ctx->prio_or_scout = t->priority >= JB_HIGH_PRIO || t->scout;
	ctx->check_inactive = ctx->prio_or_scout || t->merge || t->premerged;
	ctx->scout_or_merge = t->scout || t->merge;
	ctx->express = contains(ctx->ptype, "urgent") ||
		       t->priority >= JB_EXPRESS_PRIO;
	ctx->links_full = env->nucleus_queued_files > p->nqueued_nuc_cap;
	split_ip(t->ip_connectivity, &ctx->ip_conn, &ctx->ip_stack);
	ctx->nwp.nqueued_sat_cap = p->nqueued_sat_cap;
	ctx->nwp.queue_importance = p->nw_queue_importance;
	ctx->nw_min = p->nw_threshold * p->nw_multiplier;

	/* PJ-17/PJ-21 look at the smallest job (fewest events, first wins). */
	size_t small = 0;
	for (size_t i = 1; i < t->njobs; i++)
		if (t->jobs[i].nevents < t->jobs[small].nevents)
			small = i;
	ctx->min_nevents = t->jobs[small].nevents;
	ctx->min_input_mb = t->jobs[small].input_mb;

	/* PJ-02: merge jobs give up a pre-assignment skipped for a day. */
	ctx->preassign_active = t->npreassigned > 0;
	if (ctx->preassign_active && t->merge &&
	    t->preassign_skipped_since > 0 &&
	    env->now - t->preassign_skipped_since >= JB_PREASSIGN_GIVEUP_S) {
		ctx->preassign_active = 0;
		note_append(out, "PJ-02: pre-assignment ignored, skipped for "
				 "%lld h",
			    (env->now - t->preassign_skipped_since) / 3600);
	}
}

static void queue_facts(struct jb_ctx *ctx, const struct jb_queue *q)
{
	ctx->f.associated = is_associated(ctx->t, q);
	ctx->f.preassigned = ctx->preassign_active &&
			     is_preassigned(ctx->t, q->name);
	ctx->f.cores = q->core_count > 0 ? q->core_count : ctx->t->core_count;
}

/* Insert queue i into the best list (weight descending, index ascending). */
static void best_insert(const struct dec_candidate *cands, long *best,
			size_t *nbest, long i)
{
	double w = cands[i].weight;
	size_t pos = *nbest;
	/* Strictly greater moves ahead: equal weights keep index order. */
	while (pos > 0 && w > cands[best[pos - 1]].weight)
		pos--;
	if (pos >= JB_BEST_N)
		return;
	size_t last = *nbest < JB_BEST_N ? *nbest : JB_BEST_N - 1;
	for (size_t k = last; k > pos; k--)
		best[k] = best[k - 1];
	best[pos] = i;
	if (*nbest < JB_BEST_N)
		(*nbest)++;
}

/* One best queue's working state during PJ-36. */
struct jb_slot {
	struct jb_counts k;
	double running, cap, mult, weight;
	int input_local;
	int got; /* jobs received */
};

static int slot_accepts(const struct jb_slot *s)
{
	double queued = s->k.activated + s->k.starting +
			(s->input_local ? 0 : s->k.assigned);
	return queued < s->cap;
}

/* PJ-36: spread the jobs over the best queues. */
static void distribute(const struct jb_ctx *ctx, const struct jb_queue *queues,
		       struct gb_rng *rng, struct jb_plan *plan,
		       struct dec_decision *out)
{
	const struct jb_task *t = ctx->t;
	struct jb_slot slot[JB_BEST_N];
	double w[JB_BEST_N];
	for (size_t b = 0; b < plan->nbest; b++) {
		const struct jb_queue *q = &queues[plan->best[b]];
		struct jb_wparts wp;
		weigh(ctx, q, is_associated(t, q), &wp);
		slot[b].k = q->counts;
		slot[b].running = wp.running;
		slot[b].cap = queue_cap(ctx->p, wp.running);
		slot[b].mult = wp.mult;
		slot[b].weight = wp.weight;
		slot[b].input_local = wp.input_local;
		slot[b].got = 0;
	}
	size_t j = 0;
	for (; j < t->njobs; j++) {
		for (size_t b = 0; b < plan->nbest; b++)
			w[b] = slot_accepts(&slot[b]) ? slot[b].weight : 0;
		long pick = gb_rng_weighted(rng, w, plan->nbest, 0);
		if (pick < 0)
			break; /* counts only grow: no later job fits either */
		struct jb_slot *s = &slot[pick];
		plan->job_queue[j] = plan->best[pick];
		if (s->input_local) {
			plan->job_status[j] = JB_JOB_ACTIVATED;
			s->k.activated += 1;
		} else {
			plan->job_status[j] = JB_JOB_ASSIGNED;
			s->k.assigned += 1;
		}
		s->got++;
		s->weight = jb_base_weight(&s->k, s->running, s->input_local) *
			    s->mult;
		plan->nassigned++;
	}
	int used = 0;
	for (size_t b = 0; b < plan->nbest; b++)
		used += slot[b].got > 0;
	dec_stage(out, "distribution", "PJ-36", (int)plan->nbest, used);
}

int jb_broker(const struct jb_task *task, const struct jb_queue *queues,
	      size_t nqueues, const struct jb_params *params,
	      const struct jb_env *env, struct gb_rng *rng,
	      struct dec_candidate *cands, struct dec_decision *out,
	      struct jb_plan *plan)
{
	if (!task || !params || !env || !rng || !out || !plan ||
	    (nqueues && (!queues || !cands)))
		return GB_EINVAL;
	if (!task_valid(task) || !params_valid(params) ||
	    !plan->job_queue || !plan->job_status ||
	    nqueues > (size_t)LONG_MAX || nqueues > (size_t)INT_MAX)
		return GB_EINVAL;
	dec_init(out, cands, nqueues);
	plan->nbest = 0;
	plan->nassigned = 0;
	for (size_t j = 0; j < task->njobs; j++) {
		plan->job_queue[j] = -1;
		plan->job_status[j] = JB_JOB_UNASSIGNED;
	}
	struct jb_ctx ctx;
	setup_ctx(&ctx, task, params, env, out);

	/* Filters, candidate-major: the first failing row drops the queue. */
	int dropped[JB_NFILTERS];
	size_t rows[JB_NFILTERS], nrows = 0;
	memset(dropped, 0, sizeof(dropped));
	for (size_t r = 0; r < JB_NFILTERS; r++)
		if (row_applies(&ctx, &jb_filters[r]))
			rows[nrows++] = r;
	for (size_t i = 0; i < nqueues; i++) {
		const struct jb_queue *q = &queues[i];
		struct dec_candidate *c = &cands[i];
		if (!queue_valid(q))
			return GB_EINVAL;
		c->name = q->name;
		queue_facts(&ctx, q);
		for (size_t k = 0; k < nrows; k++) {
			ctx.stage = jb_filters[rows[k]].name;
			if (!jb_filters[rows[k]].fn(&ctx, q, c)) {
				dropped[rows[k]]++;
				break;
			}
		}
	}
	int alive = (int)nqueues;
	for (size_t r = 0; r < JB_NFILTERS; r++) {
		dec_stage(out, jb_filters[r].name, jb_filters[r].rule, alive,
			  alive - dropped[r]);
		alive -= dropped[r];
	}

	/* PJ-28..PJ-32 weights, then the caps and MIN_WEIGHT (PJ-33..35). */
	int ncap = 0, ntotal = 0, nmin = 0;
	for (size_t i = 0; i < nqueues; i++) {
		struct dec_candidate *c = &cands[i];
		if (dec_dropped(c))
			continue;
		const struct jb_queue *q = &queues[i];
		struct jb_wparts w;
		weigh(&ctx, q, is_associated(task, q), &w);
		explain_weight(&ctx, &w, &c->wexpl);
		const struct jb_counts *k = &q->counts;
		double cap = queue_cap(params, w.running);
		double queued = k->activated + k->starting;
		double total = k->defined + k->activated + k->starting +
			       (w.input_local ? 0 : k->assigned);
		if (queued > cap) {
			ncap++;
			dec_reject(c, "queue cap", "PJ-33", "cap",
				   "activated+starting %.0f > cap %.0f = max("
				   "NQUEUELIMITSITE %.0f, 2 x running %.0f)",
				   NULL, queued, cap, params->nqueue_limit,
				   w.running);
		} else if (total > cap) {
			ntotal++;
			dec_reject(c, "queue limit", "PJ-34", "cap",
				   "defined+activated+assigned+starting %.0f > "
				   "cap %.0f = max(NQUEUELIMITSITE %.0f, 2 x "
				   "running %.0f)",
				   NULL, total, cap, params->nqueue_limit,
				   w.running);
		} else if (params->min_weight > 0 &&
			   w.weight < params->min_weight) {
			nmin++;
			dec_reject(c, "min weight", "PJ-35", "below_min_weight",
				   "weight %.4g < MIN_WEIGHT %.4g", NULL,
				   w.weight, params->min_weight, 0, 0);
		} else {
			c->weight = w.weight;
			/* PJ-35: the best JB_BEST_N, kept as we go. */
			best_insert(cands, plan->best, &plan->nbest, (long)i);
		}
	}
	dec_stage(out, "weight", "PJ-30", alive, alive);
	dec_stage(out, "queue cap", "PJ-33", alive, alive - ncap);
	alive -= ncap;
	dec_stage(out, "queue limit", "PJ-34", alive, alive - ntotal);
	alive -= ntotal;
	dec_stage(out, "min weight", "PJ-35", alive, alive - nmin);
	alive -= nmin;

	/* PJ-35: the survivors outside the best JB_BEST_N are cut. */
	if (plan->nbest == JB_BEST_N && alive > JB_BEST_N) {
		long lastb = plan->best[JB_BEST_N - 1];
		double wl = cands[lastb].weight;
		for (size_t i = 0; i < nqueues; i++) {
			struct dec_candidate *c = &cands[i];
			if (dec_dropped(c))
				continue;
			if (c->weight > wl ||
			    (c->weight == wl && (long)i <= lastb))
				continue;
			dec_reject(c, "best 10", "PJ-35", "not_best",
				   "weight %.4g below the best %.0f (last "
				   "kept %.4g)",
				   NULL, c->weight, JB_BEST_N, wl, 0);
		}
	}
	dec_stage(out, "best 10", "PJ-35", alive, (int)plan->nbest);

	if (plan->nbest == 0) {
		dec_stage(out, "distribution", "PJ-36", 0, 0);
		out->outcome = DEC_PENDING;
		out->chosen = -1;
		out->retry_after_s = JB_PENDING_RETRY_S;
		note_append(out, "PJ-35: no queue left, pending for %d s",
			    JB_PENDING_RETRY_S);
		return GB_OK;
	}

	distribute(&ctx, queues, rng, plan, out);
	if (plan->nassigned == 0) {
		out->outcome = DEC_PENDING;
		out->chosen = -1;
		out->retry_after_s = JB_PENDING_RETRY_S;
		note_append(out, "PJ-36: every best queue is at its cap");
		return GB_OK;
	}
	out->outcome = DEC_ASSIGNED;
	out->chosen = plan->best[0];
	out->retry_after_s = 0;
	return GB_OK;
}
