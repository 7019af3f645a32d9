/* SPDX-License-Identifier: MIT */
#ifndef IOWRAP_PROBE_H
#define IOWRAP_PROBE_H

#include <stdbool.h>

/*
 * Whether this kernel reports a seccomp stop before the syscall-enter-stop
 * (Linux < 4.8) rather than after it.  Probed once with a child of our
 * own, as strace does, instead of trusting uname (distributions backport).
 */
bool seccomp_stop_before_sysentry(void);

#endif
