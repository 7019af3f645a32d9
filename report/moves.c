// SPDX-License-Identifier: MIT
/*
 * Renames and links across tasks.  Tasks are joined by names: a reader's
 * name is the writer's only if no task moved the file between them.  The
 * moves of all tasks in time order, and per name the moves into it and
 * the renames away from it, let the WCP find what a name held at any time
 * in O(log n).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util.h"

static int cmp_move(const void *a, const void *b)
{
	const struct move *x = a, *y = b;

	if (x->nm->time_us != y->nm->time_us)
		return x->nm->time_us < y->nm->time_us ? -1 : 1;
	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	return x->nm->seq < y->nm->seq ? -1 : x->nm->seq > y->nm->seq;
}

static bool same_row(const struct move *x, const struct move *y)
{
	return x->task == y->task && x->nm->seq == y->nm->seq;
}

static size_t name_index(struct analysis *an, const char *path, size_t len,
			 size_t *names)
{
	size_t d = hmap_get(&an->names, path, len);

	if (d == HMAP_NONE) {
		d = (*names)++;
		hmap_put(&an->names, path, len, d);
	}
	return d;
}

/* Counting sort of the moves by the names they fill or vacate, each
 * name's in time order. */
static void index_by_name(struct analysis *an)
{
	size_t names = 0, *from = xcalloc(an->nmoves + 1, sizeof(size_t));

	for (size_t k = 0; k < an->nmoves; k++) {
		const struct name_move *nm = an->move[k].nm;

		an->move[k].to = name_index(an, nm->to, nm->to_len, &names);
		from[k] = nm->vacates ? name_index(an, nm->from, nm->from_len,
						   &names) :
					NO_INDEX;
	}
	an->name_first = xcalloc(names + 1, sizeof(size_t));
	an->name_move = xcalloc(2 * an->nmoves + 1, sizeof(size_t));
	for (size_t k = 0; k < an->nmoves; k++) {
		an->name_first[an->move[k].to + 1]++;
		if (from[k] != NO_INDEX)
			an->name_first[from[k] + 1]++;
	}
	for (size_t d = 0; d < names; d++)
		an->name_first[d + 1] += an->name_first[d];
	for (size_t k = 0; k < an->nmoves; k++) {
		an->name_move[an->name_first[an->move[k].to]++] = k;
		if (from[k] != NO_INDEX)
			an->name_move[an->name_first[from[k]]++] = k;
	}
	/* The fill advanced each start to the next name's: move back. */
	for (size_t d = names; d > 0; d--)
		an->name_first[d] = an->name_first[d - 1];
	an->name_first[0] = 0;
	an->nnames = names;
	free(from);
}

static bool moved_a_file(const struct analysis *an, size_t pos)
{
	return !an->move[an->name_move[pos]].nm->link;
}

/* Per position in each name's moves, the position of its first move from
 * there on that was no symbolic link's rename (the name's end: none), and
 * when such a move first filled or vacated each name (INT64_MAX: none
 * did). */
static void index_file_moves(struct analysis *an)
{
	an->name_moved_us = xcalloc(an->nnames + 1, sizeof(int64_t));
	an->name_file_move = xcalloc(2 * an->nmoves + 1, sizeof(size_t));
	for (size_t d = 0; d < an->nnames; d++) {
		size_t end = an->name_first[d + 1], next = end;

		for (size_t p = end; p > an->name_first[d]; p--) {
			if (moved_a_file(an, p - 1))
				next = p - 1;
			an->name_file_move[p - 1] = next;
		}
		an->name_moved_us[d] =
			next < end ? an->move[an->name_move[next]].nm->time_us :
				     INT64_MAX;
	}
}

static struct move below_as_move(const struct below_move *b)
{
	return (struct move){ .nm = &b->nm, .task = b->task, .src = NO_INDEX };
}

/*
 * The names below renamed directories move with them (moves_below.c):
 * their moves join the others, in order.  moves_below makes them walking
 * an->move in order, each at its directory's move's time, task and row:
 * already sorted, so they are merged in, after the moves of their row
 * (a row touches a name once, so its moves' order among themselves
 * changes no lookup).
 */
static void add_below_moves(struct workflow *wf, struct analysis *an)
{
	struct move *merged;
	size_t k = 0, b = 0, n = 0;

	moves_below(wf, an);
	if (!an->nbelow)
		return;
	merged = xcalloc(an->nmoves + an->nbelow, sizeof(*merged));
	while (b < an->nbelow) {
		struct move next = below_as_move(&an->below[b]);

		if (k < an->nmoves && cmp_move(&an->move[k], &next) <= 0) {
			merged[n++] = an->move[k++];
		} else {
			merged[n++] = next;
			b++;
		}
	}
	while (k < an->nmoves)
		merged[n++] = an->move[k++];
	free(an->move);
	an->move = merged;
	an->nmoves = n;
}

/* Counting sort of the task's moves by the record they moved: a
 * version's names are its record's moves (wcp.c), not all of its task's
 * (a task renaming 100,000 files, each once, looked at 10^10). */
static void index_by_file(struct task *t)
{
	size_t *first = xcalloc(t->nfiles + 2, sizeof(size_t));

	free(t->file_move);
	free(t->file_move_first);
	t->file_move = xcalloc(t->nmoves + 1, sizeof(size_t));
	for (size_t i = 0; i < t->nmoves; i++)
		if (t->move[i].tfile < t->nfiles)
			first[t->move[i].tfile + 2]++;
	for (size_t f = 0; f < t->nfiles; f++)
		first[f + 2] += first[f + 1];
	/* first[f + 1]: where record f's go; the fill advances it to its
	 * end, record f + 1's start, so first[f] is then record f's. */
	for (size_t i = 0; i < t->nmoves; i++)
		if (t->move[i].tfile < t->nfiles)
			t->file_move[first[t->move[i].tfile + 1]++] = i;
	t->file_move_first = first;
}

void moves_collect(struct workflow *wf, struct analysis *an)
{
	size_t n = 0;

	hmap_init(&an->names);
	for (size_t t = 0; t < wf->ntasks; t++) {
		n += wf->task[t].nmoves;
		index_by_file(&wf->task[t]);
	}
	an->move = xcalloc(n ? n : 1, sizeof(*an->move));
	for (size_t t = 0; t < wf->ntasks; t++)
		for (size_t i = 0; i < wf->task[t].nmoves; i++)
			an->move[an->nmoves++] = (struct move){
				.nm = &wf->task[t].move[i],
				.task = t,
				.src = NO_INDEX,
			};
	sort_array(an->move, an->nmoves, sizeof(*an->move), cmp_move);
	add_below_moves(wf, an);
	for (size_t k = 0; k < an->nmoves; k++)
		an->move[k].group =
			k && same_row(&an->move[k - 1], &an->move[k]) ?
				an->move[k - 1].group :
				k;
	index_by_name(an);
	index_file_moves(an);
}

bool moves_name_moved_by(const struct analysis *an, const char *path,
			 size_t len, int64_t t)
{
	size_t d = hmap_get(&an->names, path, len);

	return d != HMAP_NONE && an->name_moved_us[d] <= t;
}

/* The position in name d's moves of its first move from bound on or
 * after t: its moves are in time order, so those before bound that ended
 * by t come first. */
static size_t name_pos(const struct analysis *an, size_t d, size_t bound,
		       int64_t t)
{
	size_t lo = an->name_first[d], hi = an->name_first[d + 1];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		size_t k = an->name_move[mid];

		if (k < bound && an->move[k].nm->time_us <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool moves_name_moved_after(const struct analysis *an, const char *path,
			    size_t len, int64_t after, int64_t *when)
{
	size_t d = an->nmoves ? hmap_get(&an->names, path, len) : HMAP_NONE;
	size_t p;

	if (d == HMAP_NONE)
		return false;
	/* Its moves are in time order: the first after time after, then
	 * the first from there that moved a file. */
	p = name_pos(an, d, an->nmoves, after);
	if (p == an->name_first[d + 1])
		return false;
	p = an->name_file_move[p];
	if (p == an->name_first[d + 1])
		return false;
	*when = an->move[an->name_move[p]].nm->time_us;
	return true;
}

size_t moves_last_at(const struct analysis *an, const char *path, size_t len,
		     int64_t t, size_t bound, bool *into)
{
	size_t d = hmap_get(&an->names, path, len);
	size_t lo, k;

	if (d == HMAP_NONE)
		return NO_INDEX;
	/* The last that ended by t and comes before bound. */
	lo = name_pos(an, d, bound, t);
	if (lo == an->name_first[d])
		return NO_INDEX;
	k = an->name_move[lo - 1];
	*into = an->move[k].to == d;
	return k;
}

/* The first move after those that ended by t. */
static size_t moves_after(const struct analysis *an, int64_t t)
{
	size_t lo = 0, hi = an->nmoves;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (an->move[mid].nm->time_us <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first move after move k's row (an exchange's row has two). */
static size_t row_end(const struct analysis *an, size_t k)
{
	while (k + 1 < an->nmoves && an->move[k + 1].group == an->move[k].group)
		k++;
	return k + 1;
}

const char *moves_follow(const struct analysis *an, const char *path,
			 size_t *len, int64_t *since, int64_t until,
			 size_t *bound, int64_t *gone_us)
{
	size_t k = moves_after(an, *since);

	*gone_us = INT64_MAX;
	for (;;) {
		size_t d = hmap_get(&an->names, path, *len);
		size_t lo, j;
		const struct name_move *nm;

		if (d == HMAP_NONE)
			return path;
		lo = name_pos(an, d, k, INT64_MAX);
		/* The name's next move that took the file away from it. */
		for (;; lo++) {
			if (lo == an->name_first[d + 1])
				return path;
			j = an->name_move[lo];
			nm = an->move[j].nm;
			if (nm->time_us > until)
				return path;
			if (an->move[j].to != d || nm->swaps)
				break;
			/* A rename or link into the name: another file. */
			if (!same_name(nm->from, nm->from_len, nm->to,
				       nm->to_len)) {
				*gone_us = nm->time_us;
				return path;
			}
		}
		/* Renamed away (to), or exchanged (the other name: from). */
		if (an->move[j].to != d) {
			path = nm->to;
			*len = nm->to_len;
		} else {
			path = nm->from;
			*len = nm->from_len;
		}
		*since = nm->time_us;
		k = row_end(an, j);
		*bound = k;
	}
}

void moves_release(struct analysis *an)
{
	free(an->move);
	free(an->name_first);
	free(an->name_move);
	free(an->name_moved_us);
	free(an->name_file_move);
	free(an->name_vfirst);
	free(an->name_version);
	free(an->reached_vfirst);
	free(an->reached_version);
	hmap_release(&an->reached);
	reach_index_release(&an->reach);
	for (size_t b = 0; b < an->nbelow; b++) {
		free(an->below[b].nm.from);
		free(an->below[b].nm.to);
	}
	free(an->below);
	hmap_release(&an->names);
}
