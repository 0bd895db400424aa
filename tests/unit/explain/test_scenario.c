/*
** test_scenario.c — scenario and grid files, RFC 3339 times, and the
** rendering of decisions (JSON, and the record's text).
**
** Runs with the repository root as working directory (ctest sets it), so the
** example files are read from etc/. Every file in etc/scenarios/ must parse,
** and each is run through tb_broker to check the outcome it was written to
** show; the sample grid and tasks are checked the same way. Error messages
** are checked as a table of {patch applied to a small valid scenario,
** expected error code and message}.
*/
#include "gbtest.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "decision.h"
#include "gb_error.h"
#include "params.h"
#include "rng.h"
#include "explain/scenario.h"
#include "model/decide.h"
#include "report/record.h"
#include "report/render.h"
#include "report/report.h"
#include "taskbroker.h"
#include "base/timefmt.h"

#define ARENA_CAP (64u << 20)

/* ---- helpers ------------------------------------------------------------- */

/*
** Apply one patch to `root`: `path` like "nuclei[3].storages[0].spaceFree";
** `value` JSON text, or NULL to delete the field. An index equal to the
** array's size appends.
*/
static void apply_patch(json_t *root, const char *path, const char *value)
{
	char buf[160];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *cur = root;
	json_t *v = NULL;
	if (value) {
		json_error_t e;
		v = json_loads(value, JSON_DECODE_ANY, &e);
		if (v == NULL)
			fail_msg("bad patch value %s: %s", value, e.text);
	}
	char *save = NULL;
	char *part = strtok_r(buf, ".", &save);
	while (part) {
		char *next = strtok_r(NULL, ".", &save);
		char *br = strchr(part, '[');
		long idx = -1;
		if (br) {
			idx = strtol(br + 1, NULL, 10);
			*br = '\0';
		}
		if (next == NULL && idx < 0) {
			if (v)
				json_object_set_new(cur, part, v);
			else
				json_object_del(cur, part);
			return;
		}
		cur = json_object_get(cur, part);
		assert_non_null(cur);
		if (idx >= 0) {
			if (next == NULL) {
				assert_non_null(v);
				if ((size_t)idx == json_array_size(cur))
					json_array_append_new(cur, v);
				else
					json_array_set_new(cur, (size_t)idx, v);
				return;
			}
			cur = json_array_get(cur, (size_t)idx);
			assert_non_null(cur);
		}
		part = next;
	}
}

static json_t *load_text(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
			       &e);
	if (j == NULL)
		fail_msg("bad test JSON: %s", e.text);
	return j;
}

static int in_list(const char *name, const char *list)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

static size_t list_len(const char *list)
{
	if (list == NULL || *list == '\0')
		return 0;
	size_t n = 1;
	for (const char *p = list; *p; p++)
		n += *p == ',';
	return n;
}

/* Run the engine as `gridbroker explain` does. */
static int broker(const struct tb_task *task, const struct tb_nucleus *nuclei,
		  size_t n, const struct prm_kv *kv, size_t nkv, uint64_t seed,
		  struct arena *a, struct dec_decision *d)
{
	struct prm_set set = {kv, nkv};
	struct tb_params p;
	tb_params_resolve(&set, task->gshare, &p);
	struct gb_rng rng;
	gb_rng_seed(&rng, seed);
	struct dec_candidate *cands = n ? arena_alloc(a, n * sizeof(*cands))
					: NULL;
	if (n)
		assert_non_null(cands);
	return tb_broker(task, nuclei, n, &p, &rng, cands, d);
}

struct expect {
	const char *what;      /* file name or task */
	enum dec_outcome outcome;
	const char *survivors; /* exact set, comma-separated ("" none) */
	const char *chosen;    /* allowed choices; NULL: any survivor */
	const char *drops;     /* "NAME:RULE,..." first reason's rule */
	const char *stage;     /* a stage rule that must appear, or NULL */
	const char *note;      /* prefix of the note, or NULL */
};

static void check_decision(const struct expect *x, const struct dec_decision *d)
{
	if (d->outcome != x->outcome)
		fail_msg("%s: outcome %s, want %s", x->what,
			 dec_outcome_name(d->outcome),
			 dec_outcome_name(x->outcome));
	size_t alive = 0;
	for (size_t i = 0; i < d->ncands; i++) {
		const struct dec_candidate *c = &d->cands[i];
		int surv = in_list(c->name, x->survivors);
		if (surv == dec_dropped(c))
			fail_msg("%s: %s is %s", x->what, c->name,
				 surv ? "dropped but should survive"
				      : "alive but should be dropped");
		if (!surv) {
			/* every dropped candidate says why */
			assert_true(c->nreasons > 0);
			assert_non_null(c->reasons[0].rule);
		} else {
			alive++;
			assert_true(isfinite(c->weight));
		}
	}
	assert_int_equal(alive, list_len(x->survivors));
	if (x->outcome == DEC_ASSIGNED) {
		assert_true(d->chosen >= 0 && (size_t)d->chosen < d->ncands);
		const char *name = d->cands[d->chosen].name;
		const char *allowed = x->chosen ? x->chosen : x->survivors;
		if (!in_list(name, allowed))
			fail_msg("%s: chose %s, want one of %s", x->what, name,
				 allowed);
	} else {
		assert_int_equal(d->chosen, -1);
		assert_int_equal(d->retry_after_s, TB_PENDING_RETRY_S);
	}
	char buf[64];
	for (const char *p = x->drops; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		snprintf(buf, sizeof(buf), "%.*s", (int)len, p);
		char *colon = strchr(buf, ':');
		assert_non_null(colon);
		*colon = '\0';
		int found = 0;
		for (size_t i = 0; i < d->ncands; i++) {
			if (strcmp(d->cands[i].name, buf) != 0)
				continue;
			found = 1;
			if (!dec_dropped(&d->cands[i]) ||
			    strcmp(d->cands[i].reasons[0].rule, colon + 1))
				fail_msg("%s: %s not dropped by %s", x->what,
					 buf, colon + 1);
		}
		if (!found)
			fail_msg("%s: no candidate %s", x->what, buf);
		p = comma ? comma + 1 : NULL;
	}
	if (x->stage) {
		int found = 0;
		for (size_t i = 0; i < d->nstages; i++)
			found |= strcmp(d->stages[i].rule, x->stage) == 0;
		if (!found)
			fail_msg("%s: no %s stage", x->what, x->stage);
	}
	if (x->note && strncmp(d->note, x->note, strlen(x->note)) != 0)
		fail_msg("%s: note '%s', want '%s...'", x->what, d->note,
			 x->note);
}

/* ---- etc/scenarios --------------------------------------------------------- */

static const struct expect scenario_expect[] = {
	{"task-assign.json", DEC_ASSIGNED,
	 "CERN-PROD,BNL-ATLAS,FZK-LCG2,AGLT2", NULL,
	 "TAIWAN-LCG2:TB-01,UKI-NORTHGRID-MAN-HEP:TB-04,INFN-T1:TB-07", NULL,
	 NULL},
	{"task-pending.json", DEC_PENDING, "", NULL,
	 "TAIWAN-LCG2:TB-01,LRZ-LMU:FC-05,TRIUMF-LCG2:TB-02,SWT2_CPB:TB-03,"
	 "UKI-SCOTGRID-GLASGOW:TB-04,CERN-PROD:TB-07,RAL-LCG2:TB-07,"
	 "SARA-MATRIX:TB-07",
	 NULL, NULL},
	{"task-locality-relaxed.json", DEC_ASSIGNED,
	 "NIKHEF-ELPROD,PIC,praguelcg2,IFIC-LCG2,GRIF,BEIJING-LCG2", NULL, "",
	 "TB-09", "TB-09"},
	{"task-full-chain-capable.json", DEC_ASSIGNED, "DESY-HH", "DESY-HH",
	 "LRZ-LMU:FC-04,MWT2:FC-04,CERN-PROD:FC-04,BNL-ATLAS:FC-04", NULL,
	 "FC-04"},
	{"task-full-chain-only.json", DEC_ASSIGNED, "LRZ-LMU", "LRZ-LMU",
	 "DESY-HH:FC-02,MWT2:FC-02,BNL-ATLAS:FC-02,CERN-PROD:FC-02", NULL,
	 NULL},
};

static int parse_file(const char *path, struct arena *a,
		      struct scn_task_scenario *sc, json_t **root)
{
	char err[512] = "";
	*root = scn_read_file(path, err, sizeof(err));
	if (*root == NULL)
		fail_msg("%s", err);
	int rc = scn_parse_task_scenario(*root, a, sc, err, sizeof(err));
	if (rc != GB_OK)
		fail_msg("%s: %s", path, err);
	return rc;
}

/* Every task scenario (task-*.json) in etc/scenarios/ parses and is
** described by the table; job scenarios are test_scenario_jobs.c's. */
static void test_scenario_files_parse(void **state)
{
	(void)state;
	DIR *dir = opendir("etc/scenarios");
	assert_non_null(dir);
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0 ||
		    strncmp(de->d_name, "task-", 5) != 0)
			continue;
		char path[512];
		snprintf(path, sizeof(path), "etc/scenarios/%s", de->d_name);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scn_task_scenario sc;
		json_t *root;
		parse_file(path, &a, &sc, &root);
		assert_true(sc.now > 0);
		assert_true(sc.task.task_id > 0);
		json_t *descr = json_object_get(root, "description");
		assert_true(json_is_string(descr));
		json_decref(root);
		arena_free(&a);
		n++;
	}
	closedir(dir);
	assert_true(n >= 4);
}

/* Each example scenario decides as it says it does. */
static void test_scenario_outcomes(void **state)
{
	(void)state;
	for (size_t i = 0;
	     i < sizeof(scenario_expect) / sizeof(scenario_expect[0]); i++) {
		const struct expect *x = &scenario_expect[i];
		char path[256];
		snprintf(path, sizeof(path), "etc/scenarios/%s", x->what);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scn_task_scenario sc;
		json_t *root;
		parse_file(path, &a, &sc, &root);
		struct dec_decision d;
		assert_int_equal(broker(&sc.task, sc.nuclei, sc.nnuclei,
					sc.params, sc.nparams, sc.seed, &a, &d),
				 GB_OK);
		check_decision(x, &d);

		/* The JSON has every nucleus once, with weight or reasons. */
		json_t *j = rpt_decision_json(&d);
		assert_non_null(j);
		json_t *cands = json_object_get(j, "candidates");
		assert_int_equal(json_array_size(cands), sc.nnuclei);
		for (size_t k = 0; k < sc.nnuclei; k++) {
			json_t *c = json_array_get(cands, k);
			json_t *w = json_object_get(c, "weight");
			json_t *r = json_object_get(c, "reasons");
			assert_string_equal(
				json_string_value(json_object_get(c, "name")),
				sc.nuclei[k].name);
			if (json_is_null(w))
				assert_true(json_array_size(r) >= 1);
			else
				assert_int_equal(json_array_size(r), 0);
		}
		json_decref(j);
		json_decref(root);
		arena_free(&a);
	}
}

/* ---- etc/grid-sample.json x etc/tasks-sample.json ---------------------------- */

#define ALL_NORMAL                                                          \
	"CERN-PROD,BNL-ATLAS,FZK-LCG2,IN2P3-CC,INFN-T1,NIKHEF-ELPROD,PIC,"  \
	"RAL-LCG2,SARA-MATRIX,AGLT2,MWT2,DESY-HH,UKI-NORTHGRID-MAN-HEP,"    \
	"praguelcg2,IFIC-LCG2,BEIJING-LCG2,GRIF"

static const struct {
	long long task_id;
	struct expect x;
} sample_expect[] = {
	{36100001, {"ordinary", DEC_ASSIGNED,
		    "CERN-PROD,BNL-ATLAS,FZK-LCG2,AGLT2", NULL,
		    "INFN-T1:TB-07,TAIWAN-LCG2:TB-01,LRZ-LMU:FC-05,"
		    "NDGF-T1:TB-02,SWT2_CPB:TB-03,UKI-SCOTGRID-GLASGOW:TB-04",
		    NULL, NULL}},
	{36100002, {"taskBrokerOnMaster", DEC_ASSIGNED,
		    "CERN-PROD,BNL-ATLAS,FZK-LCG2,AGLT2", NULL, NULL, NULL,
		    NULL}},
	{36100003, {"inputPreStaging", DEC_ASSIGNED, ALL_NORMAL,
		    "CERN-PROD,BNL-ATLAS", NULL, NULL, NULL}},
	{36100004, {"huge input, high IO", DEC_ASSIGNED,
		    "RAL-LCG2,SARA-MATRIX", NULL, "IN2P3-CC:TB-07", NULL,
		    NULL}},
	{36100005, {"fullChain only", DEC_ASSIGNED, "LRZ-LMU", NULL,
		    "DESY-HH:FC-02,MWT2:FC-02", NULL, NULL}},
	{36100006, {"fullChain require", DEC_ASSIGNED,
		    "LRZ-LMU,MWT2,DESY-HH", NULL, "CERN-PROD:FC-03", NULL,
		    NULL}},
	{36100007, {"fullChain capable", DEC_ASSIGNED, "DESY-HH", NULL,
		    "MWT2:FC-04", NULL, "FC-04"}},
	{36100008, {"t1Weight < 0", DEC_ASSIGNED, "NDGF-T1", NULL,
		    "PIC:TB-07,TRIUMF-LCG2:TB-07", NULL, NULL}},
	{36100009, {"impossible", DEC_PENDING, "", NULL,
		    "CERN-PROD:TB-07,TRIUMF-LCG2:TB-02", NULL, NULL}},
	{36100010, {"no input", DEC_ASSIGNED, ALL_NORMAL, NULL, NULL, NULL,
		    NULL}},
	{36100011, {"high priority", DEC_ASSIGNED, ALL_NORMAL, NULL, NULL,
		    "TB-09", "TB-"}},
};

static void test_sample_grid_and_tasks(void **state)
{
	(void)state;
	char err[512] = "";
	struct arena a;
	arena_init(&a, ARENA_CAP);
	json_t *grid = scn_read_file("etc/grid-sample.json", err, sizeof(err));
	if (grid == NULL)
		fail_msg("%s", err);
	struct tb_nucleus *nuclei = NULL;
	size_t n = 0;
	int rc = scn_parse_nuclei(json_object_get(grid, "nuclei"), "nuclei",
				  &a, &nuclei, &n, err, sizeof(err));
	if (rc != GB_OK)
		fail_msg("grid: %s", err);
	assert_true(n >= 24);
	json_t *tasks = scn_read_file("etc/tasks-sample.json", err,
				      sizeof(err));
	if (tasks == NULL)
		fail_msg("%s", err);
	assert_true(json_array_size(tasks) >= 8);
	size_t checked = 0;
	for (size_t i = 0; i < json_array_size(tasks); i++) {
		struct tb_task t;
		rc = scn_parse_task(json_array_get(tasks, i), "tasks", &a, &t,
				    err, sizeof(err));
		if (rc != GB_OK)
			fail_msg("task %zu: %s", i, err);
		/* what `task submit` sends is what the worker accepts */
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cod_encode_task(&t, &sb), GB_OK);
		struct tb_task back;
		struct cod_error cerr;
		assert_int_equal(cod_decode_task(sb.data, sb.size, &a, &back,
						 &cerr),
				 GB_OK);
		msgpack_sbuffer_destroy(&sb);

		for (size_t k = 0;
		     k < sizeof(sample_expect) / sizeof(sample_expect[0]);
		     k++) {
			if (sample_expect[k].task_id != back.task_id)
				continue;
			struct dec_decision d;
			assert_int_equal(broker(&back, nuclei, n, NULL, 0,
						(uint64_t)back.task_id, &a, &d),
					 GB_OK);
			check_decision(&sample_expect[k].x, &d);
			checked++;
		}
	}
	assert_int_equal(checked,
			 sizeof(sample_expect) / sizeof(sample_expect[0]));
	json_decref(tasks);
	json_decref(grid);
	arena_free(&a);
}

/* ---- error messages ---------------------------------------------------------- */

static const char *base_scenario =
	"{\"now\": \"2024-05-14T08:30:00Z\", \"seed\": 1,"
	" \"params\": {\"NQUEUED_NUC_CAP\": 1500},"
	" \"nuclei\": ["
	"  {\"name\": \"A\", \"status\": \"ACTIVE\", \"bareNucleus\": \"\","
	"   \"transferBacklog\": 10, \"RW\": 100,"
	"   \"storages\": [{\"name\": \"A_DATADISK\", \"spaceFree\": 500000,"
	"     \"spaceExpired\": 0, \"spaceTotal\": 1000000, \"tape\": false,"
	"     \"blacklisted\": false}],"
	"   \"local\": {\"ds.A\": {\"size\": 10, \"files\": 5}}},"
	"  {\"name\": \"B\", \"status\": \"ACTIVE\","
	"   \"storages\": [{\"name\": \"B_DATADISK\", \"spaceFree\": 500000,"
	"     \"spaceTotal\": 1000000}]},"
	"  {\"name\": \"C\", \"status\": \"OFFLINE\", \"storages\": []},"
	"  {\"name\": \"D\", \"status\": \"ACTIVE\", \"bareNucleus\": \"allow\","
	"   \"storages\": [{\"name\": \"D_DATADISK\", \"spaceFree\": 200000,"
	"     \"spaceTotal\": 900000}, {\"name\": \"D_TAPE\","
	"     \"spaceFree\": 1, \"spaceTotal\": 2, \"tape\": true}]}],"
	" \"task\": {\"taskID\": 1, \"gshare\": \"MC\", \"taskPriority\": 500,"
	"   \"inputDatasets\": [{\"name\": \"ds.A\", \"size\": 10,"
	"     \"files\": 5}]}}";

static void test_scenario_valid_base(void **state)
{
	(void)state;
	json_t *root = load_text(base_scenario);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scn_task_scenario sc;
	char err[256] = "";
	assert_int_equal(scn_parse_task_scenario(root, &a, &sc, err,
						 sizeof(err)),
			 GB_OK);
	assert_int_equal(sc.now, 1715675400);
	assert_int_equal(sc.seed, 1);
	assert_int_equal(sc.nparams, 1);
	assert_string_equal(sc.params[0].name, "NQUEUED_NUC_CAP");
	assert_near(sc.params[0].value, 1500, 0);
	assert_int_equal(sc.nnuclei, 4);
	/* defaults */
	assert_int_equal(sc.nuclei[1].bare, TB_BARE_NO);
	assert_int_equal(sc.nuclei[1].transfer_backlog, 0);
	assert_near(sc.nuclei[1].rw, 0, 0);
	assert_int_equal(sc.nuclei[1].nlocal, 0);
	assert_near(sc.nuclei[1].storages[0].space_expired, 0, 0);
	assert_false(sc.nuclei[1].storages[0].tape);
	assert_int_equal(sc.nuclei[2].nstorages, 0);
	assert_int_equal(sc.nuclei[3].bare, TB_BARE_ALLOW);
	assert_true(sc.nuclei[3].storages[1].tape);
	assert_int_equal(sc.nuclei[0].nlocal, 1);
	assert_string_equal(sc.nuclei[0].local[0].dataset, "ds.A");
	assert_int_equal(sc.nuclei[0].local[0].files, 5);
	assert_int_equal(sc.task.full_chain, TB_FC_NONE);
	assert_null(sc.task.parent_nucleus);
	json_decref(root); /* the result must not point into the JSON */
	assert_string_equal(sc.nuclei[3].storages[1].name, "D_TAPE");
	assert_string_equal(sc.task.datasets[0].name, "ds.A");
	arena_free(&a);
}

static void test_scenario_errors(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value; /* value NULL: delete */
		int rc;
		const char *msg;
	} cases[] = {
		{"now", NULL, GB_EMISSING, "now: missing"},
		{"now", "\"yesterday\"", GB_ERANGE,
		 "now: expected an RFC 3339 time such as "
		 "2024-05-14T08:30:00Z, got 'yesterday'"},
		{"now", "\"2024-02-30T00:00:00Z\"", GB_ERANGE,
		 "now: expected an RFC 3339 time"},
		{"now", "5", GB_ETYPE, "now: expected string, got integer"},
		{"seed", NULL, GB_EMISSING, "seed: missing"},
		{"seed", "-1", GB_ERANGE,
		 "seed: expected an integer >= 0, got -1"},
		{"seed", "1.5", GB_ETYPE, "seed: expected integer, got real"},
		{"extra", "1", GB_EINVAL, "extra: unknown field"},
		{"params", "[]", GB_ETYPE, "params: expected object, got array"},
		{"params.FOO", "1", GB_ENOTFOUND, "params.FOO: unknown parameter"},
		{"params.INPUT_SIZE_FRACTION", "150", GB_ERANGE,
		 "params.INPUT_SIZE_FRACTION: 150 is out of range [0, 100] %"},
		{"params.NW_ACTIVE", "2", GB_ERANGE,
		 "params.NW_ACTIVE: expected 0 or 1, got 2"},
		{"params.DISK_THRESHOLD", "null", GB_ERANGE,
		 "params.DISK_THRESHOLD: null (unset) is not allowed"},
		{"params.NQUEUED_NUC_CAP", "\"x\"", GB_ETYPE,
		 "params.NQUEUED_NUC_CAP: expected a number, got string"},
		{"nuclei", NULL, GB_EMISSING, "nuclei: missing"},
		{"nuclei", "{}", GB_ETYPE, "nuclei: expected array, got object"},
		{"nuclei[2]", "7", GB_ETYPE,
		 "nuclei[2]: expected object, got integer"},
		{"nuclei[3].storages[0].spaceFree", "-3", GB_ERANGE,
		 "nuclei[3].storages[0].spaceFree: expected a number >= 0, "
		 "got -3"},
		{"nuclei[3].storages[1].tape", "\"no\"", GB_ETYPE,
		 "nuclei[3].storages[1].tape: expected boolean, got string"},
		{"nuclei[0].storages[0].spaceTotal", NULL, GB_EMISSING,
		 "nuclei[0].storages[0].spaceTotal: missing"},
		{"nuclei[0].storages[0].size", "1", GB_EINVAL,
		 "nuclei[0].storages[0].size: unknown field"},
		{"nuclei[1].name", "\"A\"", GB_EDUP,
		 "nuclei[1].name: duplicate nucleus name 'A' (also nuclei[0])"},
		{"nuclei[1].name", "\"\"", GB_ERANGE,
		 "nuclei[1].name: expected a non-empty string"},
		{"nuclei[2].status", NULL, GB_EMISSING,
		 "nuclei[2].status: missing"},
		{"nuclei[2].status", "\"ACTIVE NOW\"", GB_ERANGE,
		 "nuclei[2].status: expected a status word such as ACTIVE or "
		 "OFFLINE, got 'ACTIVE NOW'"},
		{"nuclei[0].bareNucleus", "\"sometimes\"", GB_ERANGE,
		 "nuclei[0].bareNucleus: unknown value 'sometimes'"},
		{"nuclei[0].transferBacklog", "12.5", GB_ETYPE,
		 "nuclei[0].transferBacklog: expected integer, got real"},
		{"nuclei[0].transferBacklog", "-2", GB_ERANGE,
		 "nuclei[0].transferBacklog: expected an integer >= 0, got -2"},
		{"nuclei[0].RW", "-1", GB_ERANGE,
		 "nuclei[0].RW: expected a number >= 0, got -1"},
		{"nuclei[0].storages", NULL, GB_EMISSING,
		 "nuclei[0].storages: missing"},
		{"nuclei[0].colour", "\"red\"", GB_EINVAL,
		 "nuclei[0].colour: unknown field"},
		{"nuclei[0].local", "[]", GB_ETYPE,
		 "nuclei[0].local: expected object, got array"},
		{"nuclei[0].local", "{\"ds.X\": {\"size\": -1, \"files\": 1}}",
		 GB_ERANGE,
		 "nuclei[0].local[\"ds.X\"].size: expected a number >= 0, "
		 "got -1"},
		{"nuclei[0].local", "{\"ds.X\": {\"size\": 1}}", GB_EMISSING,
		 "nuclei[0].local[\"ds.X\"].files: missing"},
		{"nuclei[0].local",
		 "{\"ds.X\": {\"size\": 1, \"files\": 1, \"extra\": 1}}",
		 GB_EINVAL, "nuclei[0].local[\"ds.X\"].extra: unknown field"},
		{"nuclei[0].local", "{\"\": {\"size\": 1, \"files\": 1}}",
		 GB_ERANGE,
		 "nuclei[0].local[\"\"]: expected a non-empty string"},
		{"task", NULL, GB_EMISSING, "task: missing"},
		{"task", "[]", GB_ETYPE, "task: expected object, got array"},
		{"task.ioIntensty", "5", GB_EINVAL,
		 "task.ioIntensty: unknown field"},
		{"task.taskID", "0", GB_ERANGE,
		 "task.taskID: expected a positive integer, got 0"},
		{"task.taskID", "\"1\"", GB_ETYPE,
		 "task.taskID: expected integer, got string"},
		{"task.gshare", "\"\"", GB_ERANGE,
		 "task.gshare: expected a non-empty string"},
		{"task.taskPriority", "2000000", GB_ERANGE,
		 "task.taskPriority: expected an integer in [0, 1000000], got "
		 "2000000"},
		{"task.fullChain", "\"sometimes\"", GB_ERANGE,
		 "task.fullChain: unknown value 'sometimes'"},
		{"description", "5", GB_ETYPE,
		 "description: expected string, got integer"},
		{"task.description", "[]", GB_ETYPE,
		 "task.description: expected string, got array"},
		{"task.fullChain", "true", GB_ETYPE,
		 "task.fullChain: expected string, got boolean"},
		{"task.t1Weight", "\"low\"", GB_ETYPE,
		 "task.t1Weight: expected a number, got string"},
		{"task.inputPreStaging", "1", GB_ETYPE,
		 "task.inputPreStaging: expected boolean, got integer"},
		{"task.inputDatasets", NULL, GB_EMISSING,
		 "task.inputDatasets: missing"},
		{"task.inputDatasets[0].size", "-3", GB_ERANGE,
		 "task.inputDatasets[0].size: expected a number >= 0, got -3"},
		{"task.inputDatasets[0].files", "2.5", GB_ETYPE,
		 "task.inputDatasets[0].files: expected integer, got real"},
		{"task.inputDatasets[0].name", NULL, GB_EMISSING,
		 "task.inputDatasets[0].name: missing"},
		{"task.inputDatasets[1]",
		 "{\"name\": \"ds.A\", \"size\": 1, \"files\": 1}", GB_EDUP,
		 "task.inputDatasets[1].name: duplicate dataset 'ds.A' (also "
		 "task.inputDatasets[0])"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *root = load_text(base_scenario);
		apply_patch(root, cases[i].path, cases[i].value);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scn_task_scenario sc;
		char err[512] = "";
		int rc = scn_parse_task_scenario(root, &a, &sc, err,
						 sizeof(err));
		if (rc != cases[i].rc || strstr(err, cases[i].msg) != err)
			fail_msg("case %zu (%s): got %s '%s', want %s '%s...'",
				 i, cases[i].path, gb_errname(rc), err,
				 gb_errname(cases[i].rc), cases[i].msg);
		json_decref(root);
		arena_free(&a);
	}
}

/* Whole documents, and limits built in code. */
static void test_scenario_errors_whole(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
		{"[]", "(root): expected object, got array"},
		{"{}", "now: missing"},
		{"{\"now\": \"2024-05-14T08:30:00+0200\", \"seed\": 1}",
		 "now: expected an RFC 3339 time"},
		{"{\"now\": \"2024-05-14T08:30:00Z\", \"seed\": 1,"
		 " \"nuclei\": [], \"task\": {\"taskID\": 1}}",
		 "task.gshare: missing"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *root = load_text(cases[i].text);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scn_task_scenario sc;
		char err[512] = "";
		assert_int_not_equal(scn_parse_task_scenario(root, &a, &sc, err,
							     sizeof(err)),
				     GB_OK);
		if (strstr(err, cases[i].msg) != err)
			fail_msg("case %zu: '%s', want '%s...'", i, err,
				 cases[i].msg);
		json_decref(root);
		arena_free(&a);
	}

	/* inputDatasets beyond the codec's limit */
	json_t *root = load_text(base_scenario);
	json_t *arr = json_object_get(json_object_get(root, "task"),
				      "inputDatasets");
	for (int i = 0; i < COD_MAX_DATASETS; i++)
		json_array_append_new(arr, json_pack("{s:s,s:i,s:i}", "name",
						     "x", "size", 1, "files",
						     1));
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scn_task_scenario sc;
	char err[512] = "";
	assert_int_equal(scn_parse_task_scenario(root, &a, &sc, err,
						 sizeof(err)),
			 GB_ETOOBIG);
	assert_string_equal(err, "task.inputDatasets: array of 1001 exceeds "
				 "the limit of 1000");
	json_decref(root);
	arena_free(&a);
}

/* An empty grid is valid and the decision is pending (TB-13). */
static void test_scenario_empty_nuclei(void **state)
{
	(void)state;
	json_t *root = load_text(base_scenario);
	apply_patch(root, "nuclei", "[]");
	apply_patch(root, "description", "\"nothing to choose from\"");
	apply_patch(root, "$schema", "\"scenario-task.schema.json\"");
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scn_task_scenario sc;
	char err[256] = "";
	assert_int_equal(scn_parse_task_scenario(root, &a, &sc, err,
						 sizeof(err)),
			 GB_OK);
	assert_int_equal(sc.nnuclei, 0);
	struct dec_decision d;
	assert_int_equal(broker(&sc.task, sc.nuclei, 0, sc.params, sc.nparams,
				sc.seed, &a, &d),
			 GB_OK);
	assert_int_equal(d.outcome, DEC_PENDING);
	json_t *j = rpt_decision_json(&d);
	assert_string_equal(json_string_value(json_object_get(j, "decision")),
			    "pending");
	assert_int_equal(json_array_size(json_object_get(j, "candidates")), 0);
	json_decref(j);
	json_decref(root);
	arena_free(&a);
}

static void test_read_file(void **state)
{
	(void)state;
	char err[512] = "";
	assert_null(scn_read_file("etc/scenarios/no-such-file.json", err,
				  sizeof(err)));
	assert_non_null(strstr(err, "no-such-file.json: cannot open"));

	/* Duplicate keys and syntax errors come back with line:column. The
	** file is anonymous (tmpfile) and read through its descriptor. */
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
		{"{\"now\": 1,\n \"now\": 2}", ":2:"},
		{"{\"now\": }", ":1:"},
	};
	for (size_t i = 0; i < 2; i++) {
		FILE *f = tmpfile();
		assert_non_null(f);
		fputs(cases[i].text, f);
		fflush(f);
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fileno(f));
		err[0] = '\0';
		assert_null(scn_read_file(path, err, sizeof(err)));
		assert_non_null(strstr(err, cases[i].msg));
		fclose(f);
	}
}

/* ---- time ---------------------------------------------------------------------- */

static void test_time_parse(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int rc;
		long long t;
	} cases[] = {
		{"1970-01-01T00:00:00Z", GB_OK, 0},
		{"2024-05-14T08:30:00Z", GB_OK, 1715675400},
		{"2024-05-14T10:30:00.250+02:00", GB_OK, 1715675400},
		{"2024-05-14t08:30:00.999999z", GB_OK, 1715675400},
		{"2024-05-14 08:30:00+00:00", GB_OK, 1715675400},
		{"2000-02-29T23:59:59-01:00", GB_OK, 951872399},
		{"1969-12-31T23:59:59Z", GB_OK, -1},
		{"1900-03-01T12:00:00+05:30", GB_OK, -2203867800LL},
		{"0001-01-01T00:00:00Z", GB_OK, -62135596800LL},
		{"9999-12-31T23:59:59Z", GB_OK, 253402300799LL},
		{"2016-12-31T23:59:60Z", GB_OK, 1483228800},
		{"2024-02-30T00:00:00Z", GB_ERANGE, 0},
		{"2023-02-29T00:00:00Z", GB_ERANGE, 0},
		{"1900-02-29T00:00:00Z", GB_ERANGE, 0},
		{"2024-13-01T00:00:00Z", GB_ERANGE, 0},
		{"2024-05-14T24:00:00Z", GB_ERANGE, 0},
		{"2024-05-14T08:60:00Z", GB_ERANGE, 0},
		{"2024-05-14T08:30:00+24:00", GB_ERANGE, 0},
		{"2024-05-14T08:30:00", GB_EINVAL, 0},
		{"2024-05-14T08:30:00+0200", GB_EINVAL, 0},
		{"2024-05-14T08:30:00.Z", GB_EINVAL, 0},
		{"2024-5-14T08:30:00Z", GB_EINVAL, 0},
		{"2024-05-14T08:30Z", GB_EINVAL, 0},
		{"2024-05-14T08:30:00Z ", GB_EINVAL, 0},
		{"2024-05-14", GB_EINVAL, 0},
		{"", GB_EINVAL, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long long t = 12345;
		int rc = tf_parse(cases[i].text, &t);
		if (rc != cases[i].rc || (rc == GB_OK && t != cases[i].t))
			fail_msg("'%s': %s %lld, want %s %lld", cases[i].text,
				 gb_errname(rc), t, gb_errname(cases[i].rc),
				 cases[i].t);
	}
	long long t;
	assert_int_equal(tf_parse(NULL, &t), GB_EINVAL);
}

static void test_time_round_trip(void **state)
{
	(void)state;
	static const long long times[] = {
		0,	     -1,	  1715675400,	 951782400,
		951868799,   -62135596800LL, 253402300799LL, 4102444800LL,
		-2208988800LL, 1483228799,     -62167219200LL,
	};
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		char buf[32];
		assert_int_equal(tf_format(times[i], buf, sizeof(buf)),
				 GB_OK);
		assert_int_equal(strlen(buf), 20);
		long long back;
		assert_int_equal(tf_parse(buf, &back), GB_OK);
		if (back != times[i])
			fail_msg("%lld -> %s -> %lld", times[i], buf, back);
	}
	/* also every hour across a leap year, as a sweep */
	for (long long t = 1704067200; t < 1735689600; t += 3599) {
		char buf[32];
		long long back;
		assert_int_equal(tf_format(t, buf, sizeof(buf)), GB_OK);
		assert_int_equal(tf_parse(buf, &back), GB_OK);
		assert_true(back == t);
	}
	char buf[32];
	assert_int_equal(tf_format(1715675400, buf, sizeof(buf)), GB_OK);
	assert_string_equal(buf, "2024-05-14T08:30:00Z");
	assert_int_equal(tf_format(253402300800LL, buf, sizeof(buf)),
			 GB_ERANGE);
	assert_int_equal(tf_format(-62167219201LL, buf, sizeof(buf)),
			 GB_ERANGE); /* year -1 */
	assert_int_equal(tf_format(0, buf, 10), GB_EINVAL);
}

/* ---- rendering ---------------------------------------------------------------- */

/* A decision built by hand: A survives, B (TB-01) and C (TB-07 and TB-08,
** plus two reasons beyond DEC_MAX_REASONS) are dropped. */
static void hand_decision(struct dec_decision *d, struct dec_candidate *c,
			  int assigned)
{
	dec_init(d, c, 3);
	c[0].name = "A";
	c[1].name = "B";
	c[2].name = "C";
	dec_reject(&c[1], "status", "TB-01", "status",
		   "status %s is not ACTIVE", "OFFLINE", 0, 0, 0, 0);
	dec_reject(&c[2], "locality", "TB-07", "input_size",
		   "local input %.1f%% of %.4g GB <= INPUT_SIZE_FRACTION "
		   "%.4g%%",
		   NULL, 4.7, 6400, 10, 0);
	dec_reject(&c[2], "locality", "TB-08", "input_files",
		   "local files %.1f%% of %.0f <= INPUT_NUM_FRACTION %.4g%%",
		   NULL, 4.7, 12800, 10, 0);
	dec_reject(&c[2], "locality", "TB-08", "x", "x", NULL, 0, 0, 0, 0);
	dec_reject(&c[2], "locality", "TB-08", "y", "y", NULL, 0, 0, 0, 0);
	dec_reject(&c[2], "locality", "TB-08", "z", "z", NULL, 0, 0, 0, 0);
	if (assigned) {
		c[0].weight = 0.5;
		c[0].wexpl = (struct dec_reason){
			"TB-11", "weight",
			"tapeWeight %.3g x (free+expired)/total %.4g / "
			"max(50,RW) %.0f",
			NULL, {1, 0.25, 50, 0}};
		d->outcome = DEC_ASSIGNED;
		d->chosen = 0;
	} else {
		dec_reject(&c[0], "space", "TB-04", "space",
			   "%s: free+expired-expOut x RW = %.0f GB <= "
			   "DISK_THRESHOLD %.0f GB (RW %.0f)",
			   "A_DATADISK", 95000, 102400, 300, 0);
		d->outcome = DEC_PENDING;
		d->retry_after_s = TB_PENDING_RETRY_S;
	}
	dec_stage(d, "status", "TB-01", 3, 2);
	dec_stage(d, "locality", "TB-07", 2, 1);
	dec_stage(d, "weighted choice", "TB-12", 1, assigned ? 1 : 0);
	snprintf(d->note, sizeof(d->note), "hand-made");
}

static void test_decision_json_shape(void **state)
{
	(void)state;
	struct dec_candidate c[3];
	struct dec_decision d;
	hand_decision(&d, c, 1);
	json_t *j = rpt_decision_json(&d);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "decision")),
			    "assigned");
	assert_string_equal(json_string_value(json_object_get(j, "nucleus")),
			    "A");
	assert_null(json_object_get(j, "retryAfter"));
	assert_string_equal(json_string_value(json_object_get(j, "note")),
			    "hand-made");
	json_t *cands = json_object_get(j, "candidates");
	assert_int_equal(json_array_size(cands), 3);

	json_t *a = json_array_get(cands, 0);
	assert_string_equal(json_string_value(json_object_get(a, "name")), "A");
	assert_near(json_number_value(json_object_get(a, "weight")), 0.5, 0);
	assert_int_equal(json_array_size(json_object_get(a, "reasons")), 0);
	json_t *wd = json_object_get(a, "weightDetail");
	assert_string_equal(json_string_value(json_object_get(wd, "rule")),
			    "TB-11");
	assert_string_equal(json_string_value(json_object_get(wd, "detail")),
			    "tapeWeight 1 x (free+expired)/total 0.25 / "
			    "max(50,RW) 50");

	json_t *b = json_array_get(cands, 1);
	assert_true(json_is_null(json_object_get(b, "weight")));
	assert_true(json_is_null(json_object_get(b, "weightDetail")));
	assert_string_equal(json_string_value(json_object_get(b, "stage")),
			    "status");
	json_t *br = json_array_get(json_object_get(b, "reasons"), 0);
	assert_string_equal(json_string_value(json_object_get(br, "rule")),
			    "TB-01");
	assert_string_equal(json_string_value(json_object_get(br, "code")),
			    "status");
	assert_string_equal(json_string_value(json_object_get(br, "detail")),
			    "status OFFLINE is not ACTIVE");

	json_t *cc = json_array_get(cands, 2);
	json_t *crs = json_object_get(cc, "reasons");
	assert_int_equal(json_array_size(crs), DEC_MAX_REASONS);
	assert_int_equal(json_integer_value(json_object_get(cc, "moreReasons")),
			 2);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(crs, 1), "detail")),
			    "local files 4.7% of 12800 <= INPUT_NUM_FRACTION "
			    "10%");

	json_t *st = json_object_get(j, "stages");
	assert_int_equal(json_array_size(st), 3);
	json_t *s1 = json_array_get(st, 1);
	assert_string_equal(json_string_value(json_object_get(s1, "name")),
			    "locality");
	assert_string_equal(json_string_value(json_object_get(s1, "rule")),
			    "TB-07");
	assert_int_equal(json_integer_value(json_object_get(s1, "in")), 2);
	assert_int_equal(json_integer_value(json_object_get(s1, "out")), 1);
	json_decref(j);

	hand_decision(&d, c, 0);
	j = rpt_decision_json(&d);
	assert_string_equal(json_string_value(json_object_get(j, "decision")),
			    "pending");
	assert_true(json_is_null(json_object_get(j, "nucleus")));
	assert_int_equal(json_integer_value(json_object_get(j, "retryAfter")),
			 1800);
	for (size_t i = 0; i < 3; i++) {
		json_t *x = json_array_get(json_object_get(j, "candidates"), i);
		assert_true(json_is_null(json_object_get(x, "weight")));
		assert_true(json_array_size(json_object_get(x, "reasons")) >=
			    1);
	}
	json_decref(j);
	assert_null(rpt_decision_json(NULL));
}

/* The decision's record (rec_task) as `explain` prints it for task 1. */
static char *print_to_string(const struct dec_decision *d)
{
	const struct md_task m = {.dec = *d};
	char *rec = rec_task(&m, NULL);
	assert_non_null(rec);
	json_t *j = json_loads(rec, 0, NULL);
	assert_non_null(j);
	free(rec);
	const struct rn_head h = {
		.kind = "task",
		.subject = "1",
		.outcome = dec_outcome_name(d->outcome),
		.chosen = d->outcome == DEC_ASSIGNED ? d->cands[d->chosen].name
						     : NULL,
	};
	char *s = rn_render(&h, j);
	assert_non_null(s);
	json_decref(j);
	return s;
}

static void test_print_decision(void **state)
{
	(void)state;
	struct dec_candidate c[3];
	struct dec_decision d;
	hand_decision(&d, c, 1);
	char *s = print_to_string(&d);
	static const char *const want[] = {
		"task 1: assigned, chosen A, digest ",
		"task brokerage over 3 nuclei\n",
		"*   A ",
		"0.5 ",
		"TB-11  weight",
		"tapeWeight 1 x (free+expired)/total 0.25 / max(50,RW) 50\n",
		"    B ",
		"TB-01  status",
		"status OFFLINE is not ACTIVE\n",
		"local input 4.7% of 6400 GB <= INPUT_SIZE_FRACTION 10%\n",
		"(+2 more reasons)\n",
		"stages:\n",
		"    3 ->   2 candidates,  33% cut : status [TB-01 status x1]\n",
		"    2 ->   1 candidates,  50% cut : locality [TB-07 input_size "
		"x1]\n",
		"note: hand-made\n",
		"decision: assigned to A (weight 0.5)\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(s, want[i]) == NULL)
			fail_msg("missing '%s' in:\n%s", want[i], s);
	/* the stage lines come before the table, the decision last */
	assert_true(strstr(s, "stages:") < strstr(s, "status OFFLINE"));
	const char *last = "decision: assigned to A (weight 0.5)\n";
	assert_string_equal(s + strlen(s) - strlen(last), last);
	free(s);

	hand_decision(&d, c, 0);
	s = print_to_string(&d);
	assert_non_null(strstr(s, "decision: pending, retry after 1800 s\n"));
	assert_non_null(strstr(s, "A_DATADISK: free+expired-expOut x RW = "
				  "95000 GB <= DISK_THRESHOLD 102400 GB (RW "
				  "300)"));
	assert_true(strncmp(s, "task 1: pending, chosen -, ", 27) == 0);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scenario_files_parse),
		cmocka_unit_test(test_scenario_outcomes),
		cmocka_unit_test(test_sample_grid_and_tasks),
		cmocka_unit_test(test_scenario_valid_base),
		cmocka_unit_test(test_scenario_errors),
		cmocka_unit_test(test_scenario_errors_whole),
		cmocka_unit_test(test_scenario_empty_nuclei),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_time_parse),
		cmocka_unit_test(test_time_round_trip),
		cmocka_unit_test(test_decision_json_shape),
		cmocka_unit_test(test_print_decision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
