/*
** zbuf.h — deflate and inflate of whole buffers (prefix zb_), in zlib's
** format (deflate by zlib, inflate by libdeflate: zbuf.c says why).
**
** Why: every decision stores its inputs as a scenario (store/
** store_inputs.h), and a scenario is JSON that repeats the same keys for
** every queue, nucleus or task queue: zlib shrinks it five to twenty
** times, and MariaDB keeps the row in a MEDIUMBLOB. Reading one back is
** bounded by the size recorded beside it, never by what the compressed
** bytes claim, so a damaged row cannot make the reader allocate without
** limit.
*/
#ifndef GB_ZBUF_H
#define GB_ZBUF_H

#include <stddef.h>

/* The largest buffer zb_inflate hands out: a scenario of a 1,000-queue
** grid is a few MB of JSON; a task queue index of a million jobs, about
** 20 MB. */
#define ZB_MAX_RAW (64u << 20)

/*
** Compress src[0..n) at zlib level `level` (1 fast .. 9 small; 6 is
** zlib's default). On GB_OK *out is a malloc'd buffer of *outlen bytes
** the caller frees. Returns GB_EINVAL (NULL arguments, a level out of
** range), GB_ETOOBIG (n over ZB_MAX_RAW) or GB_ENOMEM.
*/
int zb_deflate(const void *src, size_t n, int level, unsigned char **out,
	       size_t *outlen);

/*
** Decompress src[0..n), which must inflate to exactly `raw` bytes (the
** size stored with it). On GB_OK *out is a malloc'd, NUL-terminated
** buffer of raw bytes (plus the NUL) the caller frees. Returns GB_EINVAL
** (NULL arguments), GB_ETOOBIG (raw over ZB_MAX_RAW), GB_EDECODE (not a
** zlib stream, truncated, or not exactly raw bytes) or GB_ENOMEM.
*/
int zb_inflate(const void *src, size_t n, size_t raw, char **out);

#endif
