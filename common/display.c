// SPDX-License-Identifier: MIT
#include "display.h"

#include <stdbool.h>
#include <string.h>

#include "json.h"
#include "util.h"

/* The code point of a valid n-byte UTF-8 sequence. */
static unsigned int decode(const unsigned char *s, size_t n)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	unsigned int cp = s[0] & lead_mask[n];

	for (size_t i = 1; i < n; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	return cp;
}

/*
 * Characters that print as nothing: Unicode's Default_Ignorable_Code_Point
 * (DerivedCoreProperties.txt, Unicode 15.1: zero-width and joiner
 * characters, bidi marks, embeddings and isolates, the soft hyphen,
 * variation selectors, Hangul fillers, tag characters).
 */
static const struct {
	unsigned int first, last;
} ignorable[] = {
	{ 0x00ad, 0x00ad },   { 0x034f, 0x034f },   { 0x061c, 0x061c },
	{ 0x115f, 0x1160 },   { 0x17b4, 0x17b5 },   { 0x180b, 0x180f },
	{ 0x200b, 0x200f },   { 0x202a, 0x202e },   { 0x2060, 0x206f },
	{ 0x3164, 0x3164 },   { 0xfe00, 0xfe0f },   { 0xfeff, 0xfeff },
	{ 0xffa0, 0xffa0 },   { 0xfff0, 0xfff8 },   { 0x1bca0, 0x1bca3 },
	{ 0x1d173, 0x1d17a }, { 0xe0000, 0xe0fff },
};

static bool is_ignorable(unsigned int cp)
{
	for (size_t i = 0; i < ARRAY_SIZE(ignorable); i++)
		if (cp >= ignorable[i].first && cp <= ignorable[i].last)
			return true;
	return false;
}

/* Characters that are invisible or rearrange what follows them: controls
 * (C0, DEL, C1), line and paragraph separators, the interlinear annotation
 * characters (U+FFF9..U+FFFB, format characters that hide text), and the
 * default ignorable ones. */
static bool is_hazard(unsigned int cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 ||
	       cp == 0x2029 || (cp >= 0xfff9 && cp <= 0xfffb) ||
	       is_ignorable(cp);
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
