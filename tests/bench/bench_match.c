/*
** bench_match.c — DIRAC matching at a million waiting jobs, end to end.
**
**   1. load 1,000,000 waiting jobs in 500 task queues (33 sites and 17
**      platforms per TQ, like LHCb's production TaskQueueDB) through
**      st_tq_submit, and time it;
**   2. baseline, in this process: the per-pilot SQL query chain of the
**      seed page (dirac-task-queue-matching): the TQ query ordered by CPU
**      time then RAND()/priority, the UserPriority lottery by
**      ORDER BY RAND()/UserPriority, the ten lowest job ids at that
**      priority, one picked at random, claimed by DELETE;
**   3. two gridbroker-worker processes, pilots driven through RabbitMQ
**      (pilot.match RPCs, direct reply-to, a window of requests in flight):
**      matches per second and p50/p99 latency, and the ratio to (2);
**   4. the same number of pilots described as DIRAC sends them (lists of
**      sites and platforms, job types, tags or ANY, a banned site, some
**      private to two groups): the second configuration.
** Nothing is asserted: the figures and the ratio are printed (timings on a
** shared 2-core machine are noisy; a timed assertion would only flake).
**
** Usage: bench_match [PILOTS [JOBS]]   (defaults 50000, 1000000)
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

#define NTQ 500
#define NSITES 60
#define NPLAT 67
#define SITES_PER_TQ 33
#define PLAT_PER_TQ 17
#define CHUNK 5000
#define BASELINE_PILOTS 1000

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

static int load_jobs(struct st_db *db, long long njobs)
{
	static struct cdt_job jobs[CHUNK];
	static const char *sv[NTQ][SITES_PER_TQ], *pv[NTQ][PLAT_PER_TQ];
	static char owners[NTQ][48];
	for (int k = 0; k < NTQ; k++) {
		shape(k, sv[k], pv[k]);
		size_t ns = SITES_PER_TQ, np = PLAT_PER_TQ;
		tq_strset_normalise(sv[k], &ns);
		tq_strset_normalise(pv[k], &np);
		snprintf(owners[k], sizeof(owners[k]), "/DC=ch/CN=user%d",
			 k % 40);
	}
	long long per_tq = njobs / NTQ;
	struct arena a;
	double t0 = now_s();
	long long done = 0;
	while (done < njobs) {
		int n = 0;
		for (; n < CHUNK && done + n < njobs; n++) {
			long long id = done + n + 1;
			int k = (int)((id - 1) / per_tq) % NTQ;
			struct cdt_job *j = &jobs[n];
			memset(j, 0, sizeof(*j));
			j->job_id = id;
			j->owner = k < 270 ? "/DC=ch/CN=lbprods" : owners[k];
			j->owner_group = k < 270 ? "lhcb_mc"
				       : k < 480 ? "lhcb_data" : "lhcb_user";
			j->setup = "LHCb-Production";
			j->cpu_time = k % 3 ? 259200 : 1080000;
			j->user_priority = 1 + (int)(id % 5);
			j->set[TQ_F_SITES] =
				(struct tq_strset){sv[k], SITES_PER_TQ};
			j->set[TQ_F_PLATFORMS] =
				(struct tq_strset){pv[k], PLAT_PER_TQ};
		}
		arena_init(&a, 64u << 20);
		struct st_tq_submitted out;
		char req[64];
		snprintf(req, sizeof(req), "bench-load-%lld", done);
		int rc = st_begin(db);
		if (rc == GB_OK)
			rc = st_tq_submit(db, jobs, (size_t)n, tq_default_segments,
					  4, req, (long long)time(NULL), &a, &out);
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
	       "(%.0f jobs/s)\n",
	       njobs, NTQ, dt, (double)njobs / dt);
	return GB_OK;
}

/* ---- the baseline: the seed's per-pilot SQL chain ------------------------ */

static MYSQL_STMT *prep(MYSQL *my, const char *sql)
{
	MYSQL_STMT *s = mysql_stmt_init(my);
	if (s == NULL || mysql_stmt_prepare(s, sql, (unsigned long)strlen(sql))) {
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

static double baseline(const struct gb_config *cfg, int npilots)
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
	MYSQL_STMT *q_tq = prep(my,
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
	MYSQL_STMT *q_prio = prep(my,
		"SELECT user_priority FROM tq_jobs WHERE tq_id = ? ORDER BY "
		"RAND() / user_priority ASC LIMIT 1");
	MYSQL_STMT *q_ids = prep(my,
		"SELECT job_id FROM tq_jobs WHERE tq_id = ? AND user_priority "
		"= ? ORDER BY job_id ASC LIMIT 10");
	MYSQL_STMT *q_del = prep(my, "DELETE FROM tq_jobs WHERE job_id = ?");
	struct gb_rng rng;
	gb_rng_seed(&rng, 42);
	int matched = 0;
	double t0 = now_s();
	for (int p = 0; p < npilots; p++) {
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
	double dt = now_s() - t0;
	mysql_stmt_close(q_tq);
	mysql_stmt_close(q_prio);
	mysql_stmt_close(q_ids);
	mysql_stmt_close(q_del);
	mysql_close(my);
	double rate = npilots / dt;
	printf("baseline (per-pilot SQL chain, 1 client): %d pilots, %d "
	       "matched, %.2f s: %.1f matches/s, %.2f ms per pilot\n",
	       npilots, matched, dt, rate, dt * 1e3 / npilots);
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

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines as they happen */
	int npilots = argc > 1 ? atoi(argv[1]) : 50000;
	long long njobs = argc > 2 ? atoll(argv[2]) : 1000000;
	if (npilots <= 0 || njobs < NTQ) {
		fprintf(stderr, "usage: bench_match [PILOTS [JOBS >= %d]]\n",
			NTQ);
		return 2;
	}
	for (int i = 0; i < NSITES; i++)
		snprintf(site_names[i], sizeof(site_names[i]), "LCG.Site%02d.org",
			 i);
	for (int i = 0; i < NPLAT; i++)
		snprintf(plat_names[i], sizeof(plat_names[i]), "x86_64-plat%02d",
			 i);
	for (int i = 0; i < NSITES; i++)
		site_ptr[i] = site_names[i];
	for (int i = 0; i < NPLAT; i++)
		plat_ptr[i] = plat_names[i];
	char self[4096], dir[4096], bin[4200], conf[4200];
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
	struct gb_config cfg;
	char err[4096];
	if (cfg_load(path, &cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "bench_match: %s: %s\n(start the servers with "
				"scripts/services start)\n", path, err);
		return 1;
	}
	snprintf(conf, sizeof(conf), "%s/bench_match.conf", dir);
	if (bench_config(path, conf) != 0) {
		fprintf(stderr, "bench_match: cannot write %s\n", conf);
		return 1;
	}
	struct st_db *db = NULL;
	if (st_open(&cfg, &db, err, sizeof(err)) != GB_OK ||
	    st_migrate(db, GB_SCHEMA_DIR, NULL) != GB_OK) {
		fprintf(stderr, "bench_match: database: %s\n",
			db ? st_error(db) : err);
		return 1;
	}
	const char *wipe[] = {"DELETE FROM pilot_matches", "DELETE FROM tq_jobs",
			      "DELETE FROM tq_requirements",
			      "DELETE FROM task_queues", "DELETE FROM wms_jobs",
			      "DELETE FROM outbox WHERE routing_key LIKE 'pilot.%'"};
	for (size_t i = 0; i < sizeof(wipe) / sizeof(wipe[0]); i++)
		if (st_plain(db, wipe[i], strlen(wipe[i])) != GB_OK) {
			fprintf(stderr, "bench_match: %s: %s\n", wipe[i],
				st_error(db));
			return 1;
		}
	static const struct pr_group groups[] = {
		{"lhcb_mc", 300, 1}, {"lhcb_data", 40000, 1},
		{"lhcb_user", 10000, 0}};
	struct pr_config pc = {.default_share = PR_DEFAULT_SHARE,
			       .groups = groups, .ngroups = 3};
	if (st_tq_config_save(db, &pc, tq_default_segments, 4, 0) != GB_OK ||
	    load_jobs(db, njobs) != GB_OK)
		return 1;
	st_close(db);

	double base = baseline(&cfg, BASELINE_PILOTS);

	pid_t w[2];
	double t0 = now_s();
	for (int i = 0; i < 2; i++)
		w[i] = start_worker(bin, conf, i);
	/* Warm-up: the workers load their index (1M jobs) and compute the
	** priorities; the first pilots wait for that. */
	struct cdt_pilot *pilots = calloc((size_t)npilots, sizeof(*pilots));
	struct pd_result *res = calloc((size_t)npilots, sizeof(*res));
	char (*pid_names)[24] = calloc((size_t)npilots, sizeof(*pid_names));
	if (!pilots || !res || !pid_names)
		return 1;
	for (int i = 0; i < npilots; i++) {
		snprintf(pid_names[i], sizeof(pid_names[i]), "bp-%d", i);
		pd_pilot_one(&pilots[i], pid_names[i], "LHCb-Production",
			     2000000, &site_ptr[i % NSITES],
			     &plat_ptr[(i * 7) % NPLAT]);
	}
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "bench-warm-%ld", (long)time(NULL));
	int warm = npilots < 2000 ? npilots : 2000;
	if (pd_run(&cfg, prefix, pilots, warm, 256, 120000, res, err,
		   sizeof(err)) != 0) {
		fprintf(stderr, "bench_match: warm-up failed: %s\n", err);
		goto out;
	}
	printf("workers ready (index of %lld jobs loaded, %d warm-up "
	       "matches) after %.1f s\n",
	       njobs - BASELINE_PILOTS, warm, now_s() - t0);

	snprintf(prefix, sizeof(prefix), "bench-run-%ld", (long)time(NULL));
	double t1 = now_s();
	int missing = pd_run(&cfg, prefix, pilots, npilots, 1024, 60000, res,
			     err, sizeof(err));
	double dt = now_s() - t1;
	if (missing != 0) {
		fprintf(stderr, "bench_match: %d pilots unanswered (%s)\n",
			missing, err);
		goto out;
	}
	int matched = 0;
	for (int i = 0; i < npilots; i++)
		matched += res[i].matched;
	double rate = npilots / dt;
	printf("gridbroker (2 workers, RabbitMQ RPC, window 1024): %d pilots, "
	       "%d matched, %.2f s: %.0f matches/s\n",
	       npilots, matched, dt, rate);
	printf("latency p50 %.2f ms, p99 %.2f ms\n",
	       pd_percentile(res, npilots, 50), pd_percentile(res, npilots, 99));
	printf("ratio to the per-pilot SQL chain: %.1fx (targets: >= 5000 "
	       "matches/s and >= 30x)\n",
	       rate / base);

	/* The latency a pilot sees when the service is not saturated: the
	** same pilots with 32 in flight. */
	int nlight = npilots < 5000 ? npilots : 5000;
	snprintf(prefix, sizeof(prefix), "bench-light-%ld", (long)time(NULL));
	t1 = now_s();
	missing = pd_run(&cfg, prefix, pilots, nlight, 32, 60000, res, err,
			 sizeof(err));
	dt = now_s() - t1;
	if (missing == 0)
		printf("at 32 in flight: %d pilots, %.0f matches/s, latency "
		       "p50 %.2f ms, p99 %.2f ms\n",
		       nlight, nlight / dt, pd_percentile(res, nlight, 50),
		       pd_percentile(res, nlight, 99));
	else
		fprintf(stderr, "bench_match: %d light-load pilots "
				"unanswered (%s)\n", missing, err);

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
			mixed_sites[3 * i + k] = site_ptr[(i + 17 * k) % NSITES];
		for (int k = 0; k < 2; k++)
			mixed_plats[2 * i + k] =
				plat_ptr[(i * 7 + 29 * k) % NPLAT];
		mixed_ban[i] = site_ptr[(i + 5) % NSITES];
		p->d.want[TQ_P_SITE] = (struct tq_strset){&mixed_sites[3 * i], 3};
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
	snprintf(prefix, sizeof(prefix), "bench-mixed-%ld", (long)time(NULL));
	t1 = now_s();
	missing = pd_run(&cfg, prefix, pilots, npilots, 1024, 60000, res, err,
			 sizeof(err));
	dt = now_s() - t1;
	if (missing == 0) {
		matched = 0;
		for (int i = 0; i < npilots; i++)
			matched += res[i].matched;
		printf("mixed pilots (site and platform lists, job types, "
		       "tags, bans, private groups), window 1024: %d pilots, "
		       "%d matched, %.2f s: %.0f matches/s, latency p50 %.2f "
		       "ms, p99 %.2f ms\n",
		       npilots, matched, dt, npilots / dt,
		       pd_percentile(res, npilots, 50),
		       pd_percentile(res, npilots, 99));
	} else {
		fprintf(stderr, "bench_match: %d mixed pilots unanswered (%s)\n",
			missing, err);
	}
	free(mixed_sites);
	free(mixed_plats);
	free(mixed_ban);
out:
	for (int i = 0; i < 2; i++) {
		kill(w[i], SIGTERM);
		waitpid(w[i], NULL, 0);
	}
	free(pilots);
	free(res);
	free(pid_names);
	return 0;
}
