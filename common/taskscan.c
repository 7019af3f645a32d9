// SPDX-License-Identifier: MIT
#include "taskscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "display.h"
#include "util.h"

struct names {
	char **v;
	size_t n;
};

static void warn_entry(struct taskscan *ts, const char *path, const char *what,
		       const char *why)
{
	struct strbuf line;

	sb_init(&line, 0);
	display_adds(&line, path);
	sb_addf(&line, "%s: %s; skipped", what, why);
	warnx_line("tasks: %s", sb_str(&line));
	sb_release(&line);
	ts->warnings++;
}

void taskscan_init(struct taskscan *ts)
{
	memset(ts, 0, sizeof(*ts));
	ts->max_depth = TASKSCAN_MAX_DEPTH;
	ts->max_dirs = TASKSCAN_MAX_DIRS;
}

static void add_trace(struct taskscan *ts, struct task_trace *t)
{
	ts->traces = xrealloc(ts->traces, (ts->n + 1) * sizeof(*ts->traces));
	ts->traces[ts->n++] = *t;
}

/* A directory with procs.csv and no summary.json: the tracer was killed
 * (or the task is still running): procs.csv is written as the task runs,
 * summary.json at its end.  Listed, marked. */
static int unfinished_trace(int fd, const char *path, struct task_trace *t)
{
	struct stat st;

	if (fstatat(fd, "procs.csv", &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISREG(st.st_mode))
		return -ENOENT;
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(path);
	t->error = xstrdup("no summary.json (iowrap killed, or the task "
			   "still running)");
	return 1;
}

/* Whether the directory at fd is a trace directory (then it is added). */
static bool try_trace(struct taskscan *ts, int fd, const char *path)
{
	struct task_trace t;
	struct strbuf why;
	struct stat st;
	int rc;

	sb_init(&why, 0);
	rc = task_trace_load(fd, path, &t, &why);
	if (rc < 0 && rc != -ENOENT)
		warn_entry(ts, path, "/summary.json", sb_str(&why));
	else if (rc > 0 && t.error)
		warn_entry(ts, path, "/summary.json", t.error);
	sb_release(&why);
	if (rc == -ENOENT)
		rc = unfinished_trace(fd, path, &t);
	if (rc <= 0)
		return false;
	if (fstat(fd, &st) == 0) {
		t.dev = st.st_dev;
		t.ino = st.st_ino;
	}
	add_trace(ts, &t);
	return true;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the entries that may be directories, sorted. */
static int list_dirs(int fd, struct names *out)
{
	struct dirent *de;
	DIR *d;
	int err, dfd = dup(fd);

	memset(out, 0, sizeof(*out));
	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		out->v[out->n++] = xstrdup(de->d_name);
	}
	err = errno;
	closedir(d);
	qsort(out->v, out->n, sizeof(*out->v), compare_names);
	return -err;
}

static void free_names(struct names *names)
{
	for (size_t i = 0; i < names->n; i++)
		free(names->v[i]);
	free(names->v);
}

static void walk(struct taskscan *ts, int fd, const char *path, unsigned depth);

static void walk_child(struct taskscan *ts, int parent, const char *path,
		       const char *name, unsigned depth)
{
	struct strbuf child;
	int fd;

	if (ts->dirs >= ts->max_dirs) {
		if (!ts->limit_hit)
			warnx_line("tasks: stopped after %zu directories; "
				   "give a narrower DIR",
				   ts->max_dirs);
		ts->limit_hit = true;
		return;
	}
	sb_init(&child, 0);
	sb_adds(&child, path);
	if (child.len == 0 || child.buf[child.len - 1] != '/')
		sb_addc(&child, '/');
	sb_adds(&child, name);
	fd = openat(parent, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		ts->dirs++;
		walk(ts, fd, sb_str(&child), depth + 1);
		close(fd);
	} else if (errno != ENOTDIR && errno != ELOOP && errno != ENOENT) {
		warn_entry(ts, sb_str(&child), "", strerror(errno));
	}
	sb_release(&child);
}

static void walk(struct taskscan *ts, int fd, const char *path, unsigned depth)
{
	struct names names;
	int rc;

	if (try_trace(ts, fd, path) || depth >= ts->max_depth)
		return;
	rc = list_dirs(fd, &names);
	if (rc < 0)
		warn_entry(ts, path, "", strerror(-rc));
	for (size_t i = 0; i < names.n && !ts->limit_hit; i++)
		walk_child(ts, fd, path, names.v[i], depth);
	free_names(&names);
}

static int compare_ids(const void *pa, const void *pb)
{
	const struct task_trace *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return strcmp(a->path, b->path);
}

static int compare_paths(const void *pa, const void *pb)
{
	const struct task_trace *a = pa, *b = pb;

	return strcmp(a->path, b->path);
}

/* A trace found twice (DIR and DIR/HOST both given) is listed once; then
 * they are in path order. */
static void drop_duplicates(struct taskscan *ts)
{
	size_t kept = 0;

	qsort(ts->traces, ts->n, sizeof(*ts->traces), compare_ids);
	for (size_t i = 0; i < ts->n; i++) {
		if (kept && ts->traces[i].dev == ts->traces[kept - 1].dev &&
		    ts->traces[i].ino == ts->traces[kept - 1].ino)
			task_trace_release(&ts->traces[i]);
		else
			ts->traces[kept++] = ts->traces[i];
	}
	ts->n = kept;
	qsort(ts->traces, ts->n, sizeof(*ts->traces), compare_paths);
}

int taskscan_add(struct taskscan *ts, const char *dir, struct strbuf *why)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;

		sb_adds(why, strerror(err));
		return -err;
	}
	ts->dirs++;
	walk(ts, fd, dir, 0);
	close(fd);
	drop_duplicates(ts);
	return 0;
}

void taskscan_release(struct taskscan *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		task_trace_release(&ts->traces[i]);
	free(ts->traces);
	ts->traces = NULL;
	ts->n = 0;
}
