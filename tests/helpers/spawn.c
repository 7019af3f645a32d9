// SPDX-License-Identifier: MIT
/* spawn MODE: process creation the tracer must follow.
 *   vfork     vfork + exec /bin/true
 *   clone3    raw clone3 syscall, child exits 7
 *   daemon    double fork; the grandchild outlives its parent by 200 ms,
 *             then writes "done" to argv[2]
 *   forkmax N fork until EAGAIN (ulimit -u), children sleep 300 ms;
 *             prints how many forks succeeded
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int do_vfork(void)
{
	int status;
	pid_t pid = vfork();

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WEXITSTATUS(status);
}

static int do_clone3(void)
{
	struct clone_args args;
	int status;
	long pid;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		perror("clone3");
		return 2;
	}
	if (pid == 0)
		_exit(7);
	waitpid((pid_t)pid, &status, 0);
	return WEXITSTATUS(status) == 7 ? 0 : 1;
}

static int do_daemon(const char *out)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (fork() == 0) {
			FILE *f;

			setsid();
			usleep(200000);
			f = fopen(out, "w");
			if (f) {
				fputs("done\n", f);
				fclose(f);
			}
			_exit(0);
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}

static int do_forkmax(int max)
{
	int n = 0;

	for (; n < max; n++) {
		pid_t pid = fork();

		if (pid < 0) {
			if (errno != EAGAIN)
				perror("fork");
			break;
		}
		if (pid == 0) {
			usleep(300000);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	printf("%d\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "vfork") == 0)
		return do_vfork();
	if (argc > 1 && strcmp(argv[1], "clone3") == 0)
		return do_clone3();
	if (argc > 2 && strcmp(argv[1], "daemon") == 0)
		return do_daemon(argv[2]);
	if (argc > 2 && strcmp(argv[1], "forkmax") == 0)
		return do_forkmax(atoi(argv[2]));
	fprintf(stderr, "usage: spawn vfork|clone3|daemon FILE|forkmax N\n");
	return 2;
}
