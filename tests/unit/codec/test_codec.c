/*
** test_codec.c — the msgpack codec: validating decode, encode, events, JSON.
**
** Most decode cases start from one valid task (written as JSON for
** readability and packed to msgpack by pack_json) and apply one patch: set a
** field at a path to a JSON value, or delete it. String markers stand for what
** JSON cannot say: "#nan", "#inf", "#-inf" (float64), "#f32:1.5" (float32),
** "#bin:3" (3 bytes of binary), "#hex:c328" (a string with those raw bytes).
** Cases JSON cannot express at all (duplicate keys, non-string keys, lying
** length headers, deep nesting) are written as bytes.
*/
#include "gbtest.h"

#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>
#include <msgpack.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "decision.h"
#include "gb_error.h"
#include "taskbroker.h"

#define ARENA_CAP (8u << 20)

static const char *base_task =
	"{\"taskID\": 4242, \"gshare\": \"MC 16 simul\", \"taskPriority\": 500,"
	" \"ioIntensity\": 250.5, \"t1Weight\": -1, \"inputPreStaging\": true,"
	" \"taskBrokerOnMaster\": true, \"fullChain\": \"require\","
	" \"parentNucleus\": \"BNL-ATLAS\", \"normalizedExpOutSize\": 0.25,"
	" \"inputDatasets\": ["
	"  {\"name\": \"ds.A\", \"primary\": true, \"size\": 1200.5,"
	"   \"files\": 300, \"onTape\": true},"
	"  {\"name\": \"ds.B\", \"size\": 10, \"files\": 2},"
	"  {\"name\": \"ds.C\", \"size\": 0, \"files\": 0}]}";

/* ---- JSON -> msgpack, with markers ------------------------------------- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void pack_json(msgpack_packer *pk, json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *v;
		msgpack_pack_map(pk, json_object_size(j));
		json_object_foreach(j, k, v) {
			msgpack_pack_str_with_body(pk, k, strlen(k));
			pack_json(pk, v);
		}
		break;
	}
	case JSON_ARRAY:
		msgpack_pack_array(pk, json_array_size(j));
		for (size_t i = 0; i < json_array_size(j); i++)
			pack_json(pk, json_array_get(j, i));
		break;
	case JSON_STRING: {
		const char *s = json_string_value(j);
		if (strcmp(s, "#nan") == 0) {
			msgpack_pack_double(pk, NAN);
		} else if (strcmp(s, "#inf") == 0) {
			msgpack_pack_double(pk, INFINITY);
		} else if (strcmp(s, "#-inf") == 0) {
			msgpack_pack_double(pk, -INFINITY);
		} else if (strncmp(s, "#f32:", 5) == 0) {
			msgpack_pack_float(pk, strtof(s + 5, NULL));
		} else if (strncmp(s, "#bin:", 5) == 0) {
			size_t n = strtoul(s + 5, NULL, 10);
			msgpack_pack_bin(pk, n);
			msgpack_pack_bin_body(pk, "\x01\x02\x03\x04", n);
		} else if (strncmp(s, "#hex:", 5) == 0) {
			char raw[64];
			size_t n = 0;
			for (const char *p = s + 5; p[0] && p[1]; p += 2)
				raw[n++] = (char)(hexval(p[0]) * 16 +
						  hexval(p[1]));
			msgpack_pack_str_with_body(pk, raw, n);
		} else {
			msgpack_pack_str_with_body(pk, s, strlen(s));
		}
		break;
	}
	case JSON_INTEGER:
		msgpack_pack_long_long(pk, json_integer_value(j));
		break;
	case JSON_REAL:
		msgpack_pack_double(pk, json_real_value(j));
		break;
	case JSON_TRUE:
		msgpack_pack_true(pk);
		break;
	case JSON_FALSE:
		msgpack_pack_false(pk);
		break;
	case JSON_NULL:
		msgpack_pack_nil(pk);
		break;
	}
}

/*
** Apply one patch to `root`: `path` like "inputDatasets[2].size" or
** "taskID"; `value` JSON text, or NULL to delete the field.
*/
static void apply_patch(json_t *root, const char *path, const char *value)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *cur = root;
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
			if (value == NULL) {
				json_object_del(cur, part);
			} else {
				json_error_t e;
				json_t *v = json_loads(value, JSON_DECODE_ANY,
						       &e);
				assert_non_null(v);
				json_object_set_new(cur, part, v);
			}
			return;
		}
		cur = json_object_get(cur, part);
		assert_non_null(cur);
		if (idx >= 0) {
			if (next == NULL) {
				json_error_t e;
				json_t *v = json_loads(value, JSON_DECODE_ANY,
						       &e);
				assert_non_null(v);
				json_array_set_new(cur, (size_t)idx, v);
				return;
			}
			cur = json_array_get(cur, (size_t)idx);
			assert_non_null(cur);
		}
		part = next;
	}
}

/* Pack `json` (optionally patched) into sb. */
static void make_msg(msgpack_sbuffer *sb, const char *json, const char *path,
		     const char *value, int del)
{
	json_error_t e;
	json_t *root = json_loads(json, JSON_DECODE_ANY, &e);
	if (root == NULL)
		fail_msg("bad test JSON: %s", e.text);
	if (path)
		apply_patch(root, path, del ? NULL : value);
	msgpack_sbuffer_init(sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	pack_json(&pk, root);
	json_decref(root);
}

static int decode(const void *buf, size_t len, struct tb_task *t,
		  struct cod_error *err, struct arena *a)
{
	arena_init(a, ARENA_CAP);
	return cod_decode_task(buf, len, a, t, err);
}

/* ---- valid messages ----------------------------------------------------- */

static void test_decode_all_fields(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	make_msg(&sb, base_task, NULL, NULL, 0);
	struct arena a;
	struct tb_task t;
	struct cod_error err;
	assert_int_equal(decode(sb.data, sb.size, &t, &err, &a), GB_OK);
	msgpack_sbuffer_destroy(&sb); /* the task must not point into it */
	assert_int_equal(t.task_id, 4242);
	assert_string_equal(t.gshare, "MC 16 simul");
	assert_int_equal(t.priority, 500);
	assert_near(t.io_intensity, 250.5, 1e-12);
	assert_near(t.t1_weight, -1, 1e-12);
	assert_true(t.input_prestaging);
	assert_true(t.broker_on_master);
	assert_int_equal(t.full_chain, TB_FC_REQUIRE);
	assert_string_equal(t.parent_nucleus, "BNL-ATLAS");
	assert_near(t.norm_exp_out_size, 0.25, 1e-12);
	assert_int_equal(t.ndatasets, 3);
	assert_string_equal(t.datasets[0].name, "ds.A");
	assert_true(t.datasets[0].primary);
	assert_near(t.datasets[0].size, 1200.5, 1e-12);
	assert_int_equal(t.datasets[0].files, 300);
	assert_true(t.datasets[0].on_tape);
	/* primary and onTape default to false */
	assert_false(t.datasets[1].primary);
	assert_false(t.datasets[1].on_tape);
	assert_near(t.datasets[2].size, 0, 1e-12);
	arena_free(&a);
}

static void test_decode_defaults(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	make_msg(&sb,
		 "{\"taskID\": 1, \"gshare\": \"Express\", \"taskPriority\": 0,"
		 " \"inputDatasets\": [], \"fullChain\": null,"
		 " \"parentNucleus\": null, \"ioIntensity\": null}",
		 NULL, NULL, 0);
	struct arena a;
	struct tb_task t;
	struct cod_error err;
	assert_int_equal(decode(sb.data, sb.size, &t, &err, &a), GB_OK);
	assert_near(t.io_intensity, 0, 1e-12);
	assert_near(t.t1_weight, 0, 1e-12);
	assert_near(t.norm_exp_out_size, 0, 1e-12);
	assert_false(t.input_prestaging);
	assert_false(t.broker_on_master);
	assert_int_equal(t.full_chain, TB_FC_NONE);
	assert_null(t.parent_nucleus);
	assert_int_equal(t.ndatasets, 0);
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
}

/* Unknown keys, however nested (within the depth limit), are ignored. */
static void test_decode_unknown_keys_ignored(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	make_msg(&sb, base_task, "futureField",
		 "{\"a\": [1, 2.5, \"x\", {\"b\": null}], \"c\": \"#bin:3\"}",
		 0);
	struct arena a;
	struct tb_task t;
	struct cod_error err;
	assert_int_equal(decode(sb.data, sb.size, &t, &err, &a), GB_OK);
	assert_int_equal(t.task_id, 4242);
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
}

/* Integers are numbers; floats are not integers. */
static void test_decode_numbers(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value;
		int rc;
		double want; /* value read back for numbers */
	} cases[] = {
		{"ioIntensity", "250", GB_OK, 250},
		{"ioIntensity", "\"#f32:1.5\"", GB_OK, 1.5},
		{"ioIntensity", "0", GB_OK, 0},
		{"t1Weight", "-7", GB_OK, -7},
		{"t1Weight", "-0.5", GB_OK, -0.5},
		{"normalizedExpOutSize", "3", GB_OK, 3},
		{"inputDatasets[0].size", "\"#f32:0.25\"", GB_OK, 0.25},
		{"taskPriority", "1000000", GB_OK, 1000000},
		{"taskID", "9223372036854775807", GB_OK, 9223372036854775807.0},
		{"taskID", "5.0", GB_ETYPE, 0},
		{"taskPriority", "\"#f32:5\"", GB_ETYPE, 0},
		{"inputDatasets[0].files", "300.0", GB_ETYPE, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, base_task, cases[i].path, cases[i].value, 0);
		struct arena a;
		struct tb_task t;
		struct cod_error err;
		int rc = decode(sb.data, sb.size, &t, &err, &a);
		if (rc != cases[i].rc)
			fail_msg("case %zu (%s=%s): rc %s, want %s (%s: %s)", i,
				 cases[i].path, cases[i].value, gb_errname(rc),
				 gb_errname(cases[i].rc), err.field,
				 err.problem);
		if (rc == GB_OK) {
			double got = 0;
			if (strcmp(cases[i].path, "ioIntensity") == 0)
				got = t.io_intensity;
			else if (strcmp(cases[i].path, "t1Weight") == 0)
				got = t.t1_weight;
			else if (strcmp(cases[i].path, "normalizedExpOutSize") ==
				 0)
				got = t.norm_exp_out_size;
			else if (strcmp(cases[i].path, "taskPriority") == 0)
				got = (double)t.priority;
			else if (strcmp(cases[i].path, "taskID") == 0)
				got = (double)t.task_id;
			else
				got = t.datasets[0].size;
			assert_near(got, cases[i].want, 1e-12);
		} else {
			assert_string_equal(err.field, cases[i].path);
			assert_non_null(strstr(err.problem,
					       "expected integer, got float"));
		}
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* ---- every error kind, with its path -------------------------------------- */

static void test_decode_errors(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value; /* value NULL: delete the field */
		int rc;
		const char *field, *problem;
	} cases[] = {
		/* missing */
		{"taskID", NULL, GB_EMISSING, "taskID", "missing"},
		{"gshare", NULL, GB_EMISSING, "gshare", "missing"},
		{"taskPriority", NULL, GB_EMISSING, "taskPriority", "missing"},
		{"inputDatasets", NULL, GB_EMISSING, "inputDatasets",
		 "missing"},
		{"inputDatasets[1].name", NULL, GB_EMISSING,
		 "inputDatasets[1].name", "missing"},
		{"inputDatasets[2].size", NULL, GB_EMISSING,
		 "inputDatasets[2].size", "missing"},
		{"inputDatasets[0].files", NULL, GB_EMISSING,
		 "inputDatasets[0].files", "missing"},
		/* types */
		{"taskID", "\"4242\"", GB_ETYPE, "taskID",
		 "expected integer, got string"},
		{"taskID", "null", GB_ETYPE, "taskID",
		 "expected integer, got null"},
		{"gshare", "7", GB_ETYPE, "gshare",
		 "expected string, got integer"},
		{"gshare", "\"#bin:3\"", GB_ETYPE, "gshare",
		 "expected string, got binary"},
		{"ioIntensity", "\"fast\"", GB_ETYPE, "ioIntensity",
		 "expected a number, got string"},
		{"inputPreStaging", "1", GB_ETYPE, "inputPreStaging",
		 "expected boolean, got integer"},
		{"taskBrokerOnMaster", "\"yes\"", GB_ETYPE,
		 "taskBrokerOnMaster", "expected boolean, got string"},
		{"fullChain", "3", GB_ETYPE, "fullChain",
		 "expected null or string, got integer"},
		{"parentNucleus", "[]", GB_ETYPE, "parentNucleus",
		 "expected string, got array"},
		{"inputDatasets", "{}", GB_ETYPE, "inputDatasets",
		 "expected array, got map"},
		{"inputDatasets[1]", "5", GB_ETYPE, "inputDatasets[1]",
		 "expected a map, got integer"},
		{"inputDatasets[0].primary", "\"yes\"", GB_ETYPE,
		 "inputDatasets[0].primary", "expected boolean, got string"},
		{"inputDatasets[2].onTape", "0", GB_ETYPE,
		 "inputDatasets[2].onTape", "expected boolean, got integer"},
		{"inputDatasets[1].files", "1.5", GB_ETYPE,
		 "inputDatasets[1].files", "expected integer, got float"},
		/* ranges */
		{"taskID", "0", GB_ERANGE, "taskID",
		 "expected a positive integer, got 0"},
		{"taskID", "-5", GB_ERANGE, "taskID",
		 "expected a positive integer, got -5"},
		{"taskPriority", "1000001", GB_ERANGE, "taskPriority",
		 "expected an integer in [0, 1000000], got 1000001"},
		{"taskPriority", "-1", GB_ERANGE, "taskPriority",
		 "expected an integer in [0, 1000000], got -1"},
		{"gshare", "\"\"", GB_ERANGE, "gshare",
		 "expected a non-empty string"},
		{"ioIntensity", "-3", GB_ERANGE, "ioIntensity",
		 "expected a number >= 0, got -3"},
		{"ioIntensity", "\"#nan\"", GB_ERANGE, "ioIntensity",
		 "expected a number >= 0, got NaN"},
		{"t1Weight", "\"#nan\"", GB_ERANGE, "t1Weight",
		 "expected a finite number, got NaN"},
		{"t1Weight", "\"#inf\"", GB_ERANGE, "t1Weight",
		 "expected a finite number, got Inf"},
		{"normalizedExpOutSize", "\"#-inf\"", GB_ERANGE,
		 "normalizedExpOutSize", "expected a number >= 0, got -Inf"},
		{"normalizedExpOutSize", "-0.5", GB_ERANGE,
		 "normalizedExpOutSize", "expected a number >= 0, got -0.5"},
		{"inputDatasets[2].size", "-3", GB_ERANGE,
		 "inputDatasets[2].size", "expected a number >= 0, got -3"},
		{"inputDatasets[2].size", "\"#nan\"", GB_ERANGE,
		 "inputDatasets[2].size", "expected a number >= 0, got NaN"},
		{"inputDatasets[0].files", "-1", GB_ERANGE,
		 "inputDatasets[0].files",
		 "expected an integer >= 0, got -1"},
		{"inputDatasets[0].name", "\"\"", GB_ERANGE,
		 "inputDatasets[0].name", "expected a non-empty string"},
		{"fullChain", "\"sometimes\"", GB_ERANGE, "fullChain",
		 "unknown value 'sometimes'"},
		{"fullChain", "\"ONLY\"", GB_ERANGE, "fullChain",
		 "unknown value 'ONLY'"},
		{"gshare", "\"#hex:c328\"", GB_ERANGE, "gshare",
		 "string is not valid UTF-8"},
		{"parentNucleus", "\"#hex:410042\"", GB_ERANGE,
		 "parentNucleus", "string contains a NUL byte"},
		/* duplicates and sizes */
		{"inputDatasets[2].name", "\"ds.A\"", GB_EDUP,
		 "inputDatasets[2].name",
		 "duplicate dataset (also inputDatasets[0])"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, base_task, cases[i].path, cases[i].value,
			 cases[i].value == NULL);
		struct arena a;
		struct tb_task t;
		struct cod_error err;
		int rc = decode(sb.data, sb.size, &t, &err, &a);
		if (rc != cases[i].rc || strcmp(err.field, cases[i].field) ||
		    strcmp(err.problem, cases[i].problem))
			fail_msg("case %zu (%s): got %s '%s: %s', want %s "
				 "'%s: %s'",
				 i, cases[i].path, gb_errname(rc), err.field,
				 err.problem, gb_errname(cases[i].rc),
				 cases[i].field, cases[i].problem);
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* Strings longer than COD_MAX_STRING - 1 bytes are refused. */
static void test_decode_long_string(void **state)
{
	(void)state;
	char value[400];
	value[0] = '"';
	memset(value + 1, 'x', 300);
	memcpy(value + 301, "\"", 2);
	static const char *const paths[] = {"gshare", "parentNucleus",
					    "inputDatasets[1].name"};
	for (size_t i = 0; i < 3; i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, base_task, paths[i], value, 0);
		struct arena a;
		struct tb_task t;
		struct cod_error err;
		assert_int_equal(decode(sb.data, sb.size, &t, &err, &a),
				 GB_ETOOBIG);
		assert_string_equal(err.field, paths[i]);
		assert_string_equal(err.problem,
				    "string of 300 bytes exceeds the limit "
				    "of 255");
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* The root must be a map. */
static void test_decode_root_not_map(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	make_msg(&sb, "[1, 2]", NULL, NULL, 0);
	struct arena a;
	struct tb_task t;
	struct cod_error err;
	assert_int_equal(decode(sb.data, sb.size, &t, &err, &a), GB_ETYPE);
	assert_string_equal(err.field, "");
	assert_string_equal(err.problem, "expected a map, got array");
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
}

/* ---- byte-level cases ------------------------------------------------------ */

static void pk_s(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str_with_body(pk, s, strlen(s));
}

/* The required fields of a task; `extra` more map entries follow. */
static void pack_required(msgpack_packer *pk, size_t extra)
{
	msgpack_pack_map(pk, 4 + extra);
	pk_s(pk, "taskID");
	msgpack_pack_int(pk, 7);
	pk_s(pk, "gshare");
	pk_s(pk, "Express");
	pk_s(pk, "taskPriority");
	msgpack_pack_int(pk, 900);
	pk_s(pk, "inputDatasets");
	msgpack_pack_array(pk, 0);
}

static void test_decode_duplicate_keys(void **state)
{
	(void)state;
	static const struct {
		const char *key;
		const char *field;
	} cases[] = {
		{"taskID", "taskID"},   /* a known key twice */
		{"future", "future"},   /* an unknown key twice */
	};
	for (size_t i = 0; i < 2; i++) {
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		msgpack_packer pk;
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		int known = strcmp(cases[i].key, "taskID") == 0;
		pack_required(&pk, known ? 1 : 2);
		if (!known) {
			pk_s(&pk, cases[i].key);
			msgpack_pack_int(&pk, 1);
		}
		pk_s(&pk, cases[i].key);
		msgpack_pack_int(&pk, 2);
		struct arena a;
		struct tb_task t;
		struct cod_error err;
		assert_int_equal(decode(sb.data, sb.size, &t, &err, &a),
				 GB_EDUP);
		assert_string_equal(err.field, cases[i].field);
		assert_string_equal(err.problem, "duplicate key");
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}

	/* inside a dataset */
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 4);
	pk_s(&pk, "taskID");
	msgpack_pack_int(&pk, 7);
	pk_s(&pk, "gshare");
	pk_s(&pk, "Express");
	pk_s(&pk, "taskPriority");
	msgpack_pack_int(&pk, 900);
	pk_s(&pk, "inputDatasets");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 4);
	pk_s(&pk, "name");
	pk_s(&pk, "ds");
	pk_s(&pk, "size");
	msgpack_pack_int(&pk, 1);
	pk_s(&pk, "files");
	msgpack_pack_int(&pk, 1);
	pk_s(&pk, "size");
	msgpack_pack_int(&pk, 2);
	struct arena a;
	struct tb_task t;
	struct cod_error err;
	assert_int_equal(decode(sb.data, sb.size, &t, &err, &a), GB_EDUP);
	assert_string_equal(err.field, "inputDatasets[0].size");
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
}

static void test_decode_non_string_key(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	pack_required(&pk, 1);
	msgpack_pack_int(&pk, 5);
	msgpack_pack_int(&pk, 6);
	struct arena a;
	struct tb_task t;
	struct cod_error err;
	assert_int_equal(decode(sb.data, sb.size, &t, &err, &a), GB_ETYPE);
	assert_string_equal(err.field, "");
	assert_string_equal(err.problem,
			    "map key of type integer; keys must be strings");
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
}

/* A task whose unknown key "junk" holds `levels` nested arrays. */
static void pack_nested(msgpack_sbuffer *sb, int levels)
{
	msgpack_sbuffer_init(sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	pack_required(&pk, 1);
	pk_s(&pk, "junk");
	for (int i = 0; i < levels; i++)
		msgpack_pack_array(&pk, 1);
	msgpack_pack_nil(&pk);
}

/* COD_MAX_DEPTH counts the root map as level 1, so "junk" may hold seven
** nested arrays and not eight; far deeper input must not crash either. */
static void test_decode_nesting(void **state)
{
	(void)state;
	static const struct {
		int levels;
		int rc;
	} cases[] = {
		{COD_MAX_DEPTH - 1, GB_OK},
		{COD_MAX_DEPTH, GB_ETOOBIG},
		{100000, GB_ETOOBIG},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		msgpack_sbuffer sb;
		pack_nested(&sb, cases[i].levels);
		struct arena a;
		struct tb_task t;
		struct cod_error err;
		int rc = decode(sb.data, sb.size, &t, &err, &a);
		assert_int_equal(rc, cases[i].rc);
		if (rc != GB_OK) {
			assert_string_equal(err.field,
					    "junk[0][0][0][0][0][0][0]");
			assert_string_equal(err.problem,
					    "nesting deeper than 8");
		}
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* Length headers that promise more than the message holds. */
static void test_decode_length_claims(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		unsigned char bytes[24];
		size_t len;
		int rc;
		const char *field, *problem;
	} cases[] = {
		{"array32 claim", {0x81, 0xad, 'i', 'n', 'p', 'u', 't', 'D',
				   'a', 't', 'a', 's', 'e', 't', 's', 0xdd,
				   0xff, 0xff, 0xff, 0xff},
		 20, GB_EDECODE, "inputDatasets",
		 "array claims 4294967295 elements but only 0 bytes follow"},
		{"map32 claim", {0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0},
		 7, GB_EDECODE, "",
		 "map claims 4294967295 elements but only 2 bytes follow"},
		{"array16 claim", {0xdc, 0xff, 0xff, 0x01, 0x02},
		 5, GB_EDECODE, "",
		 "array claims 65535 elements but only 2 bytes follow"},
		{"str32 claim", {0x81, 0xa1, 'x', 0xdb, 0xff, 0xff, 0xff,
				 0xff, 'a'},
		 9, GB_EDECODE, "x",
		 "truncated: the message ends inside this value"},
		{"bin32 claim", {0x81, 0xa1, 'x', 0xc6, 0x7f, 0xff, 0xff,
				 0xff},
		 8, GB_EDECODE, "x",
		 "truncated: the message ends inside this value"},
		{"ext32 claim", {0x81, 0xa1, 'x', 0xc9, 0xff, 0xff, 0xff,
				 0xff, 0x01},
		 9, GB_EDECODE, "x",
		 "truncated: the message ends inside this value"},
		{"reserved byte", {0x81, 0xa1, 'x', 0xc1}, 4, GB_EDECODE, "x",
		 "invalid msgpack type byte 0xc1"},
		{"empty", {0}, 0, GB_EDECODE, "", "empty message"},
		{"trailing", {0x80, 0xc0}, 2, GB_EDECODE, "",
		 "trailing data after the message (1 bytes)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct arena a;
		struct tb_task t;
		struct cod_error err;
		int rc = decode(cases[i].bytes, cases[i].len, &t, &err, &a);
		if (rc != cases[i].rc || strcmp(err.field, cases[i].field) ||
		    strcmp(err.problem, cases[i].problem))
			fail_msg("%s: got %s '%s: %s'", cases[i].name,
				 gb_errname(rc), err.field, err.problem);
		arena_free(&a);
	}
}

/* Real (not lying) arrays beyond the limits. */
static void test_decode_size_limits(void **state)
{
	(void)state;
	static const struct {
		const char *key;
		size_t n;
		size_t arena_cap;
		int rc;
		const char *field, *problem;
	} cases[] = {
		{"inputDatasets", 5000, ARENA_CAP, GB_ETOOBIG, "inputDatasets",
		 "array of 5000 exceeds the limit of 1000"},
		{"junk", 70000, ARENA_CAP, GB_ETOOBIG, "junk",
		 "more than 65536 values in the message"},
		{"junk", 2000, 16384, GB_ETOOBIG, "",
		 "decoding needs about "},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		msgpack_packer pk;
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		int ds = strcmp(cases[i].key, "inputDatasets") == 0;
		msgpack_pack_map(&pk, ds ? 4 : 5);
		pk_s(&pk, "taskID");
		msgpack_pack_int(&pk, 7);
		pk_s(&pk, "gshare");
		pk_s(&pk, "Express");
		pk_s(&pk, "taskPriority");
		msgpack_pack_int(&pk, 900);
		if (!ds) {
			pk_s(&pk, "inputDatasets");
			msgpack_pack_array(&pk, 0);
		}
		pk_s(&pk, cases[i].key);
		msgpack_pack_array(&pk, cases[i].n);
		for (size_t k = 0; k < cases[i].n; k++)
			msgpack_pack_nil(&pk);
		struct arena a;
		arena_init(&a, cases[i].arena_cap);
		struct tb_task t;
		struct cod_error err;
		int rc = cod_decode_task(sb.data, sb.size, &a, &t, &err);
		/* the arena case names a size that depends on the platform's
		** msgpack_object, so only its start is compared */
		if (rc != cases[i].rc || strcmp(err.field, cases[i].field) ||
		    strncmp(err.problem, cases[i].problem,
			    strlen(cases[i].problem)))
			fail_msg("case %zu: got %s '%s: %s'", i,
				 gb_errname(rc), err.field, err.problem);
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* Every proper prefix of a valid message is refused as malformed. */
static void test_decode_truncated(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	make_msg(&sb, base_task, NULL, NULL, 0);
	for (size_t len = 0; len < sb.size; len++) {
		/* a heap copy of exactly `len` bytes, so ASan sees overreads */
		char *copy = malloc(len ? len : 1);
		assert_non_null(copy);
		memcpy(copy, sb.data, len);
		struct arena a;
		struct tb_task t;
		struct cod_error err;
		int rc = decode(copy, len, &t, &err, &a);
		if (rc != GB_EDECODE)
			fail_msg("prefix of %zu/%zu bytes: %s (%s: %s)", len,
				 sb.size, gb_errname(rc), err.field,
				 err.problem);
		arena_free(&a);
		free(copy);
	}
	msgpack_sbuffer_destroy(&sb);
}

/* ---- encoding -------------------------------------------------------------- */

static void test_encode_round_trip(void **state)
{
	(void)state;
	struct tb_dataset ds[2] = {
		{"mc23_13p6TeV:HITS.e1_s2", 1, 6400.25, 12800, 0},
		{"mc23_13p6TeV:minbias.HITS", 0, 82000, 41000, 1},
	};
	for (int fc = TB_FC_NONE; fc <= TB_FC_CAPABLE; fc++) {
		struct tb_task in = {
			.task_id = 36100002,
			.gshare = "MC Reco",
			.priority = 570,
			.io_intensity = 600.5,
			.t1_weight = -1,
			.input_prestaging = 1,
			.broker_on_master = fc % 2,
			.full_chain = (enum tb_fullchain)fc,
			.parent_nucleus = fc == TB_FC_CAPABLE ? "DESY-HH"
							      : NULL,
			.norm_exp_out_size = 0.5,
			.datasets = ds,
			.ndatasets = 2,
		};
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cod_encode_task(&in, &sb), GB_OK);
		struct arena a;
		struct tb_task out;
		struct cod_error err;
		assert_int_equal(decode(sb.data, sb.size, &out, &err, &a),
				 GB_OK);
		assert_int_equal(out.task_id, in.task_id);
		assert_string_equal(out.gshare, in.gshare);
		assert_int_equal(out.priority, in.priority);
		assert_near(out.io_intensity, in.io_intensity, 0);
		assert_near(out.t1_weight, in.t1_weight, 0);
		assert_int_equal(out.input_prestaging, in.input_prestaging);
		assert_int_equal(out.broker_on_master, in.broker_on_master);
		assert_int_equal(out.full_chain, in.full_chain);
		if (in.parent_nucleus)
			assert_string_equal(out.parent_nucleus,
					    in.parent_nucleus);
		else
			assert_null(out.parent_nucleus);
		assert_near(out.norm_exp_out_size, in.norm_exp_out_size, 0);
		assert_int_equal(out.ndatasets, 2);
		for (size_t i = 0; i < 2; i++) {
			assert_string_equal(out.datasets[i].name, ds[i].name);
			assert_int_equal(out.datasets[i].primary,
					 ds[i].primary);
			assert_near(out.datasets[i].size, ds[i].size, 0);
			assert_int_equal(out.datasets[i].files, ds[i].files);
			assert_int_equal(out.datasets[i].on_tape,
					 ds[i].on_tape);
		}
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* The encoder refuses what the decoder would refuse. */
static void test_encode_rejects_invalid(void **state)
{
	(void)state;
	struct tb_dataset good = {"ds", 1, 10, 5, 0};
	struct tb_dataset dup[2] = {{"ds", 1, 10, 5, 0}, {"ds", 0, 1, 1, 0}};
	struct tb_dataset neg = {"ds", 1, -1, 5, 0};
	struct tb_dataset nan = {"ds", 1, NAN, 5, 0};
	struct tb_task base = {.task_id = 1, .gshare = "g", .priority = 1,
			       .datasets = &good, .ndatasets = 1};
	struct tb_task cases[7];
	for (size_t i = 0; i < 7; i++)
		cases[i] = base;
	cases[0].task_id = 0;
	cases[1].gshare = NULL;
	cases[2].priority = 1000001;
	cases[3].datasets = dup;
	cases[3].ndatasets = 2;
	cases[4].datasets = &neg;
	cases[5].datasets = &nan;
	cases[6].io_intensity = INFINITY;
	for (size_t i = 0; i < 7; i++) {
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		if (cod_encode_task(&cases[i], &sb) != GB_EINVAL)
			fail_msg("case %zu was encoded", i);
		msgpack_sbuffer_destroy(&sb);
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cod_encode_task(&base, &sb), GB_OK);
	msgpack_sbuffer_destroy(&sb);
}

/* ---- events ------------------------------------------------------------------ */

static json_t *event_json(const struct cod_task_event *ev)
{
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cod_encode_task_event(ev, &sb), GB_OK);
	json_t *j = cod_to_json(sb.data, sb.size);
	assert_non_null(j);
	msgpack_sbuffer_destroy(&sb);
	return j;
}

static const char *jget_s(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_string(v))
		fail_msg("%s is not a string", k);
	return json_string_value(v);
}

static long long jget_i(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_integer(v))
		fail_msg("%s is not an integer", k);
	return json_integer_value(v);
}

/* FC-06: a full-chain task on a bare nucleus gets jobScope nucleus-only. */
static void test_event_assigned(void **state)
{
	(void)state;
	struct tb_nucleus nuclei[3] = {
		{.name = "LRZ-LMU", .status = "ACTIVE", .bare = TB_BARE_ONLY},
		{.name = "CERN-PROD", .status = "ACTIVE"},
		{.name = "TAIWAN-LCG2", .status = "OFFLINE"},
	};
	struct tb_task task = {.task_id = 36100005, .gshare = "MC Simul",
			       .priority = 450,
			       .full_chain = TB_FC_ONLY};
	struct dec_candidate cands[3];
	struct dec_decision d;
	dec_init(&d, cands, 3);
	for (size_t i = 0; i < 3; i++)
		cands[i].name = nuclei[i].name;
	dec_reject(&cands[2], "status", "TB-01", "status",
		   "status %s is not ACTIVE", "OFFLINE", 0, 0, 0, 0);
	dec_reject(&cands[1], "full chain", "FC-02", "not_bare_only",
		   "fullChain=only needs bareNucleus=only, nucleus has '%s'",
		   "", 0, 0, 0, 0);
	cands[0].weight = 0.25;
	dec_stage(&d, "status", "TB-01", 3, 2);
	dec_stage(&d, "full chain", "FC-05", 2, 1);
	d.outcome = DEC_ASSIGNED;
	d.chosen = 0;
	struct cod_task_event ev = {
		.event = "task.assigned",
		.decision_id = 77,
		.request_id = "req-1",
		.task = &task,
		.nuclei = nuclei,
		.dec = &d,
		.decided_at = 1715675400,
	};
	json_t *j = event_json(&ev);
	assert_string_equal(jget_s(j, "event"), "task.assigned");
	assert_int_equal(jget_i(j, "decisionId"), 77);
	assert_string_equal(jget_s(j, "requestId"), "req-1");
	assert_int_equal(jget_i(j, "taskID"), 36100005);
	assert_string_equal(jget_s(j, "gshare"), "MC Simul");
	assert_string_equal(jget_s(j, "decidedAt"), "2024-05-14T08:30:00Z");
	assert_int_equal(jget_i(j, "decidedAtUnix"), 1715675400);
	assert_string_equal(jget_s(j, "nucleus"), "LRZ-LMU");
	assert_near(json_real_value(json_object_get(j, "weight")), 0.25, 0);
	assert_string_equal(jget_s(j, "jobScope"), "nucleus-only");
	assert_null(json_object_get(j, "retryAfter"));
	assert_null(json_object_get(j, "retryAt"));
	assert_int_equal(json_object_size(j), 13);

	json_t *st = json_object_get(j, "stages");
	assert_int_equal(json_array_size(st), 2);
	json_t *s1 = json_array_get(st, 1);
	assert_string_equal(jget_s(s1, "name"), "full chain");
	assert_string_equal(jget_s(s1, "rule"), "FC-05");
	assert_int_equal(jget_i(s1, "in"), 2);
	assert_int_equal(jget_i(s1, "out"), 1);

	json_t *rej = json_object_get(j, "rejected");
	assert_int_equal(json_array_size(rej), 2);
	json_t *r0 = json_array_get(rej, 0); /* candidate order */
	assert_string_equal(jget_s(r0, "name"), "CERN-PROD");
	assert_string_equal(jget_s(r0, "rule"), "FC-02");
	assert_string_equal(jget_s(r0, "code"), "not_bare_only");
	assert_string_equal(jget_s(r0, "detail"),
			    "fullChain=only needs bareNucleus=only, nucleus "
			    "has ''");
	json_t *r1 = json_array_get(rej, 1);
	assert_string_equal(jget_s(r1, "detail"),
			    "status OFFLINE is not ACTIVE");
	json_decref(j);

	/* FC-07: a normal task on an allow nucleus uses the satellites. */
	nuclei[0].bare = TB_BARE_ALLOW;
	task.full_chain = TB_FC_NONE;
	j = event_json(&ev);
	assert_string_equal(jget_s(j, "jobScope"), "satellites");
	json_decref(j);
}

/* TB-13: the pending event carries retryAfter, the histogram and at most
** 50 rejected candidates. */
static void test_event_pending(void **state)
{
	(void)state;
	enum { N = 60 };
	static struct tb_nucleus nuclei[N];
	static struct dec_candidate cands[N];
	static char names[N][16];
	struct dec_decision d;
	dec_init(&d, cands, N);
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "NUC-%02zu", i);
		nuclei[i] = (struct tb_nucleus){.name = names[i],
						.status = "ACTIVE"};
		cands[i].name = names[i];
		if (i < 10) {
			dec_reject(&cands[i], "status", "TB-01", "status",
				   "status %s is not ACTIVE", "OFFLINE", 0, 0,
				   0, 0);
		} else {
			dec_reject(&cands[i], "locality", "TB-07",
				   "input_size",
				   "local input %.1f%% of %.4g GB <= "
				   "INPUT_SIZE_FRACTION %.4g%%",
				   NULL, 0, 240000, 10, 0);
			if (i % 2)
				dec_reject(&cands[i], "locality", "TB-08",
					   "input_files",
					   "local files %.1f%% of %.0f <= "
					   "INPUT_NUM_FRACTION %.4g%%",
					   NULL, 0, 60000, 10, 0);
		}
	}
	dec_stage(&d, "status", "TB-01", N, N - 10);
	dec_stage(&d, "locality", "TB-07", N - 10, 0);
	dec_stage(&d, "weighted choice", "TB-12", 0, 0);
	d.outcome = DEC_PENDING;
	d.retry_after_s = TB_PENDING_RETRY_S;
	struct tb_task task = {.task_id = 36100009, .gshare = "Reprocessing",
			       .priority = 250};
	struct cod_task_event ev = {
		.event = "task.pending",
		.decision_id = 78,
		.request_id = "req-2",
		.task = &task,
		.nuclei = nuclei,
		.dec = &d,
		.decided_at = 1715675400,
		.retry_at = 1715675400 + TB_PENDING_RETRY_S,
	};
	json_t *j = event_json(&ev);
	assert_string_equal(jget_s(j, "event"), "task.pending");
	assert_int_equal(jget_i(j, "retryAfter"), 1800);
	assert_string_equal(jget_s(j, "retryAt"), "2024-05-14T09:00:00Z");
	assert_null(json_object_get(j, "nucleus"));
	assert_null(json_object_get(j, "jobScope"));
	assert_int_equal(json_object_size(j), 12);

	/* histogram, most frequent first: TB-07 x50, TB-08 x25, TB-01 x10 */
	json_t *h = json_object_get(j, "reasons");
	assert_int_equal(json_array_size(h), 3);
	static const struct {
		const char *rule, *code;
		long long count;
	} want[] = {{"TB-07", "input_size", 50},
		    {"TB-08", "input_files", 25},
		    {"TB-01", "status", 10}};
	for (size_t i = 0; i < 3; i++) {
		json_t *e = json_array_get(h, i);
		assert_string_equal(jget_s(e, "rule"), want[i].rule);
		assert_string_equal(jget_s(e, "code"), want[i].code);
		assert_int_equal(jget_i(e, "count"), want[i].count);
	}
	json_t *rej = json_object_get(j, "rejected");
	assert_int_equal(json_array_size(rej), 50);
	json_t *last = json_array_get(rej, 49);
	assert_string_equal(jget_s(last, "name"), "NUC-49");
	assert_string_equal(jget_s(last, "detail"),
			    "local input 0.0% of 2.4e+05 GB <= "
			    "INPUT_SIZE_FRACTION 10%");
	json_decref(j);
}

static void test_event_rejects_invalid(void **state)
{
	(void)state;
	struct dec_candidate cands[1];
	struct dec_decision d;
	dec_init(&d, cands, 1);
	cands[0].name = "X";
	d.outcome = DEC_ASSIGNED;
	d.chosen = 3; /* out of range */
	struct tb_task task = {.task_id = 1, .gshare = "g"};
	struct tb_nucleus nu = {.name = "X"};
	struct cod_task_event ev = {.event = "task.assigned", .task = &task,
				    .nuclei = &nu, .dec = &d};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cod_encode_task_event(&ev, &sb), GB_EINVAL);
	ev.dec = NULL;
	assert_int_equal(cod_encode_task_event(&ev, &sb), GB_EINVAL);
	msgpack_sbuffer_destroy(&sb);
}

/* ---- cod_to_json ---------------------------------------------------------------- */

static void test_to_json_values(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 7);
	pk_s(&pk, "bin");
	msgpack_pack_bin_with_body(&pk, "abc", 3);
	pk_s(&pk, "nan");
	msgpack_pack_double(&pk, NAN);
	msgpack_pack_int(&pk, 5); /* integer key */
	msgpack_pack_true(&pk);
	pk_s(&pk, "bad");
	msgpack_pack_str_with_body(&pk, "\xc3\x28", 2);
	pk_s(&pk, "big");
	msgpack_pack_uint64(&pk, UINT64_MAX);
	pk_s(&pk, "neg");
	msgpack_pack_int64(&pk, -42);
	pk_s(&pk, "f32");
	msgpack_pack_float(&pk, 1.5f);
	json_t *j = cod_to_json(sb.data, sb.size);
	assert_non_null(j);
	assert_string_equal(jget_s(j, "bin"), "<3 bytes>");
	assert_true(json_is_null(json_object_get(j, "nan")));
	assert_true(json_is_true(json_object_get(j, "5")));
	assert_string_equal(jget_s(j, "bad"), "<2 bytes, not UTF-8 text>");
	assert_true(json_is_real(json_object_get(j, "big")));
	assert_int_equal(jget_i(j, "neg"), -42);
	assert_near(json_real_value(json_object_get(j, "f32")), 1.5, 0);
	json_decref(j);

	/* Not one complete object: NULL. */
	assert_null(cod_to_json(sb.data, sb.size - 1));
	assert_null(cod_to_json(NULL, 0));
	char two[2] = {(char)0xc0, (char)0xc0};
	assert_null(cod_to_json(two, 2));
	msgpack_sbuffer_destroy(&sb);

	/* Depth is bounded: 31 nested arrays convert, 100000 do not. */
	static const struct {
		int levels;
		int ok;
	} deep[] = {{31, 1}, {33, 0}, {100000, 0}};
	for (size_t i = 0; i < 3; i++) {
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		for (int k = 0; k < deep[i].levels; k++)
			msgpack_pack_array(&pk, 1);
		msgpack_pack_nil(&pk);
		j = cod_to_json(sb.data, sb.size);
		assert_int_equal(j != NULL, deep[i].ok);
		json_decref(j);
		msgpack_sbuffer_destroy(&sb);
	}
}

/* cod_path_join writes what snprintf("%s%s%s") wrote before it, cut
** included: the names in dead-letter headers did not change. */
static void test_path_join(void **state)
{
	(void)state;
	static const struct {
		const char *path, *key;
		size_t len;
		const char *want;
	} rows[] = {
		{"", "taskID", 96, "taskID"},
		{"inputDatasets[2]", "size", 96, "inputDatasets[2].size"},
		{"abc", "def", 8, "abc.def"},
		{"abc", "def", 7, "abc.de"},
		{"abc", "def", 5, "abc."},
		{"abc", "def", 4, "abc"},
		{"abc", "def", 2, "a"},
		{"abc", "def", 1, ""},
		{"", "", 4, ""},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char got[96], oracle[96];
		memset(got, 'x', sizeof(got));
		cod_path_join(got, rows[i].len, rows[i].path, rows[i].key);
		snprintf(oracle, rows[i].len, "%s%s%s", rows[i].path,
			 rows[i].path[0] ? "." : "", rows[i].key);
		assert_string_equal(got, rows[i].want);
		assert_string_equal(got, oracle);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_all_fields),
		cmocka_unit_test(test_decode_defaults),
		cmocka_unit_test(test_decode_unknown_keys_ignored),
		cmocka_unit_test(test_decode_numbers),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_decode_long_string),
		cmocka_unit_test(test_decode_root_not_map),
		cmocka_unit_test(test_decode_duplicate_keys),
		cmocka_unit_test(test_decode_non_string_key),
		cmocka_unit_test(test_decode_nesting),
		cmocka_unit_test(test_decode_length_claims),
		cmocka_unit_test(test_decode_size_limits),
		cmocka_unit_test(test_decode_truncated),
		cmocka_unit_test(test_encode_round_trip),
		cmocka_unit_test(test_encode_rejects_invalid),
		cmocka_unit_test(test_event_assigned),
		cmocka_unit_test(test_event_pending),
		cmocka_unit_test(test_event_rejects_invalid),
		cmocka_unit_test(test_to_json_values),
		cmocka_unit_test(test_path_join),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
