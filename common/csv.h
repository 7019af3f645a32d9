/* SPDX-License-Identifier: MIT */
/*
 * CSV as RFC 4180 writes it: a field is quoted when it holds a comma, a
 * quote, CR or LF, and quotes inside are doubled.  Bytes are passed through
 * untouched, so paths and argv that are not UTF-8 round-trip exactly.
 */
#ifndef IOWRAP_CSV_H
#define IOWRAP_CSV_H

#include <stddef.h>

#include "strbuf.h"

void csv_add_field(struct strbuf *sb, const char *data, size_t len);
void csv_add_str(struct strbuf *sb, const char *s);

enum csv_status {
	CSV_RECORD = 0, /* a complete record was read */
	CSV_END, /* no more data */
	CSV_TRUNCATED, /* data ended inside a record (a cut last line) */
};

struct csv_reader {
	const char *data;
	size_t len;
	size_t pos;
	size_t line; /* 1-based line of the record just read */
};

#define CSV_MAX_FIELDS 128

struct csv_record {
	size_t nfields;
	struct strbuf field[CSV_MAX_FIELDS];
	size_t dropped; /* fields past CSV_MAX_FIELDS */
};

void csv_reader_init(struct csv_reader *r, const char *data, size_t len);
void csv_record_init(struct csv_record *rec);
void csv_record_release(struct csv_record *rec);
enum csv_status csv_next(struct csv_reader *r, struct csv_record *rec);

#endif
