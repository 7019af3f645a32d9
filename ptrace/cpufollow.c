// SPDX-License-Identifier: MIT
#include "cpufollow.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "util.h"

/*
 * A phase starts after this many stops of one tracee ...  Short: a new
 * process's loader makes 20-30 stops at --level files, and without a phase
 * each of them crosses CPUs (500 x /bin/true: 32 here cost +132%, 8
 * +88%, 4 +74%; make and fio gained 2-5%, nothing lost).
 */
#define FOLLOW_RUN_MIN 8
/* ... each within this long of the one before. */
#define FOLLOW_GAP_US 1000
/* The tracee's CPU is read again after this many stops or this long. */
#define FOLLOW_RECHECK 256
#define FOLLOW_RECHECK_US 10000
/*
 * The watchdog looks this often; this bounds what a starved tracer costs
 * the task.  Shorter is not better: its own wake-ups make the kernel move
 * the tracee off the tracer's CPU (every 2 ms: 5x the moves, half the gain).
 */
#define FOLLOW_WATCHDOG_US 20000
/* A stop left waiting this long, none handled meanwhile: starved. */
#define FOLLOW_STARVED_US 1000
/* No stop for this long: the phase ends quietly. */
#define FOLLOW_QUIET_US 60000
/* A phase that lasted this long resets the back-off. */
#define FOLLOW_GOOD_PHASE_US 50000
/* After a starved phase, none for this long, doubling up to the max. */
#define FOLLOW_HOLDOFF_MIN_US 20000
#define FOLLOW_HOLDOFF_MAX_US 5000000

enum phase_state {
	PHASE_OFF,
	PHASE_WATCHED, /* on, and the watchdog watches it */
	PHASE_DEMOTING, /* the watchdog is ending it (settled_phase) */
	PHASE_QUIET, /* ended by the watchdog: no stop for a while */
	PHASE_STARVED, /* ended by the watchdog: a stop waited in vain */
};

/* Wakes a tracer thread from its wait (EINTR); iowrap has no other use
 * for it, and its default is to ignore it. */
#define FOLLOW_WAKE_SIGNAL SIGURG

#define CLAIM_BITS (8 * sizeof(unsigned long))

bool pins_tracee(const struct cpu_follow *f)
{
	return f->how == FOLLOW_PIN_TRACEE;
}

bool idles_tracer(const struct cpu_follow *f)
{
	return f->how == FOLLOW_IDLE_TRACER;
}

/* musl leaves sched_setscheduler() unimplemented (ENOSYS) on purpose. */
static int set_policy(pid_t tid, int policy)
{
	struct sched_param param = { .sched_priority = 0 };

	return (int)syscall(SYS_sched_setscheduler, tid, policy, &param);
}

static int pin_to(pid_t tid, int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(tid, sizeof(one), &one);
}

/* The tracer thread's own CPUs and policy again; safe from either thread. */
static void restore(const struct cpu_follow *f)
{
	if (idles_tracer(f))
		set_policy(f->self_tid, SCHED_OTHER);
	sched_setaffinity(f->self_tid, sizeof(f->allowed), &f->allowed);
}

static void close_stat_fd(struct cpu_follow *f)
{
	if (f->stat_fd >= 0)
		close(f->stat_fd);
	f->stat_fd = -1;
}

/*
 * The tracee's stat stays open while it is the one followed: reading it
 * again is a pread, where opening it each time is a path walk through
 * /proc (a tenth of the tracer's syscalls in tar's storm of stops).  A
 * tid reused by a new process reads -ESRCH through the old fd: one retry.
 */
static int read_tracee_stat(struct cpu_follow *f, pid_t tid,
			    struct proc_stat *st)
{
	char path[32];

	if (f->stat_tid == tid && f->stat_fd >= 0 &&
	    read_proc_stat_fd(f->stat_fd, st) == 0)
		return 0;
	close_stat_fd(f);
	snprintf(path, sizeof(path), "%d/stat", (int)tid);
	f->stat_fd = openat(f->procfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	f->stat_tid = tid;
	if (f->stat_fd < 0)
		return -1;
	return read_proc_stat_fd(f->stat_fd, st);
}

static int tracee_cpu(struct cpu_follow *f, pid_t tid)
{
	struct proc_stat st;

	if (read_tracee_stat(f, tid, &st) < 0)
		return -1;
	if (st.processor < 0 || st.processor >= CPU_SETSIZE ||
	    !CPU_ISSET(st.processor, &f->allowed))
		return -1;
	return st.processor;
}

/*
 * A stop or exit waits for the tracer.  Any thread of the tracer's process
 * may wait for its tracees; WNOWAIT leaves the event to the tracer thread.
 */
static bool event_pending(void)
{
	siginfo_t info;

	memset(&info, 0, sizeof(info));
	if (waitid(P_ALL, 0, &info,
		   WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) < 0)
		return false;
	return info.si_pid != 0;
}

/*
 * Sleeps us microseconds unless told to quit meanwhile; false then.  A
 * timed wait, not nanosleep(), so that ending the run never waits for it.
 */
static bool doze(struct cpu_follow *f, long us)
{
	struct timespec until;
	bool go_on;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += (us % 1000000) * 1000;
	until.tv_sec += us / 1000000 + until.tv_nsec / 1000000000;
	until.tv_nsec %= 1000000000;
	pthread_mutex_lock(&f->lock);
	while (!f->quit &&
	       pthread_cond_timedwait(&f->wake, &f->lock, &until) == 0)
		;
	go_on = !f->quit;
	pthread_mutex_unlock(&f->lock);
	return go_on;
}

static bool watched(struct cpu_follow *f)
{
	return atomic_load(&f->phase) == PHASE_WATCHED;
}

/*
 * The phase's state once the watchdog is done putting the tracer back:
 * only the watchdog leaves PHASE_DEMOTING, two syscalls after it came.
 */
static int settled_phase(struct cpu_follow *f)
{
	int state;

	while ((state = atomic_load(&f->phase)) == PHASE_DEMOTING)
		sched_yield();
	return state;
}

static bool demoted(struct cpu_follow *f)
{
	int state = atomic_load(&f->phase);

	return state == PHASE_QUIET || state == PHASE_STARVED;
}

/*
 * Ends the phase from the watchdog; the tracer notices at its next stop
 * or wait (repin).  A tracer that pinned its tracee puts it back then; it
 * may sleep in waitpid for as long as the tracee computes, so it is woken,
 * again every look until it has noticed: a signal that comes between its
 * last look and its waitpid() is lost.
 */
static void demote(struct cpu_follow *f, enum phase_state why)
{
	int state = PHASE_WATCHED;

	if (!atomic_compare_exchange_strong(&f->phase, &state, PHASE_DEMOTING))
		return; /* the tracer ended it meanwhile */
	/* A tracer at normal priority puts itself back when it takes the
	 * end: a restore from here could come after its next pin.  One at
	 * SCHED_IDLE may be starving: it is put back from here, before the
	 * tracer may take the end (and pin itself again). */
	if (idles_tracer(f))
		restore(f);
	atomic_store(&f->phase, why);
	while (pins_tracee(f) && demoted(f)) {
		syscall(SYS_tgkill, getpid(), f->self_tid, FOLLOW_WAKE_SIGNAL);
		if (!doze(f, FOLLOW_WATCHDOG_US))
			break;
	}
}

/*
 * A stop waits, and FOLLOW_STARVED_US later a stop still waits with none
 * handled meanwhile: that stop has waited that long, where a tracer that
 * gets its CPU serves it within microseconds.  Counting stops alone would
 * not do: a tracee that stops rarely (gzip, every ms or so) is often seen
 * with a stop just made, twice in a row, by a tracer that is doing fine.
 */
static bool starved(struct cpu_follow *f)
{
	unsigned long before;

	if (!event_pending())
		return false;
	before = atomic_load(&f->progress);
	return doze(f, FOLLOW_STARVED_US) &&
	       atomic_load(&f->progress) == before && event_pending();
}

/*
 * One watch of a phase: returns when the phase is over.  Between stops the
 * tracer sits preempted behind its tracee, or asleep in waitpid().
 */
static void watch_phase(struct cpu_follow *f)
{
	unsigned long seen = atomic_load(&f->progress);
	long still_us = 0;

	while (watched(f)) {
		unsigned long now_seen;

		if (!doze(f, FOLLOW_WATCHDOG_US))
			break;
		if (starved(f)) {
			demote(f, PHASE_STARVED);
			break;
		}
		now_seen = atomic_load(&f->progress);
		if (now_seen != seen) {
			seen = now_seen;
			still_us = 0;
		} else if ((still_us += FOLLOW_WATCHDOG_US) >=
			   FOLLOW_QUIET_US) {
			demote(f, PHASE_QUIET);
		}
	}
}

static void *watchdog_main(void *arg)
{
	struct cpu_follow *f = arg;

	pthread_mutex_lock(&f->lock);
	while (!f->quit) {
		if (!watched(f)) {
			pthread_cond_wait(&f->wake, &f->lock);
			continue;
		}
		pthread_mutex_unlock(&f->lock);
		watch_phase(f);
		pthread_mutex_lock(&f->lock);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* The watchdog takes no signal: they all go to the tracer thread. */
static bool start_watchdog(struct cpu_follow *f)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	if (f->thread_started)
		return true;
	if (pthread_attr_init(&attr) != 0)
		return false;
	pthread_attr_setstacksize(&attr, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&f->watchdog, &attr, watchdog_main, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	f->thread_started = err == 0;
	return f->thread_started;
}

static void init_monotonic_cond(pthread_cond_t *cond)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

static bool idle_reversible;

static void *try_idle_and_back(void *arg)
{
	(void)arg;
	idle_reversible = set_policy(0, SCHED_IDLE) == 0 &&
			  set_policy(0, SCHED_OTHER) == 0;
	return NULL;
}

static void probe_idle(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, try_idle_and_back, NULL) == 0)
		pthread_join(t, NULL);
}

/*
 * Whether a thread may come back from SCHED_IDLE: the kernel lets one
 * leave it only with CAP_SYS_NICE (in the initial user namespace) or an
 * RLIMIT_NICE that allows its nice value, which an unprivileged user's
 * default limit of 0 does not (EPERM).  A tracer thread left at
 * SCHED_IDLE starves behind any busy process of the task or the node:
 * as nobody, dd of 8 MB beside two busy loops took 60 s (until they
 * ended) where root took 0.9 s.  Asked of the kernel once, on a thread
 * of its own.
 */
static bool idle_is_reversible(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, probe_idle);
	return idle_reversible;
}

static void ignore_wake(int sig)
{
	(void)sig;
}

static void install_wake_handler(void)
{
	struct sigaction sa = { .sa_handler = ignore_wake };

	sigemptyset(&sa.sa_mask);
	sigaction(FOLLOW_WAKE_SIGNAL, &sa, NULL);
}

/* The watchdog's signal interrupts this thread's waits (no SA_RESTART). */
static void let_wake_in(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	sigset_t wake;

	pthread_once(&once, install_wake_handler);
	sigemptyset(&wake);
	sigaddset(&wake, FOLLOW_WAKE_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
}

/*
 * What following a wish comes to here: the tracer at SCHED_IDLE needs a
 * way back from it; without one, pinning the tracee is the only way.
 */
static enum follow_how follow_way(enum follow_how want)
{
	if (want == FOLLOW_AUTO)
		return FOLLOW_PIN_TRACEE;
	if (want == FOLLOW_IDLE_TRACER && !idle_is_reversible())
		return FOLLOW_PIN_TRACEE;
	return want;
}

void follow_init(struct cpu_follow *f, int procfd, enum follow_how want,
		 struct cpu_claims *claims)
{
	memset(f, 0, sizeof(*f));
	f->procfd = procfd;
	f->stat_fd = -1;
	f->self_tid = gettid();
	f->claims = claims;
	pidmap_init(&f->pins);
	pidmap_init(&f->pinned_tgids);
	pthread_mutex_init(&f->lock, NULL);
	init_monotonic_cond(&f->wake);
	atomic_init(&f->progress, 0);
	atomic_init(&f->phase, PHASE_OFF);
	if (want == FOLLOW_OFF ||
	    sched_getaffinity(0, sizeof(f->allowed), &f->allowed) < 0 ||
	    CPU_COUNT(&f->allowed) < 2)
		return;
	f->enabled = true;
	f->how = follow_way(want);
	if (pins_tracee(f))
		let_wake_in();
}

static const char *const follow_names[] = { "off", "sched_idle", "pin_tracee",
					    "auto" };

int follow_parse(const char *name)
{
	return index_of_name(follow_names, ARRAY_SIZE(follow_names), name);
}

const char *follow_how_name(enum follow_how how)
{
	return follow_names[how];
}

static bool claim_cpu(struct cpu_claims *c, int cpu)
{
	unsigned long bit = 1ul << (cpu % CLAIM_BITS);

	return !(atomic_fetch_or(&c->bits[cpu / CLAIM_BITS], bit) & bit);
}

static void unclaim_cpu(struct cpu_claims *c, int cpu)
{
	atomic_fetch_and(&c->bits[cpu / CLAIM_BITS],
			 ~(1ul << (cpu % CLAIM_BITS)));
}

/*
 * The tracee's CPU, or if another tracer thread has pinned its tracee
 * there, another CPU both may use (the tracee is stopped: moving it costs
 * nothing); -1 if there is none.
 */
static int claim_for(struct cpu_follow *f, int cpu, const cpu_set_t *own)
{
	if (CPU_ISSET(cpu, own) && claim_cpu(f->claims, cpu))
		return cpu;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (c != cpu && CPU_ISSET(c, own) &&
		    CPU_ISSET(c, &f->allowed) && claim_cpu(f->claims, c))
			return c;
	return -1;
}

static struct tracee_pin *pin_of(struct cpu_follow *f, pid_t tid)
{
	return pins_tracee(f) ? pidmap_get(&f->pins, tid) : NULL;
}

static void count_tgid(struct cpu_follow *f, pid_t tgid, int by)
{
	uintptr_t n = (uintptr_t)pidmap_get(&f->pinned_tgids, tgid) + by;

	if (n)
		pidmap_put(&f->pinned_tgids, tgid, (void *)n);
	else
		pidmap_remove(&f->pinned_tgids, tgid);
}

static void free_pin(struct cpu_follow *f, struct tracee_pin *p)
{
	if (p == f->pin_on)
		f->pin_on = NULL;
	pidmap_remove(&f->pins, p->tid);
	count_tgid(f, p->tgid, -1);
	free(p);
}

/* Pins the phase's tracee to its CPU or a free one: that CPU, or -1. */
static int pin_tracee(struct cpu_follow *f, int cpu)
{
	struct tracee_pin *p;
	cpu_set_t own;

	if (sched_getaffinity(f->tid, sizeof(own), &own) < 0)
		return -1;
	cpu = claim_for(f, cpu, &own);
	if (cpu < 0)
		return -1;
	if (pin_to(f->tid, cpu) < 0) {
		unclaim_cpu(f->claims, cpu);
		return -1;
	}
	p = pin_of(f, f->tid);
	if (p)
		free_pin(f, p);
	p = xmalloc(sizeof(*p));
	*p = (struct tracee_pin){
		.tid = f->tid, .tgid = f->tgid, .cpu = cpu, .on = true
	};
	p->own = own;
	pidmap_put(&f->pins, p->tid, p);
	count_tgid(f, p->tgid, 1);
	f->pin_on = p;
	return cpu;
}

/*
 * tid (p's tracee, or a child of its pin) gets p's own mask back if its
 * mask is still the pin: one someone else set meanwhile (taskset -p, or a
 * process of the task whose sched_setaffinity another tracer thread let
 * through) is theirs.  -1 if tid is gone.
 */
static int put_back(pid_t tid, const struct tracee_pin *p)
{
	cpu_set_t now;

	if (sched_getaffinity(tid, sizeof(now), &now) < 0)
		return -1;
	if (CPU_COUNT(&now) == 1 && CPU_ISSET(p->cpu, &now))
		sched_setaffinity(tid, sizeof(p->own), &p->own);
	return 0;
}

/*
 * Whether a child made under the pin may still wait for p's fork or clone
 * event: not if p sleeps (a parent in wait4, a read) and so is in no
 * clone (whose sleeps are uninterruptible; vfork's wait for its child
 * comes after its event).  Not proof: a fault on the clone's own
 * put_user (CLONE_PARENT_SETTID, CLONE_PIDFD) in a userfaultfd or FUSE
 * page sleeps interruptibly after the child's mask is copied.
 */
static bool may_be_forking(struct cpu_follow *f, struct tracee_pin *p)
{
	struct proc_stat st;

	return read_tracee_stat(f, p->tid, &st) < 0 || st.state != 'S';
}

/*
 * The pinned tracee gets its own mask back (put_back; in the tracer thread
 * only).  Its record stays while a child of the pin may wait for its event, or if its
 * tid is gone (an exec by a thread other than the leader swapped it for
 * the leader's: follow_renamed puts it back under the new one).
 */
static void unpin_tracee(struct cpu_follow *f)
{
	struct tracee_pin *p = f->pin_on;
	bool gone;

	if (!p)
		return;
	f->pin_on = NULL;
	p->on = false;
	gone = put_back(p->tid, p) < 0;
	unclaim_cpu(f->claims, p->cpu);
	/* A record whose tid is gone stays for follow_renamed or the reap. */
	if (!gone && !may_be_forking(f, p))
		free_pin(f, p);
}

/* tid stops, not at a fork or clone event: no child of its last pin can
 * still wait for one. */
static void settle_pin(struct cpu_follow *f, pid_t tid, int event)
{
	struct tracee_pin *p = pin_of(f, tid);

	if (p && !p->on && event != PTRACE_EVENT_FORK &&
	    event != PTRACE_EVENT_VFORK && event != PTRACE_EVENT_CLONE)
		free_pin(f, p);
}

/* The watchdog watches the phase from now on. */
static void watch(struct cpu_follow *f)
{
	pthread_mutex_lock(&f->lock);
	atomic_store(&f->phase, PHASE_WATCHED);
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
}

static void leave(struct cpu_follow *f, int64_t now);

/*
 * The tracer goes to SCHED_IDLE only once the phase is watched, so that it
 * never holds the watchdog's lock there (starving, it would keep the
 * watchdog from putting it back).  A phase the watchdog ended before that
 * was put back before it, so the tracer puts itself back.
 */
static bool go_idle(struct cpu_follow *f, int64_t now)
{
	if (set_policy(0, SCHED_IDLE) < 0) {
		leave(f, now);
		return false;
	}
	if (!watched(f)) {
		settled_phase(f);
		restore(f);
	}
	return true;
}

static void enter(struct cpu_follow *f, int64_t now)
{
	int cpu = tracee_cpu(f, f->tid);

	f->run = 0;
	if (cpu < 0 || !start_watchdog(f))
		return;
	if (pins_tracee(f)) {
		cpu = pin_tracee(f, cpu);
		if (cpu < 0) {
			/* Not this one (a setuid program), or no CPU free. */
			f->holdoff_until_us = now + FOLLOW_HOLDOFF_MIN_US;
			return;
		}
	}
	if (pin_to(0, cpu) < 0) {
		/* Not allowed here (a seccomp profile, say): never again. */
		unpin_tracee(f);
		restore(f);
		f->enabled = false;
		return;
	}
	f->cpu = cpu;
	f->active = true;
	f->since_check = 0;
	f->checked_us = now;
	f->active_since_us = now;
	watch(f);
	if (idles_tracer(f) && !go_idle(f, now)) {
		/* As a refused pin: never again. */
		f->enabled = false;
		return;
	}
	f->phases++;
}

/* A phase the watchdog ended starved holds off the next ones. */
static void count_starved(struct cpu_follow *f, int64_t now)
{
	f->starved++;
	f->holdoff_us = f->holdoff_us ? f->holdoff_us * 2 :
					FOLLOW_HOLDOFF_MIN_US;
	if (f->holdoff_us > FOLLOW_HOLDOFF_MAX_US)
		f->holdoff_us = FOLLOW_HOLDOFF_MAX_US;
	f->holdoff_until_us = now + f->holdoff_us;
}

/* The tracer ends the phase, or takes the end the watchdog made. */
static void end_phase(struct cpu_follow *f, int state, int64_t now)
{
	unpin_tracee(f);
	f->active = false;
	if (state == PHASE_STARVED)
		count_starved(f, now);
	else if (now - f->active_since_us >= FOLLOW_GOOD_PHASE_US)
		f->holdoff_us = 0;
}

static void leave(struct cpu_follow *f, int64_t now)
{
	int state;

	do
		state = settled_phase(f);
	while (!atomic_compare_exchange_weak(&f->phase, &state, PHASE_OFF));
	/* Otherwise the watchdog has put a SCHED_IDLE tracer back. */
	if (state == PHASE_WATCHED || !idles_tracer(f))
		restore(f);
	end_phase(f, state, now);
}

/* The watchdog ended the phase (and put the tracer back). */
static void note_demotion(struct cpu_follow *f, int64_t now)
{
	int state = atomic_load(&f->phase);

	if ((state != PHASE_QUIET && state != PHASE_STARVED) ||
	    !atomic_compare_exchange_strong(&f->phase, &state, PHASE_OFF))
		return;
	if (!idles_tracer(f))
		restore(f);
	f->run = 0;
	end_phase(f, state, now);
}

/*
 * The tracer moves to cpu, unless the watchdog has ended the phase: it
 * put back the tracer's own CPUs, which a pin after that would undo for
 * good.  Whichever of the two goes last, the tracer ends up put back.
 * No lock: the tracer, at SCHED_IDLE on a busy CPU, could starve holding
 * it while the watchdog waited.
 */
static void repin(struct cpu_follow *f, int cpu)
{
	if (!watched(f) || pin_to(0, cpu) < 0)
		return;
	if (!watched(f)) {
		restore(f);
		return;
	}
	f->cpu = cpu;
	f->moves++;
}

static void read_tracee_cpu(struct cpu_follow *f, int64_t now)
{
	int cpu = tracee_cpu(f, f->tid);

	f->since_check = 0;
	f->checked_us = now;
	if (cpu >= 0 && cpu != f->cpu)
		repin(f, cpu);
}

/* Load balancing may move the tracee (unless it is pinned); follow it. */
static void recheck_cpu(struct cpu_follow *f, int64_t now)
{
	if (pins_tracee(f))
		return;
	if (++f->since_check < FOLLOW_RECHECK &&
	    now - f->checked_us < FOLLOW_RECHECK_US)
		return;
	read_tracee_cpu(f, now);
}

static bool is_creation(int event)
{
	return event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
	       event == PTRACE_EVENT_CLONE;
}

void follow_stop(struct cpu_follow *f, pid_t tid, pid_t tgid, int event)
{
	int64_t now;

	settle_pin(f, tid, event);
	if (!f->enabled)
		return;
	atomic_fetch_add_explicit(&f->progress, 1, memory_order_relaxed);
	now = now_monotonic_us();
	note_demotion(f, now);
	if (f->active) {
		if (tid == f->tid) {
			f->last_stop_us = now;
			recheck_cpu(f, now);
			return;
		}
		leave(f, now);
	}
	if (tid == f->tid && now - f->last_stop_us < FOLLOW_GAP_US) {
		f->run++;
	} else {
		f->tid = tid;
		f->tgid = tgid;
		f->run = 1;
	}
	f->last_stop_us = now;
	/*
	 * A new program's loader stops next, 20-30 times within a
	 * millisecond at --level files: the phase need not wait for 8 of
	 * them to cross CPUs first.
	 */
	if (event == PTRACE_EVENT_EXEC)
		f->run = FOLLOW_RUN_MIN;
	/* Not at a fork event: a pin's record would not say whether the
	 * child was made under this pin or the one before. */
	if (f->run >= FOLLOW_RUN_MIN && now >= f->holdoff_until_us &&
	    !is_creation(event))
		enter(f, now);
}

/*
 * On the tracee's CPU the SCHED_IDLE tracer runs again only once the tracee
 * stops or sleeps.  Running while it has not stopped means it sleeps in a
 * syscall, or the load balancer moved it to the other CPU: a tracee that
 * computes between stops (gzip) leaves the preempted tracer runnable beside
 * it, and an idle CPU pulls the tracee away within milliseconds.  Every
 * stop after that would cross CPUs until the next periodic re-read.  A
 * phase the watchdog ended is over here too: the tracer, now at
 * SCHED_OTHER, must not poll beside its tracee (tracer.c's wait_next); a
 * pinned tracee is put back.
 */
void follow_missed(struct cpu_follow *f)
{
	int64_t now;

	/* Only a phase can have been ended: nothing to do between phases. */
	if (!f->active)
		return;
	now = now_monotonic_us();
	note_demotion(f, now);
	if (f->active && !pins_tracee(f))
		read_tracee_cpu(f, now);
}

/*
 * A child made while its creator was pinned has the pin: its creator's
 * own mask back, before it runs (a new process waits for this event, and
 * so does a new thread: follow_holds_threads_of).
 */
void follow_created(struct cpu_follow *f, pid_t creator, pid_t child)
{
	struct tracee_pin *p = pin_of(f, creator);

	if (!p)
		return;
	put_back(child, p);
	if (!p->on)
		free_pin(f, p);
}

bool follow_holds_threads_of(const struct cpu_follow *f, pid_t tgid)
{
	return pins_tracee(f) && pidmap_get(&f->pinned_tgids, tgid) != NULL;
}

/*
 * Target's mask is its own from here.  The caller's record goes: it is at
 * a syscall's entry, so no child of its pin waits for an event (it stops
 * at that event before its fork returns).  Another target may be in the
 * middle of a fork: its record stays until its next stop.
 */
void follow_affinity_call(struct cpu_follow *f, pid_t caller, pid_t target)
{
	struct tracee_pin *p;

	if (!target)
		target = caller;
	p = pin_of(f, target);
	if (!p)
		return;
	if (p->on)
		leave(f, now_monotonic_us());
	p = pin_of(f, target); /* leave() may have freed it */
	if (p && target == caller)
		free_pin(f, p);
}

void follow_forget(struct cpu_follow *f, pid_t tid, bool gone)
{
	struct tracee_pin *p = pin_of(f, tid);

	if (!p)
		return;
	if (p->on) {
		/* A tid reaped may name another process already. */
		if (gone) {
			f->pin_on = NULL;
			p->on = false;
			unclaim_cpu(f->claims, p->cpu);
		}
		leave(f, now_monotonic_us());
	}
	p = pin_of(f, tid);
	if (p)
		free_pin(f, p);
}

/*
 * The leader's task is gone (a pin of it with it); the thread that execed
 * has its tid, and its pin.  If its phase ended while its old tid was
 * gone already, it could not be put back then: now.  (It is stopped at
 * its exec stop: it cannot have set that mask itself.)
 */
void follow_renamed(struct cpu_follow *f, pid_t former, pid_t tid)
{
	struct tracee_pin *p = pin_of(f, former);

	if (former == tid)
		return;
	follow_forget(f, tid, true);
	if (f->tid == former)
		f->tid = tid;
	if (!p)
		return;
	pidmap_remove(&f->pins, former);
	p->tid = tid;
	pidmap_put(&f->pins, tid, p);
	if (!p->on)
		put_back(tid, p);
}

/* The run is over: no record is of use any more. */
static void drop_pins(struct cpu_follow *f)
{
	while (f->pins.count > 0) {
		size_t i = 0;

		while (!f->pins.slot[i].key)
			i++;
		free_pin(f, f->pins.slot[i].value);
	}
}

void follow_release(struct cpu_follow *f)
{
	if (f->active)
		leave(f, now_monotonic_us());
	close_stat_fd(f);
	drop_pins(f);
	pidmap_release(&f->pins);
	pidmap_release(&f->pinned_tgids);
	if (f->thread_started) {
		pthread_mutex_lock(&f->lock);
		f->quit = true;
		atomic_store(&f->phase, PHASE_OFF);
		pthread_cond_signal(&f->wake);
		pthread_mutex_unlock(&f->lock);
		pthread_join(f->watchdog, NULL);
		f->thread_started = false;
	}
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->wake);
}
