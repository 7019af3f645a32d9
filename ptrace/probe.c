// SPDX-License-Identifier: MIT
#include "probe.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmchild.h"

/* Raw syscalls only: it shares our memory and TLS (vmchild.h). */
static int probe_child(void *arg)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_gettid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = filter };
	long status = 1;

	(void)arg;
	if (vmchild_syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	    vmchild_syscall(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
			    (long)&prog, 0, 0) == 0 &&
	    vmchild_syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0, 0) == 0) {
		vmchild_syscall(SYS_kill,
				vmchild_syscall(SYS_getpid, 0, 0, 0, 0, 0),
				SIGSTOP, 0, 0, 0);
		vmchild_syscall(SYS_gettid, 0, 0, 0, 0, 0);
		status = 0;
	}
	vmchild_syscall(SYS_exit, status, 0, 0, 0, 0);
	return 0;
}

static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

int seccomp_stop_before_sysentry(void)
{
	static struct vmchild_stack stack;
	pid_t pid = vmchild_start(probe_child, NULL, &stack);
	int before = -1, status;

	if (pid < 0)
		return -1;
	status = wait_child(pid);
	if (status < 0 || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_SETOPTIONS, pid, 0L,
		   (long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACESECCOMP |
			  PTRACE_O_EXITKILL)) < 0)
		goto out;
	/* Stop at every syscall: the first stop for gettid tells the order
	 * (the child's own kill syscall comes first, skip syscall stops
	 * until a seccomp stop or gettid's enter stop shows). */
	for (int step = 0; step < 16 && before < 0; step++) {
		if (ptrace(PTRACE_SYSCALL, pid, 0L, 0L) < 0)
			break;
		status = wait_child(pid);
		if (status < 0 || !WIFSTOPPED(status))
			break;
		if ((status >> 8) == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8)))
			before = 1;
		else if (WSTOPSIG(status) == (SIGTRAP | 0x80) &&
			 ptrace(PTRACE_PEEKUSER, pid,
				(void *)(8 * 15 /* ORIG_RAX */),
				0L) == __NR_gettid)
			before = 0; /* entry stop first: Linux >= 4.8 */
	}
out:
	kill(pid, SIGKILL);
	wait_child(pid);
	return before;
}
