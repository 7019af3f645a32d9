/* SPDX-License-Identifier: MIT */
/* Strict number parsing for trace fields: all of the field or nothing. */
#ifndef IOWRAP_REPORT_PARSE_H
#define IOWRAP_REPORT_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* "1714067937.744123" -> microseconds; up to 9 decimals, cut to 6. */
bool parse_time_us(const char *s, int64_t *out);
bool parse_i64(const char *s, int64_t *out);
bool parse_hex32(const char *s, uint32_t *out); /* "0x00080000" */
bool parse_double(const char *s, double *out);
/* files.csv's birth, "SEC.NNNNNNNNN" (nine decimals) -> nanoseconds; a
 * birth of 0 is none (the tracer writes none as an empty cell). */
bool parse_birth_ns(const char *s, uint64_t *out);
/* files.csv's dev, "MAJOR:MINOR". */
bool parse_dev(const char *s, uint64_t *major, uint64_t *minor);
/* A seconds value from JSON as microseconds; false if out of range. */
bool seconds_to_us(double s, int64_t *out);

#endif
