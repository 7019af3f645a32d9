/* SPDX-License-Identifier: MIT */
/*
 * Darshan's positional counters of one kind of access (reads or writes) to
 * one file.  The tracer's summary and the report both keep them, and must
 * count alike: one implementation serves both.
 */
#ifndef IOWRAP_ACCESS_SEQ_H
#define IOWRAP_ACCESS_SEQ_H

#include <stdint.h>

struct access_seq {
	int64_t last_end; /* offset after the previous access; -1: none */
	int64_t max_byte; /* highest offset touched; -1: none */
	uint64_t consec; /* started where the previous one ended */
	uint64_t seq; /* started at or after it (consec included) */
	uint64_t placed; /* with a known offset: the report's Fig. 5 bars */
	/* Their bytes: only these can be bytes read twice (a FIFO's reads
	 * have no offset, and each of its bytes is read once). */
	uint64_t placed_bytes;
};

#define ACCESS_SEQ_INIT                        \
	{                                      \
		.last_end = -1, .max_byte = -1 \
	}

/* An access with no file position (offset -1) changes nothing. */
void access_seq_add(struct access_seq *a, int64_t offset, uint64_t bytes);

#endif
