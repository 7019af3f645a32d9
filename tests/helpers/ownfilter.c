// SPDX-License-Identifier: MIT
/*
 * A task with a seccomp filter of its own, as sandboxes have (Chromium's
 * renderers, bwrap, the OpenSSH sandbox): any later seccomp(2) call is
 * killed, refused or trapped.  Then it reads a file on a descriptor number
 * it never used, and forks and execs /bin/true.
 *
 *   ownfilter FILE kill|errno|trap seccomp|prctl
 *
 * Prints the bytes read and how many SIGSYS it caught; exits 0.
 */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t sigsys;

static void on_sigsys(int sig)
{
	(void)sig;
	sigsys++;
}

static unsigned action_of(const char *mode)
{
	if (strcmp(mode, "errno") == 0)
		return SECCOMP_RET_ERRNO | 1;
	if (strcmp(mode, "trap") == 0)
		return SECCOMP_RET_TRAP;
	return SECCOMP_RET_KILL_PROCESS;
}

static int install(unsigned action, const char *how)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	if (strcmp(how, "prctl") == 0)
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(int argc, char **argv)
{
	char buf[4096];
	ssize_t n, total = 0;
	int fd, status = -1;
	pid_t child;

	if (argc != 4)
		return 2;
	signal(SIGSYS, on_sigsys);
	if (install(action_of(argv[2]), argv[3]) < 0) {
		perror("seccomp");
		return 3;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || dup2(fd, 40) != 40)
		return 4;
	while ((n = read(40, buf, sizeof(buf))) > 0)
		total += n;
	child = fork();
	if (child == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
		return 5;
	printf("read %zd, sigsys %d\n", total, (int)sigsys);
	return 0;
}
