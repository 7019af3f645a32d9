// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "unit.h"

struct field {
	const char *data;
	size_t len;
};

#define F(lit)                          \
	{                               \
		"" lit, sizeof(lit) - 1 \
	}

static void add_record(struct strbuf *sb, const struct field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_addc(sb, ',');
		csv_add_field(sb, f[i].data, f[i].len);
	}
	sb_addc(sb, '\n');
}

/* Reads one record of data and checks it is exactly want[0..n). */
static void check_record(struct csv_reader *r, struct csv_record *rec,
			 const struct field *want, size_t n)
{
	if (!CHECK_INT(csv_next(r, rec), CSV_RECORD))
		return;
	CHECK_UINT(rec->dropped, 0);
	if (!CHECK_UINT(rec->nfields, n))
		return;
	for (size_t i = 0; i < n; i++) {
		if (!CHECK_MEM(rec->field[i].buf, rec->field[i].len,
			       want[i].data, want[i].len))
			unit_note("field %zu", i);
	}
}

static void csv_quoting(void)
{
	static const struct {
		struct field in, out;
	} cases[] = {
		{ F("plain"), F("plain") },
		{ F(""), F("") },
		{ F(" spaces kept "), F(" spaces kept ") },
		{ F("a,b"), F("\"a,b\"") },
		{ F("say \"hi\""), F("\"say \"\"hi\"\"\"") },
		{ F("\""), F("\"\"\"\"") },
		{ F("line\nbreak"), F("\"line\nbreak\"") },
		{ F("cr\rhere"), F("\"cr\rhere\"") },
		{ F("\xff\xfe"), F("\xff\xfe") },
		{ F("semi;colon\ttab"), F("semi;colon\ttab") },
		{ F("nul\0byte"), F("nul\0byte") },
		{ F("nul\0,"), F("\"nul\0,\"") },
	};
	struct strbuf sb;

	sb_init(&sb, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sb_reset(&sb);
		csv_add_field(&sb, cases[i].in.data, cases[i].in.len);
		CHECK_MEM(sb.buf, sb.len, cases[i].out.data, cases[i].out.len);
	}
	sb_reset(&sb);
	csv_add_str(&sb, "x,y");
	CHECK_SB(&sb, "\"x,y\"");
	sb_release(&sb);
}

static void csv_round_trip(void)
{
	static const struct field rec1[] = {
		F("plain"),	 F(""),		F("a,b"),
		F("say \"hi\""), F("\"\""),	F("line\nbreak"),
		F("cr\r"),	 F("\r\n"),	F("\xff\xfe"),
		F(""),		 F(",\",\n\r"), F("\xc3\xa9t\xc3\xa9"),
		F(""),
	};
	static const struct field rec2[] = { F("") };
	static const struct field rec3[] = { F(""), F("") };
	static const struct field rec4[] = { F("\n") };
	static const struct field rec5[] = { F("\"leading"), F("trailing\"") };
	struct strbuf sb;
	struct csv_reader r;
	struct csv_record rec;

	sb_init(&sb, 0);
	add_record(&sb, rec1, sizeof(rec1) / sizeof(rec1[0]));
	add_record(&sb, rec2, 1);
	add_record(&sb, rec3, 2);
	add_record(&sb, rec4, 1);
	add_record(&sb, rec5, 2);
	csv_record_init(&rec);
	csv_reader_init(&r, sb.buf, sb.len);
	check_record(&r, &rec, rec1, sizeof(rec1) / sizeof(rec1[0]));
	check_record(&r, &rec, rec2, 1);
	check_record(&r, &rec, rec3, 2);
	check_record(&r, &rec, rec4, 1);
	check_record(&r, &rec, rec5, 2);
	CHECK_INT(csv_next(&r, &rec), CSV_END);
	CHECK_INT(csv_next(&r, &rec), CSV_END);
	csv_record_release(&rec);
	sb_release(&sb);
}

/* Every byte value, alone and in pairs, survives the writer and reader. */
static void csv_round_trip_all_bytes(void)
{
	struct strbuf sb;
	struct csv_reader r;
	struct csv_record rec;
	char field[2];

	sb_init(&sb, 0);
	csv_record_init(&rec);
	for (int a = 0; a < 256; a++) {
		for (int b = 0; b < 256; b += 5) {
			struct field want[3] = { { field, 1 },
						 { field, 2 },
						 { "x", 1 } };

			field[0] = (char)a;
			field[1] = (char)b;
			sb_reset(&sb);
			add_record(&sb, want, 3);
			csv_reader_init(&r, sb.buf, sb.len);
			check_record(&r, &rec, want, 3);
			if (!CHECK_INT(csv_next(&r, &rec), CSV_END) ||
			    unit_failures()) {
				unit_note("bytes 0x%02x 0x%02x", a, b);
				goto out;
			}
		}
	}
out:
	csv_record_release(&rec);
	sb_release(&sb);
}

static void csv_empty_input(void)
{
	struct csv_reader r;
	struct csv_record rec;

	csv_record_init(&rec);
	csv_reader_init(&r, "", 0);
	CHECK_INT(csv_next(&r, &rec), CSV_END);
	CHECK_UINT(rec.nfields, 0);

	csv_reader_init(&r, "\n", 1);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(rec.nfields, 1);
	CHECK_UINT(rec.field[0].len, 0);
	CHECK_INT(csv_next(&r, &rec), CSV_END);

	csv_reader_init(&r, ",,\n", 3);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(rec.nfields, 3);
	for (size_t i = 0; i < 3; i++)
		CHECK_UINT(rec.field[i].len, 0);
	csv_record_release(&rec);
}

static void csv_crlf(void)
{
	static const char data[] = "a,b\r\n\"c\r\nd\",e\r\nf\rg\n";
	static const struct field r1[] = { F("a"), F("b") };
	static const struct field r2[] = { F("c\r\nd"), F("e") };
	static const struct field r3[] = { F("f\rg") };
	struct csv_reader r;
	struct csv_record rec;

	csv_record_init(&rec);
	csv_reader_init(&r, data, sizeof(data) - 1);
	check_record(&r, &rec, r1, 2);
	check_record(&r, &rec, r2, 2);
	check_record(&r, &rec, r3, 1);
	CHECK_INT(csv_next(&r, &rec), CSV_END);
	csv_record_release(&rec);
}

static void csv_truncated_no_newline(void)
{
	static const char data[] = "a,b\nc,d";
	static const struct field r1[] = { F("a"), F("b") };
	struct csv_reader r;
	struct csv_record rec;

	csv_record_init(&rec);
	csv_reader_init(&r, data, sizeof(data) - 1);
	check_record(&r, &rec, r1, 2);
	CHECK_INT(csv_next(&r, &rec), CSV_TRUNCATED);
	CHECK_UINT(r.line, 2);
	CHECK_INT(csv_next(&r, &rec), CSV_END);

	/* Cut right after a CR of a CRLF. */
	csv_reader_init(&r, "a,b\r", 4);
	CHECK_INT(csv_next(&r, &rec), CSV_TRUNCATED);
	CHECK_INT(csv_next(&r, &rec), CSV_END);

	/* Cut after a closing quote. */
	csv_reader_init(&r, "x,\"y\"", 5);
	CHECK_INT(csv_next(&r, &rec), CSV_TRUNCATED);
	CHECK_INT(csv_next(&r, &rec), CSV_END);
	csv_record_release(&rec);
}

static void csv_truncated_in_quote(void)
{
	static const char *const cut[] = {
		"a,\"b\nc", /* inside a quoted field, after a newline */
		"a,\"", /* right after the opening quote */
		"a,\"b\"\"", /* after an escaped quote */
		"\"", /* a lone quote */
		"a,\"b,c\n", /* the newline belongs to the open field */
	};
	struct csv_reader r;
	struct csv_record rec;

	csv_record_init(&rec);
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		/* an exact-size copy: no NUL after the data to stop at */
		size_t len = strlen(cut[i]);
		char *copy = malloc(len);

		memcpy(copy, cut[i], len);
		csv_reader_init(&r, copy, len);
		if (!CHECK_INT(csv_next(&r, &rec), CSV_TRUNCATED))
			unit_note("input %zu", i);
		CHECK_INT(csv_next(&r, &rec), CSV_END);
		free(copy);
	}
	csv_record_release(&rec);
}

static void csv_line_numbers(void)
{
	static const char data[] = "a\n\"x\ny\"\nb\n\nc\n";
	struct csv_reader r;
	struct csv_record rec;

	csv_record_init(&rec);
	csv_reader_init(&r, data, sizeof(data) - 1);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(r.line, 1);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	/* the quoted record spans lines 2 and 3 */
	CHECK(r.line == 2 || r.line == 3);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(r.line, 4);
	CHECK_MEM(rec.field[0].buf, rec.field[0].len, "b", 1);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(r.line, 5);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(r.line, 6);
	CHECK_MEM(rec.field[0].buf, rec.field[0].len, "c", 1);
	CHECK_INT(csv_next(&r, &rec), CSV_END);
	csv_record_release(&rec);
}

static void make_numbered_record(struct strbuf *sb, int n)
{
	for (int i = 0; i < n; i++)
		sb_addf(sb, "%s%d", i ? "," : "", i);
}

static void csv_too_many_fields(void)
{
	struct strbuf sb;
	struct csv_reader r;
	struct csv_record rec;
	char num[16];

	sb_init(&sb, 0);
	csv_record_init(&rec);

	make_numbered_record(&sb, CSV_MAX_FIELDS);
	sb_addc(&sb, '\n');
	csv_reader_init(&r, sb.buf, sb.len);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(rec.nfields, CSV_MAX_FIELDS);
	CHECK_UINT(rec.dropped, 0);

	sb_reset(&sb);
	make_numbered_record(&sb, CSV_MAX_FIELDS + 6);
	sb_adds(&sb, "\nnext\n");
	csv_reader_init(&r, sb.buf, sb.len);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(rec.nfields, CSV_MAX_FIELDS);
	CHECK_UINT(rec.dropped, 6);
	for (int i = 0; i < CSV_MAX_FIELDS; i++) {
		snprintf(num, sizeof(num), "%d", i);
		CHECK_MEM(rec.field[i].buf, rec.field[i].len, num, strlen(num));
	}
	/* The next record starts afresh. */
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(rec.nfields, 1);
	CHECK_UINT(rec.dropped, 0);
	CHECK_MEM(rec.field[0].buf, rec.field[0].len, "next", 4);
	CHECK_INT(csv_next(&r, &rec), CSV_END);

	csv_record_release(&rec);
	sb_release(&sb);
}

/*
 * A quoted field past CSV_MAX_FIELDS is still one field: a comma inside
 * it is not a separator.
 */
static void csv_dropped_field_with_comma(void)
{
	struct strbuf sb;
	struct csv_reader r;
	struct csv_record rec;

	sb_init(&sb, 0);
	csv_record_init(&rec);
	make_numbered_record(&sb, CSV_MAX_FIELDS);
	sb_adds(&sb, ",\"a,b\"\n");
	csv_reader_init(&r, sb.buf, sb.len);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(rec.nfields, CSV_MAX_FIELDS);
	CHECK_UINT(rec.dropped, 1);
	CHECK_INT(csv_next(&r, &rec), CSV_END);
	csv_record_release(&rec);
	sb_release(&sb);
}

/*
 * A quoted field past CSV_MAX_FIELDS may hold a newline; it must not end
 * the record (the rest would be read as a bogus record of its own).
 */
static void csv_dropped_field_with_newline(void)
{
	struct strbuf sb;
	struct csv_reader r;
	struct csv_record rec;

	sb_init(&sb, 0);
	csv_record_init(&rec);
	make_numbered_record(&sb, CSV_MAX_FIELDS);
	sb_adds(&sb, ",\"x\ny\",z\nnext\n");
	csv_reader_init(&r, sb.buf, sb.len);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(rec.nfields, CSV_MAX_FIELDS);
	CHECK_UINT(rec.dropped, 2);
	CHECK_INT(csv_next(&r, &rec), CSV_RECORD);
	CHECK_UINT(rec.nfields, 1);
	CHECK_MEM(rec.field[0].buf, rec.field[0].len, "next", 4);
	CHECK_INT(csv_next(&r, &rec), CSV_END);
	csv_record_release(&rec);
	sb_release(&sb);
}

const struct unit_test csv_tests[] = {
	UNIT_TEST(csv_quoting),
	UNIT_TEST(csv_round_trip),
	UNIT_TEST(csv_round_trip_all_bytes),
	UNIT_TEST(csv_empty_input),
	UNIT_TEST(csv_crlf),
	UNIT_TEST(csv_truncated_no_newline),
	UNIT_TEST(csv_truncated_in_quote),
	UNIT_TEST(csv_line_numbers),
	UNIT_TEST(csv_too_many_fields),
	UNIT_TEST(csv_dropped_field_with_comma),
	UNIT_TEST(csv_dropped_field_with_newline),
	UNIT_END,
};
