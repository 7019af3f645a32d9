// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "argv.h"
#include "unit.h"

#define L(lit) "" lit, sizeof(lit) - 1

static void check_quote_word(const char *word, size_t len, const char *want,
			     size_t wlen)
{
	struct strbuf sb;

	sb_init(&sb, 0);
	argv_quote_word(&sb, word, len);
	CHECK_MEM(sb.buf, sb.len, want, wlen);
	sb_release(&sb);
}

static void argv_quote_bare_words(void)
{
	static const char *const bare[] = {
		"ls",	   "-la",     "--color=auto", "/usr/bin/env",
		"a.b,c:d", "x@y%z+w", "_under_score", "0123456789",
		"ABCxyz",  "./rel",   "key=value",    "-",
	};

	for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++)
		check_quote_word(bare[i], strlen(bare[i]), bare[i],
				 strlen(bare[i]));
}

static void argv_quote_quoted_words(void)
{
	check_quote_word(L(""), L("''"));
	check_quote_word(L("a b"), L("'a b'"));
	check_quote_word(L(" "), L("' '"));
	check_quote_word(L("it's"), L("'it'\\''s'"));
	check_quote_word(L("'"), L("''\\'''"));
	check_quote_word(L("''"), L("''\\'''\\'''"));
	check_quote_word(L("a\nb"), L("'a\nb'"));
	check_quote_word(L("tab\there"), L("'tab\there'"));
	check_quote_word(L("\xff\xfe"), L("'\xff\xfe'"));
	check_quote_word(L("caf\xc3\xa9"), L("'caf\xc3\xa9'"));
	check_quote_word(L("$HOME"), L("'$HOME'"));
	check_quote_word(L("*.c"), L("'*.c'"));
	check_quote_word(L("~"), L("'~'"));
	check_quote_word(L("a\\b"), L("'a\\b'"));
	check_quote_word(L("\"q\""), L("'\"q\"'"));
	check_quote_word(L("x;y|z&"), L("'x;y|z&'"));
	check_quote_word(L("(){}[]<>!#`"), L("'(){}[]<>!#`'"));
	/* len counts, not a NUL */
	check_quote_word(L("abc"), L("abc"));
	check_quote_word("abcdef", 2, L("ab"));
}

static void check_nul_list(const char *list, size_t len, const char *want,
			   size_t wlen)
{
	struct strbuf sb;

	sb_init(&sb, 0);
	argv_quote_nul_list(&sb, list, len);
	CHECK_MEM(sb.buf, sb.len, want, wlen);
	sb_release(&sb);
}

static void argv_nul_list(void)
{
	/* as /proc/PID/cmdline holds it, with the trailing NUL */
	check_nul_list(L("ls\0-l\0a b\0"), L("ls -l 'a b'"));
	/* cut short: no trailing NUL */
	check_nul_list(L("ls\0-l\0a b"), L("ls -l 'a b'"));
	check_nul_list(L("ls"), L("ls"));
	/* empty arguments */
	check_nul_list(L("a\0\0b\0"), L("a '' b"));
	check_nul_list(L("a\0\0"), L("a ''"));
	check_nul_list(L("\0"), L("''"));
	check_nul_list(L("\0\0"), L("'' ''"));
	check_nul_list(L(""), L(""));
	check_nul_list(L("it's\0\xff\0"), L("'it'\\''s' '\xff'"));
}

static void argv_vector(void)
{
	char *const v1[] = { "echo", "hello world", "", "it's", NULL };
	char *const v2[] = { NULL };
	struct strbuf sb;

	sb_init(&sb, 0);
	argv_quote_vector(&sb, v1);
	CHECK_SB(&sb, "echo 'hello world' '' 'it'\\''s'");
	sb_reset(&sb);
	argv_quote_vector(&sb, v2);
	CHECK_SB(&sb, "");
	sb_release(&sb);
}

static void check_split(const char *line, size_t len, int nwords,
			const char *want, size_t wlen)
{
	struct strbuf sb;

	sb_init(&sb, 0);
	sb_adds(&sb, "stale");
	CHECK_INT(argv_split(line, len, &sb), nwords);
	if (nwords >= 0)
		CHECK_MEM(sb.buf, sb.len, want, wlen);
	sb_release(&sb);
}

static void argv_split_cases(void)
{
	check_split(L(""), 0, L(""));
	check_split(L("   "), 0, L(""));
	check_split(L("ls"), 1, L("ls\0"));
	check_split(L("ls -l 'a b'"), 3, L("ls\0-l\0a b\0"));
	check_split(L("  a   b  "), 2, L("a\0b\0"));
	check_split(L("''"), 1, L("\0"));
	check_split(L("'' ''"), 2, L("\0\0"));
	check_split(L("'it'\\''s'"), 1, L("it's\0"));
	check_split(L("a''b"), 1, L("ab\0"));
	check_split(L("'a\nb'"), 1, L("a\nb\0"));
	check_split(L("\\ "), 1, L(" \0"));
	check_split(L("'\xff'"), 1, L("\xff\0"));
}

static void argv_split_malformed(void)
{
	static const char *const bad[] = {
		"'", "'abc", "a 'b", "'a''", "a\\", "'a'\\",
	};
	struct strbuf sb;

	sb_init(&sb, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* an exact-size copy: no NUL after the line to stop at */
		size_t len = strlen(bad[i]);
		char *copy = malloc(len);

		memcpy(copy, bad[i], len);
		if (!CHECK_INT(argv_split(copy, len, &sb), -1))
			unit_note("input %zu: %s", i, bad[i]);
		free(copy);
	}
	/* the length bounds the line: a quote closed only past it */
	CHECK_INT(argv_split("'ab'", 3, &sb), -1);
	sb_release(&sb);
}

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

/* A random byte other than NUL, often one a shell cares about. */
static char random_byte(void)
{
	static const char special[] = "' \\\n\t\"$`*?~#=-_/.,:@%+!;&|<>(){}";

	if (rng() % 2)
		return special[rng() % (sizeof(special) - 1)];
	return (char)(1 + rng() % 255);
}

/* argv_split(quote(words)) gives back the exact words. */
static void argv_round_trip_random(void)
{
	struct strbuf quoted, want, got;

	rng_state = 0x5eed1234abcd9876ull;
	sb_init(&quoted, 0);
	sb_init(&want, 0);
	sb_init(&got, 0);
	for (int iter = 0; iter < 20000; iter++) {
		size_t nwords = rng() % 7;
		int n;

		sb_reset(&quoted);
		sb_reset(&want);
		for (size_t w = 0; w < nwords; w++) {
			char word[40];
			size_t len = rng() % 4 ? rng() % 12 : rng() % 40;

			for (size_t k = 0; k < len; k++)
				word[k] = random_byte();
			if (w)
				sb_addc(&quoted, ' ');
			argv_quote_word(&quoted, word, len);
			sb_add(&want, word, len);
			sb_addc(&want, '\0');
		}
		n = argv_split(quoted.buf, quoted.len, &got);
		if (!CHECK_INT(n, nwords) ||
		    !CHECK_MEM(got.buf, got.len, want.buf, want.len)) {
			unit_note("iteration %d", iter);
			break;
		}
	}
	sb_release(&quoted);
	sb_release(&want);
	sb_release(&got);
}

/* The same through argv_quote_nul_list, as for /proc/PID/cmdline. */
static void argv_round_trip_nul_list(void)
{
	struct strbuf quoted, got;
	char list[200];

	rng_state = 42;
	sb_init(&quoted, 0);
	sb_init(&got, 0);
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = 1 + rng() % sizeof(list);
		size_t nwords = 0;

		for (size_t k = 0; k < len; k++)
			list[k] = rng() % 6 ? random_byte() : '\0';
		list[len - 1] = '\0';
		for (size_t k = 0; k < len; k++)
			nwords += list[k] == '\0';
		sb_reset(&quoted);
		argv_quote_nul_list(&quoted, list, len);
		if (!CHECK_INT(argv_split(quoted.buf, quoted.len, &got),
			       nwords) ||
		    !CHECK_MEM(got.buf, got.len, list, len)) {
			unit_note("iteration %d", iter);
			break;
		}
	}
	sb_release(&quoted);
	sb_release(&got);
}

const struct unit_test argv_tests[] = {
	UNIT_TEST(argv_quote_bare_words),
	UNIT_TEST(argv_quote_quoted_words),
	UNIT_TEST(argv_nul_list),
	UNIT_TEST(argv_vector),
	UNIT_TEST(argv_split_cases),
	UNIT_TEST(argv_split_malformed),
	UNIT_TEST(argv_round_trip_random),
	UNIT_TEST(argv_round_trip_nul_list),
	UNIT_END,
};
