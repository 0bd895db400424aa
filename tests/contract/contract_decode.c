/*
** contract_decode.c — run the worker's own decoders over message bodies
** given as JSON, for the AsyncAPI contract check (scripts/check-asyncapi).
**
** Why: schemas/asyncapi.yaml is only a contract if what it calls valid is
** what the workers accept. The checker writes each example of a decoded
** message (and each copy with one field made invalid) as JSON; this
** program packs each as msgpack exactly as a producer would (integers as
** integers, other numbers as float64, null as nil) and hands it to the
** decoder the worker's route uses, then prints one line per case:
**   ok
**   err <code> <field>\t<problem>
** Input: one JSON array of {"decoder": name, "payload": value} on stdin
** or in the file argv[1]. Decoders: task.broker, job.broker, job.submit,
** pilot.match, job.status.dirac and job.status.panda (the two forms of
** job.status, which the route tells apart by "system"), pilot.match.reply,
** pilot.matched, pilot.nomatch.
** Exit 0 when every case was run, 2 on bad input.
**
** With --encode it prints instead what the worker's own encoders write for
** the events and replies of a few fixed decisions (task.assigned,
** task.pending, jobs.assigned, jobs.pending, task.throttled,
** job.timeout, job.rebrokered with and without TO-13 numbers, the
** pilot.match reply matched and not, pilot.matched, pilot.nomatch), as one
** JSON array of {"message": component name, "payload": body as JSON}, so
** the checker can validate them against the document: what the workers
** publish must be what the document promises.
*/
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <msgpack.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "codec/codec_jobs.h"
#include "codec/codec_panda.h"
#include "codec/codec_tq.h"
#include "gb_error.h"
#include "timeout.h"

#define ARENA_CAP (64u << 20)

static int pack(msgpack_packer *pk, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *x;
		if (msgpack_pack_map(pk, json_object_size(v)))
			return -1;
		json_object_foreach((json_t *)v, k, x) {
			if (msgpack_pack_str_with_body(pk, k, strlen(k)) ||
			    pack(pk, x))
				return -1;
		}
		return 0;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *x;
		if (msgpack_pack_array(pk, json_array_size(v)))
			return -1;
		json_array_foreach(v, i, x) {
			if (pack(pk, x))
				return -1;
		}
		return 0;
	}
	case JSON_STRING:
		return msgpack_pack_str_with_body(pk, json_string_value(v),
						  json_string_length(v));
	case JSON_INTEGER:
		return msgpack_pack_int64(pk, json_integer_value(v));
	case JSON_REAL:
		return msgpack_pack_double(pk, json_real_value(v));
	case JSON_TRUE:
		return msgpack_pack_true(pk);
	case JSON_FALSE:
		return msgpack_pack_false(pk);
	case JSON_NULL:
		return msgpack_pack_nil(pk);
	}
	return -1;
}

/* Decode `buf` with the decoder `name` uses in the worker; 0 or its error,
** GB_EINVAL with err->problem set for an unknown name. */
static int decode(const char *name, const void *buf, size_t len,
		  struct arena *a, struct cod_error *err)
{
	if (strcmp(name, "task.broker") == 0) {
		struct tb_task t;
		return cod_decode_task(buf, len, a, &t, err);
	}
	if (strcmp(name, "job.broker") == 0) {
		struct gm_request r;
		struct cdj_extra x;
		return cdj_decode_request(buf, len, a, &r, &x, err);
	}
	if (strcmp(name, "job.submit") == 0) {
		struct cdt_submit s;
		return cdt_decode_submit(buf, len, a, &s, err);
	}
	if (strcmp(name, "pilot.match") == 0) {
		struct cdt_pilot p;
		return cdt_decode_pilot(buf, len, a, &p, err);
	}
	if (strcmp(name, "job.status.dirac") == 0) {
		struct cdt_status s;
		return cdt_decode_status(buf, len, a, &s, err);
	}
	if (strcmp(name, "job.status.panda") == 0) {
		struct cdp_status s;
		return cdp_decode_status(buf, len, a, &s, err);
	}
	if (strcmp(name, "pilot.match.reply") == 0) {
		struct cdt_match m;
		return cdt_decode_reply(buf, len, a, &m, err);
	}
	if (strcmp(name, "pilot.matched") == 0 ||
	    strcmp(name, "pilot.nomatch") == 0) {
		struct cdt_match *items;
		size_t n;
		return cdt_decode_match_event(buf, len, a, &items, &n, err);
	}
	snprintf(err->problem, sizeof(err->problem), "no decoder '%s'", name);
	return GB_EINVAL;
}

/* Append {"message": name, "payload": the body of `sb` as JSON}; 0 or -1
** when the encoder failed (rc) or the body is not one msgpack object. */
static int add_sample(json_t *out, const char *name, int rc,
		      msgpack_sbuffer *sb)
{
	json_t *body = rc == 0 ? cod_to_json(sb->data, sb->size) : NULL;
	msgpack_sbuffer_destroy(sb);
	msgpack_sbuffer_init(sb);
	if (!body) {
		fprintf(stderr, "contract_decode: encoding %s failed (%d)\n",
			name, rc);
		return -1;
	}
	json_array_append_new(out, json_pack("{s:s, s:o}", "message", name,
					     "payload", body));
	return 0;
}

static struct cdt_match sample_match(int matched)
{
	struct cdt_match m;
	memset(&m, 0, sizeof(m));
	m.decision_id = matched ? 90211 : 90212;
	m.request_id = matched ? "pm-8812" : "pm-8813";
	m.pilot_id = matched ? "p-8812" : "p-8813";
	m.site = "LCG.CERN.cern";
	m.considered = 500;
	m.rejected[TQ_FL_CPU_TIME] = 120;
	m.rejected[TQ_FL_SITE] = 365;
	if (matched) {
		m.matched = 1;
		m.job_id = 1001;
		m.tq_id = 17;
		m.owner = "/DC=ch/DC=cern/OU=Users/CN=alice";
		m.owner_group = "lhcb_user";
		m.tq_cpu_time = 86400;
		m.code = "matched";
		m.reason = "matched: 12 task queues";
		m.matched_tqs = 12;
		m.empty = 2;
	} else {
		m.code = "no_tq_matched";
		m.reason = "no task queue matched: 500 considered";
		m.rejected[TQ_FL_SITE] = 380;
	}
	return m;
}

/* task.assigned (FC-06: nucleus-only on a bare nucleus) and task.pending
** for three nuclei, one dropped by TB-01 and one by FC-02. */
static int task_samples(json_t *out, msgpack_sbuffer *sb, long long now)
{
	struct tb_nucleus nuclei[3] = {
		{.name = "LRZ-LMU", .status = "ACTIVE", .bare = TB_BARE_ONLY},
		{.name = "CERN-PROD", .status = "ACTIVE"},
		{.name = "TAIWAN-LCG2", .status = "OFFLINE"},
	};
	struct tb_task task = {.task_id = 36100005, .gshare = "MC Simul",
			       .priority = 450, .full_chain = TB_FC_ONLY};
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
		.event = "task.assigned", .decision_id = 77,
		.request_id = "req-1", .task = &task, .nuclei = nuclei,
		.dec = &d, .decided_at = now,
	};
	int bad = add_sample(out, "taskAssigned",
			     cod_encode_task_event(&ev, sb), sb);
	dec_reject(&cands[0], "locality", "TB-07", "input_size",
		   "local input %.1f%% <= %.0f%%", "", 4.7, 10, 0, 0);
	dec_stage(&d, "locality", "TB-07", 1, 0);
	d.outcome = DEC_PENDING;
	d.chosen = -1;
	d.retry_after_s = 1800;
	ev.event = "task.pending";
	ev.decision_id = 78;
	ev.retry_at = now + 1800;
	bad |= add_sample(out, "taskPending", cod_encode_task_event(&ev, sb),
			  sb);
	return bad;
}

/* jobs.assigned (five queues, two weighted, three dropped; BNL_PROD gets
** three jobs, AGLT2_UCORE one, one job left unassigned) and jobs.pending
** (every queue dropped). */
static int jobs_samples(json_t *out, msgpack_sbuffer *sb, long long now)
{
	static const char *const names[5] = {"AGLT2_UCORE", "BNL_PROD",
					     "CERN-P1_test", "MWT2_UCORE",
					     "TOKYO-LCG2_MCORE"};
	long jq[5] = {1, 0, 1, -1, 1};
	enum jb_job_status js[5] = {JB_JOB_ACTIVATED, JB_JOB_ASSIGNED,
				    JB_JOB_ACTIVATED, JB_JOB_UNASSIGNED,
				    JB_JOB_ACTIVATED};
	struct jb_queue queues[5];
	struct dec_candidate cands[5];
	struct gm_job jobs[5];
	struct dec_decision d;
	memset(queues, 0, sizeof(queues));
	dec_init(&d, cands, 5);
	for (size_t i = 0; i < 5; i++) {
		queues[i].name = cands[i].name = names[i];
		jobs[i] = (struct gm_job){4711000001LL + (long long)i, 100,
					  NULL, 0};
	}
	cands[0].weight = 0.125;
	cands[1].weight = 0.5;
	dec_reject(&cands[2], "candidates", "PJ-01", "test_queue",
		   "name %s contains 'test'", names[2], 0, 0, 0, 0);
	dec_reject(&cands[3], "memory", "PJ-15", "highmemory",
		   "memory %g MB > maxrss %g MB", NULL, 16200, 16000, 0, 0);
	dec_reject(&cands[4], "memory", "PJ-15", "highmemory",
		   "memory %g MB > maxrss %g MB", NULL, 16200, 2000, 0, 0);
	dec_stage(&d, "candidates", "PJ-01", 5, 4);
	dec_stage(&d, "memory", "PJ-15", 4, 2);
	dec_stage(&d, "distribution", "PJ-36", 2, 2);
	d.outcome = DEC_ASSIGNED;
	d.chosen = 1;
	struct gm_request req;
	memset(&req, 0, sizeof(req));
	req.t.task_id = 36100001;
	req.t.gshare = "MC Simul";
	req.t.nucleus = "BNL-ATLAS";
	req.jobs = jobs;
	req.njobs = 5;
	struct jb_plan plan;
	memset(&plan, 0, sizeof(plan));
	plan.best[0] = 1;
	plan.best[1] = 0;
	plan.nbest = 2;
	plan.job_queue = jq;
	plan.job_status = js;
	plan.nassigned = 4;
	struct cdj_event ev = {
		.event = "jobs.assigned", .decision_id = 1042,
		.request_id = "jobs-36100001-1-1", .req = &req,
		.queues = queues, .dec = &d, .plan = &plan,
		.decided_at = now, .retry_at = now + JB_PENDING_RETRY_S,
	};
	int bad = add_sample(out, "jobsAssigned", cdj_encode_event(&ev, sb),
			     sb);

	dec_init(&d, cands, 2);
	cands[0].name = names[0];
	cands[1].name = names[1];
	dec_reject(&cands[0], "status", "PJ-04", "status",
		   "status %s is not online", "offline", 0, 0, 0, 0);
	dec_reject(&cands[1], "memory", "PJ-15", "highmemory",
		   "memory %g MB > maxrss %g MB", NULL, 16200, 2000, 0, 0);
	dec_stage(&d, "status", "PJ-04", 2, 1);
	dec_stage(&d, "memory", "PJ-15", 1, 0);
	d.outcome = DEC_PENDING;
	d.retry_after_s = JB_PENDING_RETRY_S;
	for (size_t i = 0; i < 2; i++) {
		jq[i] = -1;
		js[i] = JB_JOB_UNASSIGNED;
	}
	req.njobs = 2;
	memset(&plan, 0, sizeof(plan));
	plan.job_queue = jq;
	plan.job_status = js;
	ev.event = "jobs.pending";
	ev.decision_id = 1043;
	ev.request_id = NULL;
	bad |= add_sample(out, "jobsPending", cdj_encode_event(&ev, sb), sb);
	return bad;
}

/* The --encode samples on stdout; 0, or 1 when an encoder failed. */
static int encode_samples(void)
{
	const long long now = 1715675400;
	json_t *out = json_array();
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int bad = task_samples(out, &sb, now);
	bad |= jobs_samples(out, &sb, now);

	struct an_user_load u = {
		.running_jobs = 120, .queued_jobs = 35, .running_cores = 960,
		.queued_cores = 280, .task_class = AN_CLASS_B,
		.share_usage = 40, .share_target = 100, .hi_site_slots = 64,
	};
	struct an_throttle th = {1, "AJ-02", "running_jobs", 120, 100};
	struct cdp_throttled_event te = {
		.decision_id = 9001, .request_id = "anal-36200001-1-1",
		.task_id = 36200001, .gshare = "User Analysis",
		.user = "alice", .task_class = AN_CLASS_B, .load = &u,
		.th = &th, .decided_at = now, .retry_at = now + 1200,
	};
	bad |= add_sample(out, "taskThrottled", cdp_encode_throttled(&te, &sb),
			  &sb);

	struct to_job j = {
		.job_id = 4711000001LL, .status = TO_ST_ACTIVATED,
		.status_since = now - 172801, .created_at = now - 200000,
		.current_priority = 500,
	};
	struct to_queue q = {.last_start = now - 60};
	struct to_verdict v;
	if (to_check(&j, &q, NULL, now, &v) != 1) {
		fprintf(stderr, "contract_decode: no timeout verdict\n");
		bad = 1;
	} else {
		struct cdp_timeout_event e = {
			.decision_id = 9100, .request_id = "gb-timeout-1",
			.job_id = j.job_id, .task_id = 36100002,
			.queue = "BNL_PROD", .gshare = "MC Reco",
			.status = TO_ST_ACTIVATED, .v = &v,
			.new_status = "pending", .attempt = 2,
			.decided_at = now,
		};
		bad |= add_sample(out, "jobTimeout",
				  cdp_encode_timeout(&e, &sb), &sb);
	}

	struct cdp_rebrokered_event re = {
		.decision_id = 9100, .job_id = 4711000001LL,
		.task_id = 36100002, .from_queue = "BNL_PROD",
		.gshare = "MC Reco", .rule = "TO-05", .attempt = 2,
		.job_request_id = "jobs-36100002-1-1", .decided_at = now,
	};
	bad |= add_sample(out, "jobRebrokered",
			  cdp_encode_rebrokered(&re, &sb), &sb);
	struct to_rebro_in in = {.nqueue = 500, .nrun = 100,
				 .nqueue_total = 1000};
	struct to_rebro_out ro = {.triggered = 1, .excess = 300,
				  .ratio_limit = 200, .frac_limit = 150.5,
				  .nqueue_limit = 50};
	re.rule = "TO-13";
	re.request_id = "gb-scan-1";
	re.job_request_id = NULL;
	re.rebro_in = &in;
	re.rebro_out = &ro;
	re.attempt = 1;
	bad |= add_sample(out, "jobRebrokered",
			  cdp_encode_rebrokered(&re, &sb), &sb);

	struct cdt_match m[2] = {sample_match(1), sample_match(0)};
	bad |= add_sample(out, "pilotMatchReply", cdt_encode_reply(&m[0], &sb),
			  &sb);
	bad |= add_sample(out, "pilotMatchReply", cdt_encode_reply(&m[1], &sb),
			  &sb);
	bad |= add_sample(out, "pilotMatched",
			  cdt_encode_match_event("pilot.matched", &m[0], 1,
						 &sb), &sb);
	bad |= add_sample(out, "pilotNomatch",
			  cdt_encode_match_event("pilot.nomatch", &m[1], 1,
						 &sb), &sb);
	msgpack_sbuffer_destroy(&sb);
	json_dumpf(out, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(out);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--encode") == 0)
		return encode_samples();
	json_error_t je;
	json_t *cases = argc > 1 ? json_load_file(argv[1], 0, &je)
				 : json_loadf(stdin, 0, &je);
	if (!cases || !json_is_array(cases)) {
		fprintf(stderr, "contract_decode: not a JSON array: %s\n",
			cases ? "" : je.text);
		return 2;
	}
	size_t i;
	json_t *c;
	json_array_foreach(cases, i, c) {
		const char *name = json_string_value(json_object_get(c, "decoder"));
		const json_t *payload = json_object_get(c, "payload");
		if (!name || !payload) {
			fprintf(stderr, "contract_decode: case %zu lacks decoder "
				"or payload\n", i);
			json_decref(cases);
			return 2;
		}
		msgpack_sbuffer sb;
		msgpack_packer pk;
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		struct cod_error err = {{0}, {0}};
		int rc = pack(&pk, payload);
		if (rc == 0) {
			struct arena a;
			arena_init(&a, ARENA_CAP);
			rc = decode(name, sb.data, sb.size, &a, &err);
			arena_free(&a);
		} else {
			snprintf(err.problem, sizeof(err.problem), "cannot pack");
		}
		msgpack_sbuffer_destroy(&sb);
		if (rc == 0)
			printf("ok\n");
		else
			printf("err %d %s\t%s\n", rc, err.field, err.problem);
	}
	json_decref(cases);
	return 0;
}
