/*
** config.h — the worker's and the CLI's configuration.
**
** A declarative key table (cfg_keys[]: section, name, type, default, range,
** reloadable, help), in the manner of pgbouncer's CfKey table, filled from an
** INI file by inih. Loading validates every key and reports every error, not
** just the first; secrets are never config values, only paths of files that
** hold them (or systemd credentials: a *_password_file of "cred:NAME" reads
** $CREDENTIALS_DIRECTORY/NAME).
**
** Both host keys take a server list, "h1,h2:port,[v6]:port" (hostlist.h):
** loading checks it, the clients fail over along it. The tls_* keys of a
** section are checked together: a certificate needs its key, and TLS with
** verification needs a CA file; every file named must be readable, and a
** private key, like a password file, not accessible to other users (it may
** also be "cred:NAME", a systemd credential).
**
** Keys (section.name — default):
**   amqp.host 127.0.0.1, amqp.port 5672, amqp.vhost /, amqp.user guest,
**   amqp.password_file "", amqp.heartbeat 30 (s), amqp.prefetch 50,
**   amqp.confirm_window 200, amqp.queue_type quorum (quorum|classic),
**   amqp.delivery_limit 20, amqp.reconnect_max 30 (s), amqp.tls 0,
**   amqp.tls_ca_file "", amqp.tls_cert_file "", amqp.tls_key_file "",
**   amqp.tls_verify 1
**   database.host 127.0.0.1, database.port 3306, database.socket "",
**   database.name gridbroker, database.user gridbroker,
**   database.password_file "", database.tls 0, database.tls_ca_file "",
**   database.tls_cert_file "", database.tls_key_file "",
**   database.tls_verify 1
**   worker.id "" (default: hostname:pid), worker.log_level info (reloadable),
**   worker.pending_scan_interval 10 (s, reloadable),
**   worker.outbox_scan_interval 5 (s, reloadable), worker.outbox_lease 30 (s),
**   worker.max_message_bytes 1048576, worker.max_decode_bytes 8388608,
**   worker.clock_offset_file "" (reloadable; test seam: a file holding
**   seconds to add to the wall clock, re-read on every use),
**   worker.watchdog 1, worker.metrics_listen 127.0.0.1:9464 (empty = off),
**   worker.metrics_allow_remote 0, worker.decision_retention_days 30 (0 = forever,
**   reloadable), worker.decision_retention_interval 60 (s, reloadable),
**   worker.backlog_interval 30 (s, 0 = off, reloadable),
**   worker.decision_inputs_dir "" (reloadable; empty = off: see
**   pipeline/dump.h), worker.decision_inputs 1 (reloadable),
**   worker.decision_inputs_max_jobs 2000 (reloadable; see pipeline/dump.h)
*/
#ifndef GB_CONFIG_H
#define GB_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#define CFG_STR 256

struct gb_config {
	/* [amqp] */
	char amqp_host[CFG_STR];
	int amqp_port;
	char amqp_vhost[CFG_STR];
	char amqp_user[CFG_STR];
	char amqp_password_file[PATH_MAX];
	int amqp_heartbeat;      /* s */
	int amqp_prefetch;       /* unacked deliveries per consumer */
	int amqp_confirm_window; /* unconfirmed publishes in flight */
	char amqp_queue_type[16]; /* "quorum" or "classic" */
	int amqp_delivery_limit; /* quorum x-delivery-limit */
	int amqp_reconnect_max;  /* s, backoff ceiling */
	int amqp_tls;            /* 1: AMQPS */
	char amqp_tls_ca_file[PATH_MAX];
	char amqp_tls_cert_file[PATH_MAX];
	char amqp_tls_key_file[PATH_MAX]; /* path or cred:NAME */
	int amqp_tls_verify;     /* 1: check the chain and the host name */
	int amqp_declare;        /* 1: the CLI declares the topology */
	/* [database] */
	char db_host[CFG_STR];
	int db_port;
	char db_socket[PATH_MAX];
	char db_name[64];
	char db_user[64];
	char db_password_file[PATH_MAX];
	int db_tls;              /* 1: TLS required */
	char db_tls_ca_file[PATH_MAX];
	char db_tls_cert_file[PATH_MAX];
	char db_tls_key_file[PATH_MAX]; /* path or cred:NAME */
	int db_tls_verify;       /* 1: check the chain and the host name */
	/* [worker] */
	char worker_id[128];
	char log_level[16];
	int pending_scan_interval; /* s */
	int outbox_scan_interval;  /* s */
	int outbox_lease;          /* s */
	int max_message_bytes;
	int max_decode_bytes;
	char clock_offset_file[PATH_MAX];
	int watchdog;              /* 1: ping systemd's watchdog */
	char metrics_listen[CFG_STR]; /* host:port of /metrics, "" = off */
	int metrics_allow_remote;  /* 1: metrics_listen may be non-loopback */
	int decision_retention_days;     /* 0 = keep decisions forever */
	int decision_retention_interval; /* s between retention passes */
	int backlog_interval;      /* s between backlog counts, 0 = off */
	char decision_inputs_dir[PATH_MAX]; /* "" = no scenario dumps */
	int decision_inputs;       /* 1: store each decision's inputs */
	int decision_inputs_max_jobs; /* pilot: index jobs up to which */
	/* [dirac] */
	int match_batch;           /* pilot.match requests per group commit */
	int broker_batch;          /* brokerage requests per group commit */
	int index_refresh_ms;      /* task queue index refresh period */
	int leader_lease;          /* s, priority/history leader lease */
	int priority_interval;     /* s, PR-08 periodic recomputation */
	int history_interval;      /* s, running-job history sample period */
	int history_keep;          /* s, history kept */
	int cleanup_age;           /* s, empty task queues kept */
	int removal_log_keep;      /* s, tq_removed rows kept */
	char owner_check[8];       /* "auto", "on" or "off" (pilot_grants) */
	int owner_check_refresh;   /* s between pilot_grants reloads */
	/* [panda] */
	int timeout_interval;      /* s between timeout scans */
	int timeout_batch;         /* due jobs per scan transaction */
	int exempt_recheck;        /* s, TO-12 exempt jobs looked at again */
	int fast_rebro_interval;   /* s, TO-13 passes on the leader; 0 = off */

	/* Not keys: secrets read from the *_password_file paths. */
	char amqp_password[CFG_STR];
	char db_password[CFG_STR];
	/* Not keys: the tls_key_file paths the client libraries open, with a
	** cred:NAME resolved; "" when the section's tls is 0. */
	char amqp_tls_key[PATH_MAX];
	char db_tls_key[PATH_MAX];
};

enum cfg_type { CFG_T_INT = 0, CFG_T_STRING, CFG_T_PATH, CFG_T_ENUM };

struct cfg_key {
	const char *section;
	const char *name;
	enum cfg_type type;
	size_t offset; /* into struct gb_config */
	size_t size;   /* buffer size for strings */
	long min, max; /* for ints */
	const char *choices; /* "a|b" for enums */
	const char *def;     /* default, parsed like a file value */
	int reloadable;
	const char *help;
};

/* The key table, terminated by a row with name == NULL. */
extern const struct cfg_key cfg_keys[];

/* Fill `c` with every default. */
void cfg_defaults(struct gb_config *c);

/*
** Load `path` over the defaults, validate every key and read the password
** files. On failure returns GB_ECONFIG and writes every problem, one per
** line ("gridbroker.conf:12: amqp.port: 70000 not in [1, 65535]"), into err.
*/
int cfg_load(const char *path, struct gb_config *c, char *err, size_t errlen);

/*
** Reload `path` into `cur`: only reloadable keys change; a changed key that
** is not reloadable is reported in `warn` and kept. On error `cur` is left
** untouched and GB_ECONFIG (GB_ENOMEM when memory runs out) returned.
*/
int cfg_reload(const char *path, struct gb_config *cur, char *warn,
	       size_t warnlen, char *err, size_t errlen);

/* Print the effective configuration as INI (secrets never printed). */
void cfg_print(const struct gb_config *c, FILE *out);

#endif
