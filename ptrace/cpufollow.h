/* SPDX-License-Identifier: MIT */
/*
 * Keeps the tracer on the CPU of the tracee it serves while one tracee
 * stops in quick succession (a syscall-heavy phase).
 *
 * A stop handled across CPUs costs ~60 us on these VMs, mostly the wake-up
 * of an idle vCPU; on one CPU it costs ~8 us.  The scheduler will not put
 * the two together by itself: a woken task prefers an idle CPU to a busy
 * one.  So in a quick run of stops from one tracee the tracer pins the
 * tracee to the CPU it last ran on, and itself beside it (pin_tracee, the
 * default).  A woken task goes where its mask lets it, so the two take
 * turns on that CPU; after resuming the tracee the tracer polls for its
 * next stop and yields the CPU between polls, which hands it straight to
 * the tracee without a sleep and a wake-up.  The task must not see the
 * pin: a child or thread the tracee makes meanwhile gets the tracee's own
 * mask back at its creator's event (it has not run yet), the tracee's own
 * sched_getaffinity and sched_setaffinity end the phase at their entry
 * (the filter stops them), as does a change of its uid (after which the
 * tracer may not put it back), and the tracee is put back before it is
 * detached.  Tracer threads claim their CPU, so that two tracees are never
 * pinned to one CPU.  Only the tracer thread changes its tracee's mask: its
 * tid cannot name another process until that thread has reaped it.
 *
 * sched_idle (--follow-cpu) leaves the task's mask alone: the tracer pins
 * only itself, at SCHED_IDLE.  A CPU that runs only SCHED_IDLE tasks counts
 * as idle when the kernel places a woken task, so the resumed tracee stays
 * on it and preempts the tracer at once.  But a tracee that computes
 * between stops (gzip) leaves the preempted tracer runnable beside it, and
 * the load balancer moves the tracee to the idle CPU, where its stops cross
 * CPUs until the tracer follows.  A SCHED_IDLE tracer can also starve
 * behind other work on its CPU while another tracee waits for it: a
 * watchdog thread ends a phase in which a stop has waited and the tracer
 * handled none for FOLLOW_WATCHDOG_US, and phases ended that way back off
 * exponentially.  An unprivileged tracer may go to SCHED_IDLE but never
 * come back (its RLIMIT_NICE is 0): for it, sched_idle is pin_tracee.
 */
#ifndef IOWRAP_CPUFOLLOW_H
#define IOWRAP_CPUFOLLOW_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pidmap.h"

/* The CPUs tracer threads have pinned a tracee to (shared by them). */
struct cpu_claims {
	atomic_ulong bits[CPU_SETSIZE / (8 * sizeof(unsigned long))];
};

/*
 * A tracee pinned for a phase: on, or put back while it may still have a
 * child made under the pin waiting for its fork or clone event (until its
 * next stop that is not one), or with its tid gone before it could be put
 * back (a thread's exec: follow_renamed).
 */
struct tracee_pin {
	pid_t tid, tgid;
	int cpu;
	bool on; /* its mask is the pin */
	cpu_set_t own; /* its mask before the pin */
};

/* How a tracer thread follows; FOLLOW_AUTO only as what was asked for. */
enum follow_how {
	FOLLOW_OFF, /* not enabled, or not allowed here */
	FOLLOW_IDLE_TRACER, /* the tracer at SCHED_IDLE on the tracee's CPU */
	FOLLOW_PIN_TRACEE, /* both pinned to one CPU */
	FOLLOW_AUTO, /* the default: pin_tracee */
};

struct cpu_follow {
	bool enabled; /* more than one CPU allowed, not switched off */
	enum follow_how how;
	bool active; /* pinned to `cpu` (with SCHED_IDLE or the tracee) */
	int procfd;
	int stat_fd; /* /proc/stat_tid/stat; open until another tid is read
		     * or follow_release */
	pid_t stat_tid;
	pid_t self_tid;
	cpu_set_t allowed; /* the tracer's own mask, restored on leaving */
	pid_t tid, tgid; /* the tracee of the current run of stops */
	unsigned run; /* quick consecutive stops from tid */
	unsigned since_check; /* stops since tid's CPU was last read */
	int cpu;
	int64_t last_stop_us;
	int64_t active_since_us, checked_us;
	int64_t holdoff_until_us, holdoff_us;
	unsigned long phases, starved, moves;
	/* pins_tracee: the pins by tid (struct tracee_pin), how many
	 * of each process (a count by tgid), the one on, the CPUs claimed. */
	struct pidmap pins, pinned_tgids;
	struct tracee_pin *pin_on;
	struct cpu_claims *claims;

	/* shared with the watchdog thread */
	atomic_ulong progress;
	/* enum phase_state: on and watched, or ended by the watchdog; one
	 * atomic, so that the tracer's end of a phase and the watchdog's
	 * cannot both count, nor one leak into the next phase */
	atomic_int phase;
	pthread_t watchdog;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool thread_started, quit;
};

/* In the tracer thread; claims, shared, are for pinning tracees.  want:
 * what was asked for; sched_idle becomes pin_tracee where the tracer may
 * not leave SCHED_IDLE. */
void follow_init(struct cpu_follow *f, int procfd, enum follow_how want,
		 struct cpu_claims *claims);
/* "off", "sched_idle", "pin_tracee" or "auto": the enum, or -1 for
 * another name. */
int follow_parse(const char *name);
/* The same names, for summary.json. */
const char *follow_how_name(enum follow_how how);
/* The tracee pinned for a phase (pin_tracee); the tracer at SCHED_IDLE
 * during one (sched_idle). */
bool pins_tracee(const struct cpu_follow *f);
bool idles_tracer(const struct cpu_follow *f);
/* Called at every stop of tid (of process tgid), before it is resumed;
 * event: the stop's PTRACE_EVENT_*, or 0. */
void follow_stop(struct cpu_follow *f, pid_t tid, pid_t tgid, int event);
/* A wait found no stop pending: the tracee may have moved. */
void follow_missed(struct cpu_follow *f);
/*
 * pins_tracee, at these events of a tracee, in its tracer thread:
 * creator made child (fork, vfork or clone event); caller is at the entry
 * of sched_getaffinity or sched_setaffinity on target (0: itself), or of a
 * call that changes its uid (the tracer may lose the right to put its mask
 * back); tid is gone (reaped: gone true) or about to be detached or to
 * exit (false); a thread's exec gave it the leader's tid (before its exec
 * stop is counted by follow_stop).
 */
void follow_created(struct cpu_follow *f, pid_t creator, pid_t child);
void follow_affinity_call(struct cpu_follow *f, pid_t caller, pid_t target);
void follow_forget(struct cpu_follow *f, pid_t tid, bool gone);
void follow_renamed(struct cpu_follow *f, pid_t former, pid_t tid);
/* A new thread of tgid must wait for its creator's clone event: a thread
 * of tgid may be pinned, and the event is where its mask is put back. */
bool follow_holds_threads_of(const struct cpu_follow *f, pid_t tgid);
/* Back to the tracer's own CPUs and policy; stops the watchdog. */
void follow_release(struct cpu_follow *f);

#endif
