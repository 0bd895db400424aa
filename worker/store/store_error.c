/*
** store_error.c — how the store records and names a failure: the server's
** error numbers mapped to the GB_E* codes callers act on (GB_EDBGONE:
** reconnect and redo; GB_EDBRETRY: a deadlock or lock wait, retry), the
** connection's last message for st_error, and the transaction-state
** check. The lowest file of the store: every other one reports through
** it, and it calls none of them.
*/
#include <stdarg.h>
#include <stdio.h>

#include <errmsg.h>
#include <mysqld_error.h>

#include "gb_error.h"
#include "store/store_internal.h"

int st_map_errno(unsigned err)
{
	switch (err) {
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_SERVER_LOST_EXTENDED:
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
	case CR_STMT_CLOSED: /* the statement's connection was torn down */
	case ER_CONNECTION_KILLED:
	case ER_SERVER_SHUTDOWN:
	case ER_UNKNOWN_COM_ERROR: /* 1047: a Galera node that left the
				      primary component ("WSREP has not yet
				      prepared node"): reconnect, fail over */
	case ER_OPTION_PREVENTS_STATEMENT: /* 1290: read_only is set */
	case ER_READ_ONLY_MODE: /* 1836: the same, inside a transaction */
		/* A server that refuses writes (maintenance, a demoted
		** primary) is away for a worker as much as a stopped one:
		** the request must be held until it takes writes again. As a
		** plain GB_EDB it was handed back to the queue at once, again
		** and again, until the queue's delivery limit dead-lettered
		** it within a second. */
		return GB_EDBGONE;
	case ER_LOCK_DEADLOCK:
	case ER_LOCK_WAIT_TIMEOUT:
		return GB_EDBRETRY;
	default:
		return GB_EDB;
	}
}

static int st_record(struct st_db *db, unsigned err, const char *text)
{
	db->errnum = err;
	snprintf(db->msg, sizeof(db->msg), "%s (%u)",
		 text && text[0] ? text : "unknown error", err);
	return st_map_errno(err);
}

int st_fail_conn(struct st_db *db)
{
	if (db->my == NULL)
		return st_failf(db, GB_EDBGONE,
				"not connected to the database");
	return st_record(db, mysql_errno(db->my), mysql_error(db->my));
}

int st_fail_stmt(struct st_db *db, MYSQL_STMT *s)
{
	return st_record(db, mysql_stmt_errno(s), mysql_stmt_error(s));
}

int st_failf(struct st_db *db, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(db->msg, sizeof(db->msg), fmt, ap);
	va_end(ap);
	db->errnum = 0;
	return code;
}

const char *st_error(const struct st_db *db)
{
	if (db == NULL)
		return "no database connection";
	return db->msg[0] ? db->msg : "no error";
}

int st_in_transaction(struct st_db *db)
{
	unsigned int status = 0;
	if (db->my == NULL ||
	    mariadb_get_infov(db->my, MARIADB_CONNECTION_SERVER_STATUS,
			      &status) != 0)
		return 0;
	return (status & SERVER_STATUS_IN_TRANS) != 0;
}

int st_need_txn(struct st_db *db, int want, const char *fn)
{
	if (!st_in_transaction(db) == !want)
		return GB_OK;
	/* Inside: START TRANSACTION would silently commit the caller's work.
	** Outside: autocommit would make every statement its own
	** transaction and break the function's atomicity. */
	return st_failf(db, GB_ESTATE, "%s %s a transaction", fn,
			want ? "outside" : "inside");
}

int st_too_big(struct st_db *db, const char *what, size_t n)
{
	return st_failf(db, GB_ETOOBIG,
			"%zu %s do not fit the request's memory", n, what);
}
