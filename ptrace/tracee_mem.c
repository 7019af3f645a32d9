// SPDX-License-Identifier: MIT
#include "tracee_mem.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#define PAGE 4096u

int tracee_read(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = len };
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

ssize_t tracee_read_str(pid_t tid, uint64_t addr, char *buf, size_t size)
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
		err = tracee_read(tid, addr + got, buf + got, chunk);
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
