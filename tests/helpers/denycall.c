// SPDX-License-Identifier: MIT
/* denycall NR PROGRAM [ARGS...]: runs PROGRAM under a seccomp filter that
 * makes syscall NR fail with EPERM and lets every other through, as a
 * container's profile may: 101, ptrace, as Docker's default profile does
 * on old kernels and containerd's without CAP_SYS_PTRACE; 1000, none (the
 * filter is just there). */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (argc < 3) {
		fprintf(stderr, "usage: denycall NR PROGRAM [ARGS...]\n");
		return 2;
	}
	filter[1].k = (unsigned)atoi(argv[1]);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		perror("seccomp");
		return 2;
	}
	execv(argv[2], argv + 2);
	perror("execv");
	return 127;
}
