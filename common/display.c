// SPDX-License-Identifier: MIT
#include "display.h"

#include <string.h>

#include "json.h"

/* The code point of a valid n-byte UTF-8 sequence. */
static unsigned int decode(const unsigned char *s, size_t n)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	unsigned int cp = s[0] & lead_mask[n];

	for (size_t i = 1; i < n; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	return cp;
}

/* Characters that are invisible or rearrange what follows them. */
static int is_hazard(unsigned int cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	       (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

size_t display_add(struct strbuf *sb, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, cols = 0, before;

	while (i < len) {
		size_t n = utf8_seq_len(p + i, len - i);
		unsigned int cp = n ? decode(p + i, n) : 0;

		before = sb->len;
		if (n == 0)
			sb_addf(sb, "\\x%02x", p[i]);
		else if (cp == '\\')
			sb_adds(sb, "\\\\");
		else if (is_hazard(cp) && n == 1)
			sb_addf(sb, "\\x%02x", cp);
		else if (is_hazard(cp))
			sb_addf(sb, "\\u{%04x}", cp);
		else
			sb_add(sb, p + i, n);
		cols += n > 1 && !is_hazard(cp) ? 1 : sb->len - before;
		i += n ? n : 1;
	}
	return cols;
}

size_t display_adds(struct strbuf *sb, const char *s)
{
	return display_add(sb, s, strlen(s));
}
