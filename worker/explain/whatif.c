/*
** whatif.c — NAME=VALUE settings: parsed, and applied to a scenario's
** JSON (whatif.h). whatif_diff.c compares the runs.
*/
#include "explain/whatif.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonutil.h"
#include "gb_error.h"
#include "params.h"

/* ---- parsing ------------------------------------------------------------ */

const char *exw_target_name(enum exw_target t)
{
	static const char *const names[] = {"param", "queue", "nucleus",
					    "group", "tq",    "corrections"};
	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

/* 1 when `p` is one or more non-empty steps apart by single dots. */
static int steps_ok(const char *p)
{
	if (*p == '\0' || *p == '.')
		return 0;
	for (; *p; p++)
		if (*p == '.' && (p[1] == '.' || p[1] == '\0'))
			return 0;
	return 1;
}

/* The element forms: NAME prefix, target, what the form looks like. */
static const struct form {
	const char *prefix;
	enum exw_target target;
	const char *shape;
} forms[] = {
	{"queue.", EXW_QUEUE, "queue.NAME.FIELD"},
	{"nucleus.", EXW_NUCLEUS, "nucleus.NAME.FIELD"},
	{"group.", EXW_GROUP, "group.NAME.FIELD"},
	{"tq.", EXW_TQ, "tq.ID.FIELD"},
};

static int parse_element(const struct ju_ctx *c, const struct form *f,
			 const char *rest, struct exw_set *out)
{
	const char *dot = strchr(rest, '.');
	if (!steps_ok(rest) || dot == NULL)
		return ju_fail(c, GB_EINVAL, out->arg,
			       "expected %s (an element and a field)",
			       f->shape);
	if (f->target == EXW_TQ) {
		char *end = NULL;
		long long id = strtoll(rest, &end, 10);
		if (end != dot || id <= 0 || rest[0] < '0' || rest[0] > '9')
			return ju_fail(c, GB_EINVAL, out->arg,
				       "expected tq.ID.FIELD with ID a "
				       "positive integer");
	}
	out->target = f->target;
	snprintf(out->path, sizeof(out->path), "%s", rest);
	return GB_OK;
}

int exw_parse_set(const char *arg, struct exw_set *out, char *err,
		  size_t errlen)
{
	const struct ju_ctx c = {.err = err, .errlen = errlen};
	if (err && errlen)
		err[0] = '\0';
	if (arg == NULL || out == NULL)
		return ju_fail(&c, GB_EINVAL, "NAME=VALUE",
			       "invalid arguments");
	memset(out, 0, sizeof(*out));
	size_t len = strlen(arg);
	if (len >= EXW_ARG_MAX)
		return ju_fail(&c, GB_ETOOBIG, "NAME=VALUE",
			       "%zu bytes, at most %d", len, EXW_ARG_MAX - 1);
	memcpy(out->arg, arg, len + 1);
	const char *eq = strchr(arg, '=');
	if (eq == NULL || eq == arg)
		return ju_fail(&c, GB_EINVAL, arg, "expected NAME=VALUE");
	size_t nlen = (size_t)(eq - arg);
	char name[EXW_ARG_MAX];
	memcpy(name, arg, nlen);
	name[nlen] = '\0';
	snprintf(out->value, sizeof(out->value), "%s", eq + 1);
	/* A JSON scalar, or the text as written. */
	json_t *v = json_loads(out->value, JSON_DECODE_ANY, NULL);
	out->value_json = v != NULL && !json_is_object(v) && !json_is_array(v);
	json_decref(v);

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		size_t pl = strlen(forms[i].prefix);
		if (strncmp(name, forms[i].prefix, pl) == 0)
			return parse_element(&c, &forms[i], name + pl, out);
	}
	if (strncmp(name, "share.", 6) == 0) {
		if (!steps_ok(name + 6) || strchr(name + 6, '.'))
			return ju_fail(&c, GB_EINVAL, arg,
				       "expected share.GROUP");
		out->target = EXW_GROUP;
		snprintf(out->path, sizeof(out->path), "%s.share", name + 6);
		return GB_OK;
	}
	if (strncmp(name, "corrections.", 12) == 0) {
		if (!steps_ok(name + 12))
			return ju_fail(&c, GB_EINVAL, arg,
				       "expected corrections.PATH (such as "
				       "corrections.GroupsInstance.WeekSlice."
				       "MaxCorrection)");
		out->target = EXW_CORRECTION;
		snprintf(out->path, sizeof(out->path), "%s", name + 12);
		return GB_OK;
	}
	out->target = EXW_PARAM;
	snprintf(out->path, sizeof(out->path), "%s", name);
	return GB_OK;
}

/* ---- applying ----------------------------------------------------------- */

/* What a set failing says: "set N (NAME=VALUE): ..." */
struct actx {
	size_t i;
	const struct exw_set *s;
	char *err;
	size_t errlen;
};

static int afail(const struct actx *c, int rc, const char *fmt, ...)
{
	if (c->err && c->errlen) {
		int k = snprintf(c->err, c->errlen, "set %zu (%s): ", c->i + 1,
				 c->s->arg);
		if (k >= 0 && (size_t)k < c->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
			va_end(ap);
		}
	}
	return rc;
}

/* An array element's name under `key`: a string, or an integer as text
** (a TQ's "id"); NULL when it has none. */
static const char *elem_name(const json_t *e, const char *key, char buf[32])
{
	const json_t *v = json_object_get(e, key);
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, 32, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return NULL;
}

/* Does `path` start with step `name` (followed by '.' or its end)? Its
** length when it does, else 0. */
static size_t starts_with_step(const char *path, const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || strncmp(path, name, n) != 0 ||
	    (path[n] != '.' && path[n] != '\0'))
		return 0;
	return n;
}

/*
** The child of `cur` that `path` starts with: an object's member, an
** array's element at an index or with that `key` ("name", "id"); the
** longest name wins, so names holding dots are found. *rest points past
** the step and its dot ("" when the step ended the path). NULL when none.
*/
static json_t *pick(json_t *cur, const char *key, const char *path,
		    const char **rest)
{
	json_t *best = NULL;
	size_t blen = 0;
	if (json_is_object(cur)) {
		const char *k;
		json_t *v;
		json_object_foreach(cur, k, v)
		{
			size_t n = starts_with_step(path, k);
			if (n > blen) {
				best = v;
				blen = n;
			}
		}
	} else if (json_is_array(cur)) {
		size_t i;
		json_t *e;
		json_array_foreach(cur, i, e)
		{
			char buf[32];
			const char *nm = elem_name(e, key, buf);
			size_t n = nm ? starts_with_step(path, nm) : 0;
			if (n > blen) {
				best = e;
				blen = n;
			}
		}
		if (best == NULL && path[0] >= '0' && path[0] <= '9') {
			char *end = NULL;
			unsigned long long idx = strtoull(path, &end, 10);
			if ((*end == '.' || *end == '\0') &&
			    idx < json_array_size(cur)) {
				best = json_array_get(cur, (size_t)idx);
				blen = (size_t)(end - path);
			}
		}
	}
	if (best)
		*rest = path[blen] == '.' ? path + blen + 1 : path + blen;
	return best;
}

/* The first step of `path` into buf, for messages. */
static const char *first_step(const char *path, char *buf, size_t n)
{
	size_t k = strcspn(path, ".");
	snprintf(buf, n, "%.*s", (int)(k < n ? k : n - 1), path);
	return buf;
}

/* A JSON value of the set's VALUE; NULL when out of memory. */
static json_t *set_value(const struct exw_set *s)
{
	if (s->value_json)
		return json_loads(s->value, JSON_DECODE_ANY, NULL);
	return json_string(s->value);
}

/*
** Set field path `field` of `elem` (called `what` in messages) to the
** set's value: every step but the last must exist (pick), the last is
** set or added on an object, or replaces an array's element.
*/
static int set_field(const struct actx *c, json_t *elem, const char *what,
		     const char *field)
{
	json_t *cur = elem;
	const char *p = field;
	char step[EXW_ARG_MAX];
	while (strchr(p, '.') != NULL) {
		const char *rest = NULL;
		json_t *next = pick(cur, "name", p, &rest);
		if (next == NULL)
			return afail(c, GB_ENOTFOUND, "%s has no '%s' in '%s'",
				     what, first_step(p, step, sizeof(step)),
				     field);
		if (*rest == '\0')
			break; /* a member whose name holds dots: the last */
		if (!json_is_object(next) && !json_is_array(next))
			return afail(c, GB_ETYPE,
				     "%s: '%.*s' is not an object or array",
				     what, (int)(rest - 1 - field), field);
		cur = next;
		p = rest;
	}
	json_t *v = set_value(c->s);
	if (v == NULL)
		return afail(c, GB_ENOMEM, "out of memory");
	if (json_is_object(cur)) {
		if (json_object_set_new(cur, p, v) != 0)
			return afail(c, GB_ENOMEM, "out of memory");
		return GB_OK;
	}
	/* an array's element, by name or index */
	const char *rest = NULL;
	json_t *old = pick(cur, "name", p, &rest);
	size_t i = 0;
	while (old && json_array_get(cur, i) != old)
		i++;
	if (old == NULL || json_array_set_new(cur, i, v) != 0) {
		if (old == NULL)
			json_decref(v);
		return afail(c, old ? GB_ENOMEM : GB_ENOTFOUND,
			     "%s has no element '%s' in '%s'", what, p, field);
	}
	return GB_OK;
}

static const char *kind_text(enum ex_kind k)
{
	static const char *const names[] = {"task", "job", "analysis", "match",
					    "timeout"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static int apply_param(const struct actx *c, json_t *root, enum ex_kind k)
{
	if (k == EX_MATCH)
		return afail(c, GB_EINVAL,
			     "a match scenario has no parameters; change a "
			     "group (group.G.FIELD, share.G), a task queue "
			     "(tq.ID.FIELD) or the share corrector "
			     "(corrections.PATH)");
	const char *name = c->s->path;
	if (prm_find(name) == NULL)
		return afail(c, GB_ENOTFOUND, "unknown parameter '%s'", name);
	json_t *params = json_object_get(root, "params");
	if (params == NULL || json_is_null(params)) {
		params = json_object();
		if (params == NULL ||
		    json_object_set_new(root, "params", params) != 0)
			return afail(c, GB_ENOMEM, "out of memory");
	}
	if (!json_is_object(params))
		return afail(c, GB_ETYPE, "\"params\" is not an object");
	json_t *v = set_value(c->s);
	if (v == NULL || json_object_set_new(params, name, v) != 0)
		return afail(c, GB_ENOMEM, "out of memory");
	return GB_OK;
}

/* Where each element form looks, by scenario kind. */
struct where {
	enum exw_target target;
	enum ex_kind kind;
	const char *member; /* the scenario's list or object */
	const char *key;    /* an element's name in an array */
	const char *what;   /* "queue" in messages */
	const char *kinds;  /* the kinds the form is for */
};

static const struct where wheres[] = {
	{EXW_QUEUE, EX_JOBS, "queues", "name", "queue",
	 "job, analysis and timeout"},
	{EXW_QUEUE, EX_ANALYSIS, "queues", "name", "queue",
	 "job, analysis and timeout"},
	{EXW_QUEUE, EX_TIMEOUT, "queues", "name", "queue",
	 "job, analysis and timeout"},
	{EXW_NUCLEUS, EX_TASK, "nuclei", "name", "nucleus", "task"},
	{EXW_GROUP, EX_MATCH, "groups", "name", "group", "match"},
	{EXW_TQ, EX_MATCH, "taskQueues", "id", "task queue", "match"},
};

static int apply_element(const struct actx *c, json_t *root, enum ex_kind k)
{
	const struct where *w = NULL, *any = NULL;
	for (size_t i = 0; i < sizeof(wheres) / sizeof(wheres[0]); i++) {
		if (wheres[i].target != c->s->target)
			continue;
		any = &wheres[i];
		if (wheres[i].kind == k)
			w = &wheres[i];
	}
	if (w == NULL)
		return afail(c, GB_EINVAL,
			     "%s.NAME.FIELD is for %s scenarios; this is a %s "
			     "scenario",
			     exw_target_name(c->s->target),
			     any ? any->kinds : "?", kind_text(k));
	json_t *list = json_object_get(root, w->member);
	char step[EXW_ARG_MAX], what[EXW_ARG_MAX + 32];
	const char *rest = NULL;
	json_t *e = pick(list, w->key, c->s->path, &rest);
	if (e == NULL || *rest == '\0')
		return afail(c, GB_ENOTFOUND, "no %s '%s' in this %s scenario",
			     w->what,
			     first_step(c->s->path, step, sizeof(step)),
			     kind_text(k));
	snprintf(what, sizeof(what), "%s '%.*s'", w->what,
		 (int)(rest - 1 - c->s->path), c->s->path);
	if (!json_is_object(e))
		return afail(c, GB_ETYPE, "%s is not an object", what);
	return set_field(c, e, what, rest);
}

/* The alias dj_parse_config reads for an option, or NULL. */
static const char *alias_of(const char *opt)
{
	if (strcmp(opt, "MaxGlobalCorrectionFactor") == 0)
		return "MaxGlobalCorrection";
	if (strcmp(opt, "MaxGlobalCorrection") == 0)
		return "MaxGlobalCorrectionFactor";
	return NULL;
}

static int apply_correction(const struct actx *c, json_t *root, enum ex_kind k)
{
	if (k != EX_MATCH)
		return afail(c, GB_EINVAL,
			     "corrections.PATH is for match scenarios; this "
			     "is a %s scenario",
			     kind_text(k));
	json_t *sc = json_object_get(root, "shareCorrections");
	if (!json_is_object(sc))
		return afail(c, GB_ENOTFOUND,
			     "this match scenario has no \"shareCorrections\"");
	const char *path = c->s->path;
	char step[EXW_ARG_MAX];
	first_step(path, step, sizeof(step));
	json_t *base = sc;
	const char *what = "shareCorrections";
	if (strcmp(step, "enabled") != 0 &&
	    strcmp(step, "ShareCorrectorsToStart") != 0) {
		base = json_object_get(sc, "WMSHistory");
		what = "shareCorrections.WMSHistory";
		if (!json_is_object(base))
			return afail(c, GB_ENOTFOUND,
				     "this match scenario has no "
				     "shareCorrections.WMSHistory");
	}
	/* An option written under its other name is the one to change:
	** the parser takes one of the two, not both. */
	const char *last = strrchr(path, '.');
	const char *opt = last ? last + 1 : path;
	const char *alias = alias_of(opt);
	if (alias && last) {
		char parent[EXW_ARG_MAX];
		snprintf(parent, sizeof(parent), "%.*s", (int)(last - path),
			 path);
		const char *rest = NULL;
		json_t *inst = pick(base, "name", parent, &rest);
		if (inst && *rest == '\0' &&
		    json_object_get(inst, opt) == NULL &&
		    json_object_get(inst, alias) != NULL) {
			char p2[EXW_ARG_MAX * 2];
			snprintf(p2, sizeof(p2), "%s.%s", parent, alias);
			return set_field(c, base, what, p2);
		}
	}
	return set_field(c, base, what, path);
}

int exw_apply(json_t *scenario, const struct exw_set *sets, size_t n, char *err,
	      size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!json_is_object(scenario) || (sets == NULL && n > 0)) {
		const struct ju_ctx c = {.err = err, .errlen = errlen};
		return ju_fail(&c, GB_EINVAL, "(scenario)",
			       "not a scenario object");
	}
	enum ex_kind k = ex_kind_of(scenario);
	for (size_t i = 0; i < n; i++) {
		const struct actx c = {i, &sets[i], err, errlen};
		int rc;
		switch (sets[i].target) {
		case EXW_PARAM:
			rc = apply_param(&c, scenario, k);
			break;
		case EXW_CORRECTION:
			rc = apply_correction(&c, scenario, k);
			break;
		default:
			rc = apply_element(&c, scenario, k);
		}
		if (rc != GB_OK)
			return rc;
	}
	return GB_OK;
}

json_t *exw_sets_json(const struct exw_set *sets, size_t n)
{
	json_t *arr = json_array();
	int bad = arr == NULL || (sets == NULL && n > 0);
	for (size_t i = 0; !bad && i < n; i++) {
		json_t *o = json_object();
		bad = o == NULL || ju_set(o, "set", ju_str(sets[i].arg)) ||
		      ju_set(o, "target",
			     ju_str(exw_target_name(sets[i].target))) ||
		      ju_set(o, "path", ju_str(sets[i].path)) ||
		      ju_set(o, "value", set_value(&sets[i])) ||
		      ju_push(arr, o);
	}
	if (bad) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}
