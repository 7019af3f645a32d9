// SPDX-License-Identifier: MIT
#include "display.h"
#include "unit.h"
#include "util.h"

static void display_escapes_hazards(void)
{
	struct strbuf sb;
	size_t cols;

	sb_init(&sb, 0);
	cols = display_adds(&sb, "a\tb\x1b[31mc\\d\n");
	CHECK_SB(&sb, "a\\x09b\\x1b[31mc\\\\d\\x0a");
	CHECK_UINT(cols, sb.len);
	sb_reset(&sb);
	/* UTF-8 kept (one column each); C1, bidi override, invalid bytes
	 * escaped. */
	cols = display_adds(&sb, "\xc3\xa9\xc2\x85\xe2\x80\xae\xff");
	CHECK_SB(&sb, "\xc3\xa9\\u{0085}\\u{202e}\\xff");
	CHECK_UINT(cols, 1 + 8 + 8 + 4);
	sb_release(&sb);
}

/* Every invisible character is escaped: "al\u2060ign" printed as "align".
 * Default_Ignorable_Code_Point at the ends of its ranges, the separators
 * and interlinear annotation characters; their neighbours are kept. */
static void display_escapes_invisible_characters(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "al\u2060ign", "al\\u{2060}ign" },
		{ "\u00ad\u034f\u061c", "\\u{00ad}\\u{034f}\\u{061c}" },
		{ "\u115f\u1160\u3164\uffa0",
		  "\\u{115f}\\u{1160}\\u{3164}\\u{ffa0}" },
		{ "\u17b4\u17b5\u180b\u180e\u180f",
		  "\\u{17b4}\\u{17b5}\\u{180b}\\u{180e}\\u{180f}" },
		{ "\u2028\u2029\u2060\u2064\u2065\u206f",
		  "\\u{2028}\\u{2029}\\u{2060}\\u{2064}\\u{2065}\\u{206f}" },
		{ "\ufe00\ufe0f\ufff0\ufff9\ufffb",
		  "\\u{fe00}\\u{fe0f}\\u{fff0}\\u{fff9}\\u{fffb}" },
		{ "\U0001bca0\U0001d173\U0001d17a",
		  "\\u{1bca0}\\u{1d173}\\u{1d17a}" },
		{ "\U000e0000\U000e0041\U000e007f\U000e0fff",
		  "\\u{e0000}\\u{e0041}\\u{e007f}\\u{e0fff}" },
		/* Visible neighbours of the ranges. */
		{ "\u00ac\u00ae\u115e\u1161\u205f\u2070\ufffc\U000e1000",
		  "\u00ac\u00ae\u115e\u1161\u205f\u2070\ufffc\U000e1000" },
	};
	struct strbuf sb;

	sb_init(&sb, 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		sb_reset(&sb);
		display_adds(&sb, cases[i].in);
		CHECK_STR(sb_str(&sb), cases[i].out);
	}
	sb_release(&sb);
}

const struct unit_test display_tests[] = {
	UNIT_TEST(display_escapes_hazards),
	UNIT_TEST(display_escapes_invisible_characters),
	UNIT_END,
};
