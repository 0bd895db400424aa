/*
** dirac_json.h — the DIRAC side's JSON (prefix dj_): the group and
** share-correction configuration with the CPU segments (the top level of
** a grid file for `gridbroker grid load`, and of a match scenario), a job
** for job.submit, and a pilot's resource description for pilot.match.
**
** The configuration is the seed's CS section (dirac-priority-schema) in
** JSON, keeping DIRAC's option names so a CS dump reads across:
**   "groups": [{"name": "lhcb_user", "share": 10000, "jobSharing": false}],
**   "shareCorrections": {"enabled": true,
**     "ShareCorrectorsToStart": ["WMSHistory"],
**     "WMSHistory": {"GroupsInstance": {"MaxGlobalCorrectionFactor": 3,
**        "WeekSlice": {"TimeSpan": 604800, "Weight": 80,
**                      "MaxCorrection": 2}, ...},
**      "lhcb_userInstance": {"Group": "lhcb_user", ...}}},
**   "cpuSegments": [500, 5000, 50000, 300000]
** Jobs and pilots use the message field names of codec_tq.h (jobID,
** ownerDN, ownerGroup, setup, cpuTime, userPriority, sites, ...), so what a
** file says is what goes on the wire.
**
** Parsing is strict like scenario_jobs.c's and for the same reason: these
** files are written by people, and a typo such as "bannedSite" must not
** silently mean "no requirement". Unknown fields are errors; every value's
** type and range is checked against the decoder's limits (CDT_MAX_*), so
** whatever `tq submit` accepts the worker accepts; every error is
** "PATH: problem" with the JSON path, e.g.
** "shareCorrections.WMSHistory.GroupsInstance.WeekSlice.Weight: expected a
** number > 0, got 0". Strings and arrays are copied into the caller's
** arena, so results outlive the json_t.
*/
#ifndef GB_DIRAC_JSON_H
#define GB_DIRAC_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "base/arena.h"
#include "codec/codec_tq.h"
#include "priority.h"
#include "taskqueue.h"

#define DJ_MAX_GROUPS 1000     /* entries of "groups" */
#define DJ_MAX_JOBS 1000000    /* jobs of one file (`tq submit` chunks them) */
#define DJ_MAX_PILOTS 10000    /* pilots of one file (`pilot match`) */

/* The DIRAC configuration of a grid file or scenario. */
struct dj_config {
	/* groups and instances in the arena; default_share is
	** PR_DEFAULT_SHARE (DIRAC's DEFAULT_GROUP_SHARE); corrections is set
	** when "enabled" is true and WMSHistory is among the correctors to
	** start (the only corrector there is, PR-04) */
	struct pr_config pr;
	long long *seg; /* cpuSegments (tq_segments_valid), in the arena;
			   tq_default_segments when the file has none */
	size_t nseg;
	int started;    /* WMSHistory listed in ShareCorrectorsToStart */
};

/* 1 when `root` is an object with "groups", "shareCorrections" or
** "cpuSegments", else 0. */
int dj_has_config(json_t *root);

/*
** Parse the three configuration keys of object `root` (each optional;
** other top-level keys are the caller's business). Rules checked with
** their paths: group names unique and non-empty, share > 0; "enabled"
** required in "shareCorrections"; ShareCorrectorsToStart a string or an
** array of them, each "WMSHistory"; per instance "Group" (optional),
** "MaxGlobalCorrectionFactor" (or the name DIRAC's code reads,
** "MaxGlobalCorrection"; one of them, >= 1, default 5 as in DIRAC's code)
** and 1..PR_MAX_SLICES slices, each an object {TimeSpan (integer > 0,
** default 604800), Weight (> 0, default 1), MaxCorrection (>= 1, default
** 3)}; at most one instance between groups and one per group; segments
** 1..TQ_MAX_SEGMENTS positive integers up to CDT_MAX_CPU, strictly
** increasing. Weights are stored as written (pr_correct normalises them).
** Finally pr_config_check. Returns 0 or GB_E* with "PATH: problem" in err
** (GB_EDUP for a repeated group or a second instance for the same
** entities, GB_EINVAL for an unknown field).
*/
int dj_parse_config(json_t *root, struct arena *a, struct dj_config *out,
		    char *err, size_t errlen);

/*
** The requirement keys a job and a scenario's task queue share (ownerDN,
** ownerGroup, setup, cpuTime and the tq_field_names sets), NULL-ended:
** for callers that check unknown keys themselves before
** dj_parse_requirements.
*/
extern const char *const dj_requirement_keys[];

/*
** Parse the requirement keys of `obj` (at `path`) into out->owner,
** owner_group, setup, cpu_time (required; cpuTime 1..CDT_MAX_CPU raw
** seconds) and out->set[] (each optional, at most CDT_MAX_SET non-empty
** strings, normalised with tq_strset_normalise); other keys of obj are
** not looked at and other members of *out are not touched. Returns 0 or
** GB_E* with err.
*/
int dj_parse_requirements(json_t *obj, const char *path, struct arena *a,
			  struct cdt_job *out, char *err, size_t errlen);

/*
** Parse one job object: jobID (required, > 0), userPriority
** (TQ_MIN_PRIORITY..TQ_MAX_PRIORITY, default 1), "description" (ignored)
** and the requirement keys. Returns 0 or GB_E* with err; *out is written
** only on success.
*/
int dj_parse_job(json_t *obj, const char *path, struct arena *a,
		 struct cdt_job *out, char *err, size_t errlen);

/*
** An array of 1..DJ_MAX_JOBS job objects with distinct jobIDs (the
** duplicate is GB_EDUP at "path[i].jobID") into an arena array.
*/
int dj_parse_jobs(json_t *arr, const char *path, struct arena *a,
		  struct cdt_job **out, size_t *n, char *err, size_t errlen);

/*
** Parse a pilot object: pilotID (optional here, NULL when absent: a caller
** that sends it must fill one in), setup, cpuTime (1..CDT_MAX_CPU), site
** (required), gridCE, platform, pilotType, ownerGroup, ownerDN (optional;
** ownerDN without ownerGroup is GB_EMISSING at "PATH.ownerGroup", as the
** decoder says), "description" (ignored). Returns 0 or GB_E* with err.
*/
int dj_parse_pilot(json_t *obj, const char *path, struct arena *a,
		   struct cdt_pilot *out, char *err, size_t errlen);

/* A group of the configuration by name, NULL when it has none (then it has
** the default share and no JOB_SHARING). */
const struct pr_group *dj_group(const struct pr_config *cfg,
				const char *name);

#endif
