/* SPDX-License-Identifier: MIT */
/* A whole regular file read into memory, with a size bound. */
#ifndef IOWRAP_TEXTFILE_H
#define IOWRAP_TEXTFILE_H

#include <stddef.h>

#include "strbuf.h"

/*
 * Reads DIRFD/PATH (opened with O_RDONLY|O_NONBLOCK|O_CLOEXEC|oflags, e.g.
 * O_NOFOLLOW) into out.  Returns 0, or -errno with the problem in why:
 * -EINVAL not a regular file (a FIFO never blocks us), -EFBIG more than
 * max bytes.
 */
int textfile_read_at(int dirfd, const char *path, int oflags, size_t max,
		     struct strbuf *out, struct strbuf *why);

#endif
