// SPDX-License-Identifier: MIT
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static void add_escaped_ascii(struct strbuf *sb, unsigned char c)
{
	switch (c) {
	case '"':
		sb_adds(sb, "\\\"");
		return;
	case '\\':
		sb_adds(sb, "\\\\");
		return;
	case '\n':
		sb_adds(sb, "\\n");
		return;
	case '\t':
		sb_adds(sb, "\\t");
		return;
	case '\r':
		sb_adds(sb, "\\r");
		return;
	}
	if (c < 0x20 || c == 0x7f)
		sb_addf(sb, "\\u%04x", c);
	else
		sb_addc(sb, (char)c);
}

void json_add_string(struct strbuf *sb, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	sb_addc(sb, '"');
	while (i < len) {
		size_t n = utf8_seq_len(p + i, len - i);

		if (n == 1)
			add_escaped_ascii(sb, p[i]);
		else if (n > 1)
			sb_add(sb, p + i, n);
		else
			sb_adds(sb, "\\ufffd");
		i += n ? n : 1;
	}
	sb_addc(sb, '"');
}

void json_init(struct json *j, struct strbuf *sb)
{
	memset(j, 0, sizeof(*j));
	j->sb = sb;
}

static void newline_indent(struct json *j)
{
	sb_addc(j->sb, '\n');
	for (int i = 0; i < j->depth; i++)
		sb_adds(j->sb, "  ");
}

static void begin_value(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		sb_addc(j->sb, ',');
	j->need_comma[j->depth] = true;
	if (j->depth > 0)
		newline_indent(j);
	if (key) {
		json_add_string(j->sb, key, strlen(key));
		sb_adds(j->sb, ": ");
	}
}

static void open_container(struct json *j, const char *key, char c)
{
	begin_value(j, key);
	sb_addc(j->sb, c);
	if (j->depth < (int)(sizeof(j->need_comma) - 1))
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_container(struct json *j, char c)
{
	bool had_items = j->need_comma[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had_items)
		newline_indent(j);
	sb_addc(j->sb, c);
	if (j->depth == 0)
		sb_addc(j->sb, '\n');
}

void json_open_object(struct json *j, const char *key)
{
	open_container(j, key, '{');
}

void json_close_object(struct json *j)
{
	close_container(j, '}');
}

void json_open_array(struct json *j, const char *key)
{
	open_container(j, key, '[');
}

void json_close_array(struct json *j)
{
	close_container(j, ']');
}

void json_str(struct json *j, const char *key, const char *val)
{
	if (!val) {
		json_null(j, key);
		return;
	}
	begin_value(j, key);
	json_add_string(j->sb, val, strlen(val));
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
	begin_value(j, key);
	sb_add_u64(j->sb, val);
}

void json_i64(struct json *j, const char *key, int64_t val)
{
	begin_value(j, key);
	sb_add_i64(j->sb, val);
}

void json_double(struct json *j, const char *key, double val, int decimals)
{
	begin_value(j, key);
	if (!isfinite(val)) {
		sb_adds(j->sb, "null");
		return;
	}
	sb_addf(j->sb, "%.*f", decimals, val);
}

void json_time(struct json *j, const char *key, int64_t usec)
{
	begin_value(j, key);
	sb_add_time_us(j->sb, usec);
}

void json_begin_raw(struct json *j, const char *key)
{
	begin_value(j, key);
}

void json_bool(struct json *j, const char *key, bool val)
{
	begin_value(j, key);
	sb_adds(j->sb, val ? "true" : "false");
}

void json_null(struct json *j, const char *key)
{
	begin_value(j, key);
	sb_adds(j->sb, "null");
}
