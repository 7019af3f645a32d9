// SPDX-License-Identifier: MIT
#include "smklog.h"

#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "strbuf.h"
#include "taskparse.h"
#include "util.h"

struct line {
	const char *s;
	size_t len;
};

/* What the parser is in the middle of. */
struct smk_state {
	struct smklog *log;
	struct smk_job job; /* a job block being read */
	bool in_job;
	bool in_error; /* an "Error in rule X:" block */
	char *error_rule;
	char *stamp; /* the last "[Sun Nov 22 10:53:11 2026]" */
	struct hmap by_jobid; /* jobid -> index in log->jobs, the last one */
	size_t cap; /* log->jobs' room */
};

const char *smk_status_name(enum smk_status s)
{
	switch (s) {
	case SMK_FINISHED:
		return "finished";
	case SMK_FAILED:
		return "failed";
	default:
		return "started";
	}
}

static char *dup_line(const char *s, size_t len)
{
	bool cut;

	return task_value_dup(s, len, &cut);
}

static struct line trim_left(struct line l)
{
	while (l.len && (*l.s == ' ' || *l.s == '\t')) {
		l.s++;
		l.len--;
	}
	return l;
}

static bool starts_with(struct line l, const char *lit)
{
	size_t n = strlen(lit);

	return l.len >= n && memcmp(l.s, lit, n) == 0;
}

/* "rule X:", "localrule X:", "checkpoint X:", "localcheckpoint X:": the
 * rule's name, and whether it is local. */
static bool job_header(struct line l, struct line *rule, bool *local)
{
	static const char *const kinds[] = { "rule ", "checkpoint " };

	l = trim_left(l);
	*local = starts_with(l, "local");
	if (*local) {
		l.s += 5;
		l.len -= 5;
	}
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		size_t n = strlen(kinds[i]);

		if (!starts_with(l, kinds[i]) || l.len < n + 2 ||
		    l.s[l.len - 1] != ':')
			continue;
		rule->s = l.s + n;
		rule->len = l.len - n - 1;
		return memchr(rule->s, ' ', rule->len) == NULL;
	}
	return false;
}

/* "    key: value" inside a block: the value if key matches. */
static bool field(struct line l, const char *key, struct line *value)
{
	size_t n = strlen(key);

	if (!l.len || (*l.s != ' ' && *l.s != '\t'))
		return false;
	l = trim_left(l);
	if (l.len < n + 2 || memcmp(l.s, key, n) != 0 || l.s[n] != ':' ||
	    l.s[n + 1] != ' ')
		return false;
	value->s = l.s + n + 2;
	value->len = l.len - n - 2;
	return true;
}

static bool is_stamp(struct line l)
{
	return l.len >= 20 && l.len <= 40 && l.s[0] == '[' &&
	       l.s[l.len - 1] == ']';
}

static bool is_number(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static void job_release(struct smk_job *j)
{
	free(j->rule);
	free(j->jobid);
	free(j->input);
	free(j->output);
	free(j->wildcards);
	free(j->start);
	free(j->end);
	memset(j, 0, sizeof(*j));
}

/* The last job with this jobid (jobids are unique within one run). */
static struct smk_job *find_job(struct smk_state *st, const char *jobid,
				size_t len)
{
	size_t i = hmap_get(&st->by_jobid, jobid, len);

	return i == HMAP_NONE ? NULL : &st->log->jobs[i];
}

static void add_job(struct smk_state *st)
{
	struct smklog *log = st->log;

	if (log->n == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 64;
		log->jobs = xrealloc(log->jobs, st->cap * sizeof(*log->jobs));
	}
	hmap_put(&st->by_jobid, st->job.jobid, strlen(st->job.jobid), log->n);
	log->jobs[log->n++] = st->job;
	memset(&st->job, 0, sizeof(st->job));
}

static void end_block(struct smk_state *st)
{
	if (st->in_job) {
		if (is_number(st->job.jobid)) {
			add_job(st);
		} else {
			st->log->cut++;
			job_release(&st->job);
		}
	}
	st->in_job = false;
	st->in_error = false;
	free(st->error_rule);
	st->error_rule = NULL;
}

static void job_field(struct smk_state *st, struct line l)
{
	static const char *const keys[] = { "input", "output", "jobid",
					    "wildcards" };
	char **slots[] = { &st->job.input, &st->job.output, &st->job.jobid,
			   &st->job.wildcards };
	struct line v;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		if (field(l, keys[i], &v) && !*slots[i]) {
			*slots[i] = dup_line(v.s, v.len);
			return;
		}
	}
}

static void error_field(struct smk_state *st, struct line l)
{
	struct smk_job *job;
	struct line v;

	if (!field(l, "jobid", &v))
		return;
	job = find_job(st, v.s, v.len);
	if (job && strcmp(job->rule, st->error_rule) == 0)
		job->status = SMK_FAILED;
}

/* "Finished job N." (Snakemake 7) or "Finished jobid: N (Rule: X)" (8). */
static void finished(struct smk_state *st, struct line l)
{
	struct smk_job *job;
	const char *p;
	size_t n = 0;

	if (starts_with(l, "Finished job "))
		p = l.s + 13;
	else if (starts_with(l, "Finished jobid: "))
		p = l.s + 16;
	else
		return;
	while (p + n < l.s + l.len && p[n] >= '0' && p[n] <= '9')
		n++;
	if (!n)
		return;
	job = find_job(st, p, n);
	if (!job)
		return;
	if (job->status != SMK_FAILED)
		job->status = SMK_FINISHED;
	free(job->end);
	job->end = st->stamp ? xstrdup(st->stamp) : NULL;
}

static void one_line(struct smk_state *st, struct line l)
{
	struct line rule, t = trim_left(l);
	bool local;

	if (job_header(l, &rule, &local)) {
		end_block(st);
		st->in_job = true;
		st->job.rule = dup_line(rule.s, rule.len);
		st->job.local = local;
		st->job.start = st->stamp ? xstrdup(st->stamp) : NULL;
		return;
	}
	if (starts_with(t, "Error in rule ") && t.s[t.len - 1] == ':') {
		end_block(st);
		st->in_error = true;
		st->error_rule = dup_line(t.s + 14, t.len - 15);
		return;
	}
	if (l.len && (*l.s == ' ' || *l.s == '\t')) {
		if (st->in_job)
			job_field(st, l);
		else if (st->in_error)
			error_field(st, l);
		return;
	}
	end_block(st);
	if (is_stamp(l)) {
		free(st->stamp);
		st->stamp = dup_line(l.s + 1, l.len - 2);
	} else {
		finished(st, l);
	}
}

void smklog_parse(const char *text, size_t len, struct smklog *log)
{
	struct smk_state st = { .log = log };
	const char *p = text, *end = text + len;

	memset(log, 0, sizeof(*log));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct line l = { p, (size_t)((nl ? nl : end) - p) };

		if (l.len && l.s[l.len - 1] == '\r')
			l.len--;
		one_line(&st, l);
		p = nl ? nl + 1 : end;
	}
	end_block(&st);
	free(st.stamp);
	hmap_release(&st.by_jobid);
}

void smklog_release(struct smklog *log)
{
	for (size_t i = 0; i < log->n; i++)
		job_release(&log->jobs[i]);
	free(log->jobs);
	memset(log, 0, sizeof(*log));
}
