// SPDX-License-Identifier: MIT
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
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
static volatile sig_atomic_t early_signal;

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

static void forward_handler(int sig, siginfo_t *si, void *ucontext)
{
	int saved_errno = errno;

	(void)ucontext;
	/*
	 * SI_KERNEL: the terminal sent it to the whole foreground group, so
	 * the task has it already.  A tracee's kill(0, sig) reached the task
	 * directly as well.
	 */
	if (si->si_code != SI_KERNEL && !sent_by_tracee(si->si_pid)) {
		if (target_pid > 0)
			kill(target_pid, sig);
		else
			early_signal = sig;
	}
	errno = saved_errno;
}

static void tick_handler(int sig)
{
	(void)sig;
	signals_tick = 1;
}

void signals_setup(void)
{
	struct sigaction fwd = { .sa_sigaction = forward_handler,
				 .sa_flags = SA_SIGINFO };
	struct sigaction ign = { .sa_handler = SIG_IGN };

	sigprocmask(SIG_SETMASK, NULL, &saved_mask);
	sigemptyset(&fwd.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++) {
		sigaction(forwarded[i], NULL, &saved_forwarded[i]);
		/* Ignored when we started (nohup, a background job): the
		 * task inherits that and there is nothing to forward. */
		if (saved_forwarded[i].sa_handler != SIG_IGN)
			sigaction(forwarded[i], &fwd, NULL);
	}
	for (size_t i = 0; i < ARRAY_SIZE(job_stops); i++)
		sigaction(job_stops[i], &ign, &saved_job_stops[i]);
	sigaction(SIGALRM, NULL, &saved_alarm);
	/* An inherited SIG_IGN for SIGCHLD would make the kernel reap the
	 * task behind our back. */
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigaction(SIGCHLD, &dfl, &saved_child);
	/* A closed stderr must not kill iowrap, and the task with it. */
	sigaction(SIGPIPE, &ign, &saved_pipe);
	/* Forwarding needs the signals delivered while we wait. */
	sigset_t unblock;

	sigemptyset(&unblock);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&unblock, forwarded[i]);
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
	if (early_signal) {
		kill(pid, early_signal);
		early_signal = 0;
	}
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
