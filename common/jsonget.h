/* SPDX-License-Identifier: MIT */
/*
 * Typed reads of a parsed JSON document (cJSON) that came from a file:
 * every value is type-checked, a missing or odd one is "not there", never
 * a crash.  Shared by `iowrap tasks` and the report's summary.json readers.
 */
#ifndef IOWRAP_JSONGET_H
#define IOWRAP_JSONGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

/* obj[key] if obj is an object, else NULL. */
const struct cJSON *jget(const struct cJSON *obj, const char *key);
/* A copy of obj[key] if it is a string, else NULL. */
char *jget_strdup(const struct cJSON *obj, const char *key);
/* obj[key] if it is a finite number. */
bool jget_number(const struct cJSON *obj, const char *key, double *out);
/* obj[key] if it is a count: a finite number in [0, 2^63). */
bool jget_count(const struct cJSON *obj, const char *key, uint64_t *out);
/* Whether root's "schema" is iowrap's summary schema, any version. */
bool jget_is_summary(const struct cJSON *root);
/* The bytes of a summary.json that hold its "schema" (written first). */
#define SUMMARY_SCHEMA_BYTES 200
/* Whether text (len bytes, NULL if none) names iowrap's summary schema in
 * its first bytes, where the tracer writes it: a summary cut mid-write
 * that does not parse. */
bool jget_names_summary_early(const char *text, size_t len);

#endif
