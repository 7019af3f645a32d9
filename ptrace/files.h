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
	bool gone; /* its last name was removed: (dev, ino) may be reused */
};

struct mount_entry {
	unsigned major, minor;
	char *point, *fstype;
};

struct file_table {
	struct file_info *files; /* index = id - 1 */
	size_t nfiles, alloc;
	uint32_t *slot; /* open addressing on (dev, ino): index + 1 */
	size_t mask;
	struct mount_entry *mounts;
	size_t nmounts;
	bool mounts_read;
	int procfd;
	pid_t pid; /* the task's main process: its mountinfo */
};

void file_table_init(struct file_table *ft, int procfd, pid_t pid);
void file_table_release(struct file_table *ft);
/* The id of (dev, ino), created with size as its first-open size. */
uint64_t file_seen(struct file_table *ft, uint64_t dev, uint64_t ino,
		   int64_t size, const char *path);
void file_closed(struct file_table *ft, uint64_t id, int64_t size);
/* The file that lost its last name while open (file_gone) and is dev, ino
 * still: an open file with no link is never a new file with its number. */
uint64_t file_unlinked_id(const struct file_table *ft, uint64_t dev,
			  uint64_t ino);
/* File id is known by path too (linkat gave it that name). */
void file_add_path(struct file_table *ft, uint64_t id, const char *path);
/* Its last link is gone: a later file with the same device and inode
 * number is another file and gets a new id. */
void file_gone(struct file_table *ft, uint64_t dev, uint64_t ino);
/* Writes the files.csv rows. */
void file_table_write(struct file_table *ft, struct trace_sink *sink);

#endif
