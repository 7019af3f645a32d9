/* SPDX-License-Identifier: MIT */
/*
 * Just enough JSON output for summary.json.  Strings are validated as UTF-8;
 * a byte that is not part of a valid sequence becomes U+FFFD (the exact
 * bytes of paths and argv are kept in the CSV files).
 */
#ifndef IOWRAP_JSON_H
#define IOWRAP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

struct json {
	struct strbuf *sb;
	int depth;
	bool need_comma[32];
};

/* Length of the valid UTF-8 sequence at s (avail > 0), or 0 if it is not
 * one. */
size_t utf8_seq_len(const unsigned char *s, size_t avail);

void json_init(struct json *j, struct strbuf *sb);
void json_add_string(struct strbuf *sb, const char *s, size_t len);

void json_open_object(struct json *j, const char *key);
void json_close_object(struct json *j);
void json_open_array(struct json *j, const char *key);
void json_close_array(struct json *j);
void json_str(struct json *j, const char *key, const char *val);
void json_u64(struct json *j, const char *key, uint64_t val);
void json_i64(struct json *j, const char *key, int64_t val);
void json_double(struct json *j, const char *key, double val, int decimals);
void json_time(struct json *j, const char *key, int64_t usec);
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);
/* Starts a value that the caller appends to j->sb as JSON text itself
 * (e.g. a small array on one line). */
void json_begin_raw(struct json *j, const char *key);

#endif
