// SPDX-License-Identifier: MIT
/*
 * report.json, written in pieces: the buffer is flushed after each task
 * and file, so the output may be far larger than the buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emit_out.h"
#include "util.h"

static void opt_str(struct json *j, const char *key, const char *s)
{
	json_str(j, key, s);
}

static void emit_workflow(struct json *j, struct workflow *wf,
			  const struct analysis *an)
{
	uint64_t rd = 0, wr = 0, urd = 0, uwr = 0, ev = 0, data = 0, meta = 0;
	double cpu = 0;

	for (size_t t = 0; t < wf->ntasks; t++) {
		const struct task *tk = &wf->task[t];

		rd += tk->file_read_bytes;
		wr += tk->file_write_bytes;
		urd += tk->untraced_read;
		uwr += tk->untraced_write;
		ev += tk->events;
		data += tk->data_time_us;
		meta += tk->meta_time_us;
		cpu += tk->cpu_s;
	}
	json_open_object(j, "workflow");
	json_u64(j, "tasks", wf->ntasks);
	json_secs(j, "start_time_s", an->t0_us);
	json_secs(j, "end_time_s", an->t1_us);
	json_secs(j, "wall_time_s", an->t1_us - an->t0_us);
	json_double(j, "cpu_total_s", cpu, 6);
	json_u64(j, "file_read_bytes", rd);
	json_u64(j, "file_write_bytes", wr);
	json_u64(j, "untraced_read_bytes", urd);
	json_u64(j, "untraced_write_bytes", uwr);
	json_secs(j, "data_time_s", (int64_t)data);
	json_secs(j, "meta_time_s", (int64_t)meta);
	json_u64(j, "files", an->nfiles);
	json_u64(j, "events", ev);
	json_close_object(j);
}

static void emit_rw(struct json *j, const char *key, const struct rw_acc *a)
{
	json_open_object(j, key);
	json_u64(j, "ops", a->ops);
	json_u64(j, "bytes", a->bytes);
	json_secs(j, "time_s", (int64_t)a->time_us);
	json_secs(j, "first_time_s", a->first_us);
	json_secs(j, "last_time_s", a->ops ? a->last_us : -1);
	json_i64(j, "max_byte", a->pos.max_byte);
	json_u64(j, "consecutive", a->pos.consec);
	json_u64(j, "sequential", a->pos.seq);
	json_u64(j, "random", a->ops > 1 ? a->ops - 1 - a->pos.seq : 0);
	json_str(j, "pattern", access_pattern(a));
	json_close_object(j);
}

/* Fig. 4 of Witzke et al.: first to last access over the task's runtime. */
static void emit_span(struct json *j, const struct task *tk,
		      const struct tfile *f)
{
	int64_t span = f->first_access_us >= 0 ?
			       f->last_access_us - f->first_access_us :
			       -1;
	int64_t wall = task_wall_us(tk);

	json_secs(j, "first_access_s", f->first_access_us);
	json_secs(j, "last_access_s", span >= 0 ? f->last_access_us : -1);
	json_secs(j, "access_span_s", span);
	if (span >= 0 && wall > 0)
		json_double(j, "access_span_fraction",
			    (double)span / (double)wall, 6);
	else
		json_null(j, "access_span_fraction");
}

static void emit_tfile(struct json *j, const struct analysis *an,
		       const struct task *tk, const struct tfile *f)
{
	size_t g = f->path_len ? hmap_get(&an->by_path, f->path, f->path_len) :
				 HMAP_NONE;

	json_open_object(j, NULL);
	if (g == HMAP_NONE)
		json_null(j, "file");
	else
		json_u64(j, "file", g);
	json_str(j, "path", f->path);
	json_u64(j, "inode", f->inode);
	opt_str(j, "mount_point", f->mount_point);
	opt_str(j, "fstype", f->fstype);
	json_i64(j, "size_first_open", f->size_first_open);
	json_i64(j, "size_last_close", f->size_last_close);
	json_u64(j, "opens", f->opens);
	json_u64(j, "stats", f->stats);
	json_u64(j, "other_meta_ops", f->other_meta);
	json_secs(j, "meta_time_s", (int64_t)f->meta_time_us);
	emit_rw(j, "read", &f->rd);
	emit_rw(j, "write", &f->wr);
	emit_span(j, tk, f);
	json_u64(j, "reread_bytes", reread_bytes(f));
	json_bool(j, "appended", f->appended);
	json_bool(j, "executed", f->executed);
	json_secs(j, "created_s", f->created_us);
	json_secs(j, "unlinked_s", f->unlink_us);
	json_close_object(j);
}

static uint64_t key_bytes(const void *ctx, size_t i)
{
	const struct tfile *f = &((const struct task *)ctx)->file[i];

	return f->rd.bytes + f->wr.bytes;
}

static uint64_t key_ops(const void *ctx, size_t i)
{
	return tfile_ops(&((const struct task *)ctx)->file[i]);
}

static void emit_top(struct json *j, const char *key, const struct task *tk,
		     uint64_t (*k)(const void *, size_t))
{
	size_t top[REPORT_TOP_N];
	size_t n = top_n(tk->nfiles, k, tk, top, REPORT_TOP_N);

	json_open_array(j, key);
	for (size_t i = 0; i < n; i++)
		if (k(tk, top[i]))
			json_u64(j, NULL, top[i]);
	json_close_array(j);
}

static void emit_hist(struct json *j, const char *key,
		      const struct size_hist *h)
{
	json_open_array(j, key);
	for (int k = 0; k < 64; k++) {
		if (!h->count[k])
			continue;
		json_open_object(j, NULL);
		json_i64(j, "log2_size", k);
		json_u64(j, "count", h->count[k]);
		json_double(j, "time_s", h->time_s[k], 6);
		json_close_object(j);
	}
	json_close_array(j);
}

static void emit_mounts(struct out *o, const struct task *tk)
{
	struct json *j = &o->j;

	json_open_array(j, "mounts");
	for (size_t i = 0; i < tk->nmounts; i++) {
		const struct mount_row *m = &tk->mount[i];

		if (i % 4096 == 4095)
			out_flush(o);
		json_open_object(j, NULL);
		json_str(j, "mount_point", m->mount_point);
		opt_str(j, "fstype", m->fstype);
		json_u64(j, "files", m->files);
		json_u64(j, "opens", m->opens);
		json_u64(j, "stats", m->stats);
		json_u64(j, "reads", m->reads);
		json_u64(j, "writes", m->writes);
		json_u64(j, "bytes_read", m->bytes_read);
		json_u64(j, "bytes_written", m->bytes_written);
		json_double(j, "read_time_s", m->read_time_s, 6);
		json_double(j, "write_time_s", m->write_time_s, 6);
		json_double(j, "meta_time_s", m->meta_time_s, 6);
		emit_hist(j, "read_sizes", &m->read_sizes);
		emit_hist(j, "write_sizes", &m->write_sizes);
		json_close_object(j);
	}
	json_close_array(j);
}

static void emit_problems(struct json *j, const char *key,
			  const struct csv_problems *p)
{
	json_open_object(j, key);
	json_bool(j, "missing", p->missing);
	json_u64(j, "rows", p->rows);
	json_u64(j, "rows_skipped", p->skipped);
	json_bool(j, "truncated", p->truncated);
	json_close_object(j);
}

static void emit_task_head(struct json *j, size_t id, const struct task *tk)
{
	json_u64(j, "id", id);
	json_str(j, "name", tk->name);
	opt_str(j, "key", tk->key);
	opt_str(j, "engine", tk->engine);
	json_str(j, "logical_task", tk->group);
	json_str(j, "dir", tk->dir);
	opt_str(j, "host", tk->host);
	opt_str(j, "command", tk->command);
	opt_str(j, "level", tk->level);
	json_bool(j, "summary_read", tk->summary_ok);
	json_bool(j, "complete", tk->complete && tk->summary_ok);
	json_secs(j, "start_time_s", tk->start_us);
	json_secs(j, "end_time_s", tk->end_us);
	json_secs(j, "wall_time_s", task_wall_us(tk));
	if (tk->exit_code >= 0)
		json_i64(j, "exit_code", tk->exit_code);
	else
		json_null(j, "exit_code");
	if (tk->exit_signal >= 0)
		json_i64(j, "exit_signal", tk->exit_signal);
	else
		json_null(j, "exit_signal");
}

static void emit_task(struct json *j, size_t id, const struct task *tk,
		      const struct analysis *an, struct out *o)
{
	json_open_object(j, NULL);
	emit_task_head(j, id, tk);
	json_double(j, "cpu_s", tk->cpu_s, 6);
	json_u64(j, "peak_rss_kib", tk->peak_rss_kib);
	json_u64(j, "processes", tk->processes);
	json_u64(j, "events", tk->events);
	json_u64(j, "file_read_bytes", tk->file_read_bytes);
	json_u64(j, "file_write_bytes", tk->file_write_bytes);
	json_u64(j, "untraced_read_bytes", tk->untraced_read);
	json_u64(j, "untraced_write_bytes", tk->untraced_write);
	json_u64(j, "rchar_bytes", tk->rchar);
	json_u64(j, "wchar_bytes", tk->wchar);
	json_u64(j, "files_touched", tk->nfiles);
	json_secs(j, "data_time_s", (int64_t)tk->data_time_us);
	json_secs(j, "meta_time_s", (int64_t)tk->meta_time_us);
	emit_mounts(o, tk);
	emit_top(j, "top_files_by_bytes", tk, key_bytes);
	emit_top(j, "top_files_by_ops", tk, key_ops);
	json_open_object(j, "problems");
	emit_problems(j, "io_csv", &tk->io);
	emit_problems(j, "files_csv", &tk->files);
	emit_problems(j, "procs_csv", &tk->procs);
	json_close_object(j);
	json_open_array(j, "files");
	for (size_t i = 0; i < tk->nfiles; i++) {
		emit_tfile(j, an, tk, &tk->file[i]);
		out_flush(o);
	}
	json_close_array(j);
	json_close_object(j);
}

static void emit_tasks(struct out *o, struct workflow *wf,
		       const struct analysis *an)
{
	json_open_array(&o->j, "tasks");
	for (size_t t = 0; t < wf->ntasks; t++)
		emit_task(&o->j, t, &wf->task[t], an, o);
	json_close_array(&o->j);
}

struct group {
	const char *name;
	size_t ntasks;
	int64_t wall_total, wall_max;
	double cpu;
	uint64_t rd, wr, peak;
};

static void add_to_group(struct group *g, const struct task *t)
{
	int64_t wall = task_wall_us(t);

	g->ntasks++;
	/* Walls from hostile traces may add past int64. */
	if (__builtin_add_overflow(g->wall_total, wall, &g->wall_total))
		g->wall_total = INT64_MAX;
	if (wall > g->wall_max)
		g->wall_max = wall;
	g->cpu += t->cpu_s;
	g->rd += t->file_read_bytes;
	g->wr += t->file_write_bytes;
	if (t->peak_rss_kib > g->peak)
		g->peak = t->peak_rss_kib;
}

static void emit_group(struct json *j, const struct group *g)
{
	json_open_object(j, NULL);
	json_str(j, "name", g->name);
	json_u64(j, "tasks", g->ntasks);
	json_secs(j, "wall_time_total_s", g->wall_total);
	json_secs(j, "wall_time_max_s", g->wall_max);
	json_double(j, "cpu_s", g->cpu, 6);
	json_u64(j, "file_read_bytes", g->rd);
	json_u64(j, "file_write_bytes", g->wr);
	json_u64(j, "peak_rss_kib_max", g->peak);
	json_close_object(j);
}

/* Instances of one Nextflow process, Snakemake rule or task name. */
static void emit_logical_tasks(struct json *j, struct workflow *wf)
{
	struct group *g = xcalloc(wf->ntasks + 1, sizeof(*g));
	struct hmap by_name;
	size_t n = 0;

	hmap_init(&by_name);
	for (size_t t = 0; t < wf->ntasks; t++) {
		const char *name = wf->task[t].group;
		size_t i = hmap_get(&by_name, name, strlen(name));

		if (i == HMAP_NONE) {
			i = n++;
			g[i].name = name;
			hmap_put(&by_name, name, strlen(name), i);
		}
		add_to_group(&g[i], &wf->task[t]);
	}
	json_open_array(j, "logical_tasks");
	for (size_t i = 0; i < n; i++)
		emit_group(j, &g[i]);
	json_close_array(j);
	hmap_release(&by_name);
	free(g);
}

static void emit_warnings(struct json *j, const struct workflow *wf)
{
	json_open_object(j, "warnings");
	json_u64(j, "count", wf->warnings);
	json_open_array(j, "messages");
	for (size_t i = 0; i < wf->nwarning_kept; i++)
		json_str(j, NULL, wf->warning[i]);
	json_close_array(j);
	json_close_object(j);
}

int emit_json(int fd, struct workflow *wf, const struct analysis *an)
{
	struct out o = { .fd = fd };

	sb_init(&o.sb, 64u << 20);
	json_init(&o.j, &o.sb);
	json_open_object(&o.j, NULL);
	json_str(&o.j, "schema", "iowrap-report/1");
	json_str(&o.j, "iowrap_version", IOWRAP_VERSION);
	emit_workflow(&o.j, wf, an);
	emit_tasks(&o, wf, an);
	emit_logical_tasks(&o.j, wf);
	emit_files(&o, wf, an);
	emit_data_flow(&o, an);
	out_flush(&o);
	emit_wcp(&o, wf, an);
	emit_accesses(&o, an);
	emit_warnings(&o.j, wf);
	json_close_object(&o.j);
	out_flush(&o);
	sb_release(&o.sb);
	return o.err;
}
