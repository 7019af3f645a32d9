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
/* Creates NAME (mode 0600) in the directory; -errno on failure. */
int outdir_create_file(struct outdir *od, const char *name);
void outdir_close(struct outdir *od);

#endif
