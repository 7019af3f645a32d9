// SPDX-License-Identifier: MIT
#include <stdint.h>

#include "access_seq.h"
#include "unit.h"

/* The sequence of tests/data/README.md's Fig. 2a file, then a step back,
 * an access with no position and an empty one. */
static void access_seq_counts(void)
{
	struct access_seq a = ACCESS_SEQ_INIT;

	access_seq_add(&a, 1034, 512); /* first: neither */
	CHECK_UINT(a.consec, 0);
	CHECK_UINT(a.seq, 0);
	CHECK_INT(a.max_byte, 1545);
	access_seq_add(&a, 1546, 512); /* consecutive and sequential */
	access_seq_add(&a, 4096, 100); /* sequential only */
	CHECK_UINT(a.consec, 1);
	CHECK_UINT(a.seq, 2);
	CHECK_INT(a.max_byte, 4195);
	access_seq_add(&a, 0, 10); /* back: neither; max_byte stays */
	CHECK_UINT(a.seq, 2);
	CHECK_INT(a.last_end, 10);
	CHECK_INT(a.max_byte, 4195);
	access_seq_add(&a, -1, 10); /* no position: nothing changes */
	CHECK_UINT(a.placed, 4);
	CHECK_INT(a.last_end, 10);
	access_seq_add(&a, 10, 0); /* empty: consecutive, touches no byte */
	CHECK_UINT(a.consec, 2);
	CHECK_UINT(a.placed, 5);
	CHECK_INT(a.max_byte, 4195);
}

static void access_seq_empty_touches_nothing(void)
{
	struct access_seq a = ACCESS_SEQ_INIT;

	access_seq_add(&a, 7, 0);
	CHECK_INT(a.max_byte, -1);
	CHECK_INT(a.last_end, 7);
	CHECK_UINT(a.placed, 1);
}

/* A garbled trace file's offset near the top: no signed overflow. */
static void access_seq_saturates(void)
{
	struct access_seq a = ACCESS_SEQ_INIT;

	access_seq_add(&a, INT64_MAX - 5, 100);
	CHECK_INT(a.last_end, INT64_MAX);
	CHECK_INT(a.max_byte, INT64_MAX - 1);
	access_seq_add(&a, INT64_MAX, UINT64_MAX);
	CHECK_INT(a.last_end, INT64_MAX);
	CHECK_UINT(a.consec, 1);
}

const struct unit_test access_seq_tests[] = {
	UNIT_TEST(access_seq_counts),
	UNIT_TEST(access_seq_empty_touches_nothing),
	UNIT_TEST(access_seq_saturates),
	UNIT_END,
};
