/*
** whatif.h — what-if on one decision (prefix exw_): a scenario changed by
** NAME=VALUE settings, and what changed between two runs of it.
**
** `gridbroker explain FILE --set NAME=VALUE ...` decides a scenario as it
** is and as changed, and prints the difference; `gridbroker replay` does
** the same for stored decisions, so what is here is pure (no I/O, no
** clock, no globals): a set is a plain struct, a diff lives in the
** caller's arena, the JSON forms are new references for the caller.
**
** NAME, split from VALUE at the first '=' (parameter names hold spaces,
** "DISK_THRESHOLD_MC Reco"; VALUE may hold '='):
**   queue.Q.FIELD       a queue's field: the "queues" element named Q of a
**                       job or analysis scenario, queues{Q} of a timeout
**                       scenario
**   nucleus.N.FIELD     the "nuclei" element named N of a task scenario
**   group.G.FIELD       the "groups" element named G of a match scenario
**   share.G             short for group.G.share
**   tq.ID.FIELD         the "taskQueues" element with "id" ID (match)
**   corrections.PATH    a member of a match scenario's "shareCorrections":
**                       "enabled" and "ShareCorrectorsToStart" directly,
**                       anything else under "WMSHistory", e.g.
**                       corrections.GroupsInstance.WeekSlice.MaxCorrection
**                       or corrections.lhcb_userInstance.MaxGlobalCorrectionFactor
**   anything else       a parameter: params[NAME] of a task, job,
**                       analysis or timeout scenario (a match scenario has
**                       none: its equivalents are the forms above)
** FIELD may be a dotted path into the element ("storage.spaceFree",
** "jobs.MC Simul.running"); a step into an array picks the element whose
** "name" is the step, or the one at that index when the step is a
** number ("storages.UKI-NORTHGRID-MAN-HEP_DATADISK.spaceFree"). Every
** step but the last must exist; the last is set, or added. A name that
** holds dots (a queue "A.B") is found as the longest name that the
** rest of NAME starts with, followed by a dot.
**
** VALUE is a JSON scalar when it parses as one (150000, 2.5, true,
** false, null, "quoted string"), else the string as written (offline).
** What the value means is the scenario parser's business: a change the
** parser refuses (an unknown field, a number out of range) fails when the
** changed scenario is run, with the parser's "PATH: problem".
**
** The diff compares two runs of one scenario (ex_run, explain.h) or two
** records of one decision (a stored one and a re-run): per decision its
** outcome, chosen candidate and digest before and after, and each
** candidate whose verdict, weight or job count changed, with the rule and
** reason code that dropped it before or after. Candidates are a record's
** "candidates" (task, job, analysis), a match scenario's task queues (the
** offline rows: verdict and priority), and a timeout scenario's decisions
** are its jobs (one record per job a rule fires for; a job with a record
** on either side is a decision of the diff, its rule the verdict).
*/
#ifndef GB_WHATIF_H
#define GB_WHATIF_H

#include <stddef.h>

#include <jansson.h>

#include "base/arena.h"
#include "explain/explain.h"

#define EXW_ARG_MAX 512 /* bytes of one NAME=VALUE, NUL included */

enum exw_target {
	EXW_PARAM = 0,   /* params[name] */
	EXW_QUEUE,       /* queue.NAME.FIELD */
	EXW_NUCLEUS,     /* nucleus.NAME.FIELD */
	EXW_GROUP,       /* group.NAME.FIELD, share.NAME */
	EXW_TQ,          /* tq.ID.FIELD */
	EXW_CORRECTION,  /* corrections.PATH */
};

/* One NAME=VALUE, parsed. A plain value: copy it, keep it, no release. */
struct exw_set {
	enum exw_target target;
	/* The element: for EXW_PARAM the parameter's name; for QUEUE,
	** NUCLEUS, GROUP and TQ what NAME holds after the prefix (element
	** name, dot, FIELD path: "AGLT2_UCORE.storage.spaceFree"; share.G is
	** "G.share"); for EXW_CORRECTION the PATH. */
	char path[EXW_ARG_MAX];
	char value[EXW_ARG_MAX]; /* VALUE as written */
	int value_json;          /* 1: VALUE is a JSON scalar, 0: a string */
	char arg[EXW_ARG_MAX];   /* NAME=VALUE as given, for messages */
};

/* "param", "queue", "nucleus", "group", "tq", "corrections". */
const char *exw_target_name(enum exw_target t);

/*
** Parse `arg` ("NAME=VALUE", see the file comment) into *out. Returns 0,
** or GB_EINVAL (no '=', an empty NAME, a form without its element or
** FIELD, such as "queue.X" or "share.", a tq ID that is not a positive
** integer) or GB_ETOOBIG (longer than EXW_ARG_MAX - 1) with err saying
** why. NULL arguments give GB_EINVAL.
*/
int exw_parse_set(const char *arg, struct exw_set *out, char *err,
		  size_t errlen);

/*
** Apply sets[0..n) in order to `scenario` (a parsed scenario file of any
** kind, changed in place; keep a copy, json_deep_copy, to run both).
** Returns 0, or on the first set that cannot apply, with err naming it
** ("set 2 (queue.X.status=offline): ...") and the scenario changed by the
** sets before it and perhaps part of it:
**   GB_EINVAL    the form does not fit the scenario's kind (a queue of a
**                task scenario, a parameter of a match scenario)
**   GB_ENOTFOUND no such queue, nucleus, group or TQ, no such step of
**                FIELD or PATH, an unknown parameter (not in engine
**                params.h's catalogue), no "shareCorrections"
**   GB_ETYPE     a step of FIELD that is not an object or array, an
**                element that is not an object, "params" not an object
**   GB_ENOMEM
*/
int exw_apply(json_t *scenario, const struct exw_set *sets, size_t n,
	      char *err, size_t errlen);

/* What changed, as bits. */
enum {
	EXW_OUTCOME = 1u << 0,    /* the outcome (or whether there is a
				     decision at all: timeout) */
	EXW_CHOSEN = 1u << 1,     /* the chosen candidate */
	EXW_DIGEST = 1u << 2,     /* the record's digest */
	EXW_CANDIDATES = 1u << 3, /* some candidate's verdict, weight or jobs */
};

/* One candidate whose verdict, weight or job count changed; [0] before,
** [1] after. Strings live in the diff's arena. */
struct exw_cand {
	const char *name;        /* nucleus, queue, "TQ <id>" */
	const char *verdict[2];  /* "kept", "dropped at <stage>", a match
				    verdict ("chosen", "lottery entrant",
				    "lower CPU time", "empty", "rejected by
				    <filter>"), "absent" (not in that run's
				    record) */
	double weight[2];        /* weight (TQ: priority); NAN when none */
	long long jobs[2];       /* jobs assigned to it (job and analysis
				    scenarios); -1 elsewhere */
	const char *rule[2];     /* the (first) reason that dropped it, */
	const char *code[2];     /* NULL when it was not dropped */
	const char *detail[2];
};

/* One decision; [0] before, [1] after. */
struct exw_decision {
	const char *subject;     /* task id, pilot id, job id */
	const char *outcome[2];  /* "none" for no decision (a timeout rule
				    that fires on one side only) */
	const char *chosen[2];   /* NULL: none */
	/* the decision's own rule: the analysis throttle's, the timeout
	** rule that fired, TQ-10 with the match's code; NULL when none */
	const char *rule[2];
	const char *code[2];
	const char *detail[2];
	char digest[2][65];      /* "" when no record */
	unsigned changed;        /* EXW_* bits */
	struct exw_cand *cands;  /* the changed ones, in name order (task
				    queues by id) */
	size_t ncands;
};

struct exw_diff {
	enum ex_kind kind;
	struct exw_decision *decisions; /* ndecisions, in the arena */
	size_t ndecisions;
	unsigned changed;               /* every decision's bits OR-ed */
};

/*
** The cheap check a replay loop makes per decision: which of EXW_OUTCOME,
** EXW_CHOSEN and EXW_DIGEST differ between records `b` and `a` (either
** NULL: no decision, outcome "none"). Compares strings only; no
** allocation.
*/
unsigned exw_record_changed(const struct ex_record *b,
			    const struct ex_record *a);

/*
** The diff of one decision from its two records (either NULL: no
** decision on that side) of kind `kind`: outcome, chosen and digest from
** the records, the candidates from their texts (parsed here; for a match
** record, which keeps no task queue, none: exw_diff has them). Strings in
** `ar`. Returns 0, GB_EINVAL (NULL out or ar, both records NULL),
** GB_EDECODE (a text that is not JSON) or GB_ENOMEM.
*/
int exw_diff_records(enum ex_kind kind, const struct ex_record *b,
		     const struct ex_record *a, struct arena *ar,
		     struct exw_decision *out);

/*
** The diff of two runs, `b` of the scenario and `a` of it changed, into
** *out (arrays and strings in `ar`). Both runs must be of one kind and,
** for a timeout scenario, of the same jobs. Returns 0, GB_EINVAL (NULL
** arguments, kinds or jobs that differ; err says which) or what
** exw_diff_records returns.
*/
int exw_diff(const struct ex_result *b, const struct ex_result *a,
	     struct arena *ar, struct exw_diff *out, char *err, size_t errlen);

/*
** The diff as JSON: {"kind", "changed": {"outcome", "chosen", "digest",
** "candidates"} (booleans), "decisions": [{"subject", "changed": {...},
** "before": {"outcome", "chosen", "rule", "code", "detail", "digest"},
** "after": {...}, "candidates": [{"name", "before": {"verdict",
** "weight", "jobs", "rule", "code", "detail"}, "after": {...}}]}]}
** (null for what a side has none of; "jobs" only for job and analysis
** scenarios). A new reference, NULL when out of memory or given NULL.
*/
json_t *exw_diff_json(const struct exw_diff *d);

/*
** The sets as JSON: [{"set": NAME=VALUE as given, "target" (exw_target_name),
** "path", "value" (the JSON scalar or string applied)}]. A new reference,
** NULL when out of memory.
*/
json_t *exw_sets_json(const struct exw_set *sets, size_t n);

/*
** The what-if section `explain --set` prints after the original
** decision, as text (malloc'd, for free(); NULL when out of memory):
** a title, one line per set, then per decision "<kind> <subject>:" with
** outcome, chosen and digest before -> after (or "(unchanged)"), its own
** rule when either side has one, and each changed candidate: its verdict,
** weight and jobs before -> after with the rule and code that dropped it,
** and the rule's detail under it. A timeout scenario lists the jobs whose
** decision changed and counts the others. A decision is named by its
** kind (ex_kind_name: "task", "jobs", ...; a timeout's "job") and subject.
*/
char *exw_render(const struct exw_set *sets, size_t n,
		 const struct exw_diff *d);

/* A rule's (and reason code's) drops in one record. */
struct exw_drop {
	char rule[16];  /* "PJ-04", "TQ-06", "TO-03" */
	char code[48];  /* "status", "site"; "" when the record has none */
	long count;
};

/*
** Count what dropped candidates in `record` (a stored record, parsed),
** by rule and reason code, into out[0..cap), pairs in the order first met;
** *n says how many. A candidate counts once, for its first reason (the
** rule that dropped it); a truncated record's aggregated "rejected" rows
** count with their counts; a match record, which keeps no candidates,
** counts its stages' cuts (one filter a stage); a timeout record counts 1
** for the rule that fired (code ""), an analysis record the throttle
** stopped 1 for the throttle's rule and code. Returns 0, GB_EINVAL (NULL
** arguments) or GB_ETOOBIG when there are more than cap pairs (the first
** cap are filled, *n is cap).
*/
int exw_drops_by_rule(const json_t *record, struct exw_drop *out, size_t cap,
		      size_t *n);

/* The same from a record's text; GB_EDECODE when it is not JSON. */
int exw_drops_by_rule_text(const char *text, struct exw_drop *out, size_t cap,
			   size_t *n);

#endif
