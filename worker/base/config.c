/*
** config.c — the configuration key table, its loader, reloader and printer.
**
** The meaning of the file lives in one declarative table, cfg_keys[], in the
** manner of pgbouncer's CfKey table: every row names a key, its type, where
** it lands in struct gb_config, its range or choices, its default *as text*
** (parsed by the same cfg_set() that parses file values, so a default can
** never escape validation), whether SIGHUP may change it, and one line of
** help. Loading, reloading, printing and the sample file's test all walk the
** table, so adding a key is one row.
**
** inih does the lexing. Its handler is not told line numbers (Debian's
** libinih is built without INI_HANDLER_LINENO, and defining it here would
** change the callback's ABI), so the file is fed through ini_parse_stream()
** with our own line reader. The reader counts lines, and it also rejects
** what inih would only report as "first error on line N": malformed lines,
** lines longer than inih's buffer (which inih would silently split in two)
** and indented lines (which inih would glue to the previous value). It hands
** inih an empty line instead, so every problem of a file is reported
** together, one per line, HAProxy-style, instead of one per attempt.
**
** Secrets are never values: *_password_file names a file (or "cred:NAME",
** a systemd credential under $CREDENTIALS_DIRECTORY) that must not be
** accessible to other users. Load time is rare (start, SIGHUP), so the code
** favours clear messages over speed.
*/
#include "base/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "gb_error.h"
#include "base/hostlist.h"

#define FIELD_SIZE(f) sizeof(((struct gb_config *)0)->f)

#define K_INT(sec, nm, f, lo, hi, def, rl, help)                              \
	{ sec, nm, CFG_T_INT, offsetof(struct gb_config, f), sizeof(int), lo, \
	  hi, NULL, def, rl, help }
#define K_STR(sec, nm, f, def, rl, help)                                     \
	{ sec, nm, CFG_T_STRING, offsetof(struct gb_config, f), FIELD_SIZE(f), \
	  0, 0, NULL, def, rl, help }
#define K_PATH(sec, nm, f, def, rl, help)                                   \
	{ sec, nm, CFG_T_PATH, offsetof(struct gb_config, f), FIELD_SIZE(f), \
	  0, 0, NULL, def, rl, help }
#define K_ENUM(sec, nm, f, choices, def, rl, help)                          \
	{ sec, nm, CFG_T_ENUM, offsetof(struct gb_config, f), FIELD_SIZE(f), \
	  0, 0, choices, def, rl, help }

/*
** The keys [amqp] and [database] share, for the server each connects to:
** its password and its TLS files and checks (the fields pre_password_file,
** pre_tls_*). The two sections differ only in the words of the help, so
** they are written once: `what` names the password ("AMQP"), `peer` the
** other end ("broker").
*/
#define K_PASSWORD_FILE(sec, pre, what)                                      \
	K_PATH(sec, "password_file", pre##_password_file, "", 0,             \
	       "file holding the " what " password, or cred:NAME for a "     \
	       "systemd credential; empty means no password")
#define K_TLS_FILES(sec, pre, peer)                                          \
	K_PATH(sec, "tls_ca_file", pre##_tls_ca_file, "", 0,                 \
	       "PEM file of the CA certificates the " peer "'s certificate " \
	       "must chain to; needed when tls_verify is 1"),                \
	K_PATH(sec, "tls_cert_file", pre##_tls_cert_file, "", 0,             \
	       "PEM client certificate shown to the " peer "; needs "        \
	       "tls_key_file"),                                              \
	K_PATH(sec, "tls_key_file", pre##_tls_key_file, "", 0,               \
	       "PEM private key of tls_cert_file (unencrypted), or cred:NAME " \
	       "for a systemd credential"),                                  \
	K_INT(sec, "tls_verify", pre##_tls_verify, 0, 1, "1", 0,             \
	      "1: verify the " peer "'s certificate and that it names the "  \
	      "host connected to; 0: encrypt only")

/*
** Ranges are what the code that uses a value can live with, not what is
** advisable: 0 heartbeat is legal AMQP (no heartbeats), prefetch is a
** 16-bit field in basic.qos, 128 MiB is RabbitMQ's own message size cap.
*/
const struct cfg_key cfg_keys[] = {
	K_STR("amqp", "host", amqp_host, "127.0.0.1", 0,
	      "RabbitMQ host name or address"),
	K_INT("amqp", "port", amqp_port, 1, 65535, "5672", 0,
	      "RabbitMQ AMQP port"),
	K_STR("amqp", "vhost", amqp_vhost, "/", 0, "AMQP virtual host"),
	K_STR("amqp", "user", amqp_user, "guest", 0, "AMQP user name"),
	K_PASSWORD_FILE("amqp", amqp, "AMQP"),
	K_INT("amqp", "heartbeat", amqp_heartbeat, 0, 600, "30", 0,
	      "AMQP heartbeat interval, seconds; 0 disables heartbeats"),
	K_INT("amqp", "prefetch", amqp_prefetch, 1, 65535, "50", 0,
	      "unacknowledged deliveries the broker may push to one worker"),
	K_INT("amqp", "confirm_window", amqp_confirm_window, 1, 65535, "200",
	      0, "publishes awaiting a broker confirm before the worker waits"),
	K_ENUM("amqp", "queue_type", amqp_queue_type, "quorum|classic",
	       "quorum", 0, "type of the queues the worker declares"),
	K_INT("amqp", "delivery_limit", amqp_delivery_limit, 1, 1000, "20", 0,
	      "returns of one message (a consumer that died, a reconnect, a "
	      "requeue) before a quorum queue dead-letters it"),
	K_INT("amqp", "reconnect_max", amqp_reconnect_max, 1, 3600, "30", 0,
	      "ceiling of the broker and database reconnect backoff, seconds"),
	K_INT("amqp", "tls", amqp_tls, 0, 1, "0", 0,
	      "1: connect to RabbitMQ over TLS (AMQPS; port keeps its value, "
	      "AMQPS is usually 5671)"),
	K_TLS_FILES("amqp", amqp, "broker"),
	K_INT("amqp", "declare", amqp_declare, 0, 1, "1", 0,
	      "1: the CLI declares the exchanges and queues when it connects; "
	      "0: it does not (an account without configure permission, such "
	      "as a pilot's or a producer's)"),

	K_STR("database", "host", db_host, "127.0.0.1", 0,
	      "MariaDB host name or address"),
	K_INT("database", "port", db_port, 1, 65535, "3306", 0,
	      "MariaDB TCP port"),
	K_PATH("database", "socket", db_socket, "", 0,
	       "MariaDB Unix socket; empty means TCP to host:port"),
	K_STR("database", "name", db_name, "gridbroker", 0,
	      "database (schema) name"),
	K_STR("database", "user", db_user, "gridbroker", 0,
	      "database user name"),
	K_PASSWORD_FILE("database", db, "database"),
	K_INT("database", "tls", db_tls, 0, 1, "0", 0,
	      "1: connect to MariaDB over TLS and refuse a server without it"),
	K_TLS_FILES("database", db, "server"),

	K_STR("worker", "id", worker_id, "", 0,
	      "worker identity in events and leases; empty means hostname:pid"),
	K_ENUM("worker", "log_level", log_level, "error|warn|info|debug",
	       "info", 1, "least severe level that is logged"),
	K_INT("worker", "pending_scan_interval", pending_scan_interval, 1,
	      3600, "10", 1,
	      "seconds between scans for pending tasks due for another try"),
	K_INT("worker", "outbox_scan_interval", outbox_scan_interval, 1, 3600,
	      "5", 1, "seconds between scans of the outbox for unsent events"),
	K_INT("worker", "outbox_lease", outbox_lease, 1, 3600, "30", 0,
	      "seconds a worker owns outbox rows it is sending before another "
	      "worker may take them"),
	K_INT("worker", "max_message_bytes", max_message_bytes, 1024,
	      134217728, "1048576", 0,
	      "largest request accepted, bytes; larger ones are dead-lettered"),
	K_INT("worker", "max_decode_bytes", max_decode_bytes, 65536,
	      1073741824, "8388608", 0,
	      "memory budget for decoding one message, bytes; at least "
	      "max_message_bytes"),
	K_PATH("worker", "clock_offset_file", clock_offset_file, "", 1,
	       "test seam: file holding seconds added to the wall clock; keep "
	       "empty in production"),
	K_INT("worker", "watchdog", watchdog, 0, 1, "1", 0,
	      "1: ping systemd's watchdog when the unit sets WatchdogSec="),
	K_STR("worker", "metrics_listen", metrics_listen, "127.0.0.1:9464", 0,
	      "host:port of GET /metrics and /healthz; port 0 = any free "
	      "port, empty = off; --instance N adds N-1 to the port"),
	K_INT("worker", "metrics_allow_remote", metrics_allow_remote, 0, 1,
	      "0", 0, "1: allow a metrics_listen address that is not "
	      "loopback"),
	K_INT("worker", "decision_retention_days", decision_retention_days, 0,
	      36500, "30", 1,
	      "days decision records are kept for `gridbroker why`; 0 keeps "
	      "them forever"),
	K_INT("worker", "decision_retention_interval",
	      decision_retention_interval, 1, 86400, "60", 1,
	      "seconds between retention passes (each deletes at most 1000 "
	      "rows per table; a full batch goes on at the next tick)"),
	K_INT("worker", "backlog_interval", backlog_interval, 0, 86400, "30",
	      1, "seconds between counts of the pending and throttled work "
	      "for /metrics (gridbroker_backlog); 0 = off"),
	K_INT("worker", "broker_batch", broker_batch, 1, 256, "32", 0,
	      "task.broker and job.broker requests decided in one transaction "
	      "(group commit); 1 = a transaction each"),
	K_PATH("worker", "decision_inputs_dir", decision_inputs_dir, "", 1,
	       "directory that gets each decision's inputs as a scenario "
	       "file `gridbroker explain` re-decides; empty = off"),
	K_INT("worker", "decision_inputs", decision_inputs, 0, 1, "1", 1,
	      "1: store each decision's inputs (its scenario, compressed) "
	      "with it, for `gridbroker why ... --scenario` and `gridbroker "
	      "replay`; 0: only the record"),
	K_INT("worker", "decision_inputs_max_jobs", decision_inputs_max_jobs,
	      0, 100000000, "2000", 1,
	      "a pilot decision's inputs are the task queue index it saw: "
	      "not stored when the index holds more waiting jobs than this "
	      "(0: never for pilots)"),

	K_INT("dirac", "match_batch", match_batch, 1, 256, "64", 0,
	      "pilot.match requests claimed in one transaction (group commit)"),
	K_INT("dirac", "index_refresh_ms", index_refresh_ms, 10, 60000, "100",
	      1, "milliseconds between refreshes of the task queue index"),
	K_INT("dirac", "leader_lease", leader_lease, 5, 3600, "30", 0,
	      "seconds the worker that recomputes priorities holds the job"),
	K_INT("dirac", "priority_interval", priority_interval, 1, 86400,
	      "120", 1, "seconds between periodic priority recomputations"),
	K_INT("dirac", "history_interval", history_interval, 1, 86400, "900",
	      1, "seconds between samples of the running-job history"),
	K_INT("dirac", "history_keep", history_keep, 3600, 31536000,
	      "1209600", 1, "seconds of running-job history kept"),
	K_INT("dirac", "cleanup_age", cleanup_age, 0, 86400, "300", 1,
	      "seconds an empty task queue is kept before it is deleted"),
	K_ENUM("dirac", "owner_check", owner_check, "auto|on|off", "auto", 1,
	       "check a pilot.match's ownerGroup/ownerDN against the "
	       "pilot_grants rows of the account in its AMQP user_id: on, "
	       "off, or auto (on once pilot_grants has a row)"),
	K_INT("dirac", "owner_check_refresh", owner_check_refresh, 1, 3600,
	      "10", 1, "seconds between reloads of pilot_grants"),
	K_INT("dirac", "removal_log_keep", removal_log_keep, 60, 604800,
	      "3600", 1, "seconds the log of jobs that left their task queues "
	      "is kept for the workers' indexes"),

	K_INT("panda", "timeout_interval", timeout_interval, 1, 86400, "60",
	      1, "seconds between scans for jobs a timeout rule may fire for "
	      "(TO-01..TO-12)"),
	K_INT("panda", "timeout_batch", timeout_batch, 1, 10000, "500", 1,
	      "due jobs claimed per transaction of the timeout scan"),
	K_INT("panda", "exempt_recheck", exempt_recheck, 60, 86400, "900", 1,
	      "seconds before a job at a paused or disableReassign queue "
	      "(TO-12) is looked at again"),
	K_INT("panda", "fast_rebro_interval", fast_rebro_interval, 0, 86400,
	      "600", 1, "seconds between fast rebrokerage passes (TO-13) on "
	      "the leader; 0 = off"),
	{ NULL, NULL, CFG_T_INT, 0, 0, 0, 0, NULL, NULL, 0, NULL },
};

#define CFG_NKEYS (sizeof(cfg_keys) / sizeof(cfg_keys[0]) - 1)

/* ---- message collection ------------------------------------------------ */

/*
** Lines collected into a caller's buffer. When the buffer fills, the last
** line that fits is cut and ends in "...", and later lines are dropped: the
** first errors are the ones to fix first.
*/
struct cfg_msgs {
	char *buf;
	size_t cap;
	size_t len;
	int count;
	int full;
};

static void msgs_init(struct cfg_msgs *m, char *buf, size_t cap)
{
	m->buf = cap ? buf : NULL;
	m->cap = cap;
	m->len = 0;
	m->count = 0;
	m->full = 0;
	if (m->buf)
		m->buf[0] = '\0';
}

static void msgs_add(struct cfg_msgs *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void msgs_add(struct cfg_msgs *m, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	m->count++;
	if (m->buf == NULL || m->full)
		return;
	size_t sep = m->len ? 1 : 0;
	size_t ll = strlen(line);
	size_t room = m->cap - 1 - m->len; /* characters still writable */
	if (sep + ll > room) {
		/* Keep what fits, mark the cut, drop every later line. */
		m->full = 1;
		ll = room > sep ? room - sep : 0;
		sep = room > 0 ? sep : 0;
	}
	if (sep)
		m->buf[m->len++] = '\n';
	memcpy(m->buf + m->len, line, ll);
	m->len += ll;
	m->buf[m->len] = '\0';
	if (m->full && m->len >= 3)
		memcpy(m->buf + m->len - 3, "...", 3);
}

/* ---- values ------------------------------------------------------------- */

static int *key_int(const struct cfg_key *k, struct gb_config *c)
{
	return (int *)(void *)((char *)c + k->offset);
}

static char *key_str(const struct cfg_key *k, struct gb_config *c)
{
	return (char *)c + k->offset;
}

static const int *key_cint(const struct cfg_key *k, const struct gb_config *c)
{
	return (const int *)(const void *)((const char *)c + k->offset);
}

static const char *key_cstr(const struct cfg_key *k,
			    const struct gb_config *c)
{
	return (const char *)c + k->offset;
}

/* Is `v` one of the '|'-separated words of `choices`? */
static int choice_ok(const char *choices, const char *v)
{
	size_t vl = strlen(v);
	const char *p = choices;
	for (;;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == vl && strncmp(p, v, n) == 0)
			return 1;
		if (bar == NULL)
			return 0;
		p = bar + 1;
	}
}

/*
** Parse text `v` for key `k` and store it in `c`. Returns GB_OK, or
** GB_ECONFIG with the reason (without the key name) in `why`. Strings are
** stored zero-filled so two configurations compare equal with memcmp().
*/
static int cfg_set(const struct cfg_key *k, struct gb_config *c,
		   const char *v, char *why, size_t whylen)
{
	size_t len = strlen(v);
	if (k->type == CFG_T_INT) {
		char *end = NULL;
		errno = 0;
		long n = strtol(v, &end, 10);
		if (len == 0 || end == v || *end != '\0') {
			snprintf(why, whylen, "\"%.80s\" is not an integer", v);
			return GB_ECONFIG;
		}
		if (errno == ERANGE || n < k->min || n > k->max) {
			snprintf(why, whylen, "%.80s not in [%ld, %ld]", v,
				 k->min, k->max);
			return GB_ECONFIG;
		}
		*key_int(k, c) = (int)n;
		return GB_OK;
	}
	if (k->type == CFG_T_ENUM && !choice_ok(k->choices, v)) {
		snprintf(why, whylen, "\"%.80s\" is not one of %s", v,
			 k->choices);
		return GB_ECONFIG;
	}
	if (len >= k->size) {
		snprintf(why, whylen,
			 "value is %zu characters, longer than the limit of %zu",
			 len, k->size - 1);
		return GB_ECONFIG;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)v[i];
		if (ch < 0x20 || ch == 0x7f) {
			snprintf(why, whylen,
				 "value contains a control character");
			return GB_ECONFIG;
		}
	}
	/* inih keeps quotes; a quoted value is nearly always a mistake that
	** would otherwise surface later as "host not found". */
	if (len >= 2 && ((v[0] == '"' && v[len - 1] == '"') ||
			 (v[0] == '\'' && v[len - 1] == '\''))) {
		snprintf(why, whylen,
			 "values are not quoted in this file; remove the quotes");
		return GB_ECONFIG;
	}
	char *dst = key_str(k, c);
	memset(dst, 0, k->size);
	memcpy(dst, v, len);
	return GB_OK;
}

/* Format the value of `k` in `c` as it would be written in the file. */
static void cfg_format(const struct cfg_key *k, const struct gb_config *c,
		       char *buf, size_t len)
{
	if (k->type == CFG_T_INT)
		snprintf(buf, len, "%d", *key_cint(k, c));
	else
		snprintf(buf, len, "%s", key_cstr(k, c));
}

static int cfg_equal(const struct cfg_key *k, const struct gb_config *a,
		     const struct gb_config *b)
{
	if (k->type == CFG_T_INT)
		return *key_cint(k, a) == *key_cint(k, b);
	return strcmp(key_cstr(k, a), key_cstr(k, b)) == 0;
}

static const struct cfg_key *cfg_find(const char *section, const char *name)
{
	for (const struct cfg_key *k = cfg_keys; k->name; k++)
		if (strcmp(k->section, section) == 0 &&
		    strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

static int section_known(const char *section)
{
	for (const struct cfg_key *k = cfg_keys; k->name; k++)
		if (strcmp(k->section, section) == 0)
			return 1;
	return 0;
}

void cfg_defaults(struct gb_config *c)
{
	memset(c, 0, sizeof(*c));
	for (const struct cfg_key *k = cfg_keys; k->name; k++) {
		char why[256];
		/* Cannot fail: tests/unit/base/test_config.c checks every default
		** through this same path. */
		(void)cfg_set(k, c, k->def, why, sizeof(why));
	}
}

/* ---- parsing ------------------------------------------------------------ */

struct cfg_parse {
	FILE *f;
	const char *path;
	struct gb_config *c;
	struct cfg_msgs *err;
	int lineno;           /* line the reader handed inih last */
	int lines[CFG_NKEYS]; /* line each key was set on, 0: default */
};

/* Report a problem with `k` at `line` (0: the key kept its default). */
static void key_error(struct cfg_parse *p, const struct cfg_key *k, int line,
		      const char *why)
{
	if (line > 0)
		msgs_add(p->err, "%s:%d: %s.%s: %s", p->path, line, k->section,
			 k->name, why);
	else
		msgs_add(p->err, "%s: %s.%s: %s", p->path, k->section, k->name,
			 why);
}

/*
** The fgets()-style reader given to inih. It numbers lines and screens
** them, replacing a bad line by an empty one after reporting it, so inih
** itself only ever sees comments, section headers and key = value lines.
*/
static char *cfg_reader(char *str, int num, void *stream)
{
	struct cfg_parse *p = stream;
	if (fgets(str, num, p->f) == NULL)
		return NULL;
	p->lineno++;
	size_t n = strlen(str);
	if (n > 0 && str[n - 1] != '\n') {
		int ch = fgetc(p->f);
		if (ch != EOF && ch != '\n') {
			while (ch != EOF && ch != '\n')
				ch = fgetc(p->f);
			/* A long comment is harmless; a long setting would be
			** read cut in two, so it is an error. */
			const char *c = str + strspn(str, " \t");
			if (*c != '#' && *c != ';')
				msgs_add(p->err,
					 "%s:%d: line longer than %d characters",
					 p->path, p->lineno, num - 3);
			str[0] = '\0';
			return str;
		}
	}
	/* The UTF-8 byte order mark some editors write. */
	if (p->lineno == 1 && strncmp(str, "\xEF\xBB\xBF", 3) == 0)
		memmove(str, str + 3, strlen(str + 3) + 1);
	/* Leading blanks would make inih treat the line as the continuation
	** of the previous value; an indented key is still a key here. */
	size_t lead = strspn(str, " \t");
	if (lead)
		memmove(str, str + lead, strlen(str + lead) + 1);

	const char *s = str;
	if (*s == '\0' || *s == '\n' || *s == '\r' || *s == ';' || *s == '#')
		return str;
	if (*s == '[' ? strchr(s, ']') != NULL : strpbrk(s, "=:") != NULL)
		return str;
	msgs_add(p->err, "%s:%d: syntax error: expected [section] or key = value",
		 p->path, p->lineno);
	str[0] = '\0';
	return str;
}

static int cfg_handler(void *user, const char *section, const char *name,
		       const char *value)
{
	struct cfg_parse *p = user;
	const struct cfg_key *k = cfg_find(section, name);
	if (k == NULL) {
		if (section[0] == '\0')
			msgs_add(p->err, "%s:%d: %s: key before any [section]",
				 p->path, p->lineno, name);
		else if (!section_known(section))
			msgs_add(p->err, "%s:%d: %s.%s: unknown section [%s]",
				 p->path, p->lineno, section, name, section);
		else
			msgs_add(p->err, "%s:%d: %s.%s: unknown key", p->path,
				 p->lineno, section, name);
		return 1;
	}
	size_t i = (size_t)(k - cfg_keys);
	if (p->lines[i] != 0) {
		char why[64];
		snprintf(why, sizeof(why), "set again (first set on line %d)",
			 p->lines[i]);
		key_error(p, k, p->lineno, why);
		return 1;
	}
	p->lines[i] = p->lineno;
	char why[256];
	if (cfg_set(k, p->c, value, why, sizeof(why)) != GB_OK)
		key_error(p, k, p->lineno, why);
	/* Always "success": inih would otherwise only remember the first
	** failing line, and we already keep every message. */
	return 1;
}

static const struct cfg_key *key_by_field(size_t offset)
{
	for (const struct cfg_key *k = cfg_keys; k->name; k++)
		if (k->offset == offset)
			return k;
	return NULL;
}

/*
** The file `spec` names: "cred:NAME" is $CREDENTIALS_DIRECTORY/NAME, any
** other value the path itself. GB_OK, or GB_ECONFIG with the reason in why.
*/
static int spec_path(const char *spec, char *path, size_t pathlen, char *why,
		     size_t whylen)
{
	if (strncmp(spec, "cred:", 5) == 0) {
		const char *name = spec + 5;
		const char *dir = getenv("CREDENTIALS_DIRECTORY");
		if (name[0] == '\0' || strchr(name, '/') ||
		    strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			snprintf(why, whylen,
				 "\"%.80s\" is not a valid credential name", name);
			return GB_ECONFIG;
		}
		if (dir == NULL || dir[0] == '\0') {
			snprintf(why, whylen,
				 "%.80s needs $CREDENTIALS_DIRECTORY, which systemd "
				 "sets for units with LoadCredential=; it is not "
				 "set",
				 spec);
			return GB_ECONFIG;
		}
		int n = snprintf(path, pathlen, "%s/%s", dir, name);
		if (n < 0 || (size_t)n >= pathlen) {
			snprintf(why, whylen, "credential path too long");
			return GB_ECONFIG;
		}
	} else {
		snprintf(path, pathlen, "%s", spec);
	}
	return GB_OK;
}

/*
** Open the private file `path` (a password or a private key): a regular
** file that other users cannot access. Returns the descriptor, or -1 with
** the reason in why.
*/
static int open_private(const char *path, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open %.200s: %s", path,
			 strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%.200s is not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_mode & 007) {
		snprintf(why, whylen,
			 "%.200s is accessible to other users (mode %04o); "
			 "run chmod o-rwx on it",
			 path, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	return fd;
}

/*
** Read the secret named by `spec` into out[outlen]. "" gives "", "cred:NAME"
** reads $CREDENTIALS_DIRECTORY/NAME, anything else is a file path. Returns
** GB_OK or GB_ECONFIG with the reason in `why`. The file must be a regular
** file of at most 255 bytes that other users cannot access; one trailing
** newline is dropped because editors and `echo` add it.
*/
static int read_secret(const char *spec, char *out, size_t outlen, char *why,
		       size_t whylen)
{
	char path[PATH_MAX];
	memset(out, 0, outlen);
	if (spec[0] == '\0')
		return GB_OK;
	if (spec_path(spec, path, sizeof(path), why, whylen) != GB_OK)
		return GB_ECONFIG;
	int fd = open_private(path, why, whylen);
	if (fd < 0)
		return GB_ECONFIG;
	/* Read one byte past the limit to tell "exactly 255" from "more". */
	char buf[CFG_STR + 1];
	size_t got = 0;
	int rc = GB_OK;
	while (got < sizeof(buf)) {
		ssize_t r = read(fd, buf + got, sizeof(buf) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, whylen, "cannot read %.200s: %s", path,
				 strerror(errno));
			rc = GB_ECONFIG;
			break;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (rc == GB_OK && got > CFG_STR - 1) {
		snprintf(why, whylen, "%.200s is longer than %d bytes", path,
			 CFG_STR - 1);
		rc = GB_ECONFIG;
	}
	if (rc == GB_OK && memchr(buf, '\0', got) != NULL) {
		snprintf(why, whylen, "%.200s contains a NUL byte", path);
		rc = GB_ECONFIG;
	}
	if (rc == GB_OK) {
		if (got > 0 && buf[got - 1] == '\n')
			got--;
		if (got >= outlen) {
			snprintf(why, whylen, "%.200s is too long", path);
			rc = GB_ECONFIG;
		} else {
			memcpy(out, buf, got);
		}
	}
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

/* The line key `k` was set on, 0 when it kept its default. */
static int key_line(const struct cfg_parse *p, const struct cfg_key *k)
{
	return p->lines[k - cfg_keys];
}

/* A host list must parse; the section's port is its entries' default. */
static void check_hosts(struct cfg_parse *p, size_t host, size_t port)
{
	const struct cfg_key *k = key_by_field(host);
	struct hl_list l;
	char why[512];
	int def = *key_int(key_by_field(port), p->c);
	if (hl_parse(key_str(k, p->c), def, &l, why, sizeof(why)) != GB_OK)
		key_error(p, k, key_line(p, k), why);
}

/* Where one section's TLS keys live in struct gb_config. */
struct tls_fields {
	size_t tls, ca, cert, key, verify;
	size_t resolved, resolved_len; /* the key's path, cred: resolved */
};

/*
** A section's TLS keys, together: a certificate and its key come as a
** pair; with tls on, verification needs a CA file, every file named must
** be readable now (a typo found at --check-config, not at the first
** reconnect at night), and the private key must be private, as the
** password files are.
*/
static void check_tls(struct cfg_parse *p, const struct tls_fields *f)
{
	struct gb_config *c = p->c;
	const struct cfg_key *ktls = key_by_field(f->tls);
	const struct cfg_key *kca = key_by_field(f->ca);
	const struct cfg_key *kcert = key_by_field(f->cert);
	const struct cfg_key *kkey = key_by_field(f->key);
	const struct cfg_key *kver = key_by_field(f->verify);
	const char *sec = ktls->section;
	const char *ca = key_str(kca, c), *cert = key_str(kcert, c),
		   *key = key_str(kkey, c);
	char *resolved = (char *)c + f->resolved;
	char why[600];
	memset(resolved, 0, f->resolved_len);

	if (cert[0] && !key[0]) {
		snprintf(why, sizeof(why),
			 "set without %s.tls_key_file (a client certificate "
			 "needs its private key)",
			 sec);
		key_error(p, kcert, key_line(p, kcert), why);
	}
	if (key[0] && !cert[0]) {
		snprintf(why, sizeof(why),
			 "set without %s.tls_cert_file (a private key needs its "
			 "certificate)",
			 sec);
		key_error(p, kkey, key_line(p, kkey), why);
	}
	if (!*key_int(ktls, c))
		return;
	if (*key_int(kver, c) && !ca[0]) {
		snprintf(why, sizeof(why),
			 "needed when %s.tls = 1 and %s.tls_verify = 1 (the CA "
			 "that signed the server's certificate)",
			 sec, sec);
		key_error(p, kca,
			  key_line(p, ktls) ? key_line(p, ktls)
					    : key_line(p, kver),
			  why);
	}
	const struct cfg_key *pub[] = { kca, kcert };
	for (size_t i = 0; i < 2; i++) {
		const char *path = key_str(pub[i], c);
		if (!path[0])
			continue;
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		struct stat st;
		if (fd < 0)
			snprintf(why, sizeof(why), "cannot open %.200s: %s",
				 path, strerror(errno));
		else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
			snprintf(why, sizeof(why), "%.200s is not a regular file",
				 path);
		else
			why[0] = '\0';
		if (fd >= 0)
			close(fd);
		if (why[0])
			key_error(p, pub[i], key_line(p, pub[i]), why);
	}
	if (key[0]) {
		char path[PATH_MAX];
		int fd = -1;
		if (spec_path(key, path, sizeof(path), why, sizeof(why)) ==
		    GB_OK)
			fd = open_private(path, why, sizeof(why));
		if (fd < 0) {
			key_error(p, kkey, key_line(p, kkey), why);
		} else {
			close(fd);
			snprintf(resolved, f->resolved_len, "%s", path);
		}
	}
}

/* [worker] metrics_listen: a well-formed host:port, and loopback unless
** metrics_allow_remote says otherwise: the endpoint has no
** authentication, so exposing it must be a decision. */
static void check_metrics(struct cfg_parse *p)
{
	const struct gb_config *c = p->c;
	if (c->metrics_listen[0] == '\0')
		return;
	const struct cfg_key *k =
		key_by_field(offsetof(struct gb_config, metrics_listen));
	char host[CFG_STR], why[CFG_STR + 160];
	int port = 0, loopback = 0;
	if (hl_parse_listen(c->metrics_listen, host, sizeof(host), &port,
			    &loopback, why, sizeof(why)) != GB_OK)
		key_error(p, k, p->lines[k - cfg_keys], why);
	else if (!loopback && !c->metrics_allow_remote)
		key_error(p, k, p->lines[k - cfg_keys],
			  "not a loopback address: the endpoint has no "
			  "authentication; set worker.metrics_allow_remote = 1 "
			  "to serve it on another interface");
}

/* Checks that involve more than one key, run once the file is parsed. */
static void cross_checks(struct cfg_parse *p)
{
	struct gb_config *c = p->c;
	if (c->max_decode_bytes < c->max_message_bytes) {
		const struct cfg_key *k = key_by_field(
			offsetof(struct gb_config, max_decode_bytes));
		const struct cfg_key *m = key_by_field(
			offsetof(struct gb_config, max_message_bytes));
		size_t ki = (size_t)(k - cfg_keys), mi = (size_t)(m - cfg_keys);
		char why[160];
		snprintf(why, sizeof(why),
			 "%d is less than worker.max_message_bytes (%d)",
			 c->max_decode_bytes, c->max_message_bytes);
		key_error(p, k, p->lines[ki] ? p->lines[ki] : p->lines[mi],
			  why);
	}

	static const struct {
		size_t file, out, outlen;
	} secrets[] = {
		{ offsetof(struct gb_config, amqp_password_file),
		  offsetof(struct gb_config, amqp_password),
		  FIELD_SIZE(amqp_password) },
		{ offsetof(struct gb_config, db_password_file),
		  offsetof(struct gb_config, db_password),
		  FIELD_SIZE(db_password) },
	};
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		const struct cfg_key *k = key_by_field(secrets[i].file);
		char why[512];
		if (read_secret((char *)c + secrets[i].file,
				(char *)c + secrets[i].out, secrets[i].outlen,
				why, sizeof(why)) != GB_OK)
			key_error(p, k, p->lines[k - cfg_keys], why);
	}

	check_metrics(p);
	check_hosts(p, offsetof(struct gb_config, amqp_host),
		    offsetof(struct gb_config, amqp_port));
	check_hosts(p, offsetof(struct gb_config, db_host),
		    offsetof(struct gb_config, db_port));
#define TLS_FIELDS(pre)                                                   \
	{ offsetof(struct gb_config, pre##_tls),                          \
	  offsetof(struct gb_config, pre##_tls_ca_file),                  \
	  offsetof(struct gb_config, pre##_tls_cert_file),                \
	  offsetof(struct gb_config, pre##_tls_key_file),                 \
	  offsetof(struct gb_config, pre##_tls_verify),                   \
	  offsetof(struct gb_config, pre##_tls_key), FIELD_SIZE(pre##_tls_key) }
	static const struct tls_fields tls[] = { TLS_FIELDS(amqp),
						 TLS_FIELDS(db) };
#undef TLS_FIELDS
	for (size_t i = 0; i < sizeof(tls) / sizeof(tls[0]); i++)
		check_tls(p, &tls[i]);
}

/* cfg_load() with messages already set up; see config.h. */
static int cfg_load_msgs(const char *path, struct gb_config *c,
			 struct cfg_msgs *err)
{
	cfg_defaults(c);
	struct cfg_parse p;
	memset(&p, 0, sizeof(p));
	p.path = path;
	p.c = c;
	p.err = err;
	p.f = fopen(path, "r");
	if (p.f == NULL) {
		msgs_add(err, "%s: cannot open: %s", path, strerror(errno));
		return GB_ECONFIG;
	}
	int rc = ini_parse_stream(cfg_reader, &p, cfg_handler, &p);
	int read_failed = ferror(p.f);
	fclose(p.f);
	if (rc == -2)
		msgs_add(err, "%s: out of memory while parsing", path);
	else if (rc > 0) /* a line our reader let through but inih refused */
		msgs_add(err, "%s:%d: syntax error", path, rc);
	if (read_failed)
		msgs_add(err, "%s: read error", path);
	cross_checks(&p);
	return err->count ? GB_ECONFIG : GB_OK;
}

int cfg_load(const char *path, struct gb_config *c, char *err, size_t errlen)
{
	struct cfg_msgs m;
	msgs_init(&m, err, errlen);
	return cfg_load_msgs(path, c, &m);
}

static void wipe_secrets(struct gb_config *c)
{
	explicit_bzero(c->amqp_password, sizeof(c->amqp_password));
	explicit_bzero(c->db_password, sizeof(c->db_password));
}

int cfg_reload(const char *path, struct gb_config *cur, char *warn,
	       size_t warnlen, char *err, size_t errlen)
{
	struct cfg_msgs w, e;
	msgs_init(&w, warn, warnlen);
	msgs_init(&e, err, errlen);
	struct gb_config *nw = malloc(sizeof(*nw));
	if (nw == NULL) {
		msgs_add(&e, "%s: out of memory", path);
		return GB_ENOMEM;
	}
	int rc = cfg_load_msgs(path, nw, &e);
	if (rc != GB_OK) {
		wipe_secrets(nw);
		free(nw);
		return rc;
	}
	for (const struct cfg_key *k = cfg_keys; k->name; k++) {
		if (cfg_equal(k, cur, nw))
			continue;
		if (k->reloadable) {
			memcpy((char *)cur + k->offset, (char *)nw + k->offset,
			       k->size);
			continue;
		}
		char old[PATH_MAX];
		cfg_format(k, cur, old, sizeof(old));
		if (k->type == CFG_T_INT)
			msgs_add(&w,
				 "%s.%s: changed in file but needs a restart; "
				 "keeping %s",
				 k->section, k->name, old);
		else
			msgs_add(&w,
				 "%s.%s: changed in file but needs a restart; "
				 "keeping \"%.200s\"",
				 k->section, k->name, old);
	}
	/* A rotated secret behind an unchanged path is just as stuck; say so
	** without saying what either secret is. */
	if (strcmp(cur->amqp_password, nw->amqp_password) != 0 &&
	    strcmp(cur->amqp_password_file, nw->amqp_password_file) == 0)
		msgs_add(&w, "amqp.password_file: the password changed but "
			     "needs a restart; keeping the old one");
	if (strcmp(cur->db_password, nw->db_password) != 0 &&
	    strcmp(cur->db_password_file, nw->db_password_file) == 0)
		msgs_add(&w, "database.password_file: the password changed but "
			     "needs a restart; keeping the old one");
	wipe_secrets(nw);
	free(nw);
	return GB_OK;
}

void cfg_print(const struct gb_config *c, FILE *out)
{
	const char *section = NULL;
	for (const struct cfg_key *k = cfg_keys; k->name; k++) {
		if (section == NULL || strcmp(section, k->section) != 0) {
			fprintf(out, "%s[%s]\n", section ? "\n" : "",
				k->section);
			section = k->section;
		}
		fprintf(out, "# %s\n# (", k->help);
		if (k->type == CFG_T_INT)
			fprintf(out, "%ld..%ld, default %s", k->min, k->max,
				k->def);
		else if (k->type == CFG_T_ENUM)
			fprintf(out, "%s, default %s", k->choices, k->def);
		else
			fprintf(out, "default \"%s\"", k->def);
		fprintf(out, ", %s)\n",
			k->reloadable ? "reloadable" : "needs a restart");
		char val[PATH_MAX];
		cfg_format(k, c, val, sizeof(val));
		fprintf(out, "%s =%s%s\n", k->name, val[0] ? " " : "", val);
	}
}
