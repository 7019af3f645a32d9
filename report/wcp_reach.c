// SPDX-License-Identifier: MIT
/*
 * Which of a name's entries is the latest live at a time, not counting one
 * task's.  Each entry is live over a few spans of time, computed once
 * (wcp.c: a version written through a symbolic link is under the kernel's
 * name from its first write while its writer has it by the name it
 * opened, until a rename fills or vacates that name).  Walking a name's
 * entries back from the latest begun by t to the first still live there
 * costs one step per entry no longer live, at each lookup: with n
 * versions gone from a name and m readers, n x m.  Here a segment tree
 * over the times the spans start and end holds each span in O(log s)
 * nodes; a lookup at t combines the O(log s) nodes over t's slot.  Each
 * node keeps its latest entry and the latest of another task than that
 * one's: the latest not of task self is one of the two.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util.h"

/* Entries as k + 1 (0: none), so that the latest is the greatest. */
struct reach_best {
	size_t k1, task1; /* the latest, and its task */
	size_t k2; /* the latest of another task than task1 */
};

static int cmp_time(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The slot x[slot] of time t: the last that starts by t; m if none. */
static size_t slot_of(const int64_t *x, size_t m, int64_t t)
{
	size_t lo = 0, hi = m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : m;
}

/* The distinct times at which the spans begin or end (the time after
 * their last) into x, ascending, using tmp; how many. */
static size_t slot_starts(const struct reach_span *span, size_t n, int64_t *tmp,
			  int64_t *x)
{
	size_t m = 0, u = 0;

	for (size_t s = 0; s < n; s++) {
		tmp[m++] = span[s].from;
		if (span[s].last < INT64_MAX)
			tmp[m++] = span[s].last + 1;
	}
	sort_array(tmp, m, sizeof(*tmp), cmp_time);
	for (size_t i = 0; i < m; i++)
		if (!u || tmp[i] != x[u - 1])
			x[u++] = tmp[i];
	return u;
}

static void keep(struct reach_best *b, size_t k, size_t task)
{
	if (k > b->k1) {
		if (task != b->task1)
			b->k2 = b->k1;
		b->k1 = k;
		b->task1 = task;
	} else if (task != b->task1 && k > b->k2) {
		b->k2 = k;
	}
}

/* Span sp into the tree node[] over the m slots starting at x: the nodes
 * that together cover its slots, [l, r). */
static void add_span(struct reach_best *node, const int64_t *x, size_t m,
		     const struct reach_span *sp)
{
	size_t l = slot_of(x, m, sp->from);
	size_t r = sp->last < INT64_MAX ? slot_of(x, m, sp->last + 1) : m;

	for (l += m, r += m; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			keep(&node[l++], sp->k + 1, sp->task);
		if (r & 1)
			keep(&node[--r], sp->k + 1, sp->task);
	}
}

void reach_index_build(struct reach_index *ri, size_t names,
		       const size_t *sfirst, const struct reach_span *span)
{
	size_t n = sfirst[names];
	int64_t *tmp = xcalloc(2 * n + 1, sizeof(*tmp));

	ri->xfirst = xcalloc(names + 1, sizeof(size_t));
	ri->x = xcalloc(2 * n + 1, sizeof(*ri->x));
	for (size_t d = 0; d < names; d++)
		ri->xfirst[d + 1] =
			ri->xfirst[d] + slot_starts(span + sfirst[d],
						    sfirst[d + 1] - sfirst[d],
						    tmp, ri->x + ri->xfirst[d]);
	free(tmp);
	ri->node = xcalloc(2 * ri->xfirst[names] + 1, sizeof(*ri->node));
	for (size_t d = 0; d < names; d++)
		for (size_t s = sfirst[d]; s < sfirst[d + 1]; s++)
			add_span(ri->node + 2 * ri->xfirst[d],
				 ri->x + ri->xfirst[d],
				 ri->xfirst[d + 1] - ri->xfirst[d], &span[s]);
}

size_t reach_index_latest(const struct reach_index *ri, size_t d, size_t self,
			  int64_t t)
{
	const struct reach_best *node = ri->node + 2 * ri->xfirst[d];
	size_t m = ri->xfirst[d + 1] - ri->xfirst[d];
	size_t p = slot_of(ri->x + ri->xfirst[d], m, t), best = 0;

	if (p == m)
		return NO_INDEX;
	/* The leaf of t's slot and the nodes above it. */
	for (p += m; p > 0; p >>= 1) {
		size_t k = node[p].task1 != self ? node[p].k1 : node[p].k2;

		if (k > best)
			best = k;
	}
	return best ? best - 1 : NO_INDEX;
}

void reach_index_release(struct reach_index *ri)
{
	free(ri->xfirst);
	free(ri->x);
	free(ri->node);
}
