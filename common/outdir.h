/* SPDX-License-Identifier: MIT */
/*
 * The task's trace directory.  It is created 0700 and everything in it is
 * opened with openat() under its fd, O_NOFOLLOW, and O_EXCL for new files,
 * so a symlink planted in a shared directory cannot redirect our writes.
 * Existing parent directories are the user's own path and may be symlinks;
 * the trace directory itself may not.
 */
#ifndef IOWRAP_OUTDIR_H
#define IOWRAP_OUTDIR_H

#include <stdbool.h>

#include "strbuf.h"

struct outdir {
	int dirfd;
	char *path;
};

/* Returns 0, or -errno with a one-line explanation and fix in why. */
int outdir_create(struct outdir *od, const char *path, bool force,
		  struct strbuf *why);
/* Bounds of outdir_create_unique's names. */
#define OUTDIR_NAME_MAX 120
#define OUTDIR_MAX_SUFFIX 1000

/*
 * A new trace directory DIR/SUB/NAME for one task among many writing into
 * one shared DIR (on NFS too): DIR is created if missing and may be the
 * user's symlink; SUB (optional, e.g. the host) is created if missing and
 * may never be a symlink; NAME must be new: if mkdir finds it taken, NAME-2,
 * NAME-3, ... up to NAME-1000 are tried, then NAME-r<random>.  mkdir is the
 * only arbitration: no locks, no renames.  *attempt is 1 if NAME itself was
 * free.  Returns 0, or -errno with a one-line explanation in why.
 */
int outdir_create_unique(struct outdir *od, const char *dir, const char *sub,
			 const char *name, unsigned *attempt,
			 struct strbuf *why);
/* Creates NAME (mode 0600) in the directory; -errno on failure. */
int outdir_create_file(struct outdir *od, const char *name);
/*
 * Gives file FROM the name TO, which must be new (as O_EXCL would have
 * it: one that is there stays); -errno on failure, FROM then stays.
 */
/* Whether the directory was removed since it was opened (by the task,
 * which owns it): nothing can be made in it any more. */
bool outdir_removed(const struct outdir *od);
int outdir_publish(struct outdir *od, const char *from, const char *to);
void outdir_close(struct outdir *od);

#endif
