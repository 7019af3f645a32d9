// SPDX-License-Identifier: MIT
#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "util.h"

bool parse_time_us(const char *s, int64_t *out)
{
	uint64_t whole = 0;
	int64_t frac = 0;
	int digits = 0;

	if (!s || *s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (whole > (uint64_t)INT64_MAX / 1000000)
			return false;
		whole = whole * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
			if (digits >= 9)
				return false;
			if (digits < 6)
				frac = frac * 10 + (*s - '0');
		}
		if (!digits)
			return false;
	}
	if (*s)
		return false;
	for (; digits < 6; digits++)
		frac *= 10;
	/* The whole range, and no further: the checks above let a few
	 * seconds past it through. */
	if (whole > ((uint64_t)INT64_MAX - (uint64_t)frac) / 1000000)
		return false;
	*out = (int64_t)whole * 1000000 + frac;
	return true;
}

/* Decimal digits of s, at most max of them, to *v; the end, or NULL. */
static const char *digits_u64(const char *s, int max, uint64_t *v)
{
	int n = 0;

	for (*v = 0; *s >= '0' && *s <= '9'; s++, n++) {
		if (n == max)
			return NULL;
		*v = *v * 10 + (uint64_t)(*s - '0');
	}
	return n ? s : NULL;
}

bool parse_birth_ns(const char *s, uint64_t *out)
{
	uint64_t sec, ns;
	const char *end = s ? digits_u64(s, 10, &sec) : NULL;

	/* Ten digits of seconds: up to the year 2286, in 64 bits of ns. */
	if (!end || *end != '.' || sec > UINT64_MAX / 1000000000u - 1)
		return false;
	end = digits_u64(end + 1, 9, &ns);
	if (!end || *end || end - s < 11 || end[-10] != '.')
		return false;
	*out = sec * 1000000000u + ns;
	return *out != 0;
}

bool parse_dev(const char *s, uint64_t *major, uint64_t *minor)
{
	const char *end = s ? digits_u64(s, 10, major) : NULL;

	if (!end || *end != ':')
		return false;
	end = digits_u64(end + 1, 10, minor);
	return end && !*end;
}

bool parse_i64(const char *s, int64_t *out)
{
	uint64_t v;
	bool neg = s && *s == '-';

	if (!parse_u64(neg ? s + 1 : s, &v))
		return false;
	if (v > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

bool parse_hex32(const char *s, uint32_t *out)
{
	uint32_t v = 0;
	int n = 0;

	if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	for (s += 2; *s; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return false;
		if (n >= 8)
			return false;
		v = v << 4 | (uint32_t)d;
	}
	if (!n)
		return false;
	*out = v;
	return true;
}

bool parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || v < 0)
		return false;
	*out = v;
	return true;
}

bool seconds_to_us(double s, int64_t *out)
{
	if (!isfinite(s) || s < 0 || s > 9.0e12)
		return false;
	*out = llround(s * 1e6);
	return true;
}
