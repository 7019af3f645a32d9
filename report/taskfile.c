// SPDX-License-Identifier: MIT
#include "load.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static char *copy_name(const char *path, size_t len)
{
	char *s = xmalloc(len + 1);

	memcpy(s, path, len);
	s[len] = '\0';
	return s;
}

/* Files record i under its path's directory, for a rename of one above
 * it (rename_below in load_io.c), once its path leads to it. */
static void file_path(struct task *t, size_t i)
{
	const struct tfile *f = &t->file[i];

	if (moves_with_dir(f->path, f->path_len))
		dirtree_file(&t->dirs, f->path, f->path_len, i);
}

/* The name leads to file i (HMAP_NONE: nowhere); each file counts the
 * names that lead to it. */
static void set_name(struct task *t, const char *path, size_t len, size_t i)
{
	size_t old = hmap_get(&t->by_path, path, len);

	if (old == i)
		return;
	if (old != HMAP_NONE)
		t->file[old].names--;
	hmap_put(&t->by_path, path, len, i);
	if (i == HMAP_NONE)
		return;
	t->file[i].names++;
	/* Named by its path (files.csv's path names nothing before). */
	if (same_name(path, len, t->file[i].path, t->file[i].path_len))
		file_path(t, i);
}

static size_t new_file(struct task *t, uint64_t inode, const char *path,
		       size_t path_len)
{
	struct tfile *f;

	if (t->nfiles == t->files_alloc) {
		t->files_alloc = t->files_alloc ? t->files_alloc * 2 : 64;
		t->file = xrealloc(t->file, t->files_alloc * sizeof(*t->file));
	}
	f = &t->file[t->nfiles];
	memset(f, 0, sizeof(*f));
	f->inode = inode;
	f->path = copy_name(path, path_len);
	f->path_len = path_len;
	f->size_first_open = f->size_last_close = -1;
	f->rd.first_us = f->wr.first_us = -1;
	f->rd.pos = f->wr.pos = (struct access_seq)ACCESS_SEQ_INIT;
	f->first_access_us = f->created_us = f->unlink_us = -1;
	f->read_at_us = -1;
	f->renamed_us = -1;
	f->first_open_us = f->fresh_us = f->append_us = -1;
	if (inode)
		hmap_put(&t->by_inode, &inode, sizeof(inode), t->nfiles);
	/* A file with an id gets its names from io.csv's rows, in order
	 * (task_file_named): files.csv's path is its name at some time,
	 * maybe only after a rename or unlink of this task looked it up. */
	else if (path_len)
		set_name(t, path, path_len, t->nfiles);
	return t->nfiles++;
}

void task_file_reached(struct task *t, size_t i, const char *path, size_t len)
{
	struct tfile *f = &t->file[i];

	if (f->reached)
		return;
	f->reached = copy_name(path, len);
	f->reached_len = len;
}

void task_file_rename(struct task *t, size_t i, const char *path, size_t len)
{
	struct tfile *f = &t->file[i];
	bool named = len && hmap_get(&t->by_path, path, len) == i;

	/* The name it was opened (or first read or written) by: other
	 * tasks wrote by that name what it read or appended to.  A record
	 * first known by an R or W row had none yet. */
	if ((f->first_open_us >= 0 || f->first_access_us >= 0) &&
	    !f->access_path && f->path_len) {
		f->access_path = f->path;
		f->access_path_len = f->path_len;
	} else {
		free(f->path);
	}
	f->path = copy_name(path, len);
	f->path_len = len;
	task_file_named(t, i, path, len);
	/* set_name files it when the name is new to it. */
	if (named)
		file_path(t, i);
}

void task_file_named(struct task *t, size_t i, const char *path, size_t len)
{
	if (len)
		set_name(t, path, len, i);
}

void task_file_unname(struct task *t, size_t i, const char *path, size_t len)
{
	/* HMAP_NONE reads as absent: the name leads nowhere now. */
	if (hmap_get(&t->by_path, path, len) == i)
		set_name(t, path, len, HMAP_NONE);
}

struct name_move *task_add_move(struct task *t, const struct io_row *r,
				size_t i)
{
	const char *from = r->path, *to = r->path2;
	size_t from_len = r->path_len, to_len = r->path2_len;
	struct name_move *m;

	t->move = xgrow(t->move, &t->moves_alloc, t->nmoves, sizeof(*t->move));
	m = &t->move[t->nmoves++];
	m->time_us = r->end;
	m->seq = t->events;
	m->from = copy_name(from, from_len);
	m->from_len = from_len;
	m->to = copy_name(to, to_len);
	m->to_len = to_len;
	/* A plain rename leaves its source name empty; a link or an
	 * exchange does not. */
	m->carries = r->type == 'N' && !same_name(from, from_len, to, to_len);
	m->vacates = m->carries && !(r->flags & RENAME_EXCHANGE);
	m->swaps = m->carries && !m->vacates;
	m->below = false;
	m->link = false;
	m->tfile = i;
	return m;
}

size_t task_file_by_inode(struct task *t, uint64_t inode, const char *path,
			  size_t path_len)
{
	size_t i = hmap_get(&t->by_inode, &inode, sizeof(inode));

	if (i == HMAP_NONE)
		return new_file(t, inode, path, path_len);
	if (!t->file[i].path_len && path_len)
		task_file_rename(t, i, path, path_len);
	return i;
}

size_t task_file_by_path(struct task *t, const char *path, size_t path_len)
{
	size_t i = hmap_get(&t->by_path, path, path_len);

	return i == HMAP_NONE ? new_file(t, 0, path, path_len) : i;
}

static void task_release(struct task *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		free(t->file[i].path);
		free(t->file[i].access_path);
		free(t->file[i].reached);
		free(t->file[i].mount_point);
		free(t->file[i].fstype);
	}
	for (size_t i = 0; i < t->nmoves; i++) {
		free(t->move[i].from);
		free(t->move[i].to);
	}
	free(t->move);
	free(t->file_move);
	free(t->file_move_first);
	for (size_t i = 0; i < t->nmounts; i++) {
		free(t->mount[i].mount_point);
		free(t->mount[i].fstype);
	}
	free(t->file);
	free(t->mount);
	hmap_release(&t->by_inode);
	hmap_release(&t->by_path);
	hmap_release(&t->symlinks);
	dirtree_release(&t->dirs);
	free(t->dir);
	free(t->name);
	free(t->key);
	free(t->engine);
	free(t->host);
	free(t->boot_id);
	free(t->level);
	free(t->command);
	free(t->group);
	memset(t, 0, sizeof(*t));
}

void task_discard_last(struct workflow *wf)
{
	task_release(&wf->task[wf->ntasks]);
}

void workflow_release(struct workflow *wf)
{
	for (size_t i = 0; i < wf->ntasks; i++)
		task_release(&wf->task[i]);
	for (size_t i = 0; i < wf->nwarning_kept; i++)
		free(wf->warning[i]);
	free(wf->warning);
	free(wf->task);
	memset(wf, 0, sizeof(*wf));
}
