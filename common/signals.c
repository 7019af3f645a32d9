// SPDX-License-Identifier: MIT
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <unistd.h>

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
/* The forwarded signals iowrap did not start with ignored: blocked in
 * every iowrap thread and read from forward_fd (see signals_settle). */
static sigset_t forward_set;
static int forward_fd = -1;
static pthread_mutex_t forward_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* Is pid one of our tracees?  Only syscalls: async-signal-safe. */
static int sent_by_tracee(pid_t pid)
{
	char path[48], buf[2048];
	unsigned tracer = 0;
	char *p;

	if (pid <= 0)
		return 0;
	p = put_decimal(put_str(path, "/proc/"), (unsigned)pid);
	*put_str(p, "/status") = '\0';
	if (read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "\nTracerPid:\t");
	if (!p)
		return 0;
	for (p += strlen("\nTracerPid:\t"); *p >= '0' && *p <= '9'; p++)
		tracer = tracer * 10 + (unsigned)(*p - '0');
	/* TracerPid is the tracing thread's id: any of iowrap's threads. */
	if (!tracer)
		return 0;
	p = put_decimal(put_str(path, "/proc/self/task/"), tracer);
	*p = '\0';
	return access(path, F_OK) == 0;
}

/*
 * SI_KERNEL: the terminal sent it to the whole foreground group, so the
 * task has it already.  A tracee's kill(0, sig) reached the task directly
 * as well.
 */
static void forward(int sig, int code, pid_t sender)
{
	if (code != SI_KERNEL && !sent_by_tracee(sender) && target_pid > 0)
		kill(target_pid, sig);
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

static void *forwarder_main(void *arg)
{
	struct pollfd pfd = { .fd = forward_fd, .events = POLLIN };

	(void)arg;
	for (;;) {
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return NULL;
		signals_settle();
	}
}

/* Without a thread to read them, the signals are taken by a handler. */
static void forward_by_handler(void)
{
	struct sigaction fwd = { .sa_sigaction = forward_handler,
				 .sa_flags = SA_SIGINFO };

	sigemptyset(&fwd.sa_mask);
	if (forward_fd >= 0)
		close(forward_fd);
	forward_fd = -1;
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		if (sigismember(&forward_set, forwarded[i]))
			sigaction(forwarded[i], &fwd, NULL);
	sigprocmask(SIG_UNBLOCK, &forward_set, NULL);
}

static void start_forwarder(void)
{
	pthread_t thread;
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	if (forward_fd < 0 || pthread_attr_init(&attr) != 0) {
		forward_by_handler();
		return;
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* The ticker's SIGALRM must interrupt the tracer's wait, not this. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&thread, &attr, forwarder_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err)
		forward_by_handler();
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
	start_forwarder();
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
