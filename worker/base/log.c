/*
** log.c — leveled logging to stderr or to journald.
**
** Two sinks, chosen once in log_init():
**  - journald, when systemd connected our stderr to the journal (it then
**    sets JOURNAL_STREAM="dev:ino" of that stream; we compare it with
**    fstat(stderr) so a child that inherited the variable but writes to a
**    terminal or file still gets text). Entries carry PRIORITY and the
**    caller's fields as real journal fields, so `journalctl
**    GB_REQUEST_ID=...` finds every line of one request.
**  - otherwise one text line per call on stderr:
**    "2026-11-23T10:00:00.123Z INFO  ident[pid]: message key=value ...",
**    UTC with milliseconds, written with a single write(2) so lines from
**    several workers sharing a file do not interleave mid-line.
** If the journal refuses an entry, the line goes to stderr instead of
** being lost (libsystemd itself drops entries quietly when there is no
** journal socket at all, which cannot happen while journald holds our
** stderr).
**
** Everything is bounded: the message is cut at LOG_MSG_MAX bytes (ending in
** "..."), at most LOG_FIELDS_MAX fields are used, each field at most
** LOG_FIELD_MAX bytes. The processes are single-threaded, so the state is a
** plain static struct and the buffers are static (a log line must not be
** able to overflow the stack of a deep call chain).
*/
#include "base/log.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The code location would always be this file: leave it out. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#define LOG_MSG_MAX 4096    /* formatted message, with its NUL */
#define LOG_FIELDS_MAX 32   /* caller fields used per line */
#define LOG_FIELD_MAX 512   /* one field, "KEY=value", with its NUL */
#define LOG_LINE_MAX 16384  /* whole text line: prefix, message, fields */

static struct {
	char ident[64];
	enum log_level level;
	int journal; /* 1: stderr is our journal stream */
} lg = { "gridbroker", LOG_LVL_INFO, 0 };

static char msg_buf[LOG_MSG_MAX];
static char line_buf[LOG_LINE_MAX];
static char field_buf[LOG_FIELDS_MAX][LOG_FIELD_MAX];

static const char *const level_names[] = { "error", "warn", "info", "debug" };
static const char *const level_tags[] = { "ERROR", "WARN", "INFO", "DEBUG" };
static const int level_prio[] = { 3, 4, 6, 7 }; /* syslog priorities */
#define N_LEVELS ((int)(sizeof(level_names) / sizeof(level_names[0])))

/* Does $JOURNAL_STREAM name the file open as our stderr? */
static int stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	if (js == NULL || js[0] == '\0')
		return 0;
	char *end = NULL;
	errno = 0;
	unsigned long long dev = strtoull(js, &end, 10);
	if (errno != 0 || end == js || *end != ':')
		return 0;
	const char *ino_s = end + 1;
	unsigned long long ino = strtoull(ino_s, &end, 10);
	if (errno != 0 || end == ino_s || *end != '\0')
		return 0;
	struct stat st;
	if (fstat(STDERR_FILENO, &st) != 0)
		return 0;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void log_init(const char *ident, enum log_level level)
{
	snprintf(lg.ident, sizeof(lg.ident), "%s",
		 ident && ident[0] ? ident : "gridbroker");
	log_set_level(level);
	lg.journal = stderr_is_journal();
}

void log_set_level(enum log_level level)
{
	if ((int)level < LOG_LVL_ERR)
		level = LOG_LVL_ERR;
	if ((int)level > LOG_LVL_DEBUG)
		level = LOG_LVL_DEBUG;
	lg.level = level;
}

enum log_level log_get_level(void)
{
	return lg.level;
}

int log_level_parse(const char *s)
{
	if (s == NULL)
		return -1;
	for (int i = 0; i < N_LEVELS; i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	return -1;
}

const char *log_level_name(enum log_level level)
{
	if ((int)level < 0 || (int)level >= N_LEVELS)
		return "unknown";
	return level_names[level];
}

/*
** Copy "KEY=value" into dst as a journal field: the name upper-cased, every
** character outside [A-Z0-9_] replaced by '_', "GB_" put in front of a name
** that journald would refuse (leading digit) or treat as trusted (leading
** '_'), the name cut at 64 characters. Returns 0, or -1 when `f` has no '='
** or an empty name.
*/
static int journal_field(const char *f, char *dst, size_t dstlen)
{
	const char *eq = strchr(f, '=');
	if (eq == NULL || eq == f)
		return -1;
	size_t n = 0;
	if (f[0] == '_' || isdigit((unsigned char)f[0])) {
		memcpy(dst, "GB_", 3);
		n = 3;
	}
	for (const char *p = f; p < eq && n < 64; p++) {
		unsigned char ch = (unsigned char)*p;
		ch = (unsigned char)toupper(ch);
		dst[n++] = (char)((isupper(ch) || isdigit(ch)) ? ch : '_');
	}
	snprintf(dst + n, dstlen - n, "%s", eq);
	return 0;
}

/* Append to line_buf at *len, never past its end. */
static void line_add(size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line_add(size_t *len, const char *fmt, ...)
{
	if (*len >= sizeof(line_buf) - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line_buf + *len, sizeof(line_buf) - *len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*len += (size_t)n;
	if (*len > sizeof(line_buf) - 1)
		*len = sizeof(line_buf) - 1;
}

/* " key=value", the key lower-cased; a value with blanks, quotes or
** nothing at all is quoted so the line stays splittable. */
static void text_field(size_t *len, const char *f)
{
	const char *eq = strchr(f, '=');
	if (eq == NULL || eq == f)
		return;
	line_add(len, " ");
	for (const char *p = f; p < eq; p++)
		line_add(len, "%c", (char)tolower((unsigned char)*p));
	const char *v = eq + 1;
	if (v[0] != '\0' && strpbrk(v, " \t\"\n") == NULL) {
		line_add(len, "=%.*s", LOG_FIELD_MAX, v);
		return;
	}
	line_add(len, "=\"");
	for (const char *p = v; *p && p - v < LOG_FIELD_MAX; p++) {
		if (*p == '"' || *p == '\\')
			line_add(len, "\\%c", *p);
		else if (*p == '\n')
			line_add(len, "\\n");
		else
			line_add(len, "%c", *p);
	}
	line_add(len, "\"");
}

static void write_text(enum log_level level, const char *const *fields)
{
	struct timespec ts;
	struct tm tm;
	char stamp[32] = "";
	clock_gettime(CLOCK_REALTIME, &ts);
	if (gmtime_r(&ts.tv_sec, &tm) != NULL)
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	size_t len = 0;
	line_add(&len, "%s.%03ldZ %-5s %s[%ld]: %s", stamp,
		 (long)(ts.tv_nsec / 1000000), level_tags[level], lg.ident,
		 (long)getpid(), msg_buf);
	for (int i = 0; fields && fields[i] && i < LOG_FIELDS_MAX; i++)
		text_field(&len, fields[i]);
	if (len >= sizeof(line_buf) - 1)
		len = sizeof(line_buf) - 2; /* keep room for the newline */
	line_buf[len++] = '\n';
	const char *p = line_buf;
	while (len > 0) {
		ssize_t w = write(STDERR_FILENO, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* nowhere left to complain to */
		p += w;
		len -= (size_t)w;
	}
}

static int write_journal(enum log_level level, const char *const *fields)
{
	struct iovec iov[3 + LOG_FIELDS_MAX];
	char prio[16], ident[96];
	int n = 0;
	/* The text sink is not used on this path, so its buffer holds the
	** MESSAGE= field. */
	int m = snprintf(line_buf, sizeof(line_buf), "MESSAGE=%s", msg_buf);
	if (m < 0)
		return -1;
	iov[n].iov_base = line_buf;
	iov[n++].iov_len = strlen(line_buf);
	snprintf(prio, sizeof(prio), "PRIORITY=%d", level_prio[level]);
	iov[n].iov_base = prio;
	iov[n++].iov_len = strlen(prio);
	snprintf(ident, sizeof(ident), "SYSLOG_IDENTIFIER=%s", lg.ident);
	iov[n].iov_base = ident;
	iov[n++].iov_len = strlen(ident);
	for (int i = 0; fields && fields[i] && i < LOG_FIELDS_MAX; i++) {
		if (journal_field(fields[i], field_buf[i], LOG_FIELD_MAX) != 0)
			continue;
		iov[n].iov_base = field_buf[i];
		iov[n++].iov_len = strlen(field_buf[i]);
	}
	return sd_journal_sendv(iov, n);
}

void log_write(enum log_level level, const char *const *fields,
	       const char *fmt, ...)
{
	if ((int)level < 0 || (int)level >= N_LEVELS)
		level = LOG_LVL_ERR;
	if (level > lg.level)
		return;
	int saved = errno; /* callers log right before reading errno */
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg_buf, sizeof(msg_buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		snprintf(msg_buf, sizeof(msg_buf), "(unformattable message)");
	else if ((size_t)n >= sizeof(msg_buf))
		memcpy(msg_buf + sizeof(msg_buf) - 4, "...", 4);
	if (!lg.journal || write_journal(level, fields) < 0)
		write_text(level, fields);
	errno = saved;
}
