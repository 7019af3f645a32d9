// SPDX-License-Identifier: MIT
#include "display.h"
#include "unit.h"

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

const struct unit_test display_tests[] = {
	UNIT_TEST(display_escapes_hazards),
	UNIT_END,
};
