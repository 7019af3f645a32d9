/* SPDX-License-Identifier: MIT */
#ifndef IOWRAP_UTIL_H
#define IOWRAP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IOWRAP_VERSION "0.1.0"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Exit statuses of iowrap itself, as env(1) and timeout(1) use them. */
enum {
	EXIT_IOWRAP_FAILED = 125,
	EXIT_NOT_EXECUTABLE = 126,
	EXIT_NOT_FOUND = 127,
};

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Array p of *alloc elements of size bytes, with room for one more after
 * its n: doubled when full, so that n appends cost O(n) (a log or tree
 * of a million entries). */
void *xgrow(void *p, size_t *alloc, size_t n, size_t size);
char *xstrdup(const char *s);
/* a then b, NUL-terminated: the name b (a name's rest) below a. */
char *xjoin(const char *a, size_t alen, const char *b, size_t blen);
/* qsort, also of no elements at NULL (which qsort itself may not get). */
void sort_array(void *base, size_t n, size_t size,
		int (*cmp)(const void *, const void *));

/* One line on stderr, prefixed "iowrap: ". */
void warnx_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Wall clock and monotonic clock in microseconds. */
int64_t now_realtime_us(void);
int64_t now_monotonic_us(void);

/* 64 unpredictable bits from getrandom(2); if the kernel has none to
 * give yet, the clocks and the pid mixed (unique, not secret). */
uint64_t random_u64(void);

/* a - b, or 0 when b is larger (counters read at different moments). */
static inline uint64_t u64_minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* read() until EOF or size - 1 bytes; NUL-terminates.  Bytes or -errno. */
ssize_t read_until_eof(int fd, char *buf, size_t size);
/* Full read of a small file under dirfd into buf; NUL-terminates.
 * Returns bytes read or -errno. */
ssize_t read_file_at(int dirfd, const char *path, char *buf, size_t size);

/* write(2) until done or a real error; returns 0 or -errno. */
int write_all(int fd, const void *data, size_t len);

struct stat;
/* What statx(2) tells beyond struct stat; 0 where the kernel has none. */
struct stat_extra {
	uint64_t birth_ns; /* the file's birth time */
	uint64_t mnt_id; /* its mount's id, mountinfo's first field */
};
/* fstatat(2) from what the kernel has cached: no file server is asked;
 * where the kernel cannot, fstatat itself if fall_back.  extra (if not
 * NULL): its birth time and mount. */
int stat_cached(int dirfd, const char *path, int flags, bool fall_back,
		struct stat *st, struct stat_extra *extra);

bool parse_u64(const char *s, uint64_t *out);

/* The index of name in names[0..n), or -1: an option's word to its enum. */
int index_of_name(const char *const *names, size_t n, const char *name);
/* iowrap's own directories and files are 0700 and 0600 whatever the
 * user's umask (a umask of 0222 made a parent it could not write in):
 * 077 from the start of a run, the user's own again before the task's
 * exec. */
void umask_for_own_files(void);
void umask_for_the_task(void);

/* "SIGKILL" for 9; "SIG42" for signals without a name. */
const char *signal_name(int sig);

#endif
