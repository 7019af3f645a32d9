/* SPDX-License-Identifier: MIT */
/*
 * Open file descriptions and fd tables, as the kernel keeps them: dup and
 * fork share a description (and its offset), a process's threads share
 * one table, fork copies it, exec drops the close-on-exec fds.
 */
#ifndef IOWRAP_FDTABLE_H
#define IOWRAP_FDTABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdfilter.h"

struct ofd {
	int refs;
	uint64_t handle_id; /* the trace's id for this open */
	uint64_t inode_id; /* the trace's id for the file; 0: not a file */
	int64_t offset; /* the file position; -1: not seekable */
	uint32_t flags; /* open(2) flags, O_APPEND kept up to date */
	bool traced; /* a regular file inside --include/--exclude */
	/* What its filesystem lets the tracer settle at a call's entry:
	 * -1 not yet known (fs_settles in iotrace.c). */
	int8_t fs_settles;
	char *path;
	/* iotrace's count of directory renames when path was taken: a
	 * directory's path is taken again after one (it is a dirfd) */
	uint64_t path_gen;
	/* the view of the files path names it in (files.h's serial): a
	 * dirfd used in another (a chroot since) is named again */
	uint64_t path_view;
	/* An O_TMPFILE file still without a name at an exec's entry: freed
	 * if that exec succeeds and closes its last descriptor. */
	bool unnamed_at_exec;
};

struct fd_slot {
	struct ofd *ofd;
	bool cloexec;
};

struct fdtable {
	int refs;
	int size;
	struct fd_slot *slot;
	/* Descriptor numbers that ever held a traced file: the ones a
	 * scoped filter must name. */
	struct fd_numbers traced;
};

struct ofd *ofd_new(const char *path);
void ofd_get(struct ofd *o);
void ofd_put(struct ofd *o);

struct fdtable *fdtable_new(void);
/* fork: a new table sharing the same descriptions. */
struct fdtable *fdtable_copy(const struct fdtable *t);
void fdtable_put(struct fdtable *t);
/* The numbers t's descriptors held traced files on; none for no table. */
const struct fd_numbers *fdtable_traced(const struct fdtable *t);
/* NULL if fd is not known (yet). */
struct ofd *fdtable_get(const struct fdtable *t, int fd);
/* Installs o at fd (taking a reference), closing what was there. */
void fdtable_set(struct fdtable *t, int fd, struct ofd *o, bool cloexec);
void fdtable_set_cloexec(struct fdtable *t, int fd, bool cloexec);
/* Removes fd; returns its description with the table's reference still
 * held (the caller ofd_put()s it), or NULL. */
struct ofd *fdtable_take(struct fdtable *t, int fd);
void fdtable_exec(struct fdtable *t);

#endif
