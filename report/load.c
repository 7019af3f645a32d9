// SPDX-License-Identifier: MIT
#include "load.h"

#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "argv.h"
#include "csvin.h"
#include "parse.h"
#include "research.h"
#include "jsonget.h"
#include "taskparse.h"
#include "tracescan.h"
#include "util.h"

/* summary.json lists every file of the task: large, but bounded. */
#define SUMMARY_MAX_BYTES (256 << 20)

static uint64_t json_u64(const cJSON *obj, const char *key)
{
	uint64_t n;

	return jget_count(obj, key, &n) ? n : 0;
}

static int64_t json_time(const cJSON *obj, const char *key)
{
	double d;
	int64_t us;

	return jget_number(obj, key, &d) && seconds_to_us(d, &us) ? us : -1;
}

static char *join_command(const cJSON *argv)
{
	struct strbuf sb;
	const cJSON *w;

	sb_init(&sb, 4096);
	cJSON_ArrayForEach(w, argv)
	{
		if (!cJSON_IsString(w) || !w->valuestring)
			continue;
		if (sb.len)
			sb_addc(&sb, ' ');
		sb_adds(&sb, w->valuestring);
	}
	return sb_detach(&sb);
}

/* Reading one task's summary.json: where its warnings go. */
struct summary_reader {
	struct workflow *wf;
	struct task *t;
	bool mount_cut; /* a mount point was cut (said once) */
};

/*
 * A string of summary.json, cut to TASK_VALUE_MAX bytes (at a UTF-8
 * character), the tracer's own cap on a label: one 65 MiB hostname must
 * not overflow the report's output and lose every task.  A cut is one
 * warning naming the trace and the field, unless *said.
 */
static char *summary_strdup(struct summary_reader *rd, const cJSON *obj,
			    const char *key, const char *field, bool *said)
{
	const cJSON *v = jget(obj, key);
	size_t len;
	bool cut;
	char *s;

	if (!cJSON_IsString(v) || !v->valuestring)
		return NULL;
	len = strlen(v->valuestring);
	s = task_value_dup(v->valuestring, len, &cut);
	if (cut && !(said && *said))
		workflow_warn(
			rd->wf,
			"%s/summary.json: %s is %zu bytes; its first %d kept",
			rd->t->dir, field, len, TASK_VALUE_MAX);
	if (cut && said)
		*said = true;
	return s;
}

static void read_sizes(struct size_hist *h, const cJSON *arr)
{
	const cJSON *b;

	cJSON_ArrayForEach(b, arr)
	{
		double k, n, time = 0;

		/* 2^63: a count no conversion to uint64_t may exceed. */
		if (!jget_number(b, "log2_size", &k) ||
		    !jget_number(b, "count", &n) || !(k >= 0 && k < 64) ||
		    !(n >= 0 && n < 9.2e18))
			continue;
		jget_number(b, "time_s", &time);
		h->count[(int)k] += (uint64_t)n;
		h->time_s[(int)k] += time;
	}
}

/*
 * A task sees files on dozens of mounts; a summary.json with millions (a
 * hostile one: 2.3 KiB each here, 4.7 GB for 2 million) is read up to
 * this many, and says so.
 */
enum { MOUNTS_MAX = 4096 };

/* The mounts read: how many there were (more than MOUNTS_MAX: cut). */
static size_t read_mounts(struct summary_reader *rd, const cJSON *mounts)
{
	struct task *t = rd->t;
	const cJSON *m;
	size_t n = (size_t)cJSON_GetArraySize(mounts);

	if (!cJSON_IsArray(mounts) || !n)
		return 0;
	t->mount = xcalloc(n < MOUNTS_MAX ? n : MOUNTS_MAX, sizeof(*t->mount));
	cJSON_ArrayForEach(m, mounts)
	{
		struct mount_row *r = &t->mount[t->nmounts];

		if (t->nmounts == MOUNTS_MAX)
			break;
		r->mount_point = summary_strdup(rd, m, "mount_point",
						"mounts[].mount_point",
						&rd->mount_cut);
		if (!r->mount_point)
			continue;
		r->fstype = summary_strdup(rd, m, "fstype", "mounts[].fstype",
					   &rd->mount_cut);
		r->files = json_u64(m, "files");
		r->opens = json_u64(m, "opens");
		r->stats = json_u64(m, "stats");
		r->reads = json_u64(m, "reads");
		r->writes = json_u64(m, "writes");
		r->bytes_read = json_u64(m, "bytes_read");
		r->bytes_written = json_u64(m, "bytes_written");
		jget_number(m, "read_time_s", &r->read_time_s);
		jget_number(m, "write_time_s", &r->write_time_s);
		jget_number(m, "meta_time_s", &r->meta_time_s);
		read_sizes(&r->read_sizes,
			   cJSON_GetObjectItemCaseSensitive(m, "read_sizes"));
		read_sizes(&r->write_sizes,
			   cJSON_GetObjectItemCaseSensitive(m, "write_sizes"));
		t->nmounts++;
	}
	return n;
}

/* iowrap names a task with no identity after its command ("sh"): the
 * trace directory's name tells such tasks apart better. */
static bool name_from_command(const cJSON *task)
{
	const cJSON *src;

	cJSON_ArrayForEach(src,
			   cJSON_GetObjectItemCaseSensitive(task, "sources"))
	{
		const cJSON *field =
			cJSON_GetObjectItemCaseSensitive(src, "field");
		const cJSON *from =
			cJSON_GetObjectItemCaseSensitive(src, "from");

		if (cJSON_IsString(field) &&
		    strcmp(field->valuestring, "name") == 0)
			return cJSON_IsString(from) &&
			       strcmp(from->valuestring, "command basename") ==
				       0;
	}
	return false;
}

static void read_identity(struct summary_reader *rd, const cJSON *root)
{
	struct task *t = rd->t;
	const cJSON *task = cJSON_GetObjectItemCaseSensitive(root, "task");
	const cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host");

	if (cJSON_IsObject(task)) {
		const cJSON *nf =
			cJSON_GetObjectItemCaseSensitive(task, "nextflow");
		const cJSON *smk =
			cJSON_GetObjectItemCaseSensitive(task, "snakemake");

		if (!name_from_command(task))
			t->name = summary_strdup(rd, task, "name", "task.name",
						 NULL);
		t->key = summary_strdup(rd, task, "key", "task.key", NULL);
		t->engine =
			summary_strdup(rd, task, "engine", "task.engine", NULL);
		t->group = summary_strdup(rd, nf, "process",
					  "task.nextflow.process", NULL);
		if (!t->group)
			t->group = summary_strdup(rd, smk, "rule",
						  "task.snakemake.rule", NULL);
	}
	t->host = summary_strdup(rd, host, "hostname", "host.hostname", NULL);
	t->boot_id = summary_strdup(rd, host, "boot_id", "host.boot_id", NULL);
	t->command =
		join_command(cJSON_GetObjectItemCaseSensitive(root, "command"));
}

static size_t read_summary_fields(struct summary_reader *rd, const cJSON *root)
{
	struct task *t = rd->t;
	const cJSON *exit = cJSON_GetObjectItemCaseSensitive(root, "exit");
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "tracing");
	const cJSON *tot = cJSON_GetObjectItemCaseSensitive(root, "totals");
	double d;

	read_identity(rd, root);
	t->start_us = json_time(root, "start_time_s");
	t->end_us = json_time(root, "end_time_s");
	if (jget_number(exit, "code", &d) && d >= 0 && d <= 1e9)
		t->exit_code = (int64_t)d;
	if (jget_number(exit, "signal", &d) && d >= 0 && d <= 1e9)
		t->exit_signal = (int64_t)d;
	t->complete =
		cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tr, "complete"));
	t->level = summary_strdup(rd, tr, "level", "tracing.level", NULL);
	t->async_io = cJSON_IsTrue(jget(tr, "used_io_uring")) ||
		      cJSON_IsTrue(jget(tr, "used_linux_aio"));
	if (jget_number(tot, "cpu_total_s", &d) && d >= 0)
		t->cpu_s = d;
	t->peak_rss_kib = json_u64(tot, "peak_rss_kib");
	t->rchar = json_u64(tot, "rchar_bytes");
	t->wchar = json_u64(tot, "wchar_bytes");
	t->processes = json_u64(tot, "processes");
	return read_mounts(rd,
			   cJSON_GetObjectItemCaseSensitive(root, "mounts"));
}

/* Line of the byte at off, for "FILE:LINE" in messages. */
static size_t line_of(const char *data, size_t off)
{
	size_t line = 1;

	for (size_t i = 0; i < off; i++)
		line += data[i] == '\n';
	return line;
}

/* Why a trace says it is not complete: its first reason, bounded. */
static const char *incomplete_reason(const cJSON *tr, char *buf, size_t n)
{
	const cJSON *why = jget(tr, "untraced_reason");
	const cJSON *problems = jget(tr, "problems");
	const cJSON *first = cJSON_IsArray(problems) ?
				     cJSON_GetArrayItem(problems, 0) :
				     NULL;
	uint64_t count;

	if (cJSON_IsString(why) && why->valuestring)
		return why->valuestring;
	if (cJSON_IsString(first) && first->valuestring)
		return first->valuestring;
	if (jget_count(tr, "processes_unmeasured", &count) && count) {
		snprintf(buf, n, "processes ended unmeasured: %" PRIu64, count);
		return buf;
	}
	if (jget_count(tr, "orphans_detached", &count) && count) {
		snprintf(buf, n, "processes left untraced: %" PRIu64, count);
		return buf;
	}
	if (jget_count(tr, "processes_io_unknown", &count) && count) {
		snprintf(buf, n, "processes with I/O unknown: %" PRIu64, count);
		return buf;
	}
	return "see its tracing section";
}

/*
 * A task whose trace misses something says so in the report's warnings:
 * its figures are lower bounds.  So does one that used io_uring or Linux
 * AIO, whose reads and writes are in no figure.
 */
static void warn_partial_trace(struct workflow *wf, const struct task *t,
			       const cJSON *root)
{
	const cJSON *tr = jget(root, "tracing");
	char buf[64];

	if (!cJSON_IsObject(tr))
		return;
	if (!t->complete)
		workflow_warn(
			wf,
			"%s: trace incomplete (%.300s); its figures may be short",
			t->dir, incomplete_reason(tr, buf, sizeof(buf)));
	if (cJSON_IsTrue(jget(tr, "used_io_uring")))
		workflow_warn(
			wf,
			"%s: the task used io_uring, whose operations (opens, reads, writes) are not traced",
			t->dir);
	if (cJSON_IsTrue(jget(tr, "used_linux_aio")))
		workflow_warn(
			wf,
			"%s: the task used Linux AIO (io_submit), whose reads and writes are not traced",
			t->dir);
}

static void load_summary(struct workflow *wf, struct task *t, int dirfd)
{
	struct summary_reader rd = { .wf = wf, .t = t };
	const char *data, *end = NULL;
	size_t len, mounts;
	cJSON *root;
	int err = map_file(dirfd, "summary.json", &data, &len);

	if (err < 0) {
		workflow_warn(
			wf,
			"%s/summary.json: %s; task times and totals taken from procs.csv",
			t->dir,
			err == -ENOENT ? "missing (tracer killed?)" :
					 strerror(-err));
		return;
	}
	if (len > SUMMARY_MAX_BYTES) {
		workflow_warn(
			wf,
			"%s/summary.json: larger than %d MiB, not a summary; task times and totals taken from procs.csv",
			t->dir, SUMMARY_MAX_BYTES >> 20);
		unmap_file(data, len);
		return;
	}
	root = cJSON_ParseWithLengthOpts(data, len, &end, false);
	if (mapped_file_cut(data)) {
		warn_cut(wf, t, "summary.json", 0,
			 "task times and totals taken from procs.csv");
		cJSON_Delete(root);
		unmap_file(data, len);
		return;
	}
	if (!cJSON_IsObject(root)) {
		size_t off = end && end >= data && end <= data + len ?
				     (size_t)(end - data) :
				     len;

		workflow_warn(
			wf,
			"%s/summary.json:%zu: not valid JSON; task times and totals taken from procs.csv",
			t->dir, line_of(data, off));
		cJSON_Delete(root);
		unmap_file(data, len);
		return;
	}
	if (!jget_is_summary(root)) {
		workflow_warn(
			wf,
			"%s/summary.json: not an iowrap summary (no \"schema\": \"iowrap-summary/N\"); task times and totals taken from procs.csv",
			t->dir);
		cJSON_Delete(root);
		unmap_file(data, len);
		return;
	}
	mounts = read_summary_fields(&rd, root);
	if (mounts > MOUNTS_MAX)
		workflow_warn(
			wf,
			"%s/summary.json: %zu mounts; only the first %d are read",
			t->dir, mounts, MOUNTS_MAX);
	t->summary_ok = true;
	warn_partial_trace(wf, t, root);
	cJSON_Delete(root);
	unmap_file(data, len);
}

/* ---- procs.csv ---- */

enum {
	P_TIME,
	P_END_TIME,
	P_CPU,
	P_HWM,
	P_RCHAR,
	P_WCHAR,
	P_UNTR_R,
	P_UNTR_W,
	P_PPID,
	P_NCOLS
};

static const char *const procs_cols[P_NCOLS] = {
	"time",
	"end_time",
	"cpu_s",
	"vmhwm_kib",
	"rchar",
	"wchar",
	"untraced_read_bytes",
	"untraced_write_bytes",
	"ppid",
};

struct procs_sums {
	int64_t first_us, last_us;
	double cpu_s;
	uint64_t peak_kib, rchar, wchar, rows;
};

static void add_proc_row(struct csv_file *cf, struct task *t,
			 struct procs_sums *ps)
{
	int64_t start, end = -1;
	double cpu = 0;
	uint64_t hwm, rc, wc, ur, uw;

	if (!parse_time_us(cell(cf, P_TIME), &start))
		return bad_row(cf, "time");
	if (*cell(cf, P_END_TIME) && !parse_time_us(cell(cf, P_END_TIME), &end))
		return bad_row(cf, "end_time");
	if (*cell(cf, P_CPU) && !parse_double(cell(cf, P_CPU), &cpu))
		return bad_row(cf, "cpu_s");
	if (!opt_u64(cf, P_HWM, &hwm) || !opt_u64(cf, P_RCHAR, &rc) ||
	    !opt_u64(cf, P_WCHAR, &wc) || !opt_u64(cf, P_UNTR_R, &ur) ||
	    !opt_u64(cf, P_UNTR_W, &uw))
		return bad_row(cf, "(a counter)");
	cf->prob->rows++;
	ps->rows++;
	if (ps->first_us < 0 || start < ps->first_us)
		ps->first_us = start;
	if (end > ps->last_us)
		ps->last_us = end;
	ps->cpu_s += cpu;
	if (hwm > ps->peak_kib)
		ps->peak_kib = hwm;
	ps->rchar += rc;
	ps->wchar += wc;
	t->untraced_read += ur;
	t->untraced_write += uw;
}

/* Without a summary, the task is what its processes say. */
static void fill_from_procs(struct task *t, const struct procs_sums *ps)
{
	if (t->summary_ok || !ps->rows)
		return;
	t->start_us = ps->first_us;
	t->end_us = ps->last_us;
	t->cpu_s = ps->cpu_s;
	t->peak_rss_kib = ps->peak_kib;
	t->rchar = ps->rchar;
	t->wchar = ps->wchar;
	t->processes = ps->rows;
}

static void load_procs(struct workflow *wf, struct task *t, int dirfd)
{
	struct procs_sums ps = { .first_us = -1, .last_us = -1 };
	struct csv_file cf = {
		.wf = wf, .t = t, .name = "procs.csv", .prob = &t->procs
	};

	if (csv_open(&cf, dirfd, procs_cols, P_NCOLS, 2) == 0)
		while (csv_row(&cf))
			add_proc_row(&cf, t, &ps);
	csv_close(&cf);
	fill_from_procs(t, &ps);
}

/* ---- files.csv ---- */

enum {
	F_INODE,
	F_MOUNT,
	F_FSTYPE,
	F_SIZE0,
	F_SIZE1,
	F_PATHS,
	F_DEV,
	F_INO,
	F_BIRTH,
	F_NCOLS
};

static const char *const files_cols[F_NCOLS] = {
	"inode", "mount_point", "fstype", "size_first_open", "size_last_close",
	"paths", "dev",		"ino",	  "birth",
};

/* The file's identity cells, where the row has a birth time (traces
 * before the birth column have none, nor file systems whose birth times
 * do not last: no identity then); false if one is bad. */
static bool identity_cells(struct csv_file *cf, struct tfile *id)
{
	if (!*cell(cf, F_BIRTH))
		return true;
	/* All of the cell: no NUL byte ends it early. */
	return strlen(cell(cf, F_BIRTH)) == cell_len(cf, F_BIRTH) &&
	       parse_birth_ns(cell(cf, F_BIRTH), &id->birth_ns) &&
	       parse_dev(cell(cf, F_DEV), &id->dev_major, &id->dev_minor) &&
	       parse_u64(cell(cf, F_INO), &id->ino);
}

/* A bad identity is dropped, not the row: its sizes and mount stand
 * without it, and no identity only means no join by identity. */
static void read_file_identity(struct csv_file *cf, struct tfile *id)
{
	if (identity_cells(cf, id))
		return;
	bad_cell(cf, "dev/ino/birth", "no identity");
	*id = (struct tfile){ 0 };
}

static void add_file_row(struct csv_file *cf, struct task *t,
			 struct strbuf *words)
{
	uint64_t inode;
	int64_t s0 = -1, s1 = -1;
	struct tfile *f, id = { 0 };
	size_t i;

	if (!parse_u64(cell(cf, F_INODE), &inode) || !inode)
		return bad_row(cf, "inode");
	if ((*cell(cf, F_SIZE0) && !parse_i64(cell(cf, F_SIZE0), &s0)) ||
	    (*cell(cf, F_SIZE1) && !parse_i64(cell(cf, F_SIZE1), &s1)))
		return bad_row(cf, "size_first_open/size_last_close");
	sb_reset(words);
	if (argv_split(cell(cf, F_PATHS), cell_len(cf, F_PATHS), words) < 0)
		return bad_row(cf, "paths");
	read_file_identity(cf, &id);
	cf->prob->rows++;
	/* The first path: words holds NUL-separated words. */
	i = task_file_by_inode(t, inode, words->len ? words->buf : "",
			       words->len ? strlen(words->buf) : 0);
	f = &t->file[i];
	f->size_first_open = s0;
	f->size_last_close = s1;
	f->dev_major = id.dev_major;
	f->dev_minor = id.dev_minor;
	f->ino = id.ino;
	f->birth_ns = id.birth_ns;
	free(f->mount_point);
	free(f->fstype);
	f->mount_point = xstrdup(cell(cf, F_MOUNT));
	f->fstype = xstrdup(cell(cf, F_FSTYPE));
}

static void load_files(struct workflow *wf, struct task *t, int dirfd)
{
	struct strbuf words;
	struct csv_file cf = {
		.wf = wf, .t = t, .name = "files.csv", .prob = &t->files
	};

	sb_init(&words, 1u << 20);
	if (csv_open(&cf, dirfd, files_cols, F_NCOLS, 1) == 0)
		while (csv_row(&cf))
			add_file_row(&cf, t, &words);
	csv_close(&cf);
	sb_release(&words);
}

/* ---- one trace ---- */

static struct task *new_task(struct workflow *wf, const char *dir)
{
	struct task *t;

	if (wf->ntasks == wf->tasks_alloc) {
		wf->tasks_alloc = wf->tasks_alloc ? wf->tasks_alloc * 2 : 16;
		wf->task =
			xrealloc(wf->task, wf->tasks_alloc * sizeof(*wf->task));
	}
	t = &wf->task[wf->ntasks];
	memset(t, 0, sizeof(*t));
	t->dir = xstrdup(dir);
	t->start_us = t->end_us = -1;
	t->exit_code = t->exit_signal = -1;
	hmap_init(&t->by_inode);
	hmap_init(&t->by_path);
	hmap_init(&t->symlinks);
	dirtree_init(&t->dirs);
	return t;
}

static void default_name(struct task *t)
{
	const char *slash = strrchr(t->dir, '/');

	if (t->name && *t->name)
		return;
	free(t->name);
	/* The directory's name: unique among the traces of one run. */
	t->name = xstrdup(slash && slash[1] ? slash + 1 : t->dir);
}

static void default_group(struct task *t)
{
	if (!t->group)
		t->group = xstrdup(t->name);
}

/* Only the research's tools' CSV: no summary.json, procs.csv, files.csv. */
static bool from_research_tool(int dirfd)
{
	char name[NAME_MAX + 1];
	struct stat st;

	return fstatat(dirfd, "summary.json", &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	       fstatat(dirfd, "procs.csv", &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	       research_csv_find(dirfd, name, sizeof(name));
}

static int load(struct workflow *wf, const char *dir, bool with_files)
{
	struct task *t;
	bool research;
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dirfd < 0) {
		workflow_warn(wf, "%s: cannot open: %s; trace skipped", dir,
			      strerror(errno));
		return -1;
	}
	t = new_task(wf, dir);
	research = from_research_tool(dirfd);
	if (!research) {
		load_summary(wf, t, dirfd);
		if (with_files)
			load_files(wf, t, dirfd);
		load_procs(wf, t, dirfd);
	}
	if (with_files)
		load_io(wf, t, dirfd);
	close(dirfd);
	default_name(t);
	default_group(t);
	if (!research && !t->summary_ok && t->procs.missing) {
		workflow_warn(
			wf,
			"%s: neither summary.json nor procs.csv is readable; trace skipped",
			dir);
		task_discard_last(wf);
		return -1;
	}
	wf->ntasks++;
	return 0;
}

int load_trace(struct workflow *wf, const char *dir)
{
	return load(wf, dir, true);
}

int load_trace_identity(struct workflow *wf, const char *dir)
{
	return load(wf, dir, false);
}

/* The report's trace directories: those of every reader (an iowrap
 * summary.json, or procs.csv: tracescan_kind), and the research tools'
 * CSV alone. */
static int report_probe(struct tracescan *ts, int fd, const char *path,
			void **data)
{
	(void)data;
	return from_research_tool(fd) ||
	       tracescan_kind(ts, fd, path) != TRACESCAN_NONE;
}

static void scan_root(struct workflow *wf, struct tracescan *ts,
		      const char *root)
{
	struct strbuf why;
	int found;

	sb_init(&why, 0);
	found = tracescan_add(ts, root, &why);
	if (found < 0)
		workflow_warn(wf, "%s: cannot open directory: %s", root,
			      sb_str(&why));
	else if (found == 0)
		workflow_warn(
			wf,
			"%s: no trace directory (summary.json or procs.csv) at or below it",
			root);
	sb_release(&why);
}

size_t load_traces(struct workflow *wf, char **roots, int nroots,
		   bool with_files)
{
	struct tracescan ts;

	tracescan_init(&ts, "report", report_probe, NULL);
	for (int i = 0; i < nroots; i++)
		scan_root(wf, &ts, roots[i]);
	for (size_t i = 0; i < ts.n; i++)
		load(wf, ts.dir[i].path, with_files);
	wf->warnings += ts.warnings;
	tracescan_release(&ts);
	return wf->ntasks;
}
