// SPDX-License-Identifier: MIT
#include <linux/filter.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "unit.h"

/* The prologue's constants are libseccomp's tables' last numbers. */
static void filter_max_numbers_match_libseccomp(void)
{
	CHECK_UINT(filter_max_known_nr(SCMP_ARCH_X86_64, 0), MAX_NR_X86_64);
	CHECK_UINT(filter_max_known_nr(SCMP_ARCH_X32, 0x40000000u), MAX_NR_X32);
	CHECK_UINT(filter_max_known_nr(SCMP_ARCH_X86, 0), MAX_NR_I386);
}

static void filter_builds_for_each_level(void)
{
	struct sock_fprog files, full;
	struct strbuf why;

	sb_init(&why, 0);
	CHECK_INT(filter_build(LEVEL_FILES, &files, &why), 0);
	CHECK_INT(filter_build(LEVEL_FULL, &full, &why), 0);
	CHECK(files.len > 10 && files.len < full.len);
	CHECK(full.len < BPF_MAXINSNS);
	/* Our prologue comes first and ends with RET TRACE(unknown). */
	CHECK_UINT(full.filter[9].code, BPF_RET | BPF_K);
	CHECK_UINT(full.filter[9].k, SECCOMP_RET_TRACE | SC_DATA_UNKNOWN);
	CHECK_STR(sb_str(&why), "");
	filter_free(&files);
	filter_free(&full);
	sb_release(&why);
}

static void filter_level_names(void)
{
	CHECK_INT(trace_level_parse("summary"), LEVEL_SUMMARY);
	CHECK_INT(trace_level_parse("files"), LEVEL_FILES);
	CHECK_INT(trace_level_parse("full"), LEVEL_FULL);
	CHECK_INT(trace_level_parse("Full"), -1);
	CHECK_INT(trace_level_parse(""), -1);
}

const struct unit_test filter_tests[] = {
	UNIT_TEST(filter_max_numbers_match_libseccomp),
	UNIT_TEST(filter_builds_for_each_level),
	UNIT_TEST(filter_level_names),
	UNIT_END,
};
