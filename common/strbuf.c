// SPDX-License-Identifier: MIT
#include "strbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void sb_init(struct strbuf *sb, size_t limit)
{
	memset(sb, 0, sizeof(*sb));
	sb->limit = limit ? limit : STRBUF_DEFAULT_LIMIT;
}

void sb_release(struct strbuf *sb)
{
	free(sb->buf);
	sb_init(sb, sb->limit);
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	sb->truncated = false;
	if (sb->buf)
		sb->buf[0] = '\0';
}

/* Makes room for len more bytes plus a NUL; returns how many fit. */
static size_t sb_reserve(struct strbuf *sb, size_t len)
{
	size_t room = sb->limit - sb->len;
	size_t want;

	if (len > room) {
		len = room;
		sb->truncated = true;
	}
	want = sb->len + len + 1;
	if (want > sb->alloc) {
		size_t n = sb->alloc ? sb->alloc : 64;

		while (n < want)
			n *= 2;
		sb->buf = xrealloc(sb->buf, n);
		sb->alloc = n;
	}
	return len;
}

void sb_add(struct strbuf *sb, const void *data, size_t len)
{
	len = sb_reserve(sb, len);
	/* Trace rows are built of many tiny pieces: a byte loop beats
	 * memcpy's start-up for them (it showed in the tracer's profile). */
	if (len <= 16) {
		const char *src = data;

		for (size_t i = 0; i < len; i++)
			sb->buf[sb->len + i] = src[i];
	} else {
		memcpy(sb->buf + sb->len, data, len);
	}
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void sb_addc(struct strbuf *sb, char c)
{
	if (sb->len + 2 <= sb->alloc && sb->len < sb->limit) {
		sb->buf[sb->len++] = c;
		sb->buf[sb->len] = '\0';
		return;
	}
	sb_add(sb, &c, 1);
}

void sb_adds(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		sb_add(sb, small, n);
		return;
	}
	char *big = xmalloc((size_t)n + 1);

	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb_add(sb, big, n);
	free(big);
}

/* The decimal digits of v, at least width of them (zero-padded), as
 * printf's "%0*llu" would, without its cost: these are written several
 * times per io.csv row, while the tracee waits. */
void sb_add_u64_padded(struct strbuf *sb, uint64_t v, unsigned width)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	if (width > sizeof(tmp))
		width = sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (sizeof(tmp) - i < width)
		tmp[--i] = '0';
	sb_add(sb, tmp + i, sizeof(tmp) - i);
}

void sb_add_u64(struct strbuf *sb, uint64_t v)
{
	sb_add_u64_padded(sb, v, 1);
}

void sb_add_hex32(struct strbuf *sb, uint32_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[10] = { '0', 'x' };

	for (int i = 9; i >= 2; i--, v >>= 4)
		tmp[i] = digits[v & 0xf];
	sb_add(sb, tmp, sizeof(tmp));
}

void sb_add_i64(struct strbuf *sb, int64_t v)
{
	if (v < 0) {
		sb_addc(sb, '-');
		sb_add_u64(sb, (uint64_t)0 - (uint64_t)v);
		return;
	}
	sb_add_u64(sb, (uint64_t)v);
}

void sb_add_time_us(struct strbuf *sb, int64_t usec)
{
	if (usec < 0)
		usec = 0;
	sb_add_u64(sb, (uint64_t)usec / 1000000);
	sb_addc(sb, '.');
	sb_add_u64_padded(sb, (uint64_t)usec % 1000000, 6);
}

const char *sb_str(struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

char *sb_detach(struct strbuf *sb)
{
	char *s = sb->buf ? sb->buf : xstrdup("");

	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	sb->truncated = false;
	return s;
}
