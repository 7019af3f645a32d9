// SPDX-License-Identifier: MIT
#include "files.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "argv.h"
#include "procfs.h"
#include "strbuf.h"
#include "util.h"

static uint32_t look_up_mount(struct file_table *ft, uint32_t view,
			      struct mount_key key, pid_t tid);

static void free_mounts(struct mount_entry *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].point);
		free(m[i].fstype);
	}
	free(m);
}

/* Both followed: a statx of the namespace file and the root directory,
 * tid's (a tracer's thread, for the tracer's own). */
static int read_root_key(int procfd, pid_t tid, bool fall_back,
			 struct root_key *key)
{
	char link[48];
	struct stat ns, root;

	snprintf(link, sizeof(link), "%d/ns/mnt", (int)tid);
	if (stat_cached(procfd, link, 0, true, &ns, NULL) < 0)
		return -1;
	snprintf(link, sizeof(link), "%d/root", (int)tid);
	if (stat_cached(procfd, link, 0, fall_back, &root, NULL) < 0)
		return -1;
	*key = (struct root_key){ (uint64_t)ns.st_dev, (uint64_t)ns.st_ino,
				  (uint64_t)root.st_dev,
				  (uint64_t)root.st_ino };
	return 0;
}

static bool same_key(const struct root_key *a, const struct root_key *b)
{
	return a->ns_dev == b->ns_dev && a->ns_ino == b->ns_ino &&
	       a->root_dev == b->root_dev && a->root_ino == b->root_ino;
}

void file_table_init(struct file_table *ft, int procfd)
{
	memset(ft, 0, sizeof(*ft));
	ft->procfd = procfd;
	ft->mask = 1023;
	ft->slot = xcalloc(ft->mask + 1, sizeof(*ft->slot));
	ft->views = xcalloc(1, sizeof(*ft->views));
	ft->nviews = 1;
	/* Unread (no namespaces in /proc), every process is taken as
	 * seeing what the tracer sees. */
	ft->own_known =
		read_root_key(procfd, getpid(), true, &ft->views[0].key) == 0;
}

void file_table_release(struct file_table *ft)
{
	for (size_t i = 0; i < ft->nfiles; i++)
		for (uint32_t j = 0; j < ft->files[i].npaths; j++)
			free(ft->files[i].paths[j]);
	free_mounts(ft->used, ft->nused);
	for (size_t i = 0; i < ft->nviews; i++) {
		free_mounts(ft->views[i].mounts, ft->views[i].nmounts);
		free(ft->views[i].root);
		free(ft->views[i].unlisted);
	}
	free(ft->views);
	free(ft->files);
	free(ft->slot);
	memset(ft, 0, sizeof(*ft));
}

/* What is known of a view, to be read again from a process in it: its
 * root as the tracer names it, now; its mounts, at its next file. */
static void renew_view(struct file_table *ft, struct mount_view *v, pid_t tid)
{
	struct strbuf root;

	free(v->root);
	v->root = NULL;
	sb_init(&root, PATH_MAX);
	if (read_proc_link(ft->procfd, tid, "root", &root) == 0 &&
	    sb_str(&root)[0] == '/' && strcmp(sb_str(&root), "/") != 0)
		v->root = sb_detach(&root);
	sb_release(&root);
	v->mounts_read = false;
	v->nunlisted = 0;
}

/* A slot for a new view: one no process is in any more, or a new one. */
static uint32_t free_view_slot(struct file_table *ft)
{
	struct mount_view *v;
	size_t i = 1;

	while (i < ft->nviews && ft->views[i].users > 0)
		i++;
	if (i == ft->nviews) {
		if (ft->nviews >= FILE_MAX_VIEWS)
			return 0;
		ft->views = xrealloc(ft->views,
				     (ft->nviews + 1) * sizeof(*ft->views));
		memset(&ft->views[ft->nviews++], 0, sizeof(*ft->views));
	}
	v = &ft->views[i];
	free_mounts(v->mounts, v->nmounts);
	free(v->root);
	free(v->unlisted);
	memset(v, 0, sizeof(*v));
	return (uint32_t)i;
}

static uint32_t find_view(struct file_table *ft, const struct root_key *key)
{
	uint32_t view;

	for (size_t i = 1; i < ft->nviews; i++)
		if (same_key(key, &ft->views[i].key))
			return (uint32_t)i;
	view = free_view_slot(ft);
	if (view) {
		ft->views[view].key = *key;
		ft->views[view].serial = ++ft->next_serial;
	}
	return view;
}

int file_view_join(struct file_table *ft, pid_t tid, bool fall_back)
{
	struct root_key key;
	uint32_t view;

	if (!ft->own_known)
		return 0;
	if (read_root_key(ft->procfd, tid, fall_back, &key) < 0)
		return -1;
	if (same_key(&key, &ft->views[0].key))
		return 0;
	view = find_view(ft, &key);
	if (!view) {
		ft->views_refused++;
		return 0;
	}
	if (ft->views[view].users++ == 0)
		renew_view(ft, &ft->views[view], tid);
	return (int)view;
}

uint64_t file_view_serial(const struct file_table *ft, uint32_t view)
{
	return view < ft->nviews ? ft->views[view].serial : 0;
}

void file_view_leave(struct file_table *ft, uint32_t view)
{
	if (view && view < ft->nviews && ft->views[view].users > 0)
		ft->views[view].users--;
}

const char *file_view_prefix(const struct file_table *ft, uint32_t view)
{
	return view < ft->nviews ? ft->views[view].root : NULL;
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

/* Born since it was seen: its number was freed and given anew (by an
 * unlink the tracer did not see, or with a file system that went with
 * its mount namespace, whose device number the next one got). */
static bool born_again(const struct file_info *f, uint64_t birth)
{
	return birth && f->birth && birth != f->birth;
}

/*
 * File systems whose birth times last as long as their inodes.  Not
 * overlayfs (a copy-up gives a file its new upper inode's, under the same
 * inode number) nor FUSE (the server's word).
 */
static bool birth_kept(const struct file_table *ft, uint32_t mount)
{
	static const char *const kept[] = { "ext4",  "xfs",  "btrfs",
					    "tmpfs", "f2fs", "bcachefs" };

	if (!mount)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(kept); i++)
		if (strcmp(ft->used[mount - 1].fstype, kept[i]) == 0)
			return true;
	return false;
}

static struct file_info *new_file(struct file_table *ft, size_t slot,
				  const struct stat *st,
				  const struct stat_extra *ex, uint32_t view,
				  pid_t tid)
{
	/* Read while the task is alive: its mounts. */
	struct mount_key key = { (uint64_t)st->st_dev, ex->mnt_id };
	uint32_t mount = look_up_mount(ft, view, key, tid);
	struct file_info *f;

	if (ft->nfiles == ft->alloc) {
		ft->alloc = ft->alloc * 2 + 64;
		ft->files = xrealloc(ft->files, ft->alloc * sizeof(*ft->files));
	}
	f = &ft->files[ft->nfiles++];
	memset(f, 0, sizeof(*f));
	f->id = ft->nfiles;
	f->dev = (uint64_t)st->st_dev;
	f->ino = (uint64_t)st->st_ino;
	f->sized = S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode);
	f->size_first_open = f->sized ? st->st_size : -1;
	f->size_last_close = -1;
	f->mount = mount;
	f->birth = birth_kept(ft, mount) ? ex->birth_ns : 0;
	ft->slot[slot] = (uint32_t)ft->nfiles;
	return f;
}

uint64_t file_seen(struct file_table *ft, const struct stat *st,
		   const struct stat_extra *ex, const char *path, uint32_t view,
		   pid_t tid)
{
	uint64_t dev = (uint64_t)st->st_dev, ino = (uint64_t)st->st_ino;
	struct file_info *f;
	size_t i;

	if ((ft->nfiles + 1) * 4 > (ft->mask + 1) * 3)
		grow_slots(ft);
	if (view >= ft->nviews)
		view = 0;
	i = find_slot(ft, dev, ino);
	if (ft->slot[i] &&
	    born_again(&ft->files[ft->slot[i] - 1], ex->birth_ns)) {
		ft->files[ft->slot[i] - 1].gone = true;
		i = find_slot(ft, dev, ino);
	}
	if (ft->slot[i])
		f = &ft->files[ft->slot[i] - 1];
	else
		f = new_file(ft, i, st, ex, view, tid);
	add_path(f, path);
	return f->id;
}

uint64_t file_unlinked_id(const struct file_table *ft, uint64_t dev,
			  uint64_t ino, uint64_t birth)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^
		     (ino * 0xc2b2ae3d27d4eb4full);
	uint64_t newest = 0;

	/* The probe chain runs through gone files too: the newest is it
	 * (a number is free for reuse only once its inode is). */
	for (size_t i = (size_t)(h >> 20) & ft->mask; ft->slot[i];
	     i = (i + 1) & ft->mask) {
		const struct file_info *f = &ft->files[ft->slot[i] - 1];

		if (f->dev == dev && f->ino == ino && f->gone &&
		    !born_again(f, birth) && f->id > newest)
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

void file_freed(struct file_table *ft, uint64_t id)
{
	if (id >= 1 && id <= ft->nfiles)
		ft->files[id - 1].gone = true;
}

void file_add_path(struct file_table *ft, uint64_t id, const char *path)
{
	if (id >= 1 && id <= ft->nfiles)
		add_path(&ft->files[id - 1], path);
}

void file_in_trace(struct file_table *ft, uint64_t id)
{
	if (id >= 1 && id <= ft->nfiles)
		ft->files[id - 1].in_trace = true;
}

void file_closed(struct file_table *ft, uint64_t id, int64_t size)
{
	if (id >= 1 && id <= ft->nfiles && ft->files[id - 1].sized)
		ft->files[id - 1].size_last_close = size;
}

const char *file_fstype(const struct file_table *ft, uint64_t id)
{
	uint32_t mount = id >= 1 && id <= ft->nfiles ? ft->files[id - 1].mount :
						       0;

	return mount ? ft->used[mount - 1].fstype : NULL;
}

/* A copy of (major, minor, point, fstype) at the end of *mounts. */
static void push_mount(struct mount_entry **mounts, size_t *n, uint64_t id,
		       unsigned major, unsigned minor, const char *point,
		       const char *fstype)
{
	*mounts = xrealloc(*mounts, (*n + 1) * sizeof(**mounts));
	(*mounts)[(*n)++] = (struct mount_entry){ id, major, minor,
						  xstrdup(point),
						  xstrdup(fstype) };
}

static void add_mount(struct mount_view *v, const char *line, size_t len)
{
	struct mountinfo_entry m;

	if (parse_mountinfo_line(line, len, &m) == 0)
		push_mount(&v->mounts, &v->nmounts, m.id, m.major, m.minor,
			   m.point, m.fstype);
}

/* The view's mounts from now, from tid's mountinfo (the tracer's own for
 * view 0: mount points as its processes name them, from their root). */
static void read_mounts(struct file_table *ft, uint32_t view, pid_t tid)
{
	struct mount_view *v = &ft->views[view];
	char path[48];
	char *buf = xmalloc(1u << 20);

	v->mounts_read = true;
	v->last_dev = 0;
	free_mounts(v->mounts, v->nmounts);
	v->mounts = NULL;
	v->nmounts = 0;
	snprintf(path, sizeof(path), "%d/mountinfo",
		 (int)(view ? tid : getpid()));
	if (read_file_at(ft->procfd, path, buf, 1u << 20) < 0) {
		free(buf);
		return;
	}
	for (const char *line = buf; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		add_mount(v, line, len);
		if (!nl)
			break;
		line = nl + 1;
	}
	free(buf);
}

/* The view's mount with mnt_id, where statx gave one (a device bound at
 * several places, /etc/hostname in a container, is on several mounts);
 * else its last mount of dev, the one on top. */
static const struct mount_entry *mount_of(const struct mount_view *v,
					  uint64_t dev, uint64_t mnt_id)
{
	const struct mount_entry *found = NULL;

	for (size_t i = 0; i < v->nmounts; i++) {
		const struct mount_entry *m = &v->mounts[i];

		if (m->major != major(dev) || m->minor != minor(dev))
			continue;
		if (mnt_id && m->id == mnt_id)
			return m;
		found = m;
	}
	return mnt_id ? NULL : found;
}

static bool unlisted(const struct mount_view *v, struct mount_key key)
{
	for (size_t i = 0; i < v->nunlisted; i++)
		if (v->unlisted[i].dev == key.dev &&
		    v->unlisted[i].mnt_id == key.mnt_id)
			return true;
	return false;
}

static bool same_mount(const struct mount_entry *a, const struct mount_entry *b)
{
	return a->major == b->major && a->minor == b->minor &&
	       strcmp(a->point, b->point) == 0 &&
	       strcmp(a->fstype, b->fstype) == 0;
}

/* m among the used mounts (index + 1), added if new. */
static uint32_t use_mount(struct file_table *ft, const struct mount_entry *m)
{
	for (size_t i = 0; i < ft->nused; i++)
		if (same_mount(&ft->used[i], m))
			return (uint32_t)i + 1;
	push_mount(&ft->used, &ft->nused, 0, m->major, m->minor, m->point,
		   m->fstype);
	return (uint32_t)ft->nused;
}

/* The mount of key in view (by its mount id, or by its device alone if
 * key has none), reading the view's mounts at its first file and again
 * for a mount they do not show (the task mounted it since), once per
 * mount: one no mountinfo lists (a detached mount, an internal one) is
 * noted as such. */
static const struct mount_entry *find_mount(struct file_table *ft,
					    uint32_t view, struct mount_key key,
					    pid_t tid)
{
	struct mount_view *v = &ft->views[view];
	const struct mount_entry *m;

	m = v->mounts_read ? mount_of(v, key.dev, key.mnt_id) : NULL;
	if (m || (v->mounts_read && unlisted(v, key)))
		return m;
	read_mounts(ft, view, tid);
	m = mount_of(v, key.dev, key.mnt_id);
	if (!m) {
		v->unlisted = xrealloc(
			v->unlisted, (v->nunlisted + 1) * sizeof(*v->unlisted));
		v->unlisted[v->nunlisted++] = key;
	}
	return m;
}

/*
 * The mount of a file on key.dev that tid sees in view (index + 1 in the
 * used mounts; 0: none): the one with key.mnt_id in view, else in the
 * tracer's (a chroot's mountinfo lists only the mounts inside it); else,
 * where no mountinfo lists that id (a descriptor opened in another mount
 * namespace), the last mount of its device, in view, else the tracer's.
 */
static uint32_t look_up_mount(struct file_table *ft, uint32_t view,
			      struct mount_key key, pid_t tid)
{
	struct mount_view *v = &ft->views[view];
	struct mount_key by_dev = { key.dev, 0 };
	const struct mount_entry *m;

	if (v->mounts_read && v->last_dev == key.dev &&
	    v->last_mnt_id == key.mnt_id)
		return v->last_mount;
	m = find_mount(ft, view, key, tid);
	if (!m && view)
		m = find_mount(ft, 0, key, 0);
	if (!m && key.mnt_id)
		m = find_mount(ft, view, by_dev, tid);
	if (!m && key.mnt_id && view)
		m = find_mount(ft, 0, by_dev, 0);
	if (!m)
		return 0;
	v->last_dev = key.dev;
	v->last_mnt_id = key.mnt_id;
	v->last_mount = use_mount(ft, m);
	return v->last_mount;
}

void file_mounts_changed(struct file_table *ft)
{
	for (size_t i = 0; i < ft->nviews; i++) {
		ft->views[i].mounts_read = false;
		ft->views[i].nunlisted = 0;
	}
}

void file_table_write(struct file_table *ft, struct trace_sink *sink)
{
	struct strbuf paths;

	sb_init(&paths, 1u << 20);
	for (size_t i = 0; i < ft->nfiles; i++) {
		const struct file_info *f = &ft->files[i];
		const struct mount_entry *m =
			f->mount ? &ft->used[f->mount - 1] : NULL;
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
			.birth_ns = f->birth,
		};

		if (!f->in_trace)
			continue;
		sb_reset(&paths);
		argv_quote_vector(&paths, f->paths);
		rec.paths = sb_str(&paths);
		trace_file(sink, &rec);
	}
	sb_release(&paths);
}
