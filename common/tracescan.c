// SPDX-License-Identifier: MIT
#include "tracescan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "display.h"
#include "jsonget.h"
#include "textfile.h"
#include "util.h"

struct names {
	char **v;
	size_t n, alloc;
};

/* "WHO: PATHWHAT: WHY; TAIL", counted in ts->warnings. */
static void warn_tail(struct tracescan *ts, const char *path, const char *what,
		      const char *why, const char *tail)
{
	struct strbuf line;

	sb_init(&line, 0);
	display_adds(&line, path);
	sb_addf(&line, "%s: %s; %s", what, why, tail);
	warnx_line("%s: %s", ts->who, sb_str(&line));
	sb_release(&line);
	ts->warnings++;
}

void tracescan_warn(struct tracescan *ts, const char *path, const char *what,
		    const char *why)
{
	warn_tail(ts, path, what, why, "skipped");
}

bool tracescan_has_file(int fd, const char *name)
{
	struct stat st;

	return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode);
}

/* Whether the first bytes of summary.json name iowrap's schema: 1 yes, 0
 * no, -errno if it cannot be read (the reason in why). */
static int schema_in_prefix(int dirfd, struct strbuf *why)
{
	char buf[SUMMARY_SCHEMA_BYTES + 1];
	struct stat st;
	ssize_t n;
	int fd;

	fd = openat(dirfd, "summary.json",
		    O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		n = -errno;
	} else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		sb_adds(why, "not a regular file");
		return -EINVAL;
	} else {
		n = read_until_eof(fd, buf, sizeof(buf));
		close(fd);
	}
	if (n < 0) {
		sb_adds(why, strerror((int)-n));
		return (int)n;
	}
	return jget_names_summary_early(buf, (size_t)n);
}

/* Whether DIRFD/summary.json is iowrap's: its first bytes name the schema,
 * or it parses with a "schema" of iowrap-summary/N (keys reordered). */
static int summary_is_ours(int dirfd, struct strbuf *why)
{
	struct strbuf text;
	cJSON *root;
	int rc = schema_in_prefix(dirfd, why);

	if (rc != 0)
		return rc;
	sb_init(&text, TRACESCAN_SUMMARY_MAX + 1);
	rc = textfile_read_at(dirfd, "summary.json", O_NOFOLLOW,
			      TRACESCAN_SUMMARY_MAX, &text, why);
	if (rc == 0) {
		root = cJSON_ParseWithLength(text.buf, text.len);
		rc = jget_is_summary(root);
		cJSON_Delete(root);
	}
	sb_release(&text);
	return rc;
}

enum tracescan_kind tracescan_kind(struct tracescan *ts, int fd,
				   const char *path)
{
	bool procs = tracescan_has_file(fd, "procs.csv");
	struct strbuf why;
	int rc;

	if (!tracescan_has_file(fd, "summary.json"))
		return procs ? TRACESCAN_PROCS : TRACESCAN_NONE;
	sb_init(&why, 0);
	rc = summary_is_ours(fd, &why);
	if (rc == 0 && !procs)
		warn_tail(ts, path, "/summary.json",
			  "not an iowrap summary (no \"schema\": "
			  "\"iowrap-summary/N\"), no procs.csv",
			  "not a trace, searched below");
	else if (rc < 0 && !procs)
		tracescan_warn(ts, path, "/summary.json", sb_str(&why));
	sb_release(&why);
	if (rc > 0)
		return TRACESCAN_SUMMARY;
	return procs ? TRACESCAN_PROCS : TRACESCAN_NONE;
}

void tracescan_init(struct tracescan *ts, const char *who,
		    tracescan_probe_fn probe, void (*free_data)(void *data))
{
	*ts = (struct tracescan){ .max_depth = TRACESCAN_MAX_DEPTH,
				  .max_dirs = TRACESCAN_MAX_DIRS,
				  .who = who,
				  .probe = probe,
				  .free_data = free_data };
}

/* Whether the directory at fd is a trace directory (then it is added). */
static bool try_trace(struct tracescan *ts, int fd, const char *path)
{
	struct tracescan_dir d = { 0 };
	struct stat st;

	if (ts->probe(ts, fd, path, &d.data) <= 0)
		return false;
	d.path = xstrdup(path);
	if (fstat(fd, &st) == 0) {
		d.dev = st.st_dev;
		d.ino = st.st_ino;
	}
	ts->dir = xgrow(ts->dir, &ts->alloc, ts->n, sizeof(*ts->dir));
	ts->dir[ts->n++] = d;
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
		out->v = xgrow(out->v, &out->alloc, out->n, sizeof(*out->v));
		out->v[out->n++] = xstrdup(de->d_name);
	}
	err = errno;
	closedir(d);
	sort_array(out->v, out->n, sizeof(*out->v), compare_names);
	return -err;
}

static void free_names(struct names *names)
{
	for (size_t i = 0; i < names->n; i++)
		free(names->v[i]);
	free(names->v);
}

static void walk(struct tracescan *ts, int fd, const char *path,
		 unsigned depth);

static void walk_child(struct tracescan *ts, int parent, const char *path,
		       const char *name, unsigned depth)
{
	struct strbuf child;
	int fd;

	if (ts->dirs >= ts->max_dirs) {
		if (!ts->limit_hit)
			warnx_line("%s: stopped after %zu directories; "
				   "give a narrower DIR",
				   ts->who, ts->max_dirs);
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
		tracescan_warn(ts, sb_str(&child), "", strerror(errno));
	}
	sb_release(&child);
}

static void walk(struct tracescan *ts, int fd, const char *path, unsigned depth)
{
	struct names names;
	int rc;

	if (try_trace(ts, fd, path) || depth >= ts->max_depth)
		return;
	rc = list_dirs(fd, &names);
	if (rc < 0)
		tracescan_warn(ts, path, "", strerror(-rc));
	for (size_t i = 0; i < names.n && !ts->limit_hit; i++)
		walk_child(ts, fd, path, names.v[i], depth);
	free_names(&names);
}

static int compare_ull(unsigned long long x, unsigned long long y)
{
	return (x > y) - (x < y);
}

/* Same directory (device, inode) together, in path order. */
static int compare_ids(const void *pa, const void *pb)
{
	const struct tracescan_dir *a = pa, *b = pb;
	int c = compare_ull(a->dev, b->dev);

	if (!c)
		c = compare_ull(a->ino, b->ino);
	return c ? c : strcmp(a->path, b->path);
}

static int compare_paths(const void *pa, const void *pb)
{
	const struct tracescan_dir *a = pa, *b = pb;

	return strcmp(a->path, b->path);
}

static void release_dir(struct tracescan *ts, struct tracescan_dir *d)
{
	if (ts->free_data)
		ts->free_data(d->data);
	free(d->path);
}

/* A trace found twice (DIR and DIR/HOST both given) is listed once; then
 * they are in path order. */
static void drop_duplicates(struct tracescan *ts)
{
	size_t kept = 0;

	sort_array(ts->dir, ts->n, sizeof(*ts->dir), compare_ids);
	for (size_t i = 0; i < ts->n; i++) {
		if (kept && ts->dir[i].dev == ts->dir[kept - 1].dev &&
		    ts->dir[i].ino == ts->dir[kept - 1].ino)
			release_dir(ts, &ts->dir[i]);
		else
			ts->dir[kept++] = ts->dir[i];
	}
	ts->n = kept;
	sort_array(ts->dir, ts->n, sizeof(*ts->dir), compare_paths);
}

int tracescan_add(struct tracescan *ts, const char *dir, struct strbuf *why)
{
	size_t before = ts->n, found;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;

		sb_adds(why, strerror(err));
		return -err;
	}
	ts->dirs++;
	walk(ts, fd, dir, 0);
	close(fd);
	found = ts->n - before;
	drop_duplicates(ts);
	return found > INT_MAX ? INT_MAX : (int)found;
}

void tracescan_release(struct tracescan *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		release_dir(ts, &ts->dir[i]);
	free(ts->dir);
	ts->dir = NULL;
	ts->n = 0;
}
