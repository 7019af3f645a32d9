// SPDX-License-Identifier: MIT
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "util.h"

volatile sig_atomic_t signals_tick;

static const int forwarded[] = {
	SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
};
static const int job_stops[] = { SIGTSTP, SIGTTIN, SIGTTOU };

static struct sigaction saved_forwarded[ARRAY_SIZE(forwarded)];
static struct sigaction saved_job_stops[ARRAY_SIZE(job_stops)];
static struct sigaction saved_alarm, saved_child, saved_pipe;
static sigset_t saved_mask;

static volatile pid_t target_pid;
static int target_pidfd = -1;
/* The main process has ended: a signal to it would be lost, and once
 * reaped its pid may be anyone's. */
static atomic_int main_gone;
/*
 * Scans of the task for a forwarded signal (signal_tracees), numbered from
 * 1, one at a time (forward_lock or the lone handler), and for each
 * signal the number of its last scan: a process parked for a handover has
 * no tracer for a moment, and a scan then passes it by (signals_catch_up).
 */
static atomic_uint scans_started, scans_finished;
static atomic_uint last_scan_of[NSIG];
/* The forwarded signals iowrap did not start with ignored: blocked in
 * every iowrap thread and read from forward_fd (see signals_settle). */
static sigset_t forward_set;
static int forward_fd = -1;
static pthread_mutex_t forward_lock = PTHREAD_MUTEX_INITIALIZER;
/* iowrap's own traced helpers (the tracer threads' doorbells): no
 * process of the task, so no scan signals them.  Lock-free: read in a
 * signal handler. */
#define SPARED_MAX 32
static _Atomic pid_t spared[SPARED_MAX];
/*
 * --orphan-timeout: once the main process has ended, the processes of the
 * task still running get SIGTERM when the timer first fires, and SIGKILL
 * at each later firing, ORPHAN_KILL_AFTER_S apart, while any is left.
 * The forwarding thread alone reads the timer and does the scans.
 */
#define ORPHAN_KILL_AFTER_S 2
static long orphan_timeout_s = -1;
static int orphan_timer = -1;
static bool orphans_termed;
static atomic_int orphan_timer_failed;
static atomic_uint orphans_terminated, orphans_killed;
/* The number of the SIGTERM round's scan (0: none yet): a forwarded
 * SIGTERM's scans are not the round's. */
static atomic_uint orphan_term_scan;

/* Appends the decimal digits of v at p; returns the new end.  (snprintf
 * is not async-signal-safe.) */
static char *put_decimal(char *p, unsigned v)
{
	char tmp[12];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

/* /proc/TID/status.  Only syscalls and parse_proc_status's string work:
 * async-signal-safe. */
static int read_status(pid_t tid, struct proc_status *st)
{
	char path[48], buf[2048];

	*put_str(put_decimal(put_str(path, "/proc/"), (unsigned)tid),
		 "/status") = '\0';
	if (read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
		return -1;
	return parse_proc_status(buf, st);
}

/* Is pid a process (not another thread's id, which kill() would take
 * for its whole process) that iowrap traces?  Async-signal-safe. */
static bool traced_by_us(pid_t pid)
{
	char path[48];
	struct proc_status st;
	char *p;

	if (pid <= 0 || read_status(pid, &st) < 0 || st.tgid != pid)
		return false;
	/* TracerPid is the tracing thread's id: any of iowrap's threads. */
	if (st.tracer_pid <= 0)
		return false;
	p = put_decimal(put_str(path, "/proc/self/task/"),
			(unsigned)st.tracer_pid);
	*p = '\0';
	return access(path, F_OK) == 0;
}

/* -1 (ENOSYS) before Linux 5.3: callers fall back to kill(). */
static int pidfd_open_pid(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

void signals_spare(pid_t pid, bool spare)
{
	for (size_t i = 0; i < SPARED_MAX; i++) {
		pid_t expected = spare ? 0 : pid;

		if (atomic_compare_exchange_strong(&spared[i], &expected,
						   spare ? pid : 0))
			return;
	}
}

static bool is_spared(pid_t pid)
{
	for (size_t i = 0; i < SPARED_MAX; i++)
		if (atomic_load(&spared[i]) == pid)
			return true;
	return false;
}

/*
 * Sends sig to pid if iowrap traces it.  The pidfd is taken before the
 * check, so that the signal reaches the very process that was checked or
 * nobody: a pid that was freed and reused in between is never hit.
 */
static bool signal_if_traced(pid_t pid, int sig)
{
	int pidfd;

	if (is_spared(pid))
		return false;
	pidfd = pidfd_open_pid(pid);
	int open_errno = errno;
	bool sent = false;

	/* ESRCH: gone.  Other errors (ENOSYS before Linux 5.3, EPERM from
	 * a container's seccomp profile): kill(). */
	if (traced_by_us(pid)) {
		if (pidfd >= 0)
			sent = pidfd_signal(pidfd, sig) == 0;
		else if (open_errno != ESRCH)
			sent = kill(pid, sig) == 0;
	}
	if (pidfd >= 0)
		close(pidfd);
	return sent;
}

/* The pids one scan has signalled (signal_tracees), so that none gets
 * the signal twice: those of the /proc pass first, in pid order, then a
 * few from the pids tried after it.  Past the last slot, a pid may. */
#define SCAN_SENT_MAX 65536
static pid_t scan_sent[SCAN_SENT_MAX];
static size_t scan_nsent, scan_nsorted;

static bool sent_in_this_scan(pid_t pid)
{
	size_t lo = 0, hi = scan_nsorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (scan_sent[mid] == pid)
			return true;
		if (scan_sent[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = scan_nsorted; i < scan_nsent; i++)
		if (scan_sent[i] == pid)
			return true;
	return false;
}

static void remember_sent(pid_t pid)
{
	if (scan_nsent < SCAN_SENT_MAX)
		scan_sent[scan_nsent++] = pid;
}

/* A /proc entry's pid, or 0 for the others (self, net, ...). */
static pid_t pid_of_name(const char *s)
{
	uint64_t v;

	return parse_u64(s, &v) && v <= INT_MAX ? (pid_t)v : 0;
}

/* getdents64's record (glibc and musl name theirs differently). */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* A number in a /proc/sys file, or -1. */
static long read_sysctl(const char *path)
{
	char buf[32];
	uint64_t v;
	ssize_t n = read_file_at(AT_FDCWD, path, buf, sizeof(buf));

	if (n <= 0)
		return -1;
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return parse_u64(buf, &v) && v <= INT_MAX ? (long)v : -1;
}

/* The pid the kernel gave out last in iowrap's pid namespace, or -1. */
static long last_pid(void)
{
	long pid = read_sysctl("/proc/sys/kernel/ns_last_pid");

	return pid > 0 ? pid : -1;
}

/* Every pid under /proc (the thread group leaders), in pid order. */
static void signal_proc_entries(int sig)
{
	_Alignas(8) char buf[4096];
	int dirfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (dirfd < 0)
		return;
	while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			const struct linux_dirent64 *d =
				(const struct linux_dirent64 *)(buf + off);
			pid_t pid = pid_of_name(d->d_name);

			if (pid > 0 && signal_if_traced(pid, sig))
				remember_sent(pid);
			if (d->d_reclen == 0)
				break;
			off += d->d_reclen;
		}
	}
	close(dirfd);
}

/*
 * The pids given out after from, up to and including to (pids go round
 * at max, pid_max), and the `before` pids before from: after the /proc
 * pass, SCAN_FORKS_IN_FLIGHT, as a fork that had its pid before from was
 * read may show in /proc only after the pass went by.  More than
 * SCAN_RETRY_MAX apart: not a scan's worth of forks (ns_last_pid written
 * by a checkpoint-restore tool), nothing is tried.
 */
#define SCAN_FORKS_IN_FLIGHT 256
#define SCAN_RETRY_MAX 65536

static void signal_pids_after(long from, long to, long before, long max,
			      int sig)
{
	long ahead = (to - from + max) % max;
	long pid = (from - before + max) % max;

	if (ahead > SCAN_RETRY_MAX)
		return;
	for (long n = 0; n < before + ahead; n++) {
		pid = pid + 1 >= max ? 1 : pid + 1;
		if (!sent_in_this_scan((pid_t)pid) &&
		    signal_if_traced((pid_t)pid, sig))
			remember_sent((pid_t)pid);
	}
}

/* The pids given out since from (ns_last_pid then), pass after pass
 * until no new one came. */
#define SCAN_PASSES_MAX 8

static void signal_new_pids(long from, int sig)
{
	long max = read_sysctl("/proc/sys/kernel/pid_max");

	if (from <= 0 || from >= max || max <= SCAN_FORKS_IN_FLIGHT)
		return;
	for (int pass = 1; pass < SCAN_PASSES_MAX; pass++) {
		long to = last_pid();

		if (to <= 0 || to >= max || (to == from && pass > 1))
			return;
		signal_pids_after(from, to,
				  pass == 1 ? SCAN_FORKS_IN_FLIGHT : 0, max,
				  sig);
		from = to;
	}
}

/*
 * After the main process: every process of the task still running (the
 * orphans iowrap waits for).  Each is a pid under /proc that one of
 * iowrap's threads traces.  getdents64 on a stack buffer, not readdir:
 * async-signal-safe, for forward_handler.  /proc lists by pid, and pids
 * are given out from after the last one, which may be below older
 * processes: a child forked while the scan ran may have a pid the scan
 * had passed already, and a fork under way when the scan began may show
 * its child only after the pass went by (the kernel finishes a fork when
 * a signal other than SIGKILL comes to that one process meanwhile).  So
 * then the pids given out meanwhile, and a few before, are tried.  A
 * child made before its parent got the signal gets it too, as from a
 * kill of a process group, where the kernel sees to it.
 */
static size_t signal_tracees(int sig)
{
	long from = last_pid();

	atomic_store(&last_scan_of[sig],
		     atomic_fetch_add(&scans_started, 1) + 1);
	scan_nsent = 0;
	scan_nsorted = 0;
	signal_proc_entries(sig);
	scan_nsorted = scan_nsent;
	signal_new_pids(from, sig);
	atomic_fetch_add(&scans_finished, 1);
	return scan_nsent;
}

unsigned signals_scans_finished(void)
{
	return atomic_load(&scans_finished);
}

/* Until the scans started so far have finished. */
static void wait_for_scans(unsigned started)
{
	struct timespec nap = { .tv_nsec = 100000 };

	while ((int)(started - atomic_load(&scans_finished)) > 0)
		nanosleep(&nap, NULL);
}

/* Did an --orphan-timeout round send sig in a scan after the first
 * `finished` ones?  Only those rounds scan with SIGKILL. */
static bool orphan_round_since(int sig, unsigned finished)
{
	if (sig == SIGKILL)
		return atomic_load(&last_scan_of[SIGKILL]) > finished;
	return sig == SIGTERM && atomic_load(&orphan_term_scan) > finished;
}

static bool is_pending(pid_t pid, int sig)
{
	struct proc_status st;

	return read_status(pid, &st) == 0 &&
	       (st.sig_pending & (UINT64_C(1) << (sig - 1)));
}

/*
 * A process the scan passed by (parked for a handover, or made in the
 * middle of a fork) is sent an orphan round's signal apart: it counts as
 * one the round reached, unless the scan reached it as well (the signal
 * already pending) and counted it then.
 */
static void send_apart(pid_t pid, int sig, unsigned finished,
		       bool (*send)(pid_t, int))
{
	bool counts = orphan_round_since(sig, finished) &&
		      !is_pending(pid, sig);

	if (!send(pid, sig) || !counts)
		return;
	atomic_fetch_add(sig == SIGKILL ? &orphans_killed : &orphans_terminated,
			 1);
}

static bool send_held(pid_t pid, int sig)
{
	return kill(pid, sig) == 0;
}

void signals_catch_up(pid_t pid, unsigned finished)
{
	unsigned started = atomic_load(&scans_started);

	if (started == finished)
		return; /* none since the park */
	/* A scan under way may still reach pid: after it, so that its
	 * signal and this one merge while pid is held. */
	wait_for_scans(started);
	for (int sig = 1; sig < NSIG; sig++)
		if (atomic_load(&last_scan_of[sig]) > finished)
			send_apart(pid, sig, finished, send_held);
}

bool signals_scanned(void)
{
	return atomic_load(&scans_started) != 0;
}

void signals_share_pending(pid_t creator, pid_t child)
{
	unsigned started = atomic_load(&scans_started);
	struct proc_status st;

	if (started == 0)
		return;
	/* A scan under way may still reach the creator. */
	wait_for_scans(started);
	if (read_status(creator, &st) < 0)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++) {
		int sig = forwarded[i];

		if (atomic_load(&last_scan_of[sig]) &&
		    (st.sig_pending & (UINT64_C(1) << (sig - 1))))
			send_apart(child, sig, 0, signal_if_traced);
	}
}

static bool main_has_exited(void)
{
	struct pollfd pfd = { .fd = target_pidfd, .events = POLLIN };

	return target_pidfd >= 0 && poll(&pfd, 1, 0) == 1;
}

/*
 * To the main process while it lives: its pidfd cannot reach another
 * process that took its pid after iowrap reaped it.  Once it is gone, to
 * the processes of the task still running.
 */
static void send_to_task(int sig)
{
	int sent = -1;

	if (!atomic_load(&main_gone)) {
		if (target_pidfd >= 0)
			sent = pidfd_signal(target_pidfd, sig);
		else
			sent = kill(target_pid, sig);
	}
	/* Sent to a main process that has exited unseen (no exit stop
	 * after a SIGKILL), not yet reaped: lost there.  Its pidfd is
	 * readable once it has exited. */
	if (sent < 0 || main_has_exited())
		signal_tracees(sig);
}

/*
 * SI_KERNEL: the terminal sent it to the whole foreground group, so the
 * task has it already.  A tracee's kill(0, sig) reached the task directly
 * as well.
 */
static void forward(int sig, int code, pid_t sender)
{
	if (code != SI_KERNEL && !traced_by_us(sender) && target_pid > 0)
		send_to_task(sig);
}

/* Only if the forwarding thread cannot run: decides at delivery, when a
 * tracee that sent the signal may be gone already. */
static void forward_handler(int sig, siginfo_t *si, void *ucontext)
{
	int saved_errno = errno;

	(void)ucontext;
	forward(sig, si->si_code, si->si_pid);
	errno = saved_errno;
}

void signals_settle(void)
{
	struct signalfd_siginfo si;

	if (forward_fd < 0 || target_pid <= 0)
		return;
	pthread_mutex_lock(&forward_lock);
	while (read(forward_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		forward((int)si.ssi_signo, si.ssi_code, (pid_t)si.ssi_pid);
	pthread_mutex_unlock(&forward_lock);
}

/* Fires once, seconds from now (0: at once; an all-zero time would
 * disarm it). */
static void arm_orphan_timer(long seconds)
{
	struct itimerspec when = { .it_value = { .tv_sec = seconds,
						 .tv_nsec = seconds ? 0 : 1 } };

	if (orphan_timer >= 0 &&
	    timerfd_settime(orphan_timer, 0, &when, NULL) < 0)
		atomic_store(&orphan_timer_failed, 1);
}

/* The timer fired: SIGTERM the first time, then SIGKILL while any is
 * left (one forked while a scan ran may have been missed). */
static void end_orphans(void)
{
	uint64_t expirations;
	bool again;

	if (read(orphan_timer, &expirations, sizeof(expirations)) !=
	    (ssize_t)sizeof(expirations))
		return;
	pthread_mutex_lock(&forward_lock);
	if (!orphans_termed) {
		orphans_termed = true;
		/* Scans are numbered from 1, one at a time under the lock. */
		atomic_store(&orphan_term_scan,
			     atomic_load(&scans_started) + 1);
		atomic_fetch_add(&orphans_terminated,
				 (unsigned)signal_tracees(SIGTERM));
		/* Always a SIGKILL round: one parked for a handover while
		 * the scan ran got SIGTERM apart (signals_catch_up), and may
		 * ignore it. */
		again = true;
	} else {
		size_t sent = signal_tracees(SIGKILL);

		atomic_fetch_add(&orphans_killed, (unsigned)sent);
		again = sent > 0;
	}
	pthread_mutex_unlock(&forward_lock);
	if (again)
		arm_orphan_timer(ORPHAN_KILL_AFTER_S);
}

static void *forwarder_main(void *arg)
{
	struct pollfd pfd[2] = { { .fd = forward_fd, .events = POLLIN },
				 { .fd = orphan_timer, .events = POLLIN } };

	(void)arg;
	for (;;) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			return NULL;
		signals_settle();
		if (pfd[1].revents & POLLIN)
			end_orphans();
	}
}

/* Without a thread to read them, the signals are taken by a handler. */
static void forward_by_handler(void)
{
	struct sigaction fwd = { .sa_sigaction = forward_handler,
				 .sa_flags = SA_SIGINFO };

	/* One forwarded signal's scan at a time (signal_tracees). */
	fwd.sa_mask = forward_set;
	if (forward_fd >= 0)
		close(forward_fd);
	forward_fd = -1;
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		if (sigismember(&forward_set, forwarded[i]))
			sigaction(forwarded[i], &fwd, NULL);
	sigprocmask(SIG_UNBLOCK, &forward_set, NULL);
}

/* Without the forwarding thread no one reads the orphans' timer. */
static void drop_orphan_timer(void)
{
	if (orphan_timer >= 0)
		close(orphan_timer);
	orphan_timer = -1;
}

static void start_forwarder(void)
{
	pthread_t thread;
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	/* The handlers' scans and the thread's must not overlap: no
	 * thread, no timer. */
	if (forward_fd < 0 || pthread_attr_init(&attr) != 0) {
		forward_by_handler();
		drop_orphan_timer();
		return;
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* The ticker's SIGALRM must interrupt the tracer's wait, not this. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&thread, &attr, forwarder_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		forward_by_handler();
		drop_orphan_timer();
	}
}

static void tick_handler(int sig)
{
	(void)sig;
	signals_tick = 1;
}

void signals_setup(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };

	sigprocmask(SIG_SETMASK, NULL, &saved_mask);
	sigemptyset(&forward_set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++) {
		sigaction(forwarded[i], NULL, &saved_forwarded[i]);
		/* Ignored when we started (nohup, a background job): the
		 * task inherits that and there is nothing to forward. */
		if (saved_forwarded[i].sa_handler != SIG_IGN)
			sigaddset(&forward_set, forwarded[i]);
	}
	/* Pending until the forwarding thread reads them, those sent
	 * before the task exists included. */
	sigprocmask(SIG_BLOCK, &forward_set, NULL);
	forward_fd = signalfd(-1, &forward_set, SFD_NONBLOCK | SFD_CLOEXEC);
	for (size_t i = 0; i < ARRAY_SIZE(job_stops); i++)
		sigaction(job_stops[i], &ign, &saved_job_stops[i]);
	sigaction(SIGALRM, NULL, &saved_alarm);
	/* An inherited SIG_IGN for SIGCHLD would make the kernel reap the
	 * task behind our back. */
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigaction(SIGCHLD, &dfl, &saved_child);
	/* A closed stderr must not kill iowrap, and the task with it. */
	sigaction(SIGPIPE, &ign, &saved_pipe);
	/* The ticker must interrupt our waits. */
	sigset_t unblock;

	sigemptyset(&unblock);
	sigaddset(&unblock, SIGALRM);
	sigaddset(&unblock, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &unblock, NULL);
}

void signals_restore_for_child(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaction(forwarded[i], &saved_forwarded[i], NULL);
	for (size_t i = 0; i < ARRAY_SIZE(job_stops); i++)
		sigaction(job_stops[i], &saved_job_stops[i], NULL);
	sigaction(SIGALRM, &saved_alarm, NULL);
	sigaction(SIGCHLD, &saved_child, NULL);
	sigaction(SIGPIPE, &saved_pipe, NULL);
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

void signals_set_target(pid_t pid)
{
	target_pid = pid;
	target_pidfd = pidfd_open_pid(pid);
	start_forwarder();
}

void signals_main_ended(void)
{
	atomic_store(&main_gone, 1);
}

void signals_main_reaped(void)
{
	signals_main_ended();
	if (orphan_timeout_s >= 0)
		arm_orphan_timer(orphan_timeout_s);
}

void signals_set_orphan_timeout(long seconds)
{
	orphan_timer =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (orphan_timer >= 0)
		orphan_timeout_s = seconds;
}

bool signals_orphan_timer_running(void)
{
	return orphan_timer >= 0 && !atomic_load(&orphan_timer_failed);
}

void signals_orphans_ended(unsigned *terminated, unsigned *killed)
{
	/* After a round under way: a process it killed may be reaped, and
	 * the tracing over, before the scan has gone through /proc and
	 * added its count. */
	pthread_mutex_lock(&forward_lock);
	*terminated = atomic_load(&orphans_terminated);
	*killed = atomic_load(&orphans_killed);
	pthread_mutex_unlock(&forward_lock);
}

static void set_ticker(long usec)
{
	struct itimerval it = {
		.it_interval = { .tv_sec = usec / 1000000,
				 .tv_usec = usec % 1000000 },
		.it_value = { .tv_sec = usec / 1000000,
			      .tv_usec = usec % 1000000 },
	};

	setitimer(ITIMER_REAL, &it, NULL);
}

void signals_start_ticker(void)
{
	struct sigaction tick = { .sa_handler = tick_handler };

	sigemptyset(&tick.sa_mask);
	sigaction(SIGALRM, &tick, NULL);
	set_ticker(1000000);
}

void signals_stop_ticker(void)
{
	set_ticker(0);
	sigaction(SIGALRM, &saved_alarm, NULL);
}

bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}
