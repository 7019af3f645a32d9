// SPDX-License-Identifier: MIT
#include "access_seq.h"

#include <stdint.h>

/* The first access has no previous one: neither CONSEC nor SEQ. */
void access_seq_add(struct access_seq *a, int64_t offset, uint64_t bytes)
{
	if (offset < 0)
		return;
	a->placed++;
	a->placed_bytes += bytes;
	if (a->last_end >= 0 && offset == a->last_end)
		a->consec++;
	if (a->last_end >= 0 && offset >= a->last_end)
		a->seq++;
	/* Offsets come from trace files too: saturate, never overflow. */
	a->last_end = bytes > (uint64_t)(INT64_MAX - offset) ?
			      INT64_MAX :
			      offset + (int64_t)bytes;
	if (bytes && a->last_end - 1 > a->max_byte)
		a->max_byte = a->last_end - 1;
}
