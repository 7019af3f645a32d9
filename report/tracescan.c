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

#include "research.h"
#include "strbuf.h"
#include "util.h"

void tracescan_init(struct tracescan *ts)
{
	memset(ts, 0, sizeof(*ts));
}

void tracescan_release(struct tracescan *ts)
{
	for (size_t i = 0; i < ts->count; i++)
		free(ts->dir[i]);
	free(ts->dir);
	tracescan_init(ts);
}

static void add_dir(struct tracescan *ts, const char *path)
{
	if (ts->count == ts->alloc) {
		ts->alloc = ts->alloc ? ts->alloc * 2 : 16;
		ts->dir = xrealloc(ts->dir, ts->alloc * sizeof(*ts->dir));
	}
	ts->dir[ts->count++] = xstrdup(path);
}

static bool has_file(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode);
}

static bool is_subdir(int dirfd, const struct dirent *de)
{
	struct stat st;

	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
		return false;
	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
}

static void walk(struct tracescan *ts, int fd, struct strbuf *path, int depth);

static void walk_child(struct tracescan *ts, int dirfd, struct strbuf *path,
		       const char *name, int depth)
{
	size_t len = path->len;
	int fd = openat(dirfd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (len && path->buf[len - 1] != '/')
		sb_addc(path, '/');
	sb_adds(path, name);
	if (fd < 0) {
		warnx_line("report: %s: cannot open: %s; skipped", sb_str(path),
			   strerror(errno));
		ts->warnings++;
	} else {
		walk(ts, fd, path, depth + 1);
	}
	path->len = len;
	path->buf[len] = '\0';
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Takes ownership of fd. */
static void walk(struct tracescan *ts, int fd, struct strbuf *path, int depth)
{
	char research[NAME_MAX + 1];
	DIR *d;
	struct dirent *de;
	size_t first = ts->count;

	if (has_file(fd, "summary.json") || has_file(fd, "procs.csv") ||
	    research_csv_find(fd, research, sizeof(research))) {
		add_dir(ts, sb_str(path));
		close(fd);
		return;
	}
	if (depth >= TRACESCAN_MAX_DEPTH) {
		close(fd);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (is_subdir(dirfd(d), de))
			walk_child(ts, dirfd(d), path, de->d_name, depth);
	closedir(d);
	qsort(ts->dir + first, ts->count - first, sizeof(*ts->dir), cmp_str);
}

int tracescan_add(struct tracescan *ts, const char *root)
{
	struct strbuf path;
	size_t before = ts->count;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;

		warnx_line("report: %s: cannot open directory: %s", root,
			   strerror(err));
		ts->warnings++;
		return -err;
	}
	sb_init(&path, 1u << 16);
	sb_adds(&path, root);
	walk(ts, fd, &path, 0);
	sb_release(&path);
	return (int)(ts->count - before);
}
