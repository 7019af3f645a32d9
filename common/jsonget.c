// SPDX-License-Identifier: MIT
#include "jsonget.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "util.h"

const cJSON *jget(const cJSON *obj, const char *key)
{
	return cJSON_IsObject(obj) ?
		       cJSON_GetObjectItemCaseSensitive(obj, key) :
		       NULL;
}

char *jget_strdup(const cJSON *obj, const char *key)
{
	const cJSON *v = jget(obj, key);

	return cJSON_IsString(v) && v->valuestring ? xstrdup(v->valuestring) :
						     NULL;
}

bool jget_number(const cJSON *obj, const char *key, double *out)
{
	const cJSON *v = jget(obj, key);

	/* cJSON reads 1e999 as infinity. */
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return false;
	*out = v->valuedouble;
	return true;
}

bool jget_count(const cJSON *obj, const char *key, uint64_t *out)
{
	double d;

	if (!jget_number(obj, key, &d) || d < 0 || d >= 9.2e18)
		return false;
	*out = (uint64_t)d;
	return true;
}

bool jget_names_summary_early(const char *text, size_t len)
{
	size_t n = len < SUMMARY_SCHEMA_BYTES ? len : SUMMARY_SCHEMA_BYTES;

	return text && memmem(text, n, "\"iowrap-summary/", 16) != NULL;
}

bool jget_is_summary(const cJSON *root)
{
	const cJSON *schema = jget(root, "schema");

	return cJSON_IsString(schema) && schema->valuestring &&
	       strncmp(schema->valuestring, "iowrap-summary/", 15) == 0;
}
