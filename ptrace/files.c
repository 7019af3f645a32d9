// SPDX-License-Identifier: MIT
#include "files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "argv.h"
#include "procfs.h"
#include "util.h"

static void read_mounts(struct file_table *ft);

void file_table_init(struct file_table *ft, int procfd, pid_t pid)
{
	memset(ft, 0, sizeof(*ft));
	ft->procfd = procfd;
	ft->pid = pid;
	ft->mask = 1023;
	ft->slot = xcalloc(ft->mask + 1, sizeof(*ft->slot));
}

void file_table_release(struct file_table *ft)
{
	for (size_t i = 0; i < ft->nfiles; i++)
		for (uint32_t j = 0; j < ft->files[i].npaths; j++)
			free(ft->files[i].paths[j]);
	for (size_t i = 0; i < ft->nmounts; i++) {
		free(ft->mounts[i].point);
		free(ft->mounts[i].fstype);
	}
	free(ft->mounts);
	free(ft->files);
	free(ft->slot);
	memset(ft, 0, sizeof(*ft));
}

static size_t find_slot(const struct file_table *ft, uint64_t dev, uint64_t ino)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^
		     (ino * 0xc2b2ae3d27d4eb4full);
	size_t i = (size_t)(h >> 20) & ft->mask;

	while (ft->slot[i]) {
		const struct file_info *f = &ft->files[ft->slot[i] - 1];

		if (f->dev == dev && f->ino == ino && !f->gone)
			break;
		i = (i + 1) & ft->mask;
	}
	return i;
}

static void grow_slots(struct file_table *ft)
{
	free(ft->slot);
	ft->mask = ft->mask * 2 + 1;
	ft->slot = xcalloc(ft->mask + 1, sizeof(*ft->slot));
	for (size_t i = 0; i < ft->nfiles; i++)
		ft->slot[find_slot(ft, ft->files[i].dev, ft->files[i].ino)] =
			(uint32_t)(i + 1);
}

static void add_path(struct file_info *f, const char *path)
{
	if (!path || !*path)
		return;
	for (uint32_t i = 0; i < f->npaths; i++)
		if (strcmp(f->paths[i], path) == 0)
			return;
	if (f->npaths == FILE_MAX_PATHS) {
		f->paths_dropped++;
		return;
	}
	f->paths[f->npaths++] = xstrdup(path);
}

uint64_t file_seen(struct file_table *ft, uint64_t dev, uint64_t ino,
		   int64_t size, const char *path)
{
	size_t i;
	struct file_info *f;

	if ((ft->nfiles + 1) * 4 > (ft->mask + 1) * 3)
		grow_slots(ft);
	i = find_slot(ft, dev, ino);
	if (!ft->slot[i]) {
		/* Read while the task is alive: its mount namespace. */
		if (!ft->mounts_read)
			read_mounts(ft);
		if (ft->nfiles == ft->alloc) {
			ft->alloc = ft->alloc * 2 + 64;
			ft->files = xrealloc(ft->files,
					     ft->alloc * sizeof(*ft->files));
		}
		f = &ft->files[ft->nfiles++];
		memset(f, 0, sizeof(*f));
		f->id = ft->nfiles;
		f->dev = dev;
		f->ino = ino;
		f->size_first_open = size;
		f->size_last_close = -1;
		ft->slot[i] = (uint32_t)ft->nfiles;
	}
	f = &ft->files[ft->slot[i] - 1];
	add_path(f, path);
	return f->id;
}

uint64_t file_unlinked_id(const struct file_table *ft, uint64_t dev,
			  uint64_t ino)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^
		     (ino * 0xc2b2ae3d27d4eb4full);
	uint64_t newest = 0;

	/* The probe chain runs through gone files too: the newest is it
	 * (a number is free for reuse only once its inode is). */
	for (size_t i = (size_t)(h >> 20) & ft->mask; ft->slot[i];
	     i = (i + 1) & ft->mask) {
		const struct file_info *f = &ft->files[ft->slot[i] - 1];

		if (f->dev == dev && f->ino == ino && f->gone && f->id > newest)
			newest = f->id;
	}
	return newest;
}

void file_gone(struct file_table *ft, uint64_t dev, uint64_t ino)
{
	size_t i = find_slot(ft, dev, ino);

	/* The slot stays taken (probe chains go on through it) but no
	 * longer matches. */
	if (ft->slot[i])
		ft->files[ft->slot[i] - 1].gone = true;
}

void file_add_path(struct file_table *ft, uint64_t id, const char *path)
{
	if (id >= 1 && id <= ft->nfiles)
		add_path(&ft->files[id - 1], path);
}

void file_closed(struct file_table *ft, uint64_t id, int64_t size)
{
	if (id >= 1 && id <= ft->nfiles)
		ft->files[id - 1].size_last_close = size;
}

static void add_mount(struct file_table *ft, const char *line, size_t len)
{
	struct mountinfo_entry m;

	if (parse_mountinfo_line(line, len, &m) < 0)
		return;
	ft->mounts =
		xrealloc(ft->mounts, (ft->nmounts + 1) * sizeof(*ft->mounts));
	ft->mounts[ft->nmounts++] = (struct mount_entry){ m.major, m.minor,
							  xstrdup(m.point),
							  xstrdup(m.fstype) };
}

static void read_mounts(struct file_table *ft)
{
	int procfd = ft->procfd;
	pid_t pid = ft->pid;
	char path[48];
	char *buf = xmalloc(1u << 20);

	ft->mounts_read = true;
	snprintf(path, sizeof(path), "%d/mountinfo", (int)pid);
	if (read_file_at(procfd, path, buf, 1u << 20) < 0 &&
	    read_file_at(procfd, "self/mountinfo", buf, 1u << 20) < 0) {
		free(buf);
		return;
	}
	for (const char *line = buf; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		add_mount(ft, line, len);
		if (!nl)
			break;
		line = nl + 1;
	}
	free(buf);
}

/* By device number; the last such mount is the one on top. */
static const struct mount_entry *mount_of(const struct file_table *ft,
					  uint64_t dev)
{
	const struct mount_entry *found = NULL;

	for (size_t i = 0; i < ft->nmounts; i++)
		if (ft->mounts[i].major == major(dev) &&
		    ft->mounts[i].minor == minor(dev))
			found = &ft->mounts[i];
	return found;
}

void file_table_write(struct file_table *ft, struct trace_sink *sink)
{
	struct strbuf paths;

	sb_init(&paths, 1u << 20);
	for (size_t i = 0; i < ft->nfiles; i++) {
		const struct file_info *f = &ft->files[i];
		const struct mount_entry *m = mount_of(ft, f->dev);
		struct file_record rec = {
			.inode_id = f->id,
			.dev_major = major(f->dev),
			.dev_minor = minor(f->dev),
			.ino = f->ino,
			.mount_point = m ? m->point : NULL,
			.fstype = m ? m->fstype : NULL,
			.size_first_open = f->size_first_open,
			.size_last_close = f->size_last_close,
			.npaths = f->npaths + f->paths_dropped,
		};

		sb_reset(&paths);
		argv_quote_vector(&paths, f->paths);
		rec.paths = sb_str(&paths);
		trace_file(sink, &rec);
	}
	sb_release(&paths);
}
