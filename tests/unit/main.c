// SPDX-License-Identifier: MIT
/*
 * build/unit-tests            runs every test
 * build/unit-tests --list     prints the test names, one a line
 * build/unit-tests NAME...    runs the named tests
 *
 * Each test runs in a child process, so a crash or a hang (killed after
 * TEST_TIMEOUT seconds) fails that test only.  The last line of the output
 * is "N passed, N failed"; the exit status is 1 if any test failed.
 */
#include "unit.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { TEST_TIMEOUT = 120, MAX_REPORTED = 25 };

static const struct unit_test *const suites[] = {
	strbuf_tests, csv_tests,     json_tests,    argv_tests,
	procfs_tests, cmdpath_tests, pidmap_tests,  filter_tests,
	taskid_tests, nflog_tests,   smklog_tests,  display_tests,
	report_tests, html_tests,    process_tests, access_seq_tests,
	launch_tests, vmchild_tests,
};

static unsigned long failures;

unsigned long unit_failures(void)
{
	return failures;
}

/* Whether to print this failure: the first few of a test only. */
static bool report_failure(void)
{
	failures++;
	if (failures == MAX_REPORTED + 1)
		printf("  (further failures of this test not shown)\n");
	return failures <= MAX_REPORTED;
}

void unit_note(const char *fmt, ...)
{
	va_list ap;

	if (failures > MAX_REPORTED)
		return;
	printf("  note: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

bool unit_check(bool ok, const char *file, int line, const char *expr)
{
	if (!ok && report_failure())
		printf("%s:%d: CHECK(%s) failed\n", file, line, expr);
	return ok;
}

bool unit_check_int(const char *file, int line, const char *expr,
		    intmax_t actual, intmax_t expected)
{
	if (actual == expected)
		return true;
	if (report_failure())
		printf("%s:%d: %s failed\n  expected: %" PRIdMAX
		       "\n  actual:   %" PRIdMAX "\n",
		       file, line, expr, expected, actual);
	return false;
}

bool unit_check_uint(const char *file, int line, const char *expr,
		     uintmax_t actual, uintmax_t expected)
{
	if (actual == expected)
		return true;
	if (report_failure())
		printf("%s:%d: %s failed\n  expected: %" PRIuMAX
		       "\n  actual:   %" PRIuMAX "\n",
		       file, line, expr, expected, actual);
	return false;
}

/* Bytes as a C string literal: printable ASCII as is, the rest escaped. */
static void print_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t shown = len < 400 ? len : 400;

	if (!data) {
		printf("NULL");
		return;
	}
	putchar('"');
	for (size_t i = 0; i < shown; i++) {
		if (p[i] == '"' || p[i] == '\\')
			printf("\\%c", p[i]);
		else if (p[i] == '\n')
			printf("\\n");
		else if (p[i] >= 0x20 && p[i] < 0x7f)
			putchar(p[i]);
		else
			printf("\\x%02x", p[i]);
	}
	putchar('"');
	if (shown < len)
		printf("... (%zu bytes)", len);
}

bool unit_check_mem(const char *file, int line, const char *expr,
		    const void *actual, size_t alen, const void *expected,
		    size_t elen)
{
	bool ok =
		alen == elen &&
		(alen == 0 || (actual && memcmp(actual, expected, alen) == 0));

	if (ok)
		return true;
	if (report_failure()) {
		printf("%s:%d: %s failed\n  expected: ", file, line, expr);
		print_bytes(expected, elen);
		printf("\n  actual:   ");
		print_bytes(alen ? actual : "", alen);
		printf("\n");
	}
	return false;
}

bool unit_check_str(const char *file, int line, const char *expr,
		    const char *actual, const char *expected)
{
	bool ok = actual && expected ? strcmp(actual, expected) == 0 :
				       actual == expected;

	if (ok)
		return true;
	if (report_failure()) {
		printf("%s:%d: %s failed\n  expected: ", file, line, expr);
		print_bytes(expected, expected ? strlen(expected) : 0);
		printf("\n  actual:   ");
		print_bytes(actual, actual ? strlen(actual) : 0);
		printf("\n");
	}
	return false;
}

bool unit_check_sb(const char *file, int line, const char *expr,
		   const struct strbuf *sb, const char *expected, size_t elen)
{
	if (!unit_check_mem(file, line, expr, sb->buf, sb->len, expected, elen))
		return false;
	if (sb->buf && sb->buf[sb->len] != '\0') {
		if (report_failure())
			printf("%s:%d: %s: no NUL after the %zu bytes\n", file,
			       line, expr, sb->len);
		return false;
	}
	return true;
}

/* Runs one test in a child; true if it passed. */
static bool run_test(const struct unit_test *t)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		printf("FAIL %s: fork: %s\n", t->name, strerror(errno));
		return false;
	}
	if (pid == 0) {
		alarm(TEST_TIMEOUT);
		failures = 0;
		t->fn();
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			printf("FAIL %s: waitpid: %s\n", t->name,
			       strerror(errno));
			return false;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("PASS %s\n", t->name);
		return true;
	}
	if (WIFSIGNALED(status))
		printf("FAIL %s: killed by signal %d%s\n", t->name,
		       WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timed out)" : "");
	else
		printf("FAIL %s\n", t->name);
	return false;
}

static const struct unit_test *find_test(const char *name)
{
	for (size_t s = 0; s < sizeof(suites) / sizeof(suites[0]); s++)
		for (const struct unit_test *t = suites[s]; t->name; t++)
			if (strcmp(t->name, name) == 0)
				return t;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long passed = 0, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t s = 0; s < sizeof(suites) / sizeof(suites[0]); s++)
			for (const struct unit_test *t = suites[s]; t->name;
			     t++)
				printf("%s\n", t->name);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (!find_test(argv[i])) {
			fprintf(stderr,
				"unit-tests: no test named '%s' (see --list)\n",
				argv[i]);
			return 2;
		}
	}
	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			if (run_test(find_test(argv[i])))
				passed++;
			else
				failed++;
		}
	} else {
		for (size_t s = 0; s < sizeof(suites) / sizeof(suites[0]); s++)
			for (const struct unit_test *t = suites[s]; t->name;
			     t++) {
				if (run_test(t))
					passed++;
				else
					failed++;
			}
	}
	printf("%lu passed, %lu failed\n", passed, failed);
	return failed ? 1 : 0;
}
