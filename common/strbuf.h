/* SPDX-License-Identifier: MIT */
/*
 * A growable byte string with a hard upper bound.  Everything iowrap reads
 * from a tracee or from /proc ends up in one of these, so the bound is what
 * keeps a hostile process from making the tracer allocate without limit.
 */
#ifndef IOWRAP_STRBUF_H
#define IOWRAP_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
	size_t limit; /* bytes the buffer may never exceed */
	bool truncated; /* an append was cut at the limit */
};

#define STRBUF_DEFAULT_LIMIT (16u << 20)

void sb_init(struct strbuf *sb, size_t limit);
void sb_release(struct strbuf *sb);
void sb_reset(struct strbuf *sb);
void sb_add(struct strbuf *sb, const void *data, size_t len);
void sb_addc(struct strbuf *sb, char c);
void sb_adds(struct strbuf *sb, const char *s);
void sb_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_add_u64(struct strbuf *sb, uint64_t v);
void sb_add_u64_padded(struct strbuf *sb, uint64_t v, unsigned width);
/* "0x" and eight lower-case hex digits, as printf's "0x%08x". */
void sb_add_hex32(struct strbuf *sb, uint32_t v);
void sb_add_i64(struct strbuf *sb, int64_t v);
/* Seconds since the epoch with microseconds: "1714067937.744123". */
void sb_add_time_us(struct strbuf *sb, int64_t usec);
/* Returns a NUL-terminated view (never NULL). */
const char *sb_str(struct strbuf *sb);
/* Hands the malloc'd string to the caller and leaves sb empty. */
char *sb_detach(struct strbuf *sb);

#endif
