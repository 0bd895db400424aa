/*
** analysis.h — the numeric parts of the ATLAS analysis job brokerage:
** the task throttle (AJ-01..AJ-04), the analysis stabilizer (AJ-21..AJ-23)
** and the two basic weights (AJ-24..AJ-27). Pure functions over counts the
** caller reads (the worker from MariaDB, explain from a scenario), so every
** formula is testable with the seed's numbers; the full analysis brokerage
** (candidates, filters AJ-05..AJ-20, AJ-28) builds on them.
**
** Throttle (seed "Number of User Jobs Exceeds Caps", "User's Usage Exceeds
** Quota", "User Analysis Share Usage Exceeds its Target"):
**   AJ-01 the counts are the user's, or the working group's when the task
**         has a workingGroup (the caller passes the right ones and says
**         which);
**   AJ-02 throttled when running jobs > CAP_RUNNING_USER_JOBS, queued jobs
**         > 2 x that, running cores > CAP_RUNNING_USER_CORES, queued cores
**         > 2 x that (CAP_RUNNING_GROUP_* for a working group; an unset cap
**         checks nothing);
**   AJ-03 throttled when the user's global disk quota is exceeded;
**   AJ-04 User Analysis share only: class C and usage > 90 % of target,
**         class B and > 95 %, class A and > max(USER_USAGE_THRESHOLD_A /
**         (the user's running slots at hi-sites), 1) x 100 % (the seed's
**         rule; no hi-site slots make the limit infinite, so class A is
**         then not throttled); class S and other shares are immune.
** The first condition that holds is reported (rule, the number, the limit).
**
** Stabilizer, per candidate queue for the task's user (seed "Analysis
** Stabilizer"):
**   AJ-21 not throttled when nQ(PQ) < BASE_QUEUE_LENGTH_PER_PQ or nQ(PQ) <
**         BASE_EXPECTED_WAIT_HOUR_ON_PQ x trr(PQ);
**   AJ-22 nQ_max = max(BASE_QUEUE_LENGTH_PER_PQ,
**         STATIC_MAX_QUEUE_RUNNING_RATIO x nR(PQ), MAX_EXPECTED_WAIT_HOUR x
**         trr(PQ)); percentage = max(nR(PQ,user) / nR(PQ), 1 / nUsers(PQ))
**         (a term whose denominator is 0 counts as 0);
**   AJ-23 max_q_len = max(BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER,
**         BASE_QUEUE_RATIO_ON_PQ x nR(PQ), nQ_max x percentage); the queue
**         is skipped when it can be throttled and nQ(PQ,user) > max_q_len.
** trr (to-running rate) = jobs that started in the last 6 hours / 6,
** computed by the caller from job start times (an_trr helps).
**
** Weights:
**   AJ-24 original: (running + 1) / (activated + assigned + starting +
**         defined + 1), running as PJ-28 (the caller passes it);
**   AJ-25 new: W_s x W_q; W_s from the class table (task class S/A: hi N_j,
**         mid eps1, lo eps2; B: eps2, N_j, eps1; C: eps2, eps1, N_j) for
**         User Analysis and Express Analysis, W_s = N_j for other shares;
**         eps1 = AN_EPS1, eps2 = AN_EPS2 (small, eps1 > eps2 > 0);
**   AJ-26 W_q = (max_q_len - nQ(PQ,user) - N_j / N_PQ) /
**         (sum over the candidates of (max_q_len - nQ(PQ,user)) - N_j),
**         floored at AN_WQ_FLOOR so a queue at its length still has a
**         (tiny) weight and a negative denominator cannot flip signs;
**   AJ-27 USE_NEW_BASIC_WEIGHT (default 1) picks the new one.
**
** No I/O, no clock, no allocation.
*/
#ifndef GB_ANALYSIS_H
#define GB_ANALYSIS_H

#include <stddef.h>

#include "params.h"

#define AN_EPS1 0.05          /* mid-class epsilon (eps1 > eps2) */
#define AN_EPS2 0.002         /* low-class epsilon */
#define AN_WQ_FLOOR 9.5367431640625e-07 /* 2^-20, the public code's floor */
#define AN_TRR_WINDOW_H 6.0   /* AJ-21: starts counted over 6 hours */

enum an_task_class { AN_CLASS_S = 0, AN_CLASS_A, AN_CLASS_B, AN_CLASS_C };
enum an_site_class { AN_SITE_HI = 0, AN_SITE_MID, AN_SITE_LO };

/* What the throttle reads (AJ-01..AJ-04). */
struct an_user_load {
	int working_group;      /* 1: counts are the working group's (AJ-01) */
	double running_jobs, queued_jobs;
	double running_cores, queued_cores;
	int quota_exceeded;     /* AJ-03: global disk quota */
	int user_analysis;      /* the task's share is User Analysis (AJ-04) */
	enum an_task_class task_class;
	double share_usage;     /* the share's usage, same unit as target */
	double share_target;    /* > 0 when user_analysis */
	double hi_site_slots;   /* the user's running slots at hi-sites */
};

struct an_throttle {
	int throttled;
	const char *rule;   /* "AJ-02", "AJ-03", "AJ-04"; NULL when not */
	const char *code;   /* "running_jobs", "queued_jobs",
			       "running_cores", "queued_cores", "quota",
			       "share_class_c", "share_class_b",
			       "share_class_a" */
	double value;       /* the number compared (jobs, cores, percent) */
	double limit;       /* its limit */
};

/*
** AJ-01..AJ-04 in that order; the first condition that holds is reported.
** `set` may be NULL (catalogue defaults: the caps unset). Returns 0 (out
** filled), GB_EINVAL on NULL arguments, negative or non-finite counts, or
** user_analysis with share_target <= 0.
*/
int an_throttle_check(const struct an_user_load *u, const struct prm_set *set,
		      struct an_throttle *out);

/* One candidate queue's counts for the stabilizer (AJ-21..AJ-23). */
struct an_queue_load {
	double nq;        /* queued jobs at the queue (its gshare) */
	double nr;        /* running jobs at the queue */
	double trr;       /* to-running rate, jobs per hour */
	double nq_user;   /* the user's queued jobs there */
	double nr_user;   /* the user's running jobs there */
	double nusers;    /* users with jobs there */
};

struct an_stab {
	int can_throttle;   /* AJ-21 */
	double nq_max;      /* AJ-22 */
	double percentage;  /* AJ-22 */
	double max_q_len;   /* AJ-23 */
	int skip;           /* AJ-23: can_throttle and nq_user > max_q_len */
};

/* AJ-21..AJ-23 for one queue. Returns 0 or GB_EINVAL (NULL, negative or
** non-finite counts). */
int an_stabilizer(const struct an_queue_load *q, const struct prm_set *set,
		  struct an_stab *out);

/* trr from start times (seconds): starts with now - 6 h < t <= now, per
** hour. 0 when n == 0; NAN for NULL with n > 0 (an_stabilizer refuses it). */
double an_trr(const long long *start_times, size_t n, long long now);

/* AJ-24: running as PJ-28 (the caller's choice). GB_EINVAL on negatives. */
int an_weight_original(double running, double activated, double assigned,
		       double starting, double defined, double *out);

/* AJ-25: W_s for a queue of class `site` for a task of class `task`;
** `user_analysis` is 1 for User and Express Analysis. NAN for a class out
** of range or a negative or non-finite nj. */
double an_weight_site(int user_analysis, enum an_task_class task,
		      enum an_site_class site, double nj);

/*
** AJ-26: W_q of candidate i given every candidate's max_q_len and
** nq_user (arrays of n), for N_j jobs. Returns 0 or GB_EINVAL (n == 0,
** i >= n, NULL, negative values).
*/
int an_weight_queue(const double *max_q_len, const double *nq_user, size_t n,
		    size_t i, double nj, double *out);

/* AJ-27: 1 when USE_NEW_BASIC_WEIGHT selects the new weight. */
int an_use_new_weight(const struct prm_set *set);

#endif
