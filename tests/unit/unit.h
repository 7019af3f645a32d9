/* SPDX-License-Identifier: MIT */
/*
 * A tiny unit-test harness.  Each tests/unit/test_*.c file exports a table
 * of tests ending with UNIT_END; main.c lists the tables.  A CHECK_* that
 * fails prints file:line with the expected and actual values and marks the
 * running test failed; it does not stop the test.  Every CHECK_* is an
 * expression that is true when the check passed, so a test can bail out:
 * if (!CHECK(p)) return;
 */
#ifndef IOWRAP_UNIT_H
#define IOWRAP_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

struct unit_test {
	const char *name;
	void (*fn)(void);
};

#define UNIT_TEST(fn)   \
	{               \
#fn, fn \
	}
#define UNIT_END           \
	{                  \
		NULL, NULL \
	}

extern const struct unit_test strbuf_tests[];
extern const struct unit_test csv_tests[];
extern const struct unit_test json_tests[];
extern const struct unit_test argv_tests[];
extern const struct unit_test procfs_tests[];
extern const struct unit_test cmdpath_tests[];
extern const struct unit_test pidmap_tests[];
extern const struct unit_test process_tests[];
extern const struct unit_test filter_tests[];
extern const struct unit_test taskid_tests[];
extern const struct unit_test nflog_tests[];
extern const struct unit_test smklog_tests[];
extern const struct unit_test display_tests[];
extern const struct unit_test report_tests[];
extern const struct unit_test html_tests[];
extern const struct unit_test access_seq_tests[];
extern const struct unit_test launch_tests[];
extern const struct unit_test vmchild_tests[];

bool unit_check(bool ok, const char *file, int line, const char *expr);
bool unit_check_int(const char *file, int line, const char *expr,
		    intmax_t actual, intmax_t expected);
bool unit_check_uint(const char *file, int line, const char *expr,
		     uintmax_t actual, uintmax_t expected);
bool unit_check_mem(const char *file, int line, const char *expr,
		    const void *actual, size_t alen, const void *expected,
		    size_t elen);
bool unit_check_str(const char *file, int line, const char *expr,
		    const char *actual, const char *expected);
bool unit_check_sb(const char *file, int line, const char *expr,
		   const struct strbuf *sb, const char *expected, size_t elen);
/* Prints a note under the current test (e.g. which case of a loop). */
void unit_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Failed checks in the running test so far. */
unsigned long unit_failures(void);

#define CHECK(cond) unit_check(!!(cond), __FILE__, __LINE__, #cond)
#define CHECK_INT(actual, expected)                                  \
	unit_check_int(__FILE__, __LINE__, #actual " == " #expected, \
		       (intmax_t)(actual), (intmax_t)(expected))
#define CHECK_UINT(actual, expected)                                  \
	unit_check_uint(__FILE__, __LINE__, #actual " == " #expected, \
			(uintmax_t)(actual), (uintmax_t)(expected))
#define CHECK_STR(actual, expected)                                            \
	unit_check_str(__FILE__, __LINE__, #actual " == " #expected, (actual), \
		       (expected))
#define CHECK_MEM(actual, alen, expected, elen)                                \
	unit_check_mem(__FILE__, __LINE__, #actual " == " #expected, (actual), \
		       (alen), (expected), (elen))
/* A strbuf's exact bytes against a string literal (which may hold NULs);
 * also checks the NUL after them. */
#define CHECK_SB(sb, lit)                                                \
	unit_check_sb(__FILE__, __LINE__, #sb " == " #lit, (sb), "" lit, \
		      sizeof("" lit) - 1)

#endif
