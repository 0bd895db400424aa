/*
** log.h — leveled logging for the worker and the CLI.
**
** On a terminal or a plain file:
**   "2026-11-23T10:00:00.123Z INFO  ident[pid]: message key=value ...".
** Under systemd (JOURNAL_STREAM set and matching stderr) lines go to journald
** with sd_journal_send and structured fields (PRIORITY, GB_REQUEST_ID, ...).
** The level test happens in the macro, before any argument is formatted.
*/
#ifndef GB_LOG_H
#define GB_LOG_H

enum log_level {
	LOG_LVL_ERR = 0,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

/* Set the program name and level; detect journald. Safe to call again. */
void log_init(const char *ident, enum log_level level);

/* Change the level at run time (SIGHUP reload). */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* "error", "warn", "info", "debug" -> level; -1 if unknown. */
int log_level_parse(const char *s);
const char *log_level_name(enum log_level level);

/*
** Write one line. `fields` is NULL or a NULL-terminated array of "KEY=value"
** strings added as journald fields (and as " key=value" on a terminal).
*/
void log_write(enum log_level level, const char *const *fields,
	       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define GB_LOG_(lvl, fields, ...)                                        \
	do {                                                             \
		if ((lvl) <= log_get_level())                            \
			log_write((lvl), (fields), __VA_ARGS__);         \
	} while (0)
#define log_error(...) GB_LOG_(LOG_LVL_ERR, NULL, __VA_ARGS__)
#define log_warn(...) GB_LOG_(LOG_LVL_WARN, NULL, __VA_ARGS__)
#define log_info(...) GB_LOG_(LOG_LVL_INFO, NULL, __VA_ARGS__)
#define log_debug(...) GB_LOG_(LOG_LVL_DEBUG, NULL, __VA_ARGS__)
#define log_fields(lvl, fields, ...) GB_LOG_(lvl, fields, __VA_ARGS__)

#endif
