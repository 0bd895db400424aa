/*
** priority.h — DIRAC task queue priorities (PR-01..03) and the WMSHistory
** share corrector (PR-04..07). Pure functions: the worker calls
** pr_recompute periodically and when task queues appear or empty (PR-08),
** one worker at a time, and writes the priorities back.
**
** Priorities (what DIRAC's code computes, which with equal UserPriorities
** is the seed's 1/N and 1/(N x U)):
**   group share S = configured share (default_share for unknown groups)
**                   x the group's correction from the between-groups
**                   corrector instance (1 when none)
**   entity        = the whole group when it has JOB_SHARING        PR-01
**                 = each (owner, group) otherwise, with share S / U,
**                   U = owners of the group with waiting jobs, times the
**                   owner's correction from that group's instance  PR-02
**   TQ priority   = entity share x J,
**                   J = the TQ's average job UserPriority / the sum of
**                   those averages over the entity's TQs           PR-03
** so the TQ priorities of one entity add up to the entity's share and, with
** equal UserPriorities, each of N TQs gets 1/N of it whatever its job count
** (DIRAC's code: SUM(RealPriority)/COUNT per TQ; a sum over jobs, as the
** seed's text reads, would starve a small TQ next to a large one of the
** same entity). (The seed's literal "P x J with P = 1/N" would divide by N
** twice and make a group's weight depend on how many TQs it has.) TQs
** without waiting jobs
** get priority 0 and count for nothing (not in N, not in U). When an
** entity's priority sum is 0 (all UserPriorities 0), J = 1/N. A computed
** priority below PR_MIN_PRIORITY is raised to it, so no TQ starves
** completely.
**
** Corrector (PR-05, PR-06), per instance with slices k (weight w_k, the
** weights normalised over the slices that have history, MaxCorrection M_k)
** and global maximum G:
**   expected share  s^_e = share_e / sum of the entities' shares
**   actual share    u^_ke = usage_ke / sum over entities of usage_k
**                   (usage = running jobs summed over the samples of the
**                   slice's timespan; the sample count cancels)
**   c_ke  = clamp(s^_e / u^_ke, 1/M_k, M_k)   (u^_ke = 0 gives M_k)
**   C_e   = clamp(sum_k w_k c_ke, 1/G, G)
** A slice whose total usage is 0 is left out and the remaining weights are
** normalised again; with no slice left C_e = 1. (DIRAC gives an absent
** entity M_k unweighted and does not renormalise; the seed's formula
** weights every slice, which is what we do.) Instances with a group
** correct the owners of that group (PR-07) and are ignored, with a note,
** for a JOB_SHARING group.
**
** Memory: pr_recompute allocates its working arrays with malloc and frees
** them before returning (it runs every couple of minutes, not per match).
*/
#ifndef GB_PRIORITY_H
#define GB_PRIORITY_H

#include <stddef.h>

#define PR_MAX_SLICES 8
#define PR_MAX_INSTANCES 64
#define PR_MIN_PRIORITY 0.001   /* DIRAC's floor for a TQ with jobs */
#define PR_DEFAULT_SHARE 1000.0 /* DIRAC's DEFAULT_GROUP_SHARE */

struct pr_group {
	const char *name;
	double share;    /* > 0 */
	int job_sharing; /* JOB_SHARING property */
};

struct pr_slice {
	const char *name;       /* e.g. "WeekSlice" */
	long long timespan;     /* seconds, > 0 */
	double weight;          /* > 0, normalised over the instance */
	double max_correction;  /* >= 1 */
};

struct pr_instance {
	const char *name;     /* e.g. "GroupsInstance" */
	const char *group;    /* NULL: between groups; else owners of it */
	double max_global;    /* MaxGlobalCorrectionFactor, >= 1 */
	size_t nslices;       /* 1..PR_MAX_SLICES */
	struct pr_slice slices[PR_MAX_SLICES];
};

struct pr_config {
	int corrections;        /* apply the instances (PR-04) */
	double default_share;   /* for groups not in the table */
	const struct pr_group *groups;
	size_t ngroups;
	const struct pr_instance *inst;
	size_t ninst;           /* <= PR_MAX_INSTANCES */
};

/* Running jobs of (group, owner) seen by the history sampler at time t. */
struct pr_sample {
	long long t;
	const char *group;
	const char *owner;
	double running; /* >= 0 */
};

/* One task queue: inputs, then what pr_recompute writes. */
struct pr_tq {
	long long tq_id;
	const char *owner;
	const char *owner_group;
	long long njobs;      /* waiting jobs, >= 0 */
	double prio_sum;      /* sum of their UserPriorities, >= 0 */
	/* outputs */
	double group_share;   /* S before correction */
	double group_corr;    /* between-groups correction (1 = none) */
	double user_corr;     /* in-group correction (1 = none) */
	double entity_share;  /* the share the entity divides */
	double j;             /* PR-03 factor */
	double priority;      /* entity_share x j, floored; 0 when empty */
};

/* One entity of one corrector instance (pr_correct). */
struct pr_entity {
	const char *name;
	double share;                  /* expected, > 0 (any scale) */
	double usage[PR_MAX_SLICES];   /* per slice, >= 0 */
	/* outputs */
	double slice_corr[PR_MAX_SLICES]; /* c_ke, NAN for a skipped slice */
	double correction;                /* C_e */
};

/*
** PR-05, PR-06: corrections of e[0..n) under `in` (usage[] indexed like
** in->slices). Returns 0, or GB_EINVAL (bad instance: no slices, weight or
** timespan <= 0, max_correction or max_global < 1, share <= 0, usage < 0
** or not finite).
*/
int pr_correct(const struct pr_instance *in, struct pr_entity *e, size_t n);

/*
** Sum of the samples of (group, owner) with now - timespan < t <= now;
** owner NULL sums every owner of the group; group NULL every group.
*/
double pr_usage(const struct pr_sample *h, size_t nh, long long now,
		long long timespan, const char *group, const char *owner);

/*
** PR-01..PR-07 for every TQ of tqs[0..n): corrections from `hist` (when
** cfg->corrections) at time `now`, then shares, J and priorities into the
** output fields. `note` (may be NULL) gets a line about ignored instances
** (e.g. "lhcb_prodInstance: group has JOB_SHARING, ignored (PR-07)"),
** several joined by "; ", and is emptied first. Returns 0, GB_EINVAL (bad
** config or inputs: a NULL owner or group in a TQ or sample, negative
** counts, prio_sum or running < 0 or not finite, a share <= 0; checked
** before any output is written) or GB_ENOMEM.
*/
int pr_recompute(const struct pr_config *cfg, const struct pr_sample *hist,
		 size_t nhist, long long now, struct pr_tq *tqs, size_t n,
		 char *note, size_t notelen);

/*
** Check a configuration: default and group shares > 0 and finite, group
** and instance names present and unique, an instance's Group NULL or
** non-empty, ninst <= PR_MAX_INSTANCES, the slice and maximum bounds of
** pr_correct. Returns 0 (err emptied) or GB_EINVAL with `err` (may be
** NULL) saying what. An instance for a JOB_SHARING group is valid.
*/
int pr_config_check(const struct pr_config *cfg, char *err, size_t errlen);

#endif
