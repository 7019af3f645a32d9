// SPDX-License-Identifier: MIT
/*
 * statfd FILE N [io_uring]: N rounds of stats of FILE's descriptor itself,
 * through the raw syscalls (libcs differ in which they call), most of
 * which the kernel refuses: a NULL, a read-only and a cut-short buffer
 * (EFAULT), statx's flags and mask it does not take (EINVAL; fstatat of
 * an empty path ignores unknown flags since Linux 6.11, so none is
 * tried).  With io_uring, a ring is set up first.  The first line of
 * output is how many calls a round makes and whether there is a ring; each
 * result is checked against the one the kernel must give, so a tracer
 * that changed one fails the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

#define STATX_BASIC 0x7ffu
#define STATX_RESERVED 0x80000000u
#define SYNC_TYPE 0x6000 /* AT_STATX_SYNC_TYPE: both bits are EINVAL */
#define STATX_SIZE 256

struct call {
	long nr;
	int flags;
	unsigned mask;
	int buf; /* 0 good, 1 NULL, 2 read-only, 3 past the end of a page */
	int want; /* 0 or an errno */
};

static const struct call calls[] = {
	{ SYS_fstat, 0, 0, 0, 0 },
	{ SYS_fstat, 0, 0, 1, EFAULT },
	{ SYS_fstat, 0, 0, 2, EFAULT },
	{ SYS_fstat, 0, 0, 3, EFAULT },
	{ SYS_newfstatat, AT_EMPTY_PATH, 0, 0, 0 },
	{ SYS_newfstatat, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, 0, 0 },
	{ SYS_newfstatat, AT_EMPTY_PATH, 0, 2, EFAULT },
	{ SYS_statx, AT_EMPTY_PATH, STATX_BASIC, 0, 0 },
	{ SYS_statx, AT_EMPTY_PATH | 0x2000, STATX_BASIC, 0, 0 },
	{ SYS_statx, AT_EMPTY_PATH | SYNC_TYPE, STATX_BASIC, 0, EINVAL },
	{ SYS_statx, AT_EMPTY_PATH, STATX_RESERVED, 0, EINVAL },
	{ SYS_statx, AT_EMPTY_PATH, STATX_BASIC, 1, EFAULT },
	{ SYS_statx, AT_EMPTY_PATH, STATX_BASIC, 3, EFAULT },
};

#define NCALLS (sizeof(calls) / sizeof(calls[0]))

static char *page_pair(long page)
{
	/* Two pages: the first writable, the second read-only. */
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + page, page, PROT_READ) < 0)
		return NULL;
	return p;
}

static void *buffer_of(const struct call *c, char *pages, long page)
{
	switch (c->buf) {
	case 1:
		return NULL;
	case 2:
		return pages + page;
	case 3: /* the last bytes of the writable page, then read-only */
		return pages + page - 16;
	default:
		return pages;
	}
}

static long make_call(const struct call *c, int fd, void *buf)
{
	switch (c->nr) {
	case SYS_fstat:
		return syscall(SYS_fstat, fd, buf);
	case SYS_newfstatat:
		return syscall(SYS_newfstatat, fd, "", buf, c->flags);
	default:
		return syscall(SYS_statx, fd, "", c->flags, c->mask, buf);
	}
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	char *pages;
	int fd, rounds, ring = 0;

	if (argc != 3 && argc != 4)
		return 2;
	if (argc == 4) {
		unsigned char params[120] = { 0 }; /* struct io_uring_params */

		/* Refused where io_uring is off (kernel.io_uring_disabled). */
		ring = syscall(SYS_io_uring_setup, 1, params) >= 0;
	}
	rounds = atoi(argv[2]);
	fd = open(argv[1], O_RDONLY);
	pages = page_pair(page);
	if (fd < 0 || !pages || page < STATX_SIZE)
		return 1;
	printf("%zu %d\n", NCALLS, ring);
	fflush(stdout);
	for (int i = 0; i < rounds; i++) {
		for (size_t k = 0; k < NCALLS; k++) {
			long r = make_call(&calls[k], fd,
					   buffer_of(&calls[k], pages, page));

			if ((r == 0 ? 0 : errno) != calls[k].want) {
				fprintf(stderr, "call %zu: %ld (errno %d)\n", k,
					r, errno);
				return 1;
			}
		}
	}
	return 0;
}
