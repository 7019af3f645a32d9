// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "jsonget.h"
#include "unit.h"

struct case_ {
	const char *in;
	size_t len;
	const char *out; /* with the surrounding quotes */
};

#define C(in, out)                         \
	{                                  \
		"" in, sizeof(in) - 1, out \
	}

static void check_cases(const struct case_ *c, size_t n)
{
	struct strbuf sb;

	sb_init(&sb, 0);
	for (size_t i = 0; i < n; i++) {
		sb_reset(&sb);
		json_add_string(&sb, c[i].in, c[i].len);
		if (!CHECK_MEM(sb.buf, sb.len, c[i].out, strlen(c[i].out)))
			unit_note("case %zu", i);
	}
	sb_release(&sb);
}

static void json_escape_ascii(void)
{
	static const struct case_ cases[] = {
		C("", "\"\""),
		C("plain text", "\"plain text\""),
		C("\"", "\"\\\"\""),
		C("\\", "\"\\\\\""),
		C("a\"b\\c", "\"a\\\"b\\\\c\""),
		C("\n\t\r", "\"\\n\\t\\r\""),
		C("\x01", "\"\\u0001\""),
		C("\b\f", "\"\\u0008\\u000c\""),
		C("\x1f", "\"\\u001f\""),
		C("\x7f", "\"\\u007f\""),
		C("\0", "\"\\u0000\""),
		C("a\0b", "\"a\\u0000b\""),
		C(" ~/", "\" ~/\""),
		C("</script>", "\"</script>\""),
	};

	check_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void json_valid_utf8_kept(void)
{
	static const struct case_ cases[] = {
		C("\xc2\x80", "\"\xc2\x80\""), /* U+0080 */
		C("caf\xc3\xa9", "\"caf\xc3\xa9\""), /* é */
		C("\xdf\xbf", "\"\xdf\xbf\""), /* U+07FF */
		C("\xe0\xa0\x80", "\"\xe0\xa0\x80\""), /* U+0800 */
		C("\xe2\x82\xac", "\"\xe2\x82\xac\""), /* € */
		C("\xed\x9f\xbf", "\"\xed\x9f\xbf\""), /* U+D7FF */
		C("\xee\x80\x80", "\"\xee\x80\x80\""), /* U+E000 */
		C("\xef\xbf\xbf", "\"\xef\xbf\xbf\""), /* U+FFFF */
		C("\xf0\x90\x80\x80", "\"\xf0\x90\x80\x80\""), /* U+10000 */
		C("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""), /* 😀 */
		C("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""), /* U+10FFFF */
		C("\xe6\x97\xa5\"\xe6\x9c\xac",
		  "\"\xe6\x97\xa5\\\"\xe6\x9c\xac\""),
	};

	check_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

#define R "\\ufffd"

static void json_invalid_utf8_replaced(void)
{
	static const struct case_ cases[] = {
		/* bytes that never start a sequence */
		C("\xff", "\"" R "\""),
		C("\xff\xfe", "\"" R R "\""),
		C("\x80", "\"" R "\""),
		C("a\xbf"
		  "b",
		  "\"a" R "b\""),
		C("\xf5\x80\x80\x80", "\"" R R R R "\""),
		/* overlong encodings */
		C("\xc0\xaf", "\"" R R "\""),
		C("\xc1\xbf", "\"" R R "\""),
		C("\xe0\x80\xaf", "\"" R R R "\""),
		C("\xe0\x9f\xbf", "\"" R R R "\""),
		C("\xf0\x80\x80\xaf", "\"" R R R R "\""),
		C("\xf0\x8f\xbf\xbf", "\"" R R R R "\""),
		/* UTF-16 surrogates */
		C("\xed\xa0\x80", "\"" R R R "\""),
		C("\xed\xbf\xbf", "\"" R R R "\""),
		C("\xed\xa0\xbd\xed\xb8\x80", "\"" R R R R R R "\""),
		/* beyond U+10FFFF */
		C("\xf4\x90\x80\x80", "\"" R R R R "\""),
		/* truncated sequences, at the end and in the middle */
		C("\xc3", "\"" R "\""),
		C("a\xe2\x82", "\"a" R R "\""),
		C("\xf0\x9f\x98", "\"" R R R "\""),
		C("\xe2\x82"
		  "a",
		  "\"" R R "a\""),
		C("\xe2\x82\xe2\x82\xac", "\"" R R "\xe2\x82\xac\""),
		C("\xc3"
		  "\"",
		  "\"" R "\\\"\""),
		/* a continuation byte that is not one */
		C("\xc3\x28", "\"" R "(\""),
		C("\xe2\x28\xa1", "\"" R "(" R "\""),
	};

	struct strbuf sb;

	check_cases(cases, sizeof(cases) / sizeof(cases[0]));
	/* len bounds the string: a sequence is not completed past it */
	sb_init(&sb, 0);
	json_add_string(&sb, "\xe2\x82\xac", 2);
	CHECK_SB(&sb, "\"" R R "\"");
	sb_reset(&sb);
	json_add_string(&sb, "a\xf0\x9f\x98\x80", 4);
	CHECK_SB(&sb, "\"a" R R R "\"");
	sb_reset(&sb);
	json_add_string(&sb, "\xc3\xa9", 1);
	CHECK_SB(&sb, "\"" R "\"");
	/* exact-size heap copies: nothing readable past the end */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *copy = malloc(cases[i].len);

		memcpy(copy, cases[i].in, cases[i].len);
		sb_reset(&sb);
		json_add_string(&sb, copy, cases[i].len);
		CHECK_MEM(sb.buf, sb.len, cases[i].out, strlen(cases[i].out));
		free(copy);
	}
	sb_release(&sb);
}

static void json_document(void)
{
	static const char want[] = "{\n"
				   "  \"name\": \"x\\\"y\",\n"
				   "  \"n\": 18446744073709551615,\n"
				   "  \"i\": -9223372036854775808,\n"
				   "  \"list\": [\n"
				   "    true,\n"
				   "    false,\n"
				   "    null,\n"
				   "    {},\n"
				   "    [],\n"
				   "    {\n"
				   "      \"k\": 0\n"
				   "    }\n"
				   "  ],\n"
				   "  \"empty\": {},\n"
				   "  \"d\": 1.50,\n"
				   "  \"d0\": -2,\n"
				   "  \"nan\": null,\n"
				   "  \"inf\": null,\n"
				   "  \"t\": 1714067937.000001,\n"
				   "  \"nul\": null,\n"
				   "  \"key\\n\\u0001\": \"" R "\"\n"
				   "}\n";
	struct strbuf sb;
	struct json j;

	sb_init(&sb, 0);
	json_init(&j, &sb);
	json_open_object(&j, NULL);
	json_str(&j, "name", "x\"y");
	json_u64(&j, "n", UINT64_MAX);
	json_i64(&j, "i", INT64_MIN);
	json_open_array(&j, "list");
	json_bool(&j, NULL, true);
	json_bool(&j, NULL, false);
	json_null(&j, NULL);
	json_open_object(&j, NULL);
	json_close_object(&j);
	json_open_array(&j, NULL);
	json_close_array(&j);
	json_open_object(&j, NULL);
	json_i64(&j, "k", 0);
	json_close_object(&j);
	json_close_array(&j);
	json_open_object(&j, "empty");
	json_close_object(&j);
	json_double(&j, "d", 1.5, 2);
	json_double(&j, "d0", -2.0, 0);
	json_double(&j, "nan", NAN, 3);
	json_double(&j, "inf", INFINITY, 3);
	json_time(&j, "t", 1714067937000001);
	json_str(&j, "nul", NULL);
	json_str(&j, "key\n\x01", "\xff");
	json_close_object(&j);
	CHECK_MEM(sb.buf, sb.len, want, sizeof(want) - 1);
	CHECK_INT(j.depth, 0);
	sb_release(&sb);
}

static void json_top_level_values(void)
{
	struct strbuf sb;
	struct json j;

	sb_init(&sb, 0);
	json_init(&j, &sb);
	json_open_array(&j, NULL);
	json_close_array(&j);
	CHECK_SB(&sb, "[]\n");

	sb_reset(&sb);
	json_init(&j, &sb);
	json_open_array(&j, NULL);
	json_u64(&j, NULL, 0);
	json_i64(&j, NULL, -1);
	json_str(&j, NULL, "");
	json_close_array(&j);
	CHECK_SB(&sb, "[\n  0,\n  -1,\n  \"\"\n]\n");
	sb_release(&sb);
}

/* What a hostile summary.json may hold is "not there", never a value. */
static void jget_typed_reads(void)
{
	const char *doc =
		"{\"schema\": \"iowrap-summary/1\", \"s\": \"x\", \"n\": 2.5,"
		" \"inf\": 1e999, \"neg\": -1, \"big\": 1e19,"
		" \"c\": 4096, \"arr\": [1], \"o\": {\"k\": \"v\"}}";
	cJSON *root = cJSON_Parse(doc);
	double d = 0;
	uint64_t n = 7;
	char *str;

	if (!CHECK(root))
		return;
	CHECK(jget_is_summary(root));
	str = jget_strdup(root, "s");
	CHECK_STR(str, "x");
	free(str);
	str = jget_strdup(jget(root, "o"), "k");
	CHECK_STR(str, "v");
	free(str);
	CHECK(!jget_strdup(root, "n") && !jget_strdup(root, "missing"));
	CHECK(!jget(jget(root, "arr"), "k") && !jget(NULL, "k"));
	CHECK(jget_number(root, "n", &d) && d == 2.5);
	CHECK(!jget_number(root, "inf", &d) && !jget_number(root, "s", &d));
	CHECK(jget_count(root, "c", &n));
	CHECK_UINT(n, 4096);
	CHECK(!jget_count(root, "neg", &n) && !jget_count(root, "big", &n));
	CHECK_UINT(n, 4096); /* untouched when not a count */
	CHECK(jget_count(root, "n", &n)); /* a fraction is cut */
	CHECK_UINT(n, 2);
	cJSON_Delete(root);
	root = cJSON_Parse("{\"schema\": \"other/1\"}");
	CHECK(root && !jget_is_summary(root));
	cJSON_Delete(root);
	root = cJSON_Parse("{\"schema\": 1}");
	CHECK(root && !jget_is_summary(root));
	cJSON_Delete(root);
}

const struct unit_test json_tests[] = {
	UNIT_TEST(json_escape_ascii),
	UNIT_TEST(json_valid_utf8_kept),
	UNIT_TEST(json_invalid_utf8_replaced),
	UNIT_TEST(json_document),
	UNIT_TEST(json_top_level_values),
	UNIT_TEST(jget_typed_reads),
	UNIT_END,
};
