// SPDX-License-Identifier: MIT
#include "research.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csvin.h"
#include "parse.h"
#include "util.h"

/* Fig. 2a's columns, in order; the path is the last and may hold commas. */
enum {
	R_START,
	R_END,
	R_PID,
	R_INODE = 7,
	R_TYPE,
	R_RESULT,
	R_HANDLE,
	R_OFFSET,
	R_SIZE,
	R_FLAGS,
	R_PATH,
	R_NCOLS
};

/* The tools' first line names the columns in a comment. */
static const char header_mark[] = "time_start, time_end, pid";

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool is_own_table(const char *name)
{
	return !strcmp(name, "io.csv") || !strcmp(name, "procs.csv") ||
	       !strcmp(name, "files.csv");
}

/* A regular *.csv file whose first line is a '#' comment naming the
 * research's columns. */
static bool is_research_csv(int dirfd, const char *name)
{
	char head[512];
	ssize_t n;
	struct stat st;
	char *nl;
	int fd;

	if (!ends_with(name, ".csv") || is_own_table(name))
		return false;
	fd = openat(dirfd, name,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n <= 0)
		return false;
	head[n] = '\0';
	nl = strchr(head, '\n');
	if (nl)
		*nl = '\0';
	return head[0] == '#' && strstr(head, header_mark) != NULL;
}

bool research_csv_find(int dirfd, char *name, size_t size)
{
	/* Its own open file description: dup() would share the directory
	 * offset with a caller that reads dirfd's entries too. */
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	name[0] = '\0';
	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	/* The smallest matching name: the same file whatever readdir's order. */
	while ((de = readdir(d)))
		if (strlen(de->d_name) < size &&
		    (!name[0] || strcmp(de->d_name, name) < 0) &&
		    is_research_csv(dirfd, de->d_name))
			snprintf(name, size, "%s", de->d_name);
	closedir(d);
	return name[0] != '\0';
}

/* Splits line (NUL-terminated) into R_NCOLS fields: the first fourteen at
 * commas, each trimmed; the rest is the path, leading blanks trimmed. */
static size_t split_row(char *line, char **field)
{
	size_t n = 0;
	char *p = line;

	while (n < R_PATH) {
		char *comma = strchr(p, ',');

		while (*p == ' ' || *p == '\t')
			p++;
		field[n++] = p;
		if (!comma)
			return n;
		*comma = '\0';
		for (char *e = comma; e > p && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		p = comma + 1;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	field[n++] = p;
	return n;
}

/* path:mountroot:superblockroot (the eBPF tool) -> path; a path without
 * those two suffixes (the FUSE tool, Fig. 2a's example) is kept whole. */
static size_t path_part(const char *path)
{
	const char *last = strrchr(path, ':');
	const char *prev = NULL;

	if (last)
		for (const char *p = last - 1; p >= path; p--)
			if (*p == ':') {
				prev = p;
				break;
			}
	if (!prev || path[0] != '/' || prev[1] != '/' || last[1] != '/')
		return strlen(path);
	return (size_t)(prev - path);
}

static bool parse_fields(char **f, struct io_row *r)
{
	if (!parse_time_us(f[R_START], &r->start) ||
	    !parse_time_us(f[R_END], &r->end) || r->end < r->start ||
	    !parse_u64(f[R_INODE], &r->inode) || !f[R_TYPE][0] ||
	    f[R_TYPE][1] || !parse_i64(f[R_RESULT], &r->result) ||
	    !parse_i64(f[R_OFFSET], &r->offset))
		return false;
	r->type = f[R_TYPE][0];
	r->flags = 0;
	if (f[R_FLAGS][0] && !parse_hex32(f[R_FLAGS], &r->flags))
		return false;
	/* Opens log offset 0; reads and writes at a known position. */
	if (r->type != 'R' && r->type != 'W')
		r->offset = -1;
	r->path = f[R_PATH];
	r->path_len = path_part(f[R_PATH]);
	r->path2 = "";
	r->path2_len = 0;
	return true;
}

static void widen_times(struct task *t, const struct io_row *r)
{
	if (t->start_us < 0 || r->start < t->start_us)
		t->start_us = r->start;
	if (r->end > t->end_us)
		t->end_us = r->end;
}

/* One line: a comment, an empty line or a data row. */
static void scan_line(struct workflow *wf, struct task *t, const char *name,
		      size_t lineno, char *line, struct csv_problems *prob,
		      io_row_fn fn, void *ctx)
{
	char *f[R_NCOLS];
	struct io_row row;
	size_t n;
	char saved;

	if (!line[0] || line[0] == '#')
		return;
	n = split_row(line, f);
	if (n != R_NCOLS) {
		prob->skipped++;
		workflow_warn(wf, "%s/%s:%zu: %zu fields, want %d; row skipped",
			      t->dir, name, lineno, n, R_NCOLS);
		return;
	}
	if (!parse_fields(f, &row)) {
		prob->skipped++;
		workflow_warn(
			wf,
			"%s/%s:%zu: bad value (times, inode, type, result, offset or flags); row skipped",
			t->dir, name, lineno);
		return;
	}
	prob->rows++;
	widen_times(t, &row);
	/* The consumer reads path_len bytes of path: cut it there. */
	saved = f[R_PATH][row.path_len];
	f[R_PATH][row.path_len] = '\0';
	fn(ctx, &row);
	f[R_PATH][row.path_len] = saved;
}

void research_scan(struct workflow *wf, struct task *t, int dirfd,
		   const char *name, struct csv_problems *prob, io_row_fn fn,
		   void *ctx)
{
	const char *data;
	size_t len, pos = 0, lineno = 0;
	struct strbuf line;
	int err = map_file(dirfd, name, &data, &len);

	if (err < 0) {
		prob->missing = true;
		workflow_warn(wf, "%s/%s: cannot read: %s", t->dir, name,
			      strerror(-err));
		return;
	}
	sb_init(&line, 0);
	while (pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - data) : len;

		lineno++;
		if (!nl) {
			/* The tool was stopped mid-write. */
			prob->truncated = true;
			workflow_warn(wf,
				      "%s/%s:%zu: truncated last line ignored",
				      t->dir, name, lineno);
			break;
		}
		sb_reset(&line);
		sb_add(&line, data + pos, end - pos);
		if (line.len && line.buf[line.len - 1] == '\r')
			line.buf[--line.len] = '\0';
		if (line.buf)
			scan_line(wf, t, name, lineno, line.buf, prob, fn, ctx);
		pos = end + 1;
	}
	sb_release(&line);
	unmap_file(data, len);
}
