// SPDX-License-Identifier: MIT
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze.h"
#include "parse.h"
#include "unit.h"

static void report_parse_numbers(void)
{
	int64_t us = 0, i = 0;
	uint32_t h = 0;

	CHECK(parse_time_us("1714067937.744123", &us));
	CHECK_INT(us, 1714067937744123);
	CHECK(parse_time_us("5", &us));
	CHECK_INT(us, 5000000);
	CHECK(parse_time_us("0.5", &us));
	CHECK_INT(us, 500000);
	CHECK(parse_time_us("1.123456789", &us)); /* cut to microseconds */
	CHECK_INT(us, 1123456);
	CHECK(!parse_time_us("", &us));
	CHECK(!parse_time_us("1.", &us));
	CHECK(!parse_time_us("-1.0", &us));
	CHECK(!parse_time_us("1.0x", &us));
	CHECK(!parse_time_us("99999999999999999999.0", &us));
	/* The last microsecond of an int64_t, and the first past it (a
	 * few seconds past it went through, to a signed overflow). */
	CHECK(parse_time_us("9223372036854.775807", &us));
	CHECK_INT(us, INT64_MAX);
	CHECK(!parse_time_us("9223372036854.775808", &us));
	CHECK(!parse_time_us("9223372036854.999999", &us));
	CHECK(!parse_time_us("9223372036859", &us));
	CHECK(parse_i64("-22", &i));
	CHECK_INT(i, -22);
	CHECK(!parse_i64("--2", &i));
	CHECK(!parse_i64("9223372036854775808", &i));
	CHECK(parse_hex32("0x00080241", &h));
	CHECK_UINT(h, 0x80241);
	CHECK(!parse_hex32("0x", &h));
	CHECK(!parse_hex32("0x123456789", &h));
	CHECK(!parse_hex32("80241", &h));
}

static void report_hmap(void)
{
	struct hmap m;
	char key[32];

	hmap_init(&m);
	CHECK_UINT(hmap_get(&m, "a", 1), HMAP_NONE);
	for (size_t i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "/p/%zu", i);
		hmap_put(&m, key, strlen(key), i);
	}
	hmap_put(&m, "/p/7", 4, 70000);
	CHECK_UINT(m.count, 1000);
	CHECK_UINT(hmap_get(&m, "/p/7", 4), 70000);
	CHECK_UINT(hmap_get(&m, "/p/999", 6), 999);
	CHECK_UINT(hmap_get(&m, "/p/1000", 7), HMAP_NONE);
	hmap_release(&m);
}

static void add_v(struct analysis *an, int64_t t)
{
	an->vertex[an->nvertices] = (struct vertex){ .kind = V_WRITTEN,
						     .time_us = t,
						     .file = NO_INDEX,
						     .task = NO_INDEX };
	an->nvertices++;
}

static void add_e(struct analysis *an, size_t from, size_t to, int64_t cost)
{
	an->edge[an->nedges++] = (struct edge){
		.from = from, .to = to, .task = NO_INDEX, .cost_us = cost
	};
}

/* The paper's Fig. 6: D took 6 s from A, E 2 s; both merge into F.  The
 * critical path is A B C D F although both ways are 8 s long: D is the
 * input that arrived last. */
static void report_wcp_merge_rule(void)
{
	struct vertex v[6];
	struct edge e[6];
	struct analysis an = { .vertex = v, .edge = e };

	add_v(&an, 0); /* A */
	add_v(&an, 2); /* B */
	add_v(&an, 4); /* C */
	add_v(&an, 6); /* D */
	add_v(&an, 2); /* E */
	add_v(&an, 8); /* F */
	add_e(&an, 0, 1, 2);
	add_e(&an, 1, 2, 2);
	add_e(&an, 2, 3, 2);
	add_e(&an, 0, 4, 2);
	add_e(&an, 4, 5, 6);
	add_e(&an, 3, 5, 2);
	wcp_longest_path(&an);
	if (!CHECK_UINT(an.npath, 4))
		return;
	CHECK_UINT(an.path[0], 0);
	CHECK_UINT(an.path[1], 1);
	CHECK_UINT(an.path[2], 2);
	CHECK_UINT(an.path[3], 5);
	CHECK_INT(v[5].dist_us, 8);
	free(an.path);
}

/* Longest, not shortest: the 3-edge way of 9 beats the direct edge of 5,
 * whatever order the edges were added in. */
static void report_wcp_longest(void)
{
	struct vertex v[4];
	struct edge e[4];
	struct analysis an = { .vertex = v, .edge = e };

	for (int i = 0; i < 4; i++)
		add_v(&an, i);
	add_e(&an, 2, 3, 3);
	add_e(&an, 0, 3, 5);
	add_e(&an, 1, 2, 3);
	add_e(&an, 0, 1, 3);
	wcp_longest_path(&an);
	if (!CHECK_UINT(an.npath, 3))
		return;
	CHECK_UINT(an.path[0], 3);
	CHECK_UINT(an.path[1], 2);
	CHECK_UINT(an.path[2], 0);
	CHECK_INT(v[3].dist_us, 9);
	free(an.path);
}

/* Checks the quotas access_share_caps() gives five files. */
static void check_shares(const uint64_t *total, uint64_t max_total,
			 const uint64_t *want)
{
	struct access_file f[5] = { 0 };

	for (size_t k = 0; k < 5; k++)
		f[k].total = total[k];
	access_share_caps(f, 5, max_total, 3000);
	for (size_t k = 0; k < 5; k++)
		CHECK_UINT(f[k].quota, want[k]);
}

/* Fig. 5's caps: small files keep every access, the others split what is
 * left of the total evenly, none above the per-file cap. */
static void report_access_caps(void)
{
	static const uint64_t total[5] = { 5000, 10, 400, 100000, 7 };
	static const uint64_t roomy[5] = { 3000, 10, 400, 3000, 7 };
	/* 1000 in all: 7 and 10 fit their shares (200, 248); then 983 / 3
	 * is 327 for the 400, 656 / 2 is 328 for the two big ones. */
	static const uint64_t tight[5] = { 328, 10, 327, 328, 7 };

	check_shares(total, 200000, roomy);
	check_shares(total, 1000, tight);
}

/* Access k of N is kept when k == floor(j * N / Q): evenly, the first
 * access always, exactly Q of them. */
static void report_access_even_sample(void)
{
	uint64_t kept = 0, last = 0;

	for (uint64_t idx = 0; idx < 10; idx++)
		if (access_kept(idx, kept, 4, 10)) {
			last = idx;
			kept++;
		}
	CHECK_UINT(kept, 4);
	CHECK_UINT(last, 7); /* 0, 2, 5, 7 */
	CHECK(access_kept(0, 0, 4, 10));
	CHECK(!access_kept(1, 1, 4, 10));
	CHECK(access_kept(2, 1, 4, 10));
	CHECK(access_kept(5, 2, 4, 10));
	kept = 0;
	for (uint64_t idx = 0; idx < 7; idx++)
		kept += access_kept(idx, kept, 7, 7);
	CHECK_UINT(kept, 7);
}

/* Of a name's entries live at t (wcp_reach.c), the greatest k not of
 * task self: inclusive ends, an entry live over two spans, the other
 * task's entry behind self's, the ends of time. */
static void report_reach_index_cases(void)
{
	static const struct reach_span span[] = {
		{ 0, 1, 10, 19 },
		{ 1, 2, 15, INT64_MAX },
		{ 2, 1, 12, 14 },
		{ 2, 1, 30, 40 },
		{ 4, 5, INT64_MIN, INT64_MAX },
	};
	static const size_t sfirst[] = { 0, 4, 4, 5 };
	struct reach_index ri;

	reach_index_build(&ri, 3, sfirst, span);
	CHECK_UINT(reach_index_latest(&ri, 0, 9, 9), NO_INDEX);
	CHECK_UINT(reach_index_latest(&ri, 0, 9, 10), 0);
	CHECK_UINT(reach_index_latest(&ri, 0, 9, 12), 2);
	CHECK_UINT(reach_index_latest(&ri, 0, 1, 12), NO_INDEX);
	CHECK_UINT(reach_index_latest(&ri, 0, 9, 15), 1);
	CHECK_UINT(reach_index_latest(&ri, 0, 2, 15), 0);
	CHECK_UINT(reach_index_latest(&ri, 0, 2, 19), 0);
	CHECK_UINT(reach_index_latest(&ri, 0, 2, 20), NO_INDEX);
	CHECK_UINT(reach_index_latest(&ri, 0, 9, 20), 1);
	CHECK_UINT(reach_index_latest(&ri, 0, 9, 30), 2);
	CHECK_UINT(reach_index_latest(&ri, 0, 1, 30), 1);
	CHECK_UINT(reach_index_latest(&ri, 0, 2, 40), 2);
	CHECK_UINT(reach_index_latest(&ri, 0, 9, 41), 1);
	CHECK_UINT(reach_index_latest(&ri, 0, NO_INDEX, INT64_MAX), 1);
	CHECK_UINT(reach_index_latest(&ri, 1, 9, 0), NO_INDEX);
	CHECK_UINT(reach_index_latest(&ri, 2, 9, INT64_MIN), 4);
	CHECK_UINT(reach_index_latest(&ri, 2, 9, INT64_MAX), 4);
	CHECK_UINT(reach_index_latest(&ri, 2, 5, 0), NO_INDEX);
	reach_index_release(&ri);
}

/* The same answers as a scan of every span, on 600 random spans of 300
 * entries of 5 tasks over 1,000 microseconds, at every time and self. */
static void report_reach_index_scan(void)
{
	enum { SPANS = 600, ENTRIES = 300, TASKS = 5, TIMES = 1000 };
	struct reach_span *span = calloc(SPANS, sizeof(*span));
	const size_t sfirst[] = { 0, SPANS };
	uint32_t seed = 12345;
	struct reach_index ri;
	size_t wrong = 0;

	if (!CHECK(span))
		return;
	for (size_t s = 0; s < SPANS; s++) {
		int64_t a, b;

		seed = seed * 1103515245 + 12345;
		span[s].k = (seed >> 8) % ENTRIES;
		span[s].task = span[s].k % TASKS;
		seed = seed * 1103515245 + 12345;
		a = (seed >> 8) % TIMES;
		seed = seed * 1103515245 + 12345;
		b = a + (seed >> 8) % 200;
		span[s].from = a;
		span[s].last = b;
	}
	reach_index_build(&ri, 1, sfirst, span);
	for (int64_t t = -1; t <= TIMES + 200; t++)
		for (size_t self = 0; self <= TASKS; self++) {
			size_t want = NO_INDEX;

			for (size_t s = 0; s < SPANS; s++)
				if (span[s].from <= t && t <= span[s].last &&
				    span[s].task != self &&
				    (want == NO_INDEX || span[s].k > want))
					want = span[s].k;
			wrong += reach_index_latest(&ri, 0, self, t) != want;
		}
	CHECK_UINT(wrong, 0);
	reach_index_release(&ri);
	free(span);
}

const struct unit_test report_tests[] = {
	UNIT_TEST(report_parse_numbers),
	UNIT_TEST(report_hmap),
	UNIT_TEST(report_wcp_merge_rule),
	UNIT_TEST(report_wcp_longest),
	UNIT_TEST(report_access_caps),
	UNIT_TEST(report_access_even_sample),
	UNIT_TEST(report_reach_index_cases),
	UNIT_TEST(report_reach_index_scan),
	UNIT_END,
};
