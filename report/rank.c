// SPDX-License-Identifier: MIT
/* Small helpers shared by the JSON and text output. */
#include "emit.h"

size_t top_n(size_t count, uint64_t (*key)(const void *ctx, size_t i),
	     const void *ctx, size_t *out, size_t n)
{
	size_t have = 0;

	/* Insertion into a short sorted list: n is small (REPORT_TOP_N). */
	for (size_t i = 0; i < count; i++) {
		uint64_t k = key(ctx, i);
		size_t pos = have;

		while (pos > 0 && key(ctx, out[pos - 1]) < k)
			pos--;
		if (pos >= n)
			continue;
		if (have < n)
			have++;
		for (size_t j = have - 1; j > pos; j--)
			out[j] = out[j - 1];
		out[pos] = i;
	}
	return have;
}

/* CONSEC and SEQ count transitions: the first access has none. */
const char *access_pattern(const struct rw_acc *a)
{
	if (!a->ops)
		return "none";
	if (a->ops == 1)
		return "single";
	if (a->pos.consec == a->ops - 1)
		return "consecutive";
	if (a->pos.seq == a->ops - 1)
		return "sequential";
	return "random";
}

uint64_t tfile_ops(const struct tfile *f)
{
	return f->rd.ops + f->wr.ops + f->opens + f->stats + f->other_meta;
}

/* Bytes read at an offset beyond the distinct range they cover; bytes
 * read with none (a FIFO's) were read once. */
static uint64_t bytes_beyond(uint64_t placed_bytes, uint64_t distinct)
{
	return placed_bytes > distinct ? placed_bytes - distinct : 0;
}

/* Bytes read beyond the distinct range the task read (0..max_byte). */
uint64_t reread_bytes(const struct tfile *f)
{
	return bytes_beyond(f->rd.pos.placed_bytes,
			    (uint64_t)(f->rd.pos.max_byte + 1));
}

/* The same across tasks: beyond the largest range one task read. */
uint64_t gfile_reread_bytes(const struct gfile *g)
{
	return bytes_beyond(g->placed_read, g->max_distinct);
}
