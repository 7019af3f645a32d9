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

static void probe_child(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_gettid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0 ||
	    ptrace(PTRACE_TRACEME, 0L, 0L, 0L) < 0)
		_exit(1);
	raise(SIGSTOP);
	syscall(__NR_gettid);
	_exit(0);
}

static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

bool seccomp_stop_before_sysentry(void)
{
	pid_t pid = fork();
	bool before = false;
	int status;

	if (pid < 0)
		return false;
	if (pid == 0)
		probe_child();
	status = wait_child(pid);
	if (status < 0 || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_SETOPTIONS, pid, 0L,
		   (long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACESECCOMP |
			  PTRACE_O_EXITKILL)) < 0)
		goto out;
	/* Stop at every syscall: the first stop for gettid tells the order
	 * (raise's own kill syscall comes first, skip syscall stops until
	 * a seccomp stop or gettid's enter stop shows). */
	for (int step = 0; step < 16; step++) {
		if (ptrace(PTRACE_SYSCALL, pid, 0L, 0L) < 0)
			break;
		status = wait_child(pid);
		if (status < 0 || !WIFSTOPPED(status))
			break;
		if ((status >> 8) == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8))) {
			before = true;
			break;
		}
		if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			long nr = ptrace(PTRACE_PEEKUSER, pid,
					 (void *)(8 * 15 /* ORIG_RAX */), 0L);

			if (nr == __NR_gettid)
				break; /* entry stop first: Linux >= 4.8 */
		}
	}
out:
	kill(pid, SIGKILL);
	wait_child(pid);
	return before;
}
