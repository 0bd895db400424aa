/*
** test_config.c — the key table, cfg_load, cfg_reload, cfg_print and the
** shipped etc/gridbroker.conf.
**
** Files are written at run time into a fresh directory under $TMPDIR (or
** the C library's P_tmpdir) and removed afterwards. Error cases are a
** table of (file text, line, expected message) so a new validation rule is
** one row. The test runs from the repository root (ctest sets the working
** directory), which is how it finds etc/gridbroker.conf.
*/
#include "gbtest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config.h"
#include "gb_error.h"
#include "base/log.h"

/* Scratch paths are kept short so every "tdir/name" fits in a TPATH buffer
** (and the compiler can prove it: the build uses -Werror). */
#define TPATH 1024
static char tdir[256]; /* per-run scratch directory */
static char conf[320]; /* tdir/t.conf, rewritten by each case */

/* ---- helpers ------------------------------------------------------------ */

static int rm_tree(const char *path)
{
	DIR *d = opendir(path);
	if (d != NULL) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 ||
			    strcmp(e->d_name, "..") == 0)
				continue;
			char sub[TPATH];
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			rm_tree(sub);
		}
		closedir(d);
		return rmdir(path);
	}
	return unlink(path);
}

static int group_setup(void **state)
{
	(void)state;
	const char *base = getenv("TMPDIR");
	if (base == NULL || base[0] == '\0')
		base = P_tmpdir;
	int n = snprintf(tdir, sizeof(tdir), "%s/gbcfg.XXXXXX", base);
	if (n < 0 || (size_t)n >= sizeof(tdir) || mkdtemp(tdir) == NULL)
		return -1;
	snprintf(conf, sizeof(conf), "%s/t.conf", tdir);
	unsetenv("CREDENTIALS_DIRECTORY");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return rm_tree(tdir);
}

/* Write `len` bytes to tdir/name with `mode`; the full path goes to out. */
static void write_bytes(const char *name, const char *data, size_t len,
			mode_t mode, char *out, size_t outlen)
{
	char path[TPATH];
	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	if (out)
		snprintf(out, outlen, "%s", path);
}

static void write_conf(const char *text)
{
	write_bytes("t.conf", text, strlen(text), 0600, NULL, 0);
}

static const struct cfg_key *find_key(const char *dotted)
{
	for (const struct cfg_key *k = cfg_keys; k->name; k++) {
		size_t sl = strlen(k->section);
		if (strncmp(dotted, k->section, sl) == 0 &&
		    dotted[sl] == '.' && strcmp(dotted + sl + 1, k->name) == 0)
			return k;
	}
	return NULL;
}

static size_t nkeys(void)
{
	size_t n = 0;
	while (cfg_keys[n].name)
		n++;
	return n;
}

/* The value of `k` in `c` as text, read through the table's offset. */
static void key_text(const struct cfg_key *k, const struct gb_config *c,
		     char *buf, size_t len)
{
	const char *p = (const char *)c + k->offset;
	if (k->type == CFG_T_INT) {
		int v;
		memcpy(&v, p, sizeof(v));
		snprintf(buf, len, "%d", v);
	} else {
		snprintf(buf, len, "%s", p);
	}
}

static int choice_in(const char *choices, const char *v)
{
	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%s", choices);
	char *save = NULL;
	for (char *w = strtok_r(tmp, "|", &save); w;
	     w = strtok_r(NULL, "|", &save))
		if (strcmp(w, v) == 0)
			return 1;
	return 0;
}

static int count_lines(const char *s)
{
	if (s[0] == '\0')
		return 0;
	int n = 1;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#define assert_contains(hay, needle)                                     \
	do {                                                             \
		if (strstr((hay), (needle)) == NULL)                     \
			fail_msg("expected \"%s\" in:\n%s", (needle), (hay)); \
	} while (0)

/*
** Walk INI text and record, per key of the table, whether it appears in
** its section and the comment lines right above it (joined with ' ').
** Returns how many keys appeared.
*/
#define NOTE_MAX 1024
static size_t scan_ini(const char *text, int *seen, char (*notes)[NOTE_MAX])
{
	char section[64] = "", note[NOTE_MAX] = "";
	size_t found = 0;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char line[512];
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		p += n + (nl ? 1 : 0);
		if (line[0] == '#') {
			size_t used = strlen(note);
			snprintf(note + used, sizeof(note) - used, "%s ",
				 line + 1);
			continue;
		}
		if (line[0] == '[') {
			sscanf(line, "[%63[^]]]", section);
			note[0] = '\0';
			continue;
		}
		char *eq = strchr(line, '=');
		if (eq == NULL) {
			note[0] = '\0';
			continue;
		}
		char name[128];
		snprintf(name, sizeof(name), "%s.%.*s", section,
			 (int)strcspn(line, " ="), line);
		const struct cfg_key *k = find_key(name);
		if (k != NULL) {
			size_t i = (size_t)(k - cfg_keys);
			found += !seen[i];
			seen[i] = 1;
			snprintf(notes[i], NOTE_MAX, "%s", note);
		}
		note[0] = '\0';
	}
	return found;
}

/* Long values, built from literals so the tables stay static. */
#define S10 "aaaaaaaaaa"
#define S70 S10 S10 S10 S10 S10 S10 S10
#define S250 S70 S70 S70 S10 S10 S10 S10

/* ---- the table ---------------------------------------------------------- */

/* Every key config.h promises, with its default and reloadability. */
static const struct {
	const char *key, *def;
	int reloadable;
} promised[] = {
	{ "amqp.host", "127.0.0.1", 0 },
	{ "amqp.port", "5672", 0 },
	{ "amqp.vhost", "/", 0 },
	{ "amqp.user", "guest", 0 },
	{ "amqp.password_file", "", 0 },
	{ "amqp.heartbeat", "30", 0 },
	{ "amqp.prefetch", "50", 0 },
	{ "amqp.confirm_window", "200", 0 },
	{ "amqp.queue_type", "quorum", 0 },
	{ "amqp.delivery_limit", "20", 0 },
	{ "amqp.reconnect_max", "30", 0 },
	{ "amqp.tls", "0", 0 },
	{ "amqp.tls_ca_file", "", 0 },
	{ "amqp.tls_cert_file", "", 0 },
	{ "amqp.tls_key_file", "", 0 },
	{ "amqp.tls_verify", "1", 0 },
	{ "amqp.declare", "1", 0 },
	{ "database.host", "127.0.0.1", 0 },
	{ "database.port", "3306", 0 },
	{ "database.socket", "", 0 },
	{ "database.name", "gridbroker", 0 },
	{ "database.user", "gridbroker", 0 },
	{ "database.password_file", "", 0 },
	{ "database.tls", "0", 0 },
	{ "database.tls_ca_file", "", 0 },
	{ "database.tls_cert_file", "", 0 },
	{ "database.tls_key_file", "", 0 },
	{ "database.tls_verify", "1", 0 },
	{ "worker.id", "", 0 },
	{ "worker.log_level", "info", 1 },
	{ "worker.pending_scan_interval", "10", 1 },
	{ "worker.outbox_scan_interval", "5", 1 },
	{ "worker.outbox_lease", "30", 0 },
	{ "worker.max_message_bytes", "1048576", 0 },
	{ "worker.max_decode_bytes", "8388608", 0 },
	{ "worker.clock_offset_file", "", 1 },
	{ "worker.watchdog", "1", 0 },
	{ "worker.metrics_listen", "127.0.0.1:9464", 0 },
	{ "worker.metrics_allow_remote", "0", 0 },
	{ "worker.decision_retention_days", "30", 1 },
	{ "worker.decision_retention_interval", "60", 1 },
	{ "worker.backlog_interval", "30", 1 },
	{ "worker.broker_batch", "32", 0 },
	{ "worker.decision_inputs_dir", "", 1 },
	{ "worker.decision_inputs", "1", 1 },
	{ "worker.decision_inputs_max_jobs", "2000", 1 },
	{ "dirac.match_batch", "64", 0 },
	{ "dirac.index_refresh_ms", "100", 1 },
	{ "dirac.leader_lease", "30", 0 },
	{ "dirac.priority_interval", "120", 1 },
	{ "dirac.history_interval", "900", 1 },
	{ "dirac.history_keep", "1209600", 1 },
	{ "dirac.cleanup_age", "300", 1 },
	{ "dirac.owner_check", "auto", 1 },
	{ "dirac.owner_check_refresh", "10", 1 },
	{ "dirac.removal_log_keep", "3600", 1 },
	{ "panda.timeout_interval", "60", 1 },
	{ "panda.timeout_batch", "500", 1 },
	{ "panda.exempt_recheck", "900", 1 },
	{ "panda.fast_rebro_interval", "600", 1 },
};
#define N_PROMISED (sizeof(promised) / sizeof(promised[0]))

static void test_table_matches_header(void **state)
{
	(void)state;
	struct gb_config c;
	cfg_defaults(&c);
	assert_int_equal(nkeys(), N_PROMISED);
	for (size_t i = 0; i < N_PROMISED; i++) {
		const struct cfg_key *k = find_key(promised[i].key);
		if (k == NULL)
			fail_msg("%s missing from cfg_keys", promised[i].key);
		assert_string_equal(k->def, promised[i].def);
		assert_int_equal(k->reloadable, promised[i].reloadable);
		char v[TPATH];
		key_text(k, &c, v, sizeof(v));
		assert_string_equal(v, promised[i].def);
	}
}

static void test_defaults_in_range(void **state)
{
	(void)state;
	struct gb_config c;
	cfg_defaults(&c);
	for (const struct cfg_key *k = cfg_keys; k->name; k++) {
		assert_true(k->help != NULL && k->help[0] != '\0');
		assert_true(k->offset + k->size <= sizeof(struct gb_config));
		char v[TPATH];
		key_text(k, &c, v, sizeof(v));
		switch (k->type) {
		case CFG_T_INT: {
			assert_int_equal(k->size, sizeof(int));
			assert_true(k->min <= k->max);
			long n = strtol(v, NULL, 10);
			if (n < k->min || n > k->max)
				fail_msg("%s.%s default %ld not in [%ld, %ld]",
					 k->section, k->name, n, k->min,
					 k->max);
			break;
		}
		case CFG_T_ENUM:
			assert_true(choice_in(k->choices, v));
			assert_true(strlen(k->choices) < sizeof(v));
			break;
		case CFG_T_STRING:
		case CFG_T_PATH:
			assert_true(strlen(v) < k->size);
			break;
		}
	}
	assert_true(c.max_decode_bytes >= c.max_message_bytes);
	assert_string_equal(c.amqp_password, "");
	assert_string_equal(c.db_password, "");
	/* Every level the config accepts is one the logger knows. */
	const struct cfg_key *lk = find_key("worker.log_level");
	char tmp[128];
	snprintf(tmp, sizeof(tmp), "%s", lk->choices);
	char *save = NULL;
	for (char *w = strtok_r(tmp, "|", &save); w;
	     w = strtok_r(NULL, "|", &save))
		assert_true(log_level_parse(w) >= 0);
}

static void test_empty_file_is_defaults(void **state)
{
	(void)state;
	struct gb_config want, got;
	char err[1024];
	cfg_defaults(&want);
	write_conf("# nothing but a comment\n\n");
	assert_int_equal(cfg_load(conf, &got, err, sizeof(err)), GB_OK);
	assert_string_equal(err, "");
	assert_memory_equal(&want, &got, sizeof(want));
}

/* ---- a full file -------------------------------------------------------- */

static void test_full_file_roundtrip(void **state)
{
	(void)state;
	char amqp_pw[TPATH], db_pw[TPATH], text[16384], err[2048];
	char ca[TPATH], crt[TPATH], key[TPATH], dca[TPATH], dcrt[TPATH],
		dkey[TPATH];
	write_bytes("amqp-pw", "amqp-secret\n", 12, 0600, amqp_pw,
		    sizeof(amqp_pw));
	write_bytes("db-pw", "db-secret", 9, 0400, db_pw, sizeof(db_pw));
	/* The loader only checks that the TLS files are there (and the keys
	** private); what is in them is the client libraries' business. */
	write_bytes("ca.pem", "ca\n", 3, 0644, ca, sizeof(ca));
	write_bytes("client.pem", "crt\n", 4, 0644, crt, sizeof(crt));
	write_bytes("client.key", "key\n", 4, 0600, key, sizeof(key));
	write_bytes("dbca.pem", "ca\n", 3, 0644, dca, sizeof(dca));
	write_bytes("dbclient.pem", "crt\n", 4, 0644, dcrt, sizeof(dcrt));
	write_bytes("dbclient.key", "key\n", 4, 0400, dkey, sizeof(dkey));
	snprintf(text, sizeof(text),
		 "; every key, none at its default\n"
		 "[amqp]\nhost = mq1.example.org,mq2:5674,[::1]\nport = 5673\n"
		 "vhost = /grid\nuser = broker\npassword_file = %s\n"
		 "heartbeat = 0\nprefetch = 65535\nconfirm_window = 1\n"
		 "queue_type = classic\ndelivery_limit = 1000\n"
		 "reconnect_max = 3600\n"
		 "tls = 1\ntls_ca_file = %s\ntls_cert_file = %s\n"
		 "tls_key_file = %s\ntls_verify = 0\ndeclare = 0\n"
		 "[database]\nhost = db1.example.org\nport = 3307\n"
		 "socket = %s/mysqld.sock\nname = gb_test\nuser = gb_user\n"
		 "password_file = %s\n"
		 "tls = 1\ntls_ca_file = %s\ntls_cert_file = %s\n"
		 "tls_key_file = %s\ntls_verify = 0\n"
		 "[worker]\nid = host-a:1\nlog_level = debug\n"
		 "pending_scan_interval = 1\noutbox_scan_interval = 3600\n"
		 "outbox_lease = 7\nmax_message_bytes = 1024\n"
		 "max_decode_bytes = 65536\nclock_offset_file = %s/offset\n"
		 "watchdog = 0\nmetrics_listen = 192.0.2.7:0\n"
		 "metrics_allow_remote = 1\n"
		 "decision_retention_days = 0\n"
		 "decision_retention_interval = 86400\n"
		 "backlog_interval = 0\n"
		 "broker_batch = 256\n"
		 "decision_inputs_dir = /var/tmp/gb-inputs\n"
		 "decision_inputs = 0\ndecision_inputs_max_jobs = 0\n"
		 "[dirac]\nmatch_batch = 1\nindex_refresh_ms = 60000\n"
		 "leader_lease = 5\npriority_interval = 86400\n"
		 "history_interval = 1\nhistory_keep = 3600\n"
		 "cleanup_age = 0\nremoval_log_keep = 604800\n"
		 "owner_check = on\nowner_check_refresh = 3600\n"
		 "[panda]\ntimeout_interval = 1\ntimeout_batch = 10000\n"
		 "exempt_recheck = 60\nfast_rebro_interval = 0\n",
		 amqp_pw, ca, crt, key, tdir, db_pw, dca, dcrt, dkey, tdir);
	write_conf(text);

	struct gb_config c, def, again;
	cfg_defaults(&def);
	if (cfg_load(conf, &c, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	char want_sock[TPATH], want_off[TPATH];
	snprintf(want_sock, sizeof(want_sock), "%s/mysqld.sock", tdir);
	snprintf(want_off, sizeof(want_off), "%s/offset", tdir);
	const struct {
		const char *key, *want;
	} rows[] = {
		{ "amqp.host", "mq1.example.org,mq2:5674,[::1]" },
		{ "amqp.port", "5673" },
		{ "amqp.vhost", "/grid" },
		{ "amqp.user", "broker" },
		{ "amqp.password_file", amqp_pw },
		{ "amqp.heartbeat", "0" },
		{ "amqp.prefetch", "65535" },
		{ "amqp.confirm_window", "1" },
		{ "amqp.queue_type", "classic" },
		{ "amqp.delivery_limit", "1000" },
		{ "amqp.reconnect_max", "3600" },
		{ "amqp.tls", "1" },
		{ "amqp.tls_ca_file", ca },
		{ "amqp.tls_cert_file", crt },
		{ "amqp.tls_key_file", key },
		{ "amqp.tls_verify", "0" },
		{ "amqp.declare", "0" },
		{ "database.host", "db1.example.org" },
		{ "database.port", "3307" },
		{ "database.socket", want_sock },
		{ "database.name", "gb_test" },
		{ "database.user", "gb_user" },
		{ "database.password_file", db_pw },
		{ "database.tls", "1" },
		{ "database.tls_ca_file", dca },
		{ "database.tls_cert_file", dcrt },
		{ "database.tls_key_file", dkey },
		{ "database.tls_verify", "0" },
		{ "worker.id", "host-a:1" },
		{ "worker.log_level", "debug" },
		{ "worker.pending_scan_interval", "1" },
		{ "worker.outbox_scan_interval", "3600" },
		{ "worker.outbox_lease", "7" },
		{ "worker.max_message_bytes", "1024" },
		{ "worker.max_decode_bytes", "65536" },
		{ "worker.clock_offset_file", want_off },
		{ "worker.watchdog", "0" },
		{ "worker.metrics_listen", "192.0.2.7:0" },
		{ "worker.metrics_allow_remote", "1" },
		{ "worker.decision_retention_days", "0" },
		{ "worker.decision_retention_interval", "86400" },
		{ "worker.backlog_interval", "0" },
		{ "worker.broker_batch", "256" },
		{ "worker.decision_inputs_dir", "/var/tmp/gb-inputs" },
		{ "worker.decision_inputs", "0" },
		{ "worker.decision_inputs_max_jobs", "0" },
		{ "dirac.match_batch", "1" },
		{ "dirac.index_refresh_ms", "60000" },
		{ "dirac.leader_lease", "5" },
		{ "dirac.priority_interval", "86400" },
		{ "dirac.history_interval", "1" },
		{ "dirac.history_keep", "3600" },
		{ "dirac.cleanup_age", "0" },
		{ "dirac.removal_log_keep", "604800" },
		{ "dirac.owner_check", "on" },
		{ "dirac.owner_check_refresh", "3600" },
		{ "panda.timeout_interval", "1" },
		{ "panda.timeout_batch", "10000" },
		{ "panda.exempt_recheck", "60" },
		{ "panda.fast_rebro_interval", "0" },
	};
	assert_int_equal(sizeof(rows) / sizeof(rows[0]), nkeys());
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct cfg_key *k = find_key(rows[i].key);
		assert_non_null(k);
		char v[TPATH], d[TPATH];
		key_text(k, &c, v, sizeof(v));
		key_text(k, &def, d, sizeof(d));
		assert_string_equal(v, rows[i].want);
		assert_string_not_equal(v, d); /* really not a default */
	}
	assert_string_equal(c.amqp_password, "amqp-secret");
	assert_string_equal(c.db_password, "db-secret");
	/* A plain path is the key file the client library opens. */
	assert_string_equal(c.amqp_tls_key, key);
	assert_string_equal(c.db_tls_key, dkey);

	/* What cfg_print writes loads back to the same configuration. */
	char printed[TPATH];
	snprintf(printed, sizeof(printed), "%s/printed.conf", tdir);
	FILE *f = fopen(printed, "w");
	assert_non_null(f);
	cfg_print(&c, f);
	fclose(f);
	if (cfg_load(printed, &again, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	assert_memory_equal(&c, &again, sizeof(c));
}

/* Forms of the syntax the loader accepts, each giving one known value. */
static void test_tolerated_syntax(void **state)
{
	(void)state;
	static const struct {
		const char *name, *text, *key, *want;
	} rows[] = {
		{ "bom", "\xEF\xBB\xBF[amqp]\nport = 1234\n", "amqp.port",
		  "1234" },
		{ "crlf", "[amqp]\r\nport = 1234\r\n", "amqp.port", "1234" },
		{ "indented", "[amqp]\n  host = a\n\tport = 1234\n",
		  "amqp.port", "1234" },
		{ "colon", "[amqp]\nport: 1234\n", "amqp.port", "1234" },
		{ "inline comment", "[amqp]\nport = 1234 ; the test port\n",
		  "amqp.port", "1234" },
		{ "blanks", "\n[amqp]\n\n   \nport   =   1234   \n",
		  "amqp.port", "1234" },
		{ "no final newline", "[amqp]\nport = 1234", "amqp.port",
		  "1234" },
		{ "plus sign", "[amqp]\nport = +1234\n", "amqp.port", "1234" },
		{ "empty string", "[worker]\nid =\n", "worker.id", "" },
		{ "long comment", "[amqp]\n# " S250 "\nport = 1234\n",
		  "amqp.port", "1234" },
		{ "section twice", "[amqp]\nport = 1\n[worker]\nid = w\n"
				   "[amqp]\nhost = h\n",
		  "amqp.host", "h" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct gb_config c;
		char err[1024], v[TPATH];
		write_conf(rows[i].text);
		if (cfg_load(conf, &c, err, sizeof(err)) != GB_OK)
			fail_msg("%s: %s", rows[i].name, err);
		key_text(find_key(rows[i].key), &c, v, sizeof(v));
		if (strcmp(v, rows[i].want) != 0)
			fail_msg("%s: %s = \"%s\", expected \"%s\"",
				 rows[i].name, rows[i].key, v, rows[i].want);
	}
}

/* ---- errors ------------------------------------------------------------- */

static const struct {
	const char *name, *text;
	int line; /* 0: the message names no line */
	const char *want;
} bad_files[] = {
	{ "int above max", "[amqp]\nport = 70000\n", 2,
	  "amqp.port: 70000 not in [1, 65535]" },
	{ "int below min", "[amqp]\nport = 0\n", 2,
	  "amqp.port: 0 not in [1, 65535]" },
	{ "negative", "[worker]\nwatchdog = -1\n", 2,
	  "worker.watchdog: -1 not in [0, 1]" },
	{ "int overflow", "[amqp]\nport = 99999999999999999999\n", 2,
	  "amqp.port: 99999999999999999999 not in [1, 65535]" },
	{ "not an int", "[amqp]\nport = 56x\n", 2,
	  "amqp.port: \"56x\" is not an integer" },
	{ "float", "[amqp]\nheartbeat = 1.5\n", 2,
	  "amqp.heartbeat: \"1.5\" is not an integer" },
	{ "empty int", "[amqp]\nport =\n", 2,
	  "amqp.port: \"\" is not an integer" },
	{ "enum", "[amqp]\nqueue_type = lazy\n", 2,
	  "amqp.queue_type: \"lazy\" is not one of quorum|classic" },
	{ "enum case", "[worker]\nlog_level = INFO\n", 2,
	  "worker.log_level: \"INFO\" is not one of error|warn|info|debug" },
	{ "string too long", "[database]\nname = " S70 "\n", 2,
	  "database.name: value is 70 characters, longer than the limit "
	  "of 63" },
	{ "quoted", "[amqp]\nhost = \"mq.example.org\"\n", 2,
	  "amqp.host: values are not quoted" },
	{ "control char", "[amqp]\nhost = a\tb\n", 2,
	  "amqp.host: value contains a control character" },
	{ "unknown section", "[amqp]\nport = 5672\n[amqpp]\nhost = x\n", 4,
	  "amqpp.host: unknown section [amqpp]" },
	{ "unknown key", "[amqp]\nhots = x\n", 2, "amqp.hots: unknown key" },
	{ "key in wrong section", "[worker]\nport = 1\n", 2,
	  "worker.port: unknown key" },
	{ "no section", "host = x\n", 1, "host: key before any [section]" },
	{ "duplicate", "[amqp]\nport = 1\n\nport = 2\n", 4,
	  "amqp.port: set again (first set on line 2)" },
	{ "open section", "[amqp\n", 1,
	  "syntax error: expected [section] or key = value" },
	{ "no equals", "[amqp]\njust words\n", 2,
	  "syntax error: expected [section] or key = value" },
	{ "long line", "[amqp]\nhost = " S250 "\n", 2, "line longer than " },
	{ "metrics not loopback", "[worker]\nmetrics_listen = 0.0.0.0:9464\n",
	  2, "worker.metrics_listen: not a loopback address: the endpoint "
	     "has no authentication; set worker.metrics_allow_remote = 1 to "
	     "serve it on another interface" },
	{ "metrics host name", "[worker]\nmetrics_listen = gb1.example.org:1\n",
	  2, "worker.metrics_listen: not a loopback address" },
	{ "metrics no port", "[worker]\nmetrics_listen = 127.0.0.1\n", 2,
	  "worker.metrics_listen: \"127.0.0.1\": expected host:port (an IPv6 "
	  "address in brackets)" },
	{ "metrics bad port", "[worker]\nmetrics_listen = [::1]:65536\n", 2,
	  "worker.metrics_listen: \"[::1]:65536\": bad port (0..65535, 0 = "
	  "any)" },
	{ "metrics v6 no brackets", "[worker]\nmetrics_listen = ::1:9464\n",
	  2, "worker.metrics_listen: \"::1:9464\": expected host:port" },
	{ "decode below message", "[worker]\nmax_message_bytes = 1048576\n"
				  "max_decode_bytes = 65536\n",
	  3, "worker.max_decode_bytes: 65536 is less than "
	     "worker.max_message_bytes (1048576)" },
	{ "bad credential name", "[amqp]\npassword_file = cred:../x\n", 2,
	  "amqp.password_file: \"../x\" is not a valid credential name" },
	{ "empty credential name", "[amqp]\npassword_file = cred:\n", 2,
	  "amqp.password_file: \"\" is not a valid credential name" },
	/* Host lists: the key, its line and hostlist.c's words. */
	{ "host list stray comma", "[amqp]\nhost = mq1,,mq2\n", 2,
	  "amqp.host: entry 2 is empty" },
	{ "host list bad port", "[database]\nport = 3307\nhost = db1,db2:0\n",
	  3, "database.host: entry 2 (\"db2:0\"): bad port \"0\" (1..65535)" },
	{ "host list too long", "[amqp]\nhost = a,b,c,d,e,f,g,h,i\n", 2,
	  "amqp.host: 9 entries, at most 8" },
	{ "host list bare ipv6", "[database]\nhost = ::1\n", 2,
	  "database.host: entry 1 (\"::1\"): an IPv6 address needs brackets: "
	  "[address]:port" },
	{ "host list empty", "[amqp]\nhost =\n", 2,
	  "amqp.host: no host given" },
	/* TLS: what is checked without any file existing. */
	{ "amqp tls without ca", "[amqp]\ntls = 1\n", 2,
	  "amqp.tls_ca_file: needed when amqp.tls = 1 and amqp.tls_verify = 1 "
	  "(the CA that signed the server's certificate)" },
	{ "database tls without ca", "[database]\nname = x\ntls = 1\n", 3,
	  "database.tls_ca_file: needed when database.tls = 1 and "
	  "database.tls_verify = 1 (the CA that signed the server's "
	  "certificate)" },
	{ "tls with a missing ca file",
	  "[database]\ntls = 1\ntls_ca_file = /nonexistent/gb-ca.pem\n", 3,
	  "database.tls_ca_file: cannot open /nonexistent/gb-ca.pem: No such "
	  "file or directory" },
	{ "certificate without key", "[amqp]\ntls_cert_file = /x/c.pem\n", 2,
	  "amqp.tls_cert_file: set without amqp.tls_key_file (a client "
	  "certificate needs its private key)" },
	{ "key without certificate", "[database]\ntls_key_file = /x/c.key\n", 2,
	  "database.tls_key_file: set without database.tls_cert_file (a "
	  "private key needs its certificate)" },
	/* etc/gridbroker.conf stands for any readable certificate file (the
	** tests run from the repository root). */
	{ "tls key not a file",
	  "[amqp]\ntls = 1\ntls_verify = 0\ntls_cert_file = etc/gridbroker.conf\n"
	  "tls_key_file = /dev/null\n",
	  5, "amqp.tls_key_file: /dev/null is not a regular file" },
	{ "tls key bad credential name",
	  "[database]\ntls = 1\ntls_verify = 0\ntls_cert_file = etc/gridbroker.conf\n"
	  "tls_key_file = cred:a/b\n",
	  5, "database.tls_key_file: \"a/b\" is not a valid credential name" },
	{ "tls ca a directory", "[amqp]\ntls = 1\ntls_ca_file = /\n", 3,
	  "amqp.tls_ca_file: / is not a regular file" },
};

static void test_errors_name_line_and_key(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		struct gb_config c;
		char err[2048], want[1024];
		write_conf(bad_files[i].text);
		int rc = cfg_load(conf, &c, err, sizeof(err));
		if (rc != GB_ECONFIG)
			fail_msg("%s: rc %d, expected GB_ECONFIG", bad_files[i].name,
				 rc);
		if (bad_files[i].line)
			snprintf(want, sizeof(want), "%s:%d: %s", conf,
				 bad_files[i].line, bad_files[i].want);
		else
			snprintf(want, sizeof(want), "%s: %s", conf,
				 bad_files[i].want);
		if (strstr(err, want) == NULL)
			fail_msg("%s: expected \"%s\" in:\n%s", bad_files[i].name,
				 want, err);
		if (count_lines(err) != 1)
			fail_msg("%s: expected one message, got:\n%s",
				 bad_files[i].name, err);
	}
}

static void test_all_errors_reported_together(void **state)
{
	(void)state;
	write_conf("[amqp]\n"			 /* 1 */
		   "port = 0\n"			 /* 2 */
		   "host = " S250 "\n"		 /* 3: too long a line */
		   "queue_type = lazy\n"	 /* 4 */
		   "[bogus]\n"			 /* 5 */
		   "key = 1\n"			 /* 6 */
		   "[worker]\n"			 /* 7 */
		   "garbage line\n"		 /* 8 */
		   "pending_scan_interval = 0\n" /* 9 */
		   "log_level = debug\n");	 /* 10: fine */
	struct gb_config c;
	char err[4096], want[1024];
	assert_int_equal(cfg_load(conf, &c, err, sizeof(err)), GB_ECONFIG);
	const struct {
		int line;
		const char *msg;
	} rows[] = {
		{ 2, "amqp.port: 0 not in" },
		{ 3, "line longer than" },
		{ 4, "amqp.queue_type: \"lazy\"" },
		{ 6, "bogus.key: unknown section [bogus]" },
		{ 8, "syntax error" },
		{ 9, "worker.pending_scan_interval: 0 not in [1, 3600]" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(want, sizeof(want), "%s:%d: %s", conf, rows[i].line,
			 rows[i].msg);
		assert_contains(err, want);
	}
	assert_int_equal(count_lines(err), sizeof(rows) / sizeof(rows[0]));
}

static void test_missing_file_and_small_buffers(void **state)
{
	(void)state;
	struct gb_config c;
	char err[512], path[TPATH];
	snprintf(path, sizeof(path), "%s/absent.conf", tdir);
	assert_int_equal(cfg_load(path, &c, err, sizeof(err)), GB_ECONFIG);
	assert_contains(err, "absent.conf: cannot open");

	/* Many errors into a small buffer: cut, marked, still terminated. */
	write_conf("[amqp]\nport = 0\nprefetch = 0\nheartbeat = -1\n");
	char small[40];
	memset(small, 'Z', sizeof(small));
	assert_int_equal(cfg_load(conf, &c, small, sizeof(small)), GB_ECONFIG);
	assert_true(strlen(small) == sizeof(small) - 1);
	assert_string_equal(small + strlen(small) - 3, "...");
	/* No buffer at all is allowed and still fails. */
	assert_int_equal(cfg_load(conf, &c, NULL, 0), GB_ECONFIG);
}

/* ---- password files ----------------------------------------------------- */

#define A254 S250 "aaaa"
#define A255 A254 "a"

static const struct {
	const char *name, *data;
	size_t len;
	mode_t mode;
	const char *want_pw;  /* NULL: an error is expected */
	const char *want_err; /* fragment of the error */
} secrets[] = {
	{ "newline stripped", "pw\n", 3, 0600, "pw", NULL },
	{ "no newline", "pw", 2, 0600, "pw", NULL },
	{ "only one newline", "pw\n\n", 4, 0600, "pw\n", NULL },
	{ "empty file", "", 0, 0600, "", NULL },
	{ "group readable", "pw\n", 3, 0640, "pw", NULL },
	{ "owner read only", "pw\n", 3, 0400, "pw", NULL },
	{ "255 bytes", A255, 255, 0600, A255, NULL },
	{ "254 bytes and newline", A254 "\n", 255, 0600, A254, NULL },
	{ "256 bytes", A255 "a", 256, 0600, NULL, "longer than 255 bytes" },
	{ "255 bytes and newline", A255 "\n", 256, 0600, NULL,
	  "longer than 255 bytes" },
	{ "world readable", "pw\n", 3, 0644, NULL,
	  "is accessible to other users (mode 0644)" },
	{ "world writable", "pw\n", 3, 0602, NULL,
	  "is accessible to other users (mode 0602)" },
	{ "NUL byte", "p\0w\n", 4, 0600, NULL, "contains a NUL byte" },
};

static void test_password_files(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		char pw[TPATH], text[2 * TPATH], err[2048];
		struct gb_config c;
		write_bytes("secret", secrets[i].data, secrets[i].len,
			    secrets[i].mode, pw, sizeof(pw));
		snprintf(text, sizeof(text),
			 "[database]\nname = x\npassword_file = %s\n", pw);
		write_conf(text);
		int rc = cfg_load(conf, &c, err, sizeof(err));
		if (secrets[i].want_pw != NULL) {
			if (rc != GB_OK)
				fail_msg("%s: %s", secrets[i].name, err);
			assert_string_equal(c.db_password, secrets[i].want_pw);
			assert_string_equal(c.amqp_password, "");
			continue;
		}
		if (rc != GB_ECONFIG)
			fail_msg("%s: rc %d", secrets[i].name, rc);
		char want[2 * TPATH];
		snprintf(want, sizeof(want), "%s:3: database.password_file: ",
			 conf);
		assert_contains(err, want);
		assert_contains(err, secrets[i].want_err);
		assert_contains(err, pw); /* the message names the file */
	}
}

static void test_password_file_missing_or_not_regular(void **state)
{
	(void)state;
	char text[2 * TPATH], err[2048], want[2 * TPATH];
	struct gb_config c;
	snprintf(text, sizeof(text), "[amqp]\npassword_file = %s/nope\n",
		 tdir);
	write_conf(text);
	assert_int_equal(cfg_load(conf, &c, err, sizeof(err)), GB_ECONFIG);
	snprintf(want, sizeof(want), "%s:2: amqp.password_file: cannot open %s/nope",
		 conf, tdir);
	assert_contains(err, want);

	snprintf(text, sizeof(text), "[amqp]\npassword_file = %s\n", tdir);
	write_conf(text);
	assert_int_equal(cfg_load(conf, &c, err, sizeof(err)), GB_ECONFIG);
	assert_contains(err, "is not a regular file");
}

static void test_credentials(void **state)
{
	(void)state;
	char dir[TPATH], err[2048], want[2 * TPATH];
	struct gb_config c;
	snprintf(dir, sizeof(dir), "%s/creds", tdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	write_bytes("creds/amqp.password", "mq-secret\n", 10, 0400, NULL, 0);
	write_conf("[amqp]\npassword_file = cred:amqp.password\n");

	assert_int_equal(setenv("CREDENTIALS_DIRECTORY", dir, 1), 0);
	if (cfg_load(conf, &c, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	assert_string_equal(c.amqp_password, "mq-secret");
	assert_string_equal(c.amqp_password_file, "cred:amqp.password");

	/* A credential the unit did not load. */
	write_conf("[amqp]\npassword_file = cred:other\n");
	assert_int_equal(cfg_load(conf, &c, err, sizeof(err)), GB_ECONFIG);
	snprintf(want, sizeof(want), "cannot open %s/other", dir);
	assert_contains(err, want);

	/* Not running under systemd credentials at all. */
	assert_int_equal(unsetenv("CREDENTIALS_DIRECTORY"), 0);
	write_conf("[amqp]\npassword_file = cred:amqp.password\n");
	assert_int_equal(cfg_load(conf, &c, err, sizeof(err)), GB_ECONFIG);
	snprintf(want, sizeof(want),
		 "%s:2: amqp.password_file: cred:amqp.password needs "
		 "$CREDENTIALS_DIRECTORY",
		 conf);
	assert_contains(err, want);
}

/* ---- TLS files ---------------------------------------------------------- */

static void test_tls_files(void **state)
{
	(void)state;
	char ca[TPATH], crt[TPATH], key[TPATH], text[4 * TPATH], err[2048],
		want[2 * TPATH];
	struct gb_config c;
	write_bytes("tls-ca.pem", "ca\n", 3, 0644, ca, sizeof(ca));
	write_bytes("tls-client.pem", "crt\n", 4, 0644, crt, sizeof(crt));
	write_bytes("tls-client.key", "key\n", 4, 0600, key, sizeof(key));

	/* Everything there: loads, the key path is handed on as it is. */
	snprintf(text, sizeof(text),
		 "[amqp]\ntls = 1\ntls_ca_file = %s\ntls_cert_file = %s\n"
		 "tls_key_file = %s\n",
		 ca, crt, key);
	write_conf(text);
	if (cfg_load(conf, &c, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	assert_int_equal(c.amqp_tls, 1);
	assert_int_equal(c.amqp_tls_verify, 1);
	assert_string_equal(c.amqp_tls_ca_file, ca);
	assert_string_equal(c.amqp_tls_key, key);
	assert_int_equal(c.db_tls, 0);
	assert_string_equal(c.db_tls_key, "");

	/* A private key others may read is refused, like a password file. */
	write_bytes("tls-client.key", "key\n", 4, 0644, NULL, 0);
	assert_int_equal(cfg_load(conf, &c, err, sizeof(err)), GB_ECONFIG);
	snprintf(want, sizeof(want),
		 "%s:5: amqp.tls_key_file: %s is accessible to other users "
		 "(mode 0644); run chmod o-rwx on it",
		 conf, key);
	assert_string_equal(err, want);
	write_bytes("tls-client.key", "key\n", 4, 0600, NULL, 0);

	/* A client certificate that is not there. */
	snprintf(text, sizeof(text),
		 "[amqp]\ntls = 1\ntls_ca_file = %s\n"
		 "tls_cert_file = %s/nonexistent.pem\ntls_key_file = %s\n",
		 ca, tdir, key);
	write_conf(text);
	assert_int_equal(cfg_load(conf, &c, err, sizeof(err)), GB_ECONFIG);
	snprintf(want, sizeof(want),
		 "%s:4: amqp.tls_cert_file: cannot open %s/nonexistent.pem: No "
		 "such file or directory",
		 conf, tdir);
	assert_string_equal(err, want);

	/* Encrypting without verifying needs no CA. */
	write_conf("[database]\ntls = 1\ntls_verify = 0\n");
	if (cfg_load(conf, &c, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	assert_int_equal(c.db_tls, 1);
	assert_int_equal(c.db_tls_verify, 0);

	/* With tls = 0 the files are not used, so not looked at either; the
	** pairing rule still holds. */
	write_conf("[database]\ntls_ca_file = /nonexistent/ca.pem\n"
		   "tls_cert_file = /nonexistent/c.pem\n"
		   "tls_key_file = /nonexistent/c.key\n");
	if (cfg_load(conf, &c, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	assert_string_equal(c.db_tls_key, "");

	/* The key as a systemd credential. */
	char dir[TPATH];
	snprintf(dir, sizeof(dir), "%s/tls-creds", tdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	write_bytes("tls-creds/db.key", "key\n", 4, 0400, NULL, 0);
	snprintf(text, sizeof(text),
		 "[database]\ntls = 1\ntls_ca_file = %s\ntls_cert_file = %s\n"
		 "tls_key_file = cred:db.key\n",
		 ca, crt);
	write_conf(text);
	assert_int_equal(setenv("CREDENTIALS_DIRECTORY", dir, 1), 0);
	int rc = cfg_load(conf, &c, err, sizeof(err));
	unsetenv("CREDENTIALS_DIRECTORY");
	if (rc != GB_OK)
		fail_msg("%s", err);
	assert_string_equal(c.db_tls_key_file, "cred:db.key");
	snprintf(want, sizeof(want), "%s/db.key", dir);
	assert_string_equal(c.db_tls_key, want);

	/* Both sections wrong at once: every problem, each naming its key. */
	write_conf("[amqp]\ntls = 1\n[database]\ntls = 1\n"
		   "tls_key_file = /nonexistent/k\n");
	assert_int_equal(cfg_load(conf, &c, err, sizeof(err)), GB_ECONFIG);
	assert_contains(err, "amqp.tls_ca_file: needed when amqp.tls = 1");
	assert_contains(err, "database.tls_ca_file: needed when database.tls = 1");
	assert_contains(err, "database.tls_key_file: set without "
			     "database.tls_cert_file");
	assert_contains(err, "database.tls_key_file: cannot open /nonexistent/k");
	assert_int_equal(count_lines(err), 4);
}

/* ---- reload ------------------------------------------------------------- */

static void test_reload(void **state)
{
	(void)state;
	char pw[TPATH], text[2048], warn[1024], err[1024];
	struct gb_config cur, before;
	write_bytes("reload-pw", "old-secret\n", 11, 0600, pw, sizeof(pw));
	snprintf(text, sizeof(text),
		 "[amqp]\nhost = a\nport = 5672\npassword_file = %s\n"
		 "[worker]\nlog_level = info\npending_scan_interval = 10\n",
		 pw);
	write_conf(text);
	if (cfg_load(conf, &cur, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);

	/* Same file again: nothing to say. */
	assert_int_equal(cfg_reload(conf, &cur, warn, sizeof(warn), err,
				    sizeof(err)),
			 GB_OK);
	assert_string_equal(warn, "");

	/* Reloadable keys move, the others stay and are named. */
	snprintf(text, sizeof(text),
		 "[amqp]\nhost = b\nport = 5673\npassword_file = %s\n"
		 "[worker]\nlog_level = debug\npending_scan_interval = 20\n"
		 "outbox_scan_interval = 6\nclock_offset_file = %s/off\n",
		 pw, tdir);
	write_conf(text);
	if (cfg_reload(conf, &cur, warn, sizeof(warn), err, sizeof(err)) !=
	    GB_OK)
		fail_msg("%s", err);
	assert_string_equal(cur.amqp_host, "a");
	assert_int_equal(cur.amqp_port, 5672);
	assert_string_equal(cur.log_level, "debug");
	assert_int_equal(cur.pending_scan_interval, 20);
	assert_int_equal(cur.outbox_scan_interval, 6);
	char off[TPATH];
	snprintf(off, sizeof(off), "%s/off", tdir);
	assert_string_equal(cur.clock_offset_file, off);
	assert_contains(warn, "amqp.port: changed in file but needs a "
			      "restart; keeping 5672");
	assert_contains(warn, "amqp.host: changed in file but needs a "
			      "restart; keeping \"a\"");
	assert_int_equal(count_lines(warn), 2);

	/* A rotated password is kept and reported, never shown. */
	write_bytes("reload-pw", "new-secret\n", 11, 0600, NULL, 0);
	assert_int_equal(cfg_reload(conf, &cur, warn, sizeof(warn), err,
				    sizeof(err)),
			 GB_OK);
	assert_string_equal(cur.amqp_password, "old-secret");
	assert_contains(warn, "amqp.password_file: the password changed");
	assert_null(strstr(warn, "new-secret"));
	assert_null(strstr(warn, "old-secret"));

	/* A broken file changes nothing, not even reloadable keys. */
	memcpy(&before, &cur, sizeof(before));
	write_conf("[amqp]\nport = 0\n[worker]\nlog_level = error\n");
	assert_int_equal(cfg_reload(conf, &cur, warn, sizeof(warn), err,
				    sizeof(err)),
			 GB_ECONFIG);
	assert_memory_equal(&before, &cur, sizeof(cur));
	assert_contains(err, "amqp.port: 0 not in");

	char gone[TPATH];
	snprintf(gone, sizeof(gone), "%s/gone.conf", tdir);
	assert_int_equal(cfg_reload(gone, &cur, warn, sizeof(warn), err,
				    sizeof(err)),
			 GB_ECONFIG);
	assert_memory_equal(&before, &cur, sizeof(cur));
}

/* ---- printing ----------------------------------------------------------- */

static void test_print_hides_secrets(void **state)
{
	(void)state;
	char apw[TPATH], dpw[TPATH], text[3 * TPATH], err[1024];
	struct gb_config c;
	write_bytes("print-a", "s3cr3t-amqp\n", 12, 0600, apw, sizeof(apw));
	write_bytes("print-d", "s3cr3t-db\n", 10, 0600, dpw, sizeof(dpw));
	snprintf(text, sizeof(text),
		 "[amqp]\npassword_file = %s\n[database]\npassword_file = %s\n",
		 apw, dpw);
	write_conf(text);
	if (cfg_load(conf, &c, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	assert_string_equal(c.amqp_password, "s3cr3t-amqp");

	char *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);
	assert_non_null(f);
	cfg_print(&c, f);
	fclose(f);
	assert_null(strstr(out, "s3cr3t"));
	char want[2 * TPATH];
	snprintf(want, sizeof(want), "password_file = %s\n", apw);
	assert_contains(out, want);
	snprintf(want, sizeof(want), "password_file = %s\n", dpw);
	assert_contains(out, want);

	/* Every key, in its section, with a help comment above it. */
	int seen[128] = { 0 };
	static char notes[128][NOTE_MAX];
	assert_true(nkeys() <= 64);
	assert_int_equal(scan_ini(out, seen, notes), nkeys());
	for (size_t i = 0; i < nkeys(); i++) {
		assert_contains(notes[i], cfg_keys[i].help);
		assert_contains(notes[i], cfg_keys[i].reloadable
						  ? "reloadable"
						  : "needs a restart");
	}
	free(out);
}

/* ---- the shipped sample ------------------------------------------------- */

static void test_sample_config_loads(void **state)
{
	(void)state;
	const char *sample = "etc/gridbroker.conf";
	char dir[TPATH], err[4096];
	snprintf(dir, sizeof(dir), "%s/sample-creds", tdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	write_bytes("sample-creds/amqp.password", "mq\n", 3, 0400, NULL, 0);
	write_bytes("sample-creds/db.password", "db\n", 3, 0400, NULL, 0);
	assert_int_equal(setenv("CREDENTIALS_DIRECTORY", dir, 1), 0);

	struct gb_config c, def;
	int rc = cfg_load(sample, &c, err, sizeof(err));
	unsetenv("CREDENTIALS_DIRECTORY");
	if (rc != GB_OK)
		fail_msg("%s", err);
	assert_string_equal(c.amqp_password, "mq");
	assert_string_equal(c.db_password, "db");
	assert_string_equal(c.amqp_password_file, "cred:amqp.password");
	assert_string_equal(c.db_password_file, "cred:db.password");

	/* Production values are the defaults except where the host differs. */
	cfg_defaults(&def);
	for (const struct cfg_key *k = cfg_keys; k->name; k++) {
		char v[TPATH], d[TPATH];
		key_text(k, &c, v, sizeof(v));
		key_text(k, &def, d, sizeof(d));
		int host = strcmp(k->name, "host") == 0;
		int secret = strcmp(k->name, "password_file") == 0;
		if (host || secret)
			assert_string_not_equal(v, d);
		else if (strcmp(v, d) != 0)
			fail_msg("%s.%s = \"%s\" in %s, default \"%s\"",
				 k->section, k->name, v, sample, d);
	}

	/* Every key is written out and documented, including reloadability. */
	FILE *f = fopen(sample, "r");
	assert_non_null(f);
	static char text[65536];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	int seen[128] = { 0 };
	static char notes[128][NOTE_MAX];
	assert_int_equal(scan_ini(text, seen, notes), nkeys());
	for (size_t i = 0; i < nkeys(); i++) {
		if (strstr(notes[i], "Default") == NULL)
			fail_msg("%s.%s: no default documented",
				 cfg_keys[i].section, cfg_keys[i].name);
		const char *want =
			cfg_keys[i].reloadable ? "Reloadable." : "Needs a restart";
		if (strstr(notes[i], want) == NULL)
			fail_msg("%s.%s: comment lacks \"%s\": %s",
				 cfg_keys[i].section, cfg_keys[i].name, want,
				 notes[i]);
		if (cfg_keys[i].type == CFG_T_INT) {
			char range[64];
			snprintf(range, sizeof(range), "range %ld..%ld",
				 cfg_keys[i].min, cfg_keys[i].max);
			if (strstr(notes[i], range) == NULL)
				fail_msg("%s.%s: comment lacks \"%s\"",
					 cfg_keys[i].section, cfg_keys[i].name,
					 range);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_matches_header),
		cmocka_unit_test(test_defaults_in_range),
		cmocka_unit_test(test_empty_file_is_defaults),
		cmocka_unit_test(test_full_file_roundtrip),
		cmocka_unit_test(test_tolerated_syntax),
		cmocka_unit_test(test_errors_name_line_and_key),
		cmocka_unit_test(test_all_errors_reported_together),
		cmocka_unit_test(test_missing_file_and_small_buffers),
		cmocka_unit_test(test_password_files),
		cmocka_unit_test(test_password_file_missing_or_not_regular),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_tls_files),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_print_hides_secrets),
		cmocka_unit_test(test_sample_config_loads),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
