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
_Static_assert(R_NCOLS == RESEARCH_NCOLS, "Fig. 2a has 15 columns");

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
	       !strcmp(name, "files.csv") || !strcmp(name, "threads.csv");
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

const char *const research_columns[RESEARCH_NCOLS] = {
	"time_start",  "time_end",  "pid",   "utime_start", "utime_end",
	"stime_start", "stime_end", "inode", "type",	    "result",
	"handle",      "offset",    "size",  "flags",	    "path",
};

/* Per-row warnings of one kind printed per file before only counting. */
#define PATH_WARNINGS_PRINTED 5

/* One file being read: where its warnings point and how many there were. */
struct research_file {
	struct workflow *wf;
	struct task *t;
	const char *name;
	struct csv_problems *prob;
	size_t lineno;
	size_t colon_paths, padded_paths;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Cuts the blanks at the end of s (NUL-terminated); true if there were. */
static bool trim_end(char *s)
{
	char *e = s + strlen(s);
	bool trimmed = false;

	while (e > s && is_blank(e[-1])) {
		*--e = '\0';
		trimmed = true;
	}
	return trimmed;
}

/* Splits line (NUL-terminated) into R_NCOLS fields: the first fourteen at
 * commas, each trimmed; the rest is the path, leading blanks trimmed (the
 * separator is ", "), its trailing blanks left for split_path(). */
static size_t split_row(char *line, char **field)
{
	size_t n = 0;
	char *p = line;

	while (n < R_PATH) {
		char *comma = strchr(p, ',');

		while (is_blank(*p))
			p++;
		field[n++] = p;
		if (!comma)
			return n;
		*comma = '\0';
		trim_end(p);
		p = comma + 1;
	}
	while (is_blank(*p))
		p++;
	field[n++] = p;
	return n;
}

static void path_warning(struct research_file *rf, size_t *count,
			 const char *what)
{
	if (++*count > PATH_WARNINGS_PRINTED)
		return;
	workflow_warn(rf->wf, "%s/%s:%zu: %s", rf->t->dir, rf->name, rf->lineno,
		      what);
}

/* The eBPF tool writes path:mountroot:superblockroot: split at the last
 * two ':' when both suffixes are absolute; otherwise (the FUSE tool, Fig.
 * 2a's example) the path is kept whole.  Cuts path in place and points
 * mount_root into it. */
static void split_path(struct research_file *rf, char *path,
		       const char **mount_root)
{
	char *last = strrchr(path, ':');
	char *prev = last ? memrchr(path, ':', (size_t)(last - path)) : NULL;

	*mount_root = "";
	if (trim_end(path))
		path_warning(
			rf, &rf->padded_paths,
			"blanks after the path trimmed (padding, or part of the name: cannot tell)");
	if (!prev || prev[1] != '/' || last[1] != '/') {
		if (last)
			path_warning(
				rf, &rf->colon_paths,
				"path holds ':' but no :mountroot:sbroot suffix; kept whole");
		return;
	}
	*last = '\0';
	*prev = '\0';
	*mount_root = prev + 1;
	if (trim_end(path))
		path_warning(
			rf, &rf->padded_paths,
			"blanks before :mountroot trimmed (padding, or part of the name: cannot tell)");
	if (strchr(path, ':'))
		path_warning(
			rf, &rf->colon_paths,
			"path holds ':' itself; split at the last two ':' (a mount root with ':' would be misread)");
}

static bool parse_numbers(char **f, struct io_row *r)
{
	return parse_time_us(f[R_START], &r->start) &&
	       parse_time_us(f[R_END], &r->end) && r->end >= r->start &&
	       parse_u64(f[R_PID], &r->pid) &&
	       parse_u64(f[R_INODE], &r->inode) && f[R_TYPE][0] &&
	       !f[R_TYPE][1] && parse_i64(f[R_RESULT], &r->result) &&
	       parse_u64(f[R_HANDLE], &r->handle) &&
	       parse_i64(f[R_OFFSET], &r->offset) &&
	       parse_i64(f[R_SIZE], &r->size);
}

static bool parse_fields(struct research_file *rf, char **f, struct io_row *r)
{
	if (!parse_numbers(f, r))
		return false;
	r->type = f[R_TYPE][0];
	r->flags = 0;
	if (f[R_FLAGS][0] && !parse_hex32(f[R_FLAGS], &r->flags))
		return false;
	/* Opens log offset 0; reads and writes at a known position. */
	if (r->type != 'R' && r->type != 'W')
		r->offset = -1;
	split_path(rf, f[R_PATH], &r->mount_root);
	r->path = f[R_PATH];
	r->path_len = strlen(f[R_PATH]);
	r->path2 = "";
	r->path2_len = 0;
	r->raw = (const char *const *)f;
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
static void scan_line(struct research_file *rf, char *line, io_row_fn fn,
		      void *ctx)
{
	char *f[R_NCOLS];
	struct io_row row;
	size_t n;

	if (!line[0] || line[0] == '#')
		return;
	n = split_row(line, f);
	if (n != R_NCOLS) {
		rf->prob->skipped++;
		workflow_warn(rf->wf,
			      "%s/%s:%zu: %zu fields, want %d; row skipped",
			      rf->t->dir, rf->name, rf->lineno, n, R_NCOLS);
		return;
	}
	if (!parse_fields(rf, f, &row)) {
		rf->prob->skipped++;
		workflow_warn(
			rf->wf,
			"%s/%s:%zu: bad value (times, pid, inode, type, result, handle, offset, size or flags); row skipped",
			rf->t->dir, rf->name, rf->lineno);
		return;
	}
	rf->prob->rows++;
	widen_times(rf->t, &row);
	fn(ctx, &row);
}

/* After the file: how many path warnings were only counted. */
static void count_more(struct research_file *rf, size_t count, const char *what)
{
	if (count > PATH_WARNINGS_PRINTED)
		workflow_warn(rf->wf, "%s/%s: %zu more rows with %s",
			      rf->t->dir, rf->name,
			      count - PATH_WARNINGS_PRINTED, what);
}

void research_scan(struct workflow *wf, struct task *t, int dirfd,
		   const char *name, struct csv_problems *prob, io_row_fn fn,
		   void *ctx)
{
	struct research_file rf = {
		.wf = wf, .t = t, .name = name, .prob = prob
	};
	const char *data;
	size_t len, pos = 0, dropped = 0;
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

		rf.lineno++;
		if (mapped_file_cut(data)) {
			prob->truncated = true;
			warn_cut(wf, t, name, rf.lineno, CUT_REST_IGNORED);
			break;
		}
		if (!nl) {
			/* The tool was stopped mid-write. */
			prob->truncated = true;
			workflow_warn(wf,
				      "%s/%s:%zu: truncated last line ignored",
				      t->dir, name, rf.lineno);
			break;
		}
		sb_reset(&line);
		sb_add(&line, data + pos, end - pos);
		if (line.len && line.buf[line.len - 1] == '\r')
			line.buf[--line.len] = '\0';
		if (line.buf)
			scan_line(&rf, line.buf, fn, ctx);
		pos = end + 1;
		drop_read_pages(data, &dropped, pos);
	}
	sb_release(&line);
	unmap_file(data, len);
	count_more(&rf, rf.colon_paths, "':' in the path");
	count_more(&rf, rf.padded_paths, "blanks trimmed from the path");
}
