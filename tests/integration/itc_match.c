/*
** itc_match.c — DIRAC matching end to end, under concurrency: jobs enter
** task queues through job.submit messages, three real gridbroker-worker
** processes match many concurrent pilots (RPCs with direct reply-to), one
** worker is SIGKILLed in the middle and started again. Then:
**   - no job was given to two pilots (TQ-09), by the replies and by
**     MariaDB;
**   - no job was lost: every job was matched, tq_jobs is empty, every
**     wms_jobs row is 'matched' by exactly one recorded decision;
**   - no job went to a banned site or a site it does not accept (TQ-06);
**   - every pilot got an answer; a pilot answered twice (the killed
**     worker's redelivered requests) got the same answer both times;
**   - pilots that came after the jobs ran out were told why (TQ-10).
**
** Run through run-itc.sh (GB_CONFIG); the worker binary is taken from the
** directory of this program (the build directory).
*/
#include "itc_raw.h"

#include <libgen.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/pilotdrv.h"
#include "amqp/amqp.h"
#include "codec/codec_tq.h"
#include "priority.h"
#include "store/store_tq.h"

#define NSITES 8
#define NTQ 16          /* requirement sets */
#define JOBS_PER_TQ 150 /* 2,400 jobs */
#define NJOBS (NTQ * JOBS_PER_TQ)
#define NPILOTS 3200    /* more pilots than jobs: the rest get TQ-10 */
#define NWORKERS 3

static const char *sites[NSITES] = {
	"LCG.CERN.cern", "LCG.CNAF.it",	 "LCG.RAL.uk",	"LCG.GRIDKA.de",
	"LCG.IN2P3.fr",	 "LCG.PIC.es",	 "LCG.NIKHEF.nl", "LCG.SARA.nl",
};

static char worker_path[4096];
static pid_t workers[NWORKERS];
static long long id_base;

static void cleanup(void)
{
	char out[64];
	const char *tables[] = {"pilot_matches", "tq_jobs", "tq_requirements",
				"task_queues",	 "wms_jobs", "wms_history"};
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		char sql[128];
		snprintf(sql, sizeof(sql), "DELETE FROM %s", tables[i]);
		raw_q(out, sizeof(out), sql, "");
	}
	raw_q(out, sizeof(out), "DELETE FROM outbox WHERE routing_key LIKE 'pilot.%'", "");
	/* A worker killed by an earlier run may still hold the leader lease
	** (a stopped worker gives it up; a killed one cannot). */
	raw_q(out, sizeof(out), "UPDATE tq_state SET lease_until = 0 WHERE id = 1", "");
}

static pid_t start_worker(int i)
{
	char inst[16], logf[256];
	snprintf(inst, sizeof(inst), "m%d", i);
	snprintf(logf, sizeof(logf), "%s/../run/itc_match_worker%d.log",
		 GB_SCHEMA_DIR, i);
	pid_t pid = fork();
	if (pid == 0) {
		FILE *f = freopen(logf, "a", stderr);
		(void)f;
		execl(worker_path, "gridbroker-worker", "-c",
		      getenv("GB_CONFIG"), "--instance", inst, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Stop every worker with SIGTERM; returns how many did not exit with
** status 0 (a sanitized worker that finds a leak at its exit ends with
** status 1; run-itc.sh also prints the report). A worker restarted a
** moment ago may not have installed its SIGTERM handler yet and die of
** the signal itself: that is no failure (it ran no exit path to judge). */
static int stop_workers(void)
{
	int bad = 0;
	for (int i = 0; i < NWORKERS; i++)
		if (workers[i] > 0) {
			int st = 0;
			kill(workers[i], SIGTERM);
			if (waitpid(workers[i], &st, 0) == workers[i] &&
			    !(WIFEXITED(st) && WEXITSTATUS(st) == 0) &&
			    !(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM)) {
				fprintf(stderr, "worker m%d: status 0x%x after "
					"SIGTERM\n", i, (unsigned)st);
				bad++;
			}
			workers[i] = 0;
		}
	return bad;
}

/* Requirement set k: sites, banned sites, platform. */
static void tq_shape(int k, const char **site_v, size_t *nsites,
		     const char **ban_v, size_t *nban, const char **plat)
{
	*nsites = 0;
	*nban = 0;
	if (k % 4 != 0) /* every fourth set accepts any site */
		for (int s = 0; s < 3; s++)
			site_v[(*nsites)++] = sites[(k + s) % NSITES];
	if (k % 3 == 0) /* some ban a site they would otherwise accept */
		ban_v[(*nban)++] = sites[(k + 1) % NSITES];
	*plat = k % 2 ? "x86_64-el9" : NULL;
}

static int site_ok(int k, const char *site)
{
	const char *sv[4], *bv[2], *plat;
	size_t ns, nb;
	tq_shape(k, sv, &ns, bv, &nb, &plat);
	for (size_t i = 0; i < nb; i++)
		if (strcmp(bv[i], site) == 0)
			return 0;
	if (ns == 0)
		return 1;
	for (size_t i = 0; i < ns; i++)
		if (strcmp(sv[i], site) == 0)
			return 1;
	return 0;
}

static void submit_jobs(void)
{
	char err[512];
	struct amq_sync *s = amq_sync_open(&cfg, err, sizeof(err));
	if (s == NULL)
		fail_msg("amqp: %s", err);
	static struct cdt_job jobs[JOBS_PER_TQ];
	for (int k = 0; k < NTQ; k++) {
		static const char *sv[4], *bv[2];
		const char *plat;
		size_t ns, nb;
		tq_shape(k, sv, &ns, bv, &nb, &plat);
		static const char *pv[1];
		pv[0] = plat;
		for (int j = 0; j < JOBS_PER_TQ; j++) {
			struct cdt_job *jb = &jobs[j];
			memset(jb, 0, sizeof(*jb));
			jb->job_id = id_base + k * 1000 + j;
			jb->owner = k % 5 == 0 ? "/DC=ch/CN=alice" : "/DC=ch/CN=lbprods";
			jb->owner_group = k % 5 == 0 ? "lhcb_user" : "lhcb_mc";
			jb->setup = "LHCb-Production";
			/* segments 5000, 50000, 300000: every set distinct */
			static const long long cpu[3] = {3600, 36000, 200000};
			jb->cpu_time = cpu[k % 3];
			jb->user_priority = 1 + j % 3;
			jb->set[TQ_F_SITES] = (struct tq_strset){sv, ns};
			jb->set[TQ_F_BANNED_SITES] = (struct tq_strset){bv, nb};
			jb->set[TQ_F_PLATFORMS] =
				(struct tq_strset){pv, plat ? 1 : 0};
			tq_strset_normalise(sv, &jb->set[TQ_F_SITES].n);
		}
		struct cdt_submit sub = {jobs, JOBS_PER_TQ};
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cdt_encode_submit(&sub, &sb), GB_OK);
		char msgid[96];
		snprintf(msgid, sizeof(msgid), "itc-match-submit-%lld-%d",
			 id_base, k);
		struct amq_props props = {.message_id = msgid,
					  .content_type = "application/msgpack",
					  .persistent = 1};
		assert_int_equal(amq_sync_publish(s, AMQ_EX_REQUESTS,
						  "job.submit", &props, sb.data,
						  sb.size, 10000),
				 GB_OK);
		msgpack_sbuffer_destroy(&sb);
	}
	amq_sync_close(s);
}

static long count(const char *sql)
{
	char out[64] = "";
	raw_q(out, sizeof(out), sql, "");
	return atol(out);
}

static void test_concurrent_pilots_TQ09_PR08(void **state)
{
	(void)state;
	cleanup();
	id_base = ((long long)time(NULL) % 100000) * 100000;
	for (int i = 0; i < NWORKERS; i++)
		workers[i] = start_worker(i);
	submit_jobs();
	/* The workers put the jobs into task queues. */
	double t0 = pd_now_ms();
	while (count("SELECT COUNT(*) FROM tq_jobs") < NJOBS) {
		if (pd_now_ms() - t0 > 60000)
			fail_msg("only %ld of %d jobs reached the task queues",
				 count("SELECT COUNT(*) FROM tq_jobs"), NJOBS);
		usleep(100000);
	}
	assert_int_equal(count("SELECT COUNT(*) FROM task_queues"), NTQ);

	/* PR-08: new task queues make the leader recompute at once. With
	** equal UserPriority sums per TQ: lhcb_mc (JOB_SHARING, share 300)
	** has 12 TQs -> 300 / 12 = 25 each (PR-01); lhcb_user (share 10000,
	** one owner, 4 TQs) -> 10000 / (4 x 1) = 2500 each (PR-02). */
	t0 = pd_now_ms();
	while (count("SELECT COUNT(*) FROM task_queues WHERE priority > 0") <
	       NTQ) {
		if (pd_now_ms() - t0 > 30000)
			fail_msg("PR-08: priorities not recomputed");
		usleep(100000);
	}
	assert_int_equal(count("SELECT COUNT(*) FROM task_queues WHERE "
			       "owner_group = 'lhcb_mc' AND ABS(priority - "
			       "25) < 1e-6"),
			 12);
	assert_int_equal(count("SELECT COUNT(*) FROM task_queues WHERE "
			       "owner_group = 'lhcb_user' AND ABS(priority - "
			       "2500) < 1e-6"),
			 4);

	/* Pilots from every site, half with el9, 4 days of CPU: every TQ is
	** reachable by some pilot. */
	static struct cdt_pilot pilots[NPILOTS];
	static char pid_buf[NPILOTS][32];
	static const char *site_of[NPILOTS], *plat_of[NPILOTS];
	for (int i = 0; i < NPILOTS; i++) {
		snprintf(pid_buf[i], sizeof(pid_buf[i]), "pilot-%d", i);
		site_of[i] = sites[i % NSITES];
		plat_of[i] = (i / NSITES) % 2 ? "x86_64-el9" : NULL;
		pd_pilot_one(&pilots[i], pid_buf[i], "LHCb-Production",
			     4 * 86400, &site_of[i], &plat_of[i]);
	}
	/* Kill one worker while the pilots are being matched, then bring
	** it back: its unacknowledged requests are redelivered. */
	pid_t killer = fork();
	if (killer == 0) {
		/* Early: the whole run takes about a second here. */
		usleep(150000);
		kill(workers[0], SIGKILL);
		_exit(0);
	}
	static struct pd_result res[NPILOTS];
	char err[256] = "";
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "itc-match-%lld", id_base);
	int unanswered = pd_run(&cfg, prefix, pilots, NPILOTS, 300, 30000,
				res, err, sizeof(err));
	waitpid(killer, NULL, 0);
	waitpid(workers[0], NULL, WNOHANG);
	workers[0] = start_worker(0);
	assert_int_equal(unanswered, 0);

	/* Replies: each job at most once, to an acceptable site. */
	static unsigned char seen[NTQ][JOBS_PER_TQ];
	memset(seen, 0, sizeof(seen));
	int matched = 0, twice = 0, nomatch_why = 0;
	for (int i = 0; i < NPILOTS; i++) {
		assert_int_equal(res[i].dup_disagrees, 0);
		twice += res[i].replies > 1;
		if (!res[i].matched) {
			nomatch_why += strcmp(res[i].code, "no_tq_matched") == 0 ||
				       strcmp(res[i].code, "all_empty") == 0 ||
				       strcmp(res[i].code, "claim_conflict") == 0;
			continue;
		}
		long long off = res[i].job_id - id_base;
		int k = (int)(off / 1000), j = (int)(off % 1000);
		assert_true(k >= 0 && k < NTQ && j >= 0 && j < JOBS_PER_TQ);
		if (seen[k][j])
			fail_msg("job %lld given to two pilots", res[i].job_id);
		seen[k][j] = 1;
		if (!site_ok(k, pilots[i].site))
			fail_msg("job %lld (set %d) went to %s", res[i].job_id,
				 k, pilots[i].site);
		matched++;
	}
	printf("# %d pilots: %d matched, %d told why not, %d answered twice "
	       "(redelivered after the kill); p50 %.1f ms p99 %.1f ms\n",
	       NPILOTS, matched, NPILOTS - matched, twice,
	       pd_percentile(res, NPILOTS, 50), pd_percentile(res, NPILOTS, 99));
	assert_int_equal(matched + nomatch_why, NPILOTS);

	/* Nothing lost: the pilots that got nothing asked after the jobs
	** they could take were gone, or lost claims; ask again until every
	** job is placed. */
	for (int round = 0; matched < NJOBS && round < 5; round++) {
		snprintf(prefix, sizeof(prefix), "itc-match-%lld-r%d", id_base,
			 round);
		unanswered = pd_run(&cfg, prefix, pilots, NPILOTS, 300, 30000,
				    res, err, sizeof(err));
		assert_int_equal(unanswered, 0);
		for (int i = 0; i < NPILOTS; i++) {
			if (!res[i].matched)
				continue;
			long long off = res[i].job_id - id_base;
			int k = (int)(off / 1000), j = (int)(off % 1000);
			if (seen[k][j])
				fail_msg("job %lld given twice", res[i].job_id);
			seen[k][j] = 1;
			assert_true(site_ok(k, pilots[i].site));
			matched++;
		}
	}
	assert_int_equal(matched, NJOBS);

	/* MariaDB agrees. */
	assert_int_equal(count("SELECT COUNT(*) FROM tq_jobs"), 0);
	assert_int_equal(count("SELECT COUNT(*) FROM wms_jobs WHERE status = "
			       "'matched'"),
			 NJOBS);
	assert_int_equal(count("SELECT COUNT(DISTINCT job_id) FROM "
			       "pilot_matches WHERE job_id IS NOT NULL"),
			 NJOBS);
	assert_int_equal(count("SELECT COUNT(*) FROM pilot_matches WHERE "
			       "job_id IS NOT NULL"),
			 NJOBS);
	assert_int_equal(count("SELECT COUNT(*) FROM wms_jobs w JOIN "
			       "pilot_matches m ON m.job_id = w.job_id WHERE "
			       "m.site <> w.site"),
			 0);
	assert_int_equal(stop_workers(), 0);
}

/*
** PR-04..PR-06 end to end: job.status messages make jobs of lhcb_mc run,
** the leader samples the running jobs into the history, and the next
** recomputation corrects the group shares from it. Both groups have share
** 1000 (expected share 1/2 each). The only slice (1 h, weight 1,
** MaxCorrection 5) sees lhcb_mc with all the running jobs (actual share 1):
** 0.5 / 1 = 0.5; lhcb_data ran nothing: MaxCorrection 5, weighted 1, then
** clamped to MaxGlobalCorrectionFactor 3. One TQ per group, so J = 1:
** priorities 1000 x 0.5 = 500 and 1000 x 3 = 3000.
*/
static void test_status_history_corrections_PR04(void **state)
{
	(void)state;
	cleanup();
	static const struct pr_group groups[] = {
		{"lhcb_data", 1000, 1},
		{"lhcb_mc", 1000, 1},
	};
	struct pr_instance inst = {
		.name = "GroupsInstance", .group = NULL, .max_global = 3,
		.nslices = 1,
		.slices = {{"HourSlice", 3600, 1, 5}},
	};
	struct pr_config pc = {.corrections = 1,
			       .default_share = PR_DEFAULT_SHARE,
			       .groups = groups, .ngroups = 2,
			       .inst = &inst, .ninst = 1};
	assert_int_equal(st_tq_config_save(db, &pc, tq_default_segments, 4, 0),
			 GB_OK);

	/* A configuration that samples and recomputes every second. */
	char conf[4200];
	snprintf(conf, sizeof(conf), "%s/../run/itc_match_fast.conf",
		 GB_SCHEMA_DIR);
	FILE *in = fopen(getenv("GB_CONFIG"), "r"), *out = fopen(conf, "w");
	assert_non_null(in);
	assert_non_null(out);
	char line[1024];
	while (fgets(line, sizeof(line), in))
		fputs(line, out);
	fputs("\n[dirac]\nhistory_interval = 1\npriority_interval = 1\n", out);
	fclose(in);
	fclose(out);

	/* 20 jobs per group, each group at its own site. */
	id_base = ((long long)time(NULL) % 100000) * 100000 + 50000;
	static struct cdt_job jobs[40];
	static const char *site_a[] = {"LCG.A.org"}, *site_b[] = {"LCG.B.org"};
	for (int i = 0; i < 40; i++) {
		int mc = i < 20;
		jobs[i] = (struct cdt_job){
			.job_id = id_base + i,
			.owner = "/DC=ch/CN=lbprods",
			.owner_group = mc ? "lhcb_mc" : "lhcb_data",
			.setup = "LHCb-Production",
			.cpu_time = 3600,
			.user_priority = 1,
		};
		jobs[i].set[TQ_F_SITES] =
			(struct tq_strset){mc ? site_a : site_b, 1};
	}
	struct arena a;
	arena_init(&a, 1u << 20);
	struct st_tq_submitted sub;
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_submit(db, jobs, 40, tq_default_segments, 4,
				      "itc-history-submit", time(NULL), &a,
				      &sub),
			 GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	arena_free(&a);

	pid_t pid = fork();
	if (pid == 0) {
		FILE *f = freopen(GB_SCHEMA_DIR "/../run/itc_match_history.log",
				  "a", stderr);
		(void)f;
		execl(worker_path, "gridbroker-worker", "-c", conf,
		      "--instance", "hist", (char *)NULL);
		_exit(127);
	}
	workers[0] = pid;

	/* Ten pilots at site A take ten lhcb_mc jobs. */
	static struct cdt_pilot pilots[10];
	static struct pd_result res[10];
	static const char *hist_site = "LCG.A.org";
	for (int i = 0; i < 10; i++)
		pd_pilot_one(&pilots[i], "hist-pilot", "LHCb-Production", 86400,
			     &hist_site, NULL);
	char err[256] = "", prefix[64];
	snprintf(prefix, sizeof(prefix), "itc-history-%lld", id_base);
	assert_int_equal(pd_run(&cfg, prefix, pilots, 10, 10, 30000, res, err,
				sizeof(err)),
			 0);
	/* Their jobs start running (job.status), and one late "matched"
	** update must not move a job back. */
	struct amq_sync *s = amq_sync_open(&cfg, err, sizeof(err));
	assert_non_null(s);
	for (int i = 0; i < 11; i++) {
		assert_true(res[i % 10].matched);
		struct cdt_status st = {
			.job_id = res[i % 10].job_id,
			.status = i < 10 ? CDT_ST_RUNNING : CDT_ST_MATCHED,
			.time = time(NULL),
			.site = "LCG.A.org",
		};
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cdt_encode_status(&st, &sb), GB_OK);
		char msgid[96];
		snprintf(msgid, sizeof(msgid), "itc-history-status-%lld-%d",
			 id_base, i);
		struct amq_props props = {.message_id = msgid,
					  .content_type = "application/msgpack",
					  .persistent = 1};
		assert_int_equal(amq_sync_publish(s, AMQ_EX_REQUESTS,
						  "job.status", &props, sb.data,
						  sb.size, 10000),
				 GB_OK);
		msgpack_sbuffer_destroy(&sb);
	}
	amq_sync_close(s);

	double t0 = pd_now_ms();
	while (count("SELECT COUNT(*) FROM task_queues WHERE "
		     "(owner_group = 'lhcb_mc' AND ABS(priority - 500) < 1e-6) "
		     "OR (owner_group = 'lhcb_data' AND ABS(priority - 3000) < "
		     "1e-6)") < 2) {
		if (pd_now_ms() - t0 > 30000)
			fail_msg("PR-04..06: priorities not corrected "
				 "(history rows: %ld)",
				 count("SELECT COUNT(*) FROM wms_history"));
		usleep(200000);
	}
	assert_int_equal(count("SELECT COUNT(*) FROM wms_jobs WHERE status = "
			       "'running'"),
			 10);
	assert_true(count("SELECT COUNT(*) FROM wms_history WHERE owner_group "
			  "= 'lhcb_mc' AND running = 10") >= 1);
	assert_int_equal(count("SELECT COUNT(*) FROM wms_history WHERE "
			       "owner_group = 'lhcb_data'"),
			 0);
	assert_int_equal(stop_workers(), 0);
}

static int group_setup(void **state)
{
	(void)state;
	if (itc_open("itc_match") != 0)
		return -1;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(worker_path, sizeof(worker_path), "%s/gridbroker-worker",
		 dirname(self));
	if (access(worker_path, X_OK) != 0) {
		fprintf(stderr, "itc_match: no worker at %s\n", worker_path);
		return -1;
	}
	/* Groups: lhcb_mc shares its jobs (JOB_SHARING), lhcb_user not. */
	static const struct pr_group groups[] = {
		{"lhcb_mc", 300, 1},
		{"lhcb_user", 10000, 0},
	};
	struct pr_config pc = {.corrections = 0,
			       .default_share = PR_DEFAULT_SHARE,
			       .groups = groups,
			       .ngroups = 2};
	if (st_tq_config_save(db, &pc, tq_default_segments, 4, 0) != GB_OK) {
		fprintf(stderr, "itc_match: config: %s\n", st_error(db));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	int bad = stop_workers(); /* none left by a passing test */
	itc_close(cleanup);
	return bad ? -1 : 0;
}

/* A test that failed half-way leaves its workers running: stop them, or
** the next test (and test program) would share the queues with them. */
static int match_teardown(void **state)
{
	stop_workers();
	return test_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_concurrent_pilots_TQ09_PR08,
					  match_teardown),
		cmocka_unit_test_teardown(test_status_history_corrections_PR04,
					  match_teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
