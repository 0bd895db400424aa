/*
** taskbroker.h — production task brokerage: choose a nucleus for a task
** (rules TB-01..TB-13 and FC-01..FC-07 of the specification).
**
** Pure: the caller passes a snapshot of the nuclei (with their storages and
** local replicas), the task, the resolved parameters and a seeded generator;
** the engine fills a struct dec_decision. Filters are rows of a static table
** (tb_filters[]), each with its name and rule ID, so `explain`, the decision
** record and the tests all see the same list.
**
** Units are the scenario's: sizes in GB, IO intensity in kB/s, files.
*/
#ifndef GB_TASKBROKER_H
#define GB_TASKBROKER_H

#include <stddef.h>

#include "decision.h"
#include "params.h"
#include "rng.h"

#define TB_RW_OFFSET 50.0      /* TB-10/11: minimum RW in the weight */
#define TB_TAPE_WEIGHT 0.001   /* TB-10/11: weight factor for tape input */
#define TB_PENDING_RETRY_S 1800 /* TB-13: a pending task is retried after 30 min */

/* FC-01: the nucleus's bareNucleus attribute. */
enum tb_bare {
	TB_BARE_NO = 0, /* "" : a normal nucleus */
	TB_BARE_ONLY,   /* "only": accepts only full-chain tasks */
	TB_BARE_ALLOW,  /* "allow": accepts full-chain and normal tasks */
};

/* The task's fullChain parameter. */
enum tb_fullchain {
	TB_FC_NONE = 0, /* null: a normal task */
	TB_FC_ONLY,
	TB_FC_REQUIRE,
	TB_FC_CAPABLE,
};

/* FC-06/FC-07: which queues the job brokerage may use for a placed task. */
enum tb_job_scope {
	TB_SCOPE_SATELLITES = 0, /* the nucleus's queues and its satellites' */
	TB_SCOPE_NUCLEUS_ONLY,   /* only queues associated with the nucleus */
};

struct tb_storage {
	const char *name;
	double space_free;    /* GB */
	double space_expired; /* GB, secondary data that may be deleted */
	double space_total;   /* GB */
	int tape;             /* a tape endpoint (not an output disk) */
	int blacklisted;      /* unusable for writing */
};

/* What of one dataset a nucleus holds locally. */
struct tb_replica {
	const char *dataset;
	double size; /* GB available locally */
	long files;  /* files available locally */
};

struct tb_nucleus {
	const char *name;
	const char *status;      /* seed words: "ACTIVE", "OFFLINE", ... */
	enum tb_bare bare;       /* bareNucleus */
	long transfer_backlog;   /* files queued towards the nucleus */
	double rw;               /* remaining work already assigned (RW) */
	const struct tb_storage *storages;
	size_t nstorages;
	const struct tb_replica *local;
	size_t nlocal;
};

struct tb_dataset {
	const char *name;
	int primary;  /* the primary (master) input */
	double size;  /* GB */
	long files;
	int on_tape;  /* the input is on tape */
};

struct tb_task {
	long long task_id;
	const char *gshare;
	long priority;            /* taskPriority */
	double io_intensity;      /* kB/s */
	double t1_weight;
	int input_prestaging;     /* inputPreStaging */
	int broker_on_master;     /* taskBrokerOnMaster */
	enum tb_fullchain full_chain;
	const char *parent_nucleus; /* NULL or "" when none */
	double norm_exp_out_size; /* normalizedExpOutSize, GB */
	const struct tb_dataset *datasets;
	size_t ndatasets;
};

/* Parameters resolved once per decision (gshare suffixes applied). */
struct tb_params {
	double nqueued_nuc_cap;        /* NQUEUED_NUC_CAP, files */
	double disk_threshold;         /* DISK_THRESHOLD[_<gshare>], GB */
	double input_size_threshold;   /* GB */
	double input_size_fraction;    /* % */
	double input_num_threshold;    /* files */
	double input_num_fraction;     /* % */
	double min_io_local;           /* MIN_IO_INTENSITY_WITH_LOCAL_DATA, kB/s */
	double min_input_size_local;   /* MIN_INPUT_SIZE_WITH_LOCAL_DATA, GB */
	double max_prio_local;         /* MAX_TASK_PRIO_WITH_LOCAL_DATA */
};

/* One filter of the table. `fn` returns 1 to keep, 0 after dec_reject(). */
struct tb_ctx;
struct tb_filter {
	const char *name; /* stage name, e.g. "space" */
	const char *rule; /* main rule ID, e.g. "TB-04" */
	int (*fn)(const struct tb_ctx *ctx, const struct tb_nucleus *n,
		  struct dec_candidate *c);
};

/* The filter table, terminated by a row with name == NULL. */
extern const struct tb_filter tb_filters[];

/* Fill `out` from the parameter set, applying the task's gshare suffix. */
void tb_params_resolve(const struct prm_set *set, const char *gshare,
		       struct tb_params *out);

/*
** Run the task brokerage.
**
** `cands` must have `nnuclei` slots; on return cands[i] describes nuclei[i]
** (name, weight or reasons) and `out` holds the stages and the outcome:
** DEC_ASSIGNED with out->chosen the index of the chosen nucleus, or
** DEC_PENDING with retry_after_s = TB_PENDING_RETRY_S (TB-13).
** Returns 0, or GB_EINVAL for NULL pointers or a negative/NaN size.
*/
int tb_broker(const struct tb_task *task, const struct tb_nucleus *nuclei,
	      size_t nnuclei, const struct tb_params *params,
	      struct gb_rng *rng, struct dec_candidate *cands,
	      struct dec_decision *out);

/* FC-06/FC-07: the job brokerage scope of a task placed on a nucleus. */
enum tb_job_scope tb_job_scope(enum tb_fullchain fc, enum tb_bare nucleus);

/* Parse/print the enums with the seed's words. Parsers return -1 if unknown. */
int tb_bare_parse(const char *s);
const char *tb_bare_name(enum tb_bare b);
int tb_fullchain_parse(const char *s); /* NULL or "" -> TB_FC_NONE */
const char *tb_fullchain_name(enum tb_fullchain f); /* TB_FC_NONE -> NULL */
const char *tb_job_scope_name(enum tb_job_scope s);

#endif
