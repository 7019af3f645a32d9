/* SPDX-License-Identifier: MIT */
/*
 * A tracer thread's mailbox.  ptrace binds a tracee to the thread that
 * attached it: only that thread may resume it, and only it is woken by
 * its stops.  Another thread that needs something done to such a tracee
 * (resume one held behind its own, take over a new process) posts a
 * message and rings the doorbell: a small process the owner traces, which
 * a signal makes stop, so that the owner's waitpid() returns.  A signal
 * that comes before the owner sleeps waits in the kernel: no wake-up is
 * lost, with no polling.
 */
#ifndef IOWRAP_MAILBOX_H
#define IOWRAP_MAILBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "inject.h"

enum mail_kind {
	MAIL_RESUME, /* resume tid (held at an entry stop) with signal arg */
	MAIL_STOP, /* another thread waited tid's stop: status arg */
	MAIL_TAKE, /* seize tid, parked for us (inject_park) */
	MAIL_ANNOUNCE, /* let tid, held for its creator's event, go on */
};

struct mail {
	enum mail_kind kind;
	pid_t tid;
	int arg;
	struct parked parked; /* MAIL_TAKE */
	unsigned scans; /* MAIL_TAKE: signals_scans_finished() at the park */
};

struct vmchild_stack;

struct mailbox {
	pid_t doorbell; /* 0: none */
	struct vmchild_stack *stack; /* the doorbell's */
	struct mail *mail; /* [head, count) not read yet */
	size_t head, count, alloc;
};

/* In the owning thread: starts and seizes the doorbell.  0 or -errno. */
int mailbox_open(struct mailbox *box);
/* In the owning thread: kills and reaps the doorbell, drops the mail. */
void mailbox_close(struct mailbox *box);
/* Any thread, under the tracer's lock: wakes the owner. */
void mailbox_ring(const struct mailbox *box);
/* Any thread, under the tracer's lock: adds a message and rings. */
void mailbox_post(struct mailbox *box, const struct mail *m);
/* The owner, under the lock: takes the oldest message; false if none. */
bool mailbox_take(struct mailbox *box, struct mail *out);
/* The owner, at its doorbell's death (killed by someone): a new one, or
 * none (0) if it cannot be started.  The mail stays. */
void mailbox_doorbell_died(struct mailbox *box);
/* The owner, at the doorbell's stop: lets it wait for the next ring. */
void mailbox_rearm(const struct mailbox *box);

#endif
