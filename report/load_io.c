// SPDX-License-Identifier: MIT
/*
 * io.csv, one row at a time: each row updates the counters of one task x
 * file record and is forgotten, so 10 million events cost no memory.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csvin.h"
#include "load.h"
#include "parse.h"
#include "record.h"
#include "research.h"
#include "util.h"

enum {
	I_START,
	I_END,
	I_INODE,
	I_TYPE,
	I_RESULT,
	I_OFFSET,
	I_FLAGS,
	I_PATH,
	I_PATH2,
	I_NCOLS
};

static const char *const io_cols[I_NCOLS] = {
	"time_start", "time_end", "inode", "type",  "result",
	"offset",     "flags",	  "path",  "path2",
};

static bool parse_row(struct csv_file *cf, struct io_row *r)
{
	const char *type = cell(cf, I_TYPE);

	if (!parse_time_us(cell(cf, I_START), &r->start) ||
	    !parse_time_us(cell(cf, I_END), &r->end) || r->end < r->start) {
		bad_row(cf, "time_start/time_end");
		return false;
	}
	if (!parse_u64(cell(cf, I_INODE), &r->inode)) {
		bad_row(cf, "inode");
		return false;
	}
	if (!type[0] || type[1]) {
		bad_row(cf, "type");
		return false;
	}
	r->type = type[0];
	r->offset = -1;
	r->flags = 0;
	if (!parse_i64(cell(cf, I_RESULT), &r->result) ||
	    (*cell(cf, I_OFFSET) &&
	     !parse_i64(cell(cf, I_OFFSET), &r->offset)) ||
	    (*cell(cf, I_FLAGS) &&
	     !parse_hex32(cell(cf, I_FLAGS), &r->flags))) {
		bad_row(cf, "result/offset/flags");
		return false;
	}
	r->path = cell(cf, I_PATH);
	r->path_len = cell_len(cf, I_PATH);
	r->path2 = cell(cf, I_PATH2);
	r->path2_len = cell_len(cf, I_PATH2);
	r->pid = r->handle = 0;
	r->size = 0;
	r->mount_root = "";
	r->raw = NULL;
	return true;
}

static void add_rw(struct rw_acc *a, const struct io_row *r)
{
	uint64_t bytes = (uint64_t)r->result;

	a->ops++;
	a->bytes += bytes;
	a->time_us += (uint64_t)(r->end - r->start);
	if (a->first_us < 0)
		a->first_us = r->start;
	a->last_us = r->end;
	access_seq_add(&a->pos, r->offset, bytes);
}

/* With O_APPEND, or the first write at the old end. */
static bool appends(const struct tfile *f, const struct io_row *r)
{
	return (r->flags & O_APPEND) ||
	       (!f->wr.ops && r->offset > 0 && r->offset == f->size_first_open);
}

/*
 * When the task read the version it read: its first read's start; for
 * reads at no offset (a FIFO's, which wait for the writer's write), the
 * end of the first that returned bytes.  One that returned none (an
 * O_NONBLOCK read before any writer opened) saw no version.
 */
static void date_read(struct tfile *f, const struct io_row *r)
{
	if (r->offset >= 0) {
		if (f->read_at_us < 0)
			f->read_at_us = r->start;
	} else if (f->read_at_us < 0 || f->rd.bytes == (uint64_t)r->result) {
		/* rd.bytes has this read's: equal, no earlier read moved any. */
		f->read_at_us = r->end;
	}
}

static void data_op(struct task *t, struct tfile *f, const struct io_row *r)
{
	bool is_write = r->type == 'W';

	if (r->result < 0)
		return;
	if (is_write && appends(f, r) && !f->appended) {
		f->appended = true;
		f->append_us = r->start;
	}
	add_rw(is_write ? &f->wr : &f->rd, r);
	if (!is_write)
		date_read(f, r);
	if (f->first_access_us < 0)
		f->first_access_us = r->start;
	if (r->end > f->last_access_us)
		f->last_access_us = r->end;
	if (is_write)
		t->file_write_bytes += (uint64_t)r->result;
	else
		t->file_read_bytes += (uint64_t)r->result;
	t->data_time_us += (uint64_t)(r->end - r->start);
}

static bool opened_for_writing(uint32_t flags)
{
	return (flags & O_ACCMODE) != O_RDONLY && (flags & (O_CREAT | O_TRUNC));
}

/* The task's own content from then on: whatever was there went (O_TRUNC)
 * or nothing was (O_EXCL). */
static bool starts_afresh(uint32_t flags)
{
	return (flags & O_ACCMODE) != O_RDONLY &&
	       ((flags & O_TRUNC) ||
		(flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL));
}

static void opened(struct tfile *f, const struct io_row *r)
{
	f->opens++;
	if (f->first_open_us < 0) {
		f->first_open_us = r->start;
		/* Its path is the kernel's DIR/#INO (deleted) till linkat
		 * names it. */
		f->tmpfile = r->flags & IO_O_TMPFILE;
	}
	if (opened_for_writing(r->flags) && f->created_us < 0) {
		f->created_us = r->end;
		/* files.csv knows the size at the task's first open. */
		f->kept_data = !starts_afresh(r->flags) &&
			       f->size_first_open > 0;
	}
	if (starts_afresh(r->flags) && f->fresh_us < 0)
		f->fresh_us = r->end;
}

static void meta_op(struct task *t, struct tfile *f, const struct io_row *r)
{
	uint64_t lat = (uint64_t)(r->end - r->start);

	f->meta_time_us += lat;
	t->meta_time_us += lat;
	switch (r->type) {
	case 'O':
		if (r->result >= 0)
			opened(f, r);
		return;
	case 'S':
		f->stats++;
		return;
	case 'X':
		f->executed = true;
		return;
	case 'M':
		if (r->flags & 0x4) /* PROT_EXEC: a library's code */
			f->executed = true;
		if (r->flags & 0x2) /* PROT_WRITE */
			f->changed_meta = true;
		return;
	case 'T':
	case 'A':
		f->changed_meta |= r->result >= 0;
		break;
	case 'K': /* flags 1: the clone's destination */
		f->changed_meta |= r->result >= 0 && (r->flags & 1);
		break;
	}
	f->other_meta++;
}

/*
 * Unlink and rename carry the path; their inode may be 0.  The name is
 * looked up as the task's rows so far left it (opens, stats and renames
 * in io.csv order), so a name reused for a new file finds that file.
 */
static size_t named_file(struct task *t, const struct io_row *r)
{
	size_t i;

	if (!r->inode)
		return task_file_by_path(t, r->path, r->path_len);
	i = task_file_by_inode(t, r->inode, r->path, r->path_len);
	task_file_named(t, i, r->path, r->path_len);
	return i;
}

static bool is_path(const struct tfile *f, const char *path, size_t len)
{
	return same_name(f->path, f->path_len, path, len);
}

/* Not yet opened, read, written, run, renamed or removed: named by a stat
 * at most. */
static bool first_open(const struct tfile *f)
{
	return f->first_open_us < 0 && f->first_access_us < 0 && !f->executed &&
	       f->renamed_us < 0 && f->unlink_us < 0;
}

/* Row r with the names from -> to: a move r made of other names (an
 * exchange's other half, a name below a renamed directory). */
static struct io_row io_row_moving(const struct io_row *r, const char *from,
				   size_t from_len, const char *to,
				   size_t to_len)
{
	struct io_row moved = *r;

	moved.path = from;
	moved.path_len = from_len;
	moved.path2 = to;
	moved.path2_len = to_len;
	return moved;
}

static bool is_symlink(const struct task *t, const char *name, size_t len)
{
	return hmap_get(&t->symlinks, name, len) != HMAP_NONE;
}

/* The name is no symbolic link the task made (any more); a name it never
 * made one takes no slot. */
static void forget_symlink(struct task *t, const char *name, size_t len)
{
	if (is_symlink(t, name, len))
		hmap_put(&t->symlinks, name, len, HMAP_NONE);
}

/*
 * renameat2 with RENAME_EXCHANGE: the two names swap files.  A record
 * takes the other name if the one it had was its path, or its only one.
 */
static void exchange(struct task *t, const struct io_row *r)
{
	size_t i = named_file(t, r);
	size_t j = task_file_by_path(t, r->path2, r->path2_len);
	struct io_row other_half =
		io_row_moving(r, r->path2, r->path2_len, r->path, r->path_len);
	bool move_i, move_j;

	if (i == j)
		return;
	/* Whatever they were, not known to be the task's links now. */
	forget_symlink(t, r->path, r->path_len);
	forget_symlink(t, r->path2, r->path2_len);
	move_i = t->file[i].names == 1 ||
		 is_path(&t->file[i], r->path, r->path_len);
	move_j = t->file[j].names == 1 ||
		 is_path(&t->file[j], r->path2, r->path2_len);
	task_file_named(t, j, r->path, r->path_len);
	task_file_named(t, i, r->path2, r->path2_len);
	if (move_i) {
		task_file_rename(t, i, r->path2, r->path2_len);
		t->file[i].renamed_us = r->end;
	}
	if (move_j) {
		task_file_rename(t, j, r->path, r->path_len);
		t->file[j].renamed_us = r->end;
	}
	task_add_move(t, r, i);
	task_add_move(t, &other_half, j);
}

struct below_ctx {
	struct task *t;
	const struct io_row *r;
	bool link; /* the directory renamed is a symbolic link */
};

/* Record i, filed below the renamed directory, takes its new name there
 * if it still has its name there. */
static void rename_record(void *ctx, size_t i)
{
	struct below_ctx *c = ctx;
	struct task *t = c->t;
	const struct io_row *r = c->r;
	struct tfile *f = &t->file[i];
	struct io_row below;
	size_t to_len;
	char *to;

	if (!name_below(f->path, f->path_len, r->path, r->path_len) ||
	    hmap_get(&t->by_path, f->path, f->path_len) != i)
		return;
	/* Counted once past the cap: the warning's. */
	if (t->moved_below > TASK_MOVED_BELOW_MAX ||
	    ++t->moved_below > TASK_MOVED_BELOW_MAX)
		return;
	to_len = r->path2_len + f->path_len - r->path_len;
	to = xjoin(r->path2, r->path2_len, f->path + r->path_len,
		   f->path_len - r->path_len);
	below = io_row_moving(r, f->path, f->path_len, to, to_len);
	if (moves_with_dir(to, to_len)) {
		struct name_move *m = task_add_move(t, &below, i);

		m->below = true;
		m->link = c->link;
		task_file_unname(t, i, f->path, f->path_len);
		task_file_rename(t, i, to, to_len);
		f->renamed_us = r->end;
	}
	free(to);
}

/*
 * A rename of a directory moves the names below it: each of the task's
 * records there takes its new name, as from a rename of its own, so its
 * version is filed under the name it has after (and later name
 * operations find it).  io.csv does not say whether a directory was
 * renamed; a file has no names below it.
 */
static void rename_below(struct task *t, const struct io_row *r, bool link)
{
	struct below_ctx c = { t, r, link };

	if (!name_below(r->path2, r->path2_len, r->path, r->path_len))
		dirtree_walk(&t->dirs, r->path, r->path_len, true,
			     rename_record, &c);
}

/* Whether the task made the name a symbolic link (an H row of flags
 * IO_SYMLINK) and it is one still; then as the N or U row r leaves it. */
static bool was_symlink(struct task *t, const struct io_row *r)
{
	bool link = is_symlink(t, r->path, r->path_len);

	forget_symlink(t, r->path, r->path_len);
	if (r->type != 'N' || !r->path2_len)
		return link;
	if (link)
		hmap_put(&t->symlinks, r->path2, r->path2_len, 1);
	else
		forget_symlink(t, r->path2, r->path2_len);
	return link;
}

/*
 * A file with another name the task has seen (a hard link it opened or
 * stat'ed by both names) survives the loss of one: that is no delete, and
 * the record keeps its own name unless that was the one renamed.
 */
static void name_op(struct task *t, const struct io_row *r)
{
	size_t i;
	struct tfile *f;
	bool link;

	if (r->result != 0 || !r->path_len)
		return;
	if (r->type == 'N' && (r->flags & RENAME_EXCHANGE) && r->path2_len)
		return exchange(t, r);
	link = was_symlink(t, r);
	i = named_file(t, r);
	f = &t->file[i];
	task_file_unname(t, i, r->path, r->path_len);
	if (r->type == 'U') {
		if (!f->names)
			f->unlink_us = r->end;
	} else if (r->path2_len) {
		if (!f->names || is_path(f, r->path, r->path_len)) {
			task_file_rename(t, i, r->path2, r->path2_len);
			f->renamed_us = r->end;
		} else {
			task_file_named(t, i, r->path2, r->path2_len);
		}
		task_add_move(t, r, i)->link = link;
		rename_below(t, r, link);
	}
}

/*
 * A hard link: the new name leads to the file the old one led to, for the
 * task (a record it knows by the old name, HMAP_NONE: none) and for the
 * tasks after it.
 */
static void link_op(struct task *t, const struct io_row *r, size_t i)
{
	if (r->result != 0 || !r->path_len || !r->path2_len)
		return;
	/* An O_TMPFILE file's first name (a descriptor's row): its record
	 * takes it, as from a rename; the kernel's name was no name. */
	if (i != HMAP_NONE && r->inode && t->file[i].tmpfile) {
		t->file[i].tmpfile = false;
		task_file_unname(t, i, t->file[i].path, t->file[i].path_len);
		task_file_rename(t, i, r->path2, r->path2_len);
		t->file[i].renamed_us = r->end;
		task_add_move(t, r, i)->carries = true;
		return;
	}
	if (i != HMAP_NONE)
		task_file_named(t, i, r->path2, r->path2_len);
	task_add_move(t, r, i);
}

static void add_io_row(void *ctx, const struct io_row *r)
{
	struct task *t = ctx;
	size_t i;

	t->events++;
	if (r->type == 'U' || r->type == 'N')
		return name_op(t, r);
	/* ln: an H row of a path names no file; linkat of a descriptor's
	 * file (an O_TMPFILE file given a name) is that file's row.  A
	 * symlink's path is a string, no name of a file: names only join
	 * what leads through it. */
	if (r->type == 'H' && !r->inode) {
		if (!(r->flags & IO_SYMLINK))
			link_op(t, r,
				hmap_get(&t->by_path, r->path, r->path_len));
		else if (r->result == 0 && r->path2_len)
			hmap_put(&t->symlinks, r->path2, r->path2_len, 1);
		return;
	}
	if (!r->inode)
		return;
	/* R and W rows have no path: keep the name the open gave. */
	i = task_file_by_inode(t, r->inode, r->type == 'O' ? r->path : "",
			       r->type == 'O' ? r->path_len : 0);
	/* An open, stat or exec by a name: the name leads to this file from
	 * here on, whatever files.csv says it was called. */
	if (r->result >= 0 && r->path_len)
		task_file_named(t, i, r->path, r->path_len);
	/* Its first open names a record only stat'ed so far (ls A; mv A B
	 * by another task; cat B): the open chose the file by that name. */
	if (r->type == 'O' && r->result >= 0 && r->path_len &&
	    first_open(&t->file[i]) &&
	    !is_path(&t->file[i], r->path, r->path_len))
		task_file_rename(t, i, r->path, r->path_len);
	if (r->type == 'O' && r->result >= 0 && r->path2_len)
		task_file_reached(t, i, r->path2, r->path2_len);
	/* The research's eBPF tool names the mount root: files.csv's
	 * mount point, which such a trace lacks. */
	if (r->mount_root[0] && !t->file[i].mount_point)
		t->file[i].mount_point = xstrdup(r->mount_root);
	if (r->type == 'R' || r->type == 'W')
		data_op(t, &t->file[i], r);
	else
		meta_op(t, &t->file[i], r);
	if (r->type == 'H')
		link_op(t, r, i);
}

void scan_io(struct workflow *wf, struct task *t, int dirfd,
	     struct csv_problems *prob, io_row_fn fn, void *ctx)
{
	struct io_row row;
	struct csv_file cf = {
		.wf = wf, .t = t, .name = "io.csv", .prob = prob
	};
	char research[NAME_MAX + 1];
	struct stat st;

	/* No io.csv, but the research's tools wrote this trace. */
	if (fstatat(dirfd, "io.csv", &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    research_csv_find(dirfd, research, sizeof(research))) {
		research_scan(wf, t, dirfd, research, prob, fn, ctx);
		return;
	}
	if (csv_open(&cf, dirfd, io_cols, I_NCOLS, 7) == 0) {
		while (csv_row(&cf)) {
			if (!parse_row(&cf, &row))
				continue;
			cf.prob->rows++;
			fn(ctx, &row);
		}
	}
	csv_close(&cf);
}

/*
 * `touch f` or `: >> f` of an f with data created nothing: no version of
 * its own.  Only a complete trace with data rows (--level full) tells that
 * from an append or a write in place, and only if every write is a row:
 * io_uring's and Linux AIO's are none.  A mapping made writable later by
 * mprotect is not seen either: such a task is taken for no writer.
 */
static void drop_empty_creations(struct task *t)
{
	if (!t->level || strcmp(t->level, "full") != 0 || !t->complete ||
	    t->async_io)
		return;
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = &t->file[i];

		if (f->kept_data && !f->wr.ops && !f->changed_meta &&
		    f->size_last_close == f->size_first_open)
			f->created_us = -1;
	}
}

void load_io(struct workflow *wf, struct task *t, int dirfd)
{
	scan_io(wf, t, dirfd, &t->io, add_io_row, t);
	drop_empty_creations(t);
	if (t->moved_below > TASK_MOVED_BELOW_MAX)
		workflow_warn(
			wf,
			"%s: over %u records renamed with their directories: the rest keep the names they had",
			t->dir, TASK_MOVED_BELOW_MAX);
}
