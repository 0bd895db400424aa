/*
** gb_error.h — error codes shared by the engine, the worker and the CLI.
**
** Every fallible function in gridbroker returns an int: 0 (GB_OK) on success
** or one of the negative codes below. The list is an X-macro so the enum and
** the message table cannot drift apart (tests/unit/engine/test_error.c checks that
** every code has a message). Codes are grouped by range: -1..-19 input and
** engine, -20.. database, -30.. AMQP, -40.. configuration, -50.. system.
*/
#ifndef GB_ERROR_H
#define GB_ERROR_H

#define GB_ERRORS(X)                                                   \
	X(GB_OK, 0, "success")                                             \
	X(GB_ENOMEM, -1, "out of memory")                                  \
	X(GB_EINVAL, -2, "invalid argument")                               \
	X(GB_ERANGE, -3, "value out of range")                             \
	X(GB_ETYPE, -4, "wrong type")                                      \
	X(GB_EMISSING, -5, "required field missing")                       \
	X(GB_ETOOBIG, -6, "input too large")                               \
	X(GB_ENOTFOUND, -7, "not found")                                   \
	X(GB_EDUP, -8, "duplicate")                                        \
	X(GB_ESTATE, -9, "invalid state")                                  \
	X(GB_EDECODE, -10, "malformed encoding")                           \
	X(GB_EDB, -20, "database error")                                   \
	X(GB_EDBGONE, -21, "database connection lost")                     \
	X(GB_EDBRETRY, -22, "database transaction must be retried")        \
	X(GB_EAMQP, -30, "AMQP error")                                     \
	X(GB_EAMQPGONE, -31, "AMQP connection lost")                       \
	X(GB_ECONFIG, -40, "configuration error")                          \
	X(GB_EIO, -50, "I/O error")                                        \
	X(GB_ETIMEOUT, -51, "timed out")

enum gb_error {
#define GB_ERR_ENUM(name, value, text) name = value,
	GB_ERRORS(GB_ERR_ENUM)
#undef GB_ERR_ENUM
};

/*
** Return a static, human-readable message for an error code. Unknown codes
** give "unknown error". Never returns NULL.
*/
const char *gb_strerror(int err);

/*
** Return the symbolic name of an error code ("GB_EINVAL"), or NULL when the
** code is unknown. Used by the tests and by log lines meant for grepping.
*/
const char *gb_errname(int err);

#endif
