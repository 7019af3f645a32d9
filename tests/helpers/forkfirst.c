// SPDX-License-Identifier: MIT
/*
 * forkfirst FILE N: opens FILE, then a thread forks N children one after
 * the other; each child's first syscall closes the inherited descriptor.
 * A child forked by a thread often stops before its creator reports the
 * fork: a tracer that lets it run on then does not know the descriptor
 * yet (a read or write would make it look, a close did not).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int fd, children;

static void *fork_children(void *arg)
{
	(void)arg;
	for (int i = 0; i < children; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return "fork";
		if (pid == 0)
			_exit(close(fd) == 0 ? 0 : 1);
		if (waitpid(pid, &status, 0) != pid || status != 0)
			return "child";
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;
	void *failed;

	if (argc != 3)
		return 2;
	children = atoi(argv[2]);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || pthread_create(&thread, NULL, fork_children, NULL) != 0 ||
	    pthread_join(thread, &failed) != 0)
		return 1;
	return failed ? 1 : 0;
}
