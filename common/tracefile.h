/* SPDX-License-Identifier: MIT */
/*
 * One buffered output file of a trace.  Writes never fail towards the
 * caller: the first error is latched, reported once, and the file stops
 * taking data.  The task must never notice that its trace could not be
 * written.
 */
#ifndef IOWRAP_TRACEFILE_H
#define IOWRAP_TRACEFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "outdir.h"
#include "strbuf.h"

#define TRACEFILE_FLUSH_AT (64u * 1024)

struct tracefile {
	const char *name;
	int fd;
	int error; /* first -errno, 0 while healthy */
	bool error_reported;
	uint64_t bytes_lost; /* bytes dropped after the error */
	struct strbuf buf;
};

/* Returns 0 or -errno (then tf->error is set and writes are dropped). */
int tf_open(struct tracefile *tf, struct outdir *od, const char *name);
/* Appends a finished record; flushes when the buffer is big. */
void tf_put(struct tracefile *tf, const struct strbuf *record);
/* Returns tf->error after trying to write out the buffer. */
int tf_flush(struct tracefile *tf);
int tf_close(struct tracefile *tf);

#endif
