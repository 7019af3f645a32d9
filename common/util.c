// SPDX-License-Identifier: MIT
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
/* musl before 1.2.5 has no struct statx; glibc and later musl define it,
 * and STATX_TYPE with it. */
#ifndef STATX_TYPE
#include <linux/stat.h>
#endif
#include <time.h>
#include <unistd.h>

static void out_of_memory(void)
{
	static const char msg[] = "iowrap: out of memory\n";

	/* Nothing else is safe here; the task is killed with us (EXITKILL). */
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(EXIT_IOWRAP_FAILED);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		out_of_memory();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xgrow(void *p, size_t *alloc, size_t n, size_t size)
{
	if (n < *alloc)
		return p;
	if (*alloc > SIZE_MAX / 2 / size)
		out_of_memory();
	*alloc = *alloc ? *alloc * 2 : 16;
	return xrealloc(p, *alloc * size);
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		out_of_memory();
	return p;
}

char *xjoin(const char *a, size_t alen, const char *b, size_t blen)
{
	char *s = xmalloc(alen + blen + 1);

	memcpy(s, a, alen);
	memcpy(s + alen, b, blen);
	s[alen + blen] = '\0';
	return s;
}

void sort_array(void *base, size_t n, size_t size,
		int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

void warnx_line(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	memcpy(line, "iowrap: ", 8);
	va_start(ap, fmt);
	n = vsnprintf(line + 8, sizeof(line) - 9, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n += 8;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* One write so lines from concurrent tasks do not interleave. */
	(void)write_all(STDERR_FILENO, line, (size_t)n);
}

static int64_t clock_us(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t now_realtime_us(void)
{
	return clock_us(CLOCK_REALTIME);
}

int64_t now_monotonic_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

uint64_t random_u64(void)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	r = (uint64_t)now_realtime_us() ^ (uint64_t)now_monotonic_us() << 20;
	return r ^ (uint64_t)getpid() << 44;
}

ssize_t read_until_eof(int fd, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return -EINVAL;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

ssize_t read_file_at(int dirfd, const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	if (size == 0)
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	n = read_until_eof(fd, buf, size);
	close(fd);
	return n;
}

int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static mode_t users_umask;
static bool umask_changed;

void umask_for_own_files(void)
{
	users_umask = umask(077);
	umask_changed = true;
}

void umask_for_the_task(void)
{
	if (umask_changed)
		umask(users_umask);
}

int index_of_name(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return (int)i;
	return -1;
}

bool parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

const char *signal_name(int sig)
{
	static const char *const names[] = {
		[SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",
		[SIGQUIT] = "SIGQUIT", [SIGILL] = "SIGILL",
		[SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
		[SIGBUS] = "SIGBUS",   [SIGFPE] = "SIGFPE",
		[SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1",
		[SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
		[SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM",
		[SIGTERM] = "SIGTERM", [SIGSTKFLT] = "SIGSTKFLT",
		[SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT",
		[SIGSTOP] = "SIGSTOP", [SIGTSTP] = "SIGTSTP",
		[SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU",
		[SIGURG] = "SIGURG",   [SIGXCPU] = "SIGXCPU",
		[SIGXFSZ] = "SIGXFSZ", [SIGVTALRM] = "SIGVTALRM",
		[SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH",
		[SIGIO] = "SIGIO",     [SIGPWR] = "SIGPWR",
		[SIGSYS] = "SIGSYS",
	};
	static char other[16];

	if (sig > 0 && (size_t)sig < ARRAY_SIZE(names) && names[sig])
		return names[sig];
	snprintf(other, sizeof(other), "SIG%d", sig);
	return other;
}

/*
 * fstatat(2) through statx with AT_STATX_DONT_SYNC: the attributes the
 * kernel has cached, with no request to a file server.  The tracer must
 * never wait for one: a FUSE file system served by a process of the task
 * (fuse-overlayfs, squashfuse in a container) would wait for that
 * process, stopped for the tracer (a deadlock, tests/helpers/fusehello.c),
 * and NFS would cost a round trip.  Only the type and mode, device and
 * inode, link count, size and rdev are filled, and birth_ns (if not
 * NULL) with the birth time where the file system keeps one (0 else; 0
 * too from fstatat).  Where statx is missing
 * (ENOSYS before Linux 4.11; EPERM under an old container profile),
 * fstatat if fall_back (where no such server can be asked).  The kernel
 * adds AT_NO_AUTOMOUNT to stat(2) and fstatat itself, not to statx: a
 * tracer's stat must not mount an automount point, or wait for its daemon.
 */
int stat_cached(int dirfd, const char *path, int flags, bool fall_back,
		struct stat *st, struct stat_extra *extra)
{
	struct statx sx;

	if (extra)
		*extra = (struct stat_extra){ 0 };
	if (syscall(SYS_statx, dirfd, path,
		    flags | AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT,
		    STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_INO |
			    STATX_SIZE |
			    (extra ? STATX_BTIME | STATX_MNT_ID : 0),
		    &sx) < 0) {
		if (!fall_back || (errno != ENOSYS && errno != EPERM))
			return -1;
		return fstatat(dirfd, path, st, flags);
	}
	if (extra && (sx.stx_mask & STATX_BTIME))
		extra->birth_ns = (uint64_t)sx.stx_btime.tv_sec * 1000000000u +
				  sx.stx_btime.tv_nsec;
	if (extra && (sx.stx_mask & STATX_MNT_ID))
		extra->mnt_id = sx.stx_mnt_id;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	st->st_ino = sx.stx_ino;
	st->st_mode = sx.stx_mode;
	st->st_nlink = sx.stx_nlink;
	st->st_size = (off_t)sx.stx_size;
	st->st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
	return 0;
}
