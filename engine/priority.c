/*
** priority.c — DIRAC task queue priorities (PR-01..PR-03) and the
** WMSHistory share corrector (PR-04..PR-07); the formulas are documented
** in priority.h.
**
** Shape: pr_recompute sorts the TQs by (group, owner) once, so every group
** and every (owner, group) entity is a contiguous run; shares, U, N and the
** UserPriority sums are then read off the runs in one pass each. It runs
** every couple of minutes and when TQs appear or empty (PR-08), over ~50
** groups and ~5000 TQs, so the working arrays are malloc'd per call and
** freed before returning; nothing is kept between calls.
**
** The corrector's usage is accumulated in one pass over the history per
** instance (binary search of the sample's group, or owner, among the sorted
** runs) rather than by calling pr_usage per entity and slice: a week of
** 15-minute samples over a few hundred (group, owner) pairs is ~10^5
** samples, and entities x slices x samples string compares would be ~10^8
** per recompute. The window and matching rules are pr_usage's (the shared
** in_window()), and the tests check the two against each other.
**
** Decisions where the seed, DIRAC's code and its docs differ:
** - PR-03: J weighs each TQ by its jobs' average UserPriority (DIRAC's
**   SUM(RealPriority)/COUNT per TQ), over the sum of those averages in the
**   entity, not by the sums of the UserPriorities the seed's text reads:
**   with sums a TQ's share grew with its job count (issue 17). When an
**   entity's sum is 0, J = 1/N (N = its TQs with waiting jobs).
** - PR-02: U counts the owners with waiting jobs (the seed), not DIRAC's
**   owners having any TQ. TQs without waiting jobs count for nothing.
** - Unknown groups get cfg->default_share and are not JOB_SHARING (a
**   registry without the group has no JOB_SHARING property for it).
** - Not implemented because no rule asks for them: DIRAC's boost of TQs
**   split by site and its background TQs.
** - PR-05: an entity absent from a slice that has history (usage 0) gets
**   M_k, weighted like every other slice term (DIRAC adds it unweighted).
**   A slice whose total usage over the entities is 0 is skipped and the
**   weights are normalised again over the remaining slices; with none left
**   the correction is 1 (DIRAC does not renormalise).
** - PR-06: the instance maximum is the documented MaxGlobalCorrectionFactor
**   (struct pr_instance.max_global), which DIRAC's code never reads.
** - PR-07: between-groups entities are the groups with waiting jobs, with
**   their configured shares and the usage of all their owners; usage of
**   groups without waiting jobs is not in the totals. In-group entities
**   are the owners of the group with waiting jobs, with equal shares. An
**   instance for a JOB_SHARING group is ignored with a note; one naming a
**   group without waiting jobs changes nothing.
** - Several instances for the same target (several between-groups ones,
**   or several for one group) are applied in configuration order, each
**   seeing the shares the previous ones produced (DIRAC's SharesCorrector
**   chains them the same way); their factors multiply, so the product is
**   bounded by the product of the instances' maxima, not by one of them.
** - Outputs for display: every TQ gets group_share (configured S),
**   group_corr and user_corr (1 when not corrected); entity_share is the
**   entity's share when the entity has waiting jobs, else 0; an empty TQ
**   gets j = 0 and priority 0.
*/
#include "priority.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"

#define PR_NONE SIZE_MAX /* "not an entity" in the entity maps */

/* ---- small helpers ------------------------------------------------------ */

static int pos_finite(double x)
{
	return x > 0 && isfinite(x);
}

static double clamp(double x, double lo, double hi)
{
	return fmin(fmax(x, lo), hi);
}

/*
** now - timespan < t <= now without overflow: for t <= now the difference
** now - t is exact in unsigned arithmetic, and epoch seconds near the
** limits of long long must not be undefined behaviour.
*/
static int in_window(long long t, long long now, long long timespan)
{
	if (t > now || timespan <= 0)
		return 0;
	return (unsigned long long)now - (unsigned long long)t <
	       (unsigned long long)timespan;
}

static void note_add(char *note, size_t len, const char *fmt, ...)
{
	if (note == NULL || len == 0)
		return;
	size_t used = strlen(note);
	if (used > 0) {
		if (used + 3 >= len)
			return;
		memcpy(note + used, "; ", 3);
		used += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(note + used, len - used, fmt, ap);
	va_end(ap);
}

static void set_err(char *err, size_t len, const char *fmt, ...)
{
	if (err == NULL || len == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static const char *name_or(const char *s)
{
	return s != NULL ? s : "(null)";
}

/* What is wrong with one slice, or NULL. */
static const char *slice_problem(const struct pr_slice *s)
{
	if (s->timespan <= 0)
		return "TimeSpan must be > 0";
	if (!pos_finite(s->weight))
		return "Weight must be > 0 and finite";
	if (!(s->max_correction >= 1) || !isfinite(s->max_correction))
		return "MaxCorrection must be >= 1 and finite";
	return NULL;
}

/*
** What is wrong with an instance's numbers, or NULL; *bad_slice gets the
** offending slice (PR_NONE when the instance itself is wrong).
*/
static const char *instance_problem(const struct pr_instance *in,
				    size_t *bad_slice)
{
	*bad_slice = PR_NONE;
	if (!(in->max_global >= 1) || !isfinite(in->max_global))
		return "MaxGlobalCorrectionFactor must be >= 1 and finite";
	if (in->nslices < 1 || in->nslices > PR_MAX_SLICES)
		return "needs 1 to PR_MAX_SLICES slices";
	for (size_t k = 0; k < in->nslices; k++) {
		const char *why = slice_problem(&in->slices[k]);
		if (why != NULL) {
			*bad_slice = k;
			return why;
		}
	}
	return NULL;
}

/* ---- PR-05, PR-06: the corrector ---------------------------------------- */

int pr_correct(const struct pr_instance *in, struct pr_entity *e, size_t n)
{
	size_t bad;
	if (in == NULL || instance_problem(in, &bad) != NULL ||
	    (e == NULL && n > 0))
		return GB_EINVAL;
	const size_t ns = in->nslices;
	double share_sum = 0, total[PR_MAX_SLICES] = {0};
	for (size_t i = 0; i < n; i++) {
		if (!pos_finite(e[i].share))
			return GB_EINVAL;
		share_sum += e[i].share;
		for (size_t k = 0; k < ns; k++) {
			double u = e[i].usage[k];
			if (!(u >= 0) || !isfinite(u))
				return GB_EINVAL;
			total[k] += u;
		}
	}
	if (!isfinite(share_sum))
		return GB_EINVAL;
	/* Weights are normalised over the slices that have history. */
	double wsum = 0;
	for (size_t k = 0; k < ns; k++) {
		if (!isfinite(total[k]))
			return GB_EINVAL;
		if (total[k] > 0)
			wsum += in->slices[k].weight;
	}

	const double g = in->max_global;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < PR_MAX_SLICES; k++)
			e[i].slice_corr[k] = NAN;
		if (wsum == 0) {
			e[i].correction = 1.0; /* no history: nothing to correct */
			continue;
		}
		const double s_hat = e[i].share / share_sum;
		double c = 0;
		for (size_t k = 0; k < ns; k++) {
			if (total[k] == 0)
				continue;
			const double m = in->slices[k].max_correction;
			const double u_hat = e[i].usage[k] / total[k];
			/* Absent from the slice: the largest boost it allows.
			** A tiny u_hat may overflow s_hat / u_hat to inf,
			** which the clamp turns into m as well. */
			double r = u_hat > 0 ? s_hat / u_hat : m;
			r = clamp(r, 1.0 / m, m);
			e[i].slice_corr[k] = r;
			c += in->slices[k].weight / wsum * r;
		}
		e[i].correction = clamp(c, 1.0 / g, g);
	}
	return GB_OK;
}

/* ---- history ------------------------------------------------------------ */

static int name_matches(const char *want, const char *have)
{
	return want == NULL || (have != NULL && strcmp(want, have) == 0);
}

double pr_usage(const struct pr_sample *h, size_t nh, long long now,
		long long timespan, const char *group, const char *owner)
{
	double sum = 0;
	if (h == NULL)
		return 0;
	for (size_t i = 0; i < nh; i++)
		if (in_window(h[i].t, now, timespan) &&
		    name_matches(group, h[i].group) &&
		    name_matches(owner, h[i].owner))
			sum += h[i].running;
	return sum;
}

/* ---- configuration ------------------------------------------------------ */

int pr_config_check(const struct pr_config *cfg, char *err, size_t errlen)
{
	set_err(err, errlen, "%s", "");
	if (cfg == NULL) {
		set_err(err, errlen, "no configuration");
		return GB_EINVAL;
	}
	if (!pos_finite(cfg->default_share)) {
		set_err(err, errlen, "default share %g must be > 0 and finite",
			cfg->default_share);
		return GB_EINVAL;
	}
	if (cfg->ngroups > 0 && cfg->groups == NULL) {
		set_err(err, errlen, "%zu groups but no group table",
			cfg->ngroups);
		return GB_EINVAL;
	}
	for (size_t i = 0; i < cfg->ngroups; i++) {
		const struct pr_group *g = &cfg->groups[i];
		if (g->name == NULL || g->name[0] == '\0') {
			set_err(err, errlen, "group %zu: name missing", i);
			return GB_EINVAL;
		}
		if (!pos_finite(g->share)) {
			set_err(err, errlen,
				"group %s: share %g must be > 0 and finite",
				g->name, g->share);
			return GB_EINVAL;
		}
		/* Quadratic, but tens of groups, checked once per load. */
		for (size_t j = 0; j < i; j++)
			if (strcmp(cfg->groups[j].name, g->name) == 0) {
				set_err(err, errlen,
					"group %s: listed twice", g->name);
				return GB_EINVAL;
			}
	}
	if (cfg->ninst > PR_MAX_INSTANCES) {
		set_err(err, errlen, "%zu corrector instances, at most %d",
			cfg->ninst, PR_MAX_INSTANCES);
		return GB_EINVAL;
	}
	if (cfg->ninst > 0 && cfg->inst == NULL) {
		set_err(err, errlen, "%zu instances but no instance table",
			cfg->ninst);
		return GB_EINVAL;
	}
	for (size_t i = 0; i < cfg->ninst; i++) {
		const struct pr_instance *in = &cfg->inst[i];
		if (in->name == NULL || in->name[0] == '\0') {
			set_err(err, errlen, "instance %zu: name missing", i);
			return GB_EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(cfg->inst[j].name, in->name) == 0) {
				set_err(err, errlen,
					"instance %s: listed twice", in->name);
				return GB_EINVAL;
			}
		if (in->group != NULL && in->group[0] == '\0') {
			set_err(err, errlen,
				"instance %s: Group must be absent or a name",
				in->name);
			return GB_EINVAL;
		}
		size_t k;
		const char *why = instance_problem(in, &k);
		if (why != NULL && k == PR_NONE) {
			set_err(err, errlen, "instance %s: %s", in->name, why);
			return GB_EINVAL;
		}
		if (why != NULL) {
			set_err(err, errlen, "instance %s, slice %s: %s",
				in->name, name_or(in->slices[k].name), why);
			return GB_EINVAL;
		}
	}
	return GB_OK;
}

/* ---- pr_recompute ------------------------------------------------------- */

struct pr_key {
	const char *group, *owner;
	size_t tq;
};

/* One group: a run of keys[first .. first + nkeys), owners own[o0 .. o1). */
struct pr_grp {
	const char *name;
	size_t first, nkeys, o0, o1;
	double share; /* configured S (or the default) */
	int sharing;  /* JOB_SHARING */
	size_t users; /* U: owners with waiting jobs */
	size_t ntq;   /* TQs with waiting jobs */
	double psum;  /* the sum of their average UserPriorities */
	double corr;  /* between-groups correction */
};

/* One (owner, group): keys[first .. first + nkeys). */
struct pr_own {
	const char *name;
	size_t first, nkeys;
	size_t ntq;
	double psum;
	double corr; /* in-group correction */
};

struct pr_work {
	struct pr_key *keys;
	struct pr_grp *grp;
	struct pr_own *own;
	struct pr_entity *ent;
	size_t *emap; /* group or owner index -> entity index, or PR_NONE */
	size_t ngrp, nown;
};

static int key_cmp(const void *a, const void *b)
{
	const struct pr_key *x = a, *y = b;
	int c = strcmp(x->group, y->group);
	if (c == 0)
		c = strcmp(x->owner, y->owner);
	if (c == 0)
		c = (x->tq > y->tq) - (x->tq < y->tq);
	return c;
}

static const struct pr_group *cfg_group(const struct pr_config *cfg,
					const char *name)
{
	for (size_t i = 0; i < cfg->ngroups; i++)
		if (strcmp(cfg->groups[i].name, name) == 0)
			return &cfg->groups[i];
	return NULL;
}

/* Index of the group `name` in the sorted grp[], or PR_NONE. */
static size_t find_group(const struct pr_work *w, const char *name)
{
	size_t lo = 0, hi = w->ngrp;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, w->grp[mid].name);
		if (c == 0)
			return mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return PR_NONE;
}

/* Index of the owner `name` among the sorted owners of g, or PR_NONE. */
static size_t find_owner(const struct pr_work *w, const struct pr_grp *g,
			 const char *name)
{
	size_t lo = g->o0, hi = g->o1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, w->own[mid].name);
		if (c == 0)
			return mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return PR_NONE;
}

static int inputs_valid(const struct pr_config *cfg,
			const struct pr_sample *hist, size_t nhist,
			const struct pr_tq *tqs, size_t n)
{
	if (pr_config_check(cfg, NULL, 0) != GB_OK)
		return 0;
	if ((tqs == NULL && n > 0) || (hist == NULL && nhist > 0))
		return 0;
	double total = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pr_tq *t = &tqs[i];
		if (t->owner == NULL || t->owner_group == NULL ||
		    t->njobs < 0 || !(t->prio_sum >= 0) ||
		    !isfinite(t->prio_sum))
			return 0;
		total += t->prio_sum;
	}
	/* Every entity's sum is then finite as well. */
	if (!isfinite(total))
		return 0;
	for (size_t i = 0; i < nhist; i++)
		if (hist[i].group == NULL || hist[i].owner == NULL ||
		    !(hist[i].running >= 0) || !isfinite(hist[i].running))
			return 0;
	return 1;
}

/* Sort the TQs and cut them into group and owner runs. */
static void build_runs(const struct pr_config *cfg, const struct pr_tq *tqs,
		       size_t n, struct pr_work *w)
{
	for (size_t i = 0; i < n; i++)
		w->keys[i] = (struct pr_key){tqs[i].owner_group, tqs[i].owner,
					     i};
	qsort(w->keys, n, sizeof(w->keys[0]), key_cmp);

	w->ngrp = w->nown = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pr_key *k = &w->keys[i];
		const struct pr_tq *t = &tqs[k->tq];
		struct pr_grp *g = w->ngrp > 0 ? &w->grp[w->ngrp - 1] : NULL;
		if (g == NULL || strcmp(g->name, k->group) != 0) {
			const struct pr_group *c = cfg_group(cfg, k->group);
			g = &w->grp[w->ngrp++];
			*g = (struct pr_grp){
				.name = k->group,
				.first = i,
				.o0 = w->nown,
				.o1 = w->nown,
				.share = c != NULL ? c->share
						   : cfg->default_share,
				.sharing = c != NULL && c->job_sharing,
				.corr = 1.0,
			};
		}
		struct pr_own *o = g->o1 > g->o0 ? &w->own[w->nown - 1] : NULL;
		if (o == NULL || strcmp(o->name, k->owner) != 0) {
			o = &w->own[w->nown++];
			*o = (struct pr_own){.name = k->owner, .first = i,
					     .corr = 1.0};
			g->o1 = w->nown;
		}
		g->nkeys++;
		o->nkeys++;
		if (t->njobs > 0) {
			if (o->ntq == 0)
				g->users++;
			/* PR-03 weighs each TQ by its jobs' average
			** UserPriority (DIRAC's SUM/COUNT per TQ), so a TQ's
			** share does not grow with its job count. */
			double avg = t->prio_sum / (double)t->njobs;
			o->ntq++;
			o->psum += avg;
			g->ntq++;
			g->psum += avg;
		}
	}
}

/* Add a sample's running jobs to the slices of `in` whose window holds it. */
static void add_usage(const struct pr_instance *in, struct pr_entity *e,
		      const struct pr_sample *s, long long now)
{
	for (size_t k = 0; k < in->nslices; k++)
		if (in_window(s->t, now, in->slices[k].timespan))
			e->usage[k] += s->running;
}

/* PR-07: one between-groups instance; multiplies into grp[].corr. */
static int correct_groups(const struct pr_instance *in, struct pr_work *w,
			  const struct pr_sample *hist, size_t nhist,
			  long long now)
{
	size_t ne = 0;
	for (size_t g = 0; g < w->ngrp; g++) {
		w->emap[g] = PR_NONE;
		if (w->grp[g].ntq == 0)
			continue; /* no waiting jobs: not an entity */
		w->emap[g] = ne;
		w->ent[ne++] = (struct pr_entity){
			.name = w->grp[g].name,
			.share = w->grp[g].share * w->grp[g].corr,
		};
	}
	if (ne == 0)
		return GB_OK;
	for (size_t i = 0; i < nhist; i++) {
		size_t g = find_group(w, hist[i].group);
		if (g != PR_NONE && w->emap[g] != PR_NONE)
			add_usage(in, &w->ent[w->emap[g]], &hist[i], now);
	}
	int rc = pr_correct(in, w->ent, ne);
	if (rc != GB_OK)
		return rc;
	for (size_t g = 0; g < w->ngrp; g++)
		if (w->emap[g] != PR_NONE)
			w->grp[g].corr *= w->ent[w->emap[g]].correction;
	return GB_OK;
}

/* PR-07: one in-group instance; multiplies into own[].corr of its group. */
static int correct_owners(const struct pr_instance *in, struct pr_work *w,
			  const struct pr_sample *hist, size_t nhist,
			  long long now)
{
	size_t g = find_group(w, in->group);
	if (g == PR_NONE || w->grp[g].users == 0)
		return GB_OK; /* no waiting jobs in the group: nothing to do */
	const struct pr_grp *gr = &w->grp[g];
	size_t ne = 0;
	for (size_t o = gr->o0; o < gr->o1; o++) {
		w->emap[o] = PR_NONE;
		if (w->own[o].ntq == 0)
			continue;
		w->emap[o] = ne;
		/* Equal shares; an earlier instance's factor carries over. */
		w->ent[ne++] = (struct pr_entity){.name = w->own[o].name,
						  .share = w->own[o].corr};
	}
	for (size_t i = 0; i < nhist; i++) {
		if (strcmp(hist[i].group, gr->name) != 0)
			continue;
		size_t o = find_owner(w, gr, hist[i].owner);
		if (o != PR_NONE && w->emap[o] != PR_NONE)
			add_usage(in, &w->ent[w->emap[o]], &hist[i], now);
	}
	int rc = pr_correct(in, w->ent, ne);
	if (rc != GB_OK)
		return rc;
	for (size_t o = gr->o0; o < gr->o1; o++)
		if (w->emap[o] != PR_NONE)
			w->own[o].corr *= w->ent[w->emap[o]].correction;
	return GB_OK;
}

static int apply_corrections(const struct pr_config *cfg, struct pr_work *w,
			     const struct pr_sample *hist, size_t nhist,
			     long long now, char *note, size_t notelen)
{
	for (size_t i = 0; i < cfg->ninst; i++) {
		const struct pr_instance *in = &cfg->inst[i];
		int rc;
		if (in->group == NULL) {
			rc = correct_groups(in, w, hist, nhist, now);
		} else {
			const struct pr_group *c = cfg_group(cfg, in->group);
			if (c != NULL && c->job_sharing) {
				/* The group is one entity: no owners to
				** balance (the seed's lhcb_prod remark). */
				note_add(note, notelen,
					 "%s: group has JOB_SHARING, ignored "
					 "(PR-07)",
					 in->name);
				continue;
			}
			rc = correct_owners(in, w, hist, nhist, now);
		}
		if (rc != GB_OK)
			return rc;
	}
	return GB_OK;
}

/* PR-01..PR-03 for the TQs of one entity: keys[first .. first + nkeys). */
static void set_priorities(const struct pr_work *w, struct pr_tq *tqs,
			   size_t first, size_t nkeys, const struct pr_grp *g,
			   double user_corr, double eshare, size_t ntq,
			   double psum)
{
	for (size_t i = first; i < first + nkeys; i++) {
		struct pr_tq *t = &tqs[w->keys[i].tq];
		t->group_share = g->share;
		t->group_corr = g->corr;
		t->user_corr = user_corr;
		t->entity_share = ntq > 0 ? eshare : 0;
		if (t->njobs == 0) {
			t->j = 0;
			t->priority = 0;
			continue;
		}
		t->j = psum > 0 ? t->prio_sum / (double)t->njobs / psum
				: 1.0 / (double)ntq;
		t->priority = fmax(eshare * t->j, PR_MIN_PRIORITY);
	}
}

int pr_recompute(const struct pr_config *cfg, const struct pr_sample *hist,
		 size_t nhist, long long now, struct pr_tq *tqs, size_t n,
		 char *note, size_t notelen)
{
	if (note != NULL && notelen > 0)
		note[0] = '\0';
	if (!inputs_valid(cfg, hist, nhist, tqs, n))
		return GB_EINVAL;
	if (n == 0)
		return GB_OK;
	if (n > SIZE_MAX / sizeof(struct pr_entity))
		return GB_ENOMEM;

	/* Groups, owners and entities are each at most one per TQ. */
	struct pr_work w = {
		.keys = malloc(n * sizeof(*w.keys)),
		.grp = malloc(n * sizeof(*w.grp)),
		.own = malloc(n * sizeof(*w.own)),
		.ent = malloc(n * sizeof(*w.ent)),
		.emap = malloc(n * sizeof(*w.emap)),
	};
	int rc = GB_ENOMEM;
	if (w.keys == NULL || w.grp == NULL || w.own == NULL ||
	    w.ent == NULL || w.emap == NULL)
		goto out;

	build_runs(cfg, tqs, n, &w);
	if (cfg->corrections) {
		rc = apply_corrections(cfg, &w, hist, nhist, now, note,
				       notelen);
		if (rc != GB_OK)
			goto out;
	}

	for (size_t gi = 0; gi < w.ngrp; gi++) {
		const struct pr_grp *g = &w.grp[gi];
		const double s = g->share * g->corr;
		if (g->sharing) { /* PR-01: the group is the entity */
			set_priorities(&w, tqs, g->first, g->nkeys, g, 1.0, s,
				       g->ntq, g->psum);
			continue;
		}
		for (size_t oi = g->o0; oi < g->o1; oi++) { /* PR-02 */
			const struct pr_own *o = &w.own[oi];
			double es = o->ntq > 0 ? s / (double)g->users * o->corr
					       : 0;
			set_priorities(&w, tqs, o->first, o->nkeys, g, o->corr,
				       es, o->ntq, o->psum);
		}
	}
	rc = GB_OK;
out:
	free(w.keys);
	free(w.grp);
	free(w.own);
	free(w.ent);
	free(w.emap);
	return rc;
}
