/*
** jobbroker_filters.c — the filter rows of the production job brokerage
** (PJ-01..PJ-27, FC-06; RC-* through swcheck.c): the functions behind
** jb_filters[], the table itself, and the pure predicates they rest on
** (jb_ip_accepts, jb_zero_share).
**
** Split from jobbroker.c, which keeps the pipeline (context setup,
** validation, weights, caps, distribution), to keep each file readable;
** the two share struct jb_ctx through jobbroker_internal.h. Each row reads
** only the context and its queue, and either keeps the queue (returns 1)
** or records one reason with dec_reject() and returns 0: the row order of
** jb_filters[] is the order of the stage summary, so a new rule is a new
** line of JB_ROWS (which makes both the table and the sequence of calls
** jb_filter_queue runs) and, if it only concerns some tasks, a case of
** jb_row_applies.
** Nothing here allocates; per-task facts are in the context already.
**
** Interpretations (where the seeds are silent or the public code differs):
** - PJ-01: "test" in the name, any case, drops a queue unless it is
**   pre-assigned. With pre-assigned queues (not voided by PJ-02) only those
**   are candidates. A queue counts as pre-assigned only while the
**   pre-assignment is in force: after PJ-02 it is an ordinary queue.
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
** - PJ-14: with no software need (task->sw NULL) every queue passes. An
**   ANY queue passes only a task with no hardware spec ('#' or '&' in its
**   architecture), since ANY publishes no architectures to check it
**   against (code "hw_unchecked"). A LIST queue needs the task's swVersion
**   in its list; an AUTO queue goes through rc_check(), or is dropped
**   (RC-01 "no_sw") when it publishes no dictionary.
** - PJ-12: the task's diskIO is per core at the queue, as in the public
**   code: a multicore task's diskIO is divided by a multicore queue's
**   coreCount (a single-core task, or a coreCount 0 queue, as it is).
** - PJ-17: outDiskCount per event is in the unit outDiskCountUnit names
**   (kB, MB or GB per event; 1 MB = 1024 kB, as PanDA counts). Otherwise
**   it is a ratio to the job's input. nEvents and the input are those of
**   the task's smallest job (fewest events, first on ties). The scratch is
**   maxwdir x task coreCount / queue coreCount (PanDA's; the seed's
**   maxwdir / coreCount would give an 8-core task an eighth of an 8-core
**   slot), all of maxwdir at a coreCount 0 queue.
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
** - PJ-24 compares with the raw running count (PJ-33/34 use PJ-28's).
** - PJ-25: t1Weight < 0 (the public code's test; the seed names -1).
** - PJ-26: a queue with numSlots set (0 included) is not checked for
**   pilots, as in the public code: Harvester fills the slots it was given
**   whether or not pilots asked recently.
** - PJ-27: express is processingType containing "urgent" or priority >=
**   1000 (the seed's >=; the public code has > 1000). Only with NW_ACTIVE,
**   as in the public code.
*/
#include "jobbroker_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* ---- small helpers ---------------------------------------------------- */

/*
** Case-insensitive "test" anywhere in s; ASCII only, no locale. Every
** queue's name is searched, and a byte-by-byte scan of it was a tenth of
** a decision. Horspool's search instead looks at the last byte of each
** four-byte window (case folded by | 0x20, which maps only T, E and S onto
** t, e and s) and slides the window to the next place that byte could
** take in "test": 4 past a byte not in "tes", 1 past 's', 2 past 'e', 3
** past a 't' that does not end the word.
*/
static int has_test(const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 3; i < n;) {
		switch (s[i] | 0x20) {
		case 't':
			if ((s[i - 3] | 0x20) == 't' && (s[i - 2] | 0x20) == 'e' &&
			    (s[i - 1] | 0x20) == 's')
				return 1;
			i += 3;
			break;
		case 'e':
			i += 2;
			break;
		case 's':
			i += 1;
			break;
		default:
			i += 4;
			break;
		}
	}
	return 0;
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

/* ---- predicates, exported for the tests and `explain` --------------- */

int jb_ip_accepts(const char *queue_wnconn, const char *task_ipconn)
{
	struct jb_word qc, qs, tc, ts;
	jb_split_ip(queue_wnconn, &qc, &qs);
	jb_split_ip(task_ipconn, &tc, &ts);
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
	const char *pt = jb_str_or_empty(processing_type);
	int typed = 0, best = 0, zero = 0;
	for (const char *s = jb_str_or_empty(policy); *s;) {
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

/* ---- per-queue quantities, exported for the tests and `explain` -------
** Defined here, next to the rows that compare them for every queue, so
** that the compiler inlines them into those rows. */

double jb_memory_mb(const struct jb_task *t, long cores)
{
	return (t->base_ram + t->ram_count * (double)cores) *
	       JB_MEM_COMPENSATION;
}

/* MB per unit of a per-event outDiskCount; 0 for a ratio. */
static double out_mb_per_unit(enum jb_out_unit u)
{
	switch (u) {
	case JB_OUT_KB_PER_EVENT:
		return 1.0 / 1024.0;
	case JB_OUT_MB_PER_EVENT:
		return 1.0;
	case JB_OUT_GB_PER_EVENT:
		return 1024.0;
	case JB_OUT_RATIO:
		break;
	}
	return 0;
}

double jb_disk_mb(const struct jb_task *t, long nevents, double input_mb,
		  int direct_access)
{
	double out = t->out_disk_unit != JB_OUT_RATIO
			     ? t->out_disk_count * (double)nevents *
				       out_mb_per_unit(t->out_disk_unit)
			     : t->out_disk_count * input_mb;
	return (direct_access ? 0.0 : input_mb) +
	       fmax(JB_MIN_OUT_DISK_MB, out) + t->work_disk_count;
}

double jb_maxwdir_mb(const struct jb_task *t, const struct jb_queue *q)
{
	if (q->core_count <= 0)
		return q->maxwdir;
	return q->maxwdir * (double)t->core_count / (double)q->core_count;
}

double jb_task_diskio(const struct jb_task *t, const struct jb_queue *q)
{
	if (t->core_count > 1 && q->core_count > 0)
		return t->diskio / (double)q->core_count;
	return t->diskio;
}

double jb_walltime_s(const struct jb_task *t, long nevents, long cores,
		     double corepower)
{
	return t->cpu_time * (double)nevents /
		       ((double)cores * corepower * t->cpu_efficiency / 100.0) +
	       t->base_time;
}

/* ---- filters (one per row of jb_filters[]) ---------------------------- */

/* ---- checks shared with the analysis brokerage --------------------------
** PJ-12, PJ-13, PJ-14 and PJ-21 are also AJ-09, AJ-10, AJ-12 and AJ-16;
** each brokerage's row calls the one check with its own rule ID. */

int jb_check_diskio(const struct jb_task *t, const struct jb_queue *q,
		    double max_diskio_default, const char *stage,
		    const char *rule, struct dec_candidate *c)
{
	double limit = isfinite(q->max_diskio) ? q->max_diskio
					       : max_diskio_default;
	/* The queue's average first: it is rarely over its limit, and the
	** task's figure costs a division. */
	if (!(q->diskio_avg > limit))
		return 1;
	double task = jb_task_diskio(t, q);
	if (!(task > limit))
		return 1;
	return dec_reject(c, stage, rule, "diskIO",
			  "task diskIO %g and queue average %g kB/s/core > "
			  "limit %g (task diskIO %g over the queue's cores)",
			  NULL, task, q->diskio_avg, limit, t->diskio);
}

int jb_check_cores(const struct jb_task *t, const struct jb_queue *q,
		   const char *stage, const char *rule,
		   struct dec_candidate *c)
{
	double qc = (double)q->core_count;
	if (q->core_count == 0)
		return 1;
	if (t->max_core_count > 0 && q->core_count > t->max_core_count)
		return dec_reject(c, stage, rule, "max_cpucore",
				  "queue coreCount %.0f > task maxCoreCount "
				  "%.0f",
				  NULL, qc, (double)t->max_core_count, 0, 0);
	if ((t->core_count == 1 && q->core_count > 1) ||
	    (t->core_count > 1 && q->core_count == 1))
		return dec_reject(c, stage, rule, "cpucore",
				  "queue coreCount %.0f does not fit task "
				  "coreCount %.0f",
				  NULL, qc, (double)t->core_count, 0, 0);
	return 1;
}

int jb_check_release(const struct jb_task *t, const struct jb_queue *q,
		     const struct rc_sw *all_sw, const char *stage,
		     const char *rule, struct dec_candidate *c)
{
	const struct rc_need *need = t->sw;
	if (need == NULL)
		return 1;
	if (q->releases == JB_REL_ANY) {
		/* ANY says nothing about the hardware: a task asking for a
		** cpu or gpu cannot be checked there, so it does not go. */
		if (!need->arch.has_cpu && !need->arch.has_gpu)
			return 1;
		return dec_reject(c, stage, rule, "hw_unchecked",
				  "releases ANY publishes no architectures "
				  "for the task's hardware spec (cpu %.0f, "
				  "gpu %.0f)",
				  NULL, (double)need->arch.has_cpu,
				  (double)need->arch.has_gpu, 0, 0);
	}
	if (q->releases == JB_REL_LIST) {
		const char *v = jb_str_or_empty(need->sw_version);
		/* The first byte inline spares most entries a strcmp call. */
		for (size_t i = 0; i < q->nrelease_list; i++)
			if (q->release_list[i][0] == v[0] &&
			    strcmp(q->release_list[i], v) == 0)
				return 1;
		return dec_reject(c, stage, rule, "cache",
				  "release %s not among the queue's %.0f "
				  "releases",
				  v, (double)q->nrelease_list, 0, 0, 0);
	}
	if (q->sw == NULL)
		return dec_reject(c, stage, "RC-01", "no_sw",
				  "releases AUTO but no software published",
				  NULL, 0, 0, 0, 0);
	return rc_check(need, q->sw, all_sw, c, stage);
}

int jb_check_walltime(const struct jb_task *t, const struct jb_queue *q,
		      long nevents, long cores, const char *stage,
		      const char *rule, struct dec_candidate *c)
{
	if (!(q->maxtime > 0) && !(q->mintime > 0))
		return 1;
	double wall = jb_walltime_s(t, nevents, cores, q->corepower);
	if (q->maxtime > 0 && wall > q->maxtime)
		return dec_reject(c, stage, rule, "longwalltime",
				  "walltime %.0f s > maxtime %.0f s "
				  "(%.0f events, %.0f cores)",
				  NULL, wall, q->maxtime, (double)nevents,
				  (double)cores);
	if (q->mintime > 0 && wall < q->mintime)
		return dec_reject(c, stage, rule, "shortwalltime",
				  "walltime %.0f s < mintime %.0f s "
				  "(%.0f events, %.0f cores)",
				  NULL, wall, q->mintime, (double)nevents,
				  (double)cores);
	return 1;
}

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
			  jb_str_or_empty(ctx->t->nucleus), 0, 0, 0, 0);
}

/* PJ-04: online, unless pre-assigned. */
static int f_status(const struct jb_ctx *ctx, const struct jb_queue *q,
		    struct dec_candidate *c)
{
	if (ctx->f.preassigned || JB_STR_IS(q->status, "online"))
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
			  jb_str_or_empty(q->site), closeness, 0, 0, 0);
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
	return jb_check_diskio(ctx->t, q, ctx->p->max_diskio_default,
			       ctx->stage, "PJ-12", c);
}

/* PJ-13: core count matching. */
static int f_cores(const struct jb_ctx *ctx, const struct jb_queue *q,
		   struct dec_candidate *c)
{
	return jb_check_cores(ctx->t, q, ctx->stage, "PJ-13", c);
}

/* PJ-14: release/cache availability, RC-* for AUTO queues. */
static int f_software(const struct jb_ctx *ctx, const struct jb_queue *q,
		      struct dec_candidate *c)
{
	return jb_check_release(ctx->t, q, ctx->env->all_sw, ctx->stage,
				"PJ-14", c);
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
	double disk = ctx->disk_mb[q->direct_access != 0];
	double limit = jb_maxwdir_mb(ctx->t, q);
	if (disk < limit)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-17", "disk",
			  "disk %g MB >= %g MB: maxwdir %g MB x task/queue "
			  "cores %.4g",
			  NULL, disk, limit, q->maxwdir,
			  q->maxwdir > 0 ? limit / q->maxwdir : 1);
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
			  jb_str_or_empty(q->storage), q->storage_free, min, 0,
			  0);
}

/* PJ-19: blacklisted storage endpoint. */
static int f_blacklist(const struct jb_ctx *ctx, const struct jb_queue *q,
		       struct dec_candidate *c)
{
	if (!q->storage_blacklisted)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-19", "blacklist",
			  "storage %s is blacklisted",
			  jb_str_or_empty(q->storage), 0, 0, 0, 0);
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
	return jb_check_walltime(ctx->t, q, ctx->min_nevents, ctx->f.cores,
				 ctx->stage, "PJ-21", c);
}

/* PJ-22: worker-node connectivity. */
static int f_ip(const struct jb_ctx *ctx, const struct jb_queue *q,
		struct dec_candidate *c)
{
	if (ctx->ip_conn.n == 0 && ctx->ip_stack.n == 0)
		return 1; /* the task asks nothing: every queue accepts it */
	struct jb_word qc, qs;
	jb_split_ip(q->wnconnectivity, &qc, &qs);
	if (ip_words_accept(qc, qs, ctx->ip_conn, ctx->ip_stack))
		return 1;
	return dec_reject(c, ctx->stage, "PJ-22", "network",
			  "wnconnectivity '%s' does not accept the task's "
			  "ipConnectivity",
			  jb_str_or_empty(q->wnconnectivity), 0, 0, 0, 0);
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
	double cap = jb_fmax(limit, 2 * q->counts.running);
	if (!(q->counts.transferring > cap))
		return 1;
	return dec_reject(c, ctx->stage, "PJ-24", "transferring",
			  "%.0f transferring > max(limit %.0f, 2 x running "
			  "%.0f)",
			  NULL, q->counts.transferring, limit,
			  q->counts.running, 0);
}

/* PJ-25: a negative t1Weight keeps normal jobs at the nucleus. */
static int f_t1weight(const struct jb_ctx *ctx, const struct jb_queue *q,
		      struct dec_candidate *c)
{
	(void)q;
	if (!(ctx->t->t1_weight < 0) || ctx->scout_or_merge ||
	    ctx->f.associated)
		return 1;
	return dec_reject(c, ctx->stage, "PJ-25", "t1weight",
			  "t1Weight %g < %g: only queues at the nucleus", NULL,
			  ctx->t->t1_weight, 0, 0, 0);
}

/* PJ-26: no pilot for 3 hours, unless Harvester gave the queue slots. */
static int f_pilot(const struct jb_ctx *ctx, const struct jb_queue *q,
		   struct dec_candidate *c)
{
	if (q->num_slots >= 0)
		return 1;
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

/*
** The rows, in order: one list that makes both the table (what `explain`,
** the stage summary and jb_row_applies read) and the sequence of calls in
** jb_filter_queue(), so the two cannot disagree.
*/
/* clang-format off */
#define JB_ROWS(X)                                   \
	X("candidates",      "PJ-01", f_candidates)   \
	X("full chain",      "FC-06", f_full_chain)   \
	X("status",          "PJ-04", f_status)       \
	X("link blocked",    "PJ-05", f_link)         \
	X("link queue",      "PJ-06", f_link_queue)   \
	X("links full",      "PJ-07", f_links_full)   \
	X("high priority",   "PJ-08", f_high_prio)    \
	X("inactive",        "PJ-09", f_inactive)     \
	X("zero share",      "PJ-10", f_zero_share)   \
	X("move input",      "PJ-11", f_move_input)   \
	X("disk io",         "PJ-12", f_diskio)       \
	X("core count",      "PJ-13", f_cores)        \
	X("software",        "PJ-14", f_software)     \
	X("memory",          "PJ-15", f_memory)       \
	X("direct access",   "PJ-16", f_direct)       \
	X("disk",            "PJ-17", f_disk)         \
	X("space",           "PJ-18", f_space)        \
	X("blacklist",       "PJ-19", f_blacklist)    \
	X("scout walltime",  "PJ-20", f_scout_wall)   \
	X("walltime",        "PJ-21", f_walltime)     \
	X("ip connectivity", "PJ-22", f_ip)           \
	X("event service",   "PJ-23", f_es)           \
	X("transferring",    "PJ-24", f_transferring) \
	X("t1 weight",       "PJ-25", f_t1weight)     \
	X("pilot",           "PJ-26", f_pilot)        \
	X("network",         "PJ-27", f_network)
/* clang-format on */

#define JB_ROW_ENTRY(name, rule, fn) {name, rule, fn},
const struct jb_filter jb_filters[] = {
	JB_ROWS(JB_ROW_ENTRY){NULL, NULL, NULL},
};

_Static_assert(sizeof(jb_filters) / sizeof(jb_filters[0]) == JB_NFILTERS + 1,
	       "JB_NFILTERS must count the rows of jb_filters[]");

/* Row indexes, in table order. */
#define JB_ROW_INDEX(name, rule, fn) JB_ROW_##fn,
enum { JB_ROWS(JB_ROW_INDEX) JB_ROW_END };

_Static_assert(JB_NFILTERS <= 32, "jb_filter_queue's row mask is 32 bits");

int jb_filter_queue(struct jb_ctx *ctx, uint32_t rows, const struct jb_queue *q,
		    struct dec_candidate *c)
{
	/* The rows written out in order as direct calls, each behind its bit,
	** rather than a loop over the table's pointers: the bits are the
	** same for every queue of a decision, so each test is predicted, and
	** the small rows inline. Through the pointers (an indirect call per
	** row, 1000 queues x 15 rows) the dispatch alone cost as much as the
	** rows it called. */
#define JB_ROW_RUN(name, rule, fn)                                             \
	if (rows & (UINT32_C(1) << JB_ROW_##fn)) {                            \
		ctx->stage = name;                                            \
		if (!fn(ctx, q, c))                                           \
			return JB_ROW_##fn;                                   \
	}
	JB_ROWS(JB_ROW_RUN)
#undef JB_ROW_RUN
	return -1;
}

/*
** Whether a row can drop anything for this task at all. Rows that cannot
** (a rule for scouts when the jobs are not scouts, ...) are left out of
** the per-queue loop: they keep every queue, in == out, and skipping them
** saves a third of the calls for a typical task.
*/
int jb_row_applies(const struct jb_ctx *ctx, const struct jb_filter *f)
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
		return t->t1_weight < 0 && !ctx->scout_or_merge;
	if (f->fn == f_network)
		return ctx->express && ctx->p->nw_active;
	return 1;
}
