/*
** test_codec_tq.c — the DIRAC-side requests on the wire: job.submit and
** pilot.match.
**
** Decode cases start from one valid message per type (JSON for
** readability, packed to msgpack by pack_json) with one patch applied: a
** field at a path set to a JSON value, or deleted. String markers stand
** for what JSON cannot say: "#bin:3" (3 bytes of binary), "#hex:c328" (a
** string of those raw bytes), "#x:300" (a string of 300 'x'). Duplicate
** keys, non-string keys, arrays at their limits and cut buffers are built
** as bytes. Every refusal is checked for its code AND the path of the
** field it names, since that path is what a producer reads in the
** dead-letter header. The reply, the pilot.* events and job.status are
** in test_codec_tq_events.c.
*/
#include "gbtest.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>
#include <msgpack.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "codec/codec_tq.h"
#include "gb_error.h"
#include "taskqueue.h"

#define ARENA_CAP (64u << 20)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *base_submit =
	"{\"jobs\": ["
	" {\"jobID\": 1001, \"ownerDN\": \"/DC=ch/DC=cern/OU=Users/CN=alice\","
	"  \"ownerGroup\": \"lhcb_user\", \"setup\": \"LHCb-Production\","
	"  \"cpuTime\": 86400, \"userPriority\": 3,"
	"  \"sites\": [\"LCG.CNAF.it\", \"LCG.CERN.cern\", \"LCG.CNAF.it\"],"
	"  \"bannedSites\": [\"LCG.RAL.uk\"], \"gridCEs\": [],"
	"  \"platforms\": [\"x86_64-el9\", \"x86_64-centos7\"],"
	"  \"pilotTypes\": [\"private\"], \"submitPools\": [\"Pool_A\"],"
	"  \"gridMiddlewares\": [\"HTCondorCE\", \"ARC\"]},"
	" {\"jobID\": 1002, \"ownerDN\": \"/DC=ch/DC=cern/OU=Users/CN=bob\","
	"  \"ownerGroup\": \"lhcb_mc\", \"setup\": \"LHCb-Production\","
	"  \"cpuTime\": 500}]}";

static const char *base_pilot =
	"{\"pilotID\": \"https://lbvobox.cern.ch:9000/pilots/8812\","
	" \"setup\": \"LHCb-Production\", \"cpuTime\": 172800,"
	" \"site\": \"LCG.CERN.cern\", \"gridCE\": \"ce503.cern.ch\","
	" \"platform\": \"x86_64-el9\", \"pilotType\": \"private\","
	" \"ownerGroup\": \"lhcb_user\","
	" \"ownerDN\": \"/DC=ch/DC=cern/OU=Users/CN=alice\"}";

/* ---- JSON -> msgpack, with markers ------------------------------------- */

#include "jsonmsg.h"

/* ---- decoding either request --------------------------------------------- */

enum kind { K_SUBMIT, K_PILOT };

static const char *const kind_names[] = {"job.submit", "pilot.match"};

/* Decode `sb` as `k` with a fresh arena of `cap` bytes (the caller frees
** it); the decoded message is dropped: the cases look at the error. */
static int decode_kind(enum kind k, const msgpack_sbuffer *sb, size_t cap,
		       struct arena *a, struct cod_error *err)
{
	arena_init(a, cap);
	struct cdt_submit s;
	struct cdt_pilot p;
	if (k == K_SUBMIT)
		return cdt_decode_submit(sb->data, sb->size, a, &s, err);
	return cdt_decode_pilot(sb->data, sb->size, a, &p, err);
}

/* Decoding `sb` gives `rc` with exactly `field` and a problem starting
** with `problem`. */
static void expect(enum kind k, const msgpack_sbuffer *sb, size_t cap, int rc,
		   const char *field, const char *problem, const char *what)
{
	struct arena a;
	struct cod_error err;
	int got = decode_kind(k, sb, cap, &a, &err);
	if (got != rc || strcmp(err.field, field) ||
	    strncmp(err.problem, problem, strlen(problem)))
		fail_msg("%s %s: got %s '%s: %s', want %s '%s: %s'",
			 kind_names[k], what, gb_errname(got), err.field,
			 err.problem, gb_errname(rc), field, problem);
	arena_free(&a);
}

static void check_set(const struct tq_strset *got, const char *const *want,
		      size_t n, const char *what)
{
	if (got->n != n)
		fail_msg("%s: %zu values, want %zu", what, got->n, n);
	if (n == 0 && got->v != NULL)
		fail_msg("%s: no values but an array", what);
	for (size_t i = 0; i < n; i++)
		if (strcmp(got->v[i], want[i]) != 0)
			fail_msg("%s[%zu] = '%s', want '%s'", what, i,
				 got->v[i], want[i]);
}

/* A job as expected after decoding: sets as NULL-terminated lists. */
struct want_job {
	long long id;
	const char *owner, *group, *setup;
	long long cpu;
	int prio;
	const char *const *set[TQ_NFIELDS];
};

static size_t list_len(const char *const *l)
{
	size_t n = 0;
	while (l && l[n])
		n++;
	return n;
}

static void check_job(const struct cdt_job *got, const struct want_job *w)
{
	assert_int_equal(got->job_id, w->id);
	assert_string_equal(got->owner, w->owner);
	assert_string_equal(got->owner_group, w->group);
	assert_string_equal(got->setup, w->setup);
	assert_int_equal(got->cpu_time, w->cpu);
	assert_int_equal(got->user_priority, w->prio);
	for (int f = 0; f < TQ_NFIELDS; f++)
		check_set(&got->set[f], w->set[f], list_len(w->set[f]),
			  tq_field_names[f]);
}

/* ---- job.submit ---------------------------------------------------------- */

static const char *const cern_cnaf[] = {"LCG.CERN.cern", "LCG.CNAF.it", NULL};
static const char *const ral[] = {"LCG.RAL.uk", NULL};
static const char *const el[] = {"x86_64-centos7", "x86_64-el9", NULL};
static const char *const priv[] = {"private", NULL};
static const char *const pool[] = {"Pool_A", NULL};
static const char *const mw[] = {"ARC", "HTCondorCE", NULL};

/* base_submit as decoded: sets sorted, the repeated site dropped, [] no
** requirement, userPriority 1 by default (TQ-01..03). */
static const struct want_job want_base[] = {
	{1001, "/DC=ch/DC=cern/OU=Users/CN=alice", "lhcb_user",
	 "LHCb-Production", 86400, 3,
	 {cern_cnaf, ral, NULL, el, priv, pool, mw}},
	{1002, "/DC=ch/DC=cern/OU=Users/CN=bob", "lhcb_mc", "LHCb-Production",
	 500, 1, {NULL}},
};

static void test_submit_decode(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	make_msg(&sb, base_submit, NULL, NULL);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdt_submit s;
	struct cod_error err;
	int rc = cdt_decode_submit(sb.data, sb.size, &a, &s, &err);
	if (rc != GB_OK)
		fail_msg("%s: %s: %s", gb_errname(rc), err.field, err.problem);
	msgpack_sbuffer_destroy(&sb); /* nothing may point into it */
	assert_int_equal(s.njobs, 2);
	for (size_t j = 0; j < 2; j++)
		check_job(&s.jobs[j], &want_base[j]);
	arena_free(&a);
}

/* The wire keys of the sets are the engine's tq_field_names, both ways. */
static void test_submit_set_names(void **state)
{
	(void)state;
	json_t *root = parse("{\"jobs\": [{\"jobID\": 1, \"ownerDN\": \"d\","
			     " \"ownerGroup\": \"g\", \"setup\": \"s\","
			     " \"cpuTime\": 1}]}");
	json_t *job = json_array_get(json_object_get(root, "jobs"), 0);
	char val[TQ_NFIELDS][16];
	for (int f = 0; f < TQ_NFIELDS; f++) {
		snprintf(val[f], sizeof(val[f]), "v%d", f);
		json_object_set_new(job, tq_field_names[f],
				    json_pack("[s]", val[f]));
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	pack_json(&pk, root);
	json_decref(root);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdt_submit s;
	struct cod_error err;
	assert_int_equal(cdt_decode_submit(sb.data, sb.size, &a, &s, &err),
			 GB_OK);
	for (int f = 0; f < TQ_NFIELDS; f++) {
		assert_int_equal(s.jobs[0].set[f].n, 1);
		assert_string_equal(s.jobs[0].set[f].v[0], val[f]);
	}
	msgpack_sbuffer_destroy(&sb);
	/* and the encoder writes the same keys (read with msgpack-c) */
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdt_encode_submit(&s, &sb), GB_OK);
	msgpack_unpacked up;
	msgpack_unpacked_init(&up);
	size_t off = 0;
	assert_int_equal(msgpack_unpack_next(&up, sb.data, sb.size, &off),
			 MSGPACK_UNPACK_SUCCESS);
	const msgpack_object_map *jm =
		&up.data.via.map.ptr[0].val.via.array.ptr[0].via.map;
	assert_int_equal(jm->size, 6 + TQ_NFIELDS);
	for (int f = 0; f < TQ_NFIELDS; f++) {
		const msgpack_object_kv *kv = &jm->ptr[6 + f];
		assert_int_equal(kv->key.via.str.size,
				 strlen(tq_field_names[f]));
		assert_memory_equal(kv->key.via.str.ptr, tq_field_names[f],
				    kv->key.via.str.size);
		assert_int_equal(kv->val.via.array.size, 1);
	}
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
}

/* Sets are normalised: any order and repeats in, sorted and unique out. */
static void test_submit_normalise(void **state)
{
	(void)state;
	static const struct {
		const char *sites;       /* JSON for jobs[0].sites */
		const char *want[6];     /* NULL-terminated */
	} cases[] = {
		{"[\"b\", \"a\"]", {"a", "b"}},
		{"[\"a\", \"a\", \"a\"]", {"a"}},
		{"[\"c\", \"a\", \"b\", \"a\", \"c\"]", {"a", "b", "c"}},
		/* bytewise order: upper case before lower case, a prefix
		** before its extensions */
		{"[\"site-b\", \"Site\", \"site\", \"site-a\"]",
		 {"Site", "site", "site-a", "site-b"}},
		{"[\"only\"]", {"only"}},
		{"[]", {NULL}},
		{"null", {NULL}},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, base_submit, "jobs[0].sites", cases[i].sites);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct cdt_submit s;
		struct cod_error err;
		assert_int_equal(
			cdt_decode_submit(sb.data, sb.size, &a, &s, &err),
			GB_OK);
		char what[64];
		snprintf(what, sizeof(what), "case %zu sites", i);
		check_set(&s.jobs[0].set[TQ_F_SITES], cases[i].want,
			  list_len(cases[i].want), what);
		arena_free(&a);
		msgpack_sbuffer_destroy(&sb);
	}
}

/* ---- one patch each ------------------------------------------------------ */

#define TS(got) "expected string, got " got
#define TI(got) "expected integer, got " got
#define LIST64 "[\"s0\",\"s1\",\"s2\",\"s3\",\"s4\",\"s5\",\"s6\",\"s7\",\"s8\",\"s9\",\"s10\",\"s11\",\"s12\",\"s13\",\"s14\",\"s15\",\"s16\",\"s17\",\"s18\",\"s19\",\"s20\",\"s21\",\"s22\",\"s23\",\"s24\",\"s25\",\"s26\",\"s27\",\"s28\",\"s29\",\"s30\",\"s31\",\"s32\",\"s33\",\"s34\",\"s35\",\"s36\",\"s37\",\"s38\",\"s39\",\"s40\",\"s41\",\"s42\",\"s43\",\"s44\",\"s45\",\"s46\",\"s47\",\"s48\",\"s49\",\"s50\",\"s51\",\"s52\",\"s53\",\"s54\",\"s55\",\"s56\",\"s57\",\"s58\",\"s59\",\"s60\",\"s61\",\"s62\",\"s63\"]"
#define LIST65 "[\"s0\",\"s1\",\"s2\",\"s3\",\"s4\",\"s5\",\"s6\",\"s7\",\"s8\",\"s9\",\"s10\",\"s11\",\"s12\",\"s13\",\"s14\",\"s15\",\"s16\",\"s17\",\"s18\",\"s19\",\"s20\",\"s21\",\"s22\",\"s23\",\"s24\",\"s25\",\"s26\",\"s27\",\"s28\",\"s29\",\"s30\",\"s31\",\"s32\",\"s33\",\"s34\",\"s35\",\"s36\",\"s37\",\"s38\",\"s39\",\"s40\",\"s41\",\"s42\",\"s43\",\"s44\",\"s45\",\"s46\",\"s47\",\"s48\",\"s49\",\"s50\",\"s51\",\"s52\",\"s53\",\"s54\",\"s55\",\"s56\",\"s57\",\"s58\",\"s59\",\"s60\",\"s61\",\"s62\",\"s63\",\"s64\"]"
#define TSA(got) "expected string or array, got " got
#define R_NE "expected a non-empty string"
#define R_UTF "string is not valid UTF-8"
#define R_LONG "string of 300 bytes exceeds the limit of 255"
#define R_CPU "expected an integer in [1, 1000000000000], got "
#define R_PRIO "expected an integer in [0, 10], got "
/* accepted; refused naming the patched path; refused naming `field` */
#define OK(k, path, v) {k, path, v, GB_OK, "", ""}
#define E(k, path, v, rc, problem) {k, path, v, rc, NULL, problem}
#define F(k, path, v, rc, field, problem) {k, path, v, rc, field, problem}
#define S K_SUBMIT
#define P K_PILOT

static void test_decode_cases(void **state)
{
	(void)state;
	static const struct {
		enum kind k;
		const char *path, *value; /* value NULL: delete the field */
		int rc;
		const char *field; /* NULL: the same as path */
		const char *problem;
	} cases[] = {
		/* job.submit: accepted edges, unknown keys, nil = absent */
		OK(S, "jobs[0].jobID", "9223372036854775807"),
		OK(S, "jobs[0].cpuTime", "1"),
		OK(S, "jobs[0].cpuTime", "1000000000000"),
		OK(S, "jobs[0].userPriority", "0"),
		OK(S, "jobs[0].userPriority", "10"),
		OK(S, "jobs[0].userPriority", "null"),
		OK(S, "jobs[0].gridCEs", "null"),
		OK(S, "jobs[0].sites[0]", "\"#x:255\""),
		OK(S, "jobs[0].ownerDN", "\"/O=GRID/CN=\\u00e9l\\u00e8ve\""),
		OK(S, "jobs[1].future", "{\"a\": [1, \"#bin:3\"]}"),
		OK(S, "requestedBy", "\"JobManager\""),
		/* missing */
		E(S, "jobs", NULL, GB_EMISSING, "missing"),
		E(S, "jobs[0].jobID", NULL, GB_EMISSING, "missing"),
		E(S, "jobs[1].ownerDN", NULL, GB_EMISSING, "missing"),
		E(S, "jobs[1].ownerGroup", NULL, GB_EMISSING, "missing"),
		E(S, "jobs[0].setup", NULL, GB_EMISSING, "missing"),
		E(S, "jobs[1].cpuTime", NULL, GB_EMISSING, "missing"),
		/* wrong types */
		E(S, "jobs", "{}", GB_ETYPE, "expected array, got map"),
		E(S, "jobs[1]", "5", GB_ETYPE, "expected a map, got integer"),
		E(S, "jobs[0].jobID", "\"1001\"", GB_ETYPE, TI("string")),
		E(S, "jobs[0].jobID", "1001.0", GB_ETYPE, TI("float")),
		E(S, "jobs[0].jobID", "null", GB_ETYPE, TI("null")),
		E(S, "jobs[0].ownerDN", "7", GB_ETYPE, TS("integer")),
		E(S, "jobs[0].ownerGroup", "null", GB_ETYPE, TS("null")),
		E(S, "jobs[0].setup", "[]", GB_ETYPE, TS("array")),
		E(S, "jobs[0].cpuTime", "86400.0", GB_ETYPE, TI("float")),
		E(S, "jobs[0].cpuTime", "\"86400\"", GB_ETYPE, TI("string")),
		E(S, "jobs[0].userPriority", "2.5", GB_ETYPE, TI("float")),
		E(S, "jobs[0].sites", "\"LCG.CERN.cern\"", GB_ETYPE,
		  "expected array, got string"),
		E(S, "jobs[0].bannedSites", "{}", GB_ETYPE,
		  "expected array, got map"),
		E(S, "jobs[0].sites[1]", "5", GB_ETYPE, TS("integer")),
		E(S, "jobs[0].platforms[0]", "\"#bin:3\"", GB_ETYPE,
		  TS("binary")),
		E(S, "jobs[0].gridMiddlewares[1]", "null", GB_ETYPE,
		  TS("null")),
		/* out of range */
		E(S, "jobs", "[]", GB_ERANGE, "expected at least one job"),
		E(S, "jobs[0].jobID", "0", GB_ERANGE,
		  "expected a positive integer, got 0"),
		E(S, "jobs[1].jobID", "-1002", GB_ERANGE,
		  "expected a positive integer, got -1002"),
		E(S, "jobs[0].cpuTime", "-1", GB_ERANGE, R_CPU "-1"),
		E(S, "jobs[0].cpuTime", "0", GB_ERANGE, R_CPU "0"),
		E(S, "jobs[0].cpuTime", "1000000000001", GB_ERANGE,
		  R_CPU "1000000000001"),
		E(S, "jobs[0].userPriority", "11", GB_ERANGE, R_PRIO "11"),
		E(S, "jobs[0].userPriority", "-1", GB_ERANGE, R_PRIO "-1"),
		E(S, "jobs[0].ownerDN", "\"\"", GB_ERANGE, R_NE),
		E(S, "jobs[1].ownerGroup", "\"\"", GB_ERANGE, R_NE),
		E(S, "jobs[0].setup", "\"\"", GB_ERANGE, R_NE),
		E(S, "jobs[0].sites[2]", "\"\"", GB_ERANGE, R_NE),
		E(S, "jobs[0].pilotTypes[0]", "\"\"", GB_ERANGE, R_NE),
		E(S, "jobs[0].ownerDN", "\"#hex:c328\"", GB_ERANGE, R_UTF),
		E(S, "jobs[0].platforms[1]", "\"#hex:ff\"", GB_ERANGE, R_UTF),
		E(S, "jobs[0].submitPools[0]", "\"#hex:eda080\"", GB_ERANGE,
		  R_UTF), /* a surrogate */
		E(S, "jobs[0].setup", "\"#hex:410042\"", GB_ERANGE,
		  "string contains a NUL byte"),
		E(S, "jobs[0].ownerDN", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E(S, "jobs[0].bannedSites[0]", "\"#x:300\"", GB_ETOOBIG,
		  R_LONG),
		/* a job twice */
		E(S, "jobs[1].jobID", "1001", GB_EDUP,
		  "duplicate jobID (also jobs[0])"),

		/* pilot.match */
		OK(P, "gridCE", NULL),
		OK(P, "gridCE", "null"),
		OK(P, "platform", NULL),
		OK(P, "pilotType", NULL),
		OK(P, "ownerDN", NULL),  /* a group's private pilot */
		OK(P, "ownerDN", "null"),
		OK(P, "cpuTime", "1000000000000"),
		OK(P, "tags", "[\"8Processors\"]"),
		E(P, "pilotID", NULL, GB_EMISSING, "missing"),
		E(P, "setup", NULL, GB_EMISSING, "missing"),
		E(P, "cpuTime", NULL, GB_EMISSING, "missing"),
		OK(P, "site", NULL),     /* no site: any */
		OK(P, "site", "\"aNy\""),
		OK(P, "site", "[\"LCG.CERN.cern\", \"ANY\"]"),
		OK(P, "platform", "[]"),
		OK(P, "jobType", "[\"User\", \"MCSimulation\"]"),
		OK(P, "bannedSite", "\"LCG.RAL.uk\""),
		OK(P, "bannedTag", "[\"GPU\"]"),
		OK(P, "ownerGroup", "[\"lhcb_user\", \"lhcb_mc\"]"),
		/* DIRAC's "Wrong conditions": required tags among the tags */
		F(P, "requiredTags", "\"8Processors\"", GB_ERANGE,
		  "requiredTags[0]", "\"8Processors\" is not among tags"),
		/* TQ-04: a DN only within a group */
		F(P, "ownerGroup", NULL, GB_EMISSING, "ownerGroup",
		  "required when ownerDN is given"),
		F(P, "ownerGroup", "null", GB_EMISSING, "ownerGroup",
		  "required when ownerDN is given"),
		E(P, "pilotID", "8812", GB_ETYPE, TS("integer")),
		E(P, "cpuTime", "172800.5", GB_ETYPE, TI("float")),
		E(P, "cpuTime", "null", GB_ETYPE, TI("null")),
		OK(P, "site", "[\"LCG.CERN.cern\"]"),
		E(P, "platform", "true", GB_ETYPE, TSA("boolean")),
		E(P, "ownerGroup", "5", GB_ETYPE, TSA("integer")),
		E(P, "tags", "{}", GB_ETYPE, TSA("map")),
		F(P, "site", "[\"A\", 7]", GB_ETYPE, "site[1]", TS("integer")),
		F(P, "platform", "[\"\"]", GB_ERANGE, "platform[0]", R_NE),
		/* at most 64 values per list (TQ_MAX_PILOT_VALUES) */
		E(P, "bannedSite", LIST65, GB_ETOOBIG,
		  "array of 65 exceeds the limit of 64"),
		OK(P, "bannedSite", LIST64),
		E(P, "cpuTime", "-172800", GB_ERANGE, R_CPU "-172800"),
		E(P, "cpuTime", "0", GB_ERANGE, R_CPU "0"),
		E(P, "pilotID", "\"\"", GB_ERANGE, R_NE),
		E(P, "site", "\"\"", GB_ERANGE, R_NE),
		E(P, "gridCE", "\"\"", GB_ERANGE, R_NE),
		E(P, "pilotType", "\"\"", GB_ERANGE, R_NE),
		E(P, "ownerDN", "\"\"", GB_ERANGE, R_NE),
		E(P, "setup", "\"#hex:80\"", GB_ERANGE, R_UTF),
		E(P, "gridCE", "\"#x:300\"", GB_ETOOBIG, R_LONG),

	};
	static const char *const *bases[] = {&base_submit, &base_pilot};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, *bases[cases[i].k], cases[i].path,
			 cases[i].value);
		char what[160];
		snprintf(what, sizeof(what), "case %zu (%s = %s)", i,
			 cases[i].path,
			 cases[i].value ? cases[i].value : "(deleted)");
		const char *field =
			cases[i].field ? cases[i].field : cases[i].path;
		expect(cases[i].k, &sb, ARENA_CAP, cases[i].rc, field,
		       cases[i].problem, what);
		msgpack_sbuffer_destroy(&sb);
	}
}

/* ---- byte-level cases ---------------------------------------------------- */

static void pk_s(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str_with_body(pk, s, strlen(s));
}

/* A job map with the required fields and `extra` more entries. */
static void pack_min_job(msgpack_packer *pk, long long id, size_t extra)
{
	msgpack_pack_map(pk, 5 + extra);
	pk_s(pk, "jobID");
	msgpack_pack_long_long(pk, id);
	pk_s(pk, "ownerDN");
	pk_s(pk, "/DC=ch/CN=a");
	pk_s(pk, "ownerGroup");
	pk_s(pk, "g");
	pk_s(pk, "setup");
	pk_s(pk, "LHCb-Production");
	pk_s(pk, "cpuTime");
	msgpack_pack_int(pk, 500);
}

/* A key twice in each kind of map; a non-string key. */
static void test_decode_key_rules(void **state)
{
	(void)state;
	for (int c = 0; c < 5; c++) {
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		msgpack_packer pk;
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		switch (c) {
		case 0: /* the root of job.submit */
			msgpack_pack_map(&pk, 2);
			pk_s(&pk, "jobs");
			msgpack_pack_array(&pk, 1);
			pack_min_job(&pk, 1, 0);
			pk_s(&pk, "jobs");
			msgpack_pack_nil(&pk);
			expect(K_SUBMIT, &sb, ARENA_CAP, GB_EDUP, "jobs",
			       "duplicate key", "root");
			break;
		case 1: /* a job; an unknown key counts too */
			msgpack_pack_map(&pk, 1);
			pk_s(&pk, "jobs");
			msgpack_pack_array(&pk, 2);
			pack_min_job(&pk, 1, 0);
			pack_min_job(&pk, 2, 2);
			pk_s(&pk, "note");
			msgpack_pack_int(&pk, 1);
			pk_s(&pk, "note");
			msgpack_pack_int(&pk, 2);
			expect(K_SUBMIT, &sb, ARENA_CAP, GB_EDUP, "jobs[1].note",
			       "duplicate key", "job");
			break;
		case 2: /* a set twice: the two copies could disagree */
			msgpack_pack_map(&pk, 1);
			pk_s(&pk, "jobs");
			msgpack_pack_array(&pk, 1);
			pack_min_job(&pk, 1, 2);
			for (int k = 0; k < 2; k++) {
				pk_s(&pk, "sites");
				msgpack_pack_array(&pk, 1);
				pk_s(&pk, k ? "B" : "A");
			}
			expect(K_SUBMIT, &sb, ARENA_CAP, GB_EDUP,
			       "jobs[0].sites", "duplicate key", "set");
			break;
		case 3:
			msgpack_pack_map(&pk, 5);
			pk_s(&pk, "pilotID");
			pk_s(&pk, "p1");
			pk_s(&pk, "setup");
			pk_s(&pk, "S");
			pk_s(&pk, "cpuTime");
			msgpack_pack_int(&pk, 10);
			pk_s(&pk, "site");
			pk_s(&pk, "A");
			pk_s(&pk, "site");
			pk_s(&pk, "B");
			expect(K_PILOT, &sb, ARENA_CAP, GB_EDUP, "site",
			       "duplicate key", "pilot");
			break;
		default: /* a non-string key inside a job */
			msgpack_pack_map(&pk, 1);
			pk_s(&pk, "jobs");
			msgpack_pack_array(&pk, 1);
			pack_min_job(&pk, 1, 1);
			msgpack_pack_int(&pk, 7);
			msgpack_pack_int(&pk, 8);
			expect(K_SUBMIT, &sb, ARENA_CAP, GB_ETYPE, "jobs[0]",
			       "map key of type integer; keys must be strings",
			       "integer key");
		}
		msgpack_sbuffer_destroy(&sb);
	}
}

/* Real arrays at and beyond the limits: jobs per submission, values per
** set. */
static void test_decode_size_limits(void **state)
{
	(void)state;
	static const struct {
		int sets; /* 0: n jobs; 1: one job with n sites */
		size_t n;
		int rc;
		const char *field, *problem;
	} cases[] = {
		{0, CDT_MAX_JOBS, GB_OK, "", ""},
		{0, CDT_MAX_JOBS + 1, GB_ETOOBIG, "jobs",
		 "array of 5001 exceeds the limit of 5000"},
		{1, CDT_MAX_SET, GB_OK, "", ""},
		{1, CDT_MAX_SET + 1, GB_ETOOBIG, "jobs[0].sites",
		 "array of 1001 exceeds the limit of 1000"},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		msgpack_packer pk;
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		size_t n = cases[i].n;
		msgpack_pack_map(&pk, 1);
		pk_s(&pk, "jobs");
		if (cases[i].sets) {
			msgpack_pack_array(&pk, 1);
			pack_min_job(&pk, 1, 1);
			pk_s(&pk, "sites");
			msgpack_pack_array(&pk, n);
			char site[32];
			for (size_t k = 0; k < n; k++) {
				/* descending, so normalising must sort */
				snprintf(site, sizeof(site), "LCG.S%04zu.xx",
					 n - k);
				pk_s(&pk, site);
			}
		} else {
			msgpack_pack_array(&pk, n);
			for (size_t k = 0; k < n; k++)
				pack_min_job(&pk, (long long)k + 1, 0);
		}
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct cdt_submit s;
		struct cod_error err;
		memset(&err, 0, sizeof(err));
		int rc = cdt_decode_submit(sb.data, sb.size, &a, &s, &err);
		if (rc != cases[i].rc || strcmp(err.field, cases[i].field) ||
		    strcmp(err.problem, cases[i].problem))
			fail_msg("case %zu (x %zu): got %s '%s: %s'", i, n,
				 gb_errname(rc), err.field, err.problem);
		if (rc == GB_OK && cases[i].sets) {
			const struct tq_strset *st =
				&s.jobs[0].set[TQ_F_SITES];
			assert_int_equal(st->n, n);
			assert_string_equal(st->v[0], "LCG.S0001.xx");
			assert_string_equal(st->v[n - 1], "LCG.S1000.xx");
		} else if (rc == GB_OK) {
			assert_int_equal(s.njobs, n);
			assert_int_equal(s.jobs[n - 1].job_id, (long long)n);
			assert_int_equal(s.jobs[n - 1].user_priority, 1);
		}
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* The arena cap bounds decoding: the object tree before the unpack, the
** string copies as they are made. */
static void test_decode_arena_cap(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 1);
	pk_s(&pk, "jobs");
	msgpack_pack_array(&pk, 1);
	pack_min_job(&pk, 1, 1);
	pk_s(&pk, "sites");
	msgpack_pack_array(&pk, CDT_MAX_SET);
	char site[256];
	memset(site, 's', 250);
	for (size_t k = 0; k < CDT_MAX_SET; k++) {
		snprintf(site + 250, 6, "%04zu", k);
		pk_s(&pk, site);
	}
	expect(K_SUBMIT, &sb, 16384, GB_ETOOBIG, "", "decoding needs about ",
	       "16 KiB");
	struct arena a;
	arena_init(&a, 120000);
	struct cdt_submit s;
	struct cod_error err;
	assert_int_equal(cdt_decode_submit(sb.data, sb.size, &a, &s, &err),
			 GB_ENOMEM);
	assert_string_equal(err.problem, "out of decoding memory");
	assert_int_equal(strncmp(err.field, "jobs[0].sites", 13), 0);
	assert_true(a.used <= a.cap);
	arena_free(&a);
	expect(K_SUBMIT, &sb, ARENA_CAP, GB_OK, "", "", "64 MiB");
	msgpack_sbuffer_destroy(&sb);
}

/* Trailing bytes, every proper prefix, a root that is not a map, lying
** lengths and NULL arguments, for both decoders. */
static void test_decode_malformed(void **state)
{
	(void)state;
	static const char *const *bases[] = {&base_submit, &base_pilot};
	for (int k = K_SUBMIT; k <= K_PILOT; k++) {
		msgpack_sbuffer sb;
		make_msg(&sb, *bases[k], NULL, NULL);
		for (size_t len = 0; len < sb.size; len++) {
			/* an exact heap copy, so ASan sees any overread */
			char *copy = malloc(len ? len : 1);
			assert_non_null(copy);
			memcpy(copy, sb.data, len);
			msgpack_sbuffer part = {len, copy, len};
			struct arena a;
			struct cod_error err;
			int rc = decode_kind(k, &part, ARENA_CAP, &a, &err);
			if (rc != GB_EDECODE)
				fail_msg("%s prefix %zu/%zu: %s %s: %s",
					 kind_names[k], len, sb.size,
					 gb_errname(rc), err.field,
					 err.problem);
			arena_free(&a);
			free(copy);
		}
		msgpack_sbuffer_write(&sb, "\xc0\xc0", 2);
		expect(k, &sb, ARENA_CAP, GB_EDECODE, "",
		       "trailing data after the message (2 bytes)",
		       "trailing");
		msgpack_sbuffer_destroy(&sb);
		make_msg(&sb, "[1, 2]", NULL, NULL);
		expect(k, &sb, ARENA_CAP, GB_ETYPE, "",
		       "expected a map, got array", "array root");
		msgpack_sbuffer_destroy(&sb);
		/* {"jobs": array32 of 2^32-1}: refused before allocating */
		msgpack_sbuffer lie = {
			11, (char *)"\x81\xa4jobs\xdd\xff\xff\xff\xff", 11};
		expect(k, &lie, ARENA_CAP, GB_EDECODE, "jobs",
		       "array claims 4294967295 elements but only 0 bytes "
		       "follow",
		       "lying length");
	}
	struct cod_error err;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdt_submit s;
	struct cdt_pilot p;
	assert_int_equal(cdt_decode_submit("\x80", 1, NULL, &s, &err),
			 GB_EINVAL);
	assert_int_equal(cdt_decode_submit("\x80", 1, &a, NULL, &err),
			 GB_EINVAL);
	assert_int_equal(cdt_decode_pilot("\x80", 1, NULL, &p, &err),
			 GB_EINVAL);
	assert_int_equal(cdt_decode_pilot("\x80", 1, &a, NULL, &err),
			 GB_EINVAL);
	/* `err` may be NULL */
	assert_int_equal(cdt_decode_pilot("\x80", 1, &a, &p, NULL),
			 GB_EMISSING);
	arena_free(&a);
}

/* ---- encoding ------------------------------------------------------------ */

static const char *sites_in[] = {"LCG.CNAF.it", "LCG.CERN.cern",
				       "LCG.CNAF.it"};
static const char *plat_in[] = {"x86_64-el9", "x86_64-centos7"};
static const char *mw_in[] = {"HTCondorCE", "ARC"};
static const char *one_ral[] = {"LCG.RAL.uk"};
static const char *one_priv[] = {"private"};
static const char *one_pool[] = {"Pool_A"};

/* The jobs of base_submit as a producer would fill them (unsorted sets,
** a repeat). The encoder takes them as they are. */
static void submit_jobs(struct cdt_job jobs[2])
{
	memset(jobs, 0, 2 * sizeof(jobs[0]));
	jobs[0] = (struct cdt_job){
		.job_id = 1001, .owner = "/DC=ch/DC=cern/OU=Users/CN=alice",
		.owner_group = "lhcb_user", .setup = "LHCb-Production",
		.cpu_time = 86400, .user_priority = 3,
	};
	jobs[0].set[TQ_F_SITES] = (struct tq_strset){sites_in, 3};
	jobs[0].set[TQ_F_BANNED_SITES] = (struct tq_strset){one_ral, 1};
	jobs[0].set[TQ_F_PLATFORMS] = (struct tq_strset){plat_in, 2};
	jobs[0].set[TQ_F_PILOT_TYPES] = (struct tq_strset){one_priv, 1};
	jobs[0].set[TQ_F_SUBMIT_POOLS] = (struct tq_strset){one_pool, 1};
	jobs[0].set[TQ_F_GRID_MIDDLEWARES] = (struct tq_strset){mw_in, 2};
	jobs[1] = (struct cdt_job){
		.job_id = 1002, .owner = "/DC=ch/DC=cern/OU=Users/CN=bob",
		.owner_group = "lhcb_mc", .setup = "LHCb-Production",
		.cpu_time = 500, .user_priority = 1,
	};
}

static void test_round_trips(void **state)
{
	(void)state;
	struct cdt_job jobs[2];
	submit_jobs(jobs);
	struct cdt_submit in = {jobs, 2};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdt_encode_submit(&in, &sb), GB_OK);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdt_submit out;
	struct cod_error err;
	assert_int_equal(cdt_decode_submit(sb.data, sb.size, &a, &out, &err),
			 GB_OK);
	assert_int_equal(out.njobs, 2);
	for (size_t j = 0; j < 2; j++)
		check_job(&out.jobs[j], &want_base[j]);
	msgpack_sbuffer_destroy(&sb);

	/* pilot: every field (lists, one value, ANY), then the required
	** ones only */
	static const char *two_sites[] = {"LCG.CERN.cern", "LCG.CNAF.it"};
	static const char *one_ce[] = {"ce503.cern.ch"};
	static const char *tags[] = {"MultiProcessor", "8Processors"};
	static const char *req[] = {"8Processors"};
	static const char *ban[] = {"LCG.RAL.uk"};
	static const char *grp[] = {"lhcb_user", "lhcb_mc"};
	static const char *dn[] = {"/DC=ch/DC=cern/OU=Users/CN=alice"};
	for (int full = 1; full >= 0; full--) {
		struct cdt_pilot pin;
		memset(&pin, 0, sizeof(pin));
		pin.pilot_id = "https://lbvobox.cern.ch:9000/pilots/8812";
		pin.d.setup = "LHCb-Production";
		pin.d.cpu_time = 172800;
		if (full) {
			pin.d.want[TQ_P_SITE] = (struct tq_strset){two_sites, 2};
			pin.d.want[TQ_P_GRID_CE] = (struct tq_strset){one_ce, 1};
			pin.d.any[TQ_P_PLATFORM] = 1;
			pin.d.want[TQ_P_TAG] = (struct tq_strset){tags, 2};
			pin.d.required = (struct tq_strset){req, 1};
			pin.d.banned[TQ_P_SITE] = (struct tq_strset){ban, 1};
			pin.d.groups = (struct tq_strset){grp, 2};
			pin.d.owners = (struct tq_strset){dn, 1};
		}
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cdt_encode_pilot(&pin, &sb), GB_OK);
		struct cdt_pilot pout;
		assert_int_equal(
			cdt_decode_pilot(sb.data, sb.size, &a, &pout, &err),
			GB_OK);
		assert_string_equal(pout.pilot_id, pin.pilot_id);
		assert_string_equal(pout.d.setup, pin.d.setup);
		assert_int_equal(pout.d.cpu_time, pin.d.cpu_time);
		/* the record's site: the first given, or ANY */
		assert_string_equal(pout.site, full ? "LCG.CERN.cern" : "ANY");
		for (int f = 0; f < TQ_NPFIELDS; f++) {
			assert_int_equal(pout.d.any[f], pin.d.any[f]);
			check_set(&pout.d.want[f], pin.d.want[f].v,
				  pin.d.want[f].n, tq_pfield_names[f]);
			check_set(&pout.d.banned[f], pin.d.banned[f].v,
				  pin.d.banned[f].n, tq_pfield_ban_names[f]);
		}
		check_set(&pout.d.required, pin.d.required.v, pin.d.required.n,
			  "requiredTags");
		check_set(&pout.d.groups, pin.d.groups.v, pin.d.groups.n,
			  "ownerGroup");
		check_set(&pout.d.owners, pin.d.owners.v, pin.d.owners.n,
			  "ownerDN");
		msgpack_sbuffer_destroy(&sb);
	}

	arena_free(&a);
}


/* ---- what a pilot's list says (TQ-06) ------------------------------------ */

/*
** Every form a pilot.match list field may take, for each field that
** constrains a match (site, gridCE, platform, pilotType, jobType, tags),
** through the decoder and tqi_resource: absent, nil, [] and ANY in any
** case, alone or inside a list, are no constraint (tags: absent, nil and
** [] offer no tag, which is a constraint; ANY lifts it); a string is one
** value and a list keeps its values. Then the lists where ANY is a plain
** value (bans, requiredTags) and the owner lists.
*/
static void test_pilot_list_forms(void **state)
{
	(void)state;
	static const struct {
		const char *value; /* NULL: the field deleted */
		int any;           /* d.any[f] */
		size_t n;          /* values kept in d.want[f] */
		int has;           /* tq_resource.has[f]; -1: tags differ */
	} forms[] = {
		{NULL, 0, 0, -1},
		{"null", 0, 0, -1},
		{"[]", 0, 0, -1},
		{"\"X1\"", 0, 1, 1},
		{"[\"X1\", \"X2\"]", 0, 2, 1},
		{"[\"X1\"]", 0, 1, 1},
		{"\"ANY\"", 1, 0, 0},
		{"\"aNy\"", 1, 0, 0},
		{"\"any\"", 1, 0, 0},
		{"[\"X1\", \"Any\"]", 1, 0, 0},
		{"[\"ANY\"]", 1, 0, 0},
		{"\"ANYX\"", 0, 1, 1}, /* not the wildcard */
	};
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	for (int f = 0; f < TQ_NPFIELDS; f++)
		for (size_t i = 0; i < NELEM(forms); i++) {
			msgpack_sbuffer sb;
			make_msg(&sb, base_pilot, tq_pfield_names[f],
				 forms[i].value);
			struct arena a;
			arena_init(&a, ARENA_CAP);
			struct cdt_pilot p;
			struct cod_error err;
			int rc = cdt_decode_pilot(sb.data, sb.size, &a, &p, &err);
			if (rc != GB_OK)
				fail_msg("%s = %s: %s: %s", tq_pfield_names[f],
					 forms[i].value ? forms[i].value : "-",
					 err.field, err.problem);
			int has = forms[i].has;
			if (has < 0) /* absent, nil, []: tags offer none */
				has = f == TQ_P_TAG;
			struct tqi_resource_ids ids;
			struct tq_resource r;
			tqi_resource(x, &p.d, NULL, &ids, &r);
			if (p.d.any[f] != forms[i].any ||
			    p.d.want[f].n != forms[i].n || r.has[f] != has)
				fail_msg("%s = %s: any %d, %zu values, has %d; "
					 "want %d, %zu, %d",
					 tq_pfield_names[f],
					 forms[i].value ? forms[i].value : "-",
					 p.d.any[f], p.d.want[f].n, r.has[f],
					 forms[i].any, forms[i].n, has);
			/* the site replies and records name: the first
			** given, or ANY */
			if (f == TQ_P_SITE)
				assert_string_equal(
					p.site, forms[i].n == 0	    ? "ANY"
						: forms[i].value[1] == 'A' ? "ANYX"
									   : "X1");
			msgpack_sbuffer_destroy(&sb);
			arena_free(&a);
		}
	tqi_free(x);

	/* ANY is a plain value in the bans and requiredTags; owner lists. */
	static const struct {
		const char *path, *value, *path2, *value2;
		const char *list; /* which list is checked */
		const char *want[3];
	} plain[] = {
		{"bannedSite", "\"ANY\"", NULL, NULL, "bannedSite", {"ANY"}},
		{"bannedGridCE", "[\"c1\", \"any\"]", NULL, NULL, "bannedGridCE",
		 {"c1", "any"}},
		{"bannedPlatform", "\"el7\"", NULL, NULL, "bannedPlatform",
		 {"el7"}},
		{"bannedPilotType", "[\"generic\"]", NULL, NULL,
		 "bannedPilotType", {"generic"}},
		{"bannedJobType", "[\"User\", \"Test\"]", NULL, NULL,
		 "bannedJobType", {"User", "Test"}},
		{"bannedTag", "\"GPU\"", NULL, NULL, "bannedTag", {"GPU"}},
		{"requiredTags", "\"ANY\"", "tags", "\"ANY\"", "requiredTags",
		 {"ANY"}},
		{"requiredTags", "[\"GPU\", \"MP\"]", "tags",
		 "[\"MP\", \"GPU\", \"WN\"]", "requiredTags", {"GPU", "MP"}},
		{"ownerGroup", "[\"g1\", \"g2\"]", "ownerDN", "[\"/CN=a\", \"/CN=b\"]",
		 "ownerGroup", {"g1", "g2"}},
		{"ownerDN", "[\"/CN=a\", \"/CN=b\"]", NULL, NULL, "ownerDN",
		 {"/CN=a", "/CN=b"}},
	};
	for (size_t i = 0; i < NELEM(plain); i++) {
		/* base_pilot with one or two fields patched */
		json_t *root = parse(base_pilot);
		apply_patch(root, plain[i].path, plain[i].value);
		if (plain[i].path2)
			apply_patch(root, plain[i].path2, plain[i].value2);
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		msgpack_packer pk;
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		pack_json(&pk, root);
		json_decref(root);
		const msgpack_sbuffer *use = &sb;
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct cdt_pilot p;
		struct cod_error err;
		if (cdt_decode_pilot(use->data, use->size, &a, &p, &err) != GB_OK)
			fail_msg("%s = %s: %s: %s", plain[i].path,
				 plain[i].value, err.field, err.problem);
		const struct tq_strset *l =
			strcmp(plain[i].list, "requiredTags") == 0 ? &p.d.required
			: strcmp(plain[i].list, "ownerGroup") == 0 ? &p.d.groups
			: strcmp(plain[i].list, "ownerDN") == 0	   ? &p.d.owners
								   : NULL;
		for (int f = 0; l == NULL && f < TQ_NPFIELDS; f++)
			if (strcmp(plain[i].list, tq_pfield_ban_names[f]) == 0)
				l = &p.d.banned[f];
		assert_non_null(l);
		size_t n = 0;
		while (n < 3 && plain[i].want[n])
			n++;
		check_set(l, plain[i].want, n, plain[i].list);
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* The encoders refuse what the decoders would refuse. */
static void test_encode_refusals(void **state)
{
	(void)state;
	static char long_str[300];
	memset(long_str, 'x', sizeof(long_str) - 1);
	static const char *empty_val[] = {"a", ""};
	static const char *bad_utf8[] = {"\xc3\x28"};
	for (int c = 0; c < 19; c++) {
		struct cdt_job jobs[2];
		submit_jobs(jobs);
		struct cdt_submit s = {jobs, 2};
		switch (c) {
		case 0: s.njobs = 0; break;
		case 1: s.jobs = NULL; break;
		case 2: s.njobs = CDT_MAX_JOBS + 1; break;
		case 3: jobs[1].job_id = 0; break;
		case 4: jobs[1].job_id = 1001; break; /* twice */
		case 5: jobs[0].owner = NULL; break;
		case 6: jobs[0].owner_group = ""; break;
		case 7: jobs[1].setup = long_str; break;
		case 8: jobs[0].owner = "\xff"; break;
		case 9: jobs[0].cpu_time = 0; break;
		case 10: jobs[0].cpu_time = CDT_MAX_CPU + 1; break;
		case 11: jobs[1].user_priority = TQ_MAX_PRIORITY + 1; break;
		case 12: jobs[1].user_priority = TQ_MIN_PRIORITY - 1; break;
		case 13: jobs[0].set[TQ_F_SITES].n = CDT_MAX_SET + 1; break;
		case 14: jobs[0].set[TQ_F_GRID_CES].n = 1; break; /* v NULL */
		case 15: jobs[0].set[TQ_F_PLATFORMS] =
				 (struct tq_strset){empty_val, 2};
			break;
		case 16: jobs[1].set[TQ_F_SITES] =
				 (struct tq_strset){bad_utf8, 1};
			break;
		case 17: jobs[0].cpu_time = -86400; break;
		default: jobs[1].owner_group = NULL; break;
		}
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		if (cdt_encode_submit(&s, &sb) != GB_EINVAL)
			fail_msg("submit case %d was encoded", c);
		assert_int_equal(sb.size, 0);
		msgpack_sbuffer_destroy(&sb);
	}
	static const char *gA[] = {"A"}, *gg[] = {"g"}, *gdn[] = {"dn"},
			  *gempty[] = {""}, *gany[] = {"ANY"},
			  *gbad[] = {"\xed\xa0\x80"}, *gtag[] = {"MP"};
	const char *glong[] = {long_str};
	for (int c = 0; c < 14; c++) {
		struct cdt_pilot p;
		memset(&p, 0, sizeof(p));
		p.pilot_id = "p1";
		p.d.setup = "S";
		p.d.cpu_time = 100;
		p.d.want[TQ_P_SITE] = (struct tq_strset){gA, 1};
		p.d.groups = (struct tq_strset){gg, 1};
		p.d.owners = (struct tq_strset){gdn, 1};
		switch (c) {
		case 0: p.pilot_id = NULL; break;
		case 1: p.d.setup = ""; break;
		case 2: p.d.cpu_time = 0; break;
		case 3: p.d.cpu_time = CDT_MAX_CPU + 1; break;
		case 4: p.d.want[TQ_P_SITE] = (struct tq_strset){NULL, 1}; break;
		case 5: p.d.want[TQ_P_GRID_CE] = (struct tq_strset){gempty, 1}; break;
		case 6: p.d.want[TQ_P_PLATFORM] = (struct tq_strset){glong, 1}; break;
		case 7: p.d.banned[TQ_P_PILOT_TYPE] = (struct tq_strset){gempty, 1}; break;
		case 8: p.d.groups = (struct tq_strset){NULL, 0}; break; /* DN without group */
		case 9: p.d.owners = (struct tq_strset){gempty, 1}; break;
		case 10: p.d.want[TQ_P_SITE] = (struct tq_strset){gbad, 1}; break;
		case 11: p.d.want[TQ_P_SITE] = (struct tq_strset){gany, 1}; break; /* use any[] */
		case 12: p.d.required = (struct tq_strset){gtag, 1}; break; /* not among tags */
		default: p.d.cpu_time = -1; break;
		}
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		if (cdt_encode_pilot(&p, &sb) != GB_EINVAL)
			fail_msg("pilot case %d was encoded", c);
		msgpack_sbuffer_destroy(&sb);
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdt_encode_submit(NULL, &sb), GB_EINVAL);
	assert_int_equal(cdt_encode_pilot(NULL, &sb), GB_EINVAL);
	msgpack_sbuffer_destroy(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submit_decode),
		cmocka_unit_test(test_submit_set_names),
		cmocka_unit_test(test_submit_normalise),
		cmocka_unit_test(test_decode_cases),
		cmocka_unit_test(test_decode_key_rules),
		cmocka_unit_test(test_decode_size_limits),
		cmocka_unit_test(test_decode_arena_cap),
		cmocka_unit_test(test_decode_malformed),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_encode_refusals),
		cmocka_unit_test(test_pilot_list_forms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
