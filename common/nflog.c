// SPDX-License-Identifier: MIT
#include "nflog.h"

#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "taskparse.h"
#include "util.h"

/* A record longer than this (continuation lines included) is not a task
 * line: only its first line is tried. */
#define NFLOG_RECORD_MAX (1u << 20)

static const char *const completion_markers[] = {
	"Task completed > TaskHandler[",
	"Task timed-out > TaskHandler[",
};

struct span {
	const char *s;
	size_t len;
};

static const char *find_mem(const char *hay, size_t len, const char *lit)
{
	return memmem(hay, len, lit, strlen(lit));
}

/* The last occurrence of lit in [s, s+len), or NULL. */
static const char *find_last(const char *s, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	const char *found = NULL, *p = s, *end = s + len, *hit;

	while ((hit = memmem(p, (size_t)(end - p), lit, n)) != NULL) {
		found = hit;
		p = hit + 1;
	}
	return found;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool digits_at(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return true;
}

bool nflog_is_record_start(const char *line, size_t len)
{
	/* "-dd HH:mm:ss.SSS [" after a month of 1..20 bytes with no space */
	static const char shape[] = "-00 00:00:00.000 [";
	size_t i = 0, n = sizeof(shape) - 1;

	while (i < len && i <= 20 && line[i] != '-' && line[i] != ' ')
		i++;
	if (i == 0 || i > 20 || len - i < n)
		return false;
	for (size_t k = 0; k < n; k++) {
		char want = shape[k], c = line[i + k];

		if (want == '0' ? !is_digit(c) : c != want)
			return false;
	}
	return true;
}

/* The length of the record's time stamp ("Nov-22 10:01:02.345"), 0 if the
 * record does not start with one. */
static size_t log_time_len(const char *rec, size_t len)
{
	const char *dash;

	if (!nflog_is_record_start(rec, len))
		return 0;
	dash = memchr(rec, '-', len);
	return (size_t)(dash - rec) + sizeof("-00 00:00:00.000") - 1;
}

static char *dup_span(const char *s, size_t len)
{
	bool cut;

	return task_value_dup(s, len, &cut);
}

/* Takes lit at *p (advancing past it) if it is there. */
static bool take(const char **p, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
		return false;
	*p += n;
	return true;
}

/* A value up to the next "; " that holds no ';' or space (ids). */
static bool take_word(const char **p, const char *end, struct span *out)
{
	const char *q = *p;

	while (q < end && *q != ';' && *q != ' ')
		q++;
	if (q == *p || !take(&q, end, "; "))
		return false;
	out->s = *p;
	out->len = (size_t)(q - 2 - *p);
	*p = q;
	return true;
}

/* "; status: WORD; exit: (-|-?N); error: " at s; returns its length with
 * status and exit set, 0 if it is not that. */
static size_t status_exit_at(const char *s, const char *end,
			     struct span *status, struct span *exit_code)
{
	const char *p = s, *q;

	if (!take(&p, end, "; status: "))
		return 0;
	for (q = p; q < end && *q >= 'A' && *q <= 'Z'; q++)
		;
	if (q == p)
		return 0;
	*status = (struct span){ p, (size_t)(q - p) };
	p = q;
	if (!take(&p, end, "; exit: "))
		return 0;
	q = p;
	if (q < end && *q == '-')
		q++;
	while (q < end && is_digit(*q))
		q++;
	if (q == p)
		return 0;
	*exit_code = (struct span){ p, (size_t)(q - p) };
	p = q;
	if (!take(&p, end, "; error: "))
		return 0;
	return (size_t)(p - s);
}

struct handler_fields {
	struct span job_id, id, name, status, exit, error, workdir;
	struct span started, exited;
	bool grid;
};

/* The right end of the work directory: before "]" (local executors) or
 * before " started: MS; exited: TIME; ]" (grid executors). */
static const char *workdir_end(const char *body, const char *end,
			       struct handler_fields *f)
{
	const char *started, *exited;
	size_t len = (size_t)(end - body);

	if (len >= 3 && memcmp(end - 3, "; ]", 3) == 0) {
		started = find_last(body, len - 3, " started: ");
		if (!started)
			return NULL;
		exited = find_mem(started, (size_t)(end - 3 - started),
				  "; exited: ");
		if (!exited)
			return NULL;
		f->grid = true;
		f->started = (struct span){ started + 10,
					    (size_t)(exited - started - 10) };
		f->exited = (struct span){ exited + 10,
					   (size_t)(end - 3 - exited - 10) };
		return started;
	}
	if (len >= 1 && end[-1] == ']')
		return end - 1;
	return NULL;
}

/* Parses "[jobId: J; ]id: N; name: ...]" from body to end. */
static bool parse_handler(const char *body, const char *end,
			  struct handler_fields *f)
{
	const char *p = body, *wd_end, *wd, *q;
	size_t n = 0;

	memset(f, 0, sizeof(*f));
	if (take(&p, end, "jobId: ") && !take_word(&p, end, &f->job_id))
		return false;
	if (!take(&p, end, "id: ") || !take_word(&p, end, &f->id) ||
	    !digits_at(f->id.s, f->id.len) || !take(&p, end, "name: "))
		return false;
	wd_end = workdir_end(p, end, f);
	if (!wd_end)
		return false;
	wd = find_last(p, (size_t)(wd_end - p), "; workDir: ");
	if (!wd)
		return false;
	f->workdir = (struct span){ wd + 11, (size_t)(wd_end - wd - 11) };
	/* The first "; status: W; exit: E; error: " after the name. */
	for (q = p; q < wd; q++) {
		if (*q == ';' &&
		    (n = status_exit_at(q, wd, &f->status, &f->exit)) > 0)
			break;
	}
	if (q >= wd)
		return false;
	f->name = (struct span){ p, (size_t)(q - p) };
	f->error = (struct span){ q + n, (size_t)(wd - q - n) };
	return true;
}

/* The last completion marker in rec; *count says how many there are. */
static const char *last_marker(const char *rec, size_t len, bool *timed_out,
			       size_t *count)
{
	const char *best = NULL;

	*count = 0;
	for (size_t i = 0; i < ARRAY_SIZE(completion_markers); i++) {
		const char *p = rec, *end = rec + len, *hit;
		size_t n = strlen(completion_markers[i]);

		while ((hit = memmem(p, (size_t)(end - p),
				     completion_markers[i], n)) != NULL) {
			(*count)++;
			if (!best || hit > best) {
				best = hit;
				*timed_out = i == 1;
			}
			p = hit + 1;
		}
	}
	return best;
}

static void fill_task(struct nflog_task *t, const char *rec, size_t len,
		      const struct handler_fields *f, bool timed_out)
{
	struct strbuf hash;
	size_t tlen = log_time_len(rec, len);

	memset(t, 0, sizeof(*t));
	t->log_time = tlen ? dup_span(rec, tlen) : NULL;
	t->job_id = f->job_id.s ? dup_span(f->job_id.s, f->job_id.len) : NULL;
	t->id = dup_span(f->id.s, f->id.len);
	t->name = dup_span(f->name.s, f->name.len);
	t->status = dup_span(f->status.s, f->status.len);
	t->exit = dup_span(f->exit.s, f->exit.len);
	t->error = dup_span(f->error.s, f->error.len);
	t->workdir = dup_span(f->workdir.s, f->workdir.len);
	if (f->grid) {
		t->started_ms = dup_span(f->started.s, f->started.len);
		t->exited = dup_span(f->exited.s, f->exited.len);
	}
	t->timed_out = timed_out;
	sb_init(&hash, 256);
	if (nextflow_hash_of(t->workdir, &hash))
		t->hash = sb_detach(&hash);
	sb_release(&hash);
}

enum nflog_result nflog_parse_record(const char *rec, size_t len,
				     struct nflog_task *t, size_t *dropped)
{
	struct handler_fields f;
	const char *marker, *end = rec + len;
	bool timed_out = false;
	size_t count;

	*dropped = 0;
	marker = last_marker(rec, len, &timed_out, &count);
	if (!marker)
		return NFLOG_OTHER;
	*dropped = count - 1;
	while (end > marker && (end[-1] == '\n' || end[-1] == '\r' ||
				end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (!parse_handler(marker + strlen(completion_markers[0]), end, &f))
		return NFLOG_CUT;
	/* A work directory's path, not a fragment that happens to end in
	 * ']': a task's work directory is .../xx/hexhash. */
	fill_task(t, rec, len, &f, timed_out);
	if (!t->hash || memchr(t->workdir, '\n', strlen(t->workdir))) {
		nflog_task_release(t);
		return NFLOG_CUT;
	}
	return NFLOG_TASK;
}

void nflog_task_release(struct nflog_task *t)
{
	char **fields[] = { &t->log_time,   &t->job_id,	 &t->id,
			    &t->name,	    &t->status,	 &t->exit,
			    &t->error,	    &t->workdir, &t->hash,
			    &t->started_ms, &t->exited };

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		free(*fields[i]);
		*fields[i] = NULL;
	}
}

static void add_task(struct nflog *log, struct nflog_task *t)
{
	log->tasks =
		xgrow(log->tasks, &log->alloc, log->n, sizeof(*log->tasks));
	log->tasks[log->n++] = *t;
}

/* One record: its first line, then (if that is cut) with its
 * continuation lines, for error messages that hold newlines. */
static void parse_one(struct nflog *log, const char *rec, size_t first_len,
		      size_t len)
{
	struct nflog_task t;
	enum nflog_result r;
	size_t dropped;

	if (!memmem(rec, len, "TaskHandler[", 12))
		return;
	r = nflog_parse_record(rec, first_len, &t, &dropped);
	if (r == NFLOG_CUT && len > first_len && len <= NFLOG_RECORD_MAX)
		r = nflog_parse_record(rec, len, &t, &dropped);
	log->cut += dropped;
	if (r == NFLOG_TASK)
		add_task(log, &t);
	else if (r == NFLOG_CUT)
		log->cut++;
}

void nflog_parse(const char *text, size_t len, struct nflog *log)
{
	const char *p = text, *end = text + len, *rec = NULL;
	size_t first_len = 0;

	memset(log, 0, sizeof(*log));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		size_t line_len = (size_t)((nl ? nl : end) - p);

		if (!rec || nflog_is_record_start(p, line_len)) {
			if (rec)
				parse_one(log, rec, first_len,
					  (size_t)(p - rec));
			rec = p;
			first_len = line_len;
		}
		p = next;
	}
	if (rec)
		parse_one(log, rec, first_len, (size_t)(end - rec));
}

void nflog_release(struct nflog *log)
{
	for (size_t i = 0; i < log->n; i++)
		nflog_task_release(&log->tasks[i]);
	free(log->tasks);
	memset(log, 0, sizeof(*log));
}
