// SPDX-License-Identifier: MIT
#include "tracee_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096u

#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)

/*
 * Whether every page of [addr, addr + len) is present or swapped in
 * tid's page tables: 1, 0 (one is not: reading it would read its file),
 * or -errno.  The two bits are shown to any process that may read the
 * tracee's memory (Documentation/admin-guide/mm/pagemap.rst); walking the
 * page tables faults nothing in.  The tracer's reads span a page or two.
 */
static int pages_in_memory(int procfd, pid_t tid, uint64_t addr, size_t len)
{
	uint64_t last = (addr + len - 1) / PAGE, entry;
	char name[32];
	int fd, in = 1;

	snprintf(name, sizeof(name), "%d/pagemap", (int)tid);
	fd = openat(procfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (uint64_t page = addr / PAGE; in == 1 && page <= last; page++) {
		ssize_t n = pread(fd, &entry, sizeof(entry),
				  (off_t)(page * sizeof(entry)));

		if (n != (ssize_t)sizeof(entry))
			in = n < 0 ? -errno : -EFAULT;
		else if (!(entry & (PM_PRESENT | PM_SWAPPED)))
			in = 0;
	}
	close(fd);
	return in;
}

int tracee_read(pid_t tid, int pages, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = len };
	ssize_t n;

	if (!addr || addr + len < addr)
		return -EFAULT;
	if (pages != TRACEE_ANY_PAGE) {
		int in = pages_in_memory(pages, tid, addr, len);

		/* Unsure (pagemap refused, EMFILE): as if not in memory. */
		if (in <= 0)
			return in == -EFAULT ? in : -EAGAIN;
	}
	n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int tracee_rewrite(pid_t tid, uint64_t addr, size_t len)
{
	unsigned char buf[TRACEE_REWRITE_MAX];
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = len };
	ssize_t n;
	int err;

	if (len > sizeof(buf))
		return -E2BIG;
	err = tracee_read(tid, TRACEE_ANY_PAGE, addr, buf, len);
	if (err < 0)
		return err;
	/* No FOLL_FORCE: a read-only page refuses, as copy_to_user would. */
	n = process_vm_writev(tid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

ssize_t tracee_read_str(pid_t tid, int pages, uint64_t addr, char *buf,
			size_t size)
{
	size_t got = 0;

	if (!addr)
		return -EFAULT;
	/* Page by page: the string may end right before an unmapped page. */
	while (got < size) {
		size_t chunk = PAGE - (size_t)((addr + got) % PAGE);
		char *nul;
		int err;

		if (chunk > size - got)
			chunk = size - got;
		err = tracee_read(tid, pages, addr + got, buf + got, chunk);
		if (err)
			return err;
		nul = memchr(buf + got, '\0', chunk);
		if (nul)
			return nul - buf;
		got += chunk;
	}
	buf[size - 1] = '\0';
	return -ENAMETOOLONG;
}

bool tracee_syscall_info(pid_t tid, struct ptrace_syscall_info *si)
{
	return ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(*si), si) >
	       0;
}
