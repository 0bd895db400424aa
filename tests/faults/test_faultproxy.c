/*
** test_faultproxy.c — the fault suite's network proxy (gb_faultproxy) does
** what the suite's network faults need, checked against an echo server in
** this process: bytes pass unchanged; a blackholed link keeps the
** connection open and delivers nothing until it is back, then everything,
** in order; a delay holds each chunk at least MIN ms each way and never
** reorders; cut-mid resets the connection in the
** middle of a large burst, not before and not after it; reset ends every
** connection; bad commands are refused. No server needed (label unit).
**
** Timing assertions are lower bounds only (a delay is at least what was
** asked), which a loaded machine cannot break.
**
** Usage: test_faultproxy PROXY_BINARY
*/
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

static const char *proxy_bin;
/* Bytes the echo server read on the last connection that ended, and how
** many connections have ended (cut-mid checks the server's side). */
static pthread_mutex_t echo_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t echo_last_bytes;
static unsigned echo_ended;
static pid_t proxy_pid;
static int echo_port, link_port, ctl_port;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t n = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &n) != 0)
		return -1;
	close(fd);
	return ntohs(a.sin_port);
}

static int dial(int port)
{
	for (int i = 0; i < 100; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_port = htons((uint16_t)port)};
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		usleep(20000);
	}
	return -1;
}

/* ---- the echo server ---------------------------------------------------- */

static void *echo_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[65536];
	ssize_t n;
	size_t total = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		total += (size_t)n;
		ssize_t off = 0;
		while (off < n) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));
			if (w <= 0)
				goto out;
			off += w;
		}
	}
out:
	close(fd);
	pthread_mutex_lock(&echo_mu);
	echo_last_bytes = total;
	echo_ended++;
	pthread_mutex_unlock(&echo_mu);
	return NULL;
}

static void *echo_main(void *arg)
{
	int lfd = (int)(intptr_t)arg;
	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_t t;
		if (pthread_create(&t, NULL, echo_conn, (void *)(intptr_t)fd) == 0)
			pthread_detach(t);
		else
			close(fd);
	}
	return NULL;
}

/* ---- the control connection ---------------------------------------------- */

/* Send one command; the answer line (without newline) in `out`. */
static void ctl(char *out, size_t n, const char *fmt, ...)
{
	char cmd[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int fd = dial(ctl_port);
	assert_true(fd >= 0);
	size_t len = strlen(cmd);
	cmd[len++] = '\n';
	assert_int_equal(write(fd, cmd, len), (ssize_t)len);
	size_t got = 0;
	while (got + 1 < n) {
		ssize_t r = read(fd, out + got, 1);
		if (r <= 0 || out[got] == '\n')
			break;
		got++;
	}
	out[got] = '\0';
	close(fd);
}

static void ctl_ok(const char *cmd)
{
	char ans[512];
	ctl(ans, sizeof(ans), "%s", cmd);
	if (strncmp(ans, "ok", 2) != 0)
		fail_msg("'%s' answered '%s'", cmd, ans);
}

/* Read exactly n bytes or until timeout_ms: the count read. */
static size_t read_for(int fd, char *buf, size_t n, int timeout_ms)
{
	size_t got = 0;
	double end = now_ms() + timeout_ms;
	while (got < n) {
		int left = (int)(end - now_ms());
		if (left <= 0)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, left) <= 0)
			break;
		ssize_t r = read(fd, buf + got, n - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/* 1 when the peer ended the connection (EOF or reset) within timeout_ms. */
static int ended_within(int fd, int timeout_ms)
{
	char b[4096];
	double end = now_ms() + timeout_ms;
	while (now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, (int)(end - now_ms()) + 1) <= 0)
			return 0;
		ssize_t r = read(fd, b, sizeof(b));
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return 1;
	}
	return 0;
}

/* ---- tests ------------------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	ctl_ok("all pass");
	return 0;
}

static void test_pass(void **state)
{
	(void)state;
	int fd = dial(link_port);
	assert_true(fd >= 0);
	static char out[200000], in[200000];
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (char)(i * 131 + 7);
	assert_int_equal(write(fd, out, sizeof(out)), (ssize_t)sizeof(out));
	assert_int_equal(read_for(fd, in, sizeof(in), 10000), sizeof(in));
	assert_memory_equal(in, out, sizeof(out));
	close(fd);
}

static void test_blackhole(void **state)
{
	(void)state;
	int fd = dial(link_port);
	assert_true(fd >= 0);
	char b[64];
	assert_int_equal(write(fd, "ping", 4), 4);
	assert_int_equal(read_for(fd, b, 4, 5000), 4);
	ctl_ok("db blackhole");
	assert_int_equal(write(fd, "late", 4), 4);
	/* nothing comes back, and the connection is not ended either */
	assert_int_equal(read_for(fd, b, 4, 400), 0);
	/* a new connection gets nothing, not even a refusal */
	int fd2 = dial(link_port);
	assert_true(fd2 >= 0);
	assert_int_equal(write(fd2, "hi", 2), 2);
	assert_int_equal(read_for(fd2, b, 2, 300), 0);
	ctl_ok("db pass");
	/* the link is back: what was sent meanwhile arrives, in order, then
	** the rest (late, not lost: TCP retransmits) */
	assert_int_equal(write(fd, "back", 4), 4);
	assert_int_equal(read_for(fd, b, 8, 5000), 8);
	assert_memory_equal(b, "lateback", 8);
	assert_int_equal(read_for(fd2, b, 2, 5000), 2);
	assert_memory_equal(b, "hi", 2);
	close(fd);
	close(fd2);
}

/* Table: a fixed delay and a jittered one; both hold a round trip at least
** twice MIN (each way), and neither reorders. */
static void test_delay(void **state)
{
	(void)state;
	static const struct {
		int min, max;
	} rows[] = {{150, 150}, {50, 200}};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "db delay %d %d", rows[r].min,
			 rows[r].max);
		ctl_ok(cmd);
		int fd = dial(link_port);
		assert_true(fd >= 0);
		double t0 = now_ms();
		char b[1024];
		assert_int_equal(write(fd, "x", 1), 1);
		assert_int_equal(read_for(fd, b, 1, 10000), 1);
		double rtt = now_ms() - t0;
		if (rtt < 2.0 * rows[r].min)
			fail_msg("delay %d..%d: round trip %.1f ms < %d",
				 rows[r].min, rows[r].max, rtt, 2 * rows[r].min);
		/* 100 numbered writes, 5 ms apart: they come back in order */
		unsigned char seq[100];
		for (int i = 0; i < 100; i++) {
			unsigned char c = (unsigned char)i;
			assert_int_equal(write(fd, &c, 1), 1);
			usleep(5000);
		}
		assert_int_equal(read_for(fd, (char *)seq, 100, 20000), 100);
		for (int i = 0; i < 100; i++)
			assert_int_equal(seq[i], i);
		close(fd);
	}
	ctl_ok("db pass");
}

/* Delay, then silence while delayed chunks are still held (the fault
** suite does this when a latency fault overlaps a silent link): nothing
** arrives during the silence, and once the link is back every held byte
** arrives, in order, none dropped. */
static void test_delay_then_blackhole(void **state)
{
	(void)state;
	ctl_ok("db delay 300 300");
	int fd = dial(link_port);
	assert_true(fd >= 0);
	unsigned char seq[40];
	for (int i = 0; i < 20; i++) {
		unsigned char c = (unsigned char)i;
		assert_int_equal(write(fd, &c, 1), 1);
		usleep(5000);
	}
	/* silenced before the first chunk falls due */
	ctl_ok("db blackhole");
	assert_int_equal(read_for(fd, (char *)seq, 20, 700), 0);
	for (int i = 20; i < 40; i++) {
		unsigned char c = (unsigned char)i;
		assert_int_equal(write(fd, &c, 1), 1);
	}
	ctl_ok("db pass");
	assert_int_equal(read_for(fd, (char *)seq, 40, 10000), 40);
	for (int i = 0; i < 40; i++)
		assert_int_equal(seq[i], i);
	close(fd);
}

static void test_cut_mid(void **state)
{
	(void)state;
	char ans[512];
	ctl(ans, sizeof(ans), "db status");
	unsigned long cuts0 = 0;
	const char *p = strstr(ans, "cuts=");
	assert_non_null(p);
	cuts0 = strtoul(p + 5, NULL, 10);

	/* a small exchange under the threshold passes */
	ctl_ok("db cut-mid 100000");
	int fd = dial(link_port);
	assert_true(fd >= 0);
	static char big[400000], back[400000];
	memset(big, 'm', sizeof(big));
	assert_int_equal(write(fd, big, 50000), 50000);
	assert_int_equal(read_for(fd, back, 50000, 10000), 50000);
	usleep(120000); /* the burst ends (gap > 50 ms) */
	/* a large one is cut in its middle: the server got more than the
	** small exchange and less than the whole of it, the client's
	** connection is reset, and not all of it came back */
	pthread_mutex_lock(&echo_mu);
	unsigned ended0 = echo_ended;
	pthread_mutex_unlock(&echo_mu);
	ssize_t w = write(fd, big, sizeof(big));
	assert_true(w > 100000);
	size_t got = read_for(fd, back, sizeof(big), 3000);
	assert_true(got < sizeof(big));
	assert_true(ended_within(fd, 3000));
	close(fd);
	size_t server_got = 0;
	for (int i = 0; i < 300; i++) {
		pthread_mutex_lock(&echo_mu);
		int done = echo_ended != ended0;
		server_got = echo_last_bytes;
		pthread_mutex_unlock(&echo_mu);
		if (done)
			break;
		usleep(10000);
	}
	/* 50,000 of the small exchange, then the burst up to the threshold
	** (100,000) or a little past it: the middle of the large message */
	if (server_got <= 50000 + 50000 || server_got >= 50000 + sizeof(big))
		fail_msg("the server read %zu bytes: not cut in the middle",
			 server_got);
	ctl(ans, sizeof(ans), "db status");
	p = strstr(ans, "cuts=");
	assert_non_null(p);
	assert_int_equal(strtoul(p + 5, NULL, 10), cuts0 + 1);
	/* one cut per command: the link passes again */
	assert_non_null(strstr(ans, "db pass"));
	fd = dial(link_port);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, big, 200000), 200000);
	assert_int_equal(read_for(fd, back, 200000, 10000), 200000);
	close(fd);
}

static void test_reset(void **state)
{
	(void)state;
	int a = dial(link_port), b = dial(link_port);
	assert_true(a >= 0 && b >= 0);
	char x[4];
	assert_int_equal(write(a, "a", 1), 1);
	assert_int_equal(read_for(a, x, 1, 5000), 1);
	assert_int_equal(write(b, "b", 1), 1);
	assert_int_equal(read_for(b, x, 1, 5000), 1);
	ctl_ok("all reset");
	assert_true(ended_within(a, 3000));
	assert_true(ended_within(b, 3000));
	close(a);
	close(b);
}

static void test_control_errors(void **state)
{
	(void)state;
	static const struct {
		const char *cmd, *want;
	} rows[] = {
		{"nosuch pass", "error no such link"},
		{"db delay 50 10", "error delay MIN MAX"},
		{"db delay x 10", "error delay MIN MAX"},
		{"db cut-mid 0", "error cut-mid BYTES"},
		{"db fly", "error unknown command"},
		{"db", "error usage"},
		{"all pass", "ok"},
		{"db status", "ok db pass connections="},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char ans[512];
		ctl(ans, sizeof(ans), "%s", rows[i].cmd);
		if (strncmp(ans, rows[i].want, strlen(rows[i].want)) != 0)
			fail_msg("'%s' answered '%s', want '%s...'",
				 rows[i].cmd, ans, rows[i].want);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_faultproxy PROXY_BINARY\n");
		return 2;
	}
	proxy_bin = argv[1];
	signal(SIGPIPE, SIG_IGN);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t n = sizeof(a);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(lfd, 16) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &n) != 0)
		return 1;
	echo_port = ntohs(a.sin_port);
	pthread_t et;
	pthread_create(&et, NULL, echo_main, (void *)(intptr_t)lfd);
	link_port = free_port();
	ctl_port = free_port();
	char link[128], ctlarg[16];
	snprintf(link, sizeof(link), "db=%d:127.0.0.1:%d", link_port, echo_port);
	snprintf(ctlarg, sizeof(ctlarg), "%d", ctl_port);
	proxy_pid = fork();
	if (proxy_pid == 0) {
		execl(proxy_bin, proxy_bin, "--control", ctlarg, "--link", link,
		      "--link", "other=0:127.0.0.1:1", (char *)NULL);
		_exit(127);
	}
	/* "other" has port 0: the proxy must refuse it and exit 2 */
	int st = 0;
	waitpid(proxy_pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 2) {
		fprintf(stderr, "a link with port 0 was not refused\n");
		return 1;
	}
	proxy_pid = fork();
	if (proxy_pid == 0) {
		execl(proxy_bin, proxy_bin, "--control", ctlarg, "--link", link,
		      "--seed", "7", (char *)NULL);
		_exit(127);
	}
	int c = dial(ctl_port);
	if (c < 0) {
		fprintf(stderr, "the proxy did not start\n");
		kill(proxy_pid, SIGKILL);
		return 1;
	}
	close(c);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_pass, setup),
		cmocka_unit_test_setup(test_blackhole, setup),
		cmocka_unit_test_setup(test_delay, setup),
		cmocka_unit_test_setup(test_delay_then_blackhole, setup),
		cmocka_unit_test_setup(test_cut_mid, setup),
		cmocka_unit_test_setup(test_reset, setup),
		cmocka_unit_test_setup(test_control_errors, setup),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	kill(proxy_pid, SIGTERM);
	waitpid(proxy_pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "the proxy did not exit cleanly on SIGTERM\n");
		rc = rc ? rc : 1;
	}
	return rc;
}
