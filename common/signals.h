/* SPDX-License-Identifier: MIT */
/*
 * iowrap's own signal handling.  Termination and user signals sent to
 * iowrap are forwarded to the task, by a thread of their own, unless a
 * traced process of the task sent them; iowrap ignores the job-control stop
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
/*
 * The main process has ended (its last thread's exit stop), or iowrap has
 * reaped it: from now on a forwarded signal goes to every process of the
 * task still running (the orphans iowrap waits for), each checked to be
 * traced by iowrap and reached through a pidfd.
 */
void signals_main_ended(void);
/* iowrap has reaped the main process: it has ended (signals_main_ended),
 * and --orphan-timeout's time starts. */
void signals_main_reaped(void);
/*
 * Forwards every signal sent to iowrap so far.  Called at a tracee's exit
 * stop, so that a signal it sent is judged while it is still traced (no
 * later than that stop, the forwarding thread's reading included): once
 * gone it would look like anyone's.
 */
void signals_settle(void);
/*
 * A process detached for a handover (ptrace/tracer.c) has no tracer until
 * the other tracer thread seizes it, so a forwarded signal's scan of the
 * task passes it by.  Before the detach, the number of scans finished;
 * after the seize, with that number: the signals of the scans that may
 * have missed it are sent to it (while it is still held, so that one the
 * scan did send and that is still pending is not delivered twice).
 */
unsigned signals_scans_finished(void);
void signals_catch_up(pid_t pid, unsigned finished);
/*
 * A scan signals each process once, and a process forked meanwhile may be
 * missed: its pid is given out before, and it shows in /proc only after,
 * the scan tries it; and the kernel gives a signal that comes in the
 * middle of a fork to the parent alone, unless it was sent to a whole
 * process group.  So a process forked while its parent has a forwarded
 * signal pending gets that signal too, as a process group's would: at the
 * creator's fork event, from its tid, while the child has not run yet (so
 * that the scan's own, if it came, merges with this one).
 * signals_scanned() is false until the first scan, and then nothing is
 * read.
 */
bool signals_scanned(void);
void signals_share_pending(pid_t creator, pid_t child);
/*
 * --orphan-timeout: seconds after the main process has ended (0: at
 * once), the processes of the task still running get SIGTERM, and those
 * left ORPHAN_KILL_AFTER_S (2) seconds later SIGKILL, again each 2 s
 * while any is left: what a container's or a Slurm step's end does to
 * them.  Before signals_set_target.  Running is false if no timer could
 * be made or set, or the forwarding thread that reads it could not start.
 * Ended: how many processes each signal was sent to.
 */
void signals_set_orphan_timeout(long seconds);
bool signals_orphan_timer_running(void);
void signals_orphans_ended(unsigned *terminated, unsigned *killed);
/* A process of iowrap's own that it traces (a tracer thread's doorbell),
 * never to be signalled as one of the task's; false when it is gone. */
void signals_spare(pid_t pid, bool spare);
/* A SIGALRM every second sets signals_tick (and interrupts waitpid). */
void signals_start_ticker(void);
void signals_stop_ticker(void);

#endif
