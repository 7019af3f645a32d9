/* SPDX-License-Identifier: MIT */
/*
 * iowrap's own signal handling.  Termination and user signals sent to
 * iowrap are forwarded to the task; iowrap ignores the job-control stop
 * signals so that a stop reaches it only through the task (see
 * follow_job_stop in ptrace/tracer.c).  The child restores everything the
 * task would have inherited before it execs.
 */
#ifndef IOWRAP_SIGNALS_H
#define IOWRAP_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

extern volatile sig_atomic_t signals_tick;

/* SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU: the signals that stop a process. */
bool is_stop_signal(int sig);

void signals_setup(void);
/* In the child, before execve: the dispositions and mask iowrap got. */
void signals_restore_for_child(void);
/* Where forwarded signals go from now on (and those that came early). */
void signals_set_target(pid_t pid);
/* A SIGALRM every second sets signals_tick (and interrupts waitpid). */
void signals_start_ticker(void);
void signals_stop_ticker(void);

#endif
