// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "unit.h"

static void strbuf_empty(void)
{
	struct strbuf sb;

	sb_init(&sb, 0);
	CHECK_UINT(sb.limit, STRBUF_DEFAULT_LIMIT);
	CHECK_UINT(sb.len, 0);
	CHECK(!sb.truncated);
	CHECK_STR(sb_str(&sb), "");
	sb_add(&sb, NULL, 0);
	CHECK_SB(&sb, "");
	CHECK_STR(sb_str(&sb), "");
	sb_release(&sb);
	CHECK(sb.buf == NULL);
	CHECK_UINT(sb.limit, STRBUF_DEFAULT_LIMIT);
}

static void strbuf_appends(void)
{
	struct strbuf sb;

	sb_init(&sb, 0);
	sb_adds(&sb, "abc");
	sb_addc(&sb, '-');
	sb_add(&sb, "x\0y", 3);
	sb_addf(&sb, "[%d|%s]", -42, "z");
	CHECK_SB(&sb, "abc-x\0y[-42|z]");
	CHECK(!sb.truncated);
	sb_reset(&sb);
	CHECK_SB(&sb, "");
	CHECK_STR(sb_str(&sb), "");
	sb_adds(&sb, "again");
	CHECK_SB(&sb, "again");
	sb_release(&sb);
}

/* sb_addf falls back to a heap buffer past 255 bytes of output. */
static void strbuf_addf_long(void)
{
	struct strbuf sb;
	char want[1001];

	memset(want, 'q', 1000);
	want[1000] = '\0';
	sb_init(&sb, 0);
	sb_addf(&sb, "%s", want);
	CHECK_UINT(sb.len, 1000);
	CHECK_STR(sb_str(&sb), want);
	sb_reset(&sb);
	sb_addf(&sb, "%0300d", 7);
	CHECK_UINT(sb.len, 300);
	CHECK(sb.buf[0] == '0' && sb.buf[298] == '0' && sb.buf[299] == '7');
	sb_release(&sb);
}

static void strbuf_growth(void)
{
	struct strbuf sb;
	bool same = true;

	sb_init(&sb, 0);
	for (size_t i = 0; i < 100000; i++)
		sb_addc(&sb, (char)('a' + i % 26));
	CHECK_UINT(sb.len, 100000);
	CHECK(sb.alloc > sb.len);
	for (size_t i = 0; i < 100000 && same; i++)
		same = sb.buf[i] == (char)('a' + i % 26);
	CHECK(same);
	CHECK(sb.buf[100000] == '\0');
	CHECK(!sb.truncated);
	sb_release(&sb);
}

static void strbuf_limit_truncates(void)
{
	struct strbuf sb;

	sb_init(&sb, 8);
	sb_adds(&sb, "hello");
	CHECK(!sb.truncated);
	sb_adds(&sb, "world");
	CHECK_SB(&sb, "hellowor");
	CHECK(sb.truncated);
	sb_addc(&sb, 'x');
	sb_addf(&sb, "%d", 12345);
	sb_add_u64(&sb, 99);
	CHECK_SB(&sb, "hellowor");
	CHECK(sb.truncated);
	sb_reset(&sb);
	CHECK(!sb.truncated);
	CHECK_SB(&sb, "");
	sb_addf(&sb, "%s", "0123456789");
	CHECK_SB(&sb, "01234567");
	CHECK(sb.truncated);
	sb_release(&sb);
}

static void strbuf_limit_exact_fit(void)
{
	struct strbuf sb;

	sb_init(&sb, 5);
	sb_adds(&sb, "hel");
	sb_adds(&sb, "lo");
	CHECK_SB(&sb, "hello");
	CHECK(!sb.truncated);
	sb_add(&sb, "", 0);
	CHECK(!sb.truncated);
	sb_addc(&sb, '!');
	CHECK_SB(&sb, "hello");
	CHECK(sb.truncated);
	sb_release(&sb);

	/* A limit far beyond the first allocation. */
	sb_init(&sb, 1000);
	for (int i = 0; i < 300; i++)
		sb_adds(&sb, "abcd");
	CHECK_UINT(sb.len, 1000);
	CHECK(sb.truncated);
	CHECK(memcmp(sb.buf + 996, "abcd", 4) == 0);
	CHECK(sb.buf[1000] == '\0');
	sb_release(&sb);
}

static void strbuf_u64(void)
{
	static const struct {
		uint64_t v;
		const char *s;
	} cases[] = {
		{ 0, "0" },
		{ 1, "1" },
		{ 9, "9" },
		{ 10, "10" },
		{ 1000000, "1000000" },
		{ UINT32_MAX, "4294967295" },
		{ (uint64_t)INT64_MAX + 1, "9223372036854775808" },
		{ UINT64_MAX - 1, "18446744073709551614" },
		{ UINT64_MAX, "18446744073709551615" },
	};
	struct strbuf sb;

	sb_init(&sb, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sb_reset(&sb);
		sb_add_u64(&sb, cases[i].v);
		CHECK_STR(sb_str(&sb), cases[i].s);
		CHECK_UINT(sb.len, strlen(cases[i].s));
	}
	sb_reset(&sb);
	sb_add_u64(&sb, 1);
	sb_add_u64(&sb, 0);
	sb_add_u64(&sb, UINT64_MAX);
	CHECK_SB(&sb, "1018446744073709551615");
	sb_release(&sb);
}

static void strbuf_i64(void)
{
	static const struct {
		int64_t v;
		const char *s;
	} cases[] = {
		{ 0, "0" },
		{ 1, "1" },
		{ -1, "-1" },
		{ -10, "-10" },
		{ INT32_MIN, "-2147483648" },
		{ INT64_MAX, "9223372036854775807" },
		{ INT64_MIN + 1, "-9223372036854775807" },
		{ INT64_MIN, "-9223372036854775808" },
	};
	struct strbuf sb;

	sb_init(&sb, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sb_reset(&sb);
		sb_add_i64(&sb, cases[i].v);
		CHECK_STR(sb_str(&sb), cases[i].s);
	}
	sb_release(&sb);
}

/* printf is the oracle: "%0*llu" and "0x%08x" over edge and spread values. */
static void strbuf_padded_and_hex(void)
{
	static const uint64_t values[] = { 0,	       1,	  9,
					   10,	       99999,	  100000,
					   999999,     1000000,	  123456789,
					   UINT32_MAX, UINT64_MAX };
	struct strbuf sb;
	char want[64];
	bool same = true;

	sb_init(&sb, 0);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		for (unsigned width = 0; width <= 24; width++) {
			sb_reset(&sb);
			sb_add_u64_padded(&sb, values[i], width);
			snprintf(want, sizeof(want), "%0*llu", (int)width,
				 (unsigned long long)values[i]);
			CHECK_STR(sb_str(&sb), want);
		}
	}
	for (uint64_t v = 0; v <= UINT32_MAX && same; v += 65521 * 3 + 1) {
		sb_reset(&sb);
		sb_add_hex32(&sb, (uint32_t)v);
		snprintf(want, sizeof(want), "0x%08x", (unsigned)v);
		same = strcmp(sb_str(&sb), want) == 0;
	}
	CHECK(same);
	sb_reset(&sb);
	sb_add_hex32(&sb, UINT32_MAX);
	sb_add_hex32(&sb, 0x80042);
	CHECK_SB(&sb, "0xffffffff0x00080042");
	sb_release(&sb);
}

static void strbuf_time_us(void)
{
	static const struct {
		int64_t usec;
		const char *s;
	} cases[] = {
		{ 1714067937000001, "1714067937.000001" },
		{ 1714067937744123, "1714067937.744123" },
		{ 1714067937000000, "1714067937.000000" },
		{ 1714067937999999, "1714067937.999999" },
		{ 0, "0.000000" },
		{ 1, "0.000001" },
		{ 999999, "0.999999" },
		{ 1000000, "1.000000" },
		{ 1000010, "1.000010" },
		{ INT64_MAX, "9223372036854.775807" },
		/* Before the epoch is clamped to it. */
		{ -1, "0.000000" },
		{ INT64_MIN, "0.000000" },
	};
	struct strbuf sb;

	sb_init(&sb, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sb_reset(&sb);
		sb_add_time_us(&sb, cases[i].usec);
		CHECK_STR(sb_str(&sb), cases[i].s);
	}
	sb_release(&sb);
}

static void strbuf_detach(void)
{
	struct strbuf sb;
	char *s;

	sb_init(&sb, 100);
	s = sb_detach(&sb);
	CHECK_STR(s, "");
	free(s);
	sb_adds(&sb, "kept");
	s = sb_detach(&sb);
	CHECK_STR(s, "kept");
	free(s);
	CHECK(sb.buf == NULL);
	CHECK_UINT(sb.len, 0);
	CHECK_UINT(sb.alloc, 0);
	CHECK_UINT(sb.limit, 100);
	CHECK_STR(sb_str(&sb), "");
	sb_adds(&sb, "reused");
	CHECK_SB(&sb, "reused");
	sb_release(&sb);
}

const struct unit_test strbuf_tests[] = {
	UNIT_TEST(strbuf_empty),
	UNIT_TEST(strbuf_appends),
	UNIT_TEST(strbuf_addf_long),
	UNIT_TEST(strbuf_growth),
	UNIT_TEST(strbuf_limit_truncates),
	UNIT_TEST(strbuf_limit_exact_fit),
	UNIT_TEST(strbuf_u64),
	UNIT_TEST(strbuf_i64),
	UNIT_TEST(strbuf_padded_and_hex),
	UNIT_TEST(strbuf_time_us),
	UNIT_TEST(strbuf_detach),
	UNIT_END,
};
