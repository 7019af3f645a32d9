/* SPDX-License-Identifier: MIT */
/*
 * The ground truth of the accuracy workloads (busyloop, memfill, iorw;
 * bench/accuracy.py).  A workload calls truth_begin() first and
 * truth_end() last; truth_end() prints one line of JSON in one write(2)
 * and exits with exit_group(2) (no atexit handlers, no stdio teardown):
 *   cpu_ns     CLOCK_PROCESS_CPUTIME_ID, taken after everything but the
 *              report's formatting, its write and the exit;
 *   vmhwm_kib  VmHWM from /proc/self/status;
 *   rchar      every byte the process's read()s returned: the kernel's count
 *              at the start of main (exec, loader, dlopen) plus what main
 *              read itself (counted_read), including its last /proc read;
 *   wchar      the same for write() (counted_write), not counting the report
 *              line itself (the reader adds the line's length);
 *   rchar_check, wchar_check  the kernel's own counts read last, which must
 *              equal the counted ones before that read (a self-test).
 */
#ifndef IOWRAP_TRUTH_H
#define IOWRAP_TRUTH_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct truth {
	char io[1024], status[8192], report[1024];
	unsigned long long rchar0, wchar0;
	int pid;
};

static unsigned long long counted_read, counted_write;

static inline ssize_t truth_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, total = 0;

	if (fd < 0)
		return -1;
	while ((size_t)total < size - 1 &&
	       (n = read(fd, buf + total, size - 1 - (size_t)total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	counted_read += (unsigned long long)total;
	return total;
}

static inline unsigned long long truth_field(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* Touches now the pages the final report touches (its buffers, the stack
 * and code of snprintf, clock_gettime and syscall), so that none is first
 * touched after the VmHWM reading: the reading is then the process's peak. */
static inline void truth_warm_up(struct truth *t)
{
	struct timespec ts;

	memset(t->status, 1, sizeof(t->status));
	memset(t->report, 1, sizeof(t->report));
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	snprintf(t->report, sizeof(t->report), "%llu %.6f",
		 (unsigned long long)ts.tv_nsec, (double)ts.tv_sec);
	/* The report's write and the exit go through syscall(): its code
	 * page is now mapped too. */
	syscall(SYS_getpid);
}

/* What exec and the loader read before main's own reads; 0 or 4. */
static inline int truth_begin(struct truth *t)
{
	if (truth_read_file("/proc/self/io", t->io, sizeof(t->io)) < 0)
		return 4;
	t->rchar0 = truth_field(t->io, "rchar: ");
	t->wchar0 = truth_field(t->io, "wchar: ");
	truth_warm_up(t);
	t->pid = (int)getpid();
	return 0;
}

/* members: the workload's own JSON members, each followed by a comma. */
static inline int truth_end(struct truth *t, const char *members)
{
	unsigned long long rchar_before;
	struct timespec cpu;
	int len;

	if (truth_read_file("/proc/self/status", t->status, sizeof(t->status)) <
	    0)
		return 4;
	rchar_before = t->rchar0 + counted_read;
	if (truth_read_file("/proc/self/io", t->io, sizeof(t->io)) < 0)
		return 4;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	len = snprintf(t->report, sizeof(t->report),
		       "{%s\"pid\":%d,\"cpu_ns\":%llu,\"vmhwm_kib\":%llu,"
		       "\"rchar\":%llu,\"wchar\":%llu,"
		       "\"rchar_check\":%llu,\"rchar_check_expect\":%llu,"
		       "\"wchar_check\":%llu}\n",
		       members, t->pid,
		       (unsigned long long)cpu.tv_sec * 1000000000ull +
			       (unsigned long long)cpu.tv_nsec,
		       truth_field(t->status, "VmHWM:"),
		       t->rchar0 + counted_read, t->wchar0 + counted_write,
		       truth_field(t->io, "rchar: "), rchar_before,
		       truth_field(t->io, "wchar: "));
	syscall(SYS_exit_group,
		syscall(SYS_write, 1, t->report, (size_t)len) == len ? 0 : 5);
	return 5;
}

#endif
