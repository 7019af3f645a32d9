// SPDX-License-Identifier: MIT
#include "mailbox.h"

#include <errno.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "signals.h"
#include "util.h"
#include "vmchild.h"

#define DOORBELL_SIGNAL SIGUSR1

/* The kernel's struct sigaction on x86_64. */
struct kernel_sigaction {
	unsigned long handler, flags, restorer;
	uint64_t mask;
};

/*
 * The doorbell: sleeps for ever; its tracer sees DOORBELL_SIGNAL sent to
 * it as a stop (a traced process's signals are never ignored).  Every
 * other signal stays blocked from its birth (the task's forwarded
 * SIGTERM, say, does not ring), and DOORBELL_SIGNAL is set to its
 * default before it is let in: one that comes before the seize ends it,
 * and no handler of iowrap's ever runs here.  Raw syscalls only: it
 * shares our memory and TLS (vmchild.h).
 */
static int doorbell_main(void *arg)
{
	const struct kernel_sigaction dfl = { .handler = 0 }; /* SIG_DFL */
	uint64_t others = ~(UINT64_C(1) << (DOORBELL_SIGNAL - 1));

	(void)arg;
	vmchild_syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	vmchild_syscall(SYS_rt_sigaction, DOORBELL_SIGNAL, (long)&dfl, 0,
			sizeof(dfl.mask), 0);
	vmchild_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&others, 0,
			sizeof(others), 0);
	for (;;)
		vmchild_syscall(SYS_pause, 0, 0, 0, 0, 0);
	return 0;
}

static void doorbell_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

/* A new doorbell on the box's stack, seized by the calling thread. */
static int doorbell_start(struct mailbox *box)
{
	pid_t pid;
	int err;

	box->doorbell = 0;
	if (!box->stack)
		box->stack = xmalloc(sizeof(*box->stack));
	pid = vmchild_start(doorbell_main, NULL, box->stack);
	if (pid > 0 &&
	    ptrace(PTRACE_SEIZE, pid, 0L, (long)PTRACE_O_EXITKILL) == 0) {
		box->doorbell = pid;
		signals_spare(pid, true);
		return 0;
	}
	err = pid < 0 ? pid : -errno;
	if (pid > 0)
		doorbell_kill(pid);
	free(box->stack);
	box->stack = NULL;
	return err;
}

int mailbox_open(struct mailbox *box)
{
	memset(box, 0, sizeof(*box));
	return doorbell_start(box);
}

/* Reaped by the owner's wait: its stack is free again. */
void mailbox_doorbell_died(struct mailbox *box)
{
	signals_spare(box->doorbell, false);
	doorbell_start(box);
}

void mailbox_close(struct mailbox *box)
{
	if (box->doorbell > 0) {
		doorbell_kill(box->doorbell);
		signals_spare(box->doorbell, false);
	}
	free(box->mail);
	free(box->stack);
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
