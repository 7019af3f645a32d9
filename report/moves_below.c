// SPDX-License-Identifier: MIT
/*
 * A rename of a directory moves every name below it, across tasks: for
 * each name some task used below the source by the time of the rename,
 * a move from it to the same name below the destination, made in the
 * renaming task's row.  Then the moves of names (moves.c) follow them as
 * any rename.  io.csv's N rows do not say what was renamed; a file has no
 * names below it, so the rule needs no telling.
 */
#include <stdlib.h>

#include "analyze.h"
#include "dirtree.h"
#include "util.h"

/* At most this many names moved with their directories, and looked at
 * below them, in all: a directory of n names renamed r times makes n * r. */
#define MOVES_BELOW_MAX (1u << 20)
#define BELOW_VISITS_MAX (1u << 25)

/* A name in the tree: below its directories from its first use on. */
struct tree_name {
	const char *name; /* a task's, a move's or a below move's copy */
	size_t len;
	size_t stamp; /* the rename whose task moved it itself */
	bool filed; /* in the tree now: not taken by a rename since */
};

/* A record's name, first used at time_us. */
struct name_use {
	int64_t time_us;
	const char *name;
	size_t len;
};

struct below {
	struct analysis *an;
	struct dirtree tree; /* names by id */
	struct hmap ids;
	struct tree_name *name;
	size_t nnames, names_alloc;
	struct name_use *use;
	size_t nuses, uses_alloc;
	size_t k; /* the rename walked */
	size_t visits;
	bool cut; /* a limit stopped it */
};

/* Puts name in the tree, once until a rename takes it. */
static void file_name(struct below *b, const char *name, size_t len)
{
	size_t id;

	if (!moves_with_dir(name, len))
		return;
	id = hmap_get(&b->ids, name, len);
	if (id == HMAP_NONE) {
		b->name = xgrow(b->name, &b->names_alloc, b->nnames,
				sizeof(*b->name));
		b->name[b->nnames] =
			(struct tree_name){ name, len, NO_INDEX, false };
		id = b->nnames++;
		hmap_put(&b->ids, name, len, id);
	}
	if (!b->name[id].filed) {
		b->name[id].filed = true;
		dirtree_file(&b->tree, name, len, id);
	}
}

static int cmp_use(const void *x, const void *y)
{
	const struct name_use *a = x, *b = y;

	return a->time_us < b->time_us ? -1 : a->time_us > b->time_us;
}

static void add_use(struct below *b, int64_t at, const char *name, size_t len)
{
	b->use = xgrow(b->use, &b->uses_alloc, b->nuses, sizeof(*b->use));
	b->use[b->nuses++] = (struct name_use){ at, name, len };
}

/* Every record's first name, at its first open (or read or write), and
 * the kernel's name of the file an open through a symbolic link reached:
 * a version written through the link is found by it too (wcp.c). */
static void collect_uses(struct workflow *wf, struct below *b)
{
	for (size_t t = 0; t < wf->ntasks; t++) {
		const struct task *tk = &wf->task[t];

		for (size_t i = 0; i < tk->nfiles; i++) {
			const struct tfile *f = &tk->file[i];
			int64_t at = f->first_open_us;

			if (at < 0 || (f->first_access_us >= 0 &&
				       f->first_access_us < at))
				at = f->first_access_us;
			if (at < 0 || !f->path_len)
				continue;
			add_use(b, at,
				f->access_path ? f->access_path : f->path,
				f->access_path ? f->access_path_len :
						 f->path_len);
			if (f->reached)
				add_use(b, at, f->reached, f->reached_len);
		}
	}
	sort_array(b->use, b->nuses, sizeof(*b->use), cmp_use);
}

/* Name id, below the renamed directory, moves to the same name below the
 * destination: that one holds from then on what it held. */
static void move_name(void *ctx, size_t id)
{
	struct below *b = ctx;
	struct analysis *an = b->an;
	const struct name_move *nm = an->move[b->k].nm;
	struct tree_name *x = &b->name[id];
	size_t rlen = x->len - nm->from_len;
	struct below_move *m;
	char *to;

	if (nm->vacates)
		x->filed = false;
	if (x->stamp == b->k)
		return;
	if (++b->visits > BELOW_VISITS_MAX || an->nbelow == MOVES_BELOW_MAX) {
		b->cut = true;
		return;
	}
	to = xjoin(nm->to, nm->to_len, x->name + nm->from_len, rlen);
	if (!moves_with_dir(to, nm->to_len + rlen)) {
		free(to);
		return;
	}
	an->below = xgrow(an->below, &an->below_alloc, an->nbelow,
			  sizeof(*an->below));
	m = &an->below[an->nbelow++];
	m->task = an->move[b->k].task;
	m->nm = *nm;
	m->nm.from = xjoin(x->name, x->len, "", 0);
	m->nm.from_len = x->len;
	m->nm.to = to;
	m->nm.to_len = nm->to_len + rlen;
	m->nm.tfile = NO_INDEX;
	m->nm.below = true;
	file_name(b, to, m->nm.to_len);
}

static bool one_row(const struct analysis *an, size_t j, size_t k)
{
	return an->move[j].task == an->move[k].task &&
	       an->move[j].nm->seq == an->move[k].nm->seq;
}

/* Stamps with k the names that move k's task moved below the directory
 * itself (load_io.c's rename_below): those moves are made. */
static void stamp_own(struct below *b, size_t k)
{
	const struct analysis *an = b->an;
	size_t j = k;

	while (j > 0 && one_row(an, j - 1, k))
		j--;
	for (; j < an->nmoves && one_row(an, j, k); j++) {
		const struct name_move *nm = an->move[j].nm;
		size_t id = hmap_get(&b->ids, nm->from, nm->from_len);

		if (nm->below && id != HMAP_NONE)
			b->name[id].stamp = k;
	}
}

/* Move k, a rename or an exchange's half, of a directory maybe: the
 * names below its source go below its destination (an exchange's other
 * half brings those of the other name back). */
static void expand(struct below *b, size_t k)
{
	const struct name_move *nm = b->an->move[k].nm;

	if ((!nm->vacates && !nm->swaps) || nm->below ||
	    name_below(nm->to, nm->to_len, nm->from, nm->from_len) ||
	    name_below(nm->from, nm->from_len, nm->to, nm->to_len))
		return;
	b->k = k;
	stamp_own(b, k);
	dirtree_walk(&b->tree, nm->from, nm->from_len, nm->vacates, move_name,
		     b);
}

void moves_below(struct workflow *wf, struct analysis *an)
{
	struct below b = { .an = an };
	size_t n = an->nmoves, u = 0;

	dirtree_init(&b.tree);
	hmap_init(&b.ids);
	collect_uses(wf, &b);
	for (size_t k = 0; k < n; k++) {
		const struct name_move *nm = an->move[k].nm;

		for (; u < b.nuses && b.use[u].time_us <= nm->time_us; u++)
			file_name(&b, b.use[u].name, b.use[u].len);
		expand(&b, k);
		file_name(&b, nm->to, nm->to_len);
	}
	if (b.cut)
		workflow_warn(
			wf,
			"over %u names below renamed directories moved, or %u looked at: the rest are not moved with them",
			MOVES_BELOW_MAX, BELOW_VISITS_MAX);
	dirtree_release(&b.tree);
	hmap_release(&b.ids);
	free(b.name);
	free(b.use);
}
