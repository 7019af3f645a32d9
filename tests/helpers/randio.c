// SPDX-License-Identifier: MIT
/*
 * randio SEED OPS DIR: OPS file operations drawn from SEED on a few files
 * in DIR and DIR/sub, through descriptors that open, dup, dup2, dup3,
 * fork, threads (one on a table of its own after unshare(CLONE_FILES),
 * whose opens and closes end with it), exec (this program execs itself
 * to go on with those not
 * close-on-exec) and SCM_RIGHTS to a child share, close, close_range and
 * reuse: reads and writes
 * of every kind (sequential, positional, vectored, preadv2/pwritev2 at the
 * position and with RWF_APPEND, O_APPEND, which F_SETFL turns on and off),
 * lseek past the end, ftruncate and truncate, sendfile, copy_file_range
 * and splice (through a pipe) with and without offsets, close-on-exec set
 * and cleared by fcntl and ioctl, fsync, fallocate, mmap, fstat and stat,
 * rename and unlink of open files, and calls that fail (a read on a
 * write-only descriptor, copy_file_range to an O_APPEND one).  Paths are absolute, relative to a cwd that chdir
 * and fchdir move, through "..", or relative to a directory descriptor.
 * Built for x86_64 and i386 (randio32: _llseek, pread64's split offsets,
 * 32-bit iovecs, sendfile's 32-bit off_t, mmap2).
 *
 * It prints one line per operation, the oracle for io.csv, taken from the
 * kernel and not from a model of it: the file position a call used is
 * /proc/thread-self/fdinfo/N's pos before it, or where an append put the
 * data (the size after, less the bytes written); the file is the dev:ino
 * of /proc/thread-self/fd/N, an open's path that link's target (paths under /proc
 * are not traced, so these reads add no rows; its stat is through
 * /proc/self/root, as a stat of /proc/thread-self/fd/N is one of the file
 * on N).  One line:
 *   TID TYPE OFD OFFSET SIZE RESULT DEV:INO PATH PATH2
 * OFD numbers this program's opens (dup and fork share one, as the
 * kernel does); OFFSET -2 is "not checked" (a failed call's); DEV:INO,
 * PATH and PATH2 are "-" where they do not apply.  Each process ends with
 *   PID I PROC_READ_BYTES STDOUT_BYTES
 * what it read from /proc and wrote to stdout before that line: with the
 * kernel's reads at exec, all of its rchar and wchar that is not in io.csv.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scmfd.h"

#define NAMES 5
#define SLOTS 8
#define UNCHECKED (-2LL)

struct slot {
	int fd; /* -1: free */
	long long ofd;
	int flags; /* the open's flags */
	bool cloexec; /* this descriptor's: an exec closes it */
};

static const char *dir;
static uint64_t rng;
static struct slot slots[SLOTS];
static long long ofds_opened;
static char data[70000];

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned pick(unsigned n)
{
	return (unsigned)(next() % n);
}

static void die(const char *what)
{
	fprintf(stderr, "randio: %s: %s\n", what, strerror(errno));
	_exit(3);
}

/*
 * What this process read from /proc and wrote to stdout (a pipe): the
 * bytes of its rchar and wchar that io.csv has no row for.  Its last line
 * says them (report_untraced).
 */
static unsigned long long proc_read_bytes, stdout_bytes;

/* One line in one write: the lines of a child and a thread stay whole. */
static void emit(const char *fmt, ...)
{
	char line[8192];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		die("line too long");
	line[n++] = '\n';
	if (write(1, line, (size_t)n) != n)
		die("write");
	stdout_bytes += (unsigned long long)n;
}

/* The process's last line: PID I PROC_READ_BYTES STDOUT_BYTES, the
 * latter without this line's own. */
static void report_untraced(void)
{
	emit("%d I %llu %llu", getpid(), proc_read_bytes, stdout_bytes);
}

/* Unique across the processes: a child's numbers are its own. */
static long long new_ofd(void)
{
	return (long long)gettid() * 1000000 + ++ofds_opened;
}

static long long result(long long ret)
{
	return ret < 0 ? -errno : ret;
}

/* /proc/thread-self/fdinfo/N's "pos:" and "flags:" (octal) lines: the
 * calling thread's table, which may be its own (op_thread). */
static void fd_info(int fd, long long *pos, int *flags)
{
	char path[64], text[512];
	const char *line;
	ssize_t n;
	int info;

	snprintf(path, sizeof(path), "/proc/thread-self/fdinfo/%d", fd);
	info = open(path, O_RDONLY | O_CLOEXEC);
	if (info < 0)
		die(path);
	n = read(info, text, sizeof(text) - 1);
	close(info);
	if (n <= 0)
		die("fdinfo");
	proc_read_bytes += (unsigned long long)n;
	text[n] = '\0';
	line = strstr(text, "flags:");
	if (!line)
		die("fdinfo flags");
	*pos = strtoll(text + strlen("pos:"), NULL, 10);
	*flags = (int)strtol(line + strlen("flags:"), NULL, 8);
}

static long long fd_pos(int fd)
{
	long long pos;
	int flags;

	fd_info(fd, &pos, &flags);
	return pos;
}

/* Whether writes through fd append: the description's flag now, which
 * F_SETFL through any descriptor of it, in any process, may have turned. */
static bool appends(int fd)
{
	long long pos;
	int flags;

	fd_info(fd, &pos, &flags);
	return (flags & O_APPEND) != 0;
}

static struct stat64 proc_stat(const char *path)
{
	struct stat64 st;

	if (stat64(path, &st) < 0)
		die(path);
	return st;
}

static struct stat64 fd_stat(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/root/proc/thread-self/fd/%d",
		 fd);
	return proc_stat(path);
}

static void format_id(const struct stat64 *st, char *id, size_t size)
{
	snprintf(id, size, "%u:%u:%llu", major(st->st_dev), minor(st->st_dev),
		 (unsigned long long)st->st_ino);
}

static void file_id(int fd, char *id, size_t size)
{
	struct stat64 st = fd_stat(fd);

	format_id(&st, id, size);
}

/* Through /proc/self/root: a stat iowrap does not trace. */
static void path_id(const char *path, char *id, size_t size)
{
	char proc_path[4200];
	struct stat64 st;

	snprintf(proc_path, sizeof(proc_path), "/proc/self/root%s", path);
	if (stat64(proc_path, &st) < 0)
		snprintf(id, size, "-");
	else
		format_id(&st, id, size);
}

/* The kernel's name for what fd is open on. */
static void fd_path(int fd, char *path, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/thread-self/fd/%d", fd);
	n = readlink(link, path, size - 1);
	if (n < 0)
		die(link);
	path[n] = '\0';
}

static void name_of(unsigned i, char *path, size_t size)
{
	/* 3 and 4 live in a subdirectory. */
	snprintf(path, size, "%s/%s%u", dir, i < 3 ? "" : "sub/", i);
}

/* Where the cwd is: elsewhere (at the start), DIR or DIR/sub. */
enum { CWD_ELSEWHERE, CWD_DIR, CWD_SUB };
static int cwd_at;

/*
 * File i's name as the call gets it, in one of the ways a task names
 * files: absolute, relative to the cwd, or through ".."; abs gets its
 * absolute path, what io.csv must say.
 */
static void some_path(unsigned i, char *given, char *abs, size_t size)
{
	bool in_sub = i >= 3;

	name_of(i, abs, size);
	switch (cwd_at == CWD_ELSEWHERE ? 0 : pick(3)) {
	case 0:
		if (pick(2))
			snprintf(given, size, "%s", abs);
		else
			snprintf(given, size, "%s/sub/../%s%u", dir,
				 in_sub ? "sub/" : "", i);
		break;
	case 1:
		if (cwd_at == CWD_DIR)
			snprintf(given, size, "%s%u", in_sub ? "sub/" : "", i);
		else
			snprintf(given, size, "%s%u", in_sub ? "" : "../", i);
		break;
	default:
		if (cwd_at == CWD_DIR)
			snprintf(given, size, "sub/../%s%u",
				 in_sub ? "sub/" : "", i);
		else
			snprintf(given, size, "../%s%u", in_sub ? "sub/" : "",
				 i);
		break;
	}
}

static struct slot *used_slot(void)
{
	unsigned start = pick(SLOTS);

	for (unsigned i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[(start + i) % SLOTS];

		if (s->fd >= 0)
			return s;
	}
	return NULL;
}

static struct slot *free_slot(void)
{
	for (unsigned i = 0; i < SLOTS; i++)
		if (slots[i].fd < 0)
			return &slots[i];
	return NULL;
}

/* After a close or a dup2 over it, no slot names fd any more. */
static void forget_fd(int fd)
{
	for (unsigned i = 0; i < SLOTS; i++)
		if (slots[i].fd == fd)
			slots[i].fd = -1;
}

static void emit_data(const struct slot *s, char type, long long off,
		      long long size, long long res)
{
	char id[64];

	file_id(s->fd, id, sizeof(id));
	emit("%d %c %lld %lld %lld %lld %s - -", gettid(), type, s->ofd,
	     res < 0 ? UNCHECKED : off, size, res, id);
}

/* Where a write went: the position it used, or for an append the end
 * (a write of nothing never looks for the end: it stays at the position). */
static long long written_at(const struct slot *s, long long pos_before,
			    bool append, long long res)
{
	if (!append || res <= 0)
		return pos_before;
	return (long long)fd_stat(s->fd).st_size - res;
}

static size_t some_size(void)
{
	static const size_t sizes[] = { 0, 1, 100, 4096, 5000, 65536 };

	return sizes[pick(6)] + (pick(2) ? pick(300) : 0);
}

/* An O_PATH descriptor of DIR or DIR/sub, with its row. */
static int open_dir(bool sub, long long *ofd)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s%s", dir, sub ? "/sub" : "");
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	*ofd = new_ofd();
	emit("%d O %lld 0 0 %d - %s -", gettid(), *ofd, fd, path);
	return fd;
}

static void close_dir(int fd, long long ofd)
{
	emit("%d C %lld -1 0 %lld - - -", gettid(), ofd, result(close(fd)));
}

static void op_open(void)
{
	static const int modes[] = { O_RDONLY, O_WRONLY, O_RDWR };
	struct slot *s = free_slot();
	unsigned name = pick(NAMES);
	char given[4096], abs[4096], id[64];
	int flags = modes[pick(3)] | O_CREAT;
	long long dir_ofd = 0;
	int fd, dirfd = -1;

	if (!s)
		return;
	if (pick(3) == 0)
		flags |= O_APPEND;
	if (pick(8) == 0)
		flags |= O_TRUNC;
	if (pick(4) == 0)
		flags |= O_CLOEXEC;
	if (pick(3) == 0) {
		/* Relative to a directory descriptor, maybe through "..". */
		static const char *const forms[2][2][2] = {
			/* from DIR: a file in DIR, in DIR/sub */
			{ { "%u", "sub/../%u" },
			  { "sub/%u", "sub/../sub/%u" } },
			/* from DIR/sub */
			{ { "../%u", "../sub/../%u" }, { "%u", "../sub/%u" } },
		};
		bool from_sub = pick(2);

		dirfd = open_dir(from_sub, &dir_ofd);
		snprintf(given, sizeof(given),
			 forms[from_sub][name >= 3][pick(2)], name);
		fd = openat(dirfd, given, flags, 0644);
	} else {
		some_path(name, given, abs, sizeof(given));
		fd = open(given, flags, 0644);
	}
	if (fd < 0)
		die(given);
	s->fd = fd;
	s->ofd = new_ofd();
	s->flags = flags;
	s->cloexec = (flags & O_CLOEXEC) != 0;
	file_id(fd, id, sizeof(id));
	fd_path(fd, abs, sizeof(abs));
	emit("%d O %lld %lld 0 %d %s %s -", gettid(), s->ofd, fd_pos(fd), fd,
	     id, abs);
	if (dirfd >= 0)
		close_dir(dirfd, dir_ofd);
}

/* chdir to DIR or DIR/sub by name, by "..", or fchdir to a descriptor. */
static void op_chdir(void)
{
	bool to_sub = pick(2);
	char path[4096];
	long long ofd;
	int fd;

	switch (pick(3)) {
	case 0:
		snprintf(path, sizeof(path), "%s%s", dir, to_sub ? "/sub" : "");
		if (chdir(path) < 0)
			die(path);
		break;
	case 1:
		if (cwd_at != CWD_SUB)
			return;
		if (chdir("..") < 0)
			die("..");
		to_sub = false;
		break;
	default:
		fd = open_dir(to_sub, &ofd);
		if (fchdir(fd) < 0)
			die("fchdir");
		close_dir(fd, ofd);
		break;
	}
	cwd_at = to_sub ? CWD_SUB : CWD_DIR;
}

static void op_close(void)
{
	struct slot *s = used_slot();

	if (!s)
		return;
	emit("%d C %lld -1 0 %lld - - -", gettid(), s->ofd,
	     result(close(s->fd)));
	s->fd = -1;
}

/* F_SETFL turns O_APPEND on or off for the description: for every
 * descriptor that shares it, in every process. */
static void op_setfl(void)
{
	struct slot *s = used_slot();

	if (s && fcntl(s->fd, F_SETFL, appends(s->fd) ? 0 : O_APPEND) < 0)
		die("F_SETFL");
}

/* Close-on-exec on or off for one descriptor, by ioctl or fcntl. */
static void op_cloexec(void)
{
	struct slot *s = used_slot();
	bool on = pick(2);
	int ret;

	if (!s)
		return;
	if (pick(2))
		ret = ioctl(s->fd, on ? FIOCLEX : FIONCLEX);
	else
		ret = fcntl(s->fd, F_SETFD, on ? FD_CLOEXEC : 0);
	if (ret < 0)
		die("cloexec");
	s->cloexec = on;
}

/* From one file into a pipe and from the pipe into another file, each at
 * the position or at an offset: an R on the first, a W on the second. */
static void op_splice(void)
{
	struct slot *in = used_slot(), *out = used_slot();
	long long in_off, out_off, in_pos, out_pos, got, put;
	loff_t in_arg = pick(70000), out_arg = pick(70000);
	bool in_given = pick(2), out_given = pick(2);
	size_t n = some_size();
	int pipefd[2];

	if (!in || !out)
		return;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		die("pipe2");
	in_pos = fd_pos(in->fd);
	in_off = in_given ? in_arg : in_pos;
	got = result(splice(in->fd, in_given ? &in_arg : NULL, pipefd[1], NULL,
			    n, 0));
	emit_data(in, 'R', in_off, (long long)n, got);
	out_pos = fd_pos(out->fd);
	out_off = out_given ? out_arg : out_pos;
	put = result(splice(pipefd[0], NULL, out->fd,
			    out_given ? &out_arg : NULL,
			    got > 0 ? (size_t)got : 1, SPLICE_F_NONBLOCK));
	emit_data(out, 'W', out_off, got > 0 ? got : 1, put);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* close_range over a few numbers: a C row for each one open, lowest
 * first. */
static void op_close_range(void)
{
	unsigned first = 3 + pick(8), last = first + pick(24);
	long long res = result(syscall(SYS_close_range, first, last, 0));

	for (unsigned fd = first; fd <= last; fd++) {
		for (unsigned i = 0; i < SLOTS; i++) {
			if (slots[i].fd != (int)fd)
				continue;
			emit("%d C %lld -1 0 %lld - - -", gettid(),
			     slots[i].ofd, res);
			slots[i].fd = -1;
		}
	}
}

static void op_mmap(void)
{
	struct slot *s = used_slot();
	size_t len = pick(20000);
	long long off = (long long)pick(8) * 4096, res;
	void *addr;

	if (!s)
		return;
	addr = mmap(NULL, len, PROT_READ, pick(2) ? MAP_SHARED : MAP_PRIVATE,
		    s->fd, (off_t)off);
	res = addr == MAP_FAILED ? -errno : (long long)(uintptr_t)addr;
	if (addr != MAP_FAILED)
		munmap(addr, len);
	emit_data(s, 'M', off, (long long)len, res);
}

/* dup, dup2 over a slot's descriptor or a free number, F_DUPFD_CLOEXEC:
 * no row, but the new number shares the description. */
static void op_dup(void)
{
	struct slot *s = used_slot(), *to = free_slot();
	int fd;

	if (!s || !to)
		return;
	bool cloexec = false;

	switch (pick(3)) {
	case 0:
		fd = dup(s->fd);
		break;
	case 1: {
		struct slot *over = used_slot();
		int target = over && pick(2) ? over->fd : 20 + (int)pick(10);

		if (target == s->fd)
			return;
		forget_fd(target);
		cloexec = pick(2);
		fd = cloexec ? dup3(s->fd, target, O_CLOEXEC) :
			       dup2(s->fd, target);
		break;
	}
	default:
		fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
		cloexec = true;
		break;
	}
	if (fd < 0)
		die("dup");
	*to = *s;
	to->fd = fd;
	to->cloexec = cloexec;
}

static void op_read(void)
{
	struct slot *s = used_slot();
	size_t n = some_size();
	long long pos, off, res;
	struct iovec iov[3];

	if (!s)
		return;
	pos = fd_pos(s->fd);
	iov[0] = (struct iovec){ data, n / 3 };
	iov[1] = (struct iovec){ data + n / 3, n / 3 };
	iov[2] = (struct iovec){ data + 2 * (n / 3), n - 2 * (n / 3) };
	switch (pick(5)) {
	case 0:
		off = pos;
		res = result(read(s->fd, data, n));
		break;
	case 1:
		off = pick(70000);
		res = result(pread(s->fd, data, n, off));
		break;
	case 2:
		off = pos;
		res = result(readv(s->fd, iov, 3));
		break;
	case 3:
		off = pick(70000);
		res = result(preadv(s->fd, iov, 3, off));
		break;
	default:
		off = pos;
		res = result(preadv2(s->fd, iov, 3, -1, 0));
		break;
	}
	emit_data(s, 'R', off, (long long)n, res);
}

static void op_write(void)
{
	struct slot *s = used_slot();
	size_t n = some_size();
	long long pos, off, res;
	bool append;
	struct iovec iov[2];

	if (!s)
		return;
	pos = fd_pos(s->fd);
	append = appends(s->fd);
	iov[0] = (struct iovec){ data, n / 2 };
	iov[1] = (struct iovec){ data + n / 2, n - n / 2 };
	switch (pick(6)) {
	case 0:
		off = pos;
		res = result(write(s->fd, data, n));
		break;
	case 1: /* O_APPEND makes a pwrite append too */
		off = pick(70000);
		res = result(pwrite(s->fd, data, n, off));
		break;
	case 2:
		off = pos;
		res = result(writev(s->fd, iov, 2));
		break;
	case 3:
		off = pick(70000);
		res = result(pwritev(s->fd, iov, 2, off));
		break;
	case 4:
		off = pos;
		res = result(pwritev2(s->fd, iov, 2, -1, 0));
		break;
	default:
		off = pick(2) ? -1 : (long long)pick(70000);
		res = result(pwritev2(s->fd, iov, 2, off, RWF_APPEND));
		if (off < 0)
			off = pos;
		append = true;
		break;
	}
	emit_data(s, 'W', written_at(s, off, append, res), (long long)n, res);
}

static void op_lseek(void)
{
	static const int whences[] = { SEEK_SET, SEEK_CUR, SEEK_END };
	struct slot *s = used_slot();
	long long res;

	if (!s)
		return;
	res = result(lseek(s->fd, (off_t)pick(80000) - (pick(3) ? 0 : 4000),
			   whences[pick(3)]));
	emit_data(s, 'L', res < 0 ? -1 : res, 0, res);
}

static void op_truncate(void)
{
	struct slot *s = used_slot();
	long long len = pick(70000), res;

	if (pick(3) == 0) {
		char given[4096], path[4096], id[64];

		some_path(pick(NAMES), given, path, sizeof(path));
		res = result(truncate(given, len));
		path_id(path, id, sizeof(id));
		emit("%d T 0 %lld %lld %lld %s %s -", gettid(), UNCHECKED, len,
		     res, res < 0 ? "-" : id, path);
		return;
	}
	if (!s)
		return;
	res = result(ftruncate(s->fd, len));
	emit_data(s, 'T', UNCHECKED, len, res);
}

/* sendfile or copy_file_range from one slot's file to another's: an R on
 * the source and a W on the destination, each at its own position. */
static void op_transfer(void)
{
	struct slot *in = used_slot(), *out = used_slot();
	size_t n = some_size();
	long long in_pos, out_pos, in_off, out_off, res;
	loff_t in_arg, out_arg;
	bool cfr = pick(2), in_given = pick(2), out_given = cfr && pick(2);

	if (!in || !out)
		return;
	in_pos = fd_pos(in->fd);
	out_pos = fd_pos(out->fd);
	in_arg = pick(70000);
	out_arg = pick(70000);
	in_off = in_given ? in_arg : in_pos;
	out_off = out_given ? out_arg : out_pos;
	if (cfr)
		res = result(copy_file_range(
			in->fd, in_given ? &in_arg : NULL, out->fd,
			out_given ? &out_arg : NULL, n, 0));
	else {
		off_t off = (off_t)in_arg; /* 32 bits on i386: sendfile */

		res = result(
			sendfile(out->fd, in->fd, in_given ? &off : NULL, n));
	}
	emit_data(in, 'R', in_off, (long long)n, res);
	emit_data(out, 'W', written_at(out, out_off, appends(out->fd), res),
		  (long long)n, res);
}

static void op_sync_or_allocate(void)
{
	struct slot *s = used_slot();
	long long off = pick(70000), len = 1 + pick(9000), res;

	if (!s)
		return;
	switch (pick(3)) {
	case 0:
		emit_data(s, 'F', -1, 0, result(fsync(s->fd)));
		break;
	case 1:
		emit_data(s, 'F', -1, 0, result(fdatasync(s->fd)));
		break;
	default:
		res = result(fallocate(s->fd, 0, off, len));
		emit_data(s, 'A', off, len, res);
		break;
	}
}

static void op_stat(void)
{
	struct slot *s = used_slot();
	char given[4096], path[4096], id[64];
	struct stat st;
	long long res;

	if (s && pick(2)) {
		res = result(fstat(s->fd, &st));
		emit_data(s, 'S', UNCHECKED, 0, res);
		return;
	}
	some_path(pick(NAMES), given, path, sizeof(path));
	res = result(stat(given, &st));
	path_id(path, id, sizeof(id));
	emit("%d S 0 %lld 0 %lld %s %s -", gettid(), UNCHECKED, res,
	     res < 0 ? "-" : id, path);
}

/* Renames and unlinks keep the open files open: their rows must stay
 * the same file's. */
static void op_name(void)
{
	char from[4096], to[4096], from_abs[4096], to_abs[4096];
	long long res;

	some_path(pick(NAMES), from, from_abs, sizeof(from));
	if (pick(3) == 0) {
		res = result(unlink(from));
		emit("%d U 0 %lld 0 %lld - %s -", gettid(), UNCHECKED, res,
		     from_abs);
		return;
	}
	some_path(pick(NAMES), to, to_abs, sizeof(to));
	res = result(rename(from, to));
	emit("%d N 0 %lld 0 %lld - %s %s", gettid(), UNCHECKED, res, from_abs,
	     to_abs);
}

static void run_ops(int count);

/* A child's failure is the run's. */
static void wait_for(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (status != 0) {
		fprintf(stderr, "randio: child %d ended with status %#x\n",
			(int)pid, status);
		_exit(3);
	}
}

/*
 * A child execs this program again, which goes on with the descriptors
 * that survive the exec (the close-on-exec ones are closed, with no row)
 * and the cwd, from the state in its arguments: "CWD FD:OFD:FLAGS ...".
 */
static void op_exec(void)
{
	char seed[32], count[16], state[1024];
	size_t len;
	pid_t pid;

	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)next());
	snprintf(count, sizeof(count), "%u", 1 + pick(12));
	len = (size_t)snprintf(state, sizeof(state), "%d", cwd_at);
	for (unsigned i = 0; i < SLOTS; i++)
		if (slots[i].fd >= 0 && !slots[i].cloexec)
			len += (size_t)snprintf(state + len,
						sizeof(state) - len,
						" %d:%lld:%d", slots[i].fd,
						slots[i].ofd, slots[i].flags);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execl("/proc/self/exe", "randio", seed, count, dir, state,
		      (char *)NULL);
		die("exec");
	}
	wait_for(pid);
}

/* In the exec: the descriptors and cwd the state says. */
static void take_state(const char *state)
{
	char *end;
	unsigned n = 0;

	cwd_at = (int)strtol(state, &end, 10);
	while (*end == ' ' && n < SLOTS) {
		struct slot *s = &slots[n++];

		s->fd = (int)strtol(end + 1, &end, 10);
		s->ofd = strtoll(end + 1, &end, 10);
		s->flags = (int)strtol(end + 1, &end, 10);
	}
}

/* A child works on the descriptors it inherits, then the parent goes on
 * with the positions it left. */
static void op_fork(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		rng ^= 0x9e3779b97f4a7c15ull;
		proc_read_bytes = stdout_bytes = 0; /* a new process's */
		run_ops(1 + (int)pick(12));
		report_untraced();
		_exit(0);
	}
	wait_for(pid);
}

/* A descriptor a child receives over a socket (SCM_RIGHTS): a number of
 * its own for the same description, learned at its recvmsg. */
static int receive_fd(int sock, bool cloexec)
{
	int fd = scm_receive_fd(sock, cloexec ? MSG_CMSG_CLOEXEC : 0);

	if (fd < 0)
		die("recvmsg");
	return fd;
}

static void send_fd(int sock, int fd)
{
	if (scm_send_fd(sock, fd) < 0)
		die("sendmsg");
}

/* A child gets one of the descriptors again over a socket and works on
 * it (and on those it inherited) before it ends. */
static void op_sendfd(void)
{
	struct slot *s = used_slot(), *to = free_slot();
	int sock[2];
	pid_t pid;

	if (!s || !to)
		return;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) < 0)
		die("socketpair");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		bool cloexec = pick(2);

		rng ^= 0x51ed270b27ad1ull;
		proc_read_bytes = stdout_bytes = 0;
		close(sock[0]);
		*to = *s;
		to->fd = receive_fd(sock[1], cloexec);
		to->cloexec = cloexec;
		close(sock[1]);
		run_ops(1 + (int)pick(12));
		report_untraced();
		_exit(0);
	}
	send_fd(sock[0], s->fd);
	close(sock[0]);
	close(sock[1]);
	wait_for(pid);
}

static void *thread_main(void *own_table)
{
	if (own_table && unshare(CLONE_FILES) < 0)
		die("unshare");
	run_ops(1 + (int)pick(12));
	return NULL;
}

/*
 * A thread shares the table: its closes and opens are the process's.  One
 * time in two it unshare(CLONE_FILES)s first and has a table of its own:
 * a copy of the process's, the same descriptions, whose opens, dups and
 * closes are its own and which the kernel closes when it ends, so the
 * process's table is as it was before.  (Not an operation of its own: one
 * more that nests runs makes their tree grow without end.)
 */
static void op_thread(void)
{
	bool own_table = pick(2);
	struct slot kept[SLOTS];
	pthread_t th;

	memcpy(kept, slots, sizeof(kept));
	if (pthread_create(&th, NULL, thread_main,
			   own_table ? "own table" : NULL) != 0 ||
	    pthread_join(th, NULL) != 0)
		die("thread");
	if (own_table)
		memcpy(slots, kept, sizeof(kept));
}

static void run_ops(int count)
{
	static void (*const ops[])(void) = {
		op_open,     op_open,	  op_close,    op_close_range,
		op_dup,	     op_read,	  op_read,     op_read,
		op_write,    op_write,	  op_write,    op_lseek,
		op_truncate, op_transfer, op_transfer, op_sync_or_allocate,
		op_mmap,     op_stat,	  op_name,     op_chdir,
		op_fork,     op_thread,	  op_exec,     op_setfl,
		op_cloexec,  op_splice,	  op_sendfd,
	};

	for (int i = 0; i < count; i++)
		ops[pick(sizeof(ops) / sizeof(ops[0]))]();
}

int main(int argc, char **argv)
{
	static char top[PATH_MAX];
	char sub[PATH_MAX + 8];

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: randio SEED COUNT DIR\n");
		return 2;
	}
	/* glibc sizes its malloc arenas for threads by reading
	 * /sys/devices/system/cpu/online: a read this program cannot count. */
	mallopt(M_ARENA_MAX, 1);
	rng = strtoull(argv[1], NULL, 10) * 2654435761ull + 1;
	/* The oracle's paths are absolute: a relative DIR is made so. */
	if (!realpath(argv[3], top))
		die(argv[3]);
	dir = top;
	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 26);
	for (unsigned i = 0; i < SLOTS; i++)
		slots[i].fd = -1;
	if (argc == 5) {
		take_state(argv[4]);
	} else {
		snprintf(sub, sizeof(sub), "%s/sub", dir);
		if (mkdir(sub, 0755) < 0)
			die(sub);
		emit("%d D 0 -2 0 0 - %s -", gettid(), sub);
	}
	run_ops(atoi(argv[2]));
	report_untraced();
	return 0;
}
