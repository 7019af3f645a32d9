// SPDX-License-Identifier: MIT
#include "csvin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapguard.h"
#include "util.h"

/*
 * A whole file under dirfd, mapped read-only; *len 0 maps nothing.  A FIFO
 * or a device in the place of a trace file (the task owns its trace
 * directory) is refused by its type before it is opened (a device's open
 * may do something), and the open does not block should one be put there
 * between the two.
 */
int map_file(int dirfd, const char *name, const char **data, size_t *len)
{
	struct stat st;
	void *p;
	int fd, err;

	*data = NULL;
	*len = 0;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP; /* as O_NOFOLLOW says it */
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	fd = openat(dirfd, name,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
			 0);
		if (p == MAP_FAILED) {
			err = errno;
			close(fd);
			return -err;
		}
		err = map_guard_add(p, (size_t)st.st_size);
		if (err) {
			munmap(p, (size_t)st.st_size);
			close(fd);
			return err;
		}
		madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
		*data = p;
		*len = (size_t)st.st_size;
	}
	close(fd);
	return 0;
}

/* Hands the pages below pos back to the kernel once 8 MiB were read: the
 * mapping is read once, front to back, and its resident pages would
 * otherwise grow with the file (MADV_SEQUENTIAL alone keeps them). */
void drop_read_pages(const char *data, size_t *dropped, size_t pos)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t end = pos / page * page;

	if (!data || end < *dropped + (8u << 20))
		return;
	madvise((void *)(data + *dropped), end - *dropped, MADV_DONTNEED);
	*dropped = end;
}

void unmap_file(const char *data, size_t len)
{
	if (!data)
		return;
	map_guard_remove(data);
	munmap((void *)data, len);
}

/* Whether the file mapped at data was cut shorter, or could not be read,
 * while it was read: its mapping reads zeros from there on (mapguard.c). */
bool mapped_file_cut(const char *data)
{
	return data && map_guard_cut(data);
}

/* The one warning for a trace file found cut shorter while it was read
 * (line 0: no line number), and what the report does instead. */
void warn_cut(struct workflow *wf, const struct task *t, const char *name,
	      size_t line, const char *instead)
{
	char where[32] = "";

	if (line)
		snprintf(where, sizeof(where), ":%zu", line);
	workflow_warn(
		wf,
		"%s/%s%s: the file was cut shorter, or could not be read, while the report read it; %s",
		t->dir, name, where, instead);
}

/* ---- CSV with named columns ---- */

/* Opens NAME and maps its header onto the wanted columns; returns 0, or -1
 * if the file is missing, empty or lacks a required column. */
int csv_open(struct csv_file *cf, int dirfd, const char *const *want,
	     size_t nwant, size_t nrequired)
{
	int err;

	csv_record_init(&cf->rec);
	err = map_file(dirfd, cf->name, &cf->data, &cf->len);
	if (err < 0) {
		cf->prob->missing = true;
		if (err != -ENOENT)
			workflow_warn(cf->wf, "%s/%s: cannot read: %s",
				      cf->t->dir, cf->name, strerror(-err));
		return -1;
	}
	cf->dropped = 0;
	csv_reader_init(&cf->r, cf->data, cf->len);
	if (csv_next(&cf->r, &cf->rec) != CSV_RECORD) {
		workflow_warn(cf->wf, "%s/%s:1: no header line; file ignored",
			      cf->t->dir, cf->name);
		csv_close(cf);
		return -1;
	}
	cf->nheader = cf->rec.nfields;
	for (size_t w = 0; w < nwant; w++) {
		cf->col[w] = -1;
		for (size_t i = 0; i < cf->rec.nfields; i++)
			if (strcmp(sb_str(&cf->rec.field[i]), want[w]) == 0)
				cf->col[w] = (int)i;
		if (w < nrequired && cf->col[w] < 0) {
			workflow_warn(
				cf->wf,
				"%s/%s:1: no column \"%s\" (not an iowrap trace of this version?); file ignored",
				cf->t->dir, cf->name, want[w]);
			csv_close(cf);
			return -1;
		}
	}
	return 0;
}

void csv_close(struct csv_file *cf)
{
	csv_record_release(&cf->rec);
	unmap_file(cf->data, cf->len);
	cf->data = NULL;
}

/* Next well-formed row; false at the end.  Cut last lines and rows with
 * the wrong field count are warned about and skipped. */
bool csv_row(struct csv_file *cf)
{
	for (;;) {
		enum csv_status st = csv_next(&cf->r, &cf->rec);

		drop_read_pages(cf->data, &cf->dropped, cf->r.pos);
		if (mapped_file_cut(cf->data)) {
			cf->prob->truncated = true;
			warn_cut(cf->wf, cf->t, cf->name, cf->r.line,
				 CUT_REST_IGNORED);
			return false;
		}
		if (st == CSV_END)
			return false;
		if (st == CSV_TRUNCATED) {
			cf->prob->truncated = true;
			workflow_warn(cf->wf,
				      "%s/%s:%zu: truncated last line ignored",
				      cf->t->dir, cf->name, cf->r.line);
			return false;
		}
		if (cf->rec.nfields == cf->nheader && !cf->rec.dropped)
			return true;
		cf->prob->skipped++;
		workflow_warn(
			cf->wf,
			"%s/%s:%zu: %zu fields, the header has %zu; row skipped",
			cf->t->dir, cf->name, cf->r.line,
			cf->rec.nfields + cf->rec.dropped, cf->nheader);
	}
}

const char *cell(struct csv_file *cf, int w)
{
	return cf->col[w] < 0 ? "" : sb_str(&cf->rec.field[cf->col[w]]);
}

size_t cell_len(struct csv_file *cf, int w)
{
	return cf->col[w] < 0 ? 0 : cf->rec.field[cf->col[w]].len;
}

void bad_cell(struct csv_file *cf, const char *column, const char *outcome)
{
	workflow_warn(cf->wf, "%s/%s:%zu: bad value in column %s; %s",
		      cf->t->dir, cf->name, cf->r.line, column, outcome);
}

void bad_row(struct csv_file *cf, const char *column)
{
	cf->prob->skipped++;
	bad_cell(cf, column, "row skipped");
}

/* Optional unsigned cell: empty means "not known" (0 here). */
bool opt_u64(struct csv_file *cf, int w, uint64_t *out)
{
	const char *s = cell(cf, w);

	*out = 0;
	return !*s || parse_u64(s, out);
}
