/*
** test_log.c — level names, level filtering, the text line format, fields
** and truncation.
**
** stderr is pointed at a scratch file (under $TMPDIR or P_tmpdir) with
** dup2() around each captured block and the file is read back. Every test
** clears JOURNAL_STREAM first so a test run started from a systemd unit
** still exercises the text sink it checks.
*/
#include "gbtest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"

static char cap_path[PATH_MAX];
static int cap_saved = -1;
static char cap_text[65536];

/* Start sending stderr to a fresh scratch file. */
static void capture_begin(void)
{
	const char *base = getenv("TMPDIR");
	if (base == NULL || base[0] == '\0')
		base = P_tmpdir;
	snprintf(cap_path, sizeof(cap_path), "%s/gblog.XXXXXX", base);
	int fd = mkstemp(cap_path);
	assert_true(fd >= 0);
	fflush(stderr);
	cap_saved = dup(STDERR_FILENO);
	assert_true(cap_saved >= 0);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	close(fd);
}

/* Put stderr back and return what was written meanwhile. */
static const char *capture_end(void)
{
	fflush(stderr);
	assert_true(dup2(cap_saved, STDERR_FILENO) >= 0);
	close(cap_saved);
	cap_saved = -1;
	FILE *f = fopen(cap_path, "r");
	assert_non_null(f);
	size_t n = fread(cap_text, 1, sizeof(cap_text) - 1, f);
	fclose(f);
	cap_text[n] = '\0';
	unlink(cap_path);
	return cap_text;
}

static int setup(void **state)
{
	(void)state;
	unsetenv("JOURNAL_STREAM");
	log_init("gbtest", LOG_LVL_INFO);
	return 0;
}

static void test_level_names(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int level;
	} rows[] = {
		{ "error", LOG_LVL_ERR },  { "warn", LOG_LVL_WARN },
		{ "info", LOG_LVL_INFO },  { "debug", LOG_LVL_DEBUG },
		{ "", -1 },		   { "INFO", -1 },
		{ "warning", -1 },	   { "err", -1 },
		{ "debug ", -1 },	   { "trace", -1 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(log_level_parse(rows[i].name), rows[i].level);
		if (rows[i].level >= 0)
			assert_string_equal(
				log_level_name((enum log_level)rows[i].level),
				rows[i].name);
	}
	assert_int_equal(log_level_parse(NULL), -1);
	assert_string_equal(log_level_name((enum log_level)99), "unknown");
}

static void test_set_level(void **state)
{
	(void)state;
	for (int l = LOG_LVL_ERR; l <= LOG_LVL_DEBUG; l++) {
		log_set_level((enum log_level)l);
		assert_int_equal(log_get_level(), l);
	}
	/* Out-of-range levels are clamped, not stored. */
	log_set_level((enum log_level)42);
	assert_int_equal(log_get_level(), LOG_LVL_DEBUG);
	log_init("gbtest", LOG_LVL_WARN);
	assert_int_equal(log_get_level(), LOG_LVL_WARN);
}

static void test_filtering(void **state)
{
	(void)state;
	static const char *const tags[] = { "msg-error", "msg-warn",
					    "msg-info", "msg-debug" };
	for (int set = LOG_LVL_ERR; set <= LOG_LVL_DEBUG; set++) {
		log_set_level((enum log_level)set);
		capture_begin();
		log_error("%s", tags[0]);
		log_warn("%s", tags[1]);
		log_info("%s", tags[2]);
		log_debug("%s", tags[3]);
		const char *out = capture_end();
		for (int l = LOG_LVL_ERR; l <= LOG_LVL_DEBUG; l++) {
			int present = strstr(out, tags[l]) != NULL;
			if (present != (l <= set))
				fail_msg("level %s: %s %s:\n%s",
					 log_level_name((enum log_level)set),
					 tags[l],
					 present ? "written" : "missing", out);
		}
	}

	/* A filtered call does not even evaluate its arguments. */
	int calls = 0;
	log_set_level(LOG_LVL_INFO);
	capture_begin();
	log_debug("%d", ++calls);
	log_info("%d", ++calls);
	const char *out = capture_end();
	assert_int_equal(calls, 1);
	assert_non_null(strstr(out, "]: 1\n"));

	/* log_write called directly filters too. */
	capture_begin();
	log_write(LOG_LVL_DEBUG, NULL, "direct-debug");
	out = capture_end();
	assert_string_equal(out, "");
}

static void assert_matches(const char *text, const char *re)
{
	regex_t rx;
	assert_int_equal(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0);
	int rc = regexec(&rx, text, 0, NULL, 0);
	regfree(&rx);
	if (rc != 0)
		fail_msg("\"%s\" does not match /%s/", text, re);
}

static void test_format(void **state)
{
	(void)state;
	char re[256];
	capture_begin();
	log_info("hello %d", 42);
	const char *out = capture_end();
	snprintf(re, sizeof(re),
		 "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
		 "\\.[0-9]{3}Z INFO  gbtest\\[%ld\\]: hello 42\n$",
		 (long)getpid());
	assert_matches(out, re);

	static const struct {
		enum log_level level;
		const char *tag;
	} rows[] = {
		{ LOG_LVL_ERR, "Z ERROR gbtest[" },
		{ LOG_LVL_WARN, "Z WARN  gbtest[" },
		{ LOG_LVL_INFO, "Z INFO  gbtest[" },
		{ LOG_LVL_DEBUG, "Z DEBUG gbtest[" },
	};
	log_set_level(LOG_LVL_DEBUG);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		capture_begin();
		log_write(rows[i].level, NULL, "x");
		out = capture_end();
		if (strstr(out, rows[i].tag) == NULL)
			fail_msg("expected \"%s\" in %s", rows[i].tag, out);
	}

	/* errno survives logging: callers log, then look at errno. */
	errno = EAGAIN;
	capture_begin();
	log_error("errno check");
	capture_end();
	assert_int_equal(errno, EAGAIN);
}

static void test_fields(void **state)
{
	(void)state;
	static const struct {
		const char *field, *want; /* want NULL: the field is dropped */
	} rows[] = {
		{ "GB_REQUEST_ID=req-1", " gb_request_id=req-1" },
		{ "GB_TASK_ID=7", " gb_task_id=7" },
		{ "GB_NOTE=two words", " gb_note=\"two words\"" },
		{ "GB_EMPTY=", " gb_empty=\"\"" },
		{ "GB_Q=say \"hi\"", " gb_q=\"say \\\"hi\\\"\"" },
		{ "no-equals-sign", NULL },
		{ "=no-name", NULL },
	};
	const char *fields[sizeof(rows) / sizeof(rows[0]) + 1];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		fields[i] = rows[i].field;
	fields[sizeof(rows) / sizeof(rows[0])] = NULL;

	capture_begin();
	log_fields(LOG_LVL_INFO, fields, "task %d assigned", 7);
	const char *out = capture_end();
	assert_non_null(strstr(out, "]: task 7 assigned gb_request_id=req-1"));
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].want != NULL) {
			if (strstr(out, rows[i].want) == NULL)
				fail_msg("expected \"%s\" in %s", rows[i].want,
					 out);
		} else if (strstr(out, rows[i].field) != NULL) {
			fail_msg("\"%s\" should be dropped: %s", rows[i].field,
				 out);
		}
	}
	/* One line, however many fields. */
	assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
}

static void test_truncation(void **state)
{
	(void)state;
	static char big[10000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	capture_begin();
	log_info("%s", big);
	const char *out = capture_end();
	const char *msg = strstr(out, "]: ");
	assert_non_null(msg);
	msg += 3;
	size_t len = strlen(msg);
	/* 4 KiB including the terminator: 4092 bytes of text, "...", "\n". */
	assert_int_equal(len, 4092 + 3 + 1);
	assert_string_equal(msg + 4092, "...\n");
	assert_int_equal(strspn(msg, "x"), 4092);

	/* One byte short of the limit is left alone. */
	big[4095] = '\0';
	capture_begin();
	log_info("%s", big);
	out = capture_end();
	msg = strstr(out, "]: ") + 3;
	assert_int_equal(strlen(msg), 4095 + 1);
	assert_null(strstr(msg, "..."));
}

static void test_journal_stream_mismatch_stays_text(void **state)
{
	(void)state;
	/* Values that do not name our stderr, or are not "dev:ino" at all:
	** the inherited-variable case that must keep writing text. */
	static const char *const values[] = { "1:1", "0:0", "garbage", "12:",
					      ":34", "1:2:3" };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		assert_int_equal(setenv("JOURNAL_STREAM", values[i], 1), 0);
		capture_begin();
		log_init("gbtest", LOG_LVL_INFO);
		log_info("text %zu", i);
		const char *out = capture_end();
		char want[64];
		snprintf(want, sizeof(want), "INFO  gbtest[%ld]: text %zu\n",
			 (long)getpid(), i);
		if (strstr(out, want) == NULL)
			fail_msg("JOURNAL_STREAM=%s: got \"%s\"", values[i],
				 out);
	}
	unsetenv("JOURNAL_STREAM");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_level_names, setup),
		cmocka_unit_test_setup(test_set_level, setup),
		cmocka_unit_test_setup(test_filtering, setup),
		cmocka_unit_test_setup(test_format, setup),
		cmocka_unit_test_setup(test_fields, setup),
		cmocka_unit_test_setup(test_truncation, setup),
		cmocka_unit_test_setup(test_journal_stream_mismatch_stays_text,
				       setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
