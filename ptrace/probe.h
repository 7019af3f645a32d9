/* SPDX-License-Identifier: MIT */
#ifndef IOWRAP_PROBE_H
#define IOWRAP_PROBE_H

/*
 * Whether this kernel reports a seccomp stop before the syscall-enter-stop
 * (Linux < 4.8: 1) rather than after it (0).  Probed once with a child of
 * our own, as strace does, instead of trusting uname (distributions
 * backport); -1 if the child could not tell (no ptrace or no seccomp:
 * the task cannot be traced with a filter either).
 */
int seccomp_stop_before_sysentry(void);

#endif
