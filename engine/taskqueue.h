/*
** taskqueue.h — DIRAC task queues: grouping jobs by requirements (TQ-01..03)
** and matching a pilot's resource description to one waiting job
** (TQ-04..08, TQ-10). The atomic claim (TQ-09) is the store's business.
**
** Two shapes of the same requirements:
**   - struct tq_def: strings, used once per submission to compute the CPU
**     segment (TQ-02) and the canonical signature (TQ-01) that makes jobs
**     with identical requirements share one task queue;
**   - struct tq_view: interned ids (uint32, sorted sets), used for every
**     pilot. The worker's in-memory index keeps one view per task queue and
**     updates it in place, so a match costs one pass over ~500 views with
**     no allocation and no SQL.
** Strings are interned by the caller (worker/model/tqindex.c, the scenario
** loader): equal strings get equal ids; a pilot value that no task queue
** uses gets TQ_ID_UNKNOWN, which is in no set.
**
** Matching (tq_match, or tq_match_among over what an index left):
**   filters, first failing one drops the TQ (table tq_filters[], one
**   function per row with its rule ID)          TQ-04, TQ-05, TQ-06
**   (pilot fields are lists, ANY or absent; tags; bans: see taskqueue.c)
**   -> drop matching TQs with no waiting job
**   -> keep the matching TQs with the highest CPU time          TQ-07
**   -> priority lottery among them, exactly proportional to
**      tq_view.priority (one uniform draw over the cumulative sum;
**      not DIRAC's biased ORDER BY RAND()/Priority)               TQ-07
**   -> inside the TQ: UserPriority lottery over the levels, weight of a
**      level = its job count x max(UserPriority, TQ_MIN_JOB_WEIGHT)
**      (every job is one ticket weighted by its UserPriority), then a
**      uniform pick among the TQ_PICK_FROM lowest job ids of the level TQ-08
** and, when nothing is chosen, counts per filter so the pilot is told why
** (TQ-10, tq_result_format).
**
** No I/O, no clock, no allocation; randomness from the caller's gb_rng.
*/
#ifndef GB_TASKQUEUE_H
#define GB_TASKQUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "decision.h"
#include "rng.h"

#define TQ_PICK_FROM 10        /* TQ-08: the ten lowest job ids */
#define TQ_MIN_JOB_WEIGHT 1e-5 /* lottery weight of UserPriority <= 0 */
#define TQ_ID_UNKNOWN UINT32_MAX
#define TQ_MAX_SEGMENTS 32
#define TQ_MIN_PRIORITY 0      /* UserPriority range accepted at submit */
#define TQ_MAX_PRIORITY 10
#define TQ_MAX_PILOT_VALUES 64 /* values of one list of a pilot description */

/* TQ-03: the multi-valued requirements, in canonical order. */
enum tq_field {
	TQ_F_SITES = 0,
	TQ_F_BANNED_SITES,
	TQ_F_GRID_CES,
	TQ_F_PLATFORMS,
	TQ_F_PILOT_TYPES,
	TQ_F_SUBMIT_POOLS,     /* pilot submission only, never matched */
	TQ_F_GRID_MIDDLEWARES, /* pilot submission only, never matched */
	TQ_F_JOB_TYPES,        /* DIRAC's JobTypes (issue 17) */
	TQ_F_TAGS,             /* DIRAC's Tags: what the job needs */
	TQ_NFIELDS
};

/* Message and column names: "sites", "bannedSites", "gridCEs",
** "platforms", "pilotTypes", "submitPools", "gridMiddlewares",
** "jobTypes", "tags". */
extern const char *const tq_field_names[TQ_NFIELDS];

/*
** The fields a pilot describes itself by (TQ-06), each a list of values,
** and the TQ set each is matched against. For site, gridCE, platform,
** pilotType and jobType a TQ passes when its set is empty or shares a
** value with the pilot's; for tag every TQ tag must be among the pilot's.
** The pilot may ban values of each ("bannedSite", ...).
*/
enum tq_pfield {
	TQ_P_SITE = 0,
	TQ_P_GRID_CE,
	TQ_P_PLATFORM,
	TQ_P_PILOT_TYPE,
	TQ_P_JOB_TYPE,
	TQ_P_TAG,
	TQ_NPFIELDS
};

/* The TQ set of each pilot field: TQ_F_SITES, TQ_F_GRID_CES, ... TQ_F_TAGS. */
extern const enum tq_field tq_pfield_set[TQ_NPFIELDS];
/* Message names: "site", "gridCE", "platform", "pilotType", "jobType",
** "tags"; and of the pilot's bans: "bannedSite", "bannedGridCE",
** "bannedPlatform", "bannedPilotType", "bannedJobType", "bannedTag". */
extern const char *const tq_pfield_names[TQ_NPFIELDS];
extern const char *const tq_pfield_ban_names[TQ_NPFIELDS];

/* 1 when `s` is the wildcard "ANY" in any case, else 0. */
int tq_is_any(const char *s);

/* ---- submission: TQ-01..03 ---------------------------------------------- */

/* DIRAC's 2009 segments (seconds), the default of tq_cpu_segments. */
extern const long long tq_default_segments[4]; /* 500, 5000, 50000, 300000 */

/*
** 1 when seg[0..n) is usable: 1 <= n <= TQ_MAX_SEGMENTS, every value > 0,
** strictly increasing; else 0.
*/
int tq_segments_valid(const long long *seg, size_t n);

/*
** TQ-02: the first segment >= cpu_time; the largest segment when cpu_time
** exceeds it (a cpu_time <= 0 gets the first). `seg` must be valid.
*/
long long tq_cpu_segment(long long cpu_time, const long long *seg, size_t n);

struct tq_strset {
	const char **v; /* sorted by strcmp, unique (see tq_strset_normalise) */
	size_t n;       /* 0 = no requirement */
};

/* A job's requirements; cpu_time is already the segment value. */
struct tq_def {
	const char *owner;       /* owner DN */
	const char *owner_group;
	const char *setup;
	long long cpu_time;
	struct tq_strset set[TQ_NFIELDS];
};

/* Sort v[0..*n) by strcmp and drop repeats, in place; *n is updated. */
void tq_strset_normalise(const char **v, size_t *n);

/*
** TQ-01: write the canonical signature of `d` into buf: every field in a
** fixed order, each string length-prefixed ("owner=12:/DC=ch/CN=ab;..."),
** sets in their sorted order, so two definitions get the same text exactly
** when they would share a task queue, and no value can forge a separator.
** *outlen gets the length (buf is NUL-terminated). Returns 0, GB_EINVAL
** (NULL string, a set not sorted and unique, cpu_time <= 0) or GB_ETOOBIG
** (buf too small). The fields added after the first release (jobTypes,
** tags) are written only when not empty, so a TQ without them keeps the
** signature it always had.
*/
int tq_canon(const struct tq_def *d, char *buf, size_t len, size_t *outlen);

/* ---- matching: TQ-04..08, TQ-10 ----------------------------------------- */

struct tq_idset {
	const uint32_t *v; /* ascending, unique */
	size_t n;          /* 0 = no requirement (any value accepted) */
};

/* Waiting jobs of one UserPriority inside a task queue. */
struct tq_level {
	int user_priority;
	size_t njobs;            /* jobs at this priority (> 0) */
	const long long *lowest; /* min(njobs, TQ_PICK_FROM) lowest ids, asc */
	size_t nlowest;
};

struct tq_view {
	long long tq_id;
	uint32_t owner, owner_group, setup;
	long long cpu_time; /* segment */
	struct tq_idset set[TQ_NFIELDS];
	double priority;    /* PR-01..07 result; <= 0 never wins the lottery */
	const struct tq_level *levels;
	size_t nlevels;
	size_t njobs;       /* sum of levels[].njobs */
};

/*
** The pilot (TQ-04..06) in the index's terms. Every list is sorted
** ascending and unique and may hold TQ_ID_UNKNOWN (a value no TQ uses:
** in no set, so it matches nothing and is banned nowhere).
**   groups      ownerGroup: n > 0 makes the pilot private to these groups;
**   js_groups   those of `groups` that have JOB_SHARING (caller looks up);
**   owners      ownerDN: counts only with groups (see f_owner_dn);
**   has[f]/want[f]  the pilot constrains field f (it named values and not
**               ANY) / the values. For TQ_P_TAG has = 0 means ANY (every
**               tag offered) and has = 1 with n = 0 means no tag offered;
**   required    requiredTags: the TQ must carry every one (n = 0: none);
**   banned[f]   the pilot's bans: a TQ listing every one is dropped.
*/
struct tq_resource {
	struct tq_idset groups, js_groups, owners;
	uint32_t setup;       /* required */
	long long cpu_time;   /* seconds the slot offers, required */
	int has[TQ_NPFIELDS];
	struct tq_idset want[TQ_NPFIELDS];
	struct tq_idset required;
	struct tq_idset banned[TQ_NPFIELDS];
};

/*
** The filters, in the order that decides which one a TQ failing several
** is counted under (TQ-10) and shown with. The first TQ_FL_NINDEXED are
** the ones an index of the TQs' sets can evaluate without reading the
** views (tqindex.c's posting bitmaps); they come first so that a TQ the
** index cut is counted exactly as a full scan would count it.
*/
enum tq_filter_id {
	TQ_FL_PILOT_TYPE = 0,  /* TQ-06 TQ lists pilot types, none the pilot's */
	TQ_FL_SITE,            /* TQ-06 TQ lists sites, none the pilot's */
	TQ_FL_GRID_CE,         /* TQ-06 as for sites */
	TQ_FL_PLATFORM,        /* TQ-06 as for sites */
	TQ_FL_JOB_TYPE,        /* TQ-06 as for sites */
	TQ_FL_REQUIRED_TAG,    /* TQ-06 TQ lacks a tag the pilot requires */
	TQ_FL_OWNER_GROUP,     /* TQ-04 private pilot, group not the pilot's */
	TQ_FL_OWNER_DN,        /* TQ-04 private pilot giving groups and DNs:
				  TQ's group without JOB_SHARING, owner not
				  among the DNs */
	TQ_FL_SETUP,           /* TQ-05 */
	TQ_FL_CPU_TIME,        /* TQ-05 TQ cpu_time > resource's */
	TQ_FL_BANNED_SITE,     /* TQ-06 every site of the pilot is banned */
	TQ_FL_TAG,             /* TQ-06 TQ needs a tag the pilot lacks */
	TQ_FL_BAN_SITE,        /* TQ-06 TQ lists every site the pilot bans */
	TQ_FL_BAN_GRID_CE,     /* ... every CE the pilot bans */
	TQ_FL_BAN_PLATFORM,
	TQ_FL_BAN_PILOT_TYPE,
	TQ_FL_BAN_JOB_TYPE,
	TQ_FL_BAN_TAG,
	TQ_NFILTERS
};

#define TQ_FL_NINDEXED 6 /* TQ_FL_PILOT_TYPE .. TQ_FL_REQUIRED_TAG */

/* The filter of a pilot field's "shares a value" test (TQ_P_TAG: the
** subset test, TQ_FL_TAG) and of the pilot's ban of it. */
extern const enum tq_filter_id tq_pfield_filter[TQ_NPFIELDS];
extern const enum tq_filter_id tq_pfield_ban_filter[TQ_NPFIELDS];

struct tq_filter_desc {
	const char *name; /* "pilot_type", "site", "grid_ce", "platform",
			     "job_type", "required_tag", "owner_group",
			     "owner_dn", "setup", "cpu_time", "banned_site",
			     "tag", "ban_site", "ban_grid_ce", "ban_platform",
			     "ban_pilot_type", "ban_job_type", "ban_tag" */
	const char *rule; /* "TQ-04", ... */
};

/* The descriptor of filter f (f < TQ_NFILTERS), in the table's order. */
const struct tq_filter_desc *tq_filter(enum tq_filter_id f);

/* First filter (in table order) rejecting `v` for `r`, or -1 if it passes. */
int tq_check(const struct tq_view *v, const struct tq_resource *r);

/*
** Explain why filter `f` rejects `v`: rule, code (the filter name), a
** template and the numbers compared (cpu_time: v[0] TQ's, v[1] pilot's;
** "shares a value" filters: v[0] the TQ set's size, v[1] the number of
** values the pilot gave; tag and required_tag: v[0] the TQ's tag count,
** v[1] the id of the first tag missing (the TQ's the pilot lacks, or the
** pilot's required one the TQ lacks); bans: v[0] the number of values
** banned; owner: v[0] the TQ's id, v[1] the pilot's count; ids are not
** names, so the caller adds names when it prints). For explain and the
** TQ-10 reply.
*/
void tq_reason(const struct tq_view *v, const struct tq_resource *r,
	       enum tq_filter_id f, struct dec_reason *out);

/* Per-view verdicts written by tq_match when asked (values >= TQ_NFILTERS
** are not filters). */
enum tq_verdict {
	TQ_V_EMPTY = TQ_NFILTERS, /* matches, no waiting job */
	TQ_V_LOWER_CPU,           /* matches, a higher CPU time won TQ-07 */
	TQ_V_ENTRANT,             /* in the lottery, not drawn */
	TQ_V_CHOSEN,              /* drawn */
};

struct tq_result {
	long chosen;         /* index into views, -1 when nothing matched */
	long level;          /* index into views[chosen].levels, else -1 */
	long long job_id;    /* chosen job, 0 when none */
	size_t in;           /* views considered */
	size_t rejected[TQ_NFILTERS]; /* views dropped by each filter */
	size_t matched;      /* views passing every filter */
	size_t empty;        /* of those, without waiting jobs */
	size_t entrants;     /* non-empty matches at the top CPU time */
	long long top_cpu;   /* that CPU time, 0 when none */
	double lottery_total; /* sum of the entrants' priorities */
};

/*
** Match resource `r` against views[0..n): filters, TQ-07 lottery, TQ-08
** job pick. `weights` is caller scratch of n doubles. `verdict` (may be
** NULL) gets one enum tq_filter_id / enum tq_verdict per view. When every
** entrant has priority <= 0 the draw is uniform among the entrants (a
** queue must not starve because priorities were not computed yet).
** Returns 0 (out->chosen == -1 means no job: see the counts), GB_EINVAL
** on NULL arguments or a view whose levels disagree with njobs (checked
** for the views that pass the filters, the only ones whose levels are
** read; sets are trusted to be as struct tq_idset says). `out` is reset
** first in every case.
*/
int tq_match(const struct tq_view *views, size_t n, const struct tq_resource *r,
	     struct gb_rng *rng, double *weights, uint8_t *verdict,
	     struct tq_result *out);

/*
** tq_match over the views an index left: cand[0..ncand) ascending
** positions in views[0..n) (the views passing the first TQ_FL_NINDEXED
** filters; the caller vouches for that), cut[f] the views outside cand
** that filter f would count (f < TQ_FL_NINDEXED; the others 0). The
** result, draws and counts are exactly tq_match's over all n views;
** `weights` needs ncand doubles; `verdict` (may be NULL) is written for
** the candidates only. Same returns as tq_match, and GB_EINVAL when the
** cut and the candidates do not add up to n.
*/
int tq_match_among(const struct tq_view *views, size_t n, const size_t *cand,
		   size_t ncand, const size_t cut[TQ_NFILTERS],
		   const struct tq_resource *r, struct gb_rng *rng,
		   double *weights, uint8_t *verdict, struct tq_result *out);

/*
** TQ-10: one line saying why nothing was chosen, e.g. "no task queue
** matched: 500 considered; cpu_time excluded 120, site excluded 377,
** banned_site excluded 3" (filters with a zero count left out) or "all 4
** matching task queues are empty". For a chosen job: "matched: 12 task
** queues, 3 at cpu_time 86400 in the lottery". A count of one reads in
** the singular ("matched: 1 task queue, ...", "the 1 matching task queue
** is empty"). Returns snprintf's length (GB_EINVAL when res is NULL).
*/
int tq_result_format(const struct tq_result *res, char *buf, size_t len);

/* Stable code for the no-match reason: "no_tq_matched" or "all_empty";
** "matched" when a job was chosen. */
const char *tq_result_code(const struct tq_result *res);

#endif
