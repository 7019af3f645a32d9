// SPDX-License-Identifier: MIT
/*
 * Linked into build/san's programs only (make sanitize).  The sanitizers'
 * options are built in: tests run iowrap with environments of their own,
 * which ASAN_OPTIONS would not reach.  Reports go to files under
 * SAN_LOG_DIR, which tests/sanitize.sh makes (writable by all: some tests
 * run iowrap as nobody) and reads, never to stderr: iowrap's
 * stderr is the task's, and tests compare it.  Leaks are not looked for:
 * iowrap's error paths exit without freeing.
 */
#ifndef SAN_LOG_DIR
#error "SAN_LOG_DIR: the directory the reports go to"
#endif

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *__asan_default_options(void)
{
	return "log_path=" SAN_LOG_DIR "/asan:detect_leaks=0";
}

const char *__ubsan_default_options(void)
{
	return "log_path=" SAN_LOG_DIR "/ubsan:print_stacktrace=1";
}
