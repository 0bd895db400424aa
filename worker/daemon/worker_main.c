/*
** worker_main.c — gridbroker-worker, the daemon.
**
** One process, one libevent loop, one RabbitMQ connection, one MariaDB
** connection; a host runs N of them (systemd template unit) and a grid runs
** hosts behind the same broker and database. Signals arrive as libevent
** events: SIGTERM/SIGINT drain (stop consuming, finish and confirm what is
** in flight, exit; a second one exits at once), SIGHUP reloads the
** reloadable config keys. systemd is told READY, RELOADING, STOPPING and
** pinged for the watchdog from the housekeeping tick, so a stuck loop is
** restarted.
*/
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "amqp/amqp.h"
#include "base/clock.h"
#include "base/config.h"
#include "gb_error.h"
#include "base/hostlist.h"
#include "daemon/httpd.h"
#include "base/log.h"
#include "base/metrics.h"
#include "pipeline/pipeline.h"
#include "pipeline/retention.h"
#include "store/store.h"

#define GB_SCHEMA_REQUIRED 11 /* migrations this binary needs */
#define TICK_MS 250
#define DRAIN_TIMEOUT_S 30

struct app {
	struct event_base *base;
	struct gb_config cfg;
	char cfg_path[PATH_MAX];
	struct wk_worker w;
	struct amq_callbacks cb;
	struct event *tick;
	int stopping;        /* drain requested */
	double stop_started; /* monotonic s */
	int ready_sent;
	int exit_code;
	double next_pending, next_relay, next_db_try, next_timeout, next_rebro;
	double next_retention; /* decision records (retention.c) */
	double next_backlog;   /* backlog gauges (wk_backlog_scan) */
	double db_backoff;
	double db_down_since; /* clk_mono() when the outage began; 0 = up */
	int read_only_logged; /* the read-only outage has been logged */
	uint64_t watchdog_usec;
	unsigned long ticks;
	struct hd_server *httpd; /* GET /metrics, /healthz; NULL when off */
};

static void on_state(void *ud, int up)
{
	struct app *app = ud;
	if (up) {
		log_info("AMQP connected, consuming");
		if (app->ready_sent)
			mx_wk_reconnect(MX_TG_AMQP);
		if (!app->ready_sent) {
			sd_notify(0, "READY=1\nSTATUS=consuming");
			app->ready_sent = 1;
		} else {
			sd_notify(0, "STATUS=consuming");
		}
	} else {
		log_warn("AMQP connection lost");
		sd_notify(0, "STATUS=AMQP reconnecting");
	}
}

static void on_delivery(void *ud, const struct amq_delivery *d)
{
	struct app *app = ud;
	wk_on_delivery(&app->w, d);
}

static void on_idle(void *ud)
{
	struct app *app = ud;
	wk_on_idle(&app->w);
}

static void on_confirm(void *ud, uint64_t seq, enum amq_confirm outcome)
{
	struct app *app = ud;
	wk_on_confirm(&app->w, seq, outcome);
}

static int amqp_up(struct app *app)
{
	if (app->w.amq)
		return GB_OK;
	app->w.amq = amq_new(app->base, &app->cfg, &app->cb, app);
	if (app->w.amq == NULL)
		return GB_ENOMEM;
	return amq_start(app->w.amq);
}

static void amqp_down(struct app *app)
{
	if (app->w.amq == NULL)
		return;
	/* Unacked deliveries (parked ones too) go back to the queue when the
	** connection closes; unconfirmed events stay in the outbox. */
	wk_park_drop(&app->w);
	wk_group_drop(&app->w);
	amq_free(app->w.amq);
	app->w.amq = NULL;
}

/*
** Database housekeeping: reconnect with backoff. Through a short outage
** (a MariaDB restart) the AMQP connection stays up and the requests that
** arrive are parked (park.c), then replayed; only when the
** outage outlasts DB_HOLD_S is the AMQP connection closed, so that other
** workers, whose database may be fine (another Galera node), get them.
*/
#define DB_HOLD_S 20.0

static void db_housekeeping(struct app *app, double t)
{
	if (app->w.db && !app->w.db_down) {
		app->db_down_since = 0;
		return;
	}
	if (app->db_down_since == 0)
		app->db_down_since = t;
	if (app->w.amq && t - app->db_down_since > DB_HOLD_S) {
		log_warn("database away for %.0f s: closing the AMQP "
			 "connection until it is back (%zu held request(s) "
			 "go back to the queue)",
			 t - app->db_down_since, app->w.nparked);
		amqp_down(app);
	}
	if (t < app->next_db_try)
		return;
	/* A server that refused a write because it is read-only still
	** answers: ask it (no reconnect) and keep holding the requests, with
	** the same backoff and the same AMQP hand-back after DB_HOLD_S, until
	** it takes writes again. */
	if (app->w.db_read_only && app->w.db) {
		int ro = 0;
		if (st_read_only(app->w.db, &ro) == GB_OK && ro) {
			/* Asking is one cheap query: every second, so work
			** resumes within a second of the server's return. */
			if (!app->read_only_logged)
				log_warn("database refuses writes (read_only "
					 "is set): holding requests until it "
					 "takes writes again");
			app->read_only_logged = 1;
			app->next_db_try = t + 1.0;
			sd_notify(0, "STATUS=waiting for the database to "
				     "take writes");
			return;
		}
		if (app->read_only_logged)
			log_info("database takes writes again");
		app->read_only_logged = 0;
		app->w.db_read_only = 0;
	}
	int v = 0, vrc = GB_EDBGONE;
	if (wk_db_connect(&app->w) == GB_OK) {
		vrc = st_schema_version(app->w.db, &v);
		/* A node that accepted the connection and then failed the
		** query (a Galera node leaving the cluster answers 1047, a
		** restart drops it) is an outage, not a wrong schema. */
		if (vrc == GB_EDBGONE) {
			log_warn("database: schema version query: %s (%s)",
				 gb_strerror(vrc), st_error(app->w.db));
			app->w.db_down = 1;
		}
	}
	if (vrc == GB_OK || (vrc != GB_EDBGONE && app->w.db)) {
		app->db_down_since = 0;
		if (vrc != GB_OK || v < GB_SCHEMA_REQUIRED) {
			log_error("database schema version %d, this worker "
				  "needs %d: run `gridbroker db migrate`",
				  v, GB_SCHEMA_REQUIRED);
			app->exit_code = 1;
			event_base_loopbreak(app->base);
			return;
		}
		app->db_backoff = 0.5;
		if (app->w.amq)
			wk_unpark(&app->w);
		else if (!app->stopping && amqp_up(app) != GB_OK)
			log_error("cannot create the AMQP connection");
		return;
	}
	app->db_backoff = app->db_backoff < 0.5 ? 0.5 : app->db_backoff * 2;
	if (app->db_backoff > app->cfg.amqp_reconnect_max)
		app->db_backoff = app->cfg.amqp_reconnect_max;
	app->next_db_try = t + app->db_backoff;
	sd_notify(0, "STATUS=waiting for the database");
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct app *app = arg;
	double t = clk_mono();
	app->ticks++;
	db_housekeeping(app, t);
	if (!app->stopping && app->w.amq) {
		if (t >= app->next_pending) {
			wk_pending_scan(&app->w);
			app->next_pending = t + app->cfg.pending_scan_interval;
		}
		wk_tick(&app->w);
		if (t >= app->next_timeout) {
			/* A full batch means more are due: go on next tick. */
			app->next_timeout = wk_timeout_scan(&app->w)
						    ? t
						    : t + app->cfg.timeout_interval;
		}
		if (app->cfg.fast_rebro_interval > 0 &&
		    t >= app->next_rebro) {
			wk_fast_rebro(&app->w);
			app->next_rebro = t + app->cfg.fast_rebro_interval;
		}
		if (t >= app->next_retention)
			app->next_retention = wk_retention_tick(app->w.db, &app->cfg, t);
		if (app->cfg.backlog_interval > 0 && t >= app->next_backlog) {
			wk_backlog_scan(&app->w);
			app->next_backlog = t + app->cfg.backlog_interval;
		}
		if (t >= app->next_relay) {
			wk_outbox_relay(&app->w);
			app->next_relay = t + app->cfg.outbox_scan_interval;
		}
	}
	/* The tick itself is the loop's proof of progress. */
	if (app->watchdog_usec && app->cfg.watchdog)
		sd_notify(0, "WATCHDOG=1");
	if (app->stopping) {
		size_t inflight = wk_inflight(&app->w);
		if (inflight == 0 || t - app->stop_started > DRAIN_TIMEOUT_S) {
			if (inflight)
				log_warn("drain timeout with %zu publish(es) "
					 "unconfirmed; the outbox keeps them",
					 inflight);
			event_base_loopexit(app->base, NULL);
		}
	}
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct app *app = arg;
	if (sig == SIGHUP) {
		char warn[1024] = "", err[2048] = "";
		sd_notify(0, "RELOADING=1");
		if (cfg_reload(app->cfg_path, &app->cfg, warn, sizeof(warn),
			       err, sizeof(err)) != GB_OK) {
			log_error("reload failed, keeping the old config:\n%s",
				  err);
		} else {
			int lvl = log_level_parse(app->cfg.log_level);
			if (lvl >= 0)
				log_set_level((enum log_level)lvl);
			if (warn[0])
				log_warn("reload: %s", warn);
			clk_set_offset_file(app->cfg.clock_offset_file);
			log_info("configuration reloaded");
		}
		sd_notify(0, "READY=1");
		return;
	}
	if (app->stopping) {
		log_warn("second stop signal: exiting now");
		event_base_loopbreak(app->base);
		return;
	}
	app->stopping = 1;
	app->stop_started = clk_mono();
	sd_notify(0, "STOPPING=1");
	log_info("stop requested: draining %zu in-flight publish(es)",
		 wk_inflight(&app->w));
	if (app->w.amq)
		amq_cancel_consumers(app->w.amq);
}

/* ---- GET /metrics and /healthz (httpd.h) ------------------------------- */

static int http_metrics(void *ud, char *buf, size_t cap, size_t *need)
{
	struct app *app = ud;
	mx_wk_gauges(app->w.amq && amq_is_up(app->w.amq),
		     app->w.db && !app->w.db_down, (double)app->w.nparked,
		     (double)wk_inflight(&app->w));
	return mx_render(mx_wk(), buf, cap, need);
}

static int http_health(void *ud, char *why, size_t cap)
{
	struct app *app = ud;
	int amqp = app->w.amq && amq_is_up(app->w.amq);
	int db = app->w.db && !app->w.db_down;
	snprintf(why, cap, "amqp %s, db %s", amqp ? "up" : "down",
		 db ? "up" : "down");
	return amqp && db;
}

static const struct hd_callbacks http_cb = {http_metrics, http_health};

/*
** Start the endpoint on [worker] metrics_listen. A numeric --instance N
** (the systemd template's %i) moves a non-zero port up by N - 1, so the
** instances of one host share one config file. Not being able to listen
** is logged and the worker goes on: brokering matters more than being
** watched, and the failed scrape is what alerts.
*/
static void http_start(struct app *app, const char *instance)
{
	const char *spec = app->cfg.metrics_listen;
	if (spec[0] == '\0')
		return;
	char host[CFG_STR], err[CFG_STR + 160], moved[CFG_STR + 16];
	int port = 0, loopback = 0;
	if (hl_parse_listen(spec, host, sizeof(host), &port, &loopback, err,
			    sizeof(err)) != GB_OK) {
		log_error("metrics: %s", err);
		return;
	}
	char *end = NULL;
	long n = instance ? strtol(instance, &end, 10) : 0;
	if (port != 0 && instance && *end == '\0' && n >= 1 &&
	    port + n - 1 <= 65535) {
		snprintf(moved, sizeof(moved), strchr(host, ':') ? "[%s]:%ld"
								  : "%s:%ld",
			 host, port + n - 1);
		spec = moved;
	}
	app->httpd = hd_start(app->base, spec, &http_cb, app, err,
			      sizeof(err));
	if (app->httpd == NULL) {
		log_error("metrics: %s; running without /metrics", err);
		return;
	}
	log_info(strchr(host, ':') ? "metrics: listening on [%s]:%d"
				   : "metrics: listening on %s:%d",
		 host, hd_port(app->httpd));
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gridbroker-worker [-c FILE] [--instance NAME] "
		"[--check-config] [--print-config]\n"
		"\n"
		"Consume brokerage requests from RabbitMQ, decide them against "
		"MariaDB\nstate, record the decisions and publish the events.\n"
		"\n"
		"  -c, --config FILE   configuration file (default: "
		"$GB_CONFIG or\n"
		"                      /etc/gridbroker/gridbroker.conf)\n"
		"  -i, --instance NAME instance name, part of the worker id\n"
		"      --check-config  validate the configuration and exit\n"
		"      --print-config  print the effective configuration\n"
		"  -V, --version       print the version\n"
		"  -h, --help          this help\n");
}

int main(int argc, char **argv)
{
	static struct app app;
	const char *instance = NULL;
	int check = 0, print = 0;
	const char *env = getenv("GB_CONFIG");
	snprintf(app.cfg_path, sizeof(app.cfg_path), "%s",
		 env && *env ? env : "/etc/gridbroker/gridbroker.conf");
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"instance", required_argument, NULL, 'i'},
		{"check-config", no_argument, NULL, 'C'},
		{"print-config", no_argument, NULL, 'P'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int o;
	while ((o = getopt_long(argc, argv, "c:i:Vh", opts, NULL)) != -1) {
		switch (o) {
		case 'c':
			snprintf(app.cfg_path, sizeof(app.cfg_path), "%s",
				 optarg);
			break;
		case 'i':
			instance = optarg;
			break;
		case 'C':
			check = 1;
			break;
		case 'P':
			print = 1;
			break;
		case 'V':
			printf("gridbroker-worker %s\n", GB_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	char err[4096] = "";
	if (cfg_load(app.cfg_path, &app.cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "gridbroker-worker: %s: invalid configuration:\n%s\n",
			app.cfg_path, err);
		return 1;
	}
	if (check) {
		printf("%s: configuration OK\n", app.cfg_path);
		return 0;
	}
	if (print) {
		cfg_print(&app.cfg, stdout);
		return 0;
	}
	int lvl = log_level_parse(app.cfg.log_level);
	/* The journal identifier carries the instance, matching the unit's
	** SyslogIdentifier=gridbroker-worker-%i. */
	static char ident[96];
	snprintf(ident, sizeof(ident), "gridbroker-worker%s%s",
		 instance ? "-" : "", instance ? instance : "");
	log_init(ident, lvl < 0 ? LOG_LVL_INFO : (enum log_level)lvl);
	clk_set_offset_file(app.cfg.clock_offset_file);

	char id[160];
	if (app.cfg.worker_id[0]) {
		snprintf(id, sizeof(id), "%s%s%s", app.cfg.worker_id,
			 instance ? "@" : "", instance ? instance : "");
	} else {
		char host[64] = "localhost";
		gethostname(host, sizeof(host) - 1);
		snprintf(id, sizeof(id), "%s:%ld%s%s", host, (long)getpid(),
			 instance ? "@" : "", instance ? instance : "");
	}
	if (wk_init(&app.w, &app.cfg, id, wk_route_table()) != GB_OK) {
		log_error("out of memory");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	app.base = event_base_new();
	if (app.base == NULL) {
		log_error("cannot create the event loop");
		return 1;
	}
	if (mx_wk_init(GB_VERSION, (double)time(NULL)) != GB_OK)
		log_error("metrics: the catalogue does not register (a bug)");
	http_start(&app, instance);
	app.cb.on_delivery = on_delivery;
	app.cb.on_confirm = on_confirm;
	app.cb.on_state = on_state;
	app.cb.on_idle = on_idle;
	app.db_backoff = 0.5;
	sd_watchdog_enabled(0, &app.watchdog_usec);

	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	struct event *sigev[3];
	for (int i = 0; i < 3; i++) {
		sigev[i] = evsignal_new(app.base, sigs[i], on_signal, &app);
		event_add(sigev[i], NULL);
	}
	app.tick = event_new(app.base, -1, EV_PERSIST, on_tick, &app);
	struct timeval tv = {0, TICK_MS * 1000};
	event_add(app.tick, &tv);

	log_info("gridbroker-worker %s starting as %s (config %s)", GB_VERSION,
		 id, app.cfg_path);
	app.w.db_down = 1; /* connect on the first tick */
	on_tick(-1, 0, &app);
	event_base_dispatch(app.base);

	log_info("stopping: %lu decided (%lu assigned, %lu pending), %lu "
		 "duplicates, %lu dead-lettered, %lu retried, %lu relayed; "
		 "pilots: %lu matched, %lu without a job, %lu claims lost; "
		 "%lu jobs submitted, %lu status updates",
		 app.w.n_decided, app.w.n_assigned, app.w.n_pending,
		 app.w.n_dup, app.w.n_dead, app.w.n_retried, app.w.n_relayed,
		 app.w.n_matched, app.w.n_nomatch, app.w.n_claim_lost,
		 app.w.n_submitted, app.w.n_status);
	amqp_down(&app);
	hd_free(app.httpd);
	wk_free(&app.w);
	event_free(app.tick);
	for (int i = 0; i < 3; i++)
		event_free(sigev[i]);
	event_base_free(app.base);
	return app.exit_code;
}
