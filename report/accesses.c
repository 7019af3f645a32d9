// SPDX-License-Identifier: MIT
/*
 * Fig. 5's points.  Pass 1 (load_io.c) counted every file's reads and
 * writes; here each file gets a quota by water-filling (files with fewer
 * accesses than an even share of ACCESS_MAX_TOTAL keep them all, the rest
 * split what is left, none above ACCESS_MAX_PER_FILE), then io.csv is read
 * again and access k of a file (in task order, then row order) is kept
 * when k == floor(j * total / quota), j = 0 .. quota - 1.
 */
#include "accesses.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "load.h"
#include "util.h"

static const struct gfile *sort_files;

/* Output order: data files before system files, then by file id. */
static int cmp_output(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (sort_files[x].system != sort_files[y].system)
		return sort_files[x].system ? 1 : -1;
	return x < y ? -1 : x > y;
}

static const struct access_file *sort_acc;

/* Fewest accesses first (ties by position) for the water-filling. */
static int cmp_total(const void *a, const void *b)
{
	const struct access_file *x = &sort_acc[*(const size_t *)a];
	const struct access_file *y = &sort_acc[*(const size_t *)b];

	if (x->total != y->total)
		return x->total < y->total ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void list_files(struct analysis *an, struct access_sample *s)
{
	size_t *order = xcalloc(an->nfiles + 1, sizeof(*order));
	size_t n = 0;

	for (size_t g = 0; g < an->nfiles; g++)
		if (an->file[g].reads + an->file[g].writes)
			order[n++] = g;
	sort_files = an->file;
	sort_array(order, n, sizeof(*order), cmp_output);
	s->file = xcalloc(n + 1, sizeof(*s->file));
	s->slot = xcalloc(an->nfiles + 1, sizeof(*s->slot));
	for (size_t g = 0; g < an->nfiles; g++)
		s->slot[g] = NO_INDEX;
	for (size_t k = 0; k < n; k++) {
		const struct gfile *g = &an->file[order[k]];

		s->file[k].file = order[k];
		s->file[k].reads = g->reads;
		s->file[k].writes = g->writes;
		s->file[k].total = g->reads + g->writes;
		s->total += s->file[k].total;
		s->slot[order[k]] = k;
	}
	s->nfiles = n;
	free(order);
}

void access_share_caps(struct access_file *file, size_t n, uint64_t max_total,
		       uint64_t max_per_file)
{
	size_t *order = xcalloc(n + 1, sizeof(*order));
	uint64_t budget = max_total;

	for (size_t k = 0; k < n; k++)
		order[k] = k;
	sort_acc = file;
	sort_array(order, n, sizeof(*order), cmp_total);
	for (size_t k = 0; k < n; k++) {
		struct access_file *f = &file[order[k]];
		uint64_t q = budget / (n - k);

		if (q > max_per_file)
			q = max_per_file;
		if (q > f->total)
			q = f->total;
		f->quota = q;
		budget -= q;
	}
	free(order);
}

static void place_points(struct access_sample *s)
{
	size_t first = 0;

	for (size_t k = 0; k < s->nfiles; k++) {
		s->file[k].first = first;
		first += s->file[k].quota;
		s->sampled_files += s->file[k].quota < s->file[k].total;
	}
	s->npoints = first;
	s->point = xcalloc(first + 1, sizeof(*s->point));
}

struct scan {
	struct access_sample *s;
	struct task *t;
	size_t task;
	size_t *slot; /* the task's file index -> access_file, or NO_INDEX */
};

static void take_row(void *ctx, const struct io_row *r)
{
	struct scan *sc = ctx;
	struct access_file *f;
	size_t i, k;
	uint64_t idx;

	if ((r->type != 'R' && r->type != 'W') || r->result < 0 ||
	    r->offset < 0 || !r->inode)
		return;
	i = hmap_get(&sc->t->by_inode, &r->inode, sizeof(r->inode));
	if (i == HMAP_NONE || i >= sc->t->nfiles ||
	    (k = sc->slot[i]) == NO_INDEX)
		return;
	f = &sc->s->file[k];
	idx = f->seen++;
	/* io.csv may have grown since pass 1: the counts stay pass 1's. */
	if (idx >= f->total || !access_kept(idx, f->kept, f->quota, f->total))
		return;
	sc->s->point[f->first + f->kept++] = (struct access_point){
		.task = sc->task,
		.start_us = r->start,
		.end_us = r->end,
		.offset = r->offset,
		.size = (uint64_t)r->result,
		.type = r->type,
	};
}

/* The task's files that have a Fig. 5 slot; false if none has. */
static bool map_task_files(const struct analysis *an, const struct task *t,
			   size_t *slot)
{
	bool any = false;

	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tfile *f = &t->file[i];
		size_t g =
			f->path_len && f->rd.pos.placed + f->wr.pos.placed ?
				hmap_get(&an->by_path, f->path, f->path_len) :
				HMAP_NONE;

		slot[i] = g == HMAP_NONE ? NO_INDEX : an->acc.slot[g];
		any |= slot[i] != NO_INDEX;
	}
	return any;
}

static void rescan_task(struct analysis *an, struct task *t, size_t id,
			size_t *slot)
{
	/* Pass 1 warned about every bad row already. */
	struct workflow quiet = { .quiet = true };
	struct csv_problems prob = { 0 };
	struct scan sc = { .s = &an->acc, .t = t, .task = id, .slot = slot };
	int dirfd;

	if (!map_task_files(an, t, slot))
		return;
	dirfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return;
	scan_io(&quiet, t, dirfd, &prob, take_row, &sc);
	close(dirfd);
}

void accesses_sample(struct workflow *wf, struct analysis *an)
{
	struct access_sample *s = &an->acc;
	size_t max_files = 0;
	size_t *slot;

	memset(s, 0, sizeof(*s));
	list_files(an, s);
	access_share_caps(s->file, s->nfiles, ACCESS_MAX_TOTAL,
			  ACCESS_MAX_PER_FILE);
	place_points(s);
	if (!s->npoints)
		return;
	for (size_t t = 0; t < wf->ntasks; t++)
		if (wf->task[t].nfiles > max_files)
			max_files = wf->task[t].nfiles;
	slot = xcalloc(max_files + 1, sizeof(*slot));
	for (size_t t = 0; t < wf->ntasks; t++)
		rescan_task(an, &wf->task[t], t, slot);
	free(slot);
}

void accesses_release(struct access_sample *s)
{
	free(s->file);
	free(s->slot);
	free(s->point);
	memset(s, 0, sizeof(*s));
}
