/*
** scenario.c — JSON scenario and grid files, and how decisions are shown.
**
** A scenario is written by a person, so the parser is strict where the
** message decoder is lenient: an unknown field is an error here (a typo such
** as "ioIntensty" would otherwise silently take the default and the what-if
** would answer a different question), while cod_decode_task ignores unknown
** keys for forward compatibility between producers and workers. The task
** object obeys the codec's limits (string length, dataset count, ranges), so
** every task a scenario or `task submit` accepts is one the worker accepts.
**
** Every error is "PATH: problem" with the JSON path of the offending value,
** e.g. "nuclei[3].storages[0].spaceFree: expected a number >= 0, got -3";
** replica paths quote the dataset name (local["mc23_13p6TeV:..."]) because
** dataset names contain dots. All strings and arrays are copied into the
** caller's arena, so the result outlives the json_t.
**
** Decisions are shown by report/ (record.h, report.h).
*/
#include "explain/scenario.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codec/codec.h"
#include "gb_error.h"
#include "base/jsonutil.h"
#include "base/timefmt.h"

#define SCN_MAX_FILE_BYTES (64L << 20) /* jansson needs ~10x this in memory */
#define SCN_MAX_NUCLEI 10000
#define SCN_MAX_STORAGES 64
#define SCN_MAX_LOCAL 100000
#define SCN_MAX_PARAMS 1000
#define SCN_MAX_PARAM_NAME 127 /* prm_get_sfx builds names in 160 bytes */
#define SCN_MAX_STATUS 31
#define SCN_PATH 192

/* Refuse keys outside `allowed` (NULL-terminated). */
static int check_keys(const struct ju_ctx *c, json_t *obj, const char *path,
		      const char *const *allowed)
{
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) {
		const char *const *k = allowed;
		while (*k && strcmp(*k, key) != 0)
			k++;
		if (*k == NULL) {
			char f[SCN_PATH];
			ju_path_key(f, sizeof(f), path, key);
			return ju_fail(c, GB_EINVAL, f, "unknown field");
		}
	}
	return GB_OK;
}

/* ---- scalar fields ----------------------------------------------------- */

/* Absent, or null for an optional field, means "take the default". */
static json_t *field(json_t *obj, const char *key, int required)
{
	json_t *v = json_object_get(obj, key);
	if (v && json_is_null(v) && !required)
		return NULL;
	return v;
}

/* `key` of obj into *v, NULL for "take the default"; a required field
** that is absent fails. `f` (SCN_PATH bytes) gets the field's path. */
static int lookup(const struct ju_ctx *c, json_t *obj, const char *path,
		  const char *key, int required, char *f, json_t **v)
{
	ju_path_key(f, SCN_PATH, path, key);
	*v = field(obj, key, required);
	if (*v == NULL && required)
		return ju_fail(c, GB_EMISSING, f, "missing");
	return GB_OK;
}

static int f_num(const struct ju_ctx *c, json_t *obj, const char *path,
		 const char *key, int required, double min, double def,
		 double *out)
{
	char f[SCN_PATH];
	json_t *v;
	int rc = lookup(c, obj, path, key, required, f, &v);
	if (rc != GB_OK || v == NULL) {
		*out = def;
		return rc;
	}
	if (!json_is_number(v))
		return ju_fail(c, GB_ETYPE, f, "expected a number, got %s",
			       ju_type_name(v));
	double x = json_number_value(v);
	if (!isfinite(x))
		return ju_fail(c, GB_ERANGE, f, "expected a finite number");
	if (x < min)
		return ju_fail(c, GB_ERANGE, f,
			       "expected a number >= %g, got %g", min, x);
	*out = x;
	return GB_OK;
}

static int f_int(const struct ju_ctx *c, json_t *obj, const char *path,
		 const char *key, int required, long long min, long long max,
		 long long def, long long *out)
{
	char f[SCN_PATH];
	json_t *v;
	int rc = lookup(c, obj, path, key, required, f, &v);
	if (rc != GB_OK || v == NULL) {
		*out = def;
		return rc;
	}
	if (!json_is_integer(v))
		return ju_fail(c, GB_ETYPE, f, "expected integer, got %s",
			       ju_type_name(v));
	long long x = json_integer_value(v);
	if (x < min || x > max) {
		if (max == LLONG_MAX && min == 1)
			return ju_fail(c, GB_ERANGE, f,
				       "expected a positive integer, got %lld",
				       x);
		if (max == LLONG_MAX || max == LONG_MAX)
			return ju_fail(c, GB_ERANGE, f,
				       "expected an integer >= %lld, got %lld",
				       min, x);
		return ju_fail(c, GB_ERANGE, f,
			       "expected an integer in [%lld, %lld], got %lld",
			       min, max, x);
	}
	*out = x;
	return GB_OK;
}

static int f_bool(const struct ju_ctx *c, json_t *obj, const char *path,
		  const char *key, int def, int *out)
{
	char f[SCN_PATH];
	json_t *v;
	int rc = lookup(c, obj, path, key, 0, f, &v);
	if (rc != GB_OK || v == NULL) {
		*out = def;
		return rc;
	}
	if (!json_is_boolean(v))
		return ju_fail(c, GB_ETYPE, f, "expected boolean, got %s",
			       ju_type_name(v));
	*out = json_is_true(v);
	return GB_OK;
}

static int f_str(const struct ju_ctx *c, json_t *obj, const char *path,
		 const char *key, int required, int nonempty, const char **out)
{
	char f[SCN_PATH];
	json_t *v;
	int rc = lookup(c, obj, path, key, required, f, &v);
	if (rc != GB_OK || v == NULL) {
		*out = NULL;
		return rc;
	}
	return ju_str_value(c, v, f, nonempty, out);
}

/* Free text the engine ignores ("description", "$schema"): only its type is
** checked, and it is neither copied nor limited beyond the file's size. */
static int f_text(const struct ju_ctx *c, json_t *obj, const char *path,
		  const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (v == NULL || json_is_string(v))
		return GB_OK;
	char f[SCN_PATH];
	ju_path_key(f, sizeof(f), path, key);
	return ju_fail(c, GB_ETYPE, f, "expected string, got %s",
		       ju_type_name(v));
}

/* ---- duplicates -------------------------------------------------------- */

/*
** names[i] at stride: report the later of two equal names as
** "<path>[i].<key>: duplicate <what> 'X' (also <path>[j])".
*/
static int check_dups(const struct ju_ctx *c, const void *base, size_t n,
		      size_t stride, const char *path, const char *key,
		      const char *what)
{
	if (n < 2)
		return GB_OK;
	struct ju_nameref *r = arena_alloc(c->a, n * sizeof(*r));
	if (r == NULL)
		return ju_fail(c, GB_ENOMEM, path, "out of memory");
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ju_nameref){
			*(const char *const *)((const char *)base + i * stride),
			i};
	qsort(r, n, sizeof(*r), ju_nameref_cmp);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(r[i - 1].name, r[i].name) == 0) {
			char f[SCN_PATH];
			char e[SCN_PATH];
			ju_path_idx(e, sizeof(e), path, r[i].idx);
			ju_path_key(f, sizeof(f), e, key);
			return ju_fail(c, GB_EDUP, f,
				       "duplicate %s '%s' (also %s[%zu])", what,
				       r[i].name, path, r[i - 1].idx);
		}
	}
	return GB_OK;
}

/* ---- nuclei ------------------------------------------------------------- */

static const char *const storage_keys[] = {
	"name", "spaceFree", "spaceExpired", "spaceTotal", "tape",
	"blacklisted", NULL};

static int parse_storage(const struct ju_ctx *c, json_t *o, const char *path,
			 struct tb_storage *s)
{
	int rc = ju_want_object(c, o, path);
	if (rc == GB_OK)
		rc = check_keys(c, o, path, storage_keys);
	if (rc == GB_OK)
		rc = f_str(c, o, path, "name", 1, 1, &s->name);
	if (rc == GB_OK)
		rc = f_num(c, o, path, "spaceFree", 1, 0, 0, &s->space_free);
	if (rc == GB_OK)
		rc = f_num(c, o, path, "spaceExpired", 0, 0, 0,
			   &s->space_expired);
	if (rc == GB_OK)
		rc = f_num(c, o, path, "spaceTotal", 1, 0, 0, &s->space_total);
	if (rc == GB_OK)
		rc = f_bool(c, o, path, "tape", 0, &s->tape);
	if (rc == GB_OK)
		rc = f_bool(c, o, path, "blacklisted", 0, &s->blacklisted);
	return rc;
}

static int parse_local(const struct ju_ctx *c, json_t *o, const char *path,
		       struct tb_nucleus *nu)
{
	nu->local = NULL;
	nu->nlocal = 0;
	if (o == NULL || json_is_null(o))
		return GB_OK;
	int rc = ju_want_object(c, o, path);
	if (rc != GB_OK)
		return rc;
	size_t n = json_object_size(o);
	if (n > SCN_MAX_LOCAL)
		return ju_fail(c, GB_ETOOBIG, path,
			       "%zu datasets exceed the limit of %d", n,
			       SCN_MAX_LOCAL);
	if (n == 0)
		return GB_OK;
	struct tb_replica *r = arena_alloc(c->a, n * sizeof(*r));
	if (r == NULL)
		return ju_fail(c, GB_ENOMEM, path, "out of memory");
	static const char *const keys[] = {"size", "files", NULL};
	size_t i = 0;
	const char *name;
	json_t *v;
	json_object_foreach(o, name, v) {
		char p[SCN_PATH];
		ju_path_qkey(p, sizeof(p), path, name);
		long long files = 0;
		rc = ju_str_copy(c, name, strlen(name), p, 1, &r[i].dataset);
		if (rc == GB_OK)
			rc = ju_want_object(c, v, p);
		if (rc == GB_OK)
			rc = check_keys(c, v, p, keys);
		if (rc == GB_OK)
			rc = f_num(c, v, p, "size", 1, 0, 0, &r[i].size);
		if (rc == GB_OK)
			rc = f_int(c, v, p, "files", 1, 0, LONG_MAX, 0, &files);
		if (rc != GB_OK)
			return rc;
		r[i].files = (long)files;
		i++;
	}
	nu->local = r;
	nu->nlocal = i;
	return GB_OK;
}

/* A status is one of the seed's words (ACTIVE, OFFLINE, ...); only ACTIVE
** is brokered (TB-01). The shape is checked so "ACTIVE " is not silently a
** different word. */
static int status_word_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > SCN_MAX_STATUS)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}

static const char *const nucleus_keys[] = {
	"name", "status", "bareNucleus", "transferBacklog", "RW",
	"storages", "local", NULL};

static int parse_nucleus(const struct ju_ctx *c, json_t *o, const char *path,
			 struct tb_nucleus *nu)
{
	char f[SCN_PATH];
	int rc = ju_want_object(c, o, path);
	if (rc == GB_OK)
		rc = check_keys(c, o, path, nucleus_keys);
	if (rc == GB_OK)
		rc = f_str(c, o, path, "name", 1, 1, &nu->name);
	if (rc == GB_OK)
		rc = f_str(c, o, path, "status", 1, 1, &nu->status);
	if (rc == GB_OK && !status_word_ok(nu->status)) {
		ju_path_key(f, sizeof(f), path, "status");
		return ju_fail(c, GB_ERANGE, f,
			       "expected a status word such as ACTIVE or "
			       "OFFLINE, got '%s'",
			       nu->status);
	}
	const char *bare = NULL;
	if (rc == GB_OK)
		rc = f_str(c, o, path, "bareNucleus", 0, 0, &bare);
	if (rc == GB_OK) {
		int b = tb_bare_parse(bare);
		if (b < 0) {
			ju_path_key(f, sizeof(f), path, "bareNucleus");
			return ju_fail(c, GB_ERANGE, f,
				       "unknown value '%s' (expected \"\", "
				       "\"only\" or \"allow\")",
				       bare);
		}
		nu->bare = (enum tb_bare)b;
	}
	long long backlog = 0;
	if (rc == GB_OK)
		rc = f_int(c, o, path, "transferBacklog", 0, 0, LONG_MAX, 0,
			   &backlog);
	nu->transfer_backlog = (long)backlog;
	if (rc == GB_OK)
		rc = f_num(c, o, path, "RW", 0, 0, 0, &nu->rw);
	if (rc != GB_OK)
		return rc;

	ju_path_key(f, sizeof(f), path, "storages");
	json_t *st = json_object_get(o, "storages");
	if (st == NULL)
		return ju_fail(c, GB_EMISSING, f, "missing");
	rc = ju_want_array(c, st, f, SCN_MAX_STORAGES);
	if (rc != GB_OK)
		return rc;
	size_t ns = json_array_size(st);
	struct tb_storage *s = NULL;
	if (ns) {
		s = arena_alloc(c->a, ns * sizeof(*s));
		if (s == NULL)
			return ju_fail(c, GB_ENOMEM, f, "out of memory");
	}
	for (size_t i = 0; i < ns; i++) {
		char p[SCN_PATH];
		ju_path_idx(p, sizeof(p), f, i);
		rc = parse_storage(c, json_array_get(st, i), p, &s[i]);
		if (rc != GB_OK)
			return rc;
	}
	nu->storages = s;
	nu->nstorages = ns;

	ju_path_key(f, sizeof(f), path, "local");
	return parse_local(c, json_object_get(o, "local"), f, nu);
}

int scn_parse_nuclei(json_t *arr, const char *path, struct arena *a,
		     struct tb_nucleus **out, size_t *n, char *err,
		     size_t errlen)
{
	struct ju_ctx c = {.a = a, .err = err, .errlen = errlen};
	if (out == NULL || n == NULL || a == NULL || path == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	*out = NULL;
	*n = 0;
	if (arr == NULL)
		return ju_fail(&c, GB_EMISSING, path, "missing");
	int rc = ju_want_array(&c, arr, path, SCN_MAX_NUCLEI);
	if (rc != GB_OK)
		return rc;
	size_t cnt = json_array_size(arr);
	if (cnt == 0)
		return GB_OK;
	struct tb_nucleus *nu = arena_alloc(a, cnt * sizeof(*nu));
	if (nu == NULL)
		return ju_fail(&c, GB_ENOMEM, path, "out of memory");
	for (size_t i = 0; i < cnt; i++) {
		char p[SCN_PATH];
		ju_path_idx(p, sizeof(p), path, i);
		rc = parse_nucleus(&c, json_array_get(arr, i), p, &nu[i]);
		if (rc != GB_OK)
			return rc;
	}
	rc = check_dups(&c, &nu[0].name, cnt, sizeof(nu[0]), path, "name",
			"nucleus name");
	if (rc != GB_OK)
		return rc;
	*out = nu;
	*n = cnt;
	return GB_OK;
}

/* ---- task --------------------------------------------------------------- */

static const char *const dataset_keys[] = {"name", "primary", "size",
					   "files", "onTape", NULL};

static int parse_dataset(const struct ju_ctx *c, json_t *o, const char *path,
			 struct tb_dataset *d)
{
	long long files = 0;
	int rc = ju_want_object(c, o, path);
	if (rc == GB_OK)
		rc = check_keys(c, o, path, dataset_keys);
	if (rc == GB_OK)
		rc = f_str(c, o, path, "name", 1, 1, &d->name);
	if (rc == GB_OK)
		rc = f_num(c, o, path, "size", 1, 0, 0, &d->size);
	if (rc == GB_OK)
		rc = f_int(c, o, path, "files", 1, 0, LONG_MAX, 0, &files);
	d->files = (long)files;
	if (rc == GB_OK)
		rc = f_bool(c, o, path, "primary", 0, &d->primary);
	if (rc == GB_OK)
		rc = f_bool(c, o, path, "onTape", 0, &d->on_tape);
	return rc;
}

static const char *const task_keys[] = {
	"description",	"taskID",      "gshare",
	"taskPriority",	"ioIntensity", "t1Weight",
	"inputPreStaging", "taskBrokerOnMaster", "fullChain",
	"parentNucleus", "normalizedExpOutSize", "inputDatasets",
	NULL};

int scn_parse_task(json_t *obj, const char *path, struct arena *a,
		   struct tb_task *out, char *err, size_t errlen)
{
	struct ju_ctx c = {.a = a, .err = err, .errlen = errlen};
	if (out == NULL || a == NULL || path == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	if (obj == NULL)
		return ju_fail(&c, GB_EMISSING, path, "missing");
	struct tb_task t;
	memset(&t, 0, sizeof(t));
	long long prio = 0;
	const char *fc = NULL;
	int rc = ju_want_object(&c, obj, path);
	if (rc == GB_OK)
		rc = check_keys(&c, obj, path, task_keys);
	if (rc == GB_OK)
		rc = f_text(&c, obj, path, "description");
	if (rc == GB_OK)
		rc = f_int(&c, obj, path, "taskID", 1, 1, LLONG_MAX, 0,
			   &t.task_id);
	if (rc == GB_OK)
		rc = f_str(&c, obj, path, "gshare", 1, 1, &t.gshare);
	if (rc == GB_OK)
		rc = f_int(&c, obj, path, "taskPriority", 1, 0, 1000000, 0,
			   &prio);
	t.priority = (long)prio;
	if (rc == GB_OK)
		rc = f_num(&c, obj, path, "ioIntensity", 0, 0, 0,
			   &t.io_intensity);
	if (rc == GB_OK)
		rc = f_num(&c, obj, path, "t1Weight", 0, -INFINITY, 0,
			   &t.t1_weight);
	if (rc == GB_OK)
		rc = f_bool(&c, obj, path, "inputPreStaging", 0,
			    &t.input_prestaging);
	if (rc == GB_OK)
		rc = f_bool(&c, obj, path, "taskBrokerOnMaster", 0,
			    &t.broker_on_master);
	if (rc == GB_OK)
		rc = f_str(&c, obj, path, "fullChain", 0, 0, &fc);
	if (rc == GB_OK) {
		int v = tb_fullchain_parse(fc);
		if (v < 0) {
			char f[SCN_PATH];
			ju_path_key(f, sizeof(f), path, "fullChain");
			return ju_fail(&c, GB_ERANGE, f,
				       "unknown value '%s' (expected null, "
				       "\"only\", \"require\" or \"capable\")",
				       fc);
		}
		t.full_chain = (enum tb_fullchain)v;
	}
	if (rc == GB_OK)
		rc = f_str(&c, obj, path, "parentNucleus", 0, 0,
			   &t.parent_nucleus);
	if (rc == GB_OK)
		rc = f_num(&c, obj, path, "normalizedExpOutSize", 0, 0, 0,
			   &t.norm_exp_out_size);
	if (rc != GB_OK)
		return rc;

	char f[SCN_PATH];
	ju_path_key(f, sizeof(f), path, "inputDatasets");
	json_t *arr = json_object_get(obj, "inputDatasets");
	if (arr == NULL)
		return ju_fail(&c, GB_EMISSING, f, "missing");
	rc = ju_want_array(&c, arr, f, COD_MAX_DATASETS);
	if (rc != GB_OK)
		return rc;
	size_t n = json_array_size(arr);
	struct tb_dataset *ds = NULL;
	if (n) {
		ds = arena_alloc(a, n * sizeof(*ds));
		if (ds == NULL)
			return ju_fail(&c, GB_ENOMEM, f, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		char p[SCN_PATH];
		ju_path_idx(p, sizeof(p), f, i);
		rc = parse_dataset(&c, json_array_get(arr, i), p, &ds[i]);
		if (rc != GB_OK)
			return rc;
	}
	rc = check_dups(&c, n ? &ds[0].name : NULL, n, sizeof(*ds), f, "name",
			"dataset");
	if (rc != GB_OK)
		return rc;
	t.datasets = ds;
	t.ndatasets = n;
	*out = t;
	return GB_OK;
}

/* ---- params ------------------------------------------------------------- */

int scn_parse_params(json_t *obj, const char *path, struct arena *a,
		     struct prm_kv **out, size_t *n, char *err, size_t errlen)
{
	struct ju_ctx c = {.a = a, .err = err, .errlen = errlen};
	if (out == NULL || n == NULL || a == NULL || path == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	*out = NULL;
	*n = 0;
	if (obj == NULL || json_is_null(obj))
		return GB_OK;
	int rc = ju_want_object(&c, obj, path);
	if (rc != GB_OK)
		return rc;
	size_t cnt = json_object_size(obj);
	if (cnt > SCN_MAX_PARAMS)
		return ju_fail(&c, GB_ETOOBIG, path,
			       "%zu parameters exceed the limit of %d", cnt,
			       SCN_MAX_PARAMS);
	if (cnt == 0)
		return GB_OK;
	struct prm_kv *kv = arena_alloc(a, cnt * sizeof(*kv));
	if (kv == NULL)
		return ju_fail(&c, GB_ENOMEM, path, "out of memory");
	size_t i = 0;
	const char *name;
	json_t *v;
	json_object_foreach(obj, name, v) {
		char f[SCN_PATH];
		ju_path_key(f, sizeof(f), path, name);
		if (strlen(name) > SCN_MAX_PARAM_NAME)
			return ju_fail(&c, GB_ETOOBIG, f,
				       "parameter name longer than %d",
				       SCN_MAX_PARAM_NAME);
		const struct prm_def *def = prm_find(name);
		if (def == NULL)
			return ju_fail(&c, GB_ENOTFOUND, f,
				       "unknown parameter");
		double value;
		if (json_is_null(v)) {
			value = NAN; /* "unset", allowed where the default is */
		} else if (json_is_number(v)) {
			value = json_number_value(v);
		} else {
			return ju_fail(&c, GB_ETYPE, f,
				       "expected a number, got %s",
				       ju_type_name(v));
		}
		if (prm_check(name, value) != GB_OK) {
			if (isnan(value))
				return ju_fail(&c, GB_ERANGE, f,
					       "null (unset) is not allowed; "
					       "the default is %g %s",
					       def->def, def->unit);
			if (def->flags & PRM_BOOL)
				return ju_fail(&c, GB_ERANGE, f,
					       "expected 0 or 1, got %g",
					       value);
			return ju_fail(&c, GB_ERANGE, f,
				       "%g is out of range [%g, %g]%s%s", value,
				       def->min, def->max,
				       def->unit[0] ? " " : "", def->unit);
		}
		kv[i].name = arena_strdup(a, name);
		if (kv[i].name == NULL)
			return ju_fail(&c, GB_ENOMEM, f, "out of memory");
		kv[i].value = value;
		i++;
	}
	*out = kv;
	*n = i;
	return GB_OK;
}

/* ---- whole scenario ---------------------------------------------------- */

static const char *const scenario_keys[] = {
	"$schema", "description", "now", "seed", "params", "nuclei", "task",
	NULL};

int scn_parse_task_scenario(json_t *root, struct arena *a,
			    struct scn_task_scenario *out, char *err,
			    size_t errlen)
{
	struct ju_ctx c = {.a = a, .err = err, .errlen = errlen};
	if (out == NULL || a == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	if (root == NULL)
		return ju_fail(&c, GB_EMISSING, "", "no scenario");
	int rc = ju_want_object(&c, root, "");
	if (rc == GB_OK)
		rc = check_keys(&c, root, "", scenario_keys);
	if (rc == GB_OK)
		rc = f_text(&c, root, "", "$schema");
	if (rc == GB_OK)
		rc = f_text(&c, root, "", "description");
	const char *now = NULL;
	if (rc == GB_OK)
		rc = f_str(&c, root, "", "now", 1, 1, &now);
	if (rc == GB_OK && tf_parse(now, &out->now) != GB_OK)
		return ju_fail(&c, GB_ERANGE, "now",
			       "expected an RFC 3339 time such as "
			       "2024-05-14T08:30:00Z, got '%s'",
			       now);
	long long seed = 0;
	if (rc == GB_OK)
		rc = f_int(&c, root, "", "seed", 1, 0, LLONG_MAX, 0, &seed);
	out->seed = (uint64_t)seed;
	if (rc == GB_OK)
		rc = scn_parse_params(json_object_get(root, "params"),
				      "params", a, &out->params, &out->nparams,
				      err, errlen);
	if (rc == GB_OK)
		rc = scn_parse_nuclei(json_object_get(root, "nuclei"),
				      "nuclei", a, &out->nuclei, &out->nnuclei,
				      err, errlen);
	if (rc == GB_OK)
		rc = scn_parse_task(json_object_get(root, "task"), "task", a,
				    &out->task, err, errlen);
	return rc;
}

json_t *scn_read_file(const char *path, char *err, size_t errlen)
{
	if (path == NULL) {
		if (err && errlen)
			snprintf(err, errlen, "no file name");
		return NULL;
	}
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot open", path);
		return NULL;
	}
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > SCN_MAX_FILE_BYTES) {
		if (err && errlen)
			snprintf(err, errlen,
				 "%s: not a regular file of at most %ld bytes",
				 path, (long)SCN_MAX_FILE_BYTES);
		fclose(f);
		return NULL;
	}
	json_error_t je;
	json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
	fclose(f);
	if (root == NULL && err && errlen)
		snprintf(err, errlen, "%s:%d:%d: %s", path, je.line, je.column,
			 je.text);
	return root;
}

