/*
** test_codec_panda.c — the PanDA job life cycle on the wire: job.status
** for PanDA jobs (system "panda"), the probe that picks the job.status
** decoder, and the task.throttled, job.timeout and job.rebrokered events.
**
** Decode cases start from one valid update (JSON for readability, packed
** by jsonmsg.h's make_msg) with one patch applied; every refusal is
** checked for its code AND the field it names AND the start of the
** problem, since that is what a producer reads in the dead-letter header.
** Duplicate keys and cut buffers are built as bytes. The events are
** rendered with cod_to_json and compared with the expected JSON by value
** and type (120.0 is a float, 120 an integer), and their keys are checked
** in wire order on the msgpack itself.
*/
#include "gbtest.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>
#include <msgpack.h>

#include "analysis.h"
#include "base/arena.h"
#include "codec/codec.h"
#include "codec/codec_panda.h"
#include "gb_error.h"
#include "timeout.h"

#define ARENA_CAP (1u << 20)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *base_status =
	"{\"system\": \"panda\", \"jobID\": 4711000001,"
	" \"status\": \"running\", \"time\": 1715675400,"
	" \"jobSubStatus\": \"\", \"computingSite\": \"CERN-PROD\"}";

#include "jsonmsg.h"

/* ---- job.status: decoding ------------------------------------------------ */

static int decode(const msgpack_sbuffer *sb, struct arena *a,
		  struct cdp_status *st, struct cod_error *err)
{
	arena_init(a, ARENA_CAP);
	return cdp_decode_status(sb->data, sb->size, a, st, err);
}

/* Every word, with what it means. */
static void test_status_words(void **state)
{
	(void)state;
	static const struct {
		const char *word;
		enum to_status status;
		int heartbeat;
	} cases[] = {
		{"defined", TO_ST_DEFINED, 0},
		{"assigned", TO_ST_ASSIGNED, 0},
		{"activated", TO_ST_ACTIVATED, 0},
		{"throttled", TO_ST_THROTTLED, 0},
		{"sent", TO_ST_SENT, 0},
		{"starting", TO_ST_STARTING, 0},
		{"running", TO_ST_RUNNING, 0},
		{"started", TO_ST_RUNNING, 0},
		{"holding", TO_ST_HOLDING, 0},
		{"transferring", TO_ST_TRANSFERRING, 0},
		{"finished", TO_ST_FINISHED, 0},
		{"failed", TO_ST_FAILED, 0},
		{"closed", TO_ST_CLOSED, 0},
		{"cancelled", TO_ST_CANCELLED, 0},
		{"heartbeat", TO_ST_PENDING, 1},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		char value[40];
		snprintf(value, sizeof(value), "\"%s\"", cases[i].word);
		msgpack_sbuffer sb;
		make_msg(&sb, base_status, "status", value);
		struct arena a;
		struct cdp_status st;
		struct cod_error err;
		int rc = decode(&sb, &a, &st, &err);
		if (rc != GB_OK)
			fail_msg("%s: %s '%s: %s'", cases[i].word,
				 gb_errname(rc), err.field, err.problem);
		if (st.heartbeat != cases[i].heartbeat ||
		    (!cases[i].heartbeat && st.status != cases[i].status))
			fail_msg("%s: status %d heartbeat %d, want %d %d",
				 cases[i].word, st.status, st.heartbeat,
				 cases[i].status, cases[i].heartbeat);
		assert_int_equal(st.job_id, 4711000001LL);
		assert_int_equal(st.time, 1715675400LL);
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* Every field as decoded; absent and nil optional fields are NULL. */
static void test_status_values(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value; /* value NULL: deleted */
		const char *sub, *site;   /* want; "-" = NULL */
	} cases[] = {
		{NULL, NULL, "", "CERN-PROD"},
		{"jobSubStatus", NULL, "-", "CERN-PROD"},
		{"jobSubStatus", "null", "-", "CERN-PROD"},
		{"jobSubStatus", "\"pilot_stageout\"", "pilot_stageout",
		 "CERN-PROD"},
		{"computingSite", NULL, "", "-"},
		{"computingSite", "null", "", "-"},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, base_status, cases[i].path, cases[i].value);
		struct arena a;
		struct cdp_status st;
		struct cod_error err;
		int rc = decode(&sb, &a, &st, &err);
		if (rc != GB_OK)
			fail_msg("case %zu: %s '%s: %s'", i, gb_errname(rc),
				 err.field, err.problem);
		msgpack_sbuffer_destroy(&sb); /* nothing may point into it */
		assert_int_equal(st.job_id, 4711000001LL);
		assert_int_equal(st.status, TO_ST_RUNNING);
		assert_int_equal(st.heartbeat, 0);
		assert_int_equal(st.time, 1715675400LL);
		if (strcmp(cases[i].sub, "-") == 0)
			assert_null(st.job_sub_status);
		else
			assert_string_equal(st.job_sub_status, cases[i].sub);
		if (strcmp(cases[i].site, "-") == 0)
			assert_null(st.site);
		else
			assert_string_equal(st.site, cases[i].site);
		arena_free(&a);
	}
}

#define TS(got) "expected string, got " got
#define TI(got) "expected integer, got " got
#define R_TIME "expected an integer in [0, 253402300799], got "
#define R_ST                                                               \
	"'; expected a PanDA job status (see job.status.md), started or "   \
	"heartbeat"
/* One patch each: accepted, or refused with this code, field, problem. */
static void test_status_decode_cases(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value; /* value NULL: deleted */
		int rc;
		const char *problem;      /* prefix */
	} cases[] = {
		{"jobMetrics", "\"coreCount=8\"", GB_OK, ""},
		{"time", "0", GB_OK, ""},
		{"time", "253402300799", GB_OK, ""},
		{"jobSubStatus", "\"#x:63\"", GB_OK, ""},
		{"computingSite", "\"#x:255\"", GB_OK, ""},
		{"status", "\"pending\"", GB_ERANGE,
		 "'pending' is gridbroker's own status"},
		{"system", NULL, GB_EMISSING, "missing"},
		{"jobID", NULL, GB_EMISSING, "missing"},
		{"status", NULL, GB_EMISSING, "missing"},
		{"time", NULL, GB_EMISSING, "missing"},
		{"system", "\"dirac\"", GB_ERANGE,
		 "unknown value 'dirac'; expected panda"},
		{"system", "\"PanDA\"", GB_ERANGE,
		 "unknown value 'PanDA'; expected panda"},
		{"system", "1", GB_ETYPE, TS("integer")},
		{"system", "null", GB_ETYPE, TS("null")},
		{"jobID", "0", GB_ERANGE, "expected a positive integer, got 0"},
		{"jobID", "-5", GB_ERANGE,
		 "expected a positive integer, got -5"},
		{"jobID", "\"4711000001\"", GB_ETYPE, TI("string")},
		{"jobID", "4711000001.0", GB_ETYPE, TI("float")},
		{"jobID", "null", GB_ETYPE, TI("null")},
		{"status", "\"Running\"", GB_ERANGE,
		 "unknown value 'Running'; expected running (lower case)"},
		{"status", "\"HEARTBEAT\"", GB_ERANGE,
		 "unknown value 'HEARTBEAT'; expected heartbeat (lower case)"},
		{"status", "\"Pending\"", GB_ERANGE,
		 "unknown value 'Pending" R_ST},
		{"status", "\"lost\"", GB_ERANGE, "unknown value 'lost" R_ST},
		{"status", "\"waiting\"", GB_ERANGE,
		 "unknown value 'waiting" R_ST},
		{"status", "\"\"", GB_ERANGE, "unknown value '" R_ST},
		{"status", "7", GB_ETYPE, TS("integer")},
		{"status", "[\"running\"]", GB_ETYPE, TS("array")},
		{"time", "-1", GB_ERANGE, R_TIME "-1"},
		{"time", "253402300800", GB_ERANGE, R_TIME "253402300800"},
		{"time", "1715675400.5", GB_ETYPE, TI("float")},
		{"time", "1715675400.0", GB_ETYPE, TI("float")},
		{"time", "\"2024-05-14T08:30:00Z\"", GB_ETYPE, TI("string")},
		{"jobSubStatus", "\"#x:64\"", GB_ETOOBIG,
		 "string of 64 bytes exceeds the limit of 63"},
		{"jobSubStatus", "5", GB_ETYPE, TS("integer")},
		{"jobSubStatus", "\"#hex:c328\"", GB_ERANGE,
		 "string is not valid UTF-8"},
		{"computingSite", "\"\"", GB_ERANGE,
		 "expected a non-empty string"},
		{"computingSite", "\"#x:256\"", GB_ETOOBIG,
		 "string of 256 bytes exceeds the limit of 255"},
		{"computingSite", "true", GB_ETYPE, TS("boolean")},
		{"computingSite", "\"#hex:6100\"", GB_ERANGE,
		 "string contains a NUL byte"},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, base_status, cases[i].path, cases[i].value);
		struct arena a;
		struct cdp_status st;
		struct cod_error err;
		int got = decode(&sb, &a, &st, &err);
		const char *field = cases[i].rc == GB_OK ? "" : cases[i].path;
		if (got != cases[i].rc || strcmp(err.field, field) ||
		    strncmp(err.problem, cases[i].problem,
			    strlen(cases[i].problem)))
			fail_msg("case %zu (%s = %.40s): got %s '%s: %s', "
				 "want %s '%s: %s'",
				 i, cases[i].path,
				 cases[i].value ? cases[i].value : "(deleted)",
				 gb_errname(got), err.field, err.problem,
				 gb_errname(cases[i].rc), field,
				 cases[i].problem);
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

static void pk_kstr(msgpack_packer *pk, const char *k, const char *v)
{
	msgpack_pack_str_with_body(pk, k, strlen(k));
	msgpack_pack_str_with_body(pk, v, strlen(v));
}

static void pk_kint(msgpack_packer *pk, const char *k, long long v)
{
	msgpack_pack_str_with_body(pk, k, strlen(k));
	msgpack_pack_long_long(pk, v);
}

/* A valid update with `dup` (a key) given a second time at the end. */
static void make_dup(msgpack_sbuffer *sb, const char *dup)
{
	msgpack_sbuffer_init(sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 5);
	pk_kstr(&pk, "system", "panda");
	pk_kint(&pk, "jobID", 4711000001LL);
	pk_kstr(&pk, "status", "running");
	pk_kint(&pk, "time", 1715675400LL);
	if (strcmp(dup, "jobID") == 0 || strcmp(dup, "time") == 0)
		pk_kint(&pk, dup, 1);
	else
		pk_kstr(&pk, dup, strcmp(dup, "system") ? "running" : "panda");
}

/* Byte-level cases: duplicate keys, non-maps, cut and trailing bytes,
** NULL arguments. */
static void test_status_decode_bytes(void **state)
{
	(void)state;
	static const char *const dups[] = {"system", "jobID", "status",
					   "time", "computingSite"};
	for (size_t i = 0; i < NELEM(dups); i++) {
		msgpack_sbuffer sb;
		make_dup(&sb, dups[i]);
		struct arena a;
		struct cdp_status st;
		struct cod_error err;
		int rc = decode(&sb, &a, &st, &err);
		if (strcmp(dups[i], "computingSite") == 0) {
			/* computingSite once is fine: only 5 keys packed */
			assert_int_equal(rc, GB_OK);
		} else {
			assert_int_equal(rc, GB_EDUP);
			assert_string_equal(err.field, dups[i]);
			assert_string_equal(err.problem, "duplicate key");
		}
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}

	static const struct {
		const char *bytes;
		size_t len;
		int rc;
		const char *problem;
	} cases[] = {
		{"\x93\x01\x02\x03", 4, GB_ETYPE, "expected a map, got array"},
		{"\xa5panda", 6, GB_ETYPE, "expected a map, got string"},
		{"\x84\xa6system", 8, GB_EDECODE, ""},  /* cut */
		{"\x80\x80", 2, GB_EDECODE, ""},        /* trailing */
		{"", 0, GB_EDECODE, ""},
		{"\xc1", 1, GB_EDECODE, ""},            /* never used */
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct cdp_status st;
		struct cod_error err;
		int rc = cdp_decode_status(cases[i].bytes, cases[i].len, &a,
					   &st, &err);
		if (rc != cases[i].rc ||
		    strncmp(err.problem, cases[i].problem,
			    strlen(cases[i].problem)))
			fail_msg("bytes %zu: got %s '%s: %s'", i,
				 gb_errname(rc), err.field, err.problem);
		arena_free(&a);
	}

	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdp_status st;
	struct cod_error err;
	assert_int_equal(cdp_decode_status("\x80", 1, NULL, &st, &err),
			 GB_EINVAL);
	assert_int_equal(cdp_decode_status("\x80", 1, &a, NULL, &err),
			 GB_EINVAL);
	/* err may be NULL */
	assert_int_equal(cdp_decode_status("\x80", 1, &a, &st, NULL),
			 GB_EMISSING);
	arena_free(&a);
}

/* ---- job.status: encoding ------------------------------------------------ */

static void test_status_round_trip(void **state)
{
	(void)state;
	for (int s = 0; s <= TO_NSTATUS; s++) {
		/* s == TO_NSTATUS: a heartbeat; pending cannot be sent */
		if (s == TO_ST_PENDING)
			continue;
		for (int opt = 0; opt < 3; opt++) {
			struct cdp_status in = {
				.job_id = LLONG_MAX - s,
				.heartbeat = s == TO_NSTATUS,
				.status = s == TO_NSTATUS ? TO_ST_PENDING
							  : (enum to_status)s,
				.time = opt == 2 ? CDP_MAX_TIME : 1715675400 + s,
				.job_sub_status = opt == 0   ? NULL
						  : opt == 1 ? ""
							     : "pilot_stageout",
				.site = opt == 0 ? NULL : "BNL_PROD",
			};
			msgpack_sbuffer sb;
			msgpack_sbuffer_init(&sb);
			assert_int_equal(cdp_encode_status(&in, &sb), GB_OK);
			struct arena a;
			struct cdp_status out;
			struct cod_error err;
			int rc = decode(&sb, &a, &out, &err);
			if (rc != GB_OK)
				fail_msg("status %d opt %d: %s '%s: %s'", s,
					 opt, gb_errname(rc), err.field,
					 err.problem);
			/* the wire says "system": "panda" too */
			enum cdp_system sys = CDP_SYS_DIRAC;
			assert_int_equal(cdp_status_system(sb.data, sb.size,
							   &sys, &err),
					 GB_OK);
			assert_int_equal(sys, CDP_SYS_PANDA);
			msgpack_sbuffer_destroy(&sb);
			assert_int_equal(out.job_id, in.job_id);
			assert_int_equal(out.heartbeat, in.heartbeat);
			if (!in.heartbeat)
				assert_int_equal(out.status, in.status);
			assert_int_equal(out.time, in.time);
			if (in.job_sub_status)
				assert_string_equal(out.job_sub_status,
						    in.job_sub_status);
			else
				assert_null(out.job_sub_status);
			if (in.site)
				assert_string_equal(out.site, in.site);
			else
				assert_null(out.site);
			arena_free(&a);
		}
	}
}

/* The encoder refuses what the decoder would refuse. */
static void test_status_encode_rejects(void **state)
{
	(void)state;
	static char long_sub[65];
	memset(long_sub, 's', sizeof(long_sub) - 1);
	for (int c = 0; c < 10; c++) {
		struct cdp_status st = {4711, 0, TO_ST_RUNNING, 1715675400,
					NULL, NULL};
		switch (c) {
		case 0: st.status = TO_ST_PENDING; break;
		case 1: st.status = TO_NSTATUS; break;
		case 2: st.status = (enum to_status)-1; break;
		case 3: st.job_id = 0; break;
		case 4: st.time = -1; break;
		case 5: st.time = CDP_MAX_TIME + 1; break;
		case 6: st.job_sub_status = long_sub; break;
		case 7: st.site = ""; break;
		case 8: st.job_sub_status = "\xc3\x28"; break;
		case 9: st.site = "\xff"; break;
		}
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		if (cdp_encode_status(&st, &sb) != GB_EINVAL)
			fail_msg("case %d was encoded", c);
		msgpack_sbuffer_destroy(&sb);
	}
	/* a heartbeat ignores the status field */
	struct cdp_status hb = {4711, 1, TO_ST_PENDING, 1715675400, NULL, NULL};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_status(&hb, &sb), GB_OK);
	assert_int_equal(cdp_encode_status(NULL, &sb), GB_EINVAL);
	assert_int_equal(cdp_encode_status(&hb, NULL), GB_EINVAL);
	msgpack_sbuffer_destroy(&sb);
}

/* ---- cdp_status_system --------------------------------------------------- */

static const char *base_dirac =
	"{\"jobID\": 1001, \"status\": \"running\", \"time\": 1715675400,"
	" \"site\": \"LCG.CERN.cern\"}";

static void test_status_system(void **state)
{
	(void)state;
	static const struct {
		const char *value; /* "system", NULL: absent */
		int rc;
		enum cdp_system sys;
		const char *field, *problem;
	} cases[] = {
		{NULL, GB_OK, CDP_SYS_DIRAC, "", ""},
		{"null", GB_OK, CDP_SYS_DIRAC, "", ""},
		{"\"dirac\"", GB_OK, CDP_SYS_DIRAC, "", ""},
		{"\"panda\"", GB_OK, CDP_SYS_PANDA, "", ""},
		{"\"Panda\"", GB_ERANGE, 0, "system",
		 "unknown value 'Panda'; expected dirac or panda"},
		{"\"lhcb\"", GB_ERANGE, 0, "system",
		 "unknown value 'lhcb'; expected dirac or panda"},
		{"\"\"", GB_ERANGE, 0, "system",
		 "unknown value ''; expected dirac or panda"},
		{"1", GB_ETYPE, 0, "system", "expected string, got integer"},
		{"[\"panda\"]", GB_ETYPE, 0, "system",
		 "expected string, got array"},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, base_dirac, "system",
			 cases[i].value ? cases[i].value : NULL);
		enum cdp_system sys = (enum cdp_system)7;
		struct cod_error err;
		int rc = cdp_status_system(sb.data, sb.size, &sys, &err);
		if (rc != cases[i].rc || strcmp(err.field, cases[i].field) ||
		    strcmp(err.problem, cases[i].problem))
			fail_msg("system %s: got %s '%s: %s'",
				 cases[i].value ? cases[i].value : "(absent)",
				 gb_errname(rc), err.field, err.problem);
		if (rc == GB_OK)
			assert_int_equal(sys, cases[i].sys);
		else
			assert_int_equal(sys, 7); /* untouched */
		msgpack_sbuffer_destroy(&sb);
	}

	/* "system" twice; another key twice is not the probe's business */
	msgpack_sbuffer sb;
	make_dup(&sb, "system");
	enum cdp_system sys;
	struct cod_error err;
	assert_int_equal(cdp_status_system(sb.data, sb.size, &sys, &err),
			 GB_EDUP);
	assert_string_equal(err.field, "system");
	assert_string_equal(err.problem, "duplicate key");
	msgpack_sbuffer_destroy(&sb);
	make_dup(&sb, "jobID");
	assert_int_equal(cdp_status_system(sb.data, sb.size, &sys, &err),
			 GB_OK);
	assert_int_equal(sys, CDP_SYS_PANDA);
	msgpack_sbuffer_destroy(&sb);

	/* not one msgpack map: the body is at fault */
	static const struct {
		const char *bytes;
		size_t len;
		const char *problem;
	} bad[] = {
		{"\x93\x01\x02\x03", 4, "expected a map, got array"},
		{"\xa5panda", 6, "expected a map, got string"},
		{"\xc0", 1, "expected a map, got null"},
		{"\x81\xa6system", 8, "system: truncated"}, /* cut */
		{"\x80\x80", 2, ""},       /* trailing */
		{"", 0, ""},
	};
	for (size_t i = 0; i < NELEM(bad); i++) {
		int rc = cdp_status_system(bad[i].bytes, bad[i].len, &sys,
					   &err);
		if (rc != GB_EDECODE || strcmp(err.field, "body") ||
		    strncmp(err.problem, bad[i].problem,
			    strlen(bad[i].problem)))
			fail_msg("bytes %zu: got %s '%s: %s'", i,
				 gb_errname(rc), err.field, err.problem);
	}
	assert_int_equal(cdp_status_system("\x80", 1, NULL, &err), GB_EINVAL);
	assert_int_equal(cdp_status_system("\x80", 1, &sys, NULL), GB_OK);
	assert_int_equal(sys, CDP_SYS_DIRAC);
}

/* ---- events -------------------------------------------------------------- */

/* The event's keys are exactly `keys`, in this order. */
static void check_keys(const msgpack_sbuffer *sb, const char *const *keys,
		       size_t n, const char *what)
{
	msgpack_unpacked up;
	msgpack_unpacked_init(&up);
	size_t off = 0;
	assert_int_equal(msgpack_unpack_next(&up, sb->data, sb->size, &off),
			 MSGPACK_UNPACK_SUCCESS);
	assert_int_equal(off, sb->size);
	const msgpack_object *o = &up.data;
	assert_int_equal(o->type, MSGPACK_OBJECT_MAP);
	if (o->via.map.size != n)
		fail_msg("%s: %u keys, want %zu", what, o->via.map.size, n);
	for (size_t i = 0; i < n; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;
		if (k->type != MSGPACK_OBJECT_STR ||
		    k->via.str.size != strlen(keys[i]) ||
		    memcmp(k->via.str.ptr, keys[i], k->via.str.size) != 0)
			fail_msg("%s: key %zu is not %s", what, i, keys[i]);
	}
	msgpack_unpacked_destroy(&up);
}

/* The event, as JSON, equals `want` (values and number types). */
static void check_json(const msgpack_sbuffer *sb, const char *want,
		       const char *what)
{
	json_t *got = cod_to_json(sb->data, sb->size);
	assert_non_null(got);
	json_t *exp = parse(want);
	if (!json_equal(got, exp)) {
		char *g = json_dumps(got, JSON_SORT_KEYS);
		char *e = json_dumps(exp, JSON_SORT_KEYS);
		fprintf(stderr, "got:  %s\nwant: %s\n", g, e);
		free(g);
		free(e);
		json_decref(got);
		json_decref(exp);
		fail_msg("%s: the event differs", what);
	}
	json_decref(got);
	json_decref(exp);
}

static const char *const throttled_keys[] = {
	"event",       "decisionId",   "requestId",    "taskID",
	"gshare",      "userName",     "workingGroup", "countsOf",
	"taskClass",   "rule",	       "code",	       "value",
	"limit",       "runningJobs",  "queuedJobs",   "runningCores",
	"queuedCores", "quotaExceeded", "shareUsage",  "shareTarget",
	"hiSiteSlots", "decidedAt",    "retryAt",      "reasons",
};

static void test_event_throttled(void **state)
{
	(void)state;
	/* AJ-02 for a user: the numbers as the throttle reported them */
	struct an_user_load u = {
		.working_group = 0, .running_jobs = 120, .queued_jobs = 35,
		.running_cores = 960, .queued_cores = 280,
		.quota_exceeded = 0, .user_analysis = 0,
		.task_class = AN_CLASS_B, .share_usage = 40,
		.share_target = 100, .hi_site_slots = 64,
	};
	struct an_throttle th = {1, "AJ-02", "running_jobs", 120, 100};
	struct cdp_throttled_event e = {
		.decision_id = 9001, .request_id = "anal-36200001-1-1",
		.task_id = 36200001, .gshare = "Express Analysis",
		.user = "alice", .working_group = NULL,
		.task_class = AN_CLASS_B, .load = &u, .th = &th,
		.decided_at = 1715675400, .retry_at = 1715676600,
	};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_throttled(&e, &sb), GB_OK);
	check_keys(&sb, throttled_keys, NELEM(throttled_keys), "AJ-02");
	check_json(&sb,
		   "{\"event\": \"task.throttled\", \"decisionId\": 9001,"
		   " \"requestId\": \"anal-36200001-1-1\","
		   " \"taskID\": 36200001, \"gshare\": \"Express Analysis\","
		   " \"userName\": \"alice\", \"workingGroup\": null,"
		   " \"countsOf\": \"user\", \"taskClass\": \"B\","
		   " \"rule\": \"AJ-02\", \"code\": \"running_jobs\","
		   " \"value\": 120.0, \"limit\": 100.0,"
		   " \"runningJobs\": 120.0, \"queuedJobs\": 35.0,"
		   " \"runningCores\": 960.0, \"queuedCores\": 280.0,"
		   " \"quotaExceeded\": false, \"shareUsage\": null,"
		   " \"shareTarget\": null, \"hiSiteSlots\": 64.0,"
		   " \"decidedAt\": \"2024-05-14T08:30:00Z\","
		   " \"retryAt\": \"2024-05-14T08:50:00Z\","
		   " \"reasons\": [\"AJ-02: running_jobs 120 > 100\"]}",
		   "AJ-02");
	msgpack_sbuffer_destroy(&sb);

	/* AJ-04 as the engine computes it: class C at 92.5 % of the User
	** Analysis target, counted for a working group; no request id */
	u = (struct an_user_load){
		.working_group = 1, .running_jobs = 10, .queued_jobs = 2,
		.running_cores = 10, .queued_cores = 2, .quota_exceeded = 0,
		.user_analysis = 1, .task_class = AN_CLASS_C,
		.share_usage = 925, .share_target = 1000,
		.hi_site_slots = 0,
	};
	assert_int_equal(an_throttle_check(&u, NULL, &th), GB_OK);
	assert_int_equal(th.throttled, 1);
	assert_string_equal(th.rule, "AJ-04");
	e.request_id = NULL;
	e.gshare = "User Analysis";
	e.working_group = "phys-higgs";
	e.task_class = AN_CLASS_C;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_throttled(&e, &sb), GB_OK);
	check_keys(&sb, throttled_keys, NELEM(throttled_keys), "AJ-04");
	check_json(&sb,
		   "{\"event\": \"task.throttled\", \"decisionId\": 9001,"
		   " \"requestId\": null, \"taskID\": 36200001,"
		   " \"gshare\": \"User Analysis\", \"userName\": \"alice\","
		   " \"workingGroup\": \"phys-higgs\","
		   " \"countsOf\": \"workingGroup\", \"taskClass\": \"C\","
		   " \"rule\": \"AJ-04\", \"code\": \"share_class_c\","
		   " \"value\": 92.5, \"limit\": 90.0,"
		   " \"runningJobs\": 10.0, \"queuedJobs\": 2.0,"
		   " \"runningCores\": 10.0, \"queuedCores\": 2.0,"
		   " \"quotaExceeded\": false, \"shareUsage\": 925.0,"
		   " \"shareTarget\": 1000.0, \"hiSiteSlots\": 0.0,"
		   " \"decidedAt\": \"2024-05-14T08:30:00Z\","
		   " \"retryAt\": \"2024-05-14T08:50:00Z\","
		   " \"reasons\": [\"AJ-04: share_class_c: share usage 92.5 %"
		   " of target > 90 %\"]}",
		   "AJ-04");
	msgpack_sbuffer_destroy(&sb);

	/* AJ-03: the flag has no number behind it */
	u.quota_exceeded = 1;
	assert_int_equal(an_throttle_check(&u, NULL, &th), GB_OK);
	assert_string_equal(th.rule, "AJ-03");
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_throttled(&e, &sb), GB_OK);
	json_t *j = cod_to_json(sb.data, sb.size);
	assert_non_null(j);
	assert_string_equal(
		json_string_value(json_array_get(json_object_get(j, "reasons"),
						 0)),
		"AJ-03: global disk quota exceeded");
	assert_true(json_is_true(json_object_get(j, "quotaExceeded")));
	assert_string_equal(json_string_value(json_object_get(j, "code")),
			    "quota");
	json_decref(j);
	msgpack_sbuffer_destroy(&sb);

	/* refused: pieces missing, not throttled, a class out of range */
	for (int c = 0; c < 9; c++) {
		struct an_throttle t2 = th;
		struct cdp_throttled_event e2 = e;
		e2.th = &t2;
		switch (c) {
		case 0: e2.gshare = NULL; break;
		case 1: e2.user = NULL; break;
		case 2: e2.load = NULL; break;
		case 3: e2.th = NULL; break;
		case 4: t2.throttled = 0; break;
		case 5: t2.rule = NULL; break;
		case 6: e2.task_class = (enum an_task_class)4; break;
		case 7: e2.decided_at = -1; break;
		case 8: e2.retry_at = 253402300800LL; break;
		}
		msgpack_sbuffer_init(&sb);
		if (cdp_encode_throttled(&e2, &sb) != GB_EINVAL)
			fail_msg("throttled case %d was encoded", c);
		msgpack_sbuffer_destroy(&sb);
	}
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_throttled(NULL, &sb), GB_EINVAL);
	assert_int_equal(cdp_encode_throttled(&e, NULL), GB_EINVAL);
	msgpack_sbuffer_destroy(&sb);
}

static const char *const timeout_keys[] = {
	"event",  "decisionId", "requestId", "jobID",	  "taskID",
	"queue",  "gshare",	"status",    "rule",	  "what",
	"age",	  "limit",	"action",    "newStatus", "attempt",
	"decidedAt", "reasons",
};

static void test_event_timeout(void **state)
{
	(void)state;
	/* TO-05 as the engine decides it: activated one second too long */
	const long long now = 1715675400;
	struct to_job j = {
		.job_id = 4711000001LL, .status = TO_ST_ACTIVATED,
		.status_since = now - 172801, .created_at = now - 200000,
		.current_priority = 500,
	};
	struct to_queue q = {.last_start = now - 60};
	struct to_verdict v;
	assert_int_equal(to_check(&j, &q, NULL, now, &v), 1);
	assert_string_equal(v.rule, "TO-05");
	struct cdp_timeout_event e = {
		.decision_id = 9100, .request_id = "jobs-36100002-1-1",
		.job_id = j.job_id, .task_id = 36100002,
		.queue = "BNL_PROD", .gshare = "MC Reco",
		.status = TO_ST_ACTIVATED, .v = &v, .new_status = "pending",
		.attempt = 2, .decided_at = now,
	};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_timeout(&e, &sb), GB_OK);
	check_keys(&sb, timeout_keys, NELEM(timeout_keys), "TO-05");
	check_json(&sb,
		   "{\"event\": \"job.timeout\", \"decisionId\": 9100,"
		   " \"requestId\": \"jobs-36100002-1-1\","
		   " \"jobID\": 4711000001, \"taskID\": 36100002,"
		   " \"queue\": \"BNL_PROD\", \"gshare\": \"MC Reco\","
		   " \"status\": \"activated\", \"rule\": \"TO-05\","
		   " \"what\": \"activated or starting for\","
		   " \"age\": 172801.0, \"limit\": 172800.0,"
		   " \"action\": \"reassign\", \"newStatus\": \"pending\","
		   " \"attempt\": 2, \"decidedAt\": \"2024-05-14T08:30:00Z\","
		   " \"reasons\": [\"TO-05: activated or starting for"
		   " 172801 s > 172800 s\"]}",
		   "TO-05");
	msgpack_sbuffer_destroy(&sb);

	/* TO-04: a throttled job has no queue; killed */
	j.status = TO_ST_THROTTLED;
	j.status_since = now - 7 * 86400 - 30;
	assert_int_equal(to_check(&j, NULL, NULL, now, &v), 1);
	assert_string_equal(v.rule, "TO-04");
	e.queue = NULL;
	e.request_id = NULL;
	e.status = TO_ST_THROTTLED;
	e.new_status = "cancelled";
	e.attempt = 0;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_timeout(&e, &sb), GB_OK);
	check_keys(&sb, timeout_keys, NELEM(timeout_keys), "TO-04");
	check_json(&sb,
		   "{\"event\": \"job.timeout\", \"decisionId\": 9100,"
		   " \"requestId\": null, \"jobID\": 4711000001,"
		   " \"taskID\": 36100002, \"queue\": null,"
		   " \"gshare\": \"MC Reco\", \"status\": \"throttled\","
		   " \"rule\": \"TO-04\", \"what\": \"throttled for\","
		   " \"age\": 604830.0, \"limit\": 604800.0,"
		   " \"action\": \"kill\", \"newStatus\": \"cancelled\","
		   " \"attempt\": 0, \"decidedAt\": \"2024-05-14T08:30:00Z\","
		   " \"reasons\": [\"TO-04: throttled for 604830 s >"
		   " 604800 s\"]}",
		   "TO-04");
	msgpack_sbuffer_destroy(&sb);

	for (int c = 0; c < 8; c++) {
		struct to_verdict v2 = v;
		struct cdp_timeout_event e2 = e;
		e2.v = &v2;
		switch (c) {
		case 0: e2.v = NULL; break;
		case 1: v2.rule = NULL; break;
		case 2: v2.action = TO_ACT_NONE; break;
		case 3: e2.status = TO_NSTATUS; break;
		case 4: e2.new_status = NULL; break;
		case 5: e2.gshare = NULL; break;
		case 6: v2.what = NULL; break;
		case 7: e2.decided_at = -5; break;
		}
		msgpack_sbuffer_init(&sb);
		if (cdp_encode_timeout(&e2, &sb) != GB_EINVAL)
			fail_msg("timeout case %d was encoded", c);
		msgpack_sbuffer_destroy(&sb);
	}
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_timeout(NULL, &sb), GB_EINVAL);
	assert_int_equal(cdp_encode_timeout(&e, NULL), GB_EINVAL);
	msgpack_sbuffer_destroy(&sb);
}

static const char *const rebro_keys[] = {
	"event",     "decisionId", "requestId", "jobID",	"taskID",
	"fromQueue", "gshare",	   "rule",	"attempt",	"jobRequestId",
	"decidedAt", "fastRebro",  "reasons",
};

static void test_event_rebrokered(void **state)
{
	(void)state;
	/* after a TO-05 reassignment: no TO-13 numbers */
	struct cdp_rebrokered_event e = {
		.decision_id = 9100, .request_id = NULL,
		.job_id = 4711000001LL, .task_id = 36100002,
		.from_queue = "BNL_PROD", .gshare = "MC Reco",
		.rule = "TO-05", .attempt = 2,
		.job_request_id = "jobs-36100002-1-1",
		.decided_at = 1715675400,
	};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_rebrokered(&e, &sb), GB_OK);
	check_keys(&sb, rebro_keys, NELEM(rebro_keys), "TO-05");
	check_json(&sb,
		   "{\"event\": \"job.rebrokered\", \"decisionId\": 9100,"
		   " \"requestId\": null, \"jobID\": 4711000001,"
		   " \"taskID\": 36100002, \"fromQueue\": \"BNL_PROD\","
		   " \"gshare\": \"MC Reco\", \"rule\": \"TO-05\","
		   " \"attempt\": 2, \"jobRequestId\": \"jobs-36100002-1-1\","
		   " \"decidedAt\": \"2024-05-14T08:30:00Z\","
		   " \"fastRebro\": null,"
		   " \"reasons\": [\"TO-05: job 4711000001 back to the"
		   " brokerage from BNL_PROD (attempt 2)\"]}",
		   "TO-05");
	msgpack_sbuffer_destroy(&sb);

	/* TO-13 with the numbers that triggered it; the job's request row
	** is gone (jobRequestId nil) */
	struct to_rebro_in in = {.nqueue = 500, .nrun = 100,
				 .nqueue_total = 1000, .has_nslots = 0};
	struct to_rebro_out out = {.triggered = 1, .excess = 300,
				   .ratio_limit = 200, .frac_limit = 150.5,
				   .nqueue_limit = 50};
	e.rule = "TO-13";
	e.request_id = "gb-scan-1";
	e.job_request_id = NULL;
	e.rebro_in = &in;
	e.rebro_out = &out;
	e.attempt = 1;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_rebrokered(&e, &sb), GB_OK);
	check_keys(&sb, rebro_keys, NELEM(rebro_keys), "TO-13");
	check_json(&sb,
		   "{\"event\": \"job.rebrokered\", \"decisionId\": 9100,"
		   " \"requestId\": \"gb-scan-1\", \"jobID\": 4711000001,"
		   " \"taskID\": 36100002, \"fromQueue\": \"BNL_PROD\","
		   " \"gshare\": \"MC Reco\", \"rule\": \"TO-13\","
		   " \"attempt\": 1, \"jobRequestId\": null,"
		   " \"decidedAt\": \"2024-05-14T08:30:00Z\","
		   " \"fastRebro\": {\"nQueue\": 500.0, \"nRun\": 100.0,"
		   "  \"nQueueTotal\": 1000.0, \"ratioLimit\": 200.0,"
		   "  \"fracLimit\": 150.5, \"nQueueLimit\": 50.0,"
		   "  \"excess\": 300},"
		   " \"reasons\": [\"TO-13: 500 queued at BNL_PROD > ratio"
		   " limit 200, fraction limit 150.5 and nQueue limit 50;"
		   " 300 excess jobs rebrokered\"]}",
		   "TO-13");
	msgpack_sbuffer_destroy(&sb);

	/* an unset limit is nil, not NaN (JSON has none) */
	out.nqueue_limit = NAN;
	e.from_queue = NULL;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_rebrokered(&e, &sb), GB_OK);
	json_t *j = cod_to_json(sb.data, sb.size);
	assert_non_null(j);
	assert_true(json_is_null(json_object_get(
		json_object_get(j, "fastRebro"), "nQueueLimit")));
	assert_true(json_is_null(json_object_get(j, "fromQueue")));
	json_decref(j);
	msgpack_sbuffer_destroy(&sb);

	for (int c = 0; c < 5; c++) {
		struct cdp_rebrokered_event e2 = e;
		switch (c) {
		case 0: e2.rebro_out = NULL; break;
		case 1: e2.rebro_in = NULL; break;
		case 2: e2.rule = NULL; break;
		case 3: e2.gshare = NULL; break;
		case 4: e2.decided_at = -1; break;
		}
		msgpack_sbuffer_init(&sb);
		if (cdp_encode_rebrokered(&e2, &sb) != GB_EINVAL)
			fail_msg("rebrokered case %d was encoded", c);
		msgpack_sbuffer_destroy(&sb);
	}
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdp_encode_rebrokered(NULL, &sb), GB_EINVAL);
	assert_int_equal(cdp_encode_rebrokered(&e, NULL), GB_EINVAL);
	msgpack_sbuffer_destroy(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_words),
		cmocka_unit_test(test_status_values),
		cmocka_unit_test(test_status_decode_cases),
		cmocka_unit_test(test_status_decode_bytes),
		cmocka_unit_test(test_status_round_trip),
		cmocka_unit_test(test_status_encode_rejects),
		cmocka_unit_test(test_status_system),
		cmocka_unit_test(test_event_throttled),
		cmocka_unit_test(test_event_timeout),
		cmocka_unit_test(test_event_rebrokered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
