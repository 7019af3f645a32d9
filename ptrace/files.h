/* SPDX-License-Identifier: MIT */
/*
 * The files the task used, one per (device, inode number): the trace's
 * inode ids, every path each was opened under, its mount and filesystem
 * type, and its size when first opened and when last closed (files.csv).
 */
#ifndef IOWRAP_FILES_H
#define IOWRAP_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace.h"

#define FILE_MAX_PATHS 16

struct file_info {
	uint64_t id, dev, ino;
	int64_t size_first_open, size_last_close;
	char *paths[FILE_MAX_PATHS + 1]; /* NULL-terminated */
	uint32_t npaths, paths_dropped;
	/* Its mount when first seen, index + 1 in the table's used
	 * mounts; 0: none known. */
	uint32_t mount;
	/* Its birth time (ns), where its file system keeps a lasting one
	 * (birth_kept); else 0.  Another birth time at the same device and
	 * inode number is another file. */
	uint64_t birth;
	bool gone; /* its last name was removed: (dev, ino) may be reused */
	/* A row of io.csv names it: only those are in files.csv (a file
	 * met only where it is not traced, an excluded path, has an id
	 * but no row). */
	bool in_trace;
	/* A regular file or a FIFO (st_size 0): the kinds with sizes in
	 * files.csv (a directory's st_size is its file system's business). */
	bool sized;
};

/* A file's mount as statx names it: its device, and its mount id where
 * the kernel gives one (0: not known). */
struct mount_key {
	uint64_t dev, mnt_id;
};

struct mount_entry {
	uint64_t id; /* mountinfo's first field; 0 in the used mounts */
	unsigned major, minor;
	char *point, *fstype;
};

/* A process's mount namespace and root, as /proc/PID/ns/mnt and
 * /proc/PID/root show them (both followed: the namespace's and the
 * root directory's device and inode numbers). */
struct root_key {
	uint64_t ns_dev, ns_ino, root_dev, root_ino;
};

/*
 * What a process sees of the files: the tracer's own view (index 0), or
 * another mount namespace or root that a process of the task entered
 * (unshare -m, bwrap, Apptainer, chroot), with the mounts read from a
 * process in it.
 */
struct mount_view {
	struct root_key key;
	/* Its root as the tracer's readlink of /proc/PID/root names it: a
	 * chroot's directory, whose name the kernel puts before the paths
	 * it shows the tracer; NULL where that is "/" (another mount
	 * namespace). */
	char *root;
	/* Which view the slot holds: a slot no process is in any more may
	 * be given to another (0: the tracer's own). */
	uint64_t serial;
	struct mount_entry *mounts; /* its mountinfo, as last read */
	size_t nmounts;
	bool mounts_read; /* and nothing mounted or unmounted since */
	/* The device and mount id of the last file whose mount was found,
	 * and that mount (index + 1 in the table's used mounts). */
	uint64_t last_dev, last_mnt_id;
	uint32_t last_mount;
	/* Processes in it now: a view none is in may come back as another
	 * with the same key (a namespace's inode number is reused once the
	 * namespace is gone), and is read again. */
	uint64_t users;
	/* Mounts of files seen in it that its mountinfo did not show when
	 * read again for them (not read a third time). */
	struct mount_key *unlisted;
	size_t nunlisted;
};

struct file_table {
	struct file_info *files; /* index = id - 1 */
	size_t nfiles, alloc;
	uint32_t *slot; /* open addressing on (dev, ino): index + 1 */
	size_t mask;
	/* The mounts files were on when first seen, each once: a view read
	 * again later (it is another, or mounted more since) changes no
	 * file's. */
	struct mount_entry *used;
	size_t nused;
	struct mount_view *views; /* [0]: the tracer's own */
	size_t nviews;
	uint64_t views_refused; /* lookups past FILE_MAX_VIEWS: the own */
	uint64_t next_serial;
	bool own_known; /* views[0].key was read: others can be told */
	int procfd;
};

/* Views in use at once, at most (a mount table each). */
#define FILE_MAX_VIEWS 1024

void file_table_init(struct file_table *ft, int procfd);
void file_table_release(struct file_table *ft);
/* The view thread tid sees the files in, which its process is in from
 * now: 0 the tracer's own; -1 where /proc cannot say (the thread going).
 * fall_back: fstatat where statx is refused (never once the task may
 * serve a file system: util.h's stat_cached). */
int file_view_join(struct file_table *ft, pid_t tid, bool fall_back);
/* A process that was in view has ended, or moved to another. */
void file_view_leave(struct file_table *ft, uint32_t view);
/* Which view the slot view holds (mount_view's serial). */
uint64_t file_view_serial(const struct file_table *ft, uint32_t view);
/* Something was mounted or unmounted: every view's mounts are read
 * again at its next file. */
void file_mounts_changed(struct file_table *ft);
/* The root a kernel's name for a file seen in view starts with, when
 * that is not the process's "/" (a chroot's directory); NULL else. */
const char *file_view_prefix(const struct file_table *ft, uint32_t view);
/* The type of the filesystem file id is on, as its mount's line in
 * mountinfo names it ("ext4"); NULL where its mount is not known (a
 * btrfs subvolume's device is on no line). */
const char *file_fstype(const struct file_table *ft, uint64_t id);
struct stat;
struct stat_extra;
/* The id of the file st is of (its device and inode number, its birth
 * time in ex if known), created with its size as its first-open size;
 * tid, a thread that sees it in view, is where its mount (ex's mount id,
 * else the last mount of its device) is looked up. */
uint64_t file_seen(struct file_table *ft, const struct stat *st,
		   const struct stat_extra *ex, const char *path, uint32_t view,
		   pid_t tid);
void file_closed(struct file_table *ft, uint64_t id, int64_t size);
/* The file that lost its last name while open (file_gone) and is dev, ino
 * still: an open file with no link is never a new file with its number. */
uint64_t file_unlinked_id(const struct file_table *ft, uint64_t dev,
			  uint64_t ino, uint64_t birth);
/* File id is known by path too (linkat gave it that name). */
void file_add_path(struct file_table *ft, uint64_t id, const char *path);
/* Its last link is gone: a later file with the same device and inode
 * number is another file and gets a new id. */
void file_gone(struct file_table *ft, uint64_t dev, uint64_t ino);
/* File id had no name left when its last descriptor closed: freed. */
void file_freed(struct file_table *ft, uint64_t id);
/* A row of io.csv names file id. */
void file_in_trace(struct file_table *ft, uint64_t id);
/* Writes the files.csv rows: the files a row of io.csv names. */
void file_table_write(struct file_table *ft, struct trace_sink *sink);

#endif
