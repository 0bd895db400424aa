/*
** gen_corpus.c — the seed corpus of tests/fuzz, and what each seed must
** get from its decoder.
**
** Usage: gen_corpus write|check|show [CORPUS-DIR]
**   write  (re)write every generated file under CORPUS-DIR/<target>/
**          (files found by fuzzing, "found-*" and libFuzzer's hash names,
**          are left alone)
**   check  regenerate in memory; every generated file must be in
**          CORPUS-DIR with the same bytes, and every one must decode as
**          its case says: valid ones accepted, each bad one refused with
**          exactly the "field: problem" text the worker puts in the
**          x-gridbroker-error header (ctest runs this: unit.fuzz_corpus)
**   show   print each file's name, size and what its decoder says
** CORPUS-DIR defaults to tests/fuzz/corpus of the source tree.
**
** Valid seeds are encoded by the real encoders from the samples the quick
** start uses (etc/tasks-sample.json, jobs-sample.json,
** analysis-sample.json, dirac-sample.json and the scenarios), parsed by
** the same JSON parsers as `gridbroker task|job|tq submit` and `pilot
** match`. Bad seeds are one valid message with one change: each case names
** a template (a valid encoding turned into JSON by cod_to_json) and a
** patch of paths to new values; a small JSON-to-msgpack writer packs the
** result. JSON cannot say NaN, uint64 max, duplicate keys or broken UTF-8,
** so strings starting with "@@" are markers the writer expands (see
** pack_marker). Packing the unpatched template must give the encoder's
** bytes back, which checks the writer itself.
*/
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <msgpack.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "codec/codec_jobs.h"
#include "codec/codec_panda.h"
#include "codec/codec_tq.h"
#include "explain/dirac_json.h"
#include "gb_error.h"
#include "explain/scenario.h"
#include "explain/scenario_jobs.h"

#ifndef FZ_SOURCE_DIR
#define FZ_SOURCE_DIR "."
#endif

/* The worker's arena for one request (worker.max_decode_bytes). */
#define GEN_ARENA (8u << 20)
/* Paths: the corpus directory, then "/<target>/<name>.msgpack". */
#define GEN_DIR_MAX 4096
#define GEN_PATH_MAX (GEN_DIR_MAX + 256)

enum target { T_TASK, T_JOBS, T_SUBMIT, T_PILOT, T_STATUS, T_REPLY, NT };

static const char *const target_dir[NT] = {
	"fuzz_task_broker", "fuzz_job_broker", "fuzz_job_submit",
	"fuzz_pilot_match", "fuzz_job_status", "fuzz_match_reply",
};

/* Which decoder judges a file of fuzz_match_reply. */
enum dec { DEC_DEFAULT, DEC_REPLY, DEC_EVENT };

/* One generated file. */
struct blob {
	enum target t;
	enum dec dec;
	char name[128];
	unsigned char *p;
	size_t n;
	char expect[400]; /* "ok" or the dead-letter header text */
};

static struct blob *blobs;
static size_t nblobs, capblobs;

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "gen_corpus: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	exit(1);
}

static void add_blob(enum target t, enum dec d, const char *name,
		     const void *p, size_t n, const char *expect)
{
	for (size_t i = 0; i < nblobs; i++)
		if (blobs[i].t == t && strcmp(blobs[i].name, name) == 0)
			die("two cases with one name", name);
	if (nblobs == capblobs) {
		capblobs = capblobs ? capblobs * 2 : 256;
		blobs = realloc(blobs, capblobs * sizeof(*blobs));
		if (blobs == NULL)
			die("out of memory", NULL);
	}
	struct blob *b = &blobs[nblobs++];
	memset(b, 0, sizeof(*b));
	b->t = t;
	b->dec = d;
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->p = malloc(n ? n : 1);
	if (b->p == NULL)
		die("out of memory", NULL);
	if (n)
		memcpy(b->p, p, n);
	b->n = n;
	snprintf(b->expect, sizeof(b->expect), "%s", expect);
}

/* ---- what a decoder says about some bytes -------------------------------- */

/* "ok", or the header text wk_dead_letter would write. */
static void judge(enum target t, enum dec d, const void *p, size_t n,
		  char *out, size_t outlen)
{
	struct arena a;
	arena_init(&a, t == T_REPLY && d != DEC_EVENT ? 1u << 20 : GEN_ARENA);
	struct cod_error err;
	memset(&err, 0, sizeof(err));
	int rc = GB_OK;
	switch (t) {
	case T_TASK: {
		struct tb_task x;
		rc = cod_decode_task(p, n, &a, &x, &err);
		break;
	}
	case T_JOBS: {
		struct gm_request x;
		rc = cdj_decode_request(p, n, &a, &x, NULL, &err);
		break;
	}
	case T_SUBMIT: {
		struct cdt_submit x;
		rc = cdt_decode_submit(p, n, &a, &x, &err);
		break;
	}
	case T_PILOT: {
		struct cdt_pilot x;
		rc = cdt_decode_pilot(p, n, &a, &x, &err);
		break;
	}
	case T_STATUS: {
		/* as pipeline_tq.c routes job.status */
		enum cdp_system sys = CDP_SYS_DIRAC;
		rc = cdp_status_system(p, n, &sys, &err);
		if (rc == GB_OK && sys == CDP_SYS_PANDA) {
			struct cdp_status x;
			rc = cdp_decode_status(p, n, &a, &x, &err);
		} else if (rc == GB_OK) {
			struct cdt_status x;
			rc = cdt_decode_status(p, n, &a, &x, &err);
		}
		break;
	}
	case T_REPLY:
		if (d == DEC_EVENT) {
			struct cdt_match *items;
			size_t ni;
			rc = cdt_decode_match_event(p, n, &a, &items, &ni,
						    &err);
		} else {
			struct cdt_match x;
			rc = cdt_decode_reply(p, n, &a, &x, &err);
		}
		break;
	case NT:
		break;
	}
	arena_free(&a);
	if (rc == GB_OK)
		snprintf(out, outlen, "ok");
	else
		snprintf(out, outlen, "%s: %s",
			 err.field[0] ? err.field : "body",
			 err.problem[0] ? err.problem : gb_strerror(rc));
}

/* ---- JSON with markers to msgpack ---------------------------------------- */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Hex digits (spaces between bytes allowed) into the buffer. */
static void write_hex(msgpack_sbuffer *sb, const char *hex)
{
	while (*hex) {
		if (*hex == ' ') {
			hex++;
			continue;
		}
		int hi = hexval(hex[0]), lo = hex[1] ? hexval(hex[1]) : -1;
		if (hi < 0 || lo < 0)
			die("bad hex in a case", hex);
		char c = (char)(hi << 4 | lo);
		msgpack_sbuffer_write(sb, &c, 1);
		hex += 2;
	}
}

static unsigned long marker_count(const char *s, const char *prefix)
{
	char *end;
	unsigned long v = strtoul(s + strlen(prefix), &end, 10);
	if (*end != '\0')
		die("bad count in a marker", s);
	return v;
}

static int has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
** The markers a string value may be:
**   @@nan @@inf @@-inf   float64 NaN, +Inf, -Inf
**   @@f32nan             float32 NaN
**   @@u64max @@i64min    uint 64 2^64-1, int 64 -2^63
**   @@str:N              a string of N 'x'
**   @@nils:N             an array of N nils
**   @@deep:N             N arrays, each the only element of the last
**   @@deepmap:N          N maps, each {"a": the next}
**   @@bin:N @@ext        bin 8 of N zero bytes, a fixext 1
**   @@hex:HEX            these bytes as they are
*/
static void pack_marker(msgpack_packer *pk, msgpack_sbuffer *sb,
			const char *s)
{
	if (strcmp(s, "@@nan") == 0) {
		msgpack_pack_double(pk, NAN);
	} else if (strcmp(s, "@@inf") == 0) {
		msgpack_pack_double(pk, INFINITY);
	} else if (strcmp(s, "@@-inf") == 0) {
		msgpack_pack_double(pk, -INFINITY);
	} else if (strcmp(s, "@@f32nan") == 0) {
		msgpack_pack_float(pk, NAN);
	} else if (strcmp(s, "@@u64max") == 0) {
		msgpack_pack_uint64(pk, UINT64_MAX);
	} else if (strcmp(s, "@@i64min") == 0) {
		msgpack_pack_int64(pk, INT64_MIN);
	} else if (has_prefix(s, "@@str:")) {
		unsigned long n = marker_count(s, "@@str:");
		char *x = malloc(n ? n : 1);
		if (x == NULL)
			die("out of memory", NULL);
		memset(x, 'x', n);
		msgpack_pack_str(pk, n);
		msgpack_pack_str_body(pk, x, n);
		free(x);
	} else if (has_prefix(s, "@@nils:")) {
		unsigned long n = marker_count(s, "@@nils:");
		msgpack_pack_array(pk, n);
		for (unsigned long i = 0; i < n; i++)
			msgpack_pack_nil(pk);
	} else if (has_prefix(s, "@@deep:")) {
		unsigned long n = marker_count(s, "@@deep:");
		for (unsigned long i = 0; i < n; i++)
			msgpack_pack_array(pk, i + 1 < n ? 1 : 0);
	} else if (has_prefix(s, "@@deepmap:")) {
		unsigned long n = marker_count(s, "@@deepmap:");
		for (unsigned long i = 0; i < n; i++) {
			msgpack_pack_map(pk, i + 1 < n ? 1 : 0);
			if (i + 1 < n)
				write_hex(sb, "a161"); /* "a" */
		}
	} else if (has_prefix(s, "@@bin:")) {
		unsigned long n = marker_count(s, "@@bin:");
		msgpack_pack_bin(pk, n);
		for (unsigned long i = 0; i < n; i++)
			write_hex(sb, "00");
	} else if (strcmp(s, "@@ext") == 0) {
		write_hex(sb, "d4 01 00");
	} else if (has_prefix(s, "@@hex:")) {
		write_hex(sb, s + 6);
	} else {
		die("unknown marker", s);
	}
}

static void pack_json(msgpack_packer *pk, msgpack_sbuffer *sb, json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL:
		msgpack_pack_nil(pk);
		break;
	case JSON_TRUE:
		msgpack_pack_true(pk);
		break;
	case JSON_FALSE:
		msgpack_pack_false(pk);
		break;
	case JSON_INTEGER:
		msgpack_pack_long_long(pk, json_integer_value(v));
		break;
	case JSON_REAL:
		msgpack_pack_double(pk, json_real_value(v));
		break;
	case JSON_STRING: {
		const char *s = json_string_value(v);
		if (has_prefix(s, "@@")) {
			pack_marker(pk, sb, s);
		} else {
			size_t n = json_string_length(v);
			msgpack_pack_str(pk, n);
			msgpack_pack_str_body(pk, s, n);
		}
		break;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *e;
		msgpack_pack_array(pk, json_array_size(v));
		json_array_foreach(v, i, e)
			pack_json(pk, sb, e);
		break;
	}
	case JSON_OBJECT: {
		const char *k;
		json_t *e;
		msgpack_pack_map(pk, json_object_size(v));
		json_object_foreach(v, k, e) {
			/* "@@dup:K" is key K once more; "@@hexkey:HEX" raw
			** key bytes (spaces make two keys distinct in JSON
			** but not on the wire) */
			if (has_prefix(k, "@@dup:")) {
				size_t n = strlen(k + 6);
				msgpack_pack_str(pk, n);
				msgpack_pack_str_body(pk, k + 6, n);
			} else if (has_prefix(k, "@@hexkey:")) {
				write_hex(sb, k + 9);
			} else {
				size_t n = strlen(k);
				msgpack_pack_str(pk, n);
				msgpack_pack_str_body(pk, k, n);
			}
			pack_json(pk, sb, e);
		}
		break;
	}
	}
}

static void json_to_msgpack(json_t *v, msgpack_sbuffer *sb)
{
	msgpack_packer pk;
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	pack_json(&pk, sb, v);
}

/* ---- patches ------------------------------------------------------------- */

/* Set (or with "@@delete" remove) the value at a dotted path such as
** "jobs.0.inputFiles.1.lfn"; numeric parts index arrays, one past the end
** appends. */
static void patch_set(json_t *root, const char *path, json_t *val)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *cur = root;
	char *part = buf, *dot;
	while ((dot = strchr(part, '.')) != NULL) {
		*dot = '\0';
		cur = json_is_array(cur)
			      ? json_array_get(cur, strtoul(part, NULL, 10))
			      : json_object_get(cur, part);
		if (cur == NULL)
			die("patch path not in the template", path);
		part = dot + 1;
	}
	int del = json_is_string(val) &&
		  strcmp(json_string_value(val), "@@delete") == 0;
	if (json_is_array(cur)) {
		size_t i = strtoul(part, NULL, 10);
		int rc = del		   ? json_array_remove(cur, i)
			 : i < json_array_size(cur) ? json_array_set(cur, i, val)
					   : json_array_append(cur, val);
		if (rc != 0)
			die("patch index out of range", path);
	} else if (json_is_object(cur)) {
		if (del ? json_object_del(cur, part) != 0
			: json_object_set(cur, part, val) != 0)
			die("patch key not in the template", path);
	} else {
		die("patch path through a scalar", path);
	}
}

/* A patch in JSON with ' for " (so cases read without escapes). */
static json_t *patch_parse(const char *text)
{
	char *s = strdup(text);
	if (s == NULL)
		die("out of memory", NULL);
	for (char *c = s; *c; c++)
		if (*c == '\'')
			*c = '"';
	json_error_t jerr;
	json_t *p = json_loads(s, 0, &jerr);
	free(s);
	if (!json_is_object(p))
		die("bad patch", text);
	return p;
}

/* ---- templates ----------------------------------------------------------- */

enum tmpl {
	TP_TASK, TP_JOBS, TP_ANAL, TP_SUBMIT, TP_PILOT, TP_DSTATUS, TP_PSTATUS,
	TP_REPLY, TP_NREPLY, TP_EVENT, TP_NEVENT, NTP
};

static const struct {
	const char *name;
	enum target t;
	enum dec dec;
} tmpl_info[NTP] = {
	[TP_TASK] = {"task", T_TASK, DEC_DEFAULT},
	[TP_JOBS] = {"jobs", T_JOBS, DEC_DEFAULT},
	[TP_ANAL] = {"anal", T_JOBS, DEC_DEFAULT},
	[TP_SUBMIT] = {"submit", T_SUBMIT, DEC_DEFAULT},
	[TP_PILOT] = {"pilot", T_PILOT, DEC_DEFAULT},
	[TP_DSTATUS] = {"dstatus", T_STATUS, DEC_DEFAULT},
	[TP_PSTATUS] = {"pstatus", T_STATUS, DEC_DEFAULT},
	[TP_REPLY] = {"reply", T_REPLY, DEC_REPLY},
	[TP_NREPLY] = {"nreply", T_REPLY, DEC_REPLY},
	[TP_EVENT] = {"event", T_REPLY, DEC_EVENT},
	[TP_NEVENT] = {"nevent", T_REPLY, DEC_EVENT},
};

/* Each template's encoder bytes and the JSON they convert to. */
static msgpack_sbuffer tmpl_bytes[NTP];
static json_t *tmpl_json[NTP];

static void set_template(enum tmpl k, const msgpack_sbuffer *sb)
{
	msgpack_sbuffer_init(&tmpl_bytes[k]);
	msgpack_sbuffer_write(&tmpl_bytes[k], sb->data, sb->size);
	tmpl_json[k] = cod_to_json(sb->data, sb->size);
	if (tmpl_json[k] == NULL)
		die("template does not convert to JSON", tmpl_info[k].name);
	/* the writer must reproduce the encoder's bytes */
	msgpack_sbuffer again;
	msgpack_sbuffer_init(&again);
	json_to_msgpack(tmpl_json[k], &again);
	if (again.size != sb->size || memcmp(again.data, sb->data, sb->size))
		die("the JSON writer does not reproduce the template",
		    tmpl_info[k].name);
	msgpack_sbuffer_destroy(&again);
}

/* ---- the valid seeds ----------------------------------------------------- */

static json_t *read_json(const char *rel)
{
	char path[4096], err[1024] = "";
	snprintf(path, sizeof(path), "%s/%s", FZ_SOURCE_DIR, rel);
	json_t *j = scn_read_file(path, err, sizeof(err));
	if (j == NULL)
		die(path, err);
	return j;
}

static void add_encoded(enum target t, enum dec d, const char *name,
			msgpack_sbuffer *sb, int rc)
{
	if (rc != GB_OK)
		die("a sample does not encode", name);
	add_blob(t, d, name, sb->data, sb->size, "ok");
	msgpack_sbuffer_clear(sb);
}

static int stem_cmp(const void *x, const void *y)
{
	return strcmp((const char *)x, (const char *)y);
}

/* Scenario files of one prefix, in name order, with their stem. */
static size_t scenario_files(const char *prefix, char names[][64],
			     size_t max)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/etc/scenarios", FZ_SOURCE_DIR);
	DIR *d = opendir(dir);
	if (d == NULL)
		die(dir, strerror(errno));
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < max) {
		size_t len = strlen(e->d_name);
		if (has_prefix(e->d_name, prefix) && len > 5 && len < 64 &&
		    strcmp(e->d_name + len - 5, ".json") == 0) {
			snprintf(names[n], 64, "%.*s", (int)(len - 5),
				 e->d_name);
			n++;
		}
	}
	closedir(d);
	qsort(names, n, 64, stem_cmp);
	return n;
}

static void valid_tasks(struct arena *a, msgpack_sbuffer *sb)
{
	char err[1024], name[128];
	json_t *arr = read_json("etc/tasks-sample.json");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		struct tb_task t;
		if (scn_parse_task(json_array_get(arr, i), "task", a, &t, err,
				   sizeof(err)) != GB_OK)
			die("etc/tasks-sample.json", err);
		int rc = cod_encode_task(&t, sb);
		if (i == 0)
			set_template(TP_TASK, sb);
		snprintf(name, sizeof(name), "valid-task-%lld", t.task_id);
		add_encoded(T_TASK, DEC_DEFAULT, name, sb, rc);
	}
	json_decref(arr);
	char files[32][64];
	size_t n = scenario_files("task-", files, 32);
	for (size_t i = 0; i < n; i++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "etc/scenarios/%s.json", files[i]);
		json_t *root = read_json(rel);
		struct tb_task t;
		if (scn_parse_task(json_object_get(root, "task"), "task", a, &t,
				   err, sizeof(err)) != GB_OK)
			die(rel, err);
		snprintf(name, sizeof(name), "valid-scenario-%s", files[i]);
		add_encoded(T_TASK, DEC_DEFAULT, name, sb,
			    cod_encode_task(&t, sb));
		json_decref(root);
	}
}

static void valid_jobs(struct arena *a, msgpack_sbuffer *sb)
{
	char err[1024], name[128];
	static const char *const files[] = {"etc/jobs-sample.json",
					    "etc/analysis-sample.json"};
	for (size_t f = 0; f < 2; f++) {
		json_t *arr = read_json(files[f]);
		for (size_t i = 0; i < json_array_size(arr); i++) {
			struct gm_request r;
			if (scj_parse_request(json_array_get(arr, i), "request",
					      a, 0, &r, err,
					      sizeof(err)) != GB_OK)
				die(files[f], err);
			snprintf(name, sizeof(name), "valid-%s-%lld",
				 r.an.is_analysis ? "anal" : "jobs",
				 r.t.task_id);
			add_encoded(T_JOBS, DEC_DEFAULT, name, sb,
				    cdj_encode_request(&r, sb));
			if (i == 0) {
				/* the templates: two jobs are enough */
				struct gm_request two = r;
				two.njobs = 2;
				if (cdj_encode_request(&two, sb) != GB_OK)
					die("template", files[f]);
				set_template(f ? TP_ANAL : TP_JOBS, sb);
				msgpack_sbuffer_clear(sb);
				/* and jobScope sent explicitly */
				struct cdj_extra x = {1};
				snprintf(name, sizeof(name),
					 "valid-%s-%lld-with-jobScope",
					 r.an.is_analysis ? "anal" : "jobs",
					 r.t.task_id);
				add_encoded(T_JOBS, DEC_DEFAULT, name, sb,
					    cdj_encode_request_ext(&two, &x,
								   sb));
			}
		}
		json_decref(arr);
	}
	static const char *const prefixes[] = {"jobs-", "analysis-"};
	for (size_t p = 0; p < 2; p++) {
		char stems[32][64];
		size_t n = scenario_files(prefixes[p], stems, 32);
		for (size_t i = 0; i < n; i++) {
			char rel[128];
			snprintf(rel, sizeof(rel), "etc/scenarios/%s.json",
				 stems[i]);
			json_t *root = read_json(rel);
			struct gm_request r;
			if (scj_parse_request(json_object_get(root, "task"),
					      "task", a, 1, &r, err,
					      sizeof(err)) != GB_OK)
				die(rel, err);
			snprintf(name, sizeof(name), "valid-scenario-%s",
				 stems[i]);
			add_encoded(T_JOBS, DEC_DEFAULT, name, sb,
				    cdj_encode_request(&r, sb));
			json_decref(root);
		}
	}
}

static void valid_dirac(struct arena *a, msgpack_sbuffer *sb)
{
	char err[1024], name[128];
	json_t *root = read_json("etc/dirac-sample.json");
	struct cdt_job *jobs;
	size_t n;
	if (dj_parse_jobs(json_object_get(root, "jobs"), "jobs", a, &jobs, &n,
			  err, sizeof(err)) != GB_OK)
		die("etc/dirac-sample.json", err);
	struct cdt_submit all = {jobs, n};
	add_encoded(T_SUBMIT, DEC_DEFAULT, "valid-submit-all", sb,
		    cdt_encode_submit(&all, sb));
	struct cdt_submit two = {jobs, 2};
	if (cdt_encode_submit(&two, sb) != GB_OK)
		die("template", "submit");
	set_template(TP_SUBMIT, sb);
	msgpack_sbuffer_clear(sb);
	for (size_t i = 0; i < n; i++) {
		struct cdt_submit one = {&jobs[i], 1};
		snprintf(name, sizeof(name), "valid-submit-%lld",
			 jobs[i].job_id);
		add_encoded(T_SUBMIT, DEC_DEFAULT, name, sb,
			    cdt_encode_submit(&one, sb));
	}
	json_t *pilots = json_object_get(root, "pilots");
	for (size_t i = 0; i < json_array_size(pilots); i++) {
		struct cdt_pilot p;
		if (dj_parse_pilot(json_array_get(pilots, i), "pilots", a, &p,
				   err, sizeof(err)) != GB_OK)
			die("etc/dirac-sample.json", err);
		int rc = cdt_encode_pilot(&p, sb);
		if (i == 0)
			set_template(TP_PILOT, sb);
		snprintf(name, sizeof(name), "valid-pilot-%s", p.pilot_id);
		add_encoded(T_PILOT, DEC_DEFAULT, name, sb, rc);
	}
	json_decref(root);
	char stems[32][64];
	size_t ns = scenario_files("match-", stems, 32);
	for (size_t i = 0; i < ns; i++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "etc/scenarios/%s.json", stems[i]);
		json_t *sc = read_json(rel);
		struct cdt_pilot p;
		if (dj_parse_pilot(json_object_get(sc, "pilot"), "pilot", a, &p,
				   err, sizeof(err)) != GB_OK)
			die(rel, err);
		if (p.pilot_id == NULL)
			p.pilot_id = stems[i];
		snprintf(name, sizeof(name), "valid-scenario-%s", stems[i]);
		add_encoded(T_PILOT, DEC_DEFAULT, name, sb,
			    cdt_encode_pilot(&p, sb));
		json_decref(sc);
	}
}

static void valid_status(msgpack_sbuffer *sb)
{
	char name[128];
	for (int s = 0; s < CDT_NSTATUS; s++) {
		/* the job and site of the quick start's first DIRAC job */
		struct cdt_status st = {7100001, (enum cdt_job_status)s,
					1700000000 + s,
					s == CDT_ST_WAITING ? NULL
							    : "LCG.CERN.cern"};
		int rc = cdt_encode_status(&st, sb);
		if (s == CDT_ST_RUNNING)
			set_template(TP_DSTATUS, sb);
		snprintf(name, sizeof(name), "valid-dirac-%s",
			 cdt_status_name(st.status));
		add_encoded(T_STATUS, DEC_DEFAULT, name, sb, rc);
	}
	/* every word a producer may send (not pending), then heartbeat */
	for (int s = TO_ST_DEFINED; s <= TO_ST_CANCELLED + 1; s++) {
		struct cdp_status st;
		memset(&st, 0, sizeof(st));
		st.job_id = 36100001001;
		st.time = 1700000000;
		const char *word;
		if (s == TO_ST_CANCELLED + 1) {
			st.heartbeat = 1;
			st.status = TO_ST_PENDING;
			word = "heartbeat";
		} else {
			st.status = (enum to_status)s;
			word = to_status_name(st.status);
		}
		if (s == TO_ST_RUNNING) {
			st.job_sub_status = "";
			st.site = "CERN-PROD";
		}
		if (s == TO_ST_FAILED)
			st.job_sub_status = "pilot_failed";
		int rc = cdp_encode_status(&st, sb);
		if (s == TO_ST_RUNNING)
			set_template(TP_PSTATUS, sb);
		snprintf(name, sizeof(name), "valid-panda-%s", word);
		add_encoded(T_STATUS, DEC_DEFAULT, name, sb, rc);
	}
}

/* A matched and a not matched outcome of one pilot, as the worker sends
** them (codes and reasons as tq_result_code/format give them). */
static void valid_replies(msgpack_sbuffer *sb)
{
	struct cdt_match m = {
		.decision_id = 41,
		.request_id = "gb-pilot-sample-pilot-1",
		.pilot_id = "sample-pilot-1",
		.site = "LCG.CERN.cern",
		.matched = 1,
		.job_id = 7100011,
		.tq_id = 3,
		.owner = "/DC=ch/DC=cern/OU=Organic Units/OU=Users/CN=lbdata",
		.owner_group = "lhcb_data",
		.tq_cpu_time = 300000,
		.code = "matched",
		.reason = "job 7100011 of task queue 3 (6 task queues "
			  "considered, 2 matched)",
		.considered = 6,
		.matched_tqs = 2,
		.empty = 0,
	};
	m.rejected[TQ_FL_SITE] = 2;
	m.rejected[TQ_FL_CPU_TIME] = 1;
	m.rejected[TQ_FL_PLATFORM] = 1;
	add_encoded(T_REPLY, DEC_REPLY, "valid-reply-matched", sb,
		    cdt_encode_reply(&m, sb));
	if (cdt_encode_reply(&m, sb) != GB_OK)
		die("template", "reply");
	set_template(TP_REPLY, sb);
	msgpack_sbuffer_clear(sb);

	struct cdt_match nm = m;
	nm.decision_id = 42;
	nm.request_id = "gb-pilot-sample-pilot-8";
	nm.pilot_id = "sample-pilot-8";
	nm.site = "LCG.NIKHEF.nl";
	nm.matched = 0;
	nm.job_id = nm.tq_id = nm.tq_cpu_time = 0;
	nm.owner = nm.owner_group = NULL;
	nm.code = "no_match";
	nm.reason = "no task queue matches: site 5, cpu_time 1";
	nm.considered = 6;
	nm.matched_tqs = 0;
	memset(nm.rejected, 0, sizeof(nm.rejected));
	nm.rejected[TQ_FL_SITE] = 5;
	nm.rejected[TQ_FL_CPU_TIME] = 1;
	add_encoded(T_REPLY, DEC_REPLY, "valid-reply-nomatch", sb,
		    cdt_encode_reply(&nm, sb));
	if (cdt_encode_reply(&nm, sb) != GB_OK)
		die("template", "nreply");
	set_template(TP_NREPLY, sb);
	msgpack_sbuffer_clear(sb);

	/* a redelivered request's reply: the counts were not kept */
	struct cdt_match re = m;
	re.considered = re.matched_tqs = re.empty = 0;
	memset(re.rejected, 0, sizeof(re.rejected));
	add_encoded(T_REPLY, DEC_REPLY, "valid-reply-redelivered", sb,
		    cdt_encode_reply(&re, sb));

	struct cdt_match items[3] = {m, m, m};
	items[1].decision_id = 43;
	items[1].job_id = 7100012;
	items[1].pilot_id = "sample-pilot-3";
	items[1].request_id = "gb-pilot-sample-pilot-3";
	items[2].decision_id = 44;
	items[2].job_id = 7100001;
	items[2].tq_id = 1;
	items[2].owner = "/DC=ch/DC=cern/OU=Organic Units/OU=Users/CN=lbprods";
	items[2].owner_group = "lhcb_mc";
	items[2].pilot_id = "sample-pilot-4";
	items[2].request_id = "gb-pilot-sample-pilot-4";
	add_encoded(T_REPLY, DEC_EVENT, "valid-event-matched", sb,
		    cdt_encode_match_event("pilot.matched", items, 3, sb));
	if (cdt_encode_match_event("pilot.matched", items, 2, sb) != GB_OK)
		die("template", "event");
	set_template(TP_EVENT, sb);
	msgpack_sbuffer_clear(sb);

	struct cdt_match nitems[2] = {nm, nm};
	nitems[1].decision_id = 45;
	nitems[1].pilot_id = "sample-pilot-7";
	nitems[1].request_id = "gb-pilot-sample-pilot-7";
	nitems[1].code = "no_job";
	nitems[1].reason = "2 task queues match but have no waiting job";
	add_encoded(T_REPLY, DEC_EVENT, "valid-event-nomatch", sb,
		    cdt_encode_match_event("pilot.nomatch", nitems, 2, sb));
	if (cdt_encode_match_event("pilot.nomatch", nitems, 2, sb) != GB_OK)
		die("template", "nevent");
	set_template(TP_NEVENT, sb);
	msgpack_sbuffer_clear(sb);
}

/* ---- the bad (and a few odd but valid) seeds ----------------------------- */

/*
** A case: `base` is a template name, "raw" (patch is hex bytes), "text"
** (patch is the bytes as text), or "cut:T" (template T's first half),
** "byte:T" (its first byte), "trail:T" (T and one nil), "twice:T" (T twice).
** Otherwise `patch` is {'path': value, ...} applied to the template.
*/
struct gcase {
	enum target t;
	const char *name;
	const char *base;
	const char *patch;
	const char *expect;
};

#include "gen_cases.h"

static int find_tmpl(const char *name)
{
	for (int k = 0; k < NTP; k++)
		if (strcmp(tmpl_info[k].name, name) == 0)
			return k;
	die("unknown template", name);
	return -1;
}

static void bad_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct gcase *c = &cases[i];
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		enum dec d = c->t == T_REPLY ? DEC_REPLY : DEC_DEFAULT;
		const char *colon = strchr(c->base, ':');
		if (strcmp(c->base, "raw") == 0) {
			write_hex(&sb, c->patch);
		} else if (strcmp(c->base, "text") == 0) {
			/* (not for ""; msgpack-c would memcpy to NULL) */
			if (c->patch[0])
				msgpack_sbuffer_write(&sb, c->patch,
						      strlen(c->patch));
		} else if (colon) {
			int k = find_tmpl(colon + 1);
			const msgpack_sbuffer *tb = &tmpl_bytes[k];
			d = tmpl_info[k].dec;
			if (has_prefix(c->base, "cut:"))
				msgpack_sbuffer_write(&sb, tb->data,
						      tb->size / 2);
			else if (has_prefix(c->base, "byte:"))
				msgpack_sbuffer_write(&sb, tb->data, 1);
			else if (has_prefix(c->base, "trail:")) {
				msgpack_sbuffer_write(&sb, tb->data, tb->size);
				write_hex(&sb, "c0");
			} else if (has_prefix(c->base, "twice:")) {
				msgpack_sbuffer_write(&sb, tb->data, tb->size);
				msgpack_sbuffer_write(&sb, tb->data, tb->size);
			} else {
				die("unknown base", c->base);
			}
		} else {
			int k = find_tmpl(c->base);
			d = tmpl_info[k].dec;
			json_t *doc = json_deep_copy(tmpl_json[k]);
			json_t *patch = patch_parse(c->patch);
			const char *path;
			json_t *v;
			json_object_foreach(patch, path, v)
				patch_set(doc, path, v);
			json_to_msgpack(doc, &sb);
			json_decref(patch);
			json_decref(doc);
		}
		add_blob(c->t, d, c->name, sb.data, sb.size, c->expect);
		msgpack_sbuffer_destroy(&sb);
	}
}

/* ---- write, check, show -------------------------------------------------- */

static void blob_path(const struct blob *b, const char *dir, char *out,
		      size_t len)
{
	snprintf(out, len, "%s/%s/%s.msgpack", dir, target_dir[b->t],
		 b->name);
}

static int do_write(const char *dir)
{
	for (int t = 0; t < NT; t++) {
		char d[GEN_PATH_MAX];
		snprintf(d, sizeof(d), "%s/%s", dir, target_dir[t]);
		if (mkdir(d, 0777) != 0 && errno != EEXIST)
			die(d, strerror(errno));
	}
	for (size_t i = 0; i < nblobs; i++) {
		char path[GEN_PATH_MAX];
		blob_path(&blobs[i], dir, path, sizeof(path));
		FILE *f = fopen(path, "wb");
		if (f == NULL || fwrite(blobs[i].p, 1, blobs[i].n, f) !=
					 blobs[i].n ||
		    fclose(f) != 0)
			die(path, strerror(errno));
	}
	printf("wrote %zu files under %s\n", nblobs, dir);
	return 0;
}

/* 1 when the file at `path` holds exactly these bytes. */
static int same_file(const char *path, const unsigned char *p, size_t n)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return 0;
	unsigned char *buf = malloc(n + 1);
	size_t got = buf ? fread(buf, 1, n + 1, f) : 0;
	fclose(f);
	int same = buf && got == n && (n == 0 || memcmp(buf, p, n) == 0);
	free(buf);
	return same;
}

static int do_check(const char *dir, int show)
{
	int bad = 0;
	size_t nok = 0, nbad = 0;
	for (size_t i = 0; i < nblobs; i++) {
		const struct blob *b = &blobs[i];
		char got[400], path[GEN_PATH_MAX];
		judge(b->t, b->dec, b->p, b->n, got, sizeof(got));
		if (show) {
			printf("%-18s %-44s %7zu  %s\n", target_dir[b->t] + 5,
			       b->name, b->n, got);
			continue;
		}
		blob_path(b, dir, path, sizeof(path));
		if (!same_file(path, b->p, b->n)) {
			printf("FAIL %s: missing or not what gen_corpus "
			       "makes (run gen_corpus write)\n",
			       path);
			bad = 1;
		}
		if (strcmp(got, b->expect) != 0) {
			printf("FAIL %s/%s:\n  expected: %s\n  got:      "
			       "%s\n",
			       target_dir[b->t], b->name, b->expect, got);
			bad = 1;
		}
		if (strcmp(b->expect, "ok") == 0)
			nok++;
		else
			nbad++;
	}
	/* A file with a generated prefix that no case makes is a renamed or
	** dropped case whose old file stayed behind. */
	static const char *const prefixes[] = {"valid-", "bad-", "ok-",
					       "json-"};
	for (int t = 0; !show && t < NT; t++) {
		char d[GEN_PATH_MAX];
		snprintf(d, sizeof(d), "%s/%s", dir, target_dir[t]);
		DIR *dp = opendir(d);
		struct dirent *e;
		while (dp && (e = readdir(dp)) != NULL) {
			int generated = 0, known = 0;
			for (size_t k = 0; k < 4; k++)
				generated |= has_prefix(e->d_name, prefixes[k]);
			for (size_t i = 0; generated && !known && i < nblobs;
			     i++) {
				size_t len = strlen(blobs[i].name);
				known = blobs[i].t == (enum target)t &&
					strncmp(e->d_name, blobs[i].name,
						len) == 0 &&
					strcmp(e->d_name + len, ".msgpack") ==
						0;
			}
			if (generated && !known) {
				printf("FAIL %s/%s: no case makes this file "
				       "(remove it)\n",
				       d, e->d_name);
				bad = 1;
			}
		}
		if (dp)
			closedir(dp);
	}
	if (!show)
		printf("%zu corpus files checked (%zu accepted, %zu refused "
		       "with the expected reason): %s\n",
		       nblobs, nok, nbad, bad ? "FAILED" : "ok");
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: gen_corpus write|check|show [DIR]\n");
		return 2;
	}
	char dir[GEN_DIR_MAX];
	snprintf(dir, sizeof(dir), "%s",
		 argc == 3 ? argv[2] : FZ_SOURCE_DIR "/tests/fuzz/corpus");
	struct arena a;
	arena_init(&a, 64u << 20);
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	valid_tasks(&a, &sb);
	valid_jobs(&a, &sb);
	valid_dirac(&a, &sb);
	valid_status(&sb);
	valid_replies(&sb);
	bad_cases();
	int rc;
	if (strcmp(argv[1], "write") == 0)
		rc = do_write(dir);
	else if (strcmp(argv[1], "check") == 0)
		rc = do_check(dir, 0);
	else if (strcmp(argv[1], "show") == 0)
		rc = do_check(dir, 1);
	else
		rc = 2;
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
	for (int k = 0; k < NTP; k++) {
		msgpack_sbuffer_destroy(&tmpl_bytes[k]);
		json_decref(tmpl_json[k]);
	}
	for (size_t i = 0; i < nblobs; i++)
		free(blobs[i].p);
	free(blobs);
	return rc;
}
