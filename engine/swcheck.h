/*
** swcheck.h — release, cache, container and hardware checks for queues
** whose `releases` is AUTO (rules RC-01..RC-07 of the specification).
**
** A queue publishes what its worker nodes offer (RC-01, the seed's AGLT2
** json: cmtconfigs, containers, cvmfs, architectures, tags); a task asks for
** a software platform, optionally a base platform and CPU/GPU specs packed
** in one `architecture` string (RC-02), plus either a container or a
** release/cache/nightly. rc_check() says whether the queue can run it and,
** when not, records the rule, a reason code and what was compared.
**
** Pure and allocation-free: the parsed architecture lives in a caller-owned
** struct with fixed buffers, so one parse serves a whole decision (the job
** brokerage checks up to thousands of queues per task).
*/
#ifndef GB_SWCHECK_H
#define GB_SWCHECK_H

#include <stddef.h>

#include "decision.h"

#define RC_SPEC_MAX 64 /* longest accepted piece of an architecture string */

/* One hardware dictionary of a queue's `architectures` (RC-01, RC-03). An
** attribute with n == 0 was not published: any task value is accepted. */
struct rc_hw {
	const char *const *arch;   /* cpu only */
	size_t narch;
	const char *const *vendor; /* cpu and gpu */
	size_t nvendor;
	const char *const *instr;  /* cpu only */
	size_t ninstr;
	const char *const *model;  /* gpu only */
	size_t nmodel;
};

/* One entry of a queue's `tags` (RC-01). */
struct rc_tag {
	const char *cmtconfig;
	const char *container_name;
	const char *project;
	const char *release;
	const char *const *sources;
	size_t nsources;
};

/* What a releases=AUTO queue publishes (RC-01). */
struct rc_sw {
	const char *const *cmtconfigs;
	size_t ncmtconfigs;
	const char *const *containers;
	size_t ncontainers;
	const char *const *cvmfs;
	size_t ncvmfs;
	const struct rc_hw *cpu; /* NULL when no "type": "cpu" dictionary */
	const struct rc_hw *gpu; /* NULL when no "type": "gpu" dictionary */
	const struct rc_tag *tags;
	size_t ntags;
};

/*
** RC-02: a task architecture
**   sw_platform<@base_platform><#host_cpu_spec><&host_gpu_spec>
** with cpu spec arch<-vendor<-instr>> and gpu spec vendor<-model>. Absent
** pieces are "" (has_cpu/has_gpu say whether the '#'/'&' part was given).
*/
struct rc_arch {
	char sw_platform[RC_SPEC_MAX];
	char base_platform[RC_SPEC_MAX];
	int has_cpu;
	char cpu_arch[RC_SPEC_MAX];
	char cpu_vendor[RC_SPEC_MAX];
	char cpu_instr[RC_SPEC_MAX];
	int has_gpu;
	char gpu_vendor[RC_SPEC_MAX];
	char gpu_model[RC_SPEC_MAX];
};

/* What kind of software the task uses (RC-06 picks the cvmfs tag by it). */
enum rc_kind {
	RC_RELEASE = 0, /* a standard release or cache: cvmfs tag "atlas" */
	RC_NIGHTLY,     /* a nightly: cvmfs tag "nightlies" */
};

/* The task's software needs. */
struct rc_need {
	struct rc_arch arch;        /* parsed with rc_parse_arch() */
	const char *container_name; /* NULL or "" when no (fat) container */
	int only_tags_fc;           /* onlyTagsForFC (RC-04) */
	const char *sw_project;     /* e.g. "Athena" (RC-07) */
	const char *sw_version;     /* e.g. "21.0.38" (RC-07) */
	enum rc_kind kind;
};

/*
** RC-02: parse `s` into `out`. NULL or "" gives an all-empty spec.
** Returns 0, or GB_EINVAL when a piece is longer than RC_SPEC_MAX - 1 or a
** separator appears twice ("x@a@b", "x#a#b").
*/
int rc_parse_arch(const char *s, struct rc_arch *out);

/*
** RC-03..RC-07: may a queue publishing `sw` run a task needing `need`?
** `all` is the dictionary of the "ALL" pseudo-queue used by RC-05 to resolve
** a container name to its source path (NULL when not published).
** Returns 1 when it may; 0 after dec_reject(c, stage, "RC-0x", code, ...)
** naming the first check that failed. Every published architecture
** dictionary is checked, hardware spec or not (an 'excl' list refuses a
** task asking nothing of it). Reason codes: "cpu" (a cpu spec, no cpu
** dictionary), "cpu_arch", "cpu_vendor", "cpu_instr", "gpu", "gpu_vendor",
** "gpu_model" (RC-03),
** "container_tag" (RC-04), "container" (RC-05), "cvmfs", "platform"
** (RC-06), "release" (RC-07).
*/
int rc_check(const struct rc_need *need, const struct rc_sw *sw,
	     const struct rc_sw *all, struct dec_candidate *c,
	     const char *stage);

/*
** RC-03 for one attribute list: 1 when a queue publishing `list` accepts a
** task asking `want` ("" = not asked). The rules: an empty list or one
** holding "" accepts anything; otherwise a task asking x needs x in the
** list, and a task asking nothing is accepted unless the list holds "excl".
*/
int rc_attr_accepts(const char *const *list, size_t n, const char *want);

#endif
