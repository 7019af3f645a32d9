// SPDX-License-Identifier: MIT
#include "csv.h"

#include <stdbool.h>
#include <string.h>

static int needs_quotes(const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = data[i];

		if (c == ',' || c == '"' || c == '\n' || c == '\r')
			return 1;
	}
	return 0;
}

void csv_add_field(struct strbuf *sb, const char *data, size_t len)
{
	if (!needs_quotes(data, len)) {
		sb_add(sb, data, len);
		return;
	}
	sb_addc(sb, '"');
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '"')
			sb_addc(sb, '"');
		sb_addc(sb, data[i]);
	}
	sb_addc(sb, '"');
}

void csv_add_str(struct strbuf *sb, const char *s)
{
	csv_add_field(sb, s, strlen(s));
}

void csv_reader_init(struct csv_reader *r, const char *data, size_t len)
{
	r->data = data;
	r->len = len;
	r->pos = 0;
	r->line = 0;
}

void csv_record_init(struct csv_record *rec)
{
	rec->nfields = 0;
	rec->dropped = 0;
	for (size_t i = 0; i < CSV_MAX_FIELDS; i++)
		sb_init(&rec->field[i], 1u << 20);
}

void csv_record_release(struct csv_record *rec)
{
	for (size_t i = 0; i < CSV_MAX_FIELDS; i++)
		sb_release(&rec->field[i]);
}

static struct strbuf *next_field(struct csv_record *rec)
{
	if (rec->nfields == CSV_MAX_FIELDS) {
		rec->dropped++;
		return NULL;
	}
	sb_reset(&rec->field[rec->nfields]);
	return &rec->field[rec->nfields++];
}

static void field_addc(struct strbuf *f, char c)
{
	if (f)
		sb_addc(f, c);
}

/* Reads one quoted field body; returns 0, or -1 if data ended inside it. */
static int read_quoted(struct csv_reader *r, struct strbuf *f)
{
	while (r->pos < r->len) {
		char c = r->data[r->pos++];

		if (c != '"') {
			if (c == '\n')
				r->line++;
			field_addc(f, c);
			continue;
		}
		if (r->pos < r->len && r->data[r->pos] == '"') {
			field_addc(f, '"');
			r->pos++;
			continue;
		}
		return 0;
	}
	return -1;
}

enum csv_status csv_next(struct csv_reader *r, struct csv_record *rec)
{
	struct strbuf *f;
	bool field_start = true; /* also for fields past the limit (f NULL) */

	rec->nfields = 0;
	rec->dropped = 0;
	if (r->pos >= r->len)
		return CSV_END;
	r->line++;
	f = next_field(rec);
	while (r->pos < r->len) {
		char c = r->data[r->pos++];

		if (c == '\n')
			return CSV_RECORD;
		if (c == '\r' && r->pos < r->len && r->data[r->pos] == '\n') {
			r->pos++;
			return CSV_RECORD;
		}
		if (c == ',') {
			f = next_field(rec);
			field_start = true;
			continue;
		}
		if (c == '"' && field_start) {
			field_start = false;
			if (read_quoted(r, f) < 0)
				return CSV_TRUNCATED;
			continue;
		}
		field_start = false;
		field_addc(f, c);
	}
	/* The last record has no newline: the writer was cut mid-line. */
	return CSV_TRUNCATED;
}
