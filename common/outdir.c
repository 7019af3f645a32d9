// SPDX-License-Identifier: MIT
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* The files iowrap writes; --force removes only these. */
static const char *const trace_files[] = {
	"procs.csv", "summary.json", "io.csv",
	"files.csv", "threads.csv",  ".summary.json.part",
};

/* Opens (creating if needed) one intermediate directory component. */
static int open_parent_component(int dirfd, const char *name)
{
	int fd;

	if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Walks all components but the last; returns a dir fd and sets *last. */
static int open_parents(char *path, char **last)
{
	int dirfd = path[0] == '/' ?
			    open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) :
			    open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *p = path;

	if (dirfd < 0)
		return -errno;
	for (;;) {
		char *slash;
		int next;

		while (*p == '/')
			p++;
		slash = strchr(p, '/');
		if (!slash || slash[strspn(slash, "/")] == '\0') {
			if (slash)
				*slash = '\0';
			*last = p;
			return dirfd;
		}
		*slash = '\0';
		next = open_parent_component(dirfd, p);
		close(dirfd);
		if (next < 0)
			return next;
		dirfd = next;
		p = slash + 1;
	}
}

static bool dir_is_empty(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	bool empty = true;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			empty = false;
			break;
		}
	}
	closedir(d);
	return empty;
}

static int remove_old_trace(int dirfd)
{
	for (size_t i = 0; i < ARRAY_SIZE(trace_files); i++)
		if (unlinkat(dirfd, trace_files[i], 0) < 0 && errno != ENOENT)
			return -errno;
	return 0;
}

static int open_last(int parentfd, const char *name, const char *path,
		     bool force, struct strbuf *why)
{
	bool created = mkdirat(parentfd, name, 0700) == 0;
	int fd, err;

	if (!created && errno != EEXIST) {
		err = -errno;
		sb_addf(why,
			"cannot create trace directory %s: %s; choose a writable place with -o DIR",
			path, strerror(-err));
		return err;
	}
	fd = openat(parentfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		struct stat st;

		err = -errno;
		/* O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR. */
		if (err == -ENOTDIR &&
		    fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			err = -ELOOP;
		if (err == -ELOOP)
			sb_addf(why,
				"trace directory %s is a symlink; refusing to follow it (remove it or choose another -o DIR)",
				path);
		else
			sb_addf(why,
				"cannot open trace directory %s: %s; choose another -o DIR",
				path, strerror(-err));
		return err;
	}
	/* One that is there may be read-only to us (its mode, a read-only
	 * mount): every trace file would fail, the task traced for nothing.
	 * Only those answers count: musl asks faccessat2, which an old
	 * container profile refuses with EPERM. */
	if (!created && faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) < 0 &&
	    (errno == EACCES || errno == EROFS)) {
		err = -errno;
		sb_addf(why,
			"cannot write in trace directory %s: %s; choose a writable place with -o DIR",
			path, strerror(-err));
		close(fd);
		return err;
	}
	if (created || dir_is_empty(fd))
		return fd;
	if (!force) {
		sb_addf(why,
			"trace directory %s is not empty; use --force to overwrite it or choose another -o DIR",
			path);
		close(fd);
		return -EEXIST;
	}
	err = remove_old_trace(fd);
	if (err < 0) {
		sb_addf(why, "cannot clear trace directory %s: %s", path,
			strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

int outdir_create(struct outdir *od, const char *path, bool force,
		  struct strbuf *why)
{
	char *copy = xstrdup(path);
	char *last = NULL;
	int parentfd, fd;

	od->dirfd = -1;
	od->path = NULL;
	parentfd = open_parents(copy, &last);
	if (parentfd < 0) {
		sb_addf(why,
			"cannot create the parents of trace directory %s: %s; choose a writable place with -o DIR",
			path, strerror(-parentfd));
		free(copy);
		return parentfd;
	}
	if (!*last) {
		last = ".";
	}
	fd = open_last(parentfd, last, path, force, why);
	close(parentfd);
	free(copy);
	if (fd < 0)
		return fd;
	od->dirfd = fd;
	od->path = xstrdup(path);
	return 0;
}

/* Opens (creating if needed) DIR, a user's path that may hold symlinks. */
static int open_user_dir(const char *dir, struct strbuf *why)
{
	struct strbuf path;
	char *last = NULL;
	int parentfd;

	sb_init(&path, 0);
	sb_addf(&path, "%s/x", dir);
	parentfd = open_parents(path.buf, &last);
	sb_release(&path);
	if (parentfd < 0) {
		sb_addf(why,
			"cannot create trace root %s: %s; choose a writable place with --root DIR",
			dir, strerror(-parentfd));
		return parentfd;
	}
	return parentfd;
}

/*
 * A level another user made (a HOST directory planted in a shared --root)
 * would let that user read the traces, or swap them.
 */
static int check_owner(int fd, const char *path, struct strbuf *why)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		sb_addf(why, "cannot stat %s: %s", path, strerror(errno));
		return -errno;
	}
	if (st.st_uid == geteuid())
		return 0;
	sb_addf(why,
		"%s belongs to uid %u, not to you (uid %u); refusing to write traces there (remove it or choose another --root)",
		path, (unsigned)st.st_uid, (unsigned)geteuid());
	return -EPERM;
}

/* One level we create or share with other tasks: ours, never a symlink. */
static int open_shared_level(int dirfd, const char *name, const char *path,
			     struct strbuf *why)
{
	int fd, err;

	if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST) {
		err = -errno;
		sb_addf(why, "cannot create %s: %s", path, strerror(-err));
		return err;
	}
	fd = openat(dirfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		err = check_owner(fd, path, why);
		if (err == 0)
			return fd;
		close(fd);
		return err;
	}
	err = errno == ENOTDIR || errno == ELOOP ? -ELOOP : -errno;
	if (err == -ELOOP)
		sb_addf(why,
			"%s is a symlink or not a directory; refusing to follow it (remove it or choose another --root)",
			path);
	else
		sb_addf(why, "cannot open %s: %s", path, strerror(-err));
	return err;
}

/* NAME, else NAME-2, NAME-3, ...: mkdir decides who gets which. */
static int make_unique(int dirfd, const char *name, struct strbuf *chosen,
		       unsigned *attempt)
{
	size_t len = strlen(name);

	for (unsigned n = 1; n <= OUTDIR_MAX_SUFFIX + 16; n++) {
		char suffix[24] = "";
		size_t keep = len;

		if (n > OUTDIR_MAX_SUFFIX) {
			uint32_t r = (uint32_t)random_u64();

			snprintf(suffix, sizeof(suffix), "-r%08x", r);
		} else if (n > 1) {
			snprintf(suffix, sizeof(suffix), "-%u", n);
		}
		if (keep + strlen(suffix) > OUTDIR_NAME_MAX)
			keep = OUTDIR_NAME_MAX - strlen(suffix);
		sb_reset(chosen);
		sb_add(chosen, name, keep);
		sb_adds(chosen, suffix);
		*attempt = n;
		if (mkdirat(dirfd, sb_str(chosen), 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int outdir_create_unique(struct outdir *od, const char *dir, const char *sub,
			 const char *name, unsigned *attempt,
			 struct strbuf *why)
{
	struct strbuf chosen, path;
	int dirfd, fd, err;

	od->dirfd = -1;
	od->path = NULL;
	dirfd = open_user_dir(dir, why);
	if (dirfd < 0)
		return dirfd;
	sb_init(&path, 0);
	sb_init(&chosen, 0);
	sb_adds(&path, dir);
	if (sub) {
		sb_addf(&path, "/%s", sub);
		fd = open_shared_level(dirfd, sub, sb_str(&path), why);
		close(dirfd);
		if (fd < 0) {
			err = fd;
			goto out;
		}
		dirfd = fd;
	}
	err = make_unique(dirfd, name, &chosen, attempt);
	if (err) {
		sb_addf(why, "cannot create a trace directory %s/%s: %s",
			sb_str(&path), name, strerror(-err));
		close(dirfd);
		goto out;
	}
	sb_addf(&path, "/%s", sb_str(&chosen));
	/* We just made it: a symlink here now was planted after mkdir. */
	fd = open_shared_level(dirfd, sb_str(&chosen), sb_str(&path), why);
	close(dirfd);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	od->dirfd = fd;
	od->path = sb_detach(&path);
out:
	sb_release(&path);
	sb_release(&chosen);
	return err;
}

int outdir_create_file(struct outdir *od, const char *name)
{
	int fd = openat(od->dirfd, name,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
				O_NOCTTY,
			0600);

	return fd < 0 ? -errno : fd;
}

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/*
 * renameat2's RENAME_NOREPLACE where the filesystem has it; where it
 * has not (EINVAL: NFS, older Lustre), a hard link and an unlink, which
 * fail the same way if TO is there.
 */
int outdir_publish(struct outdir *od, const char *from, const char *to)
{
	if (syscall(SYS_renameat2, od->dirfd, from, od->dirfd, to,
		    RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL)
		return -errno;
	if (linkat(od->dirfd, from, od->dirfd, to, 0) < 0)
		return -errno;
	/* Should it fail, FROM is a second name of the same file. */
	(void)unlinkat(od->dirfd, from, 0);
	return 0;
}

bool outdir_removed(const struct outdir *od)
{
	struct stat st;

	return od->dirfd >= 0 && fstat(od->dirfd, &st) == 0 && st.st_nlink == 0;
}

void outdir_close(struct outdir *od)
{
	if (od->dirfd >= 0)
		close(od->dirfd);
	od->dirfd = -1;
	free(od->path);
	od->path = NULL;
}
