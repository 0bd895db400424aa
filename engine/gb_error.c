/*
** gb_error.c — the message table behind gb_error.h.
*/
#include "gb_error.h"

#include <stddef.h>

struct err_row {
	int code;
	const char *name;
	const char *text;
};

static const struct err_row err_table[] = {
#define GB_ERR_ROW(name, value, text) {value, #name, text},
	GB_ERRORS(GB_ERR_ROW)
#undef GB_ERR_ROW
};

static const struct err_row *err_find(int err)
{
	for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
		if (err_table[i].code == err)
			return &err_table[i];
	return NULL;
}

const char *gb_strerror(int err)
{
	const struct err_row *r = err_find(err);
	return r ? r->text : "unknown error";
}

const char *gb_errname(int err)
{
	const struct err_row *r = err_find(err);
	return r ? r->name : NULL;
}
