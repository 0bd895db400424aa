/*
** bench_match.c — DIRAC matching at a million waiting jobs, end to end,
** against two bounds measured in the same run.
**
**   1. load 1,000,000 waiting jobs in 500 task queues (33 sites and 17
**      platforms per TQ, like LHCb's production TaskQueueDB) through
**      st_tq_submit, and time it;
**   2. baseline: the per-pilot SQL query chain of the seed page
**      (dirac-task-queue-matching): the TQ query ordered by CPU time then
**      RAND()/priority, the UserPriority lottery by ORDER BY
**      RAND()/UserPriority, the ten lowest job ids at that priority, one
**      picked at random, claimed by DELETE; once on one connection and
**      once on as many connections in parallel (one process each) as the
**      service has workers, so the ratio compares like with like;
**   3. the bare RPC ceiling: two echo processes (as many as workers) on
**      a queue declared like gridbroker.pilot.match (same type, same
**      prefetch) answer every request with a canned reply; the same
**      pilot driver at the same windows gives echo RPC/s and p50/p99;
**   4. two gridbroker-worker processes, pilots driven through RabbitMQ
**      (pilot.match RPCs, direct reply-to, a window of requests in flight):
**      matches per second and p50/p99 latency, the share of the echo
**      ceiling and the ratio to (2);
**   5. the same number of pilots described as DIRAC sends them (lists of
**      sites and platforms, job types, tags or ANY, a banned site, some
**      private to two groups): the second configuration.
** With --scale it instead runs (1), (4) and the workers' resident memory
** at 10 k, 100 k and 1 M waiting jobs (or the sizes given) and prints a
** table. With --submit it times, in this process, decoding the
** job.submit messages and the canonical signatures (the two per-job CPU
** costs of the worker's submit path), then loads the jobs three ways and
** times each: in this process through st_tq_submit; as job.submit messages through two
** sinks that only consume and ack (the bare publish -> consume ceiling);
** as job.submit messages consumed by two workers, until every job is in
** tq_jobs.
** Nothing is asserted: the figures and the ratios are printed (timings on
** a shared 2-core machine are noisy; a timed assertion would only flake).
**
** Usage: bench_match [PILOTS [JOBS]]   (defaults 50000, 1000000)
**        bench_match --scale [JOBS...] (default 10000 100000 1000000)
**        bench_match --submit [JOBS]   (default 1000000)
** Needs the local servers (scripts/services start) and GB_CONFIG or
** run/gridbroker.conf; the worker binary is taken from this program's
** directory. It empties the DIRAC tables.
*/
#include <libgen.h>
#include <mysql.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/pilotdrv.h"
#include "base/config.h"
#include "gb_error.h"
#include "priority.h"
#include "rng.h"
#include "store/store.h"
#include "store/store_internal.h"
#include "store/store_tq.h"
#include "store/store_tq_internal.h"

#define NTQ 500
#define NSITES 60
#define NPLAT 67
#define SITES_PER_TQ 33
#define PLAT_PER_TQ 17
#define CHUNK 5000
#define BASELINE_PILOTS 1000
#define NWORKERS 2 /* gridbroker workers, echo servers, SQL connections */

static char site_names[NSITES][32], plat_names[NPLAT][32];
static const char *site_ptr[NSITES], *plat_ptr[NPLAT];

static double now_s(void)
{
	return pd_now_ms() / 1e3;
}

/* TQ k's requirement sets: 33 of the 60 sites, 17 of the 67 platforms. */
static void shape(int k, const char **sv, const char **pv)
{
	for (int i = 0; i < SITES_PER_TQ; i++)
		sv[i] = site_names[(k * 7 + i) % NSITES];
	for (int i = 0; i < PLAT_PER_TQ; i++)
		pv[i] = plat_names[(k * 3 + i) % NPLAT];
}

static const char *tq_sites[NTQ][SITES_PER_TQ], *tq_plats[NTQ][PLAT_PER_TQ];
static char tq_owners[NTQ][48];

/* The TQ shapes (requirement sets normalised, owners), once. */
static void shapes_init(void)
{
	for (int k = 0; k < NTQ; k++) {
		shape(k, tq_sites[k], tq_plats[k]);
		size_t ns = SITES_PER_TQ, np = PLAT_PER_TQ;
		tq_strset_normalise(tq_sites[k], &ns);
		tq_strset_normalise(tq_plats[k], &np);
		snprintf(tq_owners[k], sizeof(tq_owners[k]), "/DC=ch/CN=user%d",
			 k % 40);
	}
}

/* Jobs first+1 .. first+n of a load of njobs into jobs[]: the same jobs
** whether they go in through st_tq_submit or job.submit messages. */
static void fill_jobs(struct cdt_job *jobs, long long first, int n,
		      long long njobs)
{
	long long per_tq = njobs / NTQ;
	for (int i = 0; i < n; i++) {
		long long id = first + i + 1;
		int k = (int)((id - 1) / per_tq) % NTQ;
		struct cdt_job *j = &jobs[i];
		memset(j, 0, sizeof(*j));
		j->job_id = id;
		j->owner = k < 270 ? "/DC=ch/CN=lbprods" : tq_owners[k];
		j->owner_group = k < 270   ? "lhcb_mc"
				 : k < 480 ? "lhcb_data"
					   : "lhcb_user";
		j->setup = "LHCb-Production";
		j->cpu_time = k % 3 ? 259200 : 1080000;
		j->user_priority = 1 + (int)(id % 5);
		j->set[TQ_F_SITES] = (struct tq_strset){tq_sites[k], SITES_PER_TQ};
		j->set[TQ_F_PLATFORMS] =
			(struct tq_strset){tq_plats[k], PLAT_PER_TQ};
	}
}

/* njobs through st_tq_submit in this process, `chunk` jobs (at most
** CHUNK) per transaction. */
static int load_jobs(struct st_db *db, long long njobs, int chunk)
{
	static struct cdt_job jobs[CHUNK];
	struct arena a;
	double t0 = now_s();
	long long done = 0;
	while (done < njobs) {
		int n = njobs - done < chunk ? (int)(njobs - done) : chunk;
		fill_jobs(jobs, done, n, njobs);
		arena_init(&a, 64u << 20);
		struct st_tq_submitted out;
		char req[64];
		snprintf(req, sizeof(req), "bench-load-%lld", done);
		int rc = st_begin(db);
		if (rc == GB_OK)
			rc = st_tq_submit(db, jobs, (size_t)n,
					  tq_default_segments, 4, req,
					  (long long)time(NULL), &a, &out);
		if (rc == GB_OK)
			rc = st_commit(db);
		arena_free(&a);
		if (rc != GB_OK) {
			fprintf(stderr, "load: %s (%s)\n", gb_strerror(rc),
				st_error(db));
			return rc;
		}
		done += n;
	}
	double dt = now_s() - t0;
	printf("loaded %lld waiting jobs in %d task queues in %.1f s "
	       "(%.0f jobs/s; in this process through st_tq_submit, %d jobs "
	       "per transaction)\n",
	       njobs, NTQ, dt, (double)njobs / dt, chunk);
	return GB_OK;
}

/* ---- the baseline: the seed's per-pilot SQL chain ------------------------ */

static MYSQL_STMT *prep(MYSQL *my, const char *sql)
{
	MYSQL_STMT *s = mysql_stmt_init(my);
	if (s == NULL ||
	    mysql_stmt_prepare(s, sql, (unsigned long)strlen(sql))) {
		fprintf(stderr, "prepare: %s\n", s ? mysql_stmt_error(s) : "");
		exit(1);
	}
	return s;
}

static void bind_ll(MYSQL_BIND *b, long long *v)
{
	memset(b, 0, sizeof(*b));
	b->buffer_type = MYSQL_TYPE_LONGLONG;
	b->buffer = v;
}

static void bind_str(MYSQL_BIND *b, const char *s, unsigned long *len)
{
	memset(b, 0, sizeof(*b));
	*len = (unsigned long)strlen(s);
	b->buffer_type = MYSQL_TYPE_STRING;
	b->buffer = (void *)s;
	b->buffer_length = *len;
	b->length = len;
}

/* Execute and fetch the first column of each row into out[] (max n). */
static int run_ll(MYSQL_STMT *s, MYSQL_BIND *params, long long *out, int max)
{
	if ((params && mysql_stmt_bind_param(s, params)) ||
	    mysql_stmt_execute(s)) {
		fprintf(stderr, "execute: %s\n", mysql_stmt_error(s));
		exit(1);
	}
	if (mysql_stmt_field_count(s) == 0)
		return (int)mysql_stmt_affected_rows(s);
	long long v = 0;
	MYSQL_BIND r;
	bind_ll(&r, &v);
	mysql_stmt_bind_result(s, &r);
	int n = 0;
	while (mysql_stmt_fetch(s) == 0)
		if (n < max)
			out[n++] = v;
	mysql_stmt_free_result(s);
	return n;
}

/* The chain for pilots first, first+step, ... below npilots on a
** connection of its own; returns the number matched. */
static int baseline_run(const struct gb_config *cfg, int first, int step,
			int npilots)
{
	MYSQL *my = mysql_init(NULL);
	const char *sock = cfg->db_socket[0] ? cfg->db_socket : NULL;
	if (!mysql_real_connect(my, sock ? NULL : cfg->db_host, cfg->db_user,
				cfg->db_password, cfg->db_name,
				(unsigned)cfg->db_port, sock, 0)) {
		fprintf(stderr, "baseline connect: %s\n", mysql_error(my));
		exit(1);
	}
	/* TQ selection as the 2009 page orders it: highest CPU time first,
	** then RAND() / priority. Requirement tables are matched the way
	** DIRAC's SQL does (no rows = no restriction). */
	MYSQL_STMT *q_tq = prep(
		my,
		"SELECT tq.tq_id FROM task_queues tq WHERE tq.setup = ? AND "
		"tq.cpu_time <= ? AND "
		"(NOT EXISTS (SELECT 1 FROM tq_requirements r WHERE r.tq_id = "
		"tq.tq_id AND r.field = 'sites') OR EXISTS (SELECT 1 FROM "
		"tq_requirements r WHERE r.tq_id = tq.tq_id AND r.field = "
		"'sites' AND r.value = ?)) AND "
		"NOT EXISTS (SELECT 1 FROM tq_requirements r WHERE r.tq_id = "
		"tq.tq_id AND r.field = 'bannedSites' AND r.value = ?) AND "
		"(NOT EXISTS (SELECT 1 FROM tq_requirements r WHERE r.tq_id = "
		"tq.tq_id AND r.field = 'platforms') OR EXISTS (SELECT 1 FROM "
		"tq_requirements r WHERE r.tq_id = tq.tq_id AND r.field = "
		"'platforms' AND r.value = ?)) "
		"ORDER BY tq.cpu_time DESC, RAND() / tq.priority ASC LIMIT 10");
	MYSQL_STMT *q_prio = prep(
		my,
		"SELECT user_priority FROM tq_jobs WHERE tq_id = ? ORDER BY "
		"RAND() / user_priority ASC LIMIT 1");
	MYSQL_STMT *q_ids = prep(
		my,
		"SELECT job_id FROM tq_jobs WHERE tq_id = ? AND user_priority "
		"= ? ORDER BY job_id ASC LIMIT 10");
	MYSQL_STMT *q_del = prep(my, "DELETE FROM tq_jobs WHERE job_id = ?");
	struct gb_rng rng;
	gb_rng_seed(&rng, 42 + (uint64_t)first);
	int matched = 0;
	for (int p = first; p < npilots; p += step) {
		const char *setup = "LHCb-Production";
		long long cpu = 2000000;
		const char *site = site_names[p % NSITES];
		const char *plat = plat_names[(p * 7) % NPLAT];
		unsigned long l1, l2, l3, l4;
		MYSQL_BIND b[5];
		bind_str(&b[0], setup, &l1);
		bind_ll(&b[1], &cpu);
		bind_str(&b[2], site, &l2);
		bind_str(&b[3], site, &l3);
		bind_str(&b[4], plat, &l4);
		long long tqs[10];
		int ntq = run_ll(q_tq, b, tqs, 10);
		for (int t = 0; t < ntq; t++) {
			long long tq = tqs[t], prio = 0, ids[10];
			MYSQL_BIND c[2];
			bind_ll(&c[0], &tq);
			if (run_ll(q_prio, c, &prio, 1) == 0)
				continue;
			bind_ll(&c[0], &tq);
			bind_ll(&c[1], &prio);
			int nid = run_ll(q_ids, c, ids, 10);
			int got = 0;
			while (nid > 0 && !got) {
				int i = (int)gb_rng_below(&rng, (uint64_t)nid);
				long long id = ids[i];
				MYSQL_BIND d;
				bind_ll(&d, &id);
				got = run_ll(q_del, &d, NULL, 0) == 1;
				ids[i] = ids[--nid];
			}
			if (got) {
				matched++;
				break;
			}
		}
	}
	mysql_stmt_close(q_tq);
	mysql_stmt_close(q_prio);
	mysql_stmt_close(q_ids);
	mysql_stmt_close(q_del);
	mysql_close(my);
	return matched;
}

/* The chain on `nconn` connections at once, one process each (the
** client library's connection is not shared between threads, and the
** service's workers are processes too), pilots dealt round-robin; the
** rate is all pilots over the wall time until the last one finished. */
static double baseline(const struct gb_config *cfg, int npilots, int nconn)
{
	int fd[2];
	if (pipe(fd) != 0)
		exit(1);
	double t0 = now_s();
	for (int c = 0; c < nconn; c++) {
		pid_t pid = fork();
		if (pid < 0)
			exit(1);
		if (pid == 0) {
			int m = baseline_run(cfg, c, nconn, npilots);
			ssize_t wn = write(fd[1], &m, sizeof(m));
			_exit(wn == (ssize_t)sizeof(m) ? 0 : 1);
		}
	}
	close(fd[1]);
	int matched = 0, m, ok = 0;
	while (read(fd[0], &m, sizeof(m)) == (ssize_t)sizeof(m)) {
		matched += m;
		ok++;
	}
	close(fd[0]);
	while (wait(NULL) > 0)
		;
	double dt = now_s() - t0;
	if (ok != nconn) {
		fprintf(stderr, "baseline: %d of %d clients failed\n",
			nconn - ok, nconn);
		exit(1);
	}
	double rate = npilots / dt;
	printf("baseline (per-pilot SQL chain, %d connection%s): %d pilots, "
	       "%d matched, %.2f s: %.1f matches/s, %.2f ms per pilot per "
	       "connection\n",
	       nconn, nconn > 1 ? "s in parallel" : "", npilots, matched, dt,
	       rate, dt * 1e3 * nconn / npilots);
	return rate;
}

/* ---- the service ----------------------------------------------------------- */

/* A copy of the configuration tuned for throughput: a deeper prefetch and
** confirm window so a whole batch is in flight. */
static int bench_config(const char *src, const char *dst)
{
	FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
	if (in == NULL || out == NULL)
		return -1;
	char line[1024];
	while (fgets(line, sizeof(line), in)) {
		if (strncmp(line, "prefetch", 8) == 0) {
			fputs("prefetch=400\nconfirm_window=2000\n", out);
			continue;
		}
		if (strncmp(line, "log_level", 9) == 0) {
			fputs("log_level=warn\n", out);
			continue;
		}
		fputs(line, out);
	}
	fputs("\n[dirac]\nmatch_batch=128\n", out);
	fclose(in);
	fclose(out);
	return 0;
}

/* What bench_config changes, and why, at the top of the output, so a
** figure is never read as the defaults' figure. */
static void print_settings(void)
{
	printf("settings differing from the defaults (workers and echo "
	       "servers alike):\n"
	       "  amqp.prefetch=400 (default 50): a worker's group commit only "
	       "batches what it holds; at 1,024 pilots in flight over %d "
	       "workers, 50 would cap a batch below match_batch\n"
	       "  amqp.confirm_window=2000 (default 200): a batch's replies "
	       "and events are all in flight before the worker waits for "
	       "confirms\n"
	       "  dirac.match_batch=128 (default 64): pilots per group "
	       "commit, so one transaction serves more pilots under load\n"
	       "  worker.log_level=warn (default info): no line per "
	       "request\n",
	       NWORKERS);
}

static pid_t start_worker(const char *bin, const char *conf, int i)
{
	char inst[16];
	snprintf(inst, sizeof(inst), "bench%d", i);
	pid_t pid = fork();
	if (pid == 0) {
		execl(bin, "gridbroker-worker", "-c", conf, "--instance", inst,
		      (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* ---- shared by both modes --------------------------------------------------- */

#define ECHO_QUEUE "gridbroker.bench.echo"
#define ECHO_KEY "bench.echo"

static struct gb_config cfg, bcfg; /* as given; as the workers run */
static char bin[4200], conf[4200];
static struct cdt_pilot *pilots;
static struct pd_result *res;
static char (*pilot_names)[24];

struct fig {
	int n, matched;
	double secs, rate, p50, p99;
};

/* Empty the DIRAC tables, store the group configuration, load njobs
** `chunk` per transaction (none: 0). */
static int prepare_db(long long njobs, int chunk)
{
	struct st_db *db = NULL;
	char err[4096];
	if (st_open(&cfg, &db, err, sizeof(err)) != GB_OK ||
	    st_migrate(db, GB_SCHEMA_DIR, NULL) != GB_OK) {
		fprintf(stderr, "bench_match: database: %s\n",
			db ? st_error(db) : err);
		return 1;
	}
	/* In pieces: one DELETE of the 10 M rows a --scale run leaves
	** outlasts the client's read timeout. Each piece is repeated until
	** the table has no row it would delete (st_plain drains the result,
	** which loses the affected-row count), children before parents. */
	static const struct {
		const char *del, *left;
	} wipe[] = {
		{"DELETE FROM pilot_matches LIMIT 50000",
		 "SELECT 1 FROM pilot_matches LIMIT 1"},
		{"DELETE FROM tq_jobs LIMIT 50000", "SELECT 1 FROM tq_jobs LIMIT 1"},
		{"DELETE FROM tq_requirements LIMIT 50000",
		 "SELECT 1 FROM tq_requirements LIMIT 1"},
		{"DELETE FROM tq_removed LIMIT 50000",
		 "SELECT 1 FROM tq_removed LIMIT 1"},
		{"DELETE FROM task_queues LIMIT 50000",
		 "SELECT 1 FROM task_queues LIMIT 1"},
		{"DELETE FROM wms_jobs LIMIT 50000", "SELECT 1 FROM wms_jobs LIMIT 1"},
		{"DELETE FROM outbox WHERE routing_key LIKE 'pilot.%' LIMIT 50000",
		 "SELECT 1 FROM outbox WHERE routing_key LIKE 'pilot.%' LIMIT 1"}};
	for (size_t i = 0; i < sizeof(wipe) / sizeof(wipe[0]); i++) {
		for (;;) {
			if (st_plain(db, wipe[i].del, strlen(wipe[i].del)) !=
			    GB_OK) {
				fprintf(stderr, "bench_match: %s: %s\n",
					wipe[i].del, st_error(db));
				return 1;
			}
			if (mysql_query(db->my, wipe[i].left) != 0) {
				fprintf(stderr, "bench_match: %s: %s\n",
					wipe[i].left, mysql_error(db->my));
				return 1;
			}
			MYSQL_RES *r = mysql_store_result(db->my);
			int more = r != NULL && mysql_num_rows(r) > 0;
			if (r)
				mysql_free_result(r);
			if (!more)
				break;
		}
	}
	static const struct pr_group groups[] = {{"lhcb_mc", 300, 1},
						 {"lhcb_data", 40000, 1},
						 {"lhcb_user", 10000, 0}};
	struct pr_config pc = {.default_share = PR_DEFAULT_SHARE,
			       .groups = groups,
			       .ngroups = 3};
	if (st_tq_config_save(db, &pc, tq_default_segments, 4, 0) != GB_OK ||
	    (njobs > 0 && load_jobs(db, njobs, chunk) != GB_OK))
		return 1;
	st_close(db);
	return 0;
}

/* The simple pilots (one site, one platform) for i < n. */
static void simple_pilots(int n)
{
	for (int i = 0; i < n; i++) {
		snprintf(pilot_names[i], sizeof(pilot_names[i]), "bp-%d", i);
		pd_pilot_one(&pilots[i], pilot_names[i], "LHCb-Production",
			     2000000, &site_ptr[i % NSITES],
			     &plat_ptr[(i * 7) % NPLAT]);
	}
}

/* Drive n pilots at `window` in flight to exchange/key; 0 when all were
** answered. */
static int drive(const char *ex, const char *key, const char *what, int n,
		 int window, struct fig *f)
{
	char prefix[64], err[256] = "";
	snprintf(prefix, sizeof(prefix), "bench-%s-%ld", what,
		 (long)time(NULL));
	double t0 = now_s();
	int missing = pd_run_to(&cfg, ex, key, prefix, pilots, n, window,
				120000, res, err, sizeof(err));
	memset(f, 0, sizeof(*f));
	f->n = n;
	f->secs = now_s() - t0;
	if (missing != 0) {
		fprintf(stderr, "bench_match: %s: %d of %d unanswered (%s)\n",
			what, missing, n, err);
		return 1;
	}
	for (int i = 0; i < n; i++)
		f->matched += res[i].matched;
	f->rate = n / f->secs;
	f->p50 = pd_percentile(res, n, 50);
	f->p99 = pd_percentile(res, n, 99);
	return 0;
}

/* An echo server (pd_echo_serve) on queue q in a process of its own;
** it exits 0 after a stop message. */
static pid_t start_echo(const char *q, const void *reply, size_t len)
{
	pid_t pid = fork();
	if (pid == 0) {
		char err[256];
		int rc = pd_echo_serve(&bcfg, q, reply, len, err, sizeof(err));
		if (rc != 0)
			fprintf(stderr, "bench_match: %s\n", err);
		_exit(rc == 0 ? 0 : 1);
	}
	return pid;
}

static void stop_all(pid_t *p, int n)
{
	for (int i = 0; i < n; i++)
		if (p[i] > 0)
			kill(p[i], SIGTERM);
	for (int i = 0; i < n; i++)
		if (p[i] > 0)
			waitpid(p[i], NULL, 0);
}

/*
** The bare RPC ceiling: NWORKERS echo processes on a queue declared like
** gridbroker.pilot.match, with the workers' prefetch, answering every
** pilot with one canned (valid) reply; the same driver at both windows.
*/
static int echo_ceiling(int nheavy, int nlight, struct fig *heavy,
			struct fig *light)
{
	char err[256];
	if (pd_queue_setup(&bcfg, ECHO_QUEUE, ECHO_KEY, err, sizeof(err))) {
		fprintf(stderr, "bench_match: echo queue: %s\n", err);
		return 1;
	}
	struct cdt_match m = {.decision_id = 1,
			      .request_id = "echo",
			      .pilot_id = "echo",
			      .site = "ANY",
			      .matched = 1,
			      .job_id = 1,
			      .tq_id = 1,
			      .owner = "/DC=ch/CN=echo",
			      .owner_group = "echo",
			      .tq_cpu_time = 500,
			      .code = "matched",
			      .reason = "echo"};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	if (cdt_encode_reply(&m, &sb) != GB_OK) {
		fprintf(stderr,
			"bench_match: the echo reply does not encode\n");
		return 1;
	}
	pid_t e[NWORKERS];
	for (int i = 0; i < NWORKERS; i++)
		e[i] = start_echo(ECHO_QUEUE, sb.data, sb.size);
	struct fig warm;
	int rc =
		drive(AMQ_EX_REQUESTS, ECHO_KEY, "echo-warm", 2000, 256, &warm);
	if (rc == 0)
		rc = drive(AMQ_EX_REQUESTS, ECHO_KEY, "echo", nheavy, 1024,
			   heavy);
	if (rc == 0)
		rc = drive(AMQ_EX_REQUESTS, ECHO_KEY, "echo-light", nlight, 32,
			   light);
	stop_all(e, NWORKERS);
	msgpack_sbuffer_destroy(&sb);
	pd_queue_setup(&bcfg, ECHO_QUEUE, NULL, err, sizeof(err));
	return rc;
}

/* VmRSS of a process in MiB, or -1. */
static double rss_mib(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	FILE *f = fopen(path, "r");
	double kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = atof(line + 6);
	if (f)
		fclose(f);
	return kb < 0 ? -1 : kb / 1024.0;
}

/* Wait up to 60 s until each queue in q[] has `want` consumers: the
** broker deals a queue's messages round robin among the consumers it
** has, so a load published while one worker is still connecting would go
** to the other one, up to its whole prefetch. */
static int wait_consumers(const char *const *q, int nq, int want)
{
	amqp_connection_state_t conn = NULL;
	char err[256];
	if (amq_connect(&bcfg, 0, "gridbroker-bench-wait", &conn, err,
			sizeof(err)) != GB_OK) {
		fprintf(stderr, "bench_match: %s\n", err);
		return 1;
	}
	int rc = 1;
	double t0 = now_s();
	while (now_s() - t0 < 60) {
		int ok = amq_channel_setup(conn, 1, 0, err, sizeof(err)) ==
			 GB_OK;
		int ready = ok;
		for (int i = 0; ok && ready && i < nq; i++) {
			amqp_queue_declare_ok_t *d = amqp_queue_declare(
				conn, 1, amqp_cstring_bytes(q[i]), 1, 0, 0, 0,
				amqp_empty_table);
			ok = d != NULL;
			ready = ok && d->consumer_count >= (uint32_t)want;
		}
		if (!ok)
			break; /* a passive declare of a missing queue closes
				  the channel; the topology was declared */
		amqp_channel_close(conn, 1, AMQP_REPLY_SUCCESS);
		if (ready) {
			rc = 0;
			break;
		}
		usleep(50000);
	}
	if (rc)
		fprintf(stderr, "bench_match: the workers did not all consume "
				"within 60 s\n");
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	return rc;
}

/* Start the workers and wait until they answer: they load their index
** (every waiting job) and compute the priorities before the first
** pilot is matched. */
static int start_workers(pid_t *w, int nwarm)
{
	char err[256];
	for (int i = 0; i < NWORKERS; i++)
		w[i] = 0;
	if (pd_queue_setup(&bcfg, NULL, NULL, err, sizeof(err))) {
		fprintf(stderr, "bench_match: topology: %s\n", err);
		return 1;
	}
	double t0 = now_s();
	for (int i = 0; i < NWORKERS; i++)
		w[i] = start_worker(bin, conf, i);
	static const char *const queues[] = {"gridbroker.pilot.match",
					     "gridbroker.job.submit"};
	if (wait_consumers(queues, 2, NWORKERS))
		return 1;
	struct fig f;
	if (nwarm == 0)
		return 0;
	if (drive(AMQ_EX_REQUESTS, "pilot.match", "warm", nwarm, 256, &f))
		return 1;
	printf("workers ready (%d warm-up matches) after %.1f s\n", nwarm,
	       now_s() - t0);
	return 0;
}

/* ---- --scale ------------------------------------------------------------------- */

static int scale(int nsizes, long long *sizes, int npilots)
{
	struct row {
		long long jobs;
		struct fig heavy, light;
		double rss[NWORKERS];
	} *rows = calloc((size_t)nsizes, sizeof(*rows));
	if (rows == NULL)
		return 1;
	for (int k = 0; k < nsizes; k++) {
		long long nj = sizes[k];
		/* a quarter of the jobs at most, so the last pilots still find
		** as many jobs as the first (a drained index answers faster) */
		int nh = npilots < nj / 4 ? npilots : (int)(nj / 4);
		int nl = nh < 5000 ? nh : 5000;
		int nw = nj / 20 < 2000 ? (int)(nj / 20) : 2000;
		printf("-- %lld waiting jobs: %d pilots at 1024 in flight, %d at "
		       "32\n",
		       nj, nh, nl);
		pid_t w[NWORKERS] = {0}; /* stop_all skips 0 */
		if (prepare_db(nj, CHUNK) || start_workers(w, nw) ||
		    drive(AMQ_EX_REQUESTS, "pilot.match", "run", nh, 1024,
			  &rows[k].heavy) ||
		    drive(AMQ_EX_REQUESTS, "pilot.match", "light", nl, 32,
			  &rows[k].light)) {
			stop_all(w, NWORKERS);
			free(rows);
			return 1;
		}
		rows[k].jobs = nj;
		for (int i = 0; i < NWORKERS; i++)
			rows[k].rss[i] = rss_mib(w[i]);
		stop_all(w, NWORKERS);
	}
	printf("\n%12s  %14s  %13s  %13s  %s\n", "waiting jobs",
	       "matches/s@1024", "p99@1024 (ms)", "p99@32 (ms)",
	       "worker VmRSS (MiB)");
	for (int k = 0; k < nsizes; k++) {
		printf("%12lld  %14.0f  %13.2f  %13.2f  ", rows[k].jobs,
		       rows[k].heavy.rate, rows[k].heavy.p99,
		       rows[k].light.p99);
		for (int i = 0; i < NWORKERS; i++)
			printf("%s%.0f", i ? " / " : "", rows[k].rss[i]);
		printf("\n");
	}
	free(rows);
	return 0;
}

/* ---- --submit ------------------------------------------------------------------ */

#define SINK_QUEUE "gridbroker.bench.sink"
#define SINK_KEY "bench.sink"

struct msgs {
	char *buf;         /* the encoded bodies, back to back */
	size_t *off, *len; /* of message k */
	int n, per;        /* messages, jobs per message */
};

/*
** Encode njobs (fill_jobs) as job.submit bodies, as many jobs per message
** as fit max_message_bytes with a tenth to spare (at most CDT_MAX_JOBS).
** Encoded before the clock starts: the producer's encoding is not the
** service's cost, and on two cores it would compete with the workers.
*/
static int encode_msgs(long long njobs, struct msgs *m)
{
	static struct cdt_job jobs[CDT_MAX_JOBS];
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	fill_jobs(jobs, 0, 2, njobs);
	struct cdt_submit one = {jobs, 1}, two = {jobs, 2};
	size_t s1 = 0;
	int rc = cdt_encode_submit(&one, &sb);
	s1 = sb.size;
	msgpack_sbuffer_clear(&sb);
	if (rc == GB_OK)
		rc = cdt_encode_submit(&two, &sb);
	size_t per_job = sb.size - s1;
	msgpack_sbuffer_clear(&sb);
	if (rc != GB_OK || per_job == 0)
		return 1;
	size_t per = (size_t)bcfg.max_message_bytes * 9 / 10 / per_job;
	m->per = per > CDT_MAX_JOBS ? CDT_MAX_JOBS : per < 1 ? 1 : (int)per;
	m->n = (int)((njobs + m->per - 1) / m->per);
	m->off = calloc((size_t)m->n, sizeof(*m->off));
	m->len = calloc((size_t)m->n, sizeof(*m->len));
	size_t cap = (size_t)njobs * (per_job + 16) + 4096, used = 0;
	m->buf = malloc(cap);
	if (!m->off || !m->len || !m->buf)
		return 1;
	for (int k = 0; k < m->n; k++) {
		long long first = (long long)k * m->per;
		int n = njobs - first < m->per ? (int)(njobs - first) : m->per;
		fill_jobs(jobs, first, n, njobs);
		struct cdt_submit sub = {jobs, (size_t)n};
		msgpack_sbuffer_clear(&sb);
		if (cdt_encode_submit(&sub, &sb) != GB_OK ||
		    sb.size > (size_t)bcfg.max_message_bytes ||
		    used + sb.size > cap) {
			fprintf(stderr, "bench_match: message %d does not "
					"encode within %d bytes\n",
				k, bcfg.max_message_bytes);
			return 1;
		}
		memcpy(m->buf + used, sb.data, sb.size);
		m->off[k] = used;
		m->len[k] = sb.size;
		used += sb.size;
	}
	msgpack_sbuffer_destroy(&sb);
	printf("%lld jobs in %d job.submit messages of %d jobs (%.0f bytes "
	       "per message on average, max_message_bytes %d)\n",
	       njobs, m->n, m->per, (double)used / m->n,
	       bcfg.max_message_bytes);
	return 0;
}

/* Count nacked tags (a nack means the broker dropped the message). */
static void nacked(void *arg, uint64_t tag)
{
	(void)tag;
	(*(int *)arg)++;
}

/* Read one frame; apply a publisher confirm. 0, or -1 when the
** connection failed. */
static int read_confirm(amqp_connection_state_t conn, struct amq_window *w,
			int *nacks)
{
	amqp_frame_t f;
	if (amqp_simple_wait_frame(conn, &f) != AMQP_STATUS_OK)
		return -1;
	if (f.frame_type != AMQP_FRAME_METHOD ||
	    (f.payload.method.id != AMQP_BASIC_ACK_METHOD &&
	     f.payload.method.id != AMQP_BASIC_NACK_METHOD))
		return 0;
	uint64_t tag = 0;
	int multiple = 0, n = 0;
	int ack = amq_confirm_read(&f.payload.method, &tag, &multiple);
	amq_win_confirm(w, tag, multiple, ack ? NULL : nacked, &n);
	*nacks += n;
	return 0;
}

/* Publish every message to gridbroker.requests with key `rkey`,
** persistent, each its own message id; then, when `stops` > 0, that many
** bench.stop messages for the sinks. One connection with publisher
** confirms, 64 unconfirmed at most, all confirmed before it returns, as a
** producer that must not lose jobs publishes (without confirms, messages
** still in the channel when the connection closes may be dropped; a
** first version lost 11 of 273 that way). */
static int publish_msgs(const struct msgs *m, const char *rkey, int stops,
			const char *tag)
{
	amqp_connection_state_t conn = NULL;
	char err[256];
	struct amq_window w;
	if (amq_win_init(&w, 64) != GB_OK)
		return 1;
	if (amq_connect(&cfg, 0, "gridbroker-bench-submit", &conn, err,
			sizeof(err)) != GB_OK ||
	    amq_channel_setup(conn, 1, 1, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "bench_match: publish: %s\n", err);
		if (conn)
			amqp_destroy_connection(conn);
		amq_win_free(&w);
		return 1;
	}
	int rc = 0, nacks = 0;
	for (int k = 0; rc == 0 && k < m->n + stops; k++) {
		while (rc == 0 && !amq_win_has_room(&w))
			rc = read_confirm(conn, &w, &nacks);
		char id[96];
		snprintf(id, sizeof(id), "bench-%s-%ld-%d", tag,
			 (long)time(NULL), k);
		amqp_basic_properties_t bp;
		memset(&bp, 0, sizeof(bp));
		bp._flags = AMQP_BASIC_MESSAGE_ID_FLAG |
			    AMQP_BASIC_CONTENT_TYPE_FLAG |
			    AMQP_BASIC_DELIVERY_MODE_FLAG |
			    AMQP_BASIC_TYPE_FLAG;
		bp.message_id = amqp_cstring_bytes(id);
		bp.content_type = amqp_cstring_bytes("application/msgpack");
		bp.delivery_mode = 2;
		bp.type = amqp_cstring_bytes(k < m->n ? "job.submit"
						      : PD_STOP_TYPE);
		amqp_bytes_t body = k < m->n ? (amqp_bytes_t){m->len[k],
							     m->buf + m->off[k]}
					     : amqp_cstring_bytes("stop");
		if (rc == 0 &&
		    amqp_basic_publish(conn, 1,
				       amqp_cstring_bytes(AMQ_EX_REQUESTS),
				       amqp_cstring_bytes(rkey), 0, 0, &bp,
				       body) != AMQP_STATUS_OK)
			rc = -1;
		if (rc == 0)
			amq_win_push(&w);
	}
	while (rc == 0 && w.pending > 0)
		rc = read_confirm(conn, &w, &nacks);
	if (rc || nacks)
		fprintf(stderr, "bench_match: publish failed (%d nacked)\n",
			nacks);
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	amq_win_free(&w);
	return rc || nacks;
}

/* Waiting jobs in tq_jobs, or -1. */
static long long count_waiting(MYSQL_STMT *q)
{
	long long n = -1;
	return run_ll(q, NULL, &n, 1) == 1 ? n : -1;
}

/*
** Goal 5: njobs through job.submit messages, consumed by the workers,
** timed from the first publish until every job is in tq_jobs; beside the
** in-process st_tq_submit load of the same jobs at the same jobs per
** transaction, and a bare publish -> consume ceiling (NWORKERS sinks on a
** queue declared like gridbroker.job.submit, same prefetch) of the same
** messages.
*/
static int submit(long long njobs)
{
	struct msgs m;
	memset(&m, 0, sizeof(m));
	if (encode_msgs(njobs, &m))
		return 1;
	/* 0. what decoding alone costs: the worker decodes every message
	** before st_tq_submit sees it, on the same core */
	double t0 = now_s();
	for (int k = 0; k < m.n; k++) {
		struct arena a;
		arena_init(&a, (size_t)bcfg.max_decode_bytes);
		struct cdt_submit sub;
		struct cod_error ce;
		memset(&ce, 0, sizeof(ce));
		int drc = cdt_decode_submit(m.buf + m.off[k], m.len[k], &a, &sub,
					    &ce);
		arena_free(&a);
		if (drc != GB_OK) {
			fprintf(stderr, "bench_match: message %d does not "
					"decode: %s: %s\n",
				k, ce.field, ce.problem);
			return 1;
		}
	}
	double dd = now_s() - t0;
	printf("decoding the messages alone (cdt_decode_submit, this process, "
	       "one core): %.1f s: %.0f jobs/s\n",
	       dd, njobs / dd);
	/* and what st_tq_submit's first step costs per job: the canonical
	** signature and its hash (store_tq_match.c, group_jobs) */
	static struct cdt_job cj[CHUNK];
	static char sig[1 << 16];
	uint64_t hx = 0;
	t0 = now_s();
	for (long long done = 0; done < njobs; done += CHUNK) {
		int n = njobs - done < CHUNK ? (int)(njobs - done) : CHUNK;
		fill_jobs(cj, done, n, njobs);
		for (int i = 0; i < n; i++) {
			struct tq_def d = {.owner = cj[i].owner,
					   .owner_group = cj[i].owner_group,
					   .setup = cj[i].setup};
			d.cpu_time = tq_cpu_segment(cj[i].cpu_time,
						    tq_default_segments, 4);
			memcpy(d.set, cj[i].set, sizeof(d.set));
			size_t len = 0;
			if (tq_canon(&d, sig, sizeof(sig), &len) != GB_OK)
				return 1;
			hx ^= stq_hash64(sig, len);
		}
	}
	double dc = now_s() - t0;
	printf("canonical signatures alone (tq_canon + stq_hash64 per job, "
	       "one core): %.1f s: %.0f jobs/s (%llx)\n",
	       dc, njobs / dc, (unsigned long long)(hx & 0xf));
	/* 1. in this process */
	if (prepare_db(njobs, m.per))
		return 1;
	/* 2. the ceiling: sinks consume and ack, nothing else */
	char err[256];
	if (pd_queue_setup(&bcfg, SINK_QUEUE, SINK_KEY, err, sizeof(err))) {
		fprintf(stderr, "bench_match: sink queue: %s\n", err);
		return 1;
	}
	pid_t sk[NWORKERS];
	for (int i = 0; i < NWORKERS; i++)
		sk[i] = start_echo(SINK_QUEUE, NULL, 0);
	t0 = now_s();
	int rc = publish_msgs(&m, SINK_KEY, NWORKERS, "sink");
	double tp = now_s() - t0;
	for (int i = 0; rc == 0 && i < NWORKERS; i++) {
		int st = 0;
		waitpid(sk[i], &st, 0);
		sk[i] = 0;
		rc = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
	}
	stop_all(sk, NWORKERS);
	double dsink = now_s() - t0;
	pd_queue_setup(&bcfg, SINK_QUEUE, NULL, err, sizeof(err));
	if (rc)
		return 1;
	printf("publish -> consume ceiling (%d sinks, %s queue, prefetch %d): "
	       "%d messages, published in %.1f s, all consumed in %.1f s: "
	       "%.0f jobs/s (%.0f messages/s)\n",
	       NWORKERS, bcfg.amqp_queue_type, bcfg.amqp_prefetch, m.n, tp,
	       dsink, njobs / dsink, m.n / dsink);
	/* 3. the service */
	if (prepare_db(0, 0))
		return 1;
	MYSQL *my = mysql_init(NULL);
	const char *sock = cfg.db_socket[0] ? cfg.db_socket : NULL;
	if (!mysql_real_connect(my, sock ? NULL : cfg.db_host, cfg.db_user,
				cfg.db_password, cfg.db_name,
				(unsigned)cfg.db_port, sock, 0)) {
		fprintf(stderr, "bench_match: count: %s\n", mysql_error(my));
		return 1;
	}
	MYSQL_STMT *q = prep(my, "SELECT COUNT(*) FROM tq_jobs");
	pid_t w[NWORKERS];
	if (start_workers(w, 0)) {
		stop_all(w, NWORKERS);
		return 1;
	}
	t0 = now_s();
	rc = publish_msgs(&m, "job.submit", 0, "submit");
	tp = now_s() - t0;
	long long got = 0, last = -1;
	double progress = now_s();
	while (rc == 0 && got < njobs) {
		usleep(100000);
		got = count_waiting(q);
		if (got != last) {
			last = got;
			progress = now_s();
		} else if (now_s() - progress > 120) {
			fprintf(stderr, "bench_match: %lld of %lld jobs queued, "
					"none for 120 s\n",
				got, njobs);
			rc = 1;
		}
	}
	double dsub = now_s() - t0;
	double rss[NWORKERS];
	for (int i = 0; i < NWORKERS; i++)
		rss[i] = rss_mib(w[i]);
	stop_all(w, NWORKERS);
	mysql_stmt_close(q);
	mysql_close(my);
	if (rc)
		return 1;
	printf("gridbroker job.submit (%d workers): %lld jobs, published in "
	       "%.1f s, all in tq_jobs after %.1f s: %.0f jobs/s (goal >= "
	       "50000); %.0f %% of the publish -> consume ceiling; worker "
	       "VmRSS %.0f / %.0f MiB\n",
	       NWORKERS, njobs, tp, dsub, njobs / dsub,
	       100.0 * dsink / dsub, rss[0], rss[1]);
	free(m.buf);
	free(m.off);
	free(m.len);
	return 0;
}

/* ---- main ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines as they happen */
	int scale_mode = argc > 1 && strcmp(argv[1], "--scale") == 0;
	int submit_mode = argc > 1 && strcmp(argv[1], "--submit") == 0;
	int npilots = 50000;
	long long njobs = 1000000;
	long long sizes[16] = {10000, 100000, 1000000};
	int nsizes = 3;
	if (scale_mode && argc > 2) {
		nsizes = 0;
		for (int i = 2; i < argc && nsizes < 16; i++)
			sizes[nsizes++] = atoll(argv[i]);
	} else if (submit_mode) {
		njobs = argc > 2 ? atoll(argv[2]) : 1000000;
	} else if (!scale_mode) {
		npilots = argc > 1 ? atoi(argv[1]) : 50000;
		njobs = argc > 2 ? atoll(argv[2]) : 1000000;
	}
	int bad = npilots <= 0 || njobs < NTQ;
	for (int i = 0; scale_mode && i < nsizes; i++)
		bad |= sizes[i] < 20 * NTQ;
	if (bad) {
		fprintf(stderr,
			"usage: bench_match [PILOTS [JOBS >= %d]]\n"
			"       bench_match --scale [JOBS >= %d ...]\n"
			"       bench_match --submit [JOBS >= %d]\n",
			NTQ, 20 * NTQ, NTQ);
		return 2;
	}
	for (int i = 0; i < NSITES; i++)
		snprintf(site_names[i], sizeof(site_names[i]),
			 "LCG.Site%02d.org", i);
	for (int i = 0; i < NPLAT; i++)
		snprintf(plat_names[i], sizeof(plat_names[i]),
			 "x86_64-plat%02d", i);
	for (int i = 0; i < NSITES; i++)
		site_ptr[i] = site_names[i];
	for (int i = 0; i < NPLAT; i++)
		plat_ptr[i] = plat_names[i];
	shapes_init();
	char self[4096], dir[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0)
		return 1;
	self[sl] = '\0';
	snprintf(dir, sizeof(dir), "%s", dirname(self));
	snprintf(bin, sizeof(bin), "%s/gridbroker-worker", dir);
	const char *path = getenv("GB_CONFIG");
	char def[4200];
	snprintf(def, sizeof(def), "%s/../run/gridbroker.conf", GB_SCHEMA_DIR);
	if (path == NULL || path[0] == '\0')
		path = def;
	char err[4096];
	if (cfg_load(path, &cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr,
			"bench_match: %s: %s\n(start the servers with "
			"scripts/services start)\n",
			path, err);
		return 1;
	}
	snprintf(conf, sizeof(conf), "%s/bench_match.conf", dir);
	if (bench_config(path, conf) != 0 ||
	    cfg_load(conf, &bcfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "bench_match: %s: %s\n", conf, err);
		return 1;
	}
	print_settings();
	int most = npilots > 2000 ? npilots : 2000;
	pilots = calloc((size_t)most, sizeof(*pilots));
	res = calloc((size_t)most, sizeof(*res));
	pilot_names = calloc((size_t)most, sizeof(*pilot_names));
	if (!pilots || !res || !pilot_names)
		return 1;
	simple_pilots(most);
	if (scale_mode)
		return scale(nsizes, sizes, npilots);
	if (submit_mode)
		return submit(njobs);

	if (prepare_db(njobs, CHUNK))
		return 1;
	double base1 = baseline(&cfg, BASELINE_PILOTS, 1);
	double basen = baseline(&cfg, BASELINE_PILOTS, NWORKERS);

	int nlight = npilots < 5000 ? npilots : 5000;
	struct fig eh, el;
	if (echo_ceiling(npilots, nlight, &eh, &el))
		return 1;
	printf("echo ceiling (%d echo processes, %s queue, prefetch %d, window "
	       "1024): %d RPCs, %.2f s: %.0f RPC/s, latency p50 %.2f ms, p99 "
	       "%.2f ms\n",
	       NWORKERS, bcfg.amqp_queue_type, bcfg.amqp_prefetch, eh.n,
	       eh.secs, eh.rate, eh.p50, eh.p99);
	printf("echo at 32 in flight: %d RPCs, %.0f RPC/s, latency p50 %.2f "
	       "ms, p99 %.2f ms\n",
	       el.n, el.rate, el.p50, el.p99);

	pid_t w[NWORKERS];
	int warm = npilots < 2000 ? npilots : 2000;
	if (start_workers(w, warm)) {
		stop_all(w, NWORKERS);
		return 1;
	}
	struct fig gh, gl;
	if (drive(AMQ_EX_REQUESTS, "pilot.match", "run", npilots, 1024, &gh))
		goto out;
	printf("gridbroker (%d workers, RabbitMQ RPC, window 1024): %d pilots, "
	       "%d matched, %.2f s: %.0f matches/s\n",
	       NWORKERS, npilots, gh.matched, gh.secs, gh.rate);
	printf("latency p50 %.2f ms, p99 %.2f ms\n", gh.p50, gh.p99);
	printf("share of the echo ceiling: %.0f %% (goal >= 50 %%)\n",
	       100.0 * gh.rate / eh.rate);
	printf("ratio to the per-pilot SQL chain: %.1fx on 1 connection, "
	       "%.1fx on %d (targets: >= 5000 matches/s and >= 30x)\n",
	       gh.rate / base1, gh.rate / basen, NWORKERS);

	/* The latency a pilot sees when the service is not saturated: the
	** same pilots with 32 in flight. */
	if (drive(AMQ_EX_REQUESTS, "pilot.match", "light", nlight, 32, &gl) ==
	    0)
		printf("at 32 in flight: %d pilots, %.0f matches/s, latency "
		       "p50 %.2f ms, p99 %.2f ms (echo: p50 %.2f ms, p99 "
		       "%.2f ms)\n",
		       nlight, gl.rate, gl.p50, gl.p99, el.p50, el.p99);

	/* The same load with pilots as DIRAC sends them: three sites, two
	** platforms, job types, tags offered (or ANY), a banned site; every
	** fifth a private pilot of two groups. The index cuts the TQs by
	** site and platform before the filters run. */
	static const char *jtypes[] = {"User", "MCSimulation"};
	static const char *tags[] = {"MultiProcessor", "8Processors"};
	static const char *any[] = {"ANY"};
	static const char *pgroups[] = {"lhcb_data", "lhcb_mc"};
	const char **mixed_sites = calloc((size_t)npilots * 3, sizeof(char *));
	const char **mixed_plats = calloc((size_t)npilots * 2, sizeof(char *));
	const char **mixed_ban = calloc((size_t)npilots, sizeof(char *));
	if (!mixed_sites || !mixed_plats || !mixed_ban)
		goto out;
	for (int i = 0; i < npilots; i++) {
		struct cdt_pilot *p = &pilots[i];
		for (int k = 0; k < 3; k++)
			mixed_sites[3 * i + k] =
				site_ptr[(i + 17 * k) % NSITES];
		for (int k = 0; k < 2; k++)
			mixed_plats[2 * i + k] =
				plat_ptr[(i * 7 + 29 * k) % NPLAT];
		mixed_ban[i] = site_ptr[(i + 5) % NSITES];
		p->d.want[TQ_P_SITE] =
			(struct tq_strset){&mixed_sites[3 * i], 3};
		p->d.want[TQ_P_PLATFORM] =
			(struct tq_strset){&mixed_plats[2 * i], 2};
		p->d.want[TQ_P_JOB_TYPE] = (struct tq_strset){jtypes, 2};
		if (i % 2)
			p->d.want[TQ_P_TAG] = (struct tq_strset){tags, 2};
		else
			p->d.want[TQ_P_TAG] = (struct tq_strset){any, 1};
		p->d.banned[TQ_P_SITE] = (struct tq_strset){&mixed_ban[i], 1};
		if (i % 5 == 0)
			p->d.groups = (struct tq_strset){pgroups, 2};
		/* "ANY" as a value is the wildcard: settle folds it */
		if (cdt_pilot_settle(p, NULL) != GB_OK)
			goto out;
	}
	struct fig gm;
	if (drive(AMQ_EX_REQUESTS, "pilot.match", "mixed", npilots, 1024,
		  &gm) == 0)
		printf("mixed pilots (site and platform lists, job types, "
		       "tags, bans, private groups), window 1024: %d pilots, "
		       "%d matched, %.2f s: %.0f matches/s, latency p50 %.2f "
		       "ms, p99 %.2f ms\n",
		       npilots, gm.matched, gm.secs, gm.rate, gm.p50, gm.p99);
	free(mixed_sites);
	free(mixed_plats);
	free(mixed_ban);
out:
	stop_all(w, NWORKERS);
	free(pilots);
	free(res);
	free(pilot_names);
	return 0;
}
