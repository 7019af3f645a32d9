// SPDX-License-Identifier: MIT
#include "iotrace.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
/* musl before 1.2.5 has no struct statx (common/util.c). */
#ifndef STATX_TYPE
#include <linux/stat.h>
#endif
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "fdfilter.h"
#include "fdtable.h"
#include "files.h"
#include "filter.h"
#include "procfs.h"
#include "tracee_mem.h"
#include "util.h"

#ifndef AT_EXECFN
#define AT_EXECFN 31 /* include/uapi/linux/auxvec.h */
#endif
/* /proc/PID/auxv: x86_64's is some 22 pairs of 8-byte words */
#define AUXV_BYTES 1024

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef KCMP_FILE
#define KCMP_FILE 0 /* linux/kcmp.h */
#define KCMP_FILES 2
#define KCMP_FS 3
#endif
#define PF_EXITING 0x4 /* linux/sched.h */
#ifndef RESOLVE_IN_ROOT
#define RESOLVE_IN_ROOT 0x10 /* linux/openat2.h */
#endif
/* pwritev2 flags (linux/fs.h; musl's headers lack them). */
#ifndef RWF_APPEND
#define RWF_APPEND 0x10
#endif
#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x20
#endif

/*
 * The longest path written to the trace: a directory's path (what the
 * kernel reports is at most 4095 bytes, one a chdir composed may be
 * longer) with a name of up to PATH_MAX after it.  A longer one is cut,
 * and counted in the summary's problems.
 */
#define TRACE_PATH_MAX (16 * PATH_MAX)

void iotrace_init(struct iotrace *io, struct trace_sink *sink, int procfd,
		  const char *const *include, const char *const *exclude)
{
	memset(io, 0, sizeof(*io));
	io->sink = sink;
	io->procfd = procfd;
	io->include = include;
	io->exclude = exclude;
	file_table_init(&io->files, procfd);
}

void iotrace_release(struct iotrace *io)
{
	if (io->cwds_unknown)
		trace_problem(
			io->sink,
			"%" PRIu64 " processes had a cwd longer than the "
			"kernel reports (4095 bytes) and not known from a "
			"chdir: their relative paths were taken from /",
			io->cwds_unknown);
	if (io->paths_cut)
		trace_problem(
			io->sink,
			"%" PRIu64 " paths (of rows, and the cwds they were "
			"built on) were longer than %d bytes and cut there",
			io->paths_cut, TRACE_PATH_MAX);
	if (io->files.views_refused)
		trace_problem(
			io->sink,
			"%" PRIu64 " lookups were made in one of more than %d "
			"mount namespaces or roots in use at once: their paths "
			"were looked up as the tracer sees them",
			io->files.views_refused, FILE_MAX_VIEWS);
	if (io->paths_uncached)
		trace_problem(
			io->sink,
			"%" PRIu64 " paths were not looked up: the task opened "
			"/dev/fuse and may serve them, and the kernel's caches "
			"did not hold them; their rows count for no file",
			io->paths_uncached);
	if (io->entry_paths_unread)
		trace_problem(
			io->sink,
			"%" PRIu64 " paths were not read at a call's entry: "
			"the task opened /dev/fuse and their pages were not in "
			"memory (reading them could have asked a server "
			"stopped for the tracer); a file unlinked or renamed "
			"over may keep its id, an exec's row may name the "
			"program as the kernel does",
			io->entry_paths_unread);
	file_table_write(&io->files, io->sink);
	file_table_release(&io->files);
	opqueue_release(&io->queues);
}

/* ---- paths -------------------------------------------------------- */

/* Lexical normalisation of an absolute path: //, /./ and /../ go. */
static void normalise_path(char *path)
{
	char *out = path, *in = path;

	while (*in) {
		while (*in == '/')
			in++;
		if (!*in)
			break;
		if (in[0] == '.' && (in[1] == '/' || !in[1])) {
			in++;
			continue;
		}
		if (in[0] == '.' && in[1] == '.' && (in[2] == '/' || !in[2])) {
			while (out > path && *--out != '/')
				;
			in += 2;
			continue;
		}
		*out++ = '/';
		while (*in && *in != '/')
			*out++ = *in++;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}

/* Whose /proc entry shows t's descriptors: its process's, or its own
 * once a thread of the process has had a table of its own (a thread with
 * one has split its process). */
static pid_t fd_view(const struct tracee *t)
{
	return t->proc->fds_split ? t->tid : t->proc->view_tid;
}

/*
 * The view of the files p has (files.h): 0 the tracer's own, else the
 * mount namespace or root a process of the task moved it to.  Looked at
 * once, and again after a call that may have moved it; a new view drops
 * the cwd known in the old one (its name is the old view's).
 */
static uint32_t process_view(struct iotrace *io, struct process *p, pid_t tid)
{
	uint32_t view;
	int joined;

	if (p->cwd_per_call) {
		/* Its threads may not share a root (one's unshare(CLONE_FS),
		 * or CLONE_NEWNS): the calling thread's, for this call. */
		joined = file_view_join(&io->files, tid, !io->serves_fuse);
		if (joined <= 0)
			return 0;
		file_view_leave(&io->files, (uint32_t)joined);
		return (uint32_t)joined;
	}
	if (p->root_gen == io->root_changes + 1 && !io->views_moving)
		return p->root_view;
	/* Joined first: a process that stays must not empty its view. */
	joined = file_view_join(&io->files, tid, !io->serves_fuse);
	if (joined < 0) /* the thread going: as known, not remembered */
		return p->root_gen ? p->root_view : 0;
	view = (uint32_t)joined;
	if (p->root_gen)
		file_view_leave(&io->files, p->root_view);
	if (view != p->root_view) {
		free(p->cwd_cache);
		p->cwd_cache = NULL;
	}
	p->root_view = view;
	p->root_gen = io->root_changes + 1;
	return view;
}

/* A call that may move a view: from its entry to its end, every view is
 * read again at each use (process_view). */
static void view_move_starts(struct iotrace *io, struct tracee *t)
{
	if (t->call.moves_view)
		return;
	t->call.moves_view = true;
	io->views_moving++;
}

static void view_move_ends(struct iotrace *io, struct tracee *t)
{
	if (!t->call.moves_view)
		return;
	t->call.moves_view = false;
	io->views_moving--;
	io->root_changes++;
	/* Out of the view it left now, not at its next lookup: a view none
	 * is in is read again when entered (its key may be reused). */
	process_view(io, t->proc, t->tid);
}

/*
 * The kernel names a file to the tracer from the tracer's root: under a
 * chroot the name starts with the chroot's directory, which the process
 * itself does not see.  A name outside it (a descriptor opened before
 * the chroot) stays as the tracer has it.
 */
static void name_in_view(const struct iotrace *io, uint32_t view,
			 struct strbuf *sb)
{
	const char *prefix = file_view_prefix(&io->files, view);
	const char *name = sb_str(sb);
	size_t n;
	char *inside;

	if (!prefix)
		return;
	n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0 ||
	    (name[n] != '/' && name[n] != '\0'))
		return;
	inside = xstrdup(name[n] ? name + n : "/");
	sb_reset(sb);
	sb_adds(sb, inside);
	free(inside);
}

/* readlink of /proc/PID/LINK: the kernel's name, as a process in view
 * names it. */
static int read_link_in_view(struct iotrace *io, uint32_t view, pid_t pid,
			     const char *link, struct strbuf *sb)
{
	if (read_proc_link(io->procfd, pid, link, sb) < 0)
		return -1;
	name_in_view(io, view, sb);
	return 0;
}

/*
 * The kernel's name for t's cwd; where it has none to give (a path longer
 * than the 4095 bytes it reports), where the last chdir went, else what
 * was known before, else "/", counted in the summary's problems.
 */
static const char *cwd_of(struct iotrace *io, const struct tracee *t)
{
	struct process *p = t->proc;
	uint32_t view = process_view(io, p, t->tid);
	struct strbuf sb;

	if (p->cwd_cache && p->cwd_gen == io->dir_renames && !p->cwd_per_call)
		return p->cwd_cache;
	p->cwd_gen = io->dir_renames;
	sb_init(&sb, PATH_MAX);
	if (read_link_in_view(io, view, p->cwd_per_call ? t->tid : p->view_tid,
			      "cwd", &sb) == 0) {
		free(p->cwd_cache);
		p->cwd_cache = sb_detach(&sb);
	} else if (p->cwd_hint) {
		free(p->cwd_cache);
		p->cwd_cache = xstrdup(p->cwd_hint);
	} else if (!p->cwd_cache) {
		io->cwds_unknown++;
		p->cwd_cache = xstrdup("/");
	}
	sb_release(&sb);
	return p->cwd_cache;
}

static struct fdtable *fds_of(struct process *p)
{
	if (!p->fds)
		p->fds = fdtable_new();
	return p->fds;
}

/* The table t's calls use: its own, or its process's. */
static struct fdtable *caller_fds(struct tracee *t)
{
	return t->fds ? t->fds : fds_of(t->proc);
}

/* The process's table made its own: one it shared with another process
 * (clone(CLONE_FILES)) is copied, as the kernel does at an exec or an
 * unshare(CLONE_FILES). */
static struct fdtable *unshare_fds(struct process *p)
{
	struct fdtable *fds = fds_of(p);

	if (fds->refs > 1) {
		p->fds = fdtable_copy(fds);
		fdtable_put(fds);
		fds = p->fds;
	}
	return fds;
}

/* Whose descriptors a lookup is among: a table of a process's, and the
 * /proc entry that shows that table. */
struct fd_owner {
	struct process *proc;
	struct fdtable *fds;
	pid_t view;
};

static struct fd_owner caller_owner(struct tracee *t)
{
	return (struct fd_owner){ t->proc, caller_fds(t), fd_view(t) };
}

static struct fd_owner process_owner(struct process *p)
{
	return (struct fd_owner){ p, fds_of(p), p->view_tid };
}

/*
 * Installs o at fd in w's table.  A process has one chain of seccomp
 * filters for all its threads: a traced descriptor of a thread's own
 * table is named in its process's too, which the filters are planned on.
 */
static void owner_set(const struct fd_owner *w, int fd, struct ofd *o,
		      bool cloexec)
{
	fdtable_set(w->fds, fd, o, cloexec);
	if (o->traced && w->fds != fds_of(w->proc))
		fd_numbers_add(&w->proc->fds->traced, fd);
}

static void install_fd(struct tracee *t, int fd, struct ofd *o, bool cloexec)
{
	struct fd_owner w = caller_owner(t);

	owner_set(&w, fd, o, cloexec);
}

/*
 * A thread's table of its own: a copy of fds (unshare(CLONE_FILES) in a
 * thread, a thread made without CLONE_FILES; no libc does either).  Its
 * descriptors are not its process's other threads', nor theirs its.
 */
static void give_own_fds(struct tracee *t, struct fdtable *fds)
{
	struct fdtable *copy = fdtable_copy(fds);

	fdtable_put(t->fds);
	t->fds = copy;
	t->proc->fds_split = true;
}

/* unshare(CLONE_FILES): the kernel copies the caller's table if it is
 * shared.  A process of one thread keeps its copy as the process's. */
static void unshare_caller_fds(struct tracee *t)
{
	if (!t->fds && t->proc->live_threads == 1)
		unshare_fds(t->proc);
	else if (!t->fds || t->fds->refs > 1)
		give_own_fds(t, caller_fds(t));
}

/* A successful exec keeps the table of the thread that made it, its
 * only thread now: the process's from here. */
static struct fdtable *exec_fds(struct tracee *t)
{
	struct process *p = t->proc;

	if (t->fds) {
		fdtable_put(p->fds);
		p->fds = t->fds;
		t->fds = NULL;
	}
	p->fds_split = false;
	return unshare_fds(p);
}

/* prefix's length without trailing slashes ("/" stays 1). */
static size_t prefix_len(const char *prefix)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	return n;
}

static bool under(const char *path, const char *prefix)
{
	size_t n = prefix_len(prefix);

	return strncmp(path, prefix, n) == 0 &&
	       (path[n] == '/' || path[n] == '\0' || n == 1);
}

/* The length of the longest prefix in list (NULL-ended) that path is
 * under; -1 if none. */
static long longest_under(const char *path, const char *const *list)
{
	long best = -1;

	for (size_t i = 0; list && list[i]; i++)
		if (under(path, list[i]) && (long)prefix_len(list[i]) > best)
			best = (long)prefix_len(list[i]);
	return best;
}

/*
 * Decided once per open, so a filtered handle costs nothing later.  With
 * --include, only files under an included prefix are traced; the longest
 * prefix a path is under decides between an include and an exclude (an
 * exclude on a tie), so --include /dev/shm traces there in spite of the
 * default /dev, and --exclude /data --include /data/keep traces keep.
 */
static bool excluded(const struct iotrace *io, const char *path)
{
	bool narrowed = io->include && io->include[0];
	long inc = narrowed ? longest_under(path, io->include) : 0;

	return inc < 0 || longest_under(path, io->exclude) >= inc;
}

#define FD_LINK_SIZE 48

/* "PID/fd/N" under /proc: the task's fd as the kernel shows it. */
static void fd_link(char *link, pid_t pid, int fd)
{
	snprintf(link, FD_LINK_SIZE, "%d/fd/%d", (int)pid, fd);
}

/* stat(2) of what the task's fd refers to, through /proc/PID/fd/N, as
 * the kernel has it cached (stat_cached); extra (if not NULL) its birth
 * time and mount. */
static int fd_stat(struct iotrace *io, pid_t pid, int fd, struct stat *st,
		   struct stat_extra *extra)
{
	char link[FD_LINK_SIZE];

	fd_link(link, pid, fd);
	return stat_cached(io->procfd, link, 0, !io->serves_fuse, st, extra);
}

/* readlink of /proc/PID/fd/N: the kernel's name for what fd is open on,
 * as a process in view names it. */
static int read_fd_path(struct iotrace *io, uint32_t view, pid_t pid, int fd,
			struct strbuf *sb)
{
	char link[48];

	snprintf(link, sizeof(link), "fd/%d", fd);
	return read_link_in_view(io, view, pid, link, sb);
}

/* The kernel's name for fd where it is a path, not "pipe:[INO]" or
 * "socket:[INO]": a new string, or NULL. */
static char *kernel_path(struct iotrace *io, uint32_t view, pid_t pid, int fd)
{
	struct strbuf sb;
	char *name = NULL;

	sb_init(&sb, PATH_MAX);
	if (read_fd_path(io, view, pid, fd, &sb) == 0 && sb_str(&sb)[0] == '/')
		name = sb_detach(&sb);
	sb_release(&sb);
	return name;
}

/*
 * The kernel's name for an open file, when the name it was opened by says
 * little: /dev/stdin, /dev/fd/N, /proc/self/fd/N/... and /proc/self/cwd/...
 * lead to files anywhere, and openat2's RESOLVE_IN_ROOT reads the name
 * from dirfd as root.  A file or directory that such a name reached is
 * traced as what it is.
 */
static void take_kernel_path(struct iotrace *io, uint32_t view, pid_t pid,
			     int fd, struct ofd *o)
{
	char *name = kernel_path(io, view, pid, fd);

	if (name) {
		free(o->path);
		o->path = name;
	}
}

/* /dev/fuse, whatever its name: the misc device's minor 229 (FUSE_MINOR
 * in the kernel's miscdevice.h). */
static bool is_fuse_device(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(10, 229);
}

/* A kind of file the trace follows: a regular file, a directory, or a
 * FIFO (mkfifo), which workflows connect steps with (Snakemake's pipe()
 * outputs).  An anonymous pipe is a FIFO too: take_fifo_name tells. */
static bool is_traced_kind(mode_t mode)
{
	return S_ISREG(mode) || S_ISDIR(mode) || S_ISFIFO(mode);
}

/*
 * Whether fd, a FIFO, has a name in the file system: the kernel names an
 * anonymous pipe (pipe(2), a shell's |) "pipe:[INO]".  A named one's
 * kernel name replaces the name it was opened by where take says so, as
 * take_kernel_path does for other files: one readlink for both.
 */
static bool take_fifo_name(struct iotrace *io, uint32_t view, pid_t pid, int fd,
			   struct ofd *o, bool take)
{
	char *name = kernel_path(io, view, pid, fd);

	if (!name)
		return false;
	if (take || excluded(io, o->path)) {
		free(o->path);
		o->path = name;
	} else {
		free(name);
	}
	return true;
}

/* Fills an ofd's type, inode and traced flag from the open fd itself,
 * pid's (a thread whose /proc entry shows it); viewer, a thread that sees
 * the files in view, is where a new file's mount is looked up.  *out is
 * the file's stat(2) (its type, links, device and inode); -1 where the
 * kernel could not say. */
static int describe_ofd(struct iotrace *io, uint32_t view, pid_t viewer,
			pid_t pid, int fd, struct ofd *o, bool named_by_kernel,
			struct stat *out)
{
	struct stat_extra ex;
	struct stat st;
	bool file;

	o->path_gen = io->dir_renames;
	o->path_view = file_view_serial(&io->files, view);
	if (fd_stat(io, pid, fd, &st, &ex) < 0)
		return -1;
	if (is_fuse_device(&st))
		io->serves_fuse = true;
	file = is_traced_kind(st.st_mode);
	if (S_ISFIFO(st.st_mode))
		file = take_fifo_name(io, view, pid, fd, o, named_by_kernel);
	else if (file && (named_by_kernel || excluded(io, o->path)))
		take_kernel_path(io, view, pid, fd, o);
	/* Unlinked since it was opened: the file it was, if that was seen
	 * (a descriptor first met after the unlink, sent or inherited). */
	if (st.st_nlink == 0)
		o->inode_id = file_unlinked_id(&io->files, (uint64_t)st.st_dev,
					       (uint64_t)st.st_ino,
					       ex.birth_ns);
	if (!o->inode_id && file)
		o->inode_id =
			file_seen(&io->files, &st, &ex, o->path, view, viewer);
	if (!S_ISREG(st.st_mode))
		o->offset = S_ISDIR(st.st_mode) ? 0 : -1;
	o->traced = o->path[0] == '/' && !excluded(io, o->path) && file;
	*out = st;
	return 0;
}

static bool is_unlinked_name(const char *name)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(name);

	return n >= sizeof(deleted) - 1 &&
	       strcmp(name + n - (sizeof(deleted) - 1), deleted) == 0;
}

static int path_stat(struct iotrace *io, const struct tracee *t,
		     const char *path, bool follow, struct stat *st,
		     struct stat_extra *extra);

/* Whether the name is file st's own now (lstat of it, in t's view). */
static bool names_the_file(struct iotrace *io, const struct tracee *t,
			   const char *name, const struct stat *st)
{
	struct stat named;

	return path_stat(io, t, name, false, &named, NULL) == 0 &&
	       named.st_dev == st->st_dev && named.st_ino == st->st_ino;
}

/*
 * The kernel's name for the file a name led to, where that is another
 * name: a symbolic link was on the way (Nextflow stages a task's inputs
 * as links to the files earlier tasks wrote).  st is the file's stat at
 * the open (describe_ofd).  NULL where it is the name itself, or the
 * kernel has none to give (the file unlinked since, or out of the
 * process's view).  A name ending in " (deleted)" is the kernel's mark
 * of an unlinked name, or a file named so: with no link left (st_nlink
 * 0) there is no name; with links, only a name that is still the file's
 * is given.  st_nlink is not looked at otherwise: FUSE servers that
 * leave it 0 serve live files.
 */
static const char *name_reached(struct iotrace *io, const struct tracee *t,
				uint32_t view, pid_t pid, int fd,
				const char *opened, const struct stat *st,
				struct strbuf *sb)
{
	const char *name;

	if (read_fd_path(io, view, pid, fd, sb) < 0)
		return NULL;
	name = sb_str(sb);
	if (name[0] != '/' || strcmp(name, opened) == 0)
		return NULL;
	if (is_unlinked_name(name) &&
	    (st->st_nlink == 0 || !names_the_file(io, t, name, st)))
		return NULL;
	return name;
}

/* Whether two descriptors are one open file description (kcmp(2), which
 * the tracer of both may call; without it, none is). */
static bool same_description(pid_t pid1, int fd1, pid_t pid2, int fd2)
{
	return syscall(SYS_kcmp, pid1, pid2, KCMP_FILE, fd1, fd2) == 0;
}

static struct ofd *lookup_in(struct iotrace *io, const struct fd_owner *w,
			     int fd);

/* kcmp calls one search for a description may make: each costs about a
 * microsecond, and only a file open in many processes comes near. */
#define MAX_DESCRIPTION_PROBES 256

/* A descriptor of q's known to be file inode_id and the description of
 * p's fd; NULL if none or when *probes runs out. */
static struct ofd *description_in(const struct fd_owner *q,
				  const struct fd_owner *p, int fd,
				  uint64_t inode_id, int *probes)
{
	const struct fdtable *fds = q->fds;

	for (int i = 0; i<fds->size && * probes> 0; i++) {
		struct ofd *o = fds->slot[i].ofd;

		if (!o || o->inode_id != inode_id ||
		    (q->fds == p->fds && i == fd))
			continue;
		--*probes;
		if (same_description(p->view, fd, q->view, i))
			return o;
	}
	return NULL;
}

/* The description of p's fd in a table of q's other than p's: its
 * process's, or, once a thread of it has had one, each thread's. */
static struct ofd *description_in_process(struct process *q,
					  const struct fd_owner *p, int fd,
					  uint64_t inode_id, int *probes)
{
	struct fd_owner w = process_owner(q);
	struct ofd *o = NULL;

	if (!q->fds_split)
		return w.fds == p->fds ?
			       NULL :
			       description_in(&w, p, fd, inode_id, probes);
	for (struct tracee *u = q->threads; u && !o && *probes > 0;
	     u = u->next) {
		w = caller_owner(u);
		if (!u->exit_stopped && w.fds != p->fds)
			o = description_in(&w, p, fd, inode_id, probes);
	}
	return o;
}

/* The description of p's fd in any other table: one sent over a socket
 * (SCM_RIGHTS) or taken with pidfd_getfd, on any number. */
static struct ofd *description_anywhere(struct iotrace *io,
					const struct fd_owner *p, int fd,
					uint64_t inode_id, int *probes)
{
	const struct pidmap *m = io->processes;

	for (size_t i = 0; m && i <= m->mask && *probes > 0; i++) {
		struct ofd *o;

		if (!m->slot[i].key)
			continue;
		o = description_in_process(m->slot[i].value, p, fd, inode_id,
					   probes);
		if (o)
			return o;
	}
	return NULL;
}

/* p's fd is the same description as the parent's fd of that number: the
 * parent's table that has it (a thread's own, once it has had one). */
static struct ofd *parent_description(struct iotrace *io,
				      struct process *parent,
				      const struct fd_owner *p, int fd)
{
	struct fd_owner w = process_owner(parent);

	if (!parent->fds_split)
		return same_description(p->view, fd, w.view, fd) ?
			       lookup_in(io, &w, fd) :
			       NULL;
	for (struct tracee *u = parent->threads; u; u = u->next) {
		w = caller_owner(u);
		if (!u->exit_stopped &&
		    same_description(p->view, fd, u->tid, fd))
			return lookup_in(io, &w, fd);
	}
	return NULL;
}

/*
 * A descriptor first seen in p may be a description already known: one
 * of p's other descriptors of the same file (2>&1); the same descriptor
 * of the process p inherited it from, which may not have used it yet (a
 * log file on the task's stdout that a shell's children write before the
 * shell does); or one another process passed it (a socket, pidfd_getfd).
 * The kernel shares its position: so must we.
 */
static struct ofd *known_description(struct iotrace *io,
				     const struct fd_owner *p, int fd,
				     uint64_t inode_id)
{
	int probes = MAX_DESCRIPTION_PROBES;
	struct process *parent;
	struct ofd *o;

	if (!inode_id)
		return NULL;
	o = description_in(p, p, fd, inode_id, &probes);
	if (o)
		return o;
	parent = io->processes ? pidmap_get(io->processes, p->proc->rec.ppid) :
				 NULL;
	/* A parent started first: a recycled pid cannot make a loop. */
	if (parent && parent != p->proc &&
	    parent->rec.start_us <= p->proc->rec.start_us) {
		o = parent_description(io, parent, p, fd);
		if (o)
			return o;
	}
	return description_anywhere(io, p, fd, inode_id, &probes);
}

/* An fd the task had before we saw it open (inherited): ask /proc. */
static struct ofd *ofd_from_proc(struct iotrace *io, const struct fd_owner *w,
				 int fd)
{
	struct strbuf sb;
	char path[48], info[512];
	uint32_t view = process_view(io, w->proc, w->view);
	struct ofd *o, *known;
	const char *line;
	struct stat st;
	bool cloexec;

	sb_init(&sb, PATH_MAX);
	if (read_fd_path(io, view, w->view, fd, &sb) < 0) {
		sb_release(&sb);
		return NULL;
	}
	o = ofd_new(sb_str(&sb));
	sb_release(&sb);
	o->offset = 0;
	snprintf(path, sizeof(path), "%d/fdinfo/%d", (int)w->view, fd);
	if (read_file_at(io->procfd, path, info, sizeof(info)) > 0) {
		line = strstr(info, "pos:");
		if (line)
			o->offset = strtoll(line + 4, NULL, 10);
		line = strstr(info, "flags:");
		if (line)
			o->flags = (uint32_t)strtoul(line + 6, NULL, 8);
	}
	describe_ofd(io, view, w->view, w->view, fd, o, false, &st);
	cloexec = (o->flags & O_CLOEXEC) != 0; /* this descriptor's */
	known = known_description(io, w, fd, o->inode_id);
	if (known) {
		ofd_put(o);
		o = known;
		ofd_get(o);
	} else {
		o->handle_id = ++io->next_handle_id;
	}
	owner_set(w, fd, o, cloexec);
	ofd_put(o);
	return o;
}

static struct ofd *lookup_in(struct iotrace *io, const struct fd_owner *w,
			     int fd)
{
	struct ofd *o = fdtable_get(w->fds, fd);

	return o ? o : ofd_from_proc(io, w, fd);
}

/* t's descriptor fd, NULL if it has none. */
static struct ofd *lookup_fd(struct iotrace *io, struct tracee *t, int fd)
{
	struct fd_owner w = caller_owner(t);

	return lookup_in(io, &w, fd);
}

/* The end of path's last ".." component, or 0 if it has none. */
static size_t last_dotdot_end(const char *path)
{
	size_t end = 0;

	for (const char *c = strstr(path, "/.."); c; c = strstr(c + 1, "/.."))
		if (c[3] == '/' || c[3] == '\0')
			end = (size_t)(c - path) + 3;
	return end;
}

#define MAGIC_LINK_SIZE 64

/*
 * Where a name of t's leads anywhere: a link of its own /proc entry that
 * the kernel follows to a file or directory wherever it is (fd/N or cwd,
 * of /proc/self, /proc/thread-self, or /proc/PID with its pid or tid;
 * /dev/fd/N, /dev/stdin, /dev/stdout and /dev/stderr, links to
 * /proc/self/fd/N).  That link under /proc ("PID/fd/N") in link, and
 * what path names after it ("" or "/..."); NULL for any other path
 * (/proc/self/root/... too: a stat there is how a program looks at a file
 * untraced, tests/helpers/randio.c).
 */
static const char *magic_link(const char *path, const struct tracee *t,
			      char link[MAGIC_LINK_SIZE])
{
	static const char *const std_names[] = { "/dev/stdin", "/dev/stdout",
						 "/dev/stderr" };
	pid_t pid = t->proc->rec.pid;
	char owner[MAGIC_LINK_SIZE / 2];
	const char *s = NULL;
	char *end;
	long n;

	if (strncmp(path, "/dev/", 5) != 0 && strncmp(path, "/proc/", 6) != 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(std_names); i++)
		if (under(path, std_names[i])) {
			snprintf(link, MAGIC_LINK_SIZE, "%d/fd/%zu", (int)pid,
				 i);
			return path + strlen(std_names[i]);
		}
	snprintf(owner, sizeof(owner), "%d", (int)pid);
	if (strncmp(path, "/dev/fd/", 8) == 0) {
		s = path + 4;
	} else if (strncmp(path, "/proc/self/", 11) == 0) {
		s = path + 10;
	} else if (strncmp(path, "/proc/thread-self/", 18) == 0) {
		snprintf(owner, sizeof(owner), "%d/task/%d", (int)pid,
			 (int)t->tid);
		s = path + 17;
	} else if (strncmp(path, "/proc/", 6) == 0 && path[6] >= '1' &&
		   path[6] <= '9') {
		n = strtol(path + 6, &end, 10);
		if (n != pid && n != t->tid)
			return NULL;
		snprintf(owner, sizeof(owner), "%ld", n);
		s = end;
	}
	if (s && strncmp(s, "/fd/", 4) == 0 && s[4] >= '0' && s[4] <= '9') {
		errno = 0;
		n = strtol(s + 4, &end, 10);
		if (errno || n > INT_MAX || (*end != '/' && *end != '\0'))
			return NULL;
		snprintf(link, MAGIC_LINK_SIZE, "%s/fd/%ld", owner, n);
		return end;
	}
	if (s && under(s, "/cwd")) {
		snprintf(link, MAGIC_LINK_SIZE, "%s/cwd", owner);
		return s + 4;
	}
	return NULL;
}

/*
 * openat2(2) of name from dir; where the kernel has none (ENOSYS: before
 * Linux 5.6; EPERM: a container's seccomp profile from before it knew
 * openat2), openat(2) with its flags, unless the task may serve a file
 * system (no walk through the caches alone then).
 */
static int open_how_at(const struct iotrace *io, int dir, const char *name,
		       const struct open_how *how)
{
	int fd = (int)syscall(SYS_openat2, dir, name, how, sizeof(*how));

	if (fd < 0 && (errno == ENOSYS || errno == EPERM) && !io->serves_fuse)
		fd = openat(dir, name, (int)how->flags);
	return fd;
}

/*
 * open_how_at of path from dir.  A path the kernel takes in no one call
 * (PATH_MAX bytes with its NUL: a deep directory that the task reached
 * through a dirfd) is walked in pieces that end at a slash, each a
 * directory to go on from: no "." nor ".." is left in path
 * (resolve_at), so each name is looked up where the kernel looked it up.
 * In a view of its own, the pieces after the first are walked beneath
 * their directory (RESOLVE_IN_ROOT would make it the root, and no flag
 * makes the process's root the root there): a symlink that leads out of
 * it (absolute, or up with "..") fails (EXDEV), and the path is not
 * looked at.
 */
static int open_in_pieces(const struct iotrace *io, uint32_t view, int dir,
			  const char *path, struct open_how how)
{
	struct open_how dir_how = how;
	char piece[PATH_MAX];
	int fd, own = -1, err;

	dir_how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	while (strnlen(path, PATH_MAX) == PATH_MAX) {
		size_t n = PATH_MAX - 1;

		while (n > 0 && path[n] != '/')
			n--;
		if (n == 0) { /* a name longer than NAME_MAX */
			errno = ENAMETOOLONG;
			fd = -1;
			goto out;
		}
		memcpy(piece, path, n);
		piece[n] = '\0';
		fd = open_how_at(io, dir, piece, &dir_how);
		if (fd < 0)
			goto out;
		if (own >= 0)
			close(own);
		dir = own = fd;
		while (path[n] == '/')
			n++;
		path += n;
		if (view)
			dir_how.resolve = how.resolve =
				(how.resolve & ~(uint64_t)RESOLVE_IN_ROOT) |
				RESOLVE_BENEATH;
	}
	fd = open_how_at(io, dir, *path ? path : ".", &how);
out:
	err = errno;
	if (own >= 0)
		close(own);
	errno = err;
	return fd;
}

/*
 * An O_PATH descriptor of path as t's process names it.  In a view of its
 * own (another mount namespace or root), under its /proc/TID/root, with
 * RESOLVE_IN_ROOT: an absolute symlink leads to its root, not the
 * tracer's (before Linux 5.6, without openat2, to the tracer's).  Once
 * the task may serve a file system, through the kernel's caches alone
 * (RESOLVE_CACHED, Linux 5.12).
 */
static int open_path(struct iotrace *io, uint32_t view, pid_t tid,
		     const char *path, bool follow)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
		.resolve = io->serves_fuse ? RESOLVE_CACHED : 0,
	};
	char link[FD_LINK_SIZE];
	int root, fd, err;

	if (!view)
		return open_in_pieces(io, view, AT_FDCWD, path, how);
	snprintf(link, sizeof(link), "%d/root", (int)tid);
	root = openat(io->procfd, link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	how.resolve |= RESOLVE_IN_ROOT;
	/* relative to root, also for openat without openat2 */
	fd = open_in_pieces(io, view, root, path[0] == '/' ? path + 1 : path,
			    how);
	err = errno;
	close(root);
	errno = err;
	return fd;
}

/*
 * stat(2) (follow) or lstat(2) of a path t named, in its process's view
 * of the files, as the kernel has it cached (stat_cached).  Once a
 * process of the task has opened /dev/fuse, it may serve a file system
 * under the path, and the walk itself may ask it (a lookup whose cached
 * entry is stale), stopped for the tracer: a deadlock.  Then only a walk
 * through the caches is made, and a path not all cached is not looked at
 * (-1): the row it is for gets no inode id, and counts for no file.
 */
static int path_stat(struct iotrace *io, const struct tracee *t,
		     const char *path, bool follow, struct stat *st,
		     struct stat_extra *extra)
{
	uint32_t view = process_view(io, t->proc, t->tid);
	char link[MAGIC_LINK_SIZE];
	int fd, ret;

	/* The tracer's /proc/self is not t's (take_magic_name). */
	if (magic_link(path, t, link)) {
		errno = ENOENT;
		return -1;
	}
	if (!view && !io->serves_fuse && strnlen(path, PATH_MAX) < PATH_MAX)
		return stat_cached(AT_FDCWD, path,
				   follow ? 0 : AT_SYMLINK_NOFOLLOW, true, st,
				   extra);
	fd = open_path(io, view, t->tid, path, follow);
	if (fd < 0) {
		/* EAGAIN: not all cached; ENOSYS, EINVAL: before 5.12 */
		if (io->serves_fuse && errno != ENOENT && errno != ENOTDIR &&
		    errno != ELOOP)
			io->paths_uncached++;
		return -1;
	}
	ret = stat_cached(fd, "", AT_EMPTY_PATH, !io->serves_fuse, st, extra);
	close(fd);
	return ret;
}

/*
 * realpath(3) of path as tid names it, which looks up every name on the
 * way.  In another view, or once the task may serve a file system
 * (path_stat, through the kernel's caches alone), the kernel's name for
 * what open_path finds, as tid names it (name_in_view).  False where it
 * fails.
 */
static bool real_path(struct iotrace *io, uint32_t view, pid_t tid,
		      const char *path, char real[PATH_MAX])
{
	struct strbuf name;
	bool ok;
	int fd;

	if (!view && !io->serves_fuse)
		return realpath(path, real) != NULL;
	fd = open_path(io, view, tid, path, true);
	if (fd < 0)
		return false;
	sb_init(&name, PATH_MAX);
	ok = read_fd_path(io, view, getpid(), fd, &name) == 0;
	close(fd);
	ok = ok && sb_str(&name)[0] == '/' && name.len < PATH_MAX;
	if (ok)
		memcpy(real, sb_str(&name), name.len + 1);
	sb_release(&name);
	return ok;
}

/*
 * "dir/.." is the parent of where dir leads, which is not the lexical
 * parent when dir is a symlink or crosses one.  So a path with ".." has
 * everything up to its last ".." resolved as the kernel does (realpath,
 * here, in the process's view of the files); the rest, and a path
 * whose prefix no longer resolves, is normalised lexically.
 */
static void normalise_dotdot(struct iotrace *io, uint32_t view, pid_t tid,
			     struct strbuf *path)
{
	const char *s = sb_str(path);
	size_t end = last_dotdot_end(s), len = strlen(s);
	char prefix[PATH_MAX], real[PATH_MAX];

	/* /proc/self, /dev/fd/N and the like would be the tracer's own here:
	 * left lexical, an open through them takes the kernel's name. */
	if (end == 0 || len >= sizeof(prefix) || under(s, "/proc") ||
	    under(s, "/dev"))
		return;
	memcpy(prefix, s, end);
	prefix[end] = '\0';
	if (!real_path(io, view, tid, prefix, real))
		return;
	memcpy(prefix, s + end, len - end + 1); /* now the rest */
	sb_reset(path);
	sb_adds(path, real);
	sb_adds(path, prefix);
}

/* The absolute path of (dirfd, name) as t meant it. */
static void resolve_at(struct iotrace *io, struct tracee *t, int dirfd,
		       const char *name, struct strbuf *out)
{
	uint32_t view = process_view(io, t->proc, t->tid);

	sb_reset(out);
	if (name[0] != '/') {
		struct ofd *dir = dirfd == AT_FDCWD ? NULL :
						      lookup_fd(io, t, dirfd);

		if (dir &&
		    (dir->path_gen != io->dir_renames ||
		     dir->path_view != file_view_serial(&io->files, view))) {
			take_kernel_path(io, view, fd_view(t), dirfd, dir);
			dir->path_gen = io->dir_renames;
			dir->path_view = file_view_serial(&io->files, view);
		}

		sb_adds(out, dir ? dir->path : cwd_of(io, t));
		sb_addc(out, '/');
	}
	sb_adds(out, name);
	if (out->truncated)
		io->paths_cut++;
	normalise_dotdot(io, view, t->tid, out);
	if (out->buf)
		normalise_path(out->buf);
	out->len = strlen(sb_str(out));
}

/*
 * The tracee's memory.  Once the task has opened /dev/fuse, only pages in
 * memory (else -EAGAIN): any other may be a page of a file it serves, and
 * faulting it in would wait for that server, which may be stopped for the
 * tracer.  That matters for what is read at a call's entry, before the
 * kernel has read it; at an exit stop the kernel has brought the page in.
 */
static int mem_pages(const struct iotrace *io)
{
	return io->serves_fuse ? io->procfd : TRACEE_ANY_PAGE;
}

static int read_mem(const struct iotrace *io, const struct tracee *t,
		    uint64_t addr, void *buf, size_t len)
{
	return tracee_read(t->tid, mem_pages(io), addr, buf, len);
}

static ssize_t read_str(const struct iotrace *io, const struct tracee *t,
			uint64_t addr, char *buf, size_t size)
{
	return tracee_read_str(t->tid, mem_pages(io), addr, buf, size);
}

/* Reads the path argument at addr and resolves it; 0 or -errno. */
static int read_path_arg(struct iotrace *io, struct tracee *t, int dirfd,
			 uint64_t addr, struct strbuf *out)
{
	char name[PATH_MAX];
	ssize_t n = read_str(io, t, addr, name, sizeof(name));

	if (n < 0)
		return (int)n;
	resolve_at(io, t, dirfd, name, out);
	return 0;
}

static bool path_arg(struct iotrace *io, struct tracee *t, int dirfd,
		     uint64_t addr, struct strbuf *out)
{
	return read_path_arg(io, t, dirfd, addr, out) == 0;
}

/* ---- events ------------------------------------------------------- */

/*
 * Two clocks read one after the other, each cut to microseconds: system
 * time, their difference, can come out a microsecond below the one
 * before (seen in CI, at an event's end and at the next one's start).
 * Neither time goes back over the process's events.
 */
static void never_back(struct process *p, uint64_t *ut, uint64_t *st)
{
	if (*ut < p->events_utime_us)
		*ut = p->events_utime_us;
	if (*st < p->events_stime_us)
		*st = p->events_stime_us;
	p->events_utime_us = *ut;
	p->events_stime_us = *st;
}

/* The process's user and system CPU time at this stop: two clock reads,
 * no /proc read. */
static void process_times(struct tracee *t, uint64_t *ut, uint64_t *st)
{
	uint64_t prof = 0, virt = 0;

	read_process_clock_ns(t->proc->rec.pid, PROCESS_CLOCK_PROF, &prof);
	read_process_clock_ns(t->proc->rec.pid, PROCESS_CLOCK_VIRT, &virt);
	*ut = virt / 1000;
	*st = prof / 1000 > *ut ? prof / 1000 - *ut : 0;
	never_back(t->proc, ut, st);
}

/*
 * An event's end.  One of the entry stop (close) has the CPU times of its
 * start.  Between its entry and exit stops a process that has no other
 * thread runs only in the kernel, so its user time has not moved: one
 * clock read instead of two.
 */
static void end_times(struct tracee *t, struct io_event *ev)
{
	uint64_t prof_ns = 0;

	ev->end_us = now_realtime_us();
	if (t->call.at_entry) {
		ev->utime_end_us = ev->utime_start_us;
		ev->stime_end_us = ev->stime_start_us;
		return;
	}
	if (!t->call.alone || t->proc->live_threads != 1) {
		process_times(t, &ev->utime_end_us, &ev->stime_end_us);
		return;
	}
	read_process_clock_ns(t->proc->rec.pid, PROCESS_CLOCK_PROF, &prof_ns);
	ev->utime_end_us = ev->utime_start_us;
	ev->stime_end_us = u64_minus(prof_ns / 1000, ev->utime_start_us);
	never_back(t->proc, &ev->utime_end_us, &ev->stime_end_us);
}

struct op {
	char type;
	int64_t result;
	const struct ofd *ofd;
	int64_t offset;
	uint64_t size;
	uint32_t flags;
	uint64_t inode_id; /* for operations on a path: the file's id */
	const char *path, *path2;
};

static void tally_traced(struct proc_usage *u, const struct op *op,
			 bool spliced)
{
	uint64_t bytes = op->result > 0 ? (uint64_t)op->result : 0;

	if (op->type == 'R') {
		u->traced_read_bytes += bytes;
		u->spliced_read_bytes += spliced ? bytes : 0;
	} else if (op->type == 'W') {
		u->traced_write_bytes += bytes;
		u->spliced_write_bytes += spliced ? bytes : 0;
	}
}

static void emit(struct iotrace *io, struct tracee *t, const struct op *op)
{
	struct io_event ev = {
		.start_us = t->call.start_us,
		.pid = t->tid,
		.utime_start_us = t->call.utime_us,
		.stime_start_us = t->call.stime_us,
		.type = op->type,
		.result = op->result,
		.offset = op->offset,
		.size = op->size,
		.flags = op->flags,
		.path = op->path,
		.path2 = op->path2,
	};

	end_times(t, &ev);
	tally_traced(&t->proc->rec.usage, op, t->call.id == SC_SPLICE);
	if (op->ofd) {
		ev.handle_id = op->ofd->handle_id;
		ev.inode_id = op->ofd->inode_id;
	} else {
		ev.inode_id = op->inode_id;
	}
	file_in_trace(&io->files, ev.inode_id);
	trace_io(io->sink, &ev);
}

static bool is_i386(const struct tracee *t)
{
	return t->call.arch == AUDIT_ARCH_I386;
}

/* A 64-bit offset: one register, or two (low, high) on i386. */
static int64_t arg_off64(const struct tracee *t, int lo)
{
	if (is_i386(t))
		return (int64_t)((t->call.args[lo] & 0xffffffffu) |
				 (t->call.args[lo + 1] << 32));
	return (int64_t)t->call.args[lo];
}

/* An off_t of i386's 32-bit calls (truncate, ftruncate): signed 32-bit. */
static int64_t arg_long(const struct tracee *t, int i)
{
	if (is_i386(t))
		return (int64_t)(int32_t)t->call.args[i];
	return (int64_t)t->call.args[i];
}

static int arg_fd(const struct tracee *t, int i)
{
	return (int)(int32_t)t->call.args[i];
}

/* ---- opens and closes --------------------------------------------- */

static void on_open(struct iotrace *io, struct tracee *t, int dirfd,
		    uint64_t path_addr, uint32_t flags, bool in_root,
		    int64_t ret)
{
	struct strbuf path, reached;
	struct ofd *o = NULL;
	struct op op = { .type = 'O', .result = ret, .flags = flags };
	bool named_by_kernel = in_root || (flags & O_TMPFILE) == O_TMPFILE;
	struct stat st;
	uint32_t view;
	pid_t fds_pid;
	int known;

	sb_init(&path, TRACE_PATH_MAX);
	if (!path_arg(io, t, dirfd, path_addr, &path)) {
		sb_release(&path);
		return;
	}
	op.path = sb_str(&path);
	if (ret >= 0) {
		o = ofd_new(op.path);
		o->handle_id = ++io->next_handle_id;
		o->flags = flags;
		o->offset = 0;
		view = process_view(io, t->proc, t->tid);
		fds_pid = fd_view(t);
		/* An O_TMPFILE file has no name in the directory it was
		 * made in: the kernel's, "DIR/#INO (deleted)", says so. */
		known = describe_ofd(io, view, t->tid, fds_pid, (int)ret, o,
				     named_by_kernel, &st);
		install_fd(t, (int)ret, o, (flags & O_CLOEXEC) != 0);
		op.ofd = o;
		op.path = o->path;
		op.offset = o->offset; /* -1: a FIFO has no position */
		sb_init(&reached, PATH_MAX);
		if (known == 0 && o->traced && !S_ISDIR(st.st_mode) &&
		    !named_by_kernel)
			op.path2 = name_reached(io, t, view, fds_pid, (int)ret,
						o->path, &st, &reached);
		if (o->traced)
			emit(io, t, &op);
		sb_release(&reached);
		ofd_put(o);
	} else if (!excluded(io, op.path)) {
		emit(io, t, &op);
	}
	sb_release(&path);
}

/* The size of an open file, through the task's fd. */
static int64_t fd_size(struct iotrace *io, struct tracee *t, int fd)
{
	struct stat st;

	return fd_stat(io, fd_view(t), fd, &st, NULL) == 0 ? st.st_size : -1;
}

/*
 * The size of traced file o, whose fd surely closes now (a close(2), the
 * process's end; an exec or dup2 may fail: fd_size()), -1 if unread.  An
 * O_TMPFILE file still without a name is freed with its last descriptor,
 * and ext4 gives its number to the next file made, often within the same
 * tick of the birth-time clock, which born_again() cannot tell apart: so
 * it is gone from here, and the next one a file of its own.  (One unlinked while open was gone at the
 * unlink.)  Another description of it, a reopen through /proc/PID/fd, may
 * keep it: found again through a descriptor, file_unlinked_id() finds it;
 * only a linkat through that other description then makes it a new id.
 */
static int64_t closing_size(struct iotrace *io, struct tracee *t, int fd,
			    const struct ofd *o)
{
	struct stat st;

	if (fd_stat(io, fd_view(t), fd, &st, NULL) < 0)
		return -1;
	if (st.st_nlink == 0 && o->refs == 1 &&
	    (o->flags & O_TMPFILE) == O_TMPFILE)
		file_freed(&io->files, o->inode_id);
	return st.st_size;
}

static void close_fd(struct iotrace *io, struct tracee *t, int fd)
{
	struct ofd *o = fdtable_take(caller_fds(t), fd);
	struct op op = { .type = 'C', .ofd = o, .offset = -1 };

	if (!o)
		return;
	if (o->traced) {
		/* At the close's entry stop the fd is still open. */
		if (o->inode_id)
			file_closed(&io->files, o->inode_id,
				    closing_size(io, t, fd, o));
		emit(io, t, &op);
	}
	ofd_put(o);
}

/*
 * The descriptors open in [first, last] that the tracer has not met yet
 * (one received with SCM_RIGHTS, or the task's from the start): looked up
 * now, so that their closes are rows too.  One read of /proc/PID/fd.
 */
static void meet_open_fds(struct iotrace *io, struct tracee *t, unsigned first,
			  unsigned last)
{
	struct dirent *e;
	char path[32];
	DIR *d;
	int dfd;

	snprintf(path, sizeof(path), "%d/fd", (int)fd_view(t));
	dfd = openat(io->procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		char *end;
		unsigned long fd = strtoul(e->d_name, &end, 10);

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end ||
		    fd < first || fd > last || fd > INT_MAX)
			continue;
		if (!fdtable_get(caller_fds(t), (int)fd))
			lookup_fd(io, t, (int)fd);
	}
	closedir(d);
}

/* close_range(2)'s flags (linux/close_range.h). */
#define CLOSE_RANGE_UNSHARE_FLAG 2u
#define CLOSE_RANGE_CLOEXEC_FLAG 4u

/* At its entry: the kernel refuses first > last and unknown flags
 * (EINVAL, nothing done); CLOSE_RANGE_UNSHARE closes in a copy of a
 * shared table, which the caller keeps, as unshare(CLONE_FILES). */
static void on_close_range(struct iotrace *io, struct tracee *t)
{
	struct fdtable *fds;
	unsigned first = (unsigned)t->call.args[0];
	unsigned last = (unsigned)t->call.args[1];
	uint64_t flags = t->call.args[2];
	bool cloexec_only = flags & CLOSE_RANGE_CLOEXEC_FLAG;

	if (first > last || flags & ~(uint64_t)(CLOSE_RANGE_UNSHARE_FLAG |
						CLOSE_RANGE_CLOEXEC_FLAG))
		return;
	if (flags & CLOSE_RANGE_UNSHARE_FLAG)
		unshare_caller_fds(t);
	fds = caller_fds(t);
	if (!cloexec_only)
		meet_open_fds(io, t, first, last);

	for (unsigned fd = first; fd <= last && (int)fd < fds->size; fd++) {
		if (cloexec_only)
			fdtable_set_cloexec(fds, (int)fd, true);
		else
			close_fd(io, t, (int)fd);
	}
}

/*
 * A file about to be closed without a close(2) (dup2 over its fd,
 * close-on-exec): its size now, at the call's entry, through the fd (its
 * path may name another file by then), is its size at that close.  If
 * the call fails, a later close writes over it.
 */
static void closed_silently(struct iotrace *io, struct tracee *t, int fd)
{
	const struct ofd *o = fdtable_get(caller_fds(t), fd);
	int64_t size;

	if (!o || !o->traced || !o->inode_id)
		return;
	size = fd_size(io, t, fd);
	if (size >= 0)
		file_closed(&io->files, o->inode_id, size);
}

/* At an exec's entry: the sizes its close-on-exec descriptors close at
 * if it succeeds, and which are O_TMPFILE files still without a name. */
static void close_on_exec(struct iotrace *io, struct tracee *t)
{
	const struct fdtable *fds = caller_fds(t);
	struct stat st;

	for (int fd = 0; fd < fds->size; fd++) {
		struct ofd *o = fds->slot[fd].ofd;

		if (!o || !fds->slot[fd].cloexec || !o->traced || !o->inode_id)
			continue;
		if (fd_stat(io, fd_view(t), fd, &st, NULL) < 0)
			continue;
		file_closed(&io->files, o->inode_id, st.st_size);
		o->unnamed_at_exec = st.st_nlink == 0 &&
				     (o->flags & O_TMPFILE) == O_TMPFILE;
	}
}

/* A successful exec closed its close-on-exec descriptors: an O_TMPFILE
 * file without a name whose last one it was is gone (closing_size). */
static void free_closed_tmpfiles(struct iotrace *io, const struct fdtable *fds)
{
	for (int fd = 0; fd < fds->size; fd++) {
		const struct ofd *o = fds->slot[fd].ofd;

		if (o && fds->slot[fd].cloexec && o->unnamed_at_exec &&
		    o->refs == 1)
			file_freed(&io->files, o->inode_id);
	}
}

static void dup_to(struct iotrace *io, struct tracee *t, int oldfd, int newfd,
		   bool cloexec)
{
	struct ofd *o;

	if (newfd < 0)
		return;
	/* At the exit newfd is oldfd's description, but its slot still
	 * holds what the dup2 closed: an oldfd not met yet (received with
	 * SCM_RIGHTS) would be found to be that one by kcmp against newfd
	 * (known_description), its handle given to another description. */
	if (newfd != oldfd)
		ofd_put(fdtable_take(caller_fds(t), newfd));
	o = lookup_fd(io, t, oldfd);
	if (!o)
		return;
	/* dup2 over an open fd closes it silently: no close(2) call, no C
	 * event (as strace counts it); its size was taken at the entry. */
	install_fd(t, newfd, o, cloexec);
}

/* The status flags F_SETFL changes (the kernel's SETFL_MASK; the same
 * values for i386 and x32); the others it leaves as they are. */
#define SETFL_FLAGS \
	((uint32_t)(O_APPEND | O_ASYNC | O_DIRECT | O_NOATIME | O_NONBLOCK))

static void on_fcntl(struct iotrace *io, struct tracee *t, int64_t ret)
{
	int fd = arg_fd(t, 0);
	struct ofd *o;

	if (ret < 0)
		return;
	switch ((int)t->call.args[1]) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		dup_to(io, t, fd, (int)ret,
		       (int)t->call.args[1] == F_DUPFD_CLOEXEC);
		break;
	case F_SETFD:
		fdtable_set_cloexec(caller_fds(t), fd,
				    t->call.args[2] & FD_CLOEXEC);
		break;
	case F_SETFL:
		o = lookup_fd(io, t, fd);
		if (o)
			o->flags = (o->flags & ~SETFL_FLAGS) |
				   ((uint32_t)t->call.args[2] & SETFL_FLAGS);
		break;
	}
}

/* ---- data --------------------------------------------------------- */

/* Sum of an iovec array's lengths (iov_len is 32-bit on i386 and x32). */
static uint64_t iov_total(struct iotrace *io, const struct tracee *t,
			  uint64_t addr, int count)
{
	bool narrow = is_i386(t) || t->call.x32;
	uint64_t total = 0;

	if (count < 0 || count > 1024)
		return 0;
	for (int i = 0; i < count; i++) {
		uint64_t len = 0;

		if (narrow) {
			uint32_t v[2];

			if (read_mem(io, t, addr + (uint64_t)i * 8, v,
				     sizeof(v)))
				return total;
			len = v[1];
		} else {
			uint64_t v[2];

			if (read_mem(io, t, addr + (uint64_t)i * 16, v,
				     sizeof(v)))
				return total;
			len = v[1];
		}
		total += len;
	}
	return total;
}

static bool is_write(const struct tracee *t)
{
	switch (t->call.id) {
	case SC_WRITE:
	case SC_PWRITE:
	case SC_WRITEV:
	case SC_PWRITEV:
	case SC_PWRITEV2:
		return true;
	default:
		return false;
	}
}

/*
 * Whether a write went to the end of the file whatever its offset said:
 * O_APPEND makes pwrite append too (pwrite(2), BUGS), and pwritev2's
 * RWF_APPEND or RWF_NOAPPEND (Linux 6.9) set or clear that per call.
 */
static bool writes_at_end(const struct tracee *t, const struct ofd *o)
{
	uint64_t rwf = t->call.id == SC_PWRITEV2 ? t->call.args[5] : 0;

	/* A FIFO has no position, nor an end (offset -1). */
	if (!is_write(t) || o->offset < 0)
		return false;
	if (rwf & RWF_APPEND)
		return true;
	return (o->flags & O_APPEND) && !(rwf & RWF_NOAPPEND);
}

/* Whether a call on fd0 uses and moves the file position. */
static bool uses_position(const struct tracee *t)
{
	switch (t->call.id) {
	case SC_READ:
	case SC_WRITE:
	case SC_READV:
	case SC_WRITEV:
	case SC_LSEEK:
	case SC_LLSEEK:
		return true;
	case SC_PREADV2:
	case SC_PWRITEV2:
		return arg_off64(t, 3) == -1;
	default:
		return false;
	}
}

/* A read or write at the file position, or at pos: a negative pos the
 * kernel refuses (EINVAL), at no position. */
static void on_data(struct iotrace *io, struct tracee *t, char type,
		    uint64_t size, int64_t pos, int64_t ret)
{
	struct ofd *o = lookup_fd(io, t, arg_fd(t, 0));
	struct op op = { .type = type, .result = ret, .size = size };
	bool at_position = uses_position(t);

	if (!o || !o->traced)
		return; /* counted at exit: rchar and wchar say how much */
	op.ofd = o;
	op.flags = o->flags;
	op.offset = at_position ? o->offset : pos < 0 ? -1 : pos;
	if (ret > 0 && writes_at_end(t, o)) {
		/* It wrote at the end: where that was, the size says.  A
		 * pwrite leaves the file position where it was.  A write of
		 * nothing never looks for the end (generic_write_checks()
		 * returns first): it used and leaves the position. */
		int64_t end = fd_size(io, t, arg_fd(t, 0));

		if (end >= 0)
			op.offset = end - ret;
		if (at_position)
			o->offset = op.offset;
	}
	emit(io, t, &op);
	if (at_position && ret > 0 && o->offset >= 0)
		o->offset += ret;
}

/* One side of copy_file_range, sendfile or splice: with a NULL offset
 * pointer it used and moved the file position; else *off, which the
 * kernel has advanced by ret when we look at the exit stop. */
static void transfer_side(struct iotrace *io, struct tracee *t, char type,
			  int fd, uint64_t off_ptr, uint64_t size, int64_t ret,
			  bool off32)
{
	struct ofd *o = lookup_fd(io, t, fd);
	struct op op = { .type = type, .result = ret, .size = size, .ofd = o };
	int64_t pos = 0;
	int32_t pos32 = 0;

	if (!o || !o->traced)
		return; /* counted at exit: rchar and wchar say how much */
	op.flags = o->flags;
	if (!off_ptr) {
		op.offset = o->offset;
		if (ret > 0 && o->offset >= 0)
			o->offset += ret;
	} else if (off32 ? read_mem(io, t, off_ptr, &pos32, sizeof(pos32)) ==
				   0 :
			   read_mem(io, t, off_ptr, &pos, sizeof(pos)) == 0) {
		if (off32)
			pos = pos32;
		op.offset = pos - (ret > 0 ? ret : 0);
	} else {
		op.offset = -1;
	}
	emit(io, t, &op);
}

static void on_transfer(struct iotrace *io, struct tracee *t, int in_fd,
			uint64_t in_off, int out_fd, uint64_t out_off,
			uint64_t size, int64_t ret)
{
	/* i386's sendfile (not sendfile64) takes a 32-bit off_t. */
	bool off32 = is_i386(t) && t->call.id == SC_SENDFILE;
	struct ofd *in = lookup_fd(io, t, in_fd);
	int64_t start = in ? in->offset : -1;

	transfer_side(io, t, 'R', in_fd, in_off, size, ret, off32);
	/*
	 * sendfile(fd, fd, NULL, n): the kernel takes both positions before
	 * it copies, and both are the one description's, which ends up ret
	 * past where it was, not twice that.
	 */
	if (in && !in_off && !out_off && lookup_fd(io, t, out_fd) == in)
		in->offset = start;
	transfer_side(io, t, 'W', out_fd, out_off, size, ret, off32);
}

/* One side of a reflink: 0 the source, 1 the destination (flags). */
static void clone_side(struct iotrace *io, struct tracee *t, int fd,
		       int64_t offset, uint64_t size, uint32_t side,
		       int64_t ret)
{
	struct ofd *o = lookup_fd(io, t, fd);
	struct op op = { .type = 'K',
			 .result = ret,
			 .ofd = o,
			 .offset = offset,
			 .size = size,
			 .flags = side };

	if (o && o->traced)
		emit(io, t, &op);
}

/*
 * ioctl(dest, FICLONE, src) or (dest, FICLONERANGE, &range): the
 * destination's range now shares the source's blocks.  Nothing is read
 * or written (rchar and wchar leave it out), and no file position moves.
 * A length of 0 (all of FICLONE) runs to the source's end.
 */
static void on_clone(struct iotrace *io, struct tracee *t, int64_t ret)
{
	/* struct file_clone_range: src_fd, src_offset, src_length,
	 * dest_offset */
	uint64_t range[4] = { 0, 0, 0, 0 };
	int64_t end;

	if ((uint32_t)t->call.args[1] == IOCTL_FICLONE) {
		range[0] = t->call.args[2];
	} else if (read_mem(io, t, t->call.args[2], range, sizeof(range)) < 0) {
		return clone_side(io, t, arg_fd(t, 0), -1, 0, 1, ret);
	}
	/* The kernel takes src_fd as an unsigned int. */
	range[0] = (uint32_t)range[0];
	if (!range[2]) {
		end = fd_size(io, t, (int)range[0]);
		if (end > (int64_t)range[1])
			range[2] = (uint64_t)end - range[1];
	}
	clone_side(io, t, (int)range[0], (int64_t)range[1], range[2], 0, ret);
	clone_side(io, t, arg_fd(t, 0), (int64_t)range[3], range[2], 1, ret);
}

static void on_lseek(struct iotrace *io, struct tracee *t, int64_t ret)
{
	struct ofd *o = lookup_fd(io, t, arg_fd(t, 0));
	struct op op = { .type = 'L', .result = ret };

	if (!o)
		return;
	/* _llseek returns the position through a pointer. */
	if (t->call.id == SC_LLSEEK && ret == 0) {
		int64_t pos;

		if (read_mem(io, t, t->call.args[3], &pos, sizeof(pos)) == 0)
			ret = op.result = pos;
	}
	if (ret >= 0)
		o->offset = ret;
	if (!o->traced)
		return;
	op.ofd = o;
	op.offset = ret >= 0 ? ret : -1;
	op.flags = o->flags;
	emit(io, t, &op);
}

/* What a filesystem lets the tracer settle at a call's entry. */
enum {
	/* Its regular files take lseek(SEEK_SET) through the VFS's
	 * generic_file_llseek (vfs_setpos): any offset from 0 to their
	 * maximum file size, at least 2 GiB, is set and returned as it is. */
	SETTLES_SEEK = 1,
	/* Its getattr fills in what the inode holds and cannot fail on a
	 * file the caller holds open (xfs: unless shut down, when every
	 * call fails); a network one asks a server. */
	SETTLES_STAT = 2,
};

/*
 * By the name mountinfo gives and statfs's f_type.  Not here, so nothing
 * settled: procfs, sysfs and the like have rules of their own; a FUSE
 * server may open a file nonseekable (ESPIPE) and answer getattr as it
 * likes; overlay asks the layer below, which may be one of those.
 */
static const struct fs_kind {
	const char *name;
	unsigned long magic;
	int settles;
} fs_kinds[] = {
	{ "ext4", 0xEF53, SETTLES_SEEK | SETTLES_STAT },
	{ "ext3", 0xEF53, SETTLES_SEEK | SETTLES_STAT },
	{ "ext2", 0xEF53, SETTLES_SEEK | SETTLES_STAT },
	{ "xfs", 0x58465342, SETTLES_SEEK | SETTLES_STAT },
	{ "btrfs", 0x9123683E, SETTLES_SEEK | SETTLES_STAT },
	{ "tmpfs", 0x01021994, SETTLES_SEEK | SETTLES_STAT },
	{ "ramfs", 0x858458F6, SETTLES_SEEK | SETTLES_STAT },
	{ "f2fs", 0xF2F52010, SETTLES_SEEK | SETTLES_STAT },
	{ "zfs", 0x2FC12FC1, SETTLES_SEEK },
	{ "nfs", 0x6969, SETTLES_SEEK },
	{ "nfs4", 0x6969, SETTLES_SEEK },
	{ "cifs", 0xFF534D42, SETTLES_SEEK },
	{ "smb3", 0xFE534D42, SETTLES_SEEK },
	{ "ceph", 0x00C36400, SETTLES_SEEK },
	{ "lustre", 0x0BD00BD0, SETTLES_SEEK },
	{ "gpfs", 0x47504653, SETTLES_SEEK },
	{ "beegfs", 0x19830326, SETTLES_SEEK },
	{ "9p", 0x01021997, SETTLES_SEEK },
};

/* By mountinfo's name where there is one, else by statfs's magic. */
static int settles_of(const char *name, unsigned long magic)
{
	for (size_t i = 0; i < ARRAY_SIZE(fs_kinds); i++)
		if (name ? strcmp(name, fs_kinds[i].name) == 0 :
			   magic == fs_kinds[i].magic)
			return fs_kinds[i].settles;
	return 0;
}

/* statfs of fd's file; 0 where it cannot be asked. */
static unsigned long fs_magic_of(struct iotrace *io, const struct tracee *t,
				 int fd)
{
	char link[FD_LINK_SIZE];
	struct statfs sf;
	int pfd, err;

	fd_link(link, fd_view(t), fd);
	pfd = openat(io->procfd, link, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return 0;
	err = fstatfs(pfd, &sf);
	close(pfd);
	return err == 0 ? (unsigned long)sf.f_type : 0;
}

/*
 * What o's filesystem lets the tracer settle (SETTLES_*), known once per
 * description: by its mount's name in mountinfo, read for files.csv
 * anyway; where that is not known (a btrfs subvolume's device is on no
 * mountinfo line), by statfs, which a local filesystem answers at once.
 * Never statfs where the task may serve the filesystem: it would ask
 * the server, which may be a tracee held for the tracer.
 */
static int fs_settles(struct iotrace *io, const struct tracee *t, int fd,
		      struct ofd *o)
{
	const char *name;

	if (o->fs_settles >= 0)
		return o->fs_settles;
	name = file_fstype(&io->files, o->inode_id);
	if (!name && io->serves_fuse)
		return 0;
	o->fs_settles =
		(int8_t)settles_of(name, name ? 0 : fs_magic_of(io, t, fd));
	return o->fs_settles;
}

/*
 * Whether t's call on a descriptor may be settled at its entry at all: a
 * call of x86_64's; nothing else can close or move the descriptor
 * meanwhile (a process of one thread, its table its own, no io_uring
 * ring, whose operations can close one); and no filter is waiting to go
 * in, which it would put off to a later exit stop, past the reads it is
 * for.
 */
static bool may_settle_at_entry(struct iotrace *io, struct tracee *t)
{
	struct process *p = t->proc;

	return t->call.arch == AUDIT_ARCH_X86_64 && !t->call.x32 &&
	       t->call.alone && caller_fds(t)->refs == 1 && !io->has_rings &&
	       !(io->scoped &&
		 fdscope_pending(&p->scope, fdtable_traced(p->fds)));
}

/*
 * lseek(fd, off, SEEK_SET) with 0 <= off < 2 GiB on a traced file of such
 * a filesystem returns off: its L row and the new position are known at
 * the entry, and the exit stop is spared (ld seeks before each read: 1,394
 * of a small make's 31,000 stops).  Only where nothing else can use the
 * position meanwhile: may_settle_at_entry, and the description in one
 * descriptor (not shared after a dup or fork).  i386's lseek takes a
 * 32-bit offset: left to the exit.
 */
static bool lseek_known_at_entry(struct iotrace *io, struct tracee *t)
{
	int64_t off = (int64_t)t->call.args[1];
	int fd = arg_fd(t, 0);
	struct ofd *o;

	if (!may_settle_at_entry(io, t) ||
	    (uint32_t)t->call.args[2] != SEEK_SET || off < 0 || off > INT32_MAX)
		return false;
	o = lookup_fd(io, t, fd);
	/* An O_PATH descriptor refuses lseek (EBADF), a FIFO (offset -1)
	 * too (ESPIPE). */
	if (!o || !o->traced || o->refs != 1 || (o->flags & O_PATH) ||
	    o->offset < 0)
		return false;
	return fs_settles(io, t, fd, o) & SETTLES_SEEK;
}

/* The flags fstatat and statx take without EINVAL (fs/stat.c). */
#define FSTATAT_FLAGS (AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH)
#ifndef AT_STATX_SYNC_TYPE
#define AT_STATX_SYNC_TYPE 0x6000 /* linux/fcntl.h's; musl has none */
#endif
#ifndef STATX__RESERVED
#define STATX__RESERVED 0x80000000U /* linux/stat.h's; musl 1.2.5 has none */
#endif

static bool statx_args_valid(uint32_t flags, uint32_t mask)
{
	return !(flags & ~(FSTATAT_FLAGS | AT_STATX_SYNC_TYPE)) &&
	       (flags & AT_STATX_SYNC_TYPE) != AT_STATX_SYNC_TYPE &&
	       !(mask & STATX__RESERVED);
}

/*
 * fstat(fd, buf), or fstatat or statx of fd itself ("" and AT_EMPTY_PATH),
 * on a traced file of a filesystem whose getattr cannot fail returns 0,
 * unless the kernel cannot write buf (EFAULT): whether it can is asked the
 * same way (tracee_rewrite).  Its S row (on the description returned, else
 * NULL) is then known at the entry and the
 * exit stop is spared: tar stats each file twice through its descriptor,
 * 4 of its 9 stops per file at --level files.  Flags the kernel refuses
 * (EINVAL), a NULL path (EFAULT before Linux 6.11) and a task that serves
 * FUSE (a page of buf may be a file it serves) keep the exit.
 */
static struct ofd *stat_known_at_entry(struct iotrace *io, struct tracee *t)
{
	const uint64_t *a = t->call.args;
	size_t len = sizeof(struct stat);
	int fd = arg_fd(t, 0);
	uint64_t buf;
	struct ofd *o;

	if (!may_settle_at_entry(io, t) || io->serves_fuse)
		return NULL;
	switch (t->call.id) {
	case SC_FSTAT:
		buf = a[1];
		break;
	case SC_FSTATAT:
		if (!t->call.empty_path || !a[1] ||
		    ((uint32_t)a[3] & ~FSTATAT_FLAGS))
			return NULL;
		buf = a[2];
		break;
	case SC_STATX:
		if (!t->call.empty_path || !a[1] ||
		    !statx_args_valid((uint32_t)a[2], (uint32_t)a[3]))
			return NULL;
		buf = a[4];
		len = sizeof(struct statx);
		break;
	default:
		return NULL;
	}
	o = lookup_fd(io, t, fd);
	if (!o || !o->traced || !(fs_settles(io, t, fd, o) & SETTLES_STAT) ||
	    tracee_rewrite(t->tid, buf, len) < 0)
		return NULL;
	return o;
}

/*
 * fallocate(fd, mode, offset, len) and sync_file_range(fd, offset,
 * nbytes, flags): a range of the file, from argument first on; i386
 * passes each 64-bit value as two registers.
 */
static void on_range(struct iotrace *io, struct tracee *t, char type, int first,
		     int64_t ret)
{
	struct ofd *o = lookup_fd(io, t, arg_fd(t, 0));
	struct op op = { .type = type, .result = ret, .ofd = o };

	if (!o || !o->traced)
		return;
	if (is_i386(t)) {
		op.offset = arg_off64(t, first);
		op.size = (uint64_t)arg_off64(t, first + 2);
	} else {
		op.offset = (int64_t)t->call.args[first];
		op.size = t->call.args[first + 1];
	}
	op.flags = o->flags;
	emit(io, t, &op);
}

static void emit_stat_of(struct iotrace *io, struct tracee *t,
			 const struct ofd *o, int64_t ret)
{
	struct op op = { .type = 'S', .result = ret, .offset = -1, .ofd = o };

	if (o && o->traced) {
		op.path = o->path;
		emit(io, t, &op);
	}
}

static void on_stat_fd(struct iotrace *io, struct tracee *t, int fd,
		       int64_t ret)
{
	emit_stat_of(io, t, lookup_fd(io, t, fd), ret);
}

/*
 * The descriptor N a name of the caller's own descriptor names (magic_link:
 * /proc/self/fd/N by any of its names, /dev/fd/N, and /dev/stdin,
 * /dev/stdout and /dev/stderr, links to fd 0, 1 and 2), with nothing
 * after it; -1 for any other path.  Its file is that descriptor's, as for
 * an open by such a name.
 */
static int own_fd_path(const char *path, const struct tracee *t)
{
	char link[MAGIC_LINK_SIZE];
	const char *rest = magic_link(path, t, link);
	const char *n = rest && !*rest ? strstr(link, "/fd/") : NULL;

	return n ? atoi(n + 4) : -1;
}

/* ---- names -------------------------------------------------------- */

/*
 * A name of t's that leads anywhere (magic_link) names, in the trace, what
 * it led to, as an open by that name does (describe_ofd): the kernel's
 * name for the file (follow: a stat or truncate, where it exists), else
 * for the directory it is in, followed by its last component (a name
 * operation: the name it made, removed or renamed).  Left as it is (an
 * excluded path) where the tracer cannot follow it (the kernel names no
 * such directory, deeper than 4095 bytes; in a view of its own, a
 * symbolic link after the magic link that leads out of where it is:
 * open_in_pieces).
 */
static void take_magic_name(struct iotrace *io, const struct tracee *t,
			    struct strbuf *path, bool follow)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = io->serves_fuse ? RESOLVE_CACHED : 0,
	};
	char link[MAGIC_LINK_SIZE];
	const char *rest = magic_link(sb_str(path), t, link), *last;
	uint32_t view;
	struct strbuf name;
	int base, dir, fd = -1;

	if (!rest || (!*rest && !follow))
		return;
	base = openat(io->procfd, link, O_PATH | O_CLOEXEC);
	if (base < 0)
		return;
	view = process_view(io, t->proc, t->tid);
	/* The task's walk would follow a magic link there as its own, the
	 * tracer's as the tracer's; in a view, beneath (open_in_pieces). */
	how.resolve |= RESOLVE_NO_MAGICLINKS | (view ? RESOLVE_BENEATH : 0);
	sb_init(&name, TRACE_PATH_MAX);
	last = strrchr(rest, '/');
	dir = base;
	if (last && last > rest) {
		sb_add(&name, rest + 1, (size_t)(last - rest - 1));
		how.flags |= O_DIRECTORY;
		dir = open_in_pieces(io, view, base, sb_str(&name), how);
		how.flags &= ~(uint64_t)O_DIRECTORY;
	}
	if (dir >= 0 && follow)
		fd = last ? open_in_pieces(io, view, dir, last + 1, how) :
			    dup(dir);
	if (fd >= 0 && read_fd_path(io, view, getpid(), fd, &name) == 0 &&
	    sb_str(&name)[0] == '/') {
		sb_reset(path);
		sb_adds(path, sb_str(&name));
	} else if (last && dir >= 0 &&
		   read_fd_path(io, view, getpid(), dir, &name) == 0 &&
		   sb_str(&name)[0] == '/') {
		if (strcmp(sb_str(&name), "/") != 0)
			sb_addc(&name, '/');
		sb_adds(&name, last + 1);
		sb_reset(path);
		sb_adds(path, sb_str(&name));
	}
	sb_release(&name);
	if (fd >= 0)
		close(fd);
	if (dir >= 0 && dir != base)
		close(dir);
	close(base);
}

/* The path argument of a name operation (the name itself, never where a
 * symbolic link there leads), resolved: read_path_arg, take_magic_name. */
static int read_name_arg(struct iotrace *io, struct tracee *t, int dirfd,
			 uint64_t addr, struct strbuf *out)
{
	int err = read_path_arg(io, t, dirfd, addr, out);

	if (err == 0)
		take_magic_name(io, t, out, false);
	return err;
}

static bool name_arg(struct iotrace *io, struct tracee *t, int dirfd,
		     uint64_t addr, struct strbuf *out)
{
	return read_name_arg(io, t, dirfd, addr, out) == 0;
}

/*
 * Whether the call looks at what a symbolic link at the end of its path
 * leads to: not lstat's nor AT_SYMLINK_NOFOLLOW's, which look at the link
 * (not a file the trace counts: only regular files and directories are).
 */
static bool follows_last_link(const struct tracee *t)
{
	const uint64_t *a = t->call.args;

	switch (t->call.id) {
	case SC_LSTAT:
		return false;
	case SC_FSTATAT:
	case SC_FACCESSAT2:
		return !((uint32_t)a[3] & AT_SYMLINK_NOFOLLOW);
	case SC_STATX:
		return !((uint32_t)a[2] & AT_SYMLINK_NOFOLLOW);
	default:
		return true;
	}
}

static uint64_t path_inode(struct iotrace *io, const struct tracee *t,
			   const char *path, bool follow)
{
	struct stat_extra ex;
	struct stat st;

	if (path_stat(io, t, path, follow, &st, &ex) < 0 ||
	    !is_traced_kind(st.st_mode))
		return 0;
	return file_seen(&io->files, &st, &ex, path,
			 process_view(io, t->proc, t->tid), t->tid);
}

static void emit_path_op(struct iotrace *io, struct tracee *t, char type,
			 const char *path, int64_t ret, uint64_t size)
{
	struct op op = {
		.type = type, .result = ret, .offset = -1, .size = size
	};
	bool follow = follows_last_link(t);

	if (excluded(io, path))
		return;
	op.path = path;
	/* A successful stat (metadata storms per file) or truncate counts
	 * for its file: which one, the tracer asks the same path. */
	if ((type == 'S' || type == 'T') && ret == 0)
		op.inode_id = path_inode(io, t, op.path, follow);
	emit(io, t, &op);
}

static void on_path_op(struct iotrace *io, struct tracee *t, char type,
		       int dirfd, uint64_t addr, int64_t ret, uint64_t size)
{
	bool follow = (type == 'S' || type == 'T') && follows_last_link(t);
	struct strbuf path;
	int fd = -1;

	sb_init(&path, TRACE_PATH_MAX);
	if (!path_arg(io, t, dirfd, addr, &path))
		goto out;
	if (type == 'S' && follow)
		fd = own_fd_path(sb_str(&path), t);
	if (fd >= 0) {
		on_stat_fd(io, t, fd, ret);
	} else {
		take_magic_name(io, t, &path, follow);
		emit_path_op(io, t, type, sb_str(&path), ret, size);
	}
out:
	sb_release(&path);
}

/* A stat of what its descriptor argument names (AT_EMPTY_PATH): that
 * descriptor's file, or with AT_FDCWD the cwd. */
static void on_stat_empty_path(struct iotrace *io, struct tracee *t,
			       int64_t ret)
{
	struct strbuf cwd;

	if (arg_fd(t, 0) != AT_FDCWD) {
		on_stat_fd(io, t, arg_fd(t, 0), ret);
		return;
	}
	sb_init(&cwd, TRACE_PATH_MAX);
	resolve_at(io, t, AT_FDCWD, ".", &cwd);
	emit_path_op(io, t, 'S', sb_str(&cwd), ret, 0);
	sb_release(&cwd);
}

/* Whether path is a directory; one not looked up (path_stat) may be. */
static bool is_dir(struct iotrace *io, const struct tracee *t, const char *path)
{
	struct stat st;

	if (path_stat(io, t, path, false, &st, NULL) == 0)
		return S_ISDIR(st.st_mode);
	return io->serves_fuse && errno != ENOENT && errno != ENOTDIR;
}

/* A renamed directory moves every path below it: cwds and dirfds.  Both
 * names are looked at: RENAME_EXCHANGE leaves something at each. */
static void note_rename(struct iotrace *io, const struct tracee *t,
			const char *from, const char *to)
{
	if (is_dir(io, t, to) || is_dir(io, t, from))
		io->dir_renames++;
}

/*
 * linkat(fd, "", ..., AT_EMPTY_PATH), or open(2)'s way for a user without
 * CAP_DAC_READ_SEARCH, linkat(AT_FDCWD, "/proc/self/fd/N", ...,
 * AT_SYMLINK_FOLLOW), links the file open on a descriptor (an O_TMPFILE
 * file gets its name so): that file, or NULL.
 */
static const struct ofd *linked_descriptor(struct iotrace *io, struct tracee *t)
{
	char name[64];
	uint64_t flags = t->call.args[4];
	int fd;

	if (t->call.id != SC_LINKAT ||
	    !(flags & (AT_EMPTY_PATH | AT_SYMLINK_FOLLOW)) ||
	    read_str(io, t, t->call.args[1], name, sizeof(name)) < 0)
		return NULL;
	if (name[0] == '\0')
		fd = flags & AT_EMPTY_PATH ? arg_fd(t, 0) : -1;
	else
		fd = flags & AT_SYMLINK_FOLLOW ? own_fd_path(name, t) : -1;
	return fd < 0 ? NULL : lookup_fd(io, t, fd);
}

static void on_two_paths(struct iotrace *io, struct tracee *t, char type,
			 int dirfd1, uint64_t a1, int dirfd2, uint64_t a2,
			 int64_t ret)
{
	struct strbuf from, to;
	struct op op = { .type = type, .result = ret, .offset = -1 };
	const struct ofd *linked = linked_descriptor(io, t);
	/* Its target is a string, no name of the task's (linkat may be
	 * given a dirfd of -1 too: the call tells them apart). */
	bool symlink = t->call.id == SC_SYMLINK || t->call.id == SC_SYMLINKAT;

	/* renameat2's RENAME_NOREPLACE (1), _EXCHANGE (2), _WHITEOUT (4) */
	if (t->call.id == SC_RENAMEAT2)
		op.flags = (uint32_t)t->call.args[4];
	sb_init(&from, TRACE_PATH_MAX);
	sb_init(&to, TRACE_PATH_MAX);
	if (name_arg(io, t, dirfd2, a2, &to)) {
		if (linked) {
			op.ofd = linked;
			sb_adds(&from, linked->path);
			/* The file is known by its new name from here on. */
			if (ret == 0)
				file_add_path(&io->files, linked->inode_id,
					      sb_str(&to));
		} else if (symlink) {
			/* symlink's target is a string, not a task's path */
			char target[PATH_MAX];

			op.flags = IO_SYMLINK;
			if (read_str(io, t, a1, target, sizeof(target)) >= 0)
				sb_adds(&from, target);
		} else {
			name_arg(io, t, dirfd1, a1, &from);
		}
		op.path = sb_str(&from);
		op.path2 = sb_str(&to);
		if (type == 'N' && ret == 0)
			note_rename(io, t, op.path, op.path2);
		/* A traced file moved or linked out of what is traced is
		 * as much its operation as one moved in; a symlink's
		 * target is no name of the task's. */
		if (!excluded(io, op.path2) ||
		    (!symlink && !excluded(io, op.path)))
			emit(io, t, &op);
	}
	sb_release(&from);
	sb_release(&to);
}

static uint64_t process_rchar(struct iotrace *io, struct tracee *t)
{
	struct proc_io pio;

	return read_task_io(io->procfd, t->proc->rec.pid, 0, &pio) == 0 ?
		       pio.rchar :
		       0;
}

/* Whether path is the calling process's /proc/self/exe by any of its
 * names (thread-self, its own pid or tid). */
static bool own_exe_path(const char *path, pid_t pid, pid_t tid)
{
	char *end;
	long owner;

	if (strcmp(path, "/proc/self/exe") == 0 ||
	    strcmp(path, "/proc/thread-self/exe") == 0)
		return true;
	if (strncmp(path, "/proc/", 6) != 0)
		return false;
	owner = strtol(path + 6, &end, 10);
	if ((owner == pid || owner == tid) && strcmp(end, "/exe") == 0)
		return true;
	return strncmp(end, "/task/", 6) == 0 &&
	       strtol(end + 6, &end, 10) == tid && strcmp(end, "/exe") == 0;
}

/*
 * A program run by a name that leads anywhere (/proc/self/exe, a program
 * re-running itself; /dev/fd/N, fexecve without execveat): the kernel's
 * name for it, read at the entry, before the exec replaces both.  An
 * excluded /proc or /dev name would have hidden the exec.
 */
static void take_exec_kernel_path(struct iotrace *io, struct tracee *t,
				  struct strbuf *path)
{
	struct process *p = t->proc;
	int fd = own_fd_path(sb_str(path), t);
	uint32_t view = process_view(io, p, t->tid);
	struct strbuf kernel;
	int got = -1;

	if (fd < 0 && !own_exe_path(sb_str(path), p->rec.pid, t->tid))
		return;
	sb_init(&kernel, PATH_MAX);
	if (fd >= 0)
		got = read_fd_path(io, view, fd_view(t), fd, &kernel);
	else
		got = read_link_in_view(io, view, p->view_tid, "exe", &kernel);
	if (got == 0 && sb_str(&kernel)[0] == '/') {
		sb_reset(path);
		sb_adds(path, sb_str(&kernel));
	}
	sb_release(&kernel);
}

/* execve's or chdir's path, or execveat's (dirfd, path), resolved at the
 * entry. */
static void note_entry_path(struct iotrace *io, struct tracee *t)
{
	bool at = t->call.id == SC_EXECVEAT;
	struct strbuf path;

	free(t->call.entry_path);
	t->call.entry_path = NULL;
	sb_init(&path, TRACE_PATH_MAX);
	if (path_arg(io, t, at ? arg_fd(t, 0) : AT_FDCWD, t->call.args[at],
		     &path)) {
		if (t->call.id != SC_CHDIR && excluded(io, sb_str(&path)))
			take_exec_kernel_path(io, t, &path);
		t->call.entry_path = sb_detach(&path);
	}
	sb_release(&path);
}

/*
 * An exec whose path was not read at its entry (mem_pages: its page was
 * not in memory).  Where it failed, the path the kernel has read by now.
 * Where it ran, the name it was given, which the kernel has written to the
 * new stack (AT_EXECFN; a script's, where /proc/PID/exe names its
 * interpreter); else, and for a name that leads anywhere (/dev/fd/N, an
 * execveat's /dev/fd/N/NAME, /proc/self/exe), the kernel's name for the
 * program.
 */
static void exec_path_at_exit(struct iotrace *io, struct tracee *t, int64_t ret)
{
	unsigned char auxv[AUXV_BYTES];
	char file[32], name[PATH_MAX];
	const char *exe = sb_str(&t->proc->exe);
	struct strbuf path;
	uint64_t addr;
	ssize_t n;

	if (ret != 0) {
		note_entry_path(io, t);
		return;
	}
	sb_init(&path, TRACE_PATH_MAX);
	snprintf(file, sizeof(file), "%d/auxv", (int)t->tid);
	n = read_file_at(io->procfd, file, (char *)auxv, sizeof(auxv));
	if (n > 0 && find_auxv_entry(auxv, (size_t)n, AT_EXECFN, &addr) &&
	    read_str(io, t, addr, name, sizeof(name)) > 0)
		resolve_at(io, t, AT_FDCWD, name, &path);
	if (!path.len || under(sb_str(&path), "/dev/fd") ||
	    under(sb_str(&path), "/proc")) {
		io->entry_paths_unread++; /* not the name the task gave */
		sb_reset(&path);
		if (exe[0] == '/')
			sb_adds(&path, exe);
	}
	if (path.len)
		t->call.entry_path = sb_detach(&path);
	sb_release(&path);
}

static void on_exec(struct iotrace *io, struct tracee *t, int64_t ret)
{
	/* Loading the program and its interpreter reads their headers
	 * through the kernel (kernel_read counts in rchar): no syscall of
	 * the task shows it, so it is counted here. */
	uint64_t rchar = process_rchar(io, t);

	if (ret == 0 && rchar > t->call.rchar_before)
		t->proc->rec.usage.exec_read_bytes +=
			rchar - t->call.rchar_before;
	if (!t->call.entry_path && io->serves_fuse)
		exec_path_at_exit(io, t, ret);
	if (t->call.entry_path)
		emit_path_op(io, t, 'X', t->call.entry_path, ret, 0);
	free(t->call.entry_path);
	t->call.entry_path = NULL;
	if (ret == 0) {
		struct fdtable *fds = exec_fds(t);

		free_closed_tmpfiles(io, fds);
		fdtable_exec(fds); /* sizes taken at entry */
	}
}

/* unshare(): CLONE_NEWNS unshares the cwd as CLONE_FS does (and the
 * mount namespace: view_move_starts). */
static void on_unshare(struct tracee *t, int64_t ret)
{
	uint64_t flags = t->call.args[0];

	if (ret != 0)
		return;
	if (flags & CLONE_FILES)
		unshare_caller_fds(t);
	if ((flags & (CLONE_FS | CLONE_NEWNS)) && t->proc->live_threads > 1)
		t->proc->cwd_per_call = true;
}

/* kcmp(2) of a and b's descriptor table (KCMP_FILES) or cwd (KCMP_FS):
 * 0 the same, 1 or 2 not, -1 an error. */
static long kcmp_order(pid_t a, pid_t b, int what)
{
	return syscall(SYS_kcmp, a, b, what, 0, 0);
}

/* Whether a thread has begun to exit, or is gone.  The kernel sets
 * PF_EXITING before the thread drops its table and fs, and never clears
 * it. */
static bool exiting(struct iotrace *io, pid_t tid)
{
	struct proc_stat st;

	return read_proc_stat(io->procfd, tid, &st) < 0 ||
	       (st.flags & PF_EXITING);
}

/*
 * Whether two live threads have a different table or cwd (KCMP_FILES,
 * KCMP_FS).  kcmp compares what a thread has now: an exiting one has
 * none, which is not the other's (seen: a thread killed by another's exec
 * before its clone event was handled).  PF_EXITING is read after the
 * kcmp, so a thread without it then had its own at the kcmp.
 */
static bool not_shared(struct iotrace *io, pid_t a, pid_t b, int what)
{
	long order = kcmp_order(a, b, what);

	return (order == 1 || order == 2) && !exiting(io, a) && !exiting(io, b);
}

/*
 * Compared with another live thread of its process, which is on the
 * process's table (new threads of a process that has split wait anyway):
 * a new thread has not run, so a table or cwd apart is one its creator
 * did not share with it.  Where the other has dropped its own (exiting),
 * or the kcmp fails, it may: the wait costs less than a wrong table.
 */
bool iotrace_thread_may_part(const struct tracee *t)
{
	for (const struct tracee *o = t->proc->threads; o; o = o->next) {
		if (o == t || o->exit_stopped)
			continue;
		return kcmp_order(o->tid, t->tid, KCMP_FILES) != 0 ||
		       kcmp_order(o->tid, t->tid, KCMP_FS) != 0;
	}
	return true;
}

/*
 * A new thread is not held for its creator's event, as a new process is:
 * it may have run first, and unshared its table already, which is then
 * its own and stays so.
 */
void iotrace_thread(struct iotrace *io, struct tracee *creator,
		    struct tracee *t)
{
	if (!t->fds && not_shared(io, creator->tid, t->tid, KCMP_FILES)) {
		give_own_fds(t, caller_fds(creator));
	} else if (!t->fds && creator->fds) {
		t->fds = creator->fds; /* CLONE_FILES: the creator's own */
		t->fds->refs++;
	}
	if (not_shared(io, creator->tid, t->tid, KCMP_FS))
		t->proc->cwd_per_call = true;
}

/* From here on the cwd is read from /proc again; where it cannot be,
 * the path the chdir asked for, or the fchdir's directory, stands in. */
static void on_chdir(struct iotrace *io, struct tracee *t, int64_t ret)
{
	struct process *p = t->proc;
	char *asked = t->call.entry_path;
	const struct ofd *dir;

	t->call.entry_path = NULL;
	if (ret == 0) {
		if (t->call.id == SC_FCHDIR) {
			dir = lookup_fd(io, t, arg_fd(t, 0));
			free(asked);
			asked = dir && dir->path[0] == '/' ?
					xstrdup(dir->path) :
					NULL;
		}
		free(p->cwd_hint);
		p->cwd_hint = asked;
		asked = NULL;
		free(p->cwd_cache);
		p->cwd_cache = NULL;
	}
	free(asked);
}

static void on_mmap(struct iotrace *io, struct tracee *t, int64_t ret)
{
	struct ofd *o = lookup_fd(io, t, arg_fd(t, 4));
	struct op op = { .type = 'M',
			 .result = ret,
			 .ofd = o,
			 .size = t->call.args[1],
			 .flags = (uint32_t)t->call.args[2] };

	/* i386's old mmap passes its arguments in memory: not decoded. */
	if (!o || !o->traced || (is_i386(t) && t->call.id == SC_MMAP))
		return;
	op.offset = (int64_t)t->call.args[5];
	if (t->call.id == SC_MMAP2)
		op.offset *= 4096; /* mmap2 counts pages */
	emit(io, t, &op);
}

/* ---- dispatch ----------------------------------------------------- */

/*
 * Before an unlink, rmdir or rename: the inode that loses its name, if it
 * is its last link.  After the call succeeds its number may be reused by a
 * new file (ext4 reuses it at once), which must get a new inode id.
 */
/*
 * A rename whose source is the target's file already (the same name by
 * another spelling, or another link of it) does nothing, and the file
 * keeps its name.  1, 0, or -EAGAIN: the source's name is in a page not
 * in memory (read_mem).
 */
static int renames_onto_itself(struct iotrace *io, struct tracee *t,
			       const struct stat *target)
{
	const uint64_t *a = t->call.args;
	bool at = t->call.id != SC_RENAME;
	struct strbuf path;
	struct stat st;
	bool same;
	int err;

	if (t->call.id != SC_RENAME && t->call.id != SC_RENAMEAT &&
	    t->call.id != SC_RENAMEAT2)
		return 0;
	sb_init(&path, TRACE_PATH_MAX);
	err = read_name_arg(io, t, at ? arg_fd(t, 0) : AT_FDCWD, a[at], &path);
	same = err == 0 &&
	       path_stat(io, t, sb_str(&path), false, &st, NULL) == 0 &&
	       st.st_dev == target->st_dev && st.st_ino == target->st_ino;
	sb_release(&path);
	return err == -EAGAIN ? err : same;
}

static void note_doomed_inode(struct iotrace *io, struct tracee *t)
{
	const uint64_t *a = t->call.args;
	struct strbuf path;
	struct stat st;
	int err = -EINVAL, same = 0;

	t->call.doomed_dev = t->call.doomed_ino = 0;
	sb_init(&path, TRACE_PATH_MAX);
	switch (t->call.id) {
	case SC_UNLINK:
	case SC_RMDIR:
		err = read_name_arg(io, t, AT_FDCWD, a[0], &path);
		break;
	case SC_UNLINKAT:
		err = read_name_arg(io, t, arg_fd(t, 0), a[1], &path);
		break;
	case SC_RENAME: /* the target loses its name */
		err = read_name_arg(io, t, AT_FDCWD, a[1], &path);
		break;
	case SC_RENAMEAT:
	case SC_RENAMEAT2:
		/* RENAME_EXCHANGE leaves both files a name; RENAME_NOREPLACE
		 * succeeds only where no file had the target's */
		if (!(t->call.id == SC_RENAMEAT2 && (a[4] & 3)))
			err = read_name_arg(io, t, arg_fd(t, 2), a[3], &path);
		break;
	}
	if (err == 0 &&
	    path_stat(io, t, sb_str(&path), false, &st, NULL) == 0 &&
	    (st.st_nlink <= 1 || S_ISDIR(st.st_mode))) {
		same = renames_onto_itself(io, t, &st);
		if (same == 0) {
			t->call.doomed_dev = (uint64_t)st.st_dev;
			t->call.doomed_ino = (uint64_t)st.st_ino;
		}
	}
	t->call.doomed_unread = err == -EAGAIN || same == -EAGAIN;
	sb_release(&path);
}

/*
 * fstatat, statx and faccessat2 with AT_EMPTY_PATH and an empty path look
 * at dirfd itself; so do fstatat and statx with a NULL path (Linux 6.11),
 * where faccessat2 fails with EFAULT.  1, 0, or -EAGAIN: the path's page
 * is not in memory (read_mem).
 */
static int names_fd_itself(struct iotrace *io, const struct tracee *t)
{
	const uint64_t *a = t->call.args;
	char first = 0;
	uint64_t flags;
	int err;

	switch (t->call.id) {
	case SC_FSTATAT:
	case SC_FACCESSAT2:
		flags = a[3];
		break;
	case SC_STATX:
		flags = a[2];
		break;
	default:
		return false;
	}
	if (!(flags & AT_EMPTY_PATH))
		return false;
	if (a[1] == 0)
		return t->call.id != SC_FACCESSAT2;
	err = read_mem(io, t, a[1], &first, 1);
	if (err == -EAGAIN)
		return err;
	return err == 0 && first == 0;
}

/* The calls that act on the descriptor in their first argument. */
static bool acts_on_fd0(const struct tracee *t)
{
	switch (t->call.id) {
	case SC_FSTATAT:
	case SC_STATX:
	case SC_FACCESSAT2:
		return t->call.empty_path;
	case SC_FSTAT:
	case SC_READ:
	case SC_WRITE:
	case SC_PREAD:
	case SC_PWRITE:
	case SC_READV:
	case SC_WRITEV:
	case SC_LSEEK:
	case SC_LLSEEK:
	case SC_FTRUNCATE:
	case SC_FTRUNCATE64:
	case SC_FSYNC:
	case SC_FDATASYNC:
	case SC_FALLOCATE:
	case SC_SYNC_FILE_RANGE:
		return true;
	default:
		return false;
	}
}

/*
 * A clone that makes a second process on the caller's descriptor table:
 * descriptors one of them opens are the other's too, which per-process
 * filters cannot follow.
 */
static bool shares_fd_table(struct iotrace *io, const struct tracee *t)
{
	uint64_t flags = t->call.args[0];

	/* clone3: the flags open its struct clone_args; unread (not in
	 * memory), as if shared. */
	if (t->call.id == SC_CLONE3) {
		int err =
			read_mem(io, t, t->call.args[0], &flags, sizeof(flags));

		if (err < 0)
			return err == -EAGAIN;
	}
	return (flags & (CLONE_FILES | CLONE_THREAD)) == CLONE_FILES;
}

/*
 * An operation on a descriptor known not to be traced (a pipe, a socket,
 * /dev/null, an excluded path) writes no event and changes nothing the
 * tracer keeps: it needs no exit stop, and the hot path skips reading the
 * CPU clocks.  Reads and writes still count, in rchar and wchar.  A
 * descriptor the task had before we saw it open (inherited, received) is
 * looked up in /proc here, at the entry, while fdinfo's position is still
 * the one the call will use: at the exit a read has moved it.
 */
static bool on_untraced_fd(struct iotrace *io, struct tracee *t)
{
	const struct ofd *o;

	if (!acts_on_fd0(t))
		return false;
	o = lookup_fd(io, t, arg_fd(t, 0));
	return o && !o->traced;
}

/*
 * What the call must have to itself for its offset to be exact
 * (opqueue.h): the end of the file it appends to, or the position it
 * uses; 0 for anything else.  copy_file_range, sendfile and splice at a
 * position are left out: two descriptors, two keys, and an order to
 * keep between them.
 */
static uint64_t queue_key_of(struct iotrace *io, struct tracee *t)
{
	bool positioned = uses_position(t);
	const struct ofd *o;

	if (!positioned && !is_write(t))
		return 0;
	o = lookup_fd(io, t, arg_fd(t, 0));
	if (!o || !o->traced)
		return 0;
	if (writes_at_end(t, o))
		return o->inode_id ? opqueue_end_key(o->inode_id) : 0;
	return positioned && o->offset >= 0 ?
		       opqueue_position_key(o->handle_id) :
		       0;
}

enum entry_next iotrace_entry(struct iotrace *io, struct tracee *t,
			      const struct ptrace_syscall_info *si)
{
	uint32_t data = si->seccomp.ret_data;
	const struct ofd *settled;
	uint64_t key;
	int empty;

	io->syscall_stops++;
	t->call.id = (uint16_t)(data & SC_DATA_ID_MASK);
	if (t->call.id == SC_NATIVE_DATA)
		t->call.id = (uint16_t)fdfilter_native_id(si->seccomp.nr);
	if (t->call.id == SC_UNKNOWN || t->call.id >= SC_COUNT) {
		/* A syscall newer than our tables, or an unknown arch. */
		io->unknown_syscalls++;
		t->call.id = SC_UNKNOWN;
		return ENTRY_RESUME;
	}
	t->call.arch = si->arch;
	t->call.nr = si->seccomp.nr;
	t->call.x32 = si->arch == AUDIT_ARCH_X86_64 &&
		      (si->seccomp.nr & 0x40000000u); /* __X32_SYSCALL_BIT */
	memcpy(t->call.args, si->seccomp.args, sizeof(t->call.args));
	t->call.start_us = now_realtime_us();
	empty = names_fd_itself(io, t);
	t->call.empty_path = empty == 1;
	t->call.empty_path_unread = empty == -EAGAIN;
	if (on_untraced_fd(io, t))
		return ENTRY_RESUME; /* no event, and rchar/wchar count the bytes */
	process_times(t, &t->call.utime_us, &t->call.stime_us);
	t->call.alone = t->proc->live_threads == 1;
	t->call.at_entry = true;
	switch (t->call.id) {
	case SC_CLOSE:
		/* One the task had from the start and never used: the
		 * close of a file is a row all the same. */
		lookup_fd(io, t, arg_fd(t, 0));
		close_fd(io, t, arg_fd(t, 0));
		break;
	case SC_CLOSE_RANGE:
		on_close_range(io, t);
		break;
	case SC_IO_URING_SETUP:
	case SC_IO_URING_ENTER:
		io->used_io_uring = true;
		/* Its operations open files a read(2) may then use. */
		t->proc->scope.want_all = true;
		break;
	case SC_IO_SUBMIT:
		/* Its reads and writes, not read(2) and write(2), are in
		 * neither io.csv nor rchar and wchar. */
		io->used_linux_aio = true;
		break;
	case SC_CLONE: /* the filter stops it with CLONE_FILES only */
	case SC_CLONE3:
		if (shares_fd_table(io, t))
			t->proc->scope.want_all = true;
		break;
	case SC_SECCOMP:
	case SC_PRCTL_SECCOMP:
		/* Its filter could refuse the tracer's later ones. */
		t->proc->scope.want_all = true;
		break;
	case SC_EXECVE:
	case SC_EXECVEAT:
		t->call.rchar_before = process_rchar(io, t);
		note_entry_path(io, t);
		close_on_exec(io, t);
		break;
	case SC_CHDIR:
		note_entry_path(io, t);
		break;
	case SC_NEW_VIEW:
		view_move_starts(io, t);
		break;
	case SC_UNSHARE:
		if (t->call.args[0] & CLONE_NEWNS)
			view_move_starts(io, t);
		break;
	case SC_DUP2:
	case SC_DUP3:
		if (arg_fd(t, 0) != arg_fd(t, 1))
			closed_silently(io, t, arg_fd(t, 1));
		break;
	case SC_LSEEK:
		if (lseek_known_at_entry(io, t)) {
			on_lseek(io, t, (int64_t)t->call.args[1]);
			data &= ~SC_DATA_NEEDS_EXIT;
		}
		break;
	case SC_FSTAT:
	case SC_FSTATAT:
	case SC_STATX:
		settled = stat_known_at_entry(io, t);
		if (settled) {
			emit_stat_of(io, t, settled, 0);
			data &= ~SC_DATA_NEEDS_EXIT;
		}
		break;
	case SC_UNLINK:
	case SC_UNLINKAT:
	case SC_RMDIR:
	case SC_RENAME:
	case SC_RENAMEAT:
	case SC_RENAMEAT2:
		note_doomed_inode(io, t);
		break;
	}
	t->call.at_entry = false;
	if (!(data & SC_DATA_NEEDS_EXIT))
		return ENTRY_RESUME;
	key = queue_key_of(io, t);
	if (key && !opqueue_enter(&io->queues, t, key))
		return ENTRY_HOLD;
	return ENTRY_TO_EXIT;
}

/* A descriptor the process got without an open: known from here on,
 * so that a scoped filter names it if it is a traced file. */
static void note_new_fd(struct iotrace *io, struct tracee *t, int64_t fd)
{
	if (fd >= 0 && fd <= INT32_MAX)
		lookup_fd(io, t, (int)fd);
}

/*
 * open_by_handle_at(mount_fd, handle, flags) opens a file that no path
 * names: its row has the kernel's name for it.  One that failed names
 * nothing, and has no row.
 */
static void on_open_by_handle(struct iotrace *io, struct tracee *t, int64_t ret)
{
	struct op op = { .type = 'O',
			 .result = ret,
			 .flags = (uint32_t)t->call.args[2] };

	if (ret < 0 || ret > INT32_MAX)
		return;
	op.ofd = lookup_fd(io, t, (int)ret);
	if (!op.ofd || !op.ofd->traced)
		return;
	op.path = op.ofd->path;
	emit(io, t, &op);
}

#define MAX_RIGHTS_BYTES 4096

/* The descriptors an SCM_RIGHTS message brought (x86_64 layouts). */
static void note_rights(struct iotrace *io, struct tracee *t, uint64_t msghdr)
{
	struct msghdr m;
	unsigned char buf[MAX_RIGHTS_BYTES];
	size_t len;

	if (read_mem(io, t, msghdr, &m, sizeof(m)) < 0 || !m.msg_control ||
	    !m.msg_controllen)
		return;
	len = m.msg_controllen < sizeof(buf) ? m.msg_controllen : sizeof(buf);
	if (read_mem(io, t, (uint64_t)(uintptr_t)m.msg_control, buf, len) < 0)
		return;
	m.msg_control = buf;
	m.msg_controllen = len;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			note_new_fd(io, t, fd);
		}
	}
}

static void on_received(struct iotrace *io, struct tracee *t, int64_t ret)
{
	if (ret < 0 || is_i386(t) || t->call.x32)
		return;
	if (t->call.id == SC_RECVMSG) {
		note_rights(io, t, t->call.args[1]);
		return;
	}
	/* recvmmsg: ret messages, each a msghdr and its length. */
	for (int64_t i = 0; i < ret && i < 1024; i++)
		note_rights(io, t,
			    t->call.args[1] +
				    (uint64_t)i * sizeof(struct mmsghdr));
}

static void exit_files(struct iotrace *io, struct tracee *t, int64_t ret)
{
	const uint64_t *a = t->call.args;

	switch (t->call.id) {
	case SC_IO_URING_SETUP:
		/* A ring's operations can close a descriptor unseen. */
		if (ret >= 0)
			io->has_rings = true;
		break;
	case SC_OPEN:
		on_open(io, t, AT_FDCWD, a[0], (uint32_t)a[1], false, ret);
		break;
	case SC_CREAT:
		on_open(io, t, AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC,
			false, ret);
		break;
	case SC_OPENAT:
		on_open(io, t, arg_fd(t, 0), a[1], (uint32_t)a[2], false, ret);
		break;
	case SC_OPENAT2: {
		/* struct open_how: flags, mode, resolve */
		uint64_t how[3] = { 0, 0, 0 };

		read_mem(io, t, a[2], how, sizeof(how));
		on_open(io, t, arg_fd(t, 0), a[1], (uint32_t)how[0],
			(how[2] & RESOLVE_IN_ROOT) != 0, ret);
		break;
	}
	case SC_DUP:
		dup_to(io, t, arg_fd(t, 0), (int)ret, false);
		break;
	case SC_DUP2:
	case SC_DUP3:
		if (ret >= 0)
			dup_to(io, t, arg_fd(t, 0), (int)ret,
			       t->call.id == SC_DUP3 && (a[2] & O_CLOEXEC));
		break;
	case SC_FCNTL:
		on_fcntl(io, t, ret);
		break;
	case SC_IOCTL_CLOEXEC:
		if (ret == 0)
			fdtable_set_cloexec(caller_fds(t), arg_fd(t, 0),
					    (uint32_t)t->call.args[1] ==
						    FIOCLEX);
		break;
	case SC_EXECVE:
	case SC_EXECVEAT:
		on_exec(io, t, ret);
		break;
	case SC_UNSHARE:
		on_unshare(t, ret);
		break;
	case SC_NEW_VIEW: /* its end, in iotrace_call_over */
		break;
	case SC_MOUNT:
		if (ret == 0)
			file_mounts_changed(&io->files);
		break;
	case SC_RECVMSG:
	case SC_RECVMMSG:
		on_received(io, t, ret);
		break;
	case SC_PIDFD_GETFD:
	case SC_MEMFD_CREATE:
		note_new_fd(io, t, ret);
		break;
	case SC_OPEN_BY_HANDLE_AT:
		on_open_by_handle(io, t, ret);
		break;
	default:
		break;
	}
}

static void exit_names(struct iotrace *io, struct tracee *t, int64_t ret)
{
	const uint64_t *a = t->call.args;

	switch (t->call.id) {
	case SC_UNLINK:
	case SC_RMDIR:
		on_path_op(io, t, 'U', AT_FDCWD, a[0], ret, 0);
		break;
	case SC_UNLINKAT:
		on_path_op(io, t, 'U', arg_fd(t, 0), a[1], ret, 0);
		break;
	case SC_MKDIR:
		on_path_op(io, t, 'D', AT_FDCWD, a[0], ret, 0);
		break;
	case SC_MKDIRAT:
		on_path_op(io, t, 'D', arg_fd(t, 0), a[1], ret, 0);
		break;
	case SC_RENAME:
		on_two_paths(io, t, 'N', AT_FDCWD, a[0], AT_FDCWD, a[1], ret);
		break;
	case SC_RENAMEAT:
	case SC_RENAMEAT2:
		on_two_paths(io, t, 'N', arg_fd(t, 0), a[1], arg_fd(t, 2), a[3],
			     ret);
		break;
	case SC_LINK:
		on_two_paths(io, t, 'H', AT_FDCWD, a[0], AT_FDCWD, a[1], ret);
		break;
	case SC_LINKAT:
		on_two_paths(io, t, 'H', arg_fd(t, 0), a[1], arg_fd(t, 2), a[3],
			     ret);
		break;
	case SC_SYMLINK:
		on_two_paths(io, t, 'H', -1, a[0], AT_FDCWD, a[1], ret);
		break;
	case SC_SYMLINKAT:
		on_two_paths(io, t, 'H', -1, a[0], arg_fd(t, 1), a[2], ret);
		break;
	case SC_TRUNCATE:
		on_path_op(io, t, 'T', AT_FDCWD, a[0], ret,
			   (uint64_t)arg_long(t, 1));
		break;
	case SC_TRUNCATE64:
		on_path_op(io, t, 'T', AT_FDCWD, a[0], ret,
			   (uint64_t)arg_off64(t, 1));
		break;
	case SC_CHDIR:
	case SC_FCHDIR:
		on_chdir(io, t, ret);
		break;
	default:
		exit_files(io, t, ret);
	}
}

static void exit_meta(struct iotrace *io, struct tracee *t, int64_t ret)
{
	const uint64_t *a = t->call.args;

	switch (t->call.id) {
	case SC_STAT:
	case SC_LSTAT:
	case SC_ACCESS:
		on_path_op(io, t, 'S', AT_FDCWD, a[0], ret, 0);
		break;
	case SC_FSTAT:
		on_stat_fd(io, t, arg_fd(t, 0), ret);
		break;
	case SC_FSTATAT:
	case SC_STATX:
	case SC_FACCESSAT:
	case SC_FACCESSAT2:
		if (t->call.empty_path)
			on_stat_empty_path(io, t, ret);
		else
			on_path_op(io, t, 'S', arg_fd(t, 0), a[1], ret, 0);
		break;
	case SC_FTRUNCATE:
	case SC_FTRUNCATE64: {
		struct ofd *o = lookup_fd(io, t, arg_fd(t, 0));
		struct op op = { .type = 'T',
				 .result = ret,
				 .ofd = o,
				 .offset = -1,
				 .size = (uint64_t)(t->call.id == SC_FTRUNCATE ?
							    arg_long(t, 1) :
							    arg_off64(t, 1)) };

		if (o && o->traced)
			emit(io, t, &op);
		break;
	}
	case SC_MMAP:
	case SC_MMAP2:
		on_mmap(io, t, ret);
		break;
	default:
		exit_names(io, t, ret);
	}
}

static void decode_exit(struct iotrace *io, struct tracee *t,
			const struct ptrace_syscall_info *si)
{
	const uint64_t *a = t->call.args;
	int64_t ret = si->exit.rval;

	if (t->call.doomed_ino && ret == 0)
		file_gone(&io->files, t->call.doomed_dev, t->call.doomed_ino);
	if (t->call.doomed_unread && ret == 0)
		io->entry_paths_unread++;
	t->call.doomed_ino = 0;
	t->call.doomed_unread = false;
	if (t->call.empty_path_unread) /* the kernel has read it now */
		t->call.empty_path = names_fd_itself(io, t) == 1;
	t->call.empty_path_unread = false;

	io->syscall_stops++;
	switch (t->call.id) {
	case SC_READ:
		on_data(io, t, 'R', a[2], 0, ret);
		break;
	case SC_WRITE:
		on_data(io, t, 'W', a[2], 0, ret);
		break;
	case SC_PREAD:
		on_data(io, t, 'R', a[2], arg_off64(t, 3), ret);
		break;
	case SC_PWRITE:
		on_data(io, t, 'W', a[2], arg_off64(t, 3), ret);
		break;
	case SC_READV:
		on_data(io, t, 'R', iov_total(io, t, a[1], (int)a[2]), 0, ret);
		break;
	case SC_WRITEV:
		on_data(io, t, 'W', iov_total(io, t, a[1], (int)a[2]), 0, ret);
		break;
	case SC_PREADV:
	case SC_PREADV2:
		on_data(io, t, 'R', iov_total(io, t, a[1], (int)a[2]),
			arg_off64(t, 3), ret);
		break;
	case SC_PWRITEV:
	case SC_PWRITEV2:
		on_data(io, t, 'W', iov_total(io, t, a[1], (int)a[2]),
			arg_off64(t, 3), ret);
		break;
	case SC_LSEEK:
	case SC_LLSEEK:
		on_lseek(io, t, ret);
		break;
	case SC_COPY_FILE_RANGE:
	case SC_SPLICE:
		on_transfer(io, t, arg_fd(t, 0), a[1], arg_fd(t, 2), a[3], a[4],
			    ret);
		break;
	case SC_SENDFILE:
	case SC_SENDFILE64:
		on_transfer(io, t, arg_fd(t, 1), a[2], arg_fd(t, 0), 0, a[3],
			    ret);
		break;
	case SC_FALLOCATE:
		on_range(io, t, 'A', 2, ret);
		break;
	case SC_IOCTL_CLONE:
		on_clone(io, t, ret);
		break;
	case SC_SYNC_FILE_RANGE:
		on_range(io, t, 'F', 1, ret);
		break;
	case SC_FSYNC:
	case SC_FDATASYNC: {
		struct ofd *o = lookup_fd(io, t, arg_fd(t, 0));
		struct op op = {
			.type = 'F', .result = ret, .ofd = o, .offset = -1
		};

		if (o && o->traced)
			emit(io, t, &op);
		break;
	}
	default:
		exit_meta(io, t, ret);
	}
}

struct tracee *iotrace_call_over(struct iotrace *io, struct tracee *t)
{
	view_move_ends(io, t);
	return t->queue_key ? opqueue_leave(&io->queues, t) : NULL;
}

struct tracee *iotrace_exit(struct iotrace *io, struct tracee *t,
			    const struct ptrace_syscall_info *si)
{
	decode_exit(io, t, si);
	return iotrace_call_over(io, t);
}

/*
 * rchar and wchar count every byte the process's syscalls moved (and the
 * kernel's reads at exec) but splice's: what io.csv does not hold went
 * through untraced descriptors.  So reads and writes on those need no
 * exit stop.
 */
static void settle_untraced(struct proc_usage *u)
{
	if (!u->measured)
		return;
	u->untraced_read_bytes = u64_minus(
		u->rchar, u->traced_read_bytes - u->spliced_read_bytes);
	u->untraced_write_bytes = u64_minus(
		u->wchar, u->traced_write_bytes - u->spliced_write_bytes);
}

/* The files open in fds, which t sees, close with it: their sizes now.
 * At an exit stop its descriptors are still open. */
static void sizes_at_close(struct iotrace *io, struct tracee *t,
			   const struct fdtable *fds)
{
	for (int fd = 0; fds && fd < fds->size; fd++) {
		const struct ofd *o = fds->slot[fd].ofd;

		if (o && o->traced && o->inode_id)
			file_closed(&io->files, o->inode_id,
				    closing_size(io, t, fd, o));
	}
}

/* Whether no other live thread of t's uses its process's table. */
static bool last_on_process_fds(const struct tracee *t)
{
	for (const struct tracee *o = t->proc->threads; o; o = o->next)
		if (o != t && !o->exit_stopped && !o->fds)
			return false;
	return true;
}

void iotrace_process_end(struct iotrace *io, struct process *p)
{
	if (p->root_gen)
		file_view_leave(&io->files, p->root_view);
	p->root_gen = 0;
}

void iotrace_thread_exit(struct iotrace *io, struct tracee *t, bool last)
{
	struct process *p = t->proc;

	if (last)
		settle_untraced(&p->rec.usage);
	if (t->fds && t->fds->refs == 1)
		sizes_at_close(io, t, t->fds);
	else if (!t->fds && (last || (p->fds_split && last_on_process_fds(t))))
		sizes_at_close(io, t, p->fds);
}

/* The table the new process starts with: a copy of its creator's, or
 * that table itself (clone(CLONE_FILES) without CLONE_THREAD). */
void iotrace_fork(struct tracee *creator, struct process *child)
{
	struct process *parent = creator->proc;
	struct fdtable *fds = creator->fds ? creator->fds : parent->fds;

	if (parent->cwd_hint && !child->cwd_hint)
		child->cwd_hint = xstrdup(parent->cwd_hint);
	/* clone(CLONE_FS): a chdir of either moves both. */
	if (kcmp_order(creator->tid, child->view_tid, KCMP_FS) == 0) {
		parent->cwd_per_call = true;
		child->cwd_per_call = true;
	}
	if (child->fds || !fds)
		return;
	if (kcmp_order(creator->tid, child->view_tid, KCMP_FILES) == 0) {
		child->fds = fds;
		child->fds->refs++;
		return;
	}
	child->fds = fdtable_copy(fds);
}
