// SPDX-License-Identifier: MIT
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "unit.h"

/* In a throwaway parent: starts the waiting child, sends its pid on fd,
 * and dies without a word, as iowrap killed before it seized the child. */
static void start_and_die(int fd)
{
	char *argv[] = { "/bin/sleep", "10", NULL };
	struct launch l = { .before_exec = NULL };

	if (launch_prepare(&l, argv[0], argv) != 0 ||
	    write(fd, &l.pid, sizeof(l.pid)) != sizeof(l.pid))
		_exit(1);
	_exit(0);
}

/*
 * The child of a parent that died before releasing it must not run the
 * command (the pipe's EOF reads as "run"): killed with its parent, or gone
 * at once if the parent died first.  Without die_with_parent() it runs
 * sleep 10 and exits 0.  We are the subreaper: the orphan comes back to us.
 */
static void launch_child_dies_with_its_parent(void)
{
	int pipefd[2], status = 0;
	pid_t parent, child = 0;

	if (!CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) == 0) ||
	    !CHECK(pipe(pipefd) == 0))
		return;
	parent = fork();
	if (parent == 0)
		start_and_die(pipefd[1]);
	close(pipefd[1]);
	CHECK(read(pipefd[0], &child, sizeof(child)) == sizeof(child));
	close(pipefd[0]);
	CHECK(waitpid(parent, &status, 0) == parent && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	if (CHECK(child > 0) && CHECK(waitpid(child, &status, 0) == child))
		CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
		      (WIFEXITED(status) && WEXITSTATUS(status) == 125));
	prctl(PR_SET_CHILD_SUBREAPER, 0L, 0L, 0L, 0L);
}

const struct unit_test launch_tests[] = {
	UNIT_TEST(launch_child_dies_with_its_parent),
	UNIT_END,
};
