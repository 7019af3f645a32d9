// SPDX-License-Identifier: MIT
/*
 * iowrap tasks [--json] [--nextflow-log FILE] [--snakemake-log FILE] DIR...:
 * lists the traced tasks under trace roots and workflow directories, one
 * row per task, joined with the workflow engine's own log when given.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin.h"
#include "cliopt.h"
#include "display.h"
#include "hmap.h"
#include "json.h"
#include "nflog.h"
#include "smklog.h"
#include "tasktrace.h"
#include "tracescan.h"
#include "textfile.h"
#include "util.h"

enum {
	TASKS_OK = 0,
	TASKS_NONE_FOUND = 1,
	TASKS_BAD_INPUT = 2,
	OPT_JSON = 256,
	OPT_NEXTFLOW_LOG,
	OPT_SNAKEMAKE_LOG,
};

/* The largest log read into memory. */
#define TASKS_LOG_MAX ((size_t)1 << 30)
/* A JSON value nested deeper than this in a task object is cut. */
#define TASKS_JSON_DEPTH 16

static const char tasks_usage[] =
	"usage: iowrap tasks [OPTIONS] DIR...\n"
	"\n"
	"Lists the tasks traced under each DIR (a --root, a Nextflow work\n"
	"directory, a Snakemake workflow's .snakemake/iowrap, a trace\n"
	"directory), sorted by start time: task, host, start (UTC), wall time,\n"
	"exit, bytes read and written, trace directory.\n"
	"\n"
	"      --json                a JSON array, one object per task\n"
	"      --nextflow-log FILE   join with a .nextflow.log by work directory;\n"
	"                            its tasks without a trace are listed too\n"
	"      --snakemake-log FILE  join with a .snakemake/log/*.snakemake.log by\n"
	"                            rule and jobid; its jobs are listed too\n"
	"  -h, --help                this text\n"
	"\n"
	"Exit status: 0 tasks listed, 1 none found, 2 bad usage or a DIR or\n"
	"FILE that cannot be read.\n";

struct tasks_options {
	bool json;
	const char *nextflow_log;
	const char *snakemake_log;
	char **dirs;
	int ndirs;
};

struct row {
	const struct task_trace *trace; /* NULL: a log's task, no trace */
	const struct nflog_task *nf;
	const struct smk_job *smk;
	bool has_time;
	double time_s; /* start: the sort key */
	size_t order; /* ties and unknown times keep finding order */
};

/*
 * A log's entries by a key, each with the one before it under the same
 * key: a trace finds its entry without a pass over the log per trace (a
 * log of 10^5 tasks and as many traces).
 */
struct log_index {
	struct hmap last; /* key -> the last entry with it */
	size_t *before; /* per entry: the one before with its key */
};

/* Nextflow's short hash ("3f/a2b4c6", 9 characters) is a prefix of the
 * work directory's: that much is the key; same_hash() decides. */
#define NF_HASH_KEY 9

static void index_init(struct log_index *x, size_t n)
{
	hmap_init(&x->last);
	x->before = xcalloc(n + 1, sizeof(*x->before));
}

static void index_put(struct log_index *x, size_t i, const void *key,
		      size_t len)
{
	x->before[i] = hmap_get(&x->last, key, len);
	hmap_put(&x->last, key, len, i);
}

static void index_release(struct log_index *x)
{
	hmap_release(&x->last);
	free(x->before);
}

/* A Snakemake job's key: its rule, a NUL, its jobid. */
static void smk_key(struct strbuf *key, const char *rule, const char *jobid)
{
	sb_reset(key);
	sb_adds(key, rule);
	sb_addc(key, '\0');
	sb_adds(key, jobid);
}

struct listing {
	struct tracescan scan;
	struct nflog nf;
	struct smklog smk;
	bool have_nf, have_smk;
	bool *nf_used, *smk_used;
	struct row *rows;
	size_t nrows, rows_alloc;
	struct log_index nf_by_hash;
	struct hmap smk_by_job; /* rule NUL jobid -> the last such job */
	/* rule NUL wildcards as the log prints them -> the last such job */
	struct hmap smk_by_wildcards;
};

static int tasks_usage_error(const char *what)
{
	warnx_line("tasks: %s; see iowrap tasks --help", what);
	return TASKS_BAD_INPUT;
}

static int parse_tasks_options(int argc, char **argv, struct tasks_options *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "nextflow-log", required_argument, NULL, OPT_NEXTFLOW_LOG },
		{ "snakemake-log", required_argument, NULL, OPT_SNAKEMAKE_LOG },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char msg[320];
	int c;

	optind = 1;
	while ((c = cliopt_next(argc, argv, "+:h", longopts, msg,
				sizeof(msg))) != -1) {
		switch (c) {
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_NEXTFLOW_LOG:
			o->nextflow_log = optarg;
			break;
		case OPT_SNAKEMAKE_LOG:
			o->snakemake_log = optarg;
			break;
		case 'h':
			fputs(tasks_usage, stdout);
			return TASKS_OK;
		default:
			return tasks_usage_error(msg);
		}
	}
	o->dirs = argv + optind;
	o->ndirs = argc - optind;
	if (o->ndirs < 1)
		return tasks_usage_error("no DIR given");
	return -1;
}

/* Reads a log named on the command line; false (with a message) if it
 * cannot be read. */
static bool read_log(const char *path, struct strbuf *text)
{
	struct strbuf why, name;
	int rc;

	sb_init(&why, 0);
	sb_init(text, TASKS_LOG_MAX + 1);
	rc = textfile_read_at(AT_FDCWD, path, 0, TASKS_LOG_MAX, text, &why);
	if (rc < 0) {
		sb_init(&name, 0);
		display_adds(&name, path);
		warnx_line("tasks: %s: %s; give a readable log file",
			   sb_str(&name), sb_str(&why));
		sb_release(&name);
	}
	sb_release(&why);
	return rc == 0;
}

static void warn_cut(const char *path, size_t n, const char *what)
{
	struct strbuf name;

	if (!n)
		return;
	sb_init(&name, 0);
	display_adds(&name, path);
	warnx_line("tasks: %s: %zu %s cut mid-write or malformed; skipped",
		   sb_str(&name), n, what);
	sb_release(&name);
}

static void index_nf(struct listing *l)
{
	index_init(&l->nf_by_hash, l->nf.n);
	for (size_t i = 0; i < l->nf.n; i++) {
		const char *hash = l->nf.tasks[i].hash;

		if (hash && strlen(hash) >= NF_HASH_KEY)
			index_put(&l->nf_by_hash, i, hash, NF_HASH_KEY);
	}
}

static void index_smk(struct listing *l)
{
	struct strbuf key;

	sb_init(&key, 0);
	hmap_init(&l->smk_by_job);
	hmap_init(&l->smk_by_wildcards);
	for (size_t i = 0; i < l->smk.n; i++) {
		const struct smk_job *j = &l->smk.jobs[i];

		smk_key(&key, j->rule, j->jobid);
		hmap_put(&l->smk_by_job, key.buf, key.len, i);
		smk_key(&key, j->rule, j->wildcards ? j->wildcards : "");
		hmap_put(&l->smk_by_wildcards, key.buf, key.len, i);
	}
	sb_release(&key);
}

static bool load_logs(const struct tasks_options *o, struct listing *l)
{
	struct strbuf text;

	if (o->nextflow_log) {
		if (!read_log(o->nextflow_log, &text))
			return false;
		nflog_parse(text.buf ? text.buf : "", text.len, &l->nf);
		sb_release(&text);
		l->have_nf = true;
		l->nf_used = xcalloc(l->nf.n + 1, sizeof(bool));
		index_nf(l);
		warn_cut(o->nextflow_log, l->nf.cut, "task lines");
	}
	if (o->snakemake_log) {
		if (!read_log(o->snakemake_log, &text))
			return false;
		smklog_parse(text.buf ? text.buf : "", text.len, &l->smk);
		sb_release(&text);
		l->have_smk = true;
		l->smk_used = xcalloc(l->smk.n + 1, sizeof(bool));
		index_smk(l);
		warn_cut(o->snakemake_log, l->smk.cut, "job blocks");
	}
	return true;
}

static bool scan_dirs(const struct tasks_options *o, struct listing *l)
{
	struct strbuf why, name;

	for (int i = 0; i < o->ndirs; i++) {
		sb_init(&why, 0);
		if (tracescan_add(&l->scan, o->dirs[i], &why) < 0) {
			sb_init(&name, 0);
			display_adds(&name, o->dirs[i]);
			warnx_line("tasks: %s: %s; give a directory holding "
				   "traces",
				   sb_str(&name), sb_str(&why));
			sb_release(&name);
			sb_release(&why);
			return false;
		}
		sb_release(&why);
	}
	return true;
}

/* Whether two task hashes ("3f/a2b4...") name the same work directory:
 * equal, or one a prefix of the other of at least 9 characters (the
 * short form Nextflow prints). */
static bool same_hash(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;

	return n >= NF_HASH_KEY && strncmp(a, b, n) == 0;
}

/* The log's last task of the trace's work directory, or -1. */
static long find_nf(const struct listing *l, const struct task_trace *t)
{
	size_t i;

	if (!l->have_nf || !t->nf_hash || strlen(t->nf_hash) < NF_HASH_KEY)
		return -1;
	for (i = hmap_get(&l->nf_by_hash.last, t->nf_hash, NF_HASH_KEY);
	     i != HMAP_NONE; i = l->nf_by_hash.before[i])
		if (same_hash(l->nf.tasks[i].hash, t->nf_hash))
			return (long)i;
	return -1;
}

/*
 * A group job's job has no jobid (only the main Snakemake process knows
 * it) but its rule and wildcards, which name one job of a run: its
 * wildcards as the log prints them, "k=v, k2=v2".  False if the trace is
 * no group's job, or a wildcard is not a string.
 */
static bool group_job_wildcards(const struct task_trace *t, struct strbuf *wc)
{
	const cJSON *smk =
		cJSON_GetObjectItemCaseSensitive(t->task, "snakemake");
	const cJSON *all = cJSON_GetObjectItemCaseSensitive(smk, "wildcards");
	const cJSON *item;

	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(smk, "group")) ||
	    (all && !cJSON_IsObject(all)))
		return false;
	cJSON_ArrayForEach(item, all)
	{
		if (!cJSON_IsString(item))
			return false;
		sb_addf(wc, "%s%s=%s", wc->len ? ", " : "", item->string,
			item->valuestring);
	}
	return true;
}

/* The log's last job of the trace's rule and jobid (a group's job: rule
 * and wildcards), or -1. */
static long find_smk(const struct listing *l, const struct task_trace *t)
{
	struct strbuf key, wc;
	size_t i = HMAP_NONE;

	if (!l->have_smk || !t->smk_rule)
		return -1;
	sb_init(&key, 0);
	sb_init(&wc, 0);
	if (t->smk_jobid) {
		smk_key(&key, t->smk_rule, t->smk_jobid);
		i = hmap_get(&l->smk_by_job, key.buf, key.len);
	} else if (group_job_wildcards(t, &wc)) {
		smk_key(&key, t->smk_rule, sb_str(&wc));
		i = hmap_get(&l->smk_by_wildcards, key.buf, key.len);
	}
	sb_release(&key);
	sb_release(&wc);
	return i == HMAP_NONE ? -1 : (long)i;
}

static struct row *add_row(struct listing *l)
{
	struct row *r;

	l->rows = xgrow(l->rows, &l->rows_alloc, l->nrows, sizeof(*l->rows));
	r = &l->rows[l->nrows];
	memset(r, 0, sizeof(*r));
	r->order = l->nrows++;
	return r;
}

/* "Sun Nov 22 10:53:11 2026" (local time, as Snakemake prints it). */
static bool smk_time(const char *s, double *out)
{
	struct tm tm;
	const char *end;
	time_t t;

	if (!s)
		return false;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%a %b %d %H:%M:%S %Y", &tm);
	if (!end || *end)
		return false;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return false;
	*out = (double)t;
	return true;
}

/* The grid executor's start, epoch milliseconds. */
static bool nf_time(const char *ms, double *out)
{
	uint64_t v;

	if (!ms || !parse_u64(ms, &v) || v > (uint64_t)1e15)
		return false;
	*out = (double)v / 1000.0;
	return true;
}

static void set_time(struct row *r)
{
	if (r->trace && r->trace->has_start) {
		r->has_time = true;
		r->time_s = r->trace->start_s;
	} else if (r->nf) {
		r->has_time = nf_time(r->nf->started_ms, &r->time_s);
	} else if (r->smk) {
		r->has_time = smk_time(r->smk->start, &r->time_s);
	}
}

static void join(struct listing *l)
{
	for (size_t i = 0; i < l->scan.n; i++) {
		struct task_trace *t = l->scan.dir[i].data;
		struct row *r = add_row(l);
		long nf = find_nf(l, t);
		long smk = find_smk(l, t);

		r->trace = t;
		if (nf >= 0) {
			r->nf = &l->nf.tasks[nf];
			l->nf_used[nf] = true;
		}
		if (smk >= 0) {
			r->smk = &l->smk.jobs[smk];
			l->smk_used[smk] = true;
		}
	}
	for (size_t i = 0; l->have_nf && i < l->nf.n; i++)
		if (!l->nf_used[i])
			add_row(l)->nf = &l->nf.tasks[i];
	for (size_t i = 0; l->have_smk && i < l->smk.n; i++)
		if (!l->smk_used[i])
			add_row(l)->smk = &l->smk.jobs[i];
	for (size_t i = 0; i < l->nrows; i++)
		set_time(&l->rows[i]);
}

static int compare_rows(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;

	if (a->has_time != b->has_time)
		return a->has_time ? -1 : 1;
	if (a->has_time && a->time_s != b->time_s)
		return a->time_s < b->time_s ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* "2026-11-22T10:53:11Z", with milliseconds if ms. */
static void add_iso_time(struct strbuf *sb, double t, bool ms)
{
	time_t secs = (time_t)floor(t);
	struct tm tm;
	char buf[64];

	if (!gmtime_r(&secs, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm)) {
		sb_adds(sb, "-");
		return;
	}
	sb_adds(sb, buf);
	if (ms)
		sb_addf(sb, ".%03d", (int)((t - floor(t)) * 1000.0));
	sb_addc(sb, 'Z');
}

/* The task's name: its trace's, else the log's. */
static void add_name(struct strbuf *sb, const struct row *r)
{
	if (r->trace && r->trace->name)
		display_adds(sb, r->trace->name);
	else if (r->nf)
		display_adds(sb, r->nf->name);
	else if (r->smk) {
		display_adds(sb, r->smk->rule);
		if (r->smk->wildcards) {
			sb_addc(sb, '[');
			display_adds(sb, r->smk->wildcards);
			sb_addc(sb, ']');
		}
	} else
		sb_adds(sb, "?");
}

static void add_duration(struct strbuf *sb, double s)
{
	long long whole;

	/* A hostile trace's 1e300 (or NaN) is no long long. */
	if (!(s >= 0 && s < 1e15)) {
		sb_adds(sb, "?");
		return;
	}
	whole = (long long)s;
	if (s < 60)
		sb_addf(sb, "%.3fs", s);
	else if (s < 3600)
		sb_addf(sb, "%lldm%02llds", whole / 60, whole % 60);
	else
		sb_addf(sb, "%lldh%02lldm%02llds", whole / 3600,
			whole / 60 % 60, whole % 60);
}

static void add_exit(struct strbuf *sb, const struct row *r)
{
	const struct task_trace *t = r->trace;

	if (t && t->signal_name)
		display_adds(sb, t->signal_name);
	else if (t && t->has_exit_code)
		sb_add_i64(sb, t->exit_code);
	else if (r->nf)
		display_adds(sb, r->nf->exit);
	else
		sb_adds(sb, "-");
}

/* What the log says of the task: its status, or that it is not there. */
static void add_log_status(struct strbuf *sb, const struct row *r,
			   const struct listing *l)
{
	if (r->nf && r->smk) {
		display_adds(sb, r->nf->status);
		sb_addc(sb, '/');
		sb_adds(sb, smk_status_name(r->smk->status));
	} else if (r->nf) {
		display_adds(sb,
			     r->nf->timed_out ? "TIMED-OUT" : r->nf->status);
	} else if (r->smk) {
		sb_adds(sb, smk_status_name(r->smk->status));
	} else {
		sb_adds(sb, (l->have_nf || l->have_smk) ? "not in log" : "-");
	}
}

enum column {
	COL_TASK,
	COL_HOST,
	COL_START,
	COL_WALL,
	COL_EXIT,
	COL_READ,
	COL_WRITTEN,
	COL_LOG,
	COL_TRACE,
	NCOLS,
};

static const char *const column_titles[NCOLS] = {
	"TASK", "HOST",	   "START", "WALL",  "EXIT",
	"READ", "WRITTEN", "LOG",   "TRACE",
};

struct cells {
	struct strbuf cell[NCOLS];
	size_t width[NCOLS];
};

static void fill_cells(struct cells *c, const struct row *r,
		       const struct listing *l, bool *estimated)
{
	const struct task_trace *t = r->trace;

	for (int i = 0; i < NCOLS; i++)
		sb_init(&c->cell[i], 0);
	add_name(&c->cell[COL_TASK], r);
	display_adds(&c->cell[COL_HOST], t && t->host ? t->host : "-");
	if (r->has_time)
		add_iso_time(&c->cell[COL_START], r->time_s, false);
	else
		sb_adds(&c->cell[COL_START], "-");
	if (t && t->has_wall)
		add_duration(&c->cell[COL_WALL], t->wall_s);
	else
		sb_adds(&c->cell[COL_WALL], "-");
	add_exit(&c->cell[COL_EXIT], r);
	if (t && t->has_io) {
		sb_add_u64(&c->cell[COL_READ], t->read_bytes);
		sb_add_u64(&c->cell[COL_WRITTEN], t->written_bytes);
		if (!t->io_from_files) {
			sb_addc(&c->cell[COL_READ], '*');
			sb_addc(&c->cell[COL_WRITTEN], '*');
			*estimated = true;
		}
	} else {
		sb_adds(&c->cell[COL_READ], "-");
		sb_adds(&c->cell[COL_WRITTEN], "-");
	}
	add_log_status(&c->cell[COL_LOG], r, l);
	if (t && t->error)
		sb_adds(&c->cell[COL_TASK], " (bad summary.json)");
	display_adds(&c->cell[COL_TRACE], t ? t->path : "no trace");
	for (int i = 0; i < NCOLS; i++)
		c->width[i] = c->cell[i].len;
}

static void release_cells(struct cells *c)
{
	for (int i = 0; i < NCOLS; i++)
		sb_release(&c->cell[i]);
}

static size_t columns_of(const struct strbuf *sb)
{
	size_t cols = 0;

	/* Escaped text is ASCII; the rest is valid UTF-8: count lead bytes. */
	for (size_t i = 0; i < sb->len; i++)
		cols += ((unsigned char)sb->buf[i] & 0xc0) != 0x80;
	return cols;
}

static void add_table_line(struct strbuf *out, const struct strbuf *cells,
			   const size_t *width, bool with_log)
{
	for (int i = 0; i < NCOLS; i++) {
		size_t cols = columns_of(&cells[i]);
		bool right = i == COL_READ || i == COL_WRITTEN;

		if (i == COL_LOG && !with_log)
			continue;
		if (i > 0)
			sb_adds(out, "  ");
		for (size_t k = cols; right && k < width[i]; k++)
			sb_addc(out, ' ');
		sb_add(out, cells[i].buf, cells[i].len);
		for (size_t k = cols; !right && i < NCOLS - 1 && k < width[i];
		     k++)
			sb_addc(out, ' ');
	}
	sb_addc(out, '\n');
}

static void print_table(const struct listing *l, struct strbuf *out)
{
	struct cells *cells = xcalloc(l->nrows + 1, sizeof(*cells));
	struct strbuf titles[NCOLS];
	size_t width[NCOLS];
	bool estimated = false, with_log = l->have_nf || l->have_smk;

	for (int i = 0; i < NCOLS; i++) {
		sb_init(&titles[i], 0);
		sb_adds(&titles[i], column_titles[i]);
		width[i] = strlen(column_titles[i]);
	}
	for (size_t r = 0; r < l->nrows; r++) {
		fill_cells(&cells[r], &l->rows[r], l, &estimated);
		for (int i = 0; i < NCOLS; i++) {
			size_t cols = columns_of(&cells[r].cell[i]);

			if (cols > width[i])
				width[i] = cols;
		}
	}
	add_table_line(out, titles, width, with_log);
	for (size_t r = 0; r < l->nrows; r++) {
		add_table_line(out, cells[r].cell, width, with_log);
		release_cells(&cells[r]);
	}
	if (estimated)
		sb_adds(out,
			"* rchar/wchar (below --level full): every read and "
			"write, pipes and program loading included\n");
	for (int i = 0; i < NCOLS; i++)
		sb_release(&titles[i]);
	free(cells);
}

static void json_value(struct json *j, const char *key, const cJSON *v,
		       int depth);

static void json_container(struct json *j, const char *key, const cJSON *v,
			   int depth)
{
	const cJSON *item;
	bool object = cJSON_IsObject(v);

	if (object)
		json_open_object(j, key);
	else
		json_open_array(j, key);
	cJSON_ArrayForEach(item, v)
	{
		json_value(j,
			   object ? (item->string ? item->string : "") : NULL,
			   item, depth + 1);
	}
	if (object)
		json_close_object(j);
	else
		json_close_array(j);
}

/* A value read from a trace, written again through the validating
 * writer: the output is valid UTF-8 JSON whatever the file held. */
static void json_value(struct json *j, const char *key, const cJSON *v,
		       int depth)
{
	if ((cJSON_IsObject(v) || cJSON_IsArray(v)) && depth < TASKS_JSON_DEPTH)
		json_container(j, key, v, depth);
	else if (cJSON_IsString(v) && v->valuestring)
		json_str(j, key, v->valuestring);
	else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
		 fabs(v->valuedouble) < 9e15)
		json_i64(j, key, (int64_t)v->valuedouble);
	else if (cJSON_IsNumber(v))
		json_double(j, key, v->valuedouble, 6);
	else if (cJSON_IsBool(v))
		json_bool(j, key, cJSON_IsTrue(v));
	else
		json_null(j, key);
}

static void json_nf(struct json *j, const struct nflog_task *t)
{
	if (!t) {
		json_null(j, "nextflow_log");
		return;
	}
	json_open_object(j, "nextflow_log");
	json_str(j, "time", t->log_time);
	json_str(j, "id", t->id);
	json_str(j, "name", t->name);
	json_str(j, "status", t->status);
	json_str(j, "exit", t->exit);
	json_str(j, "error", t->error);
	json_str(j, "workdir", t->workdir);
	json_str(j, "hash", t->hash);
	json_str(j, "job_id", t->job_id);
	json_str(j, "started_ms", t->started_ms);
	json_str(j, "exited", t->exited);
	json_bool(j, "timed_out", t->timed_out);
	json_close_object(j);
}

static void json_smk(struct json *j, const struct smk_job *s)
{
	if (!s) {
		json_null(j, "snakemake_log");
		return;
	}
	json_open_object(j, "snakemake_log");
	json_str(j, "rule", s->rule);
	json_str(j, "jobid", s->jobid);
	json_str(j, "wildcards", s->wildcards);
	json_str(j, "input", s->input);
	json_str(j, "output", s->output);
	json_bool(j, "local", s->local);
	json_str(j, "status", smk_status_name(s->status));
	json_str(j, "start", s->start);
	json_str(j, "end", s->end);
	json_close_object(j);
}

static void json_name(struct json *j, const struct row *r)
{
	struct strbuf name;

	if (r->trace && r->trace->name) {
		json_str(j, "task", r->trace->name);
		return;
	}
	sb_init(&name, 0);
	if (r->nf)
		sb_adds(&name, r->nf->name);
	else if (r->smk && r->smk->wildcards)
		sb_addf(&name, "%s[%s]", r->smk->rule, r->smk->wildcards);
	else if (r->smk)
		sb_adds(&name, r->smk->rule);
	json_str(j, "task", r->nf || r->smk ? sb_str(&name) : NULL);
	sb_release(&name);
}

static void json_trace_fields(struct json *j, const struct task_trace *t)
{
	json_str(j, "host", t ? t->host : NULL);
	if (t && t->has_wall)
		json_double(j, "wall_time_s", t->wall_s, 6);
	else
		json_null(j, "wall_time_s");
	if (t && t->has_exit_code)
		json_i64(j, "exit_code", t->exit_code);
	else
		json_null(j, "exit_code");
	json_str(j, "signal", t ? t->signal_name : NULL);
	if (t && t->has_io) {
		json_u64(j, "read_bytes", t->read_bytes);
		json_u64(j, "written_bytes", t->written_bytes);
		json_str(j, "io_source", t->io_from_files ? "files" : "rchar");
	} else {
		json_null(j, "read_bytes");
		json_null(j, "written_bytes");
		json_null(j, "io_source");
	}
	json_str(j, "trace", t ? t->path : NULL);
	json_str(j, "error", t ? t->error : NULL);
	json_str(j, "level", t ? t->level : NULL);
	if (t && t->task)
		json_value(j, "identity", t->task, 0);
	else
		json_null(j, "identity");
}

static void json_row(struct json *j, const struct row *r)
{
	struct strbuf iso;

	json_open_object(j, NULL);
	json_name(j, r);
	sb_init(&iso, 0);
	if (r->has_time) {
		add_iso_time(&iso, r->time_s, true);
		json_str(j, "start", sb_str(&iso));
		json_double(j, "start_time_s", r->time_s, 6);
	} else {
		json_null(j, "start");
		json_null(j, "start_time_s");
	}
	sb_release(&iso);
	json_trace_fields(j, r->trace);
	json_nf(j, r->nf);
	json_smk(j, r->smk);
	json_close_object(j);
}

static void print_json(const struct listing *l, struct strbuf *out)
{
	struct json j;

	json_init(&j, out);
	json_open_array(&j, NULL);
	for (size_t i = 0; i < l->nrows; i++)
		json_row(&j, &l->rows[i]);
	json_close_array(&j);
}

static void release_listing(struct listing *l)
{
	tracescan_release(&l->scan);
	nflog_release(&l->nf);
	smklog_release(&l->smk);
	free(l->nf_used);
	free(l->smk_used);
	if (l->have_nf)
		index_release(&l->nf_by_hash);
	if (l->have_smk) {
		hmap_release(&l->smk_by_job);
		hmap_release(&l->smk_by_wildcards);
	}
	free(l->rows);
}

static int write_out(const struct strbuf *out)
{
	if (out->len && fwrite(out->buf, 1, out->len, stdout) != out->len)
		return -1;
	return fflush(stdout);
}

int cmd_tasks(int argc, char **argv)
{
	struct tasks_options o = { 0 };
	struct listing l;
	struct strbuf out;
	int status;

	status = parse_tasks_options(argc, argv, &o);
	if (status >= 0)
		return status;
	memset(&l, 0, sizeof(l));
	tracescan_init(&l.scan, "tasks", task_trace_probe, task_trace_free);
	if (!load_logs(&o, &l) || !scan_dirs(&o, &l)) {
		release_listing(&l);
		return TASKS_BAD_INPUT;
	}
	join(&l);
	sort_array(l.rows, l.nrows, sizeof(*l.rows), compare_rows);
	sb_init(&out, SIZE_MAX);
	if (o.json)
		print_json(&l, &out);
	else if (l.nrows)
		print_table(&l, &out);
	status = l.nrows ? TASKS_OK : TASKS_NONE_FOUND;
	if (!l.nrows)
		warnx_line("tasks: no traces found (no directory with an "
			   "iowrap summary.json, nor tasks in the logs)");
	if (write_out(&out) != 0) {
		warnx_line("tasks: writing the listing: %s", strerror(errno));
		status = TASKS_BAD_INPUT;
	}
	sb_release(&out);
	release_listing(&l);
	return status;
}
