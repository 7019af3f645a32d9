// SPDX-License-Identifier: MIT
#include "taskparse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cjson/cJSON.h"
#include "util.h"

void kv_add(struct kv_list *l, const char *key, const char *value)
{
	l->items = xrealloc(l->items, (l->n + 1) * sizeof(*l->items));
	l->items[l->n].key = xstrdup(key);
	l->items[l->n].value = xstrdup(value);
	l->n++;
}

void kv_set(struct kv_list *l, const char *key, const char *value)
{
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->items[i].key, key) == 0) {
			free(l->items[i].value);
			l->items[i].value = xstrdup(value);
			return;
		}
	}
	kv_add(l, key, value);
}

const char *kv_get(const struct kv_list *l, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i].key, key) == 0)
			return l->items[i].value;
	return NULL;
}

void kv_release(struct kv_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].key);
		free(l->items[i].value);
	}
	free(l->items);
	l->items = NULL;
	l->n = 0;
}

char *task_value_dup(const char *s, size_t len, bool *cut)
{
	char *copy;

	*cut = len > TASK_VALUE_MAX;
	if (*cut) {
		len = TASK_VALUE_MAX;
		/* Back off UTF-8 continuation bytes: no half character. */
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	copy = xmalloc(len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	return copy;
}

static bool is_key_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

size_t task_key_sanitise(const char *in, char *out, size_t max)
{
	size_t n = 0;

	for (; n < max && in[n]; n++)
		out[n] = is_key_char((unsigned char)in[n]) ? in[n] : '_';
	out[n] = '\0';
	if (n > 0 && out[0] == '.')
		out[0] = '_';
	return n;
}

/* The next line of text; false at the end.  *line excludes the newline. */
static bool next_line(const char **pos, const char *end, const char **line,
		      size_t *len)
{
	const char *nl;

	if (*pos >= end)
		return false;
	*line = *pos;
	nl = memchr(*pos, '\n', (size_t)(end - *pos));
	*len = nl ? (size_t)(nl - *pos) : (size_t)(end - *pos);
	*pos = nl ? nl + 1 : end;
	return true;
}

static bool starts_with(const char *line, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(line, prefix, n) == 0;
}

/* Whole: the caller cuts it to TASK_VALUE_MAX, with the warning. */
static void set_value(struct strbuf *sb, const char *s, size_t len)
{
	sb_reset(sb);
	sb_add(sb, s, len);
}

/* "'name'" -> "name": Nextflow 24 quotes the name without escaping. */
static void set_quoted_name(struct strbuf *name, const char *v, size_t len)
{
	while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\r'))
		len--;
	/* Nextflow always quotes: a missing end quote means a cut line. */
	if (len >= 1 && v[0] == '\'') {
		v++;
		len--;
		if (len >= 1 && v[len - 1] == '\'')
			len--;
	}
	set_value(name, v, len);
}

int nextflow_header_name(const char *text, size_t len, struct strbuf *name)
{
	static const char v24[] = "### name: ";
	static const char v23[] = "# NEXTFLOW TASK: ";
	const char *pos = text, *end = text + len, *line;
	size_t n;

	while (next_line(&pos, end, &line, &n)) {
		if (memchr(line, '\0', n))
			return -EINVAL;
		if (n > 0 && line[0] != '#')
			break;
		if (starts_with(line, n, v24)) {
			set_quoted_name(name, line + strlen(v24),
					n - strlen(v24));
			return 0;
		}
		if (starts_with(line, n, v23)) {
			n -= strlen(v23);
			while (n > 0 && line[strlen(v23) + n - 1] == '\r')
				n--;
			set_value(name, line + strlen(v23), n);
			return 0;
		}
	}
	return -ENOENT;
}

void nextflow_process_of(const char *name, struct strbuf *process)
{
	const char *paren = strstr(name, " (");

	sb_reset(process);
	sb_add(process, name, paren ? (size_t)(paren - name) : strlen(name));
}

static size_t hex_run(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len &&
	       ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
		n++;
	return n;
}

bool nextflow_hash_of(const char *workdir, struct strbuf *hash)
{
	size_t len = strlen(workdir);
	const char *last, *prev;
	size_t last_len;

	while (len > 1 && workdir[len - 1] == '/')
		len--;
	last = workdir + len;
	while (last > workdir && last[-1] != '/')
		last--;
	last_len = (size_t)(workdir + len - last);
	if (last - workdir < 4 || last_len < 6 || last_len > 64 ||
	    hex_run(last, last_len) != last_len)
		return false;
	prev = last - 3;
	if (prev[-1] != '/' || hex_run(prev, 2) != 2)
		return false;
	sb_reset(hash);
	sb_add(hash, prev, 3);
	sb_add(hash, last, last_len);
	return true;
}

int snakemake_find_properties(const char *text, size_t len, bool complete,
			      const char **json, size_t *json_len)
{
	static const char prefix[] = "# properties = ";
	const char *pos = text, *end = text + len, *line;
	size_t n;

	while (next_line(&pos, end, &line, &n)) {
		if (n > 0 && line[0] != '#')
			break;
		if (!starts_with(line, n, prefix))
			continue;
		/* The line runs past what was read: it cannot be parsed. */
		if (line + n == end && !complete)
			return -EINVAL;
		*json = line + strlen(prefix);
		*json_len = n - strlen(prefix);
		return 0;
	}
	return -ENOENT;
}

/* A JSON scalar as the string the environment would hold. */
static char *scalar_string(const cJSON *item, bool *cut)
{
	char num[64];

	*cut = false;
	if (cJSON_IsString(item))
		return task_value_dup(item->valuestring,
				      strlen(item->valuestring), cut);
	if (cJSON_IsNumber(item)) {
		double d = item->valuedouble;

		/* Casting a double outside long long's range is undefined. */
		if (d > -9.2e18 && d < 9.2e18 && d == (double)(long long)d)
			snprintf(num, sizeof(num), "%lld", (long long)d);
		else
			snprintf(num, sizeof(num), "%.17g", d);
		return xstrdup(num);
	}
	if (cJSON_IsBool(item))
		return xstrdup(cJSON_IsTrue(item) ? "true" : "false");
	return NULL;
}

static void take_scalar(const cJSON *obj, const char *name, char **out,
			bool *cut)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
	bool c;

	if (!item)
		return;
	*out = scalar_string(item, &c);
	*cut |= c;
}

static void take_wildcards(const cJSON *obj, struct snakemake_props *p)
{
	const cJSON *wc = cJSON_GetObjectItemCaseSensitive(obj, "wildcards");
	const cJSON *item;

	if (!cJSON_IsObject(wc))
		return;
	p->has_wildcards = true;
	cJSON_ArrayForEach(item, wc)
	{
		bool c1, c2;

		if (p->wildcards.n >= TASK_MAP_MAX) {
			p->too_many = true;
			break;
		}
		char *v = scalar_string(item, &c1);
		char *k =
			task_value_dup(item->string, strlen(item->string), &c2);

		if (v)
			kv_set(&p->wildcards, k, v);
		p->cut |= c1 || c2;
		free(v);
		free(k);
	}
}

int snakemake_parse_properties(const char *json, size_t len,
			       struct snakemake_props *p, struct strbuf *why)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *type;

	memset(p, 0, sizeof(*p));
	if (!cJSON_IsObject(root)) {
		sb_addf(why, "the properties are not a JSON object%s",
			root ? "" : " (malformed or cut)");
		cJSON_Delete(root);
		return -EINVAL;
	}
	type = cJSON_GetObjectItemCaseSensitive(root, "type");
	if (cJSON_IsString(type) && strcmp(type->valuestring, "group") == 0) {
		take_scalar(root, "groupid", &p->group, &p->cut);
		take_scalar(root, "jobid", &p->group_jobid, &p->cut);
	} else {
		take_scalar(root, "rule", &p->rule, &p->cut);
		take_scalar(root, "jobid", &p->jobid, &p->cut);
		take_wildcards(root, p);
	}
	cJSON_Delete(root);
	return 0;
}

void snakemake_props_release(struct snakemake_props *p)
{
	free(p->rule);
	free(p->jobid);
	free(p->group);
	free(p->group_jobid);
	kv_release(&p->wildcards);
	memset(p, 0, sizeof(*p));
}

int snakemake_parse_wildcards(const char *text, struct kv_list *out, bool *cut)
{
	const char *p = text;

	*cut = false;
	while (*p) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		char *k, *v;
		bool c1, c2;

		if (!eq || eq == p)
			return -EINVAL;
		k = task_value_dup(p, (size_t)(eq - p), &c1);
		v = task_value_dup(eq + 1, n - (size_t)(eq - p) - 1, &c2);
		kv_set(out, k, v);
		free(k);
		free(v);
		*cut |= c1 || c2;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool read_hex(const char *s, size_t n, unsigned long *v)
{
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		int h = hex_value(s[i]);

		if (h < 0)
			return false;
		*v = *v * 16 + (unsigned long)h;
	}
	return true;
}

static void add_utf8(struct strbuf *out, unsigned long cp)
{
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	if (cp < 0x80) {
		sb_addc(out, (char)cp);
	} else if (cp < 0x800) {
		sb_addc(out, (char)(0xc0 | (cp >> 6)));
		sb_addc(out, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		sb_addc(out, (char)(0xe0 | (cp >> 12)));
		sb_addc(out, (char)(0x80 | ((cp >> 6) & 0x3f)));
		sb_addc(out, (char)(0x80 | (cp & 0x3f)));
	} else {
		sb_addc(out, (char)(0xf0 | (cp >> 18)));
		sb_addc(out, (char)(0x80 | ((cp >> 12) & 0x3f)));
		sb_addc(out, (char)(0x80 | ((cp >> 6) & 0x3f)));
		sb_addc(out, (char)(0x80 | (cp & 0x3f)));
	}
}

/* One escape after the backslash at s; returns its length or -1. */
static long go_escape(const char *s, size_t avail, struct strbuf *out)
{
	static const char simple[] = "a\ab\bf\fn\nr\rt\tv\v\\\\\"\"''";
	unsigned long v;
	const char *m;

	if (avail < 1)
		return -1;
	m = s[0] ? strchr(simple, s[0]) : NULL;
	if (m && (m - simple) % 2 == 0) {
		sb_addc(out, m[1]);
		return 1;
	}
	if (s[0] >= '0' && s[0] <= '7') {
		if (avail < 3 || s[1] < '0' || s[1] > '7' || s[2] < '0' ||
		    s[2] > '7' || s[0] > '3')
			return -1;
		sb_addc(out, (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 +
				    (s[2] - '0')));
		return 3;
	}
	if (s[0] == 'x' && avail >= 3 && read_hex(s + 1, 2, &v)) {
		sb_addc(out, (char)v);
		return 3;
	}
	if (s[0] == 'u' && avail >= 5 && read_hex(s + 1, 4, &v)) {
		add_utf8(out, v);
		return 5;
	}
	if (s[0] == 'U' && avail >= 9 && read_hex(s + 1, 8, &v)) {
		add_utf8(out, v);
		return 9;
	}
	return -1;
}

long go_unquote(const char *s, size_t len, struct strbuf *out)
{
	size_t i = 1;

	if (len < 2 || s[0] != '"')
		return -1;
	while (i < len && s[i] != '"') {
		if (s[i] == '\n')
			return -1;
		if (s[i] == '\\') {
			long n = go_escape(s + i + 1, len - i - 1, out);

			if (n < 0)
				return -1;
			i += 1 + (size_t)n;
		} else {
			sb_addc(out, s[i++]);
		}
	}
	return i < len ? (long)i + 1 : -1;
}

/* One key="value" line; false if it is malformed.  *cut is set if the
 * key or the value was cut. */
static bool parse_label_line(const char *line, size_t n, struct kv_list *out,
			     bool *cut)
{
	const char *eq = memchr(line, '=', n);
	struct strbuf value;
	bool c1, c2;
	long used;
	char *k, *v;

	if (!eq || eq == line)
		return false;
	sb_init(&value, TASK_VALUE_MAX * 2);
	used = go_unquote(eq + 1, n - (size_t)(eq - line) - 1, &value);
	if (used < 0 || (size_t)used != n - (size_t)(eq - line) - 1) {
		sb_release(&value);
		return false;
	}
	k = task_value_dup(line, (size_t)(eq - line), &c1);
	v = task_value_dup(sb_str(&value), value.len, &c2);
	*cut |= c1 || c2;
	kv_set(out, k, v);
	free(k);
	free(v);
	sb_release(&value);
	return true;
}

int k8s_parse_labels(const char *text, size_t len, struct kv_list *out,
		     struct strbuf *why, bool *cut)
{
	const char *pos = text, *end = text + len, *line;
	int bad = 0, lineno = 0;
	size_t n;

	*cut = false;
	while (next_line(&pos, end, &line, &n)) {
		lineno++;
		if (out->n >= TASK_MAP_MAX && n > 0) {
			if (!bad++)
				sb_addf(why, "line %d is past %d labels",
					lineno, TASK_MAP_MAX);
			continue;
		}
		if (n == 0 || parse_label_line(line, n, out, cut))
			continue;
		if (!bad++)
			sb_addf(why, "line %d is not key=\"value\"", lineno);
	}
	return bad;
}
