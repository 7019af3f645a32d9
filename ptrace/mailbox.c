// SPDX-License-Identifier: MIT
#include "mailbox.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

#define DOORBELL_SIGNAL SIGUSR1

/* The doorbell: sleeps for ever; its tracer sees every signal sent to
 * it as a stop (a traced process's signals are never ignored). */
static void doorbell_main(void)
{
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (;;)
		pause();
}

static void doorbell_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

/* A new doorbell, seized by the calling thread: its pid, or -errno. */
static pid_t doorbell_start(void)
{
	pid_t pid = fork();
	int err;

	if (pid < 0)
		return -errno;
	if (pid == 0)
		doorbell_main();
	if (ptrace(PTRACE_SEIZE, pid, 0L, (long)PTRACE_O_EXITKILL) == 0)
		return pid;
	err = -errno;
	doorbell_kill(pid);
	return err;
}

int mailbox_open(struct mailbox *box)
{
	pid_t pid;

	memset(box, 0, sizeof(*box));
	pid = doorbell_start();
	if (pid < 0)
		return pid;
	box->doorbell = pid;
	return 0;
}

void mailbox_doorbell_died(struct mailbox *box)
{
	pid_t pid = doorbell_start();

	box->doorbell = pid > 0 ? pid : 0;
}

void mailbox_close(struct mailbox *box)
{
	if (box->doorbell > 0)
		doorbell_kill(box->doorbell);
	free(box->mail);
	memset(box, 0, sizeof(*box));
}

void mailbox_ring(const struct mailbox *box)
{
	if (box->doorbell > 0)
		kill(box->doorbell, DOORBELL_SIGNAL);
}

void mailbox_post(struct mailbox *box, const struct mail *m)
{
	if (box->count == box->alloc) {
		box->alloc = box->alloc * 2 + 16;
		box->mail = xrealloc(box->mail, box->alloc * sizeof(*m));
	}
	box->mail[box->count++] = *m;
	/* More mail in the box: a ring is on its way, and the owner reads
	 * it all at once. */
	if (box->count - box->head == 1)
		mailbox_ring(box);
}

bool mailbox_take(struct mailbox *box, struct mail *out)
{
	if (box->head == box->count) {
		box->head = box->count = 0;
		return false;
	}
	*out = box->mail[box->head++];
	return true;
}

void mailbox_rearm(const struct mailbox *box)
{
	ptrace(PTRACE_CONT, box->doorbell, 0L, 0L);
}
