/*
** test_codec_tq_events.c — what the DIRAC side sends back and hears about:
** the pilot.match reply, the pilot.matched / pilot.nomatch events (one per
** group commit, many pilots each) and job.status.
**
** Same method as test_codec_tq.c: decode cases patch one valid message
** (JSON packed to msgpack; "#hex:.." and "#x:N" markers for what JSON
** cannot say) and check the code AND the field path of every
** refusal. What the encoders write is read back with msgpack-c itself, not
** with the codec, so the wire shape (key names, key order, which keys are
** left out) is checked independently of the decoder.
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

#define ITEM_M1                                                            \
	"{\"requestID\": \"pm-8812-1715675400\", \"decision\": 90211,"      \
	" \"outcome\": \"matched\", \"code\": \"matched\","                 \
	" \"reason\": \"matched: 12 task queues, 3 at cpu_time 86400 in "   \
	"the lottery\","                                                    \
	" \"pilotID\": \"https://lbvobox.cern.ch:9000/pilots/8812\","       \
	" \"site\": \"LCG.CERN.cern\", \"jobID\": 1001, \"tqID\": 17,"      \
	" \"ownerDN\": \"/DC=ch/DC=cern/OU=Users/CN=alice\","               \
	" \"ownerGroup\": \"lhcb_user\", \"cpuTime\": 86400"
#define ITEM_N1                                                            \
	"{\"requestID\": \"pm-8813\", \"decision\": 90212,"                 \
	" \"outcome\": \"nomatch\", \"code\": \"no_tq_matched\","           \
	" \"reason\": \"no task queue matched: 500 considered; cpu_time "   \
	"excluded 120, site excluded 377, banned_site excluded 3\","        \
	" \"pilotID\": \"p-8813\", \"site\": \"LCG.RAL.uk\""

static const char *base_matched =
	ITEM_M1 ", \"counts\": {\"considered\": 500, \"matched\": 12,"
	" \"empty\": 2, \"rejected\": {\"cpu_time\": 120, \"site\": 365,"
	" \"banned_site\": 3}}}";

static const char *base_nomatch =
	ITEM_N1 ", \"counts\": {\"considered\": 500, \"matched\": 0,"
	" \"empty\": 0, \"rejected\": {\"cpu_time\": 120, \"site\": 377,"
	" \"banned_site\": 3}}}";

static const char *base_ev_matched =
	"{\"event\": \"pilot.matched\", \"count\": 3, \"items\": ["
	ITEM_M1 "},"
	" {\"requestID\": \"pm-9001\", \"decision\": 90213,"
	"  \"outcome\": \"matched\", \"code\": \"matched\","
	"  \"reason\": \"matched: 1 task queue, 1 at cpu_time 500 in the "
	"lottery\", \"pilotID\": \"p-9001\", \"site\": \"LCG.CNAF.it\","
	"  \"jobID\": 1003, \"tqID\": 18, \"ownerDN\": \"/DC=ch/CN=bob\","
	"  \"ownerGroup\": \"lhcb_mc\", \"cpuTime\": 500},"
	" {\"requestID\": \"pm-9002\", \"decision\": 90215,"
	"  \"outcome\": \"matched\", \"code\": \"matched\","
	"  \"reason\": \"matched: 1 task queue, 1 at cpu_time 500 in the "
	"lottery\", \"pilotID\": \"p-9002\", \"site\": \"LCG.CNAF.it\","
	"  \"jobID\": 1007, \"tqID\": 18, \"ownerDN\": \"/DC=ch/CN=bob\","
	"  \"ownerGroup\": \"lhcb_mc\", \"cpuTime\": 500}]}";

static const char *base_ev_nomatch =
	"{\"event\": \"pilot.nomatch\", \"count\": 2, \"items\": ["
	ITEM_N1 "},"
	" {\"requestID\": \"pm-9003\", \"decision\": 90214,"
	"  \"outcome\": \"nomatch\", \"code\": \"all_empty\","
	"  \"reason\": \"all 4 matching task queues are empty\","
	"  \"pilotID\": \"p-9003\", \"site\": \"LCG.CERN.cern\"}]}";

static const char *base_status =
	"{\"jobID\": 1001, \"status\": \"running\", \"time\": 1715675400,"
	" \"site\": \"LCG.CERN.cern\"}";

/* ---- JSON -> msgpack, with markers ------------------------------------- */

#include "jsonmsg.h"

/* ---- decoding any of them ------------------------------------------------ */

enum kind { K_REPLY, K_EVENT, K_STATUS };

static const char *const kind_names[] = {"reply", "event", "job.status"};

/* Decode `sb` as `k` with a fresh arena of `cap` bytes (the caller frees
** it); the cases look at the error only. */
static int decode_kind(enum kind k, const msgpack_sbuffer *sb, size_t cap,
		       struct arena *a, struct cod_error *err)
{
	arena_init(a, cap);
	struct cdt_match m;
	struct cdt_match *items;
	size_t n;
	struct cdt_status st;
	switch (k) {
	case K_REPLY:
		return cdt_decode_reply(sb->data, sb->size, a, &m, err);
	case K_EVENT:
		return cdt_decode_match_event(sb->data, sb->size, a, &items,
					      &n, err);
	case K_STATUS:
		return cdt_decode_status(sb->data, sb->size, a, &st, err);
	}
	return GB_EINVAL;
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

/* ---- the matches used for encoding --------------------------------------- */

/* ITEM_M1 with the counts of base_matched. */
static struct cdt_match match_m1(void)
{
	struct cdt_match m;
	memset(&m, 0, sizeof(m));
	m.decision_id = 90211;
	m.request_id = "pm-8812-1715675400";
	m.pilot_id = "https://lbvobox.cern.ch:9000/pilots/8812";
	m.site = "LCG.CERN.cern";
	m.matched = 1;
	m.job_id = 1001;
	m.tq_id = 17;
	m.owner = "/DC=ch/DC=cern/OU=Users/CN=alice";
	m.owner_group = "lhcb_user";
	m.tq_cpu_time = 86400;
	m.code = "matched";
	m.reason = "matched: 12 task queues, 3 at cpu_time 86400 in the "
		   "lottery";
	m.considered = 500;
	m.matched_tqs = 12;
	m.empty = 2;
	m.rejected[TQ_FL_CPU_TIME] = 120;
	m.rejected[TQ_FL_SITE] = 365;
	m.rejected[TQ_FL_BANNED_SITE] = 3;
	return m;
}

/* ITEM_N1 with the counts of base_nomatch. */
static struct cdt_match match_n1(void)
{
	struct cdt_match m;
	memset(&m, 0, sizeof(m));
	m.decision_id = 90212;
	m.request_id = "pm-8813";
	m.pilot_id = "p-8813";
	m.site = "LCG.RAL.uk";
	m.code = "no_tq_matched";
	m.reason = "no task queue matched: 500 considered; cpu_time excluded "
		   "120, site excluded 377, banned_site excluded 3";
	m.considered = 500;
	m.rejected[TQ_FL_CPU_TIME] = 120;
	m.rejected[TQ_FL_SITE] = 377;
	m.rejected[TQ_FL_BANNED_SITE] = 3;
	return m;
}

static void same_str(const char *got, const char *want, const char *what)
{
	if (want == NULL && got == NULL)
		return;
	if (want == NULL || got == NULL || strcmp(got, want) != 0)
		fail_msg("%s: '%s', want '%s'", what, got ? got : "(null)",
			 want ? want : "(null)");
}

/* decode(encode(in)) == in; `counts` 0 for event items (no counts). */
static void check_match(const struct cdt_match *got,
			const struct cdt_match *in, int counts)
{
	assert_int_equal(got->decision_id, in->decision_id);
	same_str(got->request_id, in->request_id, "requestID");
	same_str(got->pilot_id, in->pilot_id, "pilotID");
	same_str(got->site, in->site, "site");
	assert_int_equal(got->matched, in->matched);
	same_str(got->code, in->code, "code");
	same_str(got->reason, in->reason, "reason");
	/* a nomatch carries none of the job's fields */
	assert_int_equal(got->job_id, in->matched ? in->job_id : 0);
	assert_int_equal(got->tq_id, in->matched ? in->tq_id : 0);
	same_str(got->owner, in->matched ? in->owner : NULL, "ownerDN");
	same_str(got->owner_group, in->matched ? in->owner_group : NULL,
		 "ownerGroup");
	assert_int_equal(got->tq_cpu_time, in->matched ? in->tq_cpu_time : 0);
	assert_int_equal(got->considered, counts ? in->considered : 0);
	assert_int_equal(got->matched_tqs, counts ? in->matched_tqs : 0);
	assert_int_equal(got->empty, counts ? in->empty : 0);
	for (int f = 0; f < TQ_NFILTERS; f++)
		assert_int_equal(got->rejected[f], counts ? in->rejected[f] : 0);
}

/* ---- reading the wire with msgpack-c -------------------------------------- */

static int key_is(const msgpack_object *k, const char *s)
{
	return k->type == MSGPACK_OBJECT_STR &&
	       k->via.str.size == strlen(s) &&
	       memcmp(k->via.str.ptr, s, k->via.str.size) == 0;
}

/* The map `o` has exactly the keys keys[0..n), in that order. */
static void check_keys(const msgpack_object *o, const char *const *keys,
		       size_t n, const char *what)
{
	assert_int_equal(o->type, MSGPACK_OBJECT_MAP);
	if (o->via.map.size != n)
		fail_msg("%s: %u keys, want %zu", what, o->via.map.size, n);
	for (size_t i = 0; i < n; i++)
		if (!key_is(&o->via.map.ptr[i].key, keys[i]))
			fail_msg("%s: key %zu is not %s", what, i, keys[i]);
}

static const char *const item_keys[] = {
	"requestID", "decision", "outcome", "code",	  "reason", "pilotID",
	"site",	     "jobID",	 "tqID",    "ownerDN", "ownerGroup", "cpuTime"};

/* The reply's wire shape: keys in the documented order, the job's only
** when matched, counts last with rejected listing the filters with n > 0
** under tq_filter(f)->name, in filter order. */
static void test_reply_wire(void **state)
{
	(void)state;
	for (int v = 0; v < 3; v++) {
		struct cdt_match m = v == 1 ? match_n1() : match_m1();
		if (v == 2) { /* every filter counted: names are the engine's */
			m.considered = 500;
			for (int f = 0; f < TQ_NFILTERS; f++)
				m.rejected[f] = (size_t)f + 1;
		}
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cdt_encode_reply(&m, &sb), GB_OK);
		msgpack_unpacked up;
		msgpack_unpacked_init(&up);
		size_t off = 0;
		assert_int_equal(msgpack_unpack_next(&up, sb.data, sb.size,
						     &off),
				 MSGPACK_UNPACK_SUCCESS);
		assert_int_equal(off, sb.size);
		const msgpack_object *root = &up.data;
		size_t nitem = m.matched ? 12 : 7;
		assert_int_equal(root->via.map.size, nitem + 1);
		for (size_t i = 0; i < nitem; i++)
			assert_true(key_is(&root->via.map.ptr[i].key,
					   item_keys[i]));
		const msgpack_object_kv *cnt = &root->via.map.ptr[nitem];
		assert_true(key_is(&cnt->key, "counts"));
		static const char *const count_keys[] = {
			"considered", "matched", "empty", "rejected"};
		check_keys(&cnt->val, count_keys, 4, "counts");
		assert_int_equal(cnt->val.via.map.ptr[0].val.via.u64, 500);
		const msgpack_object *rej = &cnt->val.via.map.ptr[3].val;
		const char *names[TQ_NFILTERS];
		size_t n = 0;
		for (int f = 0; f < TQ_NFILTERS; f++)
			if (m.rejected[f])
				names[n++] = tq_filter(f)->name;
		check_keys(rej, names, n, "rejected");
		for (size_t i = 0, f = 0; i < n; i++, f++) {
			while (m.rejected[f] == 0)
				f++;
			assert_int_equal(rej->via.map.ptr[i].val.via.u64,
					 m.rejected[f]);
		}
		/* and outcome says what matched says */
		const msgpack_object *oc = &root->via.map.ptr[2].val;
		assert_true(key_is(oc, m.matched ? "matched" : "nomatch"));
		msgpack_unpacked_destroy(&up);
		msgpack_sbuffer_destroy(&sb);
	}
}

static void test_reply_round_trip(void **state)
{
	(void)state;
	for (int v = 0; v < 5; v++) {
		struct cdt_match in = v % 2 ? match_n1() : match_m1();
		if (v == 2) { /* a redelivered request: counts were not kept */
			in.considered = in.matched_tqs = in.empty = 0;
			memset(in.rejected, 0, sizeof(in.rejected));
		}
		if (v == 3) { /* job fields of a nomatch are not sent */
			in.job_id = 99;
			in.owner = "stale";
		}
		if (v == 4) {
			in.code = "claim_conflict";
			in.reason = "every job picked for this pilot was "
				    "claimed by another worker first";
			in.matched = 0;
		}
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cdt_encode_reply(&in, &sb), GB_OK);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct cdt_match out;
		struct cod_error err;
		int rc = cdt_decode_reply(sb.data, sb.size, &a, &out, &err);
		if (rc != GB_OK)
			fail_msg("variant %d: %s %s: %s", v, gb_errname(rc),
				 err.field, err.problem);
		msgpack_sbuffer_destroy(&sb); /* nothing may point into it */
		check_match(&out, &in, 1);
		arena_free(&a);
	}
	/* the documented examples decode to those structs */
	const char *docs[] = {base_matched, base_nomatch};
	for (int v = 0; v < 2; v++) {
		msgpack_sbuffer sb;
		make_msg(&sb, docs[v], NULL, NULL);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct cdt_match out;
		struct cod_error err;
		assert_int_equal(
			cdt_decode_reply(sb.data, sb.size, &a, &out, &err),
			GB_OK);
		struct cdt_match want = v ? match_n1() : match_m1();
		check_match(&out, &want, 1);
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* One event per group commit, with every pilot decided in it. */
static void test_event_round_trip(void **state)
{
	(void)state;
	struct cdt_match m[3] = {match_m1(), match_m1(), match_m1()};
	m[1].decision_id = 90213;
	m[1].request_id = "pm-9001";
	m[1].job_id = 1003;
	m[2].decision_id = 90215;
	m[2].request_id = "pm-9002";
	m[2].job_id = 1007;
	m[2].tq_cpu_time = 500;
	struct cdt_match n[2] = {match_n1(), match_n1()};
	n[1].decision_id = 90214;
	n[1].code = "all_empty";
	n[1].reason = "all 4 matching task queues are empty";
	n[1].job_id = 5; /* ignored: not sent for a nomatch */
	const struct {
		const char *event;
		const struct cdt_match *items;
		size_t n;
	} cases[] = {
		{"pilot.matched", m, 3},
		{"pilot.matched", m + 2, 1},
		{"pilot.nomatch", n, 2},
	};
	for (size_t c = 0; c < NELEM(cases); c++) {
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cdt_encode_match_event(cases[c].event,
							cases[c].items,
							cases[c].n, &sb),
				 GB_OK);
		/* wire: event, count, items; items without counts */
		msgpack_unpacked up;
		msgpack_unpacked_init(&up);
		size_t off = 0;
		assert_int_equal(msgpack_unpack_next(&up, sb.data, sb.size,
						     &off),
				 MSGPACK_UNPACK_SUCCESS);
		static const char *const ev_keys[] = {"event", "count",
						      "items"};
		check_keys(&up.data, ev_keys, 3, "event");
		const msgpack_object_kv *kv = up.data.via.map.ptr;
		assert_true(key_is(&kv[0].val, cases[c].event));
		assert_int_equal(kv[1].val.via.u64, cases[c].n);
		assert_int_equal(kv[2].val.via.array.size, cases[c].n);
		for (size_t i = 0; i < cases[c].n; i++)
			check_keys(&kv[2].val.via.array.ptr[i], item_keys,
				   cases[c].items[i].matched ? 12 : 7, "item");
		msgpack_unpacked_destroy(&up);

		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct cdt_match *out = NULL;
		size_t nout = 0;
		struct cod_error err;
		int rc = cdt_decode_match_event(sb.data, sb.size, &a, &out,
						&nout, &err);
		if (rc != GB_OK)
			fail_msg("case %zu: %s %s: %s", c, gb_errname(rc),
				 err.field, err.problem);
		msgpack_sbuffer_destroy(&sb);
		assert_int_equal(nout, cases[c].n);
		for (size_t i = 0; i < nout; i++)
			check_match(&out[i], &cases[c].items[i], 0);
		arena_free(&a);
	}
}

/* ---- one patch each ------------------------------------------------------ */

#define TS(got) "expected string, got " got
#define TI(got) "expected integer, got " got
#define R_NE "expected a non-empty string"
#define R_POS "expected a positive integer, got "
#define R_CNT "expected an integer in [0, 1000000000], got "
#define R_TIME "expected an integer in [0, 253402300799], got "
#define R_ST                                                               \
	"'; expected waiting, matched, running, stalled, completing, done, " \
	"failed, killed or deleted"
#define R_NEED "required with outcome matched"
#define R_ONLY "only with outcome matched"
/* accepted; refused naming the patched path; refused naming `field` */
#define OK(b, path, v) {b, path, v, GB_OK, "", ""}
#define E(b, path, v, rc, problem) {b, path, v, rc, NULL, problem}
#define F(b, path, v, rc, field, problem) {b, path, v, rc, field, problem}
enum base { RM, RN, EM, EN, ST };

static void test_decode_cases(void **state)
{
	(void)state;
	static const struct {
		enum base b;
		const char *path, *value; /* value NULL: delete the field */
		int rc;
		const char *field; /* NULL: the same as path */
		const char *problem;
	} cases[] = {
		/* reply: accepted */
		OK(RM, "future", "[1]"),
		OK(RM, "counts.rejected", "{}"),
		OK(RM, "counts.rejected.newFilter", "100"), /* unknown key */
		OK(RM, "counts.rejected.site", "null"),
		OK(RM, "counts.rejected.site", "0"),
		OK(RN, "jobID", "null"), /* nil = absent */
		OK(RN, "counts",
		   "{\"considered\": 0, \"matched\": 0, \"empty\": 0,"
		   " \"rejected\": {}}"),
		OK(RN, "code", "\"claim_conflict\""),
		/* reply: missing */
		E(RM, "requestID", NULL, GB_EMISSING, "missing"),
		E(RM, "decision", NULL, GB_EMISSING, "missing"),
		E(RM, "outcome", NULL, GB_EMISSING, "missing"),
		E(RN, "code", NULL, GB_EMISSING, "missing"),
		E(RN, "reason", NULL, GB_EMISSING, "missing"),
		E(RM, "pilotID", NULL, GB_EMISSING, "missing"),
		E(RN, "site", NULL, GB_EMISSING, "missing"),
		E(RM, "counts", NULL, GB_EMISSING, "missing"),
		E(RM, "counts.considered", NULL, GB_EMISSING, "missing"),
		E(RN, "counts.empty", NULL, GB_EMISSING, "missing"),
		E(RM, "counts.rejected", NULL, GB_EMISSING, "missing"),
		E(RM, "jobID", NULL, GB_EMISSING, R_NEED),
		E(RM, "tqID", "null", GB_EMISSING, R_NEED),
		E(RM, "ownerDN", NULL, GB_EMISSING, R_NEED),
		E(RM, "ownerGroup", NULL, GB_EMISSING, R_NEED),
		E(RM, "cpuTime", NULL, GB_EMISSING, R_NEED),
		/* reply: wrong types */
		E(RM, "requestID", "5", GB_ETYPE, TS("integer")),
		E(RM, "decision", "\"90211\"", GB_ETYPE, TI("string")),
		E(RM, "outcome", "true", GB_ETYPE, TS("boolean")),
		E(RM, "reason", "[]", GB_ETYPE, TS("array")),
		E(RM, "jobID", "1001.0", GB_ETYPE, TI("float")),
		E(RM, "counts", "[]", GB_ETYPE, "expected a map, got array"),
		E(RM, "counts.rejected", "[120]", GB_ETYPE,
		  "expected a map, got array"),
		E(RM, "counts.rejected.site", "1.5", GB_ETYPE, TI("float")),
		E(RM, "counts.matched", "\"12\"", GB_ETYPE, TI("string")),
		/* reply: out of range, inconsistent */
		E(RM, "decision", "0", GB_ERANGE, R_POS "0"),
		E(RM, "outcome", "\"Matched\"", GB_ERANGE,
		  "unknown value 'Matched'; expected matched or nomatch"),
		E(RM, "requestID", "\"\"", GB_ERANGE, R_NE),
		E(RN, "code", "\"\"", GB_ERANGE, R_NE),
		E(RN, "reason", "\"\"", GB_ERANGE, R_NE),
		E(RN, "reason", "\"#x:300\"", GB_ETOOBIG,
		  "string of 300 bytes exceeds the limit of 255"),
		E(RM, "pilotID", "\"#hex:c328\"", GB_ERANGE,
		  "string is not valid UTF-8"),
		E(RM, "tqID", "-17", GB_ERANGE, R_POS "-17"),
		E(RM, "cpuTime", "0", GB_ERANGE, R_POS "0"),
		E(RM, "code", "\"no_tq_matched\"", GB_ERANGE,
		  "expected \"matched\" with outcome matched"),
		E(RN, "code", "\"matched\"", GB_ERANGE,
		  "\"matched\" needs outcome matched"),
		E(RN, "jobID", "1001", GB_ERANGE, R_ONLY),
		E(RN, "tqID", "17", GB_ERANGE, R_ONLY),
		E(RN, "ownerDN", "\"/DC=ch/CN=x\"", GB_ERANGE, R_ONLY),
		E(RN, "ownerGroup", "\"g\"", GB_ERANGE, R_ONLY),
		E(RN, "cpuTime", "500", GB_ERANGE, R_ONLY),
		E(RM, "counts.considered", "-1", GB_ERANGE, R_CNT "-1"),
		E(RM, "counts.empty", "1000000001", GB_ERANGE,
		  R_CNT "1000000001"),
		E(RM, "counts.rejected.site", "-1", GB_ERANGE, R_CNT "-1"),
		E(RM, "counts.matched", "501", GB_ERANGE,
		  "501 matched of 500 considered"),
		E(RM, "counts.empty", "13", GB_ERANGE, "13 empty of 12 matched"),
		F(RM, "counts.rejected.site", "366", GB_ERANGE,
		  "counts.rejected",
		  "489 rejected and 12 matched exceed the 500 considered"),
		F(RN, "counts.rejected.owner_dn", "1", GB_ERANGE,
		  "counts.rejected",
		  "501 rejected and 0 matched exceed the 500 considered"),

		/* events */
		OK(EM, "items[0].counts", "{\"considered\": \"ignored\"}"),
		OK(EN, "items[1].jobID", "null"),
		E(EM, "event", NULL, GB_EMISSING, "missing"),
		E(EM, "count", NULL, GB_EMISSING, "missing"),
		E(EN, "items", NULL, GB_EMISSING, "missing"),
		E(EM, "items[1].decision", NULL, GB_EMISSING, "missing"),
		E(EM, "items[2].jobID", NULL, GB_EMISSING, R_NEED),
		E(EM, "event", "1", GB_ETYPE, TS("integer")),
		E(EM, "count", "\"3\"", GB_ETYPE, TI("string")),
		E(EM, "items", "{}", GB_ETYPE, "expected array, got map"),
		E(EM, "items[2]", "5", GB_ETYPE, "expected a map, got integer"),
		E(EN, "items[0].reason", "null", GB_ETYPE, TS("null")),
		E(EM, "event", "\"pilot.match\"", GB_ERANGE,
		  "unknown value 'pilot.match'; expected pilot.matched or "
		  "pilot.nomatch"),
		E(EM, "count", "0", GB_ERANGE,
		  "expected an integer in [1, 1000], got 0"),
		E(EM, "count", "2", GB_ERANGE, "2, but items has 3"),
		E(EN, "count", "3", GB_ERANGE, "3, but items has 2"),
		E(EM, "items", "[]", GB_ERANGE, "expected at least one item"),
		F(EM, "event", "\"pilot.nomatch\"", GB_ERANGE,
		  "items[0].outcome", "matched in a pilot.nomatch event"),
		F(EN, "items[1]", ITEM_M1 "}", GB_ERANGE, "items[1].outcome",
		  "matched in a pilot.nomatch event"),
		F(EM, "items[2]", ITEM_N1 ", \"decision\": 7}", GB_ERANGE,
		  "items[2].outcome", "nomatch in a pilot.matched event"),
		E(EN, "items[1].ownerGroup", "\"g\"", GB_ERANGE, R_ONLY),
		E(EM, "items[2].decision", "90211", GB_EDUP,
		  "duplicate decision (also items[0])"),
		E(EN, "items[1].decision", "90212", GB_EDUP,
		  "duplicate decision (also items[0])"),
		/* TQ-09: one job in two items is one job given to two pilots */
		E(EM, "items[1].jobID", "1001", GB_EDUP,
		  "duplicate jobID (also items[0])"),

		/* job.status */
		OK(ST, "site", NULL),
		OK(ST, "site", "null"),
		OK(ST, "time", "0"),
		OK(ST, "time", "253402300799"),
		OK(ST, "status", "\"killed\""),
		OK(ST, "minorStatus", "\"Application Finished\""),
		E(ST, "jobID", NULL, GB_EMISSING, "missing"),
		E(ST, "status", NULL, GB_EMISSING, "missing"),
		E(ST, "time", NULL, GB_EMISSING, "missing"),
		E(ST, "jobID", "0", GB_ERANGE, R_POS "0"),
		E(ST, "jobID", "\"1001\"", GB_ETYPE, TI("string")),
		E(ST, "status", "\"Running\"", GB_ERANGE,
		  "unknown value 'Running" R_ST),
		E(ST, "status", "\"lost\"", GB_ERANGE,
		  "unknown value 'lost" R_ST),
		E(ST, "status", "\"\"", GB_ERANGE, "unknown value '" R_ST),
		E(ST, "status", "2", GB_ETYPE, TS("integer")),
		E(ST, "status", "null", GB_ETYPE, TS("null")),
		E(ST, "time", "-1", GB_ERANGE, R_TIME "-1"),
		E(ST, "time", "253402300800", GB_ERANGE,
		  R_TIME "253402300800"),
		E(ST, "time", "1715675400.5", GB_ETYPE, TI("float")),
		E(ST, "site", "\"\"", GB_ERANGE, R_NE),
		E(ST, "site", "\"#hex:c0af\"", GB_ERANGE,
		  "string is not valid UTF-8"),
	};
	static const char *const *bases[] = {&base_matched, &base_nomatch,
					     &base_ev_matched,
					     &base_ev_nomatch, &base_status};
	static const enum kind kinds[] = {K_REPLY, K_REPLY, K_EVENT, K_EVENT,
					  K_STATUS};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, *bases[cases[i].b], cases[i].path,
			 cases[i].value);
		char what[160];
		snprintf(what, sizeof(what), "case %zu (%s = %.60s)", i,
			 cases[i].path,
			 cases[i].value ? cases[i].value : "(deleted)");
		const char *field =
			cases[i].field ? cases[i].field : cases[i].path;
		expect(kinds[cases[i].b], &sb, ARENA_CAP, cases[i].rc, field,
		       cases[i].problem, what);
		msgpack_sbuffer_destroy(&sb);
	}
}

/* ---- byte-level cases ---------------------------------------------------- */

static void pk_kstr(msgpack_packer *pk, const char *k, const char *v)
{
	msgpack_pack_str_with_body(pk, k, strlen(k));
	msgpack_pack_str_with_body(pk, v, strlen(v));
}

/* Items at and beyond CDT_MAX_ITEMS (count says 1000 in both, so the
** array limit is what refuses), and a key twice in an item. */
static void test_event_limits(void **state)
{
	(void)state;
	struct cdt_match *m = calloc(CDT_MAX_ITEMS + 1, sizeof(*m));
	assert_non_null(m);
	char (*req)[24] = calloc(CDT_MAX_ITEMS + 1, sizeof(*req));
	assert_non_null(req);
	for (size_t i = 0; i <= CDT_MAX_ITEMS; i++) {
		m[i] = match_n1();
		m[i].decision_id = (long long)i + 1;
		snprintf(req[i], sizeof(req[i]), "pm-%zu", i);
		m[i].request_id = req[i];
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdt_encode_match_event("pilot.nomatch", m,
						CDT_MAX_ITEMS + 1, &sb),
			 GB_EINVAL);
	assert_int_equal(cdt_encode_match_event("pilot.nomatch", m,
						CDT_MAX_ITEMS, &sb),
			 GB_OK);
	expect(K_EVENT, &sb, ARENA_CAP, GB_OK, "", "", "1000 items");
	/* the same items, one more, behind count 1000 */
	msgpack_sbuffer big;
	msgpack_sbuffer_init(&big);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &big, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 3);
	pk_kstr(&pk, "event", "pilot.nomatch");
	msgpack_pack_str_with_body(&pk, "count", 5);
	msgpack_pack_int(&pk, CDT_MAX_ITEMS);
	msgpack_pack_str_with_body(&pk, "items", 5);
	msgpack_pack_array(&pk, CDT_MAX_ITEMS + 1);
	for (size_t i = 0; i <= CDT_MAX_ITEMS; i++) {
		msgpack_pack_map(&pk, 7);
		pk_kstr(&pk, "requestID", m[i].request_id);
		msgpack_pack_str_with_body(&pk, "decision", 8);
		msgpack_pack_long_long(&pk, m[i].decision_id);
		pk_kstr(&pk, "outcome", "nomatch");
		pk_kstr(&pk, "code", m[i].code);
		pk_kstr(&pk, "reason", m[i].reason);
		pk_kstr(&pk, "pilotID", m[i].pilot_id);
		pk_kstr(&pk, "site", m[i].site);
	}
	expect(K_EVENT, &big, ARENA_CAP, GB_ETOOBIG, "items",
	       "array of 1001 exceeds the limit of 1000", "1001 items");
	msgpack_sbuffer_destroy(&big);
	msgpack_sbuffer_destroy(&sb);

	/* a key twice inside an item */
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 3);
	pk_kstr(&pk, "event", "pilot.nomatch");
	msgpack_pack_str_with_body(&pk, "count", 5);
	msgpack_pack_int(&pk, 1);
	msgpack_pack_str_with_body(&pk, "items", 5);
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 2);
	for (int k = 0; k < 2; k++)
		pk_kstr(&pk, "site", k ? "B" : "A");
	expect(K_EVENT, &sb, ARENA_CAP, GB_EDUP, "items[0].site",
	       "duplicate key", "key twice");
	msgpack_sbuffer_destroy(&sb);
	free(req);
	free(m);
}

/* Every proper prefix is malformed; one byte more is trailing data; a
** root that is not a map is named as such; NULL arguments. */
static void test_decode_malformed(void **state)
{
	(void)state;
	static const char *const *bases[] = {&base_matched, &base_ev_matched,
					     &base_status};
	for (int k = K_REPLY; k <= K_STATUS; k++) {
		msgpack_sbuffer sb;
		make_msg(&sb, *bases[k], NULL, NULL);
		for (size_t len = 0; len < sb.size; len++) {
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
		msgpack_sbuffer_write(&sb, "\x90", 1);
		expect(k, &sb, ARENA_CAP, GB_EDECODE, "",
		       "trailing data after the message (1 bytes)",
		       "trailing");
		msgpack_sbuffer_destroy(&sb);
		make_msg(&sb, "\"pilot.matched\"", NULL, NULL);
		expect(k, &sb, ARENA_CAP, GB_ETYPE, "",
		       "expected a map, got string", "string root");
		msgpack_sbuffer_destroy(&sb);
	}
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdt_match m, *items;
	size_t n;
	struct cdt_status st;
	struct cod_error err;
	assert_int_equal(cdt_decode_reply("\x80", 1, NULL, &m, &err),
			 GB_EINVAL);
	assert_int_equal(cdt_decode_match_event("\x80", 1, &a, NULL, &n, &err),
			 GB_EINVAL);
	assert_int_equal(
		cdt_decode_match_event("\x80", 1, &a, &items, NULL, &err),
		GB_EINVAL);
	assert_int_equal(cdt_decode_status("\x80", 1, &a, NULL, &err),
			 GB_EINVAL);
	/* `err` may be NULL */
	assert_int_equal(cdt_decode_status("\x80", 1, &a, &st, NULL),
			 GB_EMISSING);
	arena_free(&a);
}

/* ---- encoder refusals ---------------------------------------------------- */

static void test_reply_refusals(void **state)
{
	(void)state;
	static char long_str[300];
	memset(long_str, 'x', sizeof(long_str) - 1);
	for (int c = 0; c < 22; c++) {
		struct cdt_match m = c < 11 ? match_m1() : match_n1();
		switch (c) {
		case 0: m.decision_id = 0; break;
		case 1: m.request_id = NULL; break;
		case 2: m.matched = 2; break;
		case 3: m.code = "no_tq_matched"; break;
		case 4: m.reason = NULL; break; /* matched: says how */
		case 5: m.job_id = 0; break;
		case 6: m.tq_id = -1; break;
		case 7: m.owner = NULL; break;
		case 8: m.owner_group = ""; break;
		case 9: m.tq_cpu_time = 0; break;
		case 10: m.empty = 13; break; /* > matched */
		case 11: m.code = "matched"; break;
		case 12: m.code = NULL; break;
		case 13: m.reason = long_str; break;
		case 14: m.reason = ""; break;
		case 15: m.pilot_id = ""; break;
		case 16: m.site = NULL; break;
		case 17: m.request_id = "\xc3\x28"; break;
		case 18: m.matched_tqs = 501; break; /* > considered */
		case 19: m.rejected[TQ_FL_OWNER_DN] = 1; break; /* sum 501 */
		case 20: m.considered = (size_t)1000000001; break;
		default:
			m.considered = SIZE_MAX;
			m.rejected[TQ_FL_SITE] = SIZE_MAX - 500;
			break;
		}
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		if (cdt_encode_reply(&m, &sb) != GB_EINVAL)
			fail_msg("reply case %d was encoded", c);
		assert_int_equal(sb.size, 0);
		msgpack_sbuffer_destroy(&sb);
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdt_encode_reply(NULL, &sb), GB_EINVAL);
	struct cdt_match ok = match_m1();
	assert_int_equal(cdt_encode_reply(&ok, NULL), GB_EINVAL);
	msgpack_sbuffer_destroy(&sb);
}

static void test_event_refusals(void **state)
{
	(void)state;
	for (int c = 0; c < 10; c++) {
		struct cdt_match m[2] = {match_m1(), match_m1()};
		m[1].decision_id = 90213;
		m[1].job_id = 1003;
		const char *event = "pilot.matched";
		size_t n = 2;
		const struct cdt_match *items = m;
		switch (c) {
		case 0: event = NULL; break;
		case 1: event = "pilot.match"; break;
		case 2: event = "pilot.nomatch"; break; /* items matched */
		case 3: items = NULL; break;
		case 4: n = 0; break;
		case 5: n = CDT_MAX_ITEMS + 1; break;
		case 6: m[1] = match_n1(); break; /* mixed outcomes */
		case 7: m[1].decision_id = m[0].decision_id; break;
		case 8: m[1].job_id = m[0].job_id; break; /* TQ-09 */
		default: m[1].reason = NULL; break;
		}
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		if (cdt_encode_match_event(event, items, n, &sb) != GB_EINVAL)
			fail_msg("event case %d was encoded", c);
		assert_int_equal(sb.size, 0);
		msgpack_sbuffer_destroy(&sb);
	}
	/* nomatch items have no job: job_id 0 twice is not a duplicate */
	struct cdt_match n2[2] = {match_n1(), match_n1()};
	n2[1].decision_id = 7;
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdt_encode_match_event("pilot.nomatch", n2, 2, &sb),
			 GB_OK);
	msgpack_sbuffer_destroy(&sb);
}

/* ---- job.status ---------------------------------------------------------- */

static void test_status_round_trip(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	for (int s = 0; s < CDT_NSTATUS; s++) {
		struct cdt_status in = {
			.job_id = 1001 + s, .status = (enum cdt_job_status)s,
			.time = 1715675400 + s,
			.site = s % 2 ? "LCG.CERN.cern" : NULL,
		};
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cdt_encode_status(&in, &sb), GB_OK);
		struct cdt_status out;
		struct cod_error err;
		assert_int_equal(
			cdt_decode_status(sb.data, sb.size, &a, &out, &err),
			GB_OK);
		assert_int_equal(out.job_id, in.job_id);
		assert_int_equal(out.status, in.status);
		assert_int_equal(out.time, in.time);
		same_str(out.site, in.site, "site");
		msgpack_sbuffer_destroy(&sb);
	}
	arena_free(&a);
	static char long_str[300];
	memset(long_str, 'x', sizeof(long_str) - 1);
	for (int c = 0; c < 8; c++) {
		struct cdt_status st = {1, CDT_ST_DONE, 1715675400, "A"};
		switch (c) {
		case 0: st.job_id = 0; break;
		case 1: st.status = CDT_NSTATUS; break;
		case 2: st.status = (enum cdt_job_status)-1; break;
		case 3: st.time = -1; break;
		case 4: st.time = CDT_MAX_TIME + 1; break;
		case 5: st.site = ""; break;
		case 6: st.site = long_str; break;
		default: st.site = "\x80"; break;
		}
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		if (cdt_encode_status(&st, &sb) != GB_EINVAL)
			fail_msg("status case %d was encoded", c);
		msgpack_sbuffer_destroy(&sb);
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdt_encode_status(NULL, &sb), GB_EINVAL);
	msgpack_sbuffer_destroy(&sb);
}

/* Names, parsing and the lifecycle ranks that order status updates. */
static void test_status_words(void **state)
{
	(void)state;
	static const struct {
		enum cdt_job_status s;
		const char *name;
		int rank;
	} cases[] = {
		{CDT_ST_WAITING, "waiting", 0},
		{CDT_ST_MATCHED, "matched", 1},
		{CDT_ST_RUNNING, "running", 2},
		{CDT_ST_STALLED, "stalled", 2},
		{CDT_ST_COMPLETING, "completing", 3},
		{CDT_ST_DONE, "done", 4},
		{CDT_ST_FAILED, "failed", 4},
		{CDT_ST_KILLED, "killed", 4},
		{CDT_ST_DELETED, "deleted", 4},
	};
	assert_int_equal(NELEM(cases), CDT_NSTATUS);
	for (size_t i = 0; i < NELEM(cases); i++) {
		assert_string_equal(cdt_status_name(cases[i].s),
				    cases[i].name);
		assert_int_equal(cdt_status_parse(cases[i].name), cases[i].s);
		assert_int_equal(cdt_status_rank(cases[i].s), cases[i].rank);
	}
	static const char *const unknown[] = {"", "Waiting", "DONE", "done ",
					      "lost", "waitin"};
	for (size_t i = 0; i < NELEM(unknown); i++)
		assert_int_equal(cdt_status_parse(unknown[i]), -1);
	assert_int_equal(cdt_status_parse(NULL), -1);
	assert_null(cdt_status_name(CDT_NSTATUS));
	assert_null(cdt_status_name((enum cdt_job_status)-1));
	assert_int_equal(cdt_status_rank(CDT_NSTATUS), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_wire),
		cmocka_unit_test(test_reply_round_trip),
		cmocka_unit_test(test_event_round_trip),
		cmocka_unit_test(test_decode_cases),
		cmocka_unit_test(test_event_limits),
		cmocka_unit_test(test_decode_malformed),
		cmocka_unit_test(test_reply_refusals),
		cmocka_unit_test(test_event_refusals),
		cmocka_unit_test(test_status_round_trip),
		cmocka_unit_test(test_status_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
