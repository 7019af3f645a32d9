// SPDX-License-Identifier: MIT
#include "summary.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

/* Unknown I/O is counted as such, not as zero. */
static void add_io(struct tree_totals *t, const struct proc_record *rec)
{
	const struct proc_usage *u = &rec->usage;

	if (!u->io_known) {
		t->processes_io_unknown++;
		return;
	}
	t->rchar += u->rchar;
	t->wchar += u->wchar;
	t->syscr += u->syscr;
	t->syscw += u->syscw;
	t->read_bytes += u->read_bytes;
	t->write_bytes += u->write_bytes;
	t->cancelled_write_bytes += u->cancelled_write_bytes;
}

void totals_add(struct tree_totals *t, const struct proc_record *rec)
{
	const struct proc_usage *u = &rec->usage;

	t->processes++;
	t->execs += rec->execs;
	t->threads += u->threads;
	if (!u->measured) {
		t->processes_unmeasured++;
		return;
	}
	t->cpu_ns += u->cpu_ns;
	t->utime_us += u->utime_us;
	t->stime_us += u->stime_us;
	if (u->vmhwm_kib > t->peak_rss_kib) {
		t->peak_rss_kib = u->vmhwm_kib;
		t->peak_rss_pid = rec->pid;
	}
	if (u->vmpeak_kib > t->peak_vm_kib)
		t->peak_vm_kib = u->vmpeak_kib;
	add_io(t, rec);
	t->ctxt_voluntary += u->ctxt_voluntary;
	t->ctxt_involuntary += u->ctxt_involuntary;
	t->minflt += u->minflt;
	t->majflt += u->majflt;
}

static void format_exit(struct json *j, const struct run_summary *s)
{
	json_open_object(j, "exit");
	if (s->exit_known && !s->exit_signal)
		json_i64(j, "code", s->exit_code);
	else
		json_null(j, "code");
	if (s->exit_known && s->exit_signal) {
		json_i64(j, "signal", s->exit_signal);
		json_str(j, "signal_name", signal_name(s->exit_signal));
		json_bool(j, "core_dumped", s->core_dumped);
	} else {
		json_null(j, "signal");
	}
	/* Unknown (< 0): the task ran in iowrap's place (cmd/run.c). */
	if (s->iowrap_status < 0)
		json_null(j, "iowrap_status");
	else
		json_i64(j, "iowrap_status", s->iowrap_status);
	json_str(j, "exec_error", s->exec_error);
	json_close_object(j);
}

static void format_tracing(struct json *j, const struct run_summary *s,
			   char *const *problems)
{
	bool complete = s->untraced_reason == NULL && !problems[0] &&
			s->totals.processes_unmeasured == 0 &&
			s->totals.processes_io_unknown == 0 &&
			s->orphans_detached == 0;

	json_open_object(j, "tracing");
	json_str(j, "mode", s->mode);
	json_str(j, "level", s->level);
	json_bool(j, "no_new_privs", s->no_new_privs);
	json_str(j, "untraced_reason", s->untraced_reason);
	json_bool(j, "complete", complete);
	json_bool(j, "wait_orphans", s->wait_orphans);
	json_u64(j, "orphans_detached", s->orphans_detached);
	if (s->orphan_timeout_s >= 0)
		json_i64(j, "orphan_timeout_s", s->orphan_timeout_s);
	else
		json_null(j, "orphan_timeout_s");
	json_u64(j, "orphans_terminated", s->orphans_terminated);
	json_u64(j, "orphans_killed", s->orphans_killed);
	json_u64(j, "syscall_stops", s->syscall_stops);
	json_u64(j, "unknown_syscalls", s->unknown_syscalls);
	json_bool(j, "used_io_uring", s->used_io_uring);
	json_bool(j, "used_linux_aio", s->used_linux_aio);
	json_bool(j, "fd_scoped", s->fd_scoped);
	json_u64(j, "fd_filters", s->fd_filters);
	json_open_object(j, "cpu_follow");
	json_str(j, "how", s->follow_how ? s->follow_how : "off");
	json_u64(j, "phases", s->follow_phases);
	json_u64(j, "starved", s->follow_starved);
	json_u64(j, "moves", s->follow_moves);
	json_close_object(j);
	json_u64(j, "tracer_threads", s->tracer_threads);
	json_str(j, "handover", s->handover);
	json_u64(j, "handoffs", s->handoffs);
	json_u64(j, "holds_expired", s->holds_expired);
	json_u64(j, "processes_unmeasured", s->totals.processes_unmeasured);
	json_u64(j, "processes_io_unknown", s->totals.processes_io_unknown);
	json_open_array(j, "problems");
	for (size_t i = 0; problems[i]; i++)
		json_str(j, NULL, problems[i]);
	json_close_array(j);
	json_close_object(j);
}

static void format_totals(struct json *j, const struct run_summary *s)
{
	const struct tree_totals *t = &s->totals;

	json_open_object(j, "totals");
	json_str(j, "source", s->totals_source);
	json_double(j, "cpu_user_s", (double)t->utime_us / 1e6, 6);
	json_double(j, "cpu_system_s", (double)t->stime_us / 1e6, 6);
	json_double(j, "cpu_total_s", (double)t->cpu_ns / 1e9, 9);
	json_u64(j, "peak_rss_kib", t->peak_rss_kib);
	if (t->peak_rss_pid)
		json_i64(j, "peak_rss_pid", t->peak_rss_pid);
	else
		json_null(j, "peak_rss_pid");
	json_u64(j, "peak_vm_kib", t->peak_vm_kib);
	json_u64(j, "rchar_bytes", t->rchar);
	json_u64(j, "wchar_bytes", t->wchar);
	json_u64(j, "syscr", t->syscr);
	json_u64(j, "syscw", t->syscw);
	json_u64(j, "read_bytes", t->read_bytes);
	json_u64(j, "write_bytes", t->write_bytes);
	json_u64(j, "cancelled_write_bytes", t->cancelled_write_bytes);
	json_u64(j, "ctxt_voluntary", t->ctxt_voluntary);
	json_u64(j, "ctxt_involuntary", t->ctxt_involuntary);
	json_u64(j, "minflt", t->minflt);
	json_u64(j, "majflt", t->majflt);
	json_u64(j, "processes", t->processes);
	json_u64(j, "processes_max_concurrent", t->processes_max_concurrent);
	json_u64(j, "threads", t->threads);
	json_u64(j, "execs", t->execs);
	json_close_object(j);
}

static void format_host(struct json *j, const struct host_info *h)
{
	json_open_object(j, "host");
	json_str(j, "hostname", h->hostname);
	json_str(j, "kernel", h->kernel);
	json_str(j, "kernel_version", h->kernel_version);
	json_str(j, "arch", h->arch);
	if (h->boot_id[0])
		json_str(j, "boot_id", h->boot_id);
	json_i64(j, "cpus_online", h->cpus_online);
	json_u64(j, "memory_bytes", h->memory_bytes);
	json_open_array(j, "load_avg_1_5_15m");
	for (int i = 0; i < 3; i++)
		json_double(j, NULL, h->load[i], 2);
	json_close_array(j);
	json_close_object(j);
}

static void format_context(struct json *j, const struct task_context *c)
{
	json_open_object(j, "cgroup");
	if (c->cgroup.version) {
		json_i64(j, "version", c->cgroup.version);
		json_str(j, "path", c->cgroup.path);
		if (c->cgroup.version == 1)
			json_str(j, "controller", c->cgroup.controller);
	} else {
		json_null(j, "version");
		json_null(j, "path");
	}
	if (c->cgroup_id)
		json_u64(j, "id", c->cgroup_id);
	else
		json_null(j, "id");
	json_close_object(j);
	json_open_object(j, "container");
	json_str(j, "id", c->container_source ? c->container_id : NULL);
	json_str(j, "source", c->container_source);
	json_close_object(j);
}

static void format_iowrap(struct json *j, const struct run_summary *s)
{
	json_open_object(j, "iowrap");
	json_str(j, "version", IOWRAP_VERSION);
	json_open_object(j, "options");
	for (size_t i = 0; i < s->noptions; i++) {
		const struct option_value *o = &s->options[i];

		if (o->flag >= 0)
			json_bool(j, o->name, o->flag);
		else
			json_str(j, o->name, o->value);
	}
	json_close_object(j);
	json_close_object(j);
}

static void format_rw(struct json *j, const char *key,
		      const struct rw_stats *rw)
{
	json_open_object(j, key);
	json_u64(j, "ops", rw->ops);
	json_u64(j, "bytes", rw->bytes);
	json_double(j, "time_s", (double)rw->time_us / 1e6, 6);
	if (rw->pos.max_byte >= 0)
		json_i64(j, "max_byte", rw->pos.max_byte);
	if (rw->first_us >= 0) {
		json_time(j, "first_time_s", rw->first_us);
		json_time(j, "last_time_s", rw->last_us);
	}
	if (rw->max_time_us >= 0) {
		json_double(j, "max_time_s", (double)rw->max_time_us / 1e6, 6);
		json_u64(j, "max_time_size", rw->max_time_size);
	}
	json_u64(j, "consecutive", rw->pos.consec);
	json_u64(j, "sequential", rw->pos.seq);
	json_open_object(j, "size_buckets");
	for (int i = 0; i < IOSTATS_SIZE_BUCKETS; i++)
		json_u64(j, iostats_bucket_names[i], rw->size_bucket[i]);
	json_close_object(j);
	json_close_object(j);
}

/* The n most common values as [{key: value, "count": n}, ...]. */
static void format_top(struct json *j, const char *name, const char *key,
		       const struct size_count *top, size_t ntop)
{
	json_open_array(j, name);
	for (size_t i = 0; i < ntop; i++) {
		json_open_object(j, NULL);
		json_u64(j, key, top[i].size);
		json_u64(j, "count", top[i].count);
		json_close_object(j);
	}
	json_close_array(j);
}

/* A time of the file's, left out when it never happened. */
static void format_file_time(struct json *j, const char *key, int64_t us)
{
	if (us >= 0)
		json_time(j, key, us);
}

static void format_file_entry(struct json *j, const struct file_entry *e,
			      const struct file_stats *f)
{
	struct size_count top[4];

	json_open_object(j, NULL);
	json_u64(j, "inode", e->id);
	json_str(j, "path", e->path);
	json_str(j, "mount_point", e->mount_point);
	json_str(j, "fstype", e->fstype);
	if (f) {
		json_u64(j, "opens", f->opens);
		json_u64(j, "stats", f->stats);
		json_u64(j, "seeks", f->seeks);
		json_u64(j, "fsyncs", f->fsyncs);
		json_u64(j, "mmaps", f->mmaps);
		json_u64(j, "rw_switches", f->rw_switches);
		json_double(j, "meta_time_s", (double)f->meta_time_us / 1e6, 6);
		format_file_time(j, "first_open_time_s", f->first_open_us);
		format_file_time(j, "last_open_time_s", f->last_open_us);
		format_file_time(j, "first_close_time_s", f->first_close_us);
		format_file_time(j, "last_close_time_s", f->last_close_us);
		format_rw(j, "read", file_reads(f));
		format_rw(j, "write", file_writes(f));
		format_top(j, "common_access_sizes", "size", top,
			   iostats_top_sizes(f, top, 4));
		format_top(j, "common_strides", "stride", top,
			   iostats_top_strides(f, top, 4));
	}
	json_close_object(j);
}

/* log2 buckets that hold anything: [2^k, 2^(k+1)) bytes. */
static void format_histogram(struct json *j, const char *key,
			     const struct rw_stats *rw)
{
	json_open_array(j, key);
	for (uint32_t i = 0; i < rw->log2.n; i++) {
		const struct log2_bin *b = &rw->log2.bins[i];

		json_open_object(j, NULL);
		json_u64(j, "log2_size", b->bucket);
		json_u64(j, "count", b->count);
		json_double(j, "time_s", (double)b->time_us / 1e6, 6);
		json_close_object(j);
	}
	json_close_array(j);
}

static void format_mount(struct json *j, const struct mount_stats *m)
{
	json_open_object(j, NULL);
	json_str(j, "mount_point", m->mount_point);
	json_str(j, "fstype", m->fstype);
	json_u64(j, "files", m->files);
	json_u64(j, "opens", m->opens);
	json_u64(j, "stats", m->stats);
	json_u64(j, "reads", m->read.ops);
	json_u64(j, "writes", m->write.ops);
	json_u64(j, "bytes_read", m->read.bytes);
	json_u64(j, "bytes_written", m->write.bytes);
	json_double(j, "read_time_s", (double)m->read.time_us / 1e6, 6);
	json_double(j, "write_time_s", (double)m->write.time_us / 1e6, 6);
	json_double(j, "meta_time_s", (double)m->meta_time_us / 1e6, 6);
	format_histogram(j, "read_sizes", &m->read);
	format_histogram(j, "write_sizes", &m->write);
	json_close_object(j);
}

/* How busy a file was: bytes moved, then operations. */
struct file_rank {
	uint64_t bytes, ops;
	size_t index; /* in io->files */
};

static int busier_first(const void *a, const void *b)
{
	const struct file_rank *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->ops != y->ops)
		return x->ops > y->ops ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static struct file_rank rank_of(const struct io_summary *io, size_t i)
{
	const struct file_stats *f = iostats_file(&io->stats, io->files[i].id);
	struct file_rank r = { .index = i };

	if (f) {
		const struct rw_stats *rd = file_reads(f), *wr = file_writes(f);

		r.bytes = rd->bytes + wr->bytes;
		r.ops = f->opens + f->stats + rd->ops + wr->ops;
	}
	return r;
}

/* The max busiest files, busiest first: a task that touched 100,000
 * files would make summary.json hundreds of MiB. */
static void format_files(struct json *j, const struct io_summary *io,
			 size_t max)
{
	struct file_rank *rank = xcalloc(io->nfiles + 1, sizeof(*rank));
	size_t n = io->nfiles < max ? io->nfiles : max;

	for (size_t i = 0; i < io->nfiles; i++)
		rank[i] = rank_of(io, i);
	sort_array(rank, io->nfiles, sizeof(*rank), busier_first);
	json_u64(j, "files_total", io->nfiles);
	json_u64(j, "files_listed", n);
	json_open_array(j, "files");
	for (size_t i = 0; i < n; i++)
		format_file_entry(j, &io->files[rank[i].index],
				  iostats_file(&io->stats,
					       io->files[rank[i].index].id));
	json_close_array(j);
	free(rank);
}

static void format_io(struct json *j, const struct io_summary *io,
		      size_t files_max)
{
	json_open_array(j, "mounts");
	for (size_t i = 0; i < io->nmounts; i++)
		format_mount(j, &io->mounts[i]);
	json_close_array(j);
	format_files(j, io, files_max);
}

void summary_format(struct strbuf *sb, const struct run_summary *s,
		    char *const *problems)
{
	struct json j;

	json_init(&j, sb);
	json_open_object(&j, NULL);
	json_str(&j, "schema", "iowrap-summary/1");
	json_open_array(&j, "command");
	for (size_t i = 0; s->command[i]; i++)
		json_str(&j, NULL, s->command[i]);
	json_close_array(&j);
	/* getcwd fails for a directory removed, or too long */
	json_str(&j, "cwd", s->cwd && s->cwd[0] ? s->cwd : NULL);
	json_time(&j, "start_time_s", s->start_us);
	json_time(&j, "end_time_s", s->end_us);
	json_double(&j, "wall_time_s", (double)(s->end_us - s->start_us) / 1e6,
		    6);
	if (s->task)
		taskid_format(&j, s->task);
	format_exit(&j, s);
	format_tracing(&j, s, problems);
	format_totals(&j, s);
	format_host(&j, s->host);
	format_context(&j, s->context);
	if (s->io && s->io->enabled)
		format_io(&j, s->io, s->files_left_out ? 0 : SUMMARY_FILES_MAX);
	format_iowrap(&j, s);
	json_close_object(&j);
}
