// SPDX-License-Identifier: MIT
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv.h"
#include "util.h"

static const char procs_header[] =
	"time,ppid,pid,cgroupid,cgroup_path,exe,argv,cwd,end_time,end,"
	"exit_code,exit_signal,core_dumped,utime_s,stime_s,cpu_s,"
	"vmhwm_kib,vmpeak_kib,rchar,wchar,syscr,syscw,read_bytes,"
	"write_bytes,cancelled_write_bytes,ctxt_voluntary,ctxt_involuntary,"
	"minflt,majflt,threads,execs,untraced_read_bytes,"
	"untraced_write_bytes,exec_read_bytes,spliced_read_bytes,"
	"spliced_write_bytes\n";

void trace_init(struct trace_sink *ts)
{
	memset(ts, 0, sizeof(*ts));
	ts->dir.dirfd = -1;
	ts->procs.fd = -1;
	ts->procs.error = -EBADF;
	ts->io.fd = -1;
	ts->io.error = -EBADF;
	ts->files.fd = -1;
	ts->files.error = -EBADF;
	ts->threads.fd = -1;
	ts->threads.error = -EBADF;
	ts->summary_fd = -1;
	sb_init(&ts->line, 1u << 20);
	io_summary_init(&ts->io_summary);
	ts->problems = xcalloc(1, sizeof(char *));
}

static void add_problem(struct trace_sink *ts, const char *msg)
{
	ts->problems =
		xrealloc(ts->problems, (ts->nproblems + 2) * sizeof(char *));
	ts->problems[ts->nproblems++] = xstrdup(msg);
	ts->problems[ts->nproblems] = NULL;
}

void trace_problem(struct trace_sink *ts, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warnx_line("%s", msg);
	add_problem(ts, msg);
}

/* A detail of a problem already said on stderr: summary.json only. */
static void trace_note(struct trace_sink *ts, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void trace_note(struct trace_sink *ts, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	add_problem(ts, msg);
}

static void open_failed(struct trace_sink *ts, const char *name, int err)
{
	trace_problem(ts,
		      "cannot create %s/%s: %s; the task runs on without it",
		      ts->dir.path, name, strerror(-err));
}

/* Creates one CSV file of the trace and writes its header row. */
static void open_csv(struct trace_sink *ts, struct tracefile *tf,
		     const char *name, const char *header)
{
	struct strbuf sb;
	int err = tf_open(tf, &ts->dir, name);

	if (err) {
		open_failed(ts, name, err);
		return;
	}
	sb_init(&sb, 0);
	sb_adds(&sb, header);
	tf_put(tf, &sb);
	sb_release(&sb);
}

/*
 * summary.json is written under this name and renamed when whole: a
 * reader never sees half of one, and a missing summary.json still means
 * that iowrap did not finish.
 */
static const char summary_part[] = ".summary.json.part";
/*
 * Space taken for it as the trace starts, so that a filesystem the task
 * fills up (or a quota) still takes a summary saying that the trace is
 * incomplete: without its per-file list, a summary is a few KiB.
 */
#define SUMMARY_RESERVE_BYTES (64u << 10)

static void reserve_summary(struct trace_sink *ts)
{
	int fd = outdir_create_file(&ts->dir, summary_part);

	if (fd < 0)
		return; /* tried again at the end, and said then */
	/*
	 * KEEP_SIZE: the file stays empty until then.  A filesystem that
	 * cannot (NFS before 4.2) or has no room left gets no reserve; the
	 * summary is written as it can be.
	 */
	(void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, SUMMARY_RESERVE_BYTES);
	ts->summary_fd = fd;
}

static void start_files(struct trace_sink *ts)
{
	open_csv(ts, &ts->procs, "procs.csv", procs_header);
	reserve_summary(ts);
	ts->last_flush_us = now_monotonic_us();
}

int trace_open(struct trace_sink *ts, const char *dir, bool force,
	       struct strbuf *why)
{
	int err = outdir_create(&ts->dir, dir, force, why);

	if (err)
		return err;
	start_files(ts);
	return 0;
}

int trace_open_unique(struct trace_sink *ts, const char *dir, const char *sub,
		      const char *name, unsigned *attempt, struct strbuf *why)
{
	int err = outdir_create_unique(&ts->dir, dir, sub, name, attempt, why);

	if (err)
		return err;
	start_files(ts);
	return 0;
}

bool trace_has_dir(const struct trace_sink *ts)
{
	return ts->dir.dirfd >= 0;
}

/* The research's column order (Witzke et al., Fig. 2a), then path2. */
static const char io_header[] =
	"time_start,time_end,pid,utime_start,utime_end,stime_start,"
	"stime_end,inode,type,result,handle,offset,size,flags,path,path2\n";

static const char files_header[] =
	"inode,dev,ino,mount_point,fstype,size_first_open,size_last_close,"
	"opens,reads,writes,stats,seeks,fsyncs,mmaps,bytes_read,"
	"bytes_written,max_byte_read,max_byte_written,consec_reads,"
	"consec_writes,seq_reads,seq_writes,rw_switches,"
	"size_read_0_100,size_read_100_1K,size_read_1K_10K,"
	"size_read_10K_100K,size_read_100K_1M,size_read_1M_4M,"
	"size_read_4M_10M,size_read_10M_100M,size_read_100M_1G,"
	"size_read_1G_PLUS,size_write_0_100,size_write_100_1K,"
	"size_write_1K_10K,size_write_10K_100K,size_write_100K_1M,"
	"size_write_1M_4M,size_write_4M_10M,size_write_10M_100M,"
	"size_write_100M_1G,size_write_1G_PLUS,access1_size,access1_count,"
	"access2_size,access2_count,access3_size,access3_count,access4_size,"
	"access4_count,first_read_time,last_read_time,first_write_time,"
	"last_write_time,read_time,write_time,meta_time,first_open_time,"
	"last_open_time,first_close_time,last_close_time,max_read_time,"
	"max_read_time_size,max_write_time,max_write_time_size,"
	"stride1_stride,stride1_count,stride2_stride,stride2_count,"
	"stride3_stride,stride3_count,stride4_stride,stride4_count,npaths,"
	"paths,birth\n";

static const char threads_header[] = "time,pid,tid,end_time\n";

void trace_open_io(struct trace_sink *ts)
{
	if (!trace_has_dir(ts))
		return;
	open_csv(ts, &ts->io, "io.csv", io_header);
	open_csv(ts, &ts->files, "files.csv", files_header);
	open_csv(ts, &ts->threads, "threads.csv", threads_header);
	ts->io_summary.enabled = true;
}

static void add_sep(struct strbuf *sb)
{
	sb_addc(sb, ',');
}

static void add_u64_field(struct strbuf *sb, uint64_t v)
{
	add_sep(sb);
	sb_add_u64(sb, v);
}

static void add_str_field(struct strbuf *sb, const char *s)
{
	add_sep(sb);
	if (s)
		csv_add_str(sb, s);
}

static void add_seconds_field(struct strbuf *sb, uint64_t usec)
{
	add_sep(sb);
	sb_add_time_us(sb, (int64_t)usec);
}

static const char *end_name(enum proc_end end)
{
	switch (end) {
	case PROC_EXITED:
		return "exited";
	case PROC_DETACHED:
		return "detached";
	default:
		return "lost";
	}
}

static void format_end(struct strbuf *sb, const struct proc_record *r)
{
	add_sep(sb);
	if (r->end_us)
		sb_add_time_us(sb, r->end_us);
	add_str_field(sb, end_name(r->end));
	add_sep(sb);
	if (r->end == PROC_EXITED && !r->exit_signal)
		sb_add_i64(sb, r->exit_code);
	add_sep(sb);
	if (r->end == PROC_EXITED && r->exit_signal)
		sb_add_i64(sb, r->exit_signal);
	add_u64_field(sb, r->core_dumped);
}

/* n fields of v, or as many empty ones: unknown, never a misleading 0. */
static void add_u64_fields(struct strbuf *sb, const uint64_t *v, size_t n,
			   bool known)
{
	for (size_t i = 0; i < n; i++) {
		if (known)
			add_u64_field(sb, v[i]);
		else
			add_sep(sb);
	}
}

static void format_usage(struct strbuf *sb, const struct proc_usage *u)
{
	const uint64_t memory[] = { u->vmhwm_kib, u->vmpeak_kib };
	/* /proc/PID/io's, which may be unreadable where the rest is not */
	const uint64_t io[] = { u->rchar,
				u->wchar,
				u->syscr,
				u->syscw,
				u->read_bytes,
				u->write_bytes,
				u->cancelled_write_bytes };
	const uint64_t counts[] = { u->ctxt_voluntary, u->ctxt_involuntary,
				    u->minflt, u->majflt };

	if (u->measured) {
		add_seconds_field(sb, u->utime_us);
		add_seconds_field(sb, u->stime_us);
		add_sep(sb);
		sb_add_u64(sb, u->cpu_ns / 1000000000);
		sb_addc(sb, '.');
		sb_add_u64_padded(sb, u->cpu_ns % 1000000000, 9);
	} else {
		for (int i = 0; i < 3; i++)
			add_sep(sb);
	}
	add_u64_fields(sb, memory, ARRAY_SIZE(memory), u->measured);
	add_u64_fields(sb, io, ARRAY_SIZE(io), u->measured && u->io_known);
	add_u64_fields(sb, counts, ARRAY_SIZE(counts), u->measured);
}

static void format_proc(struct strbuf *sb, const struct proc_record *r)
{
	const struct proc_usage *u = &r->usage;
	const uint64_t untraced[] = { u->untraced_read_bytes,
				      u->untraced_write_bytes,
				      u->exec_read_bytes, u->spliced_read_bytes,
				      u->spliced_write_bytes };

	sb_reset(sb);
	sb_add_time_us(sb, r->start_us);
	add_sep(sb);
	sb_add_i64(sb, r->ppid);
	add_sep(sb);
	sb_add_i64(sb, r->pid);
	add_sep(sb);
	if (r->cgroup_id)
		sb_add_u64(sb, r->cgroup_id);
	add_str_field(sb, r->cgroup_path);
	add_str_field(sb, r->exe);
	add_str_field(sb, r->argv);
	add_str_field(sb, r->cwd);
	format_end(sb, r);
	format_usage(sb, &r->usage);
	add_u64_field(sb, r->usage.threads);
	add_u64_field(sb, r->execs);
	/* Known from rchar and wchar at the exit stop only. */
	add_u64_fields(sb, untraced, ARRAY_SIZE(untraced),
		       u->io_traced && u->measured && u->io_known);
	sb_addc(sb, '\n');
}

/* Says it the moment a file stops taking data, once. */
static void check_write_error(struct trace_sink *ts, struct tracefile *tf)
{
	/* name is NULL for a file that was never opened (io.csv at the
	 * summary level): not an error. */
	if (!tf->name || !tf->error || tf->error_reported)
		return;
	tf->error_reported = true;
	/* A full filesystem fails every file in turn: said once. */
	if (ts->write_error_said) {
		trace_note(ts, "writing %s/%s failed: %s", ts->dir.path,
			   tf->name, strerror(-tf->error));
		return;
	}
	ts->write_error_said = true;
	trace_problem(
		ts,
		"writing %s/%s failed: %s; the task goes on, its trace is incomplete",
		ts->dir.path, tf->name, strerror(-tf->error));
}

/* Writes the formatted line to tf. */
static void put_line(struct trace_sink *ts, struct tracefile *tf)
{
	tf_put(tf, &ts->line);
	check_write_error(ts, tf);
}

void trace_proc(struct trace_sink *ts, const struct proc_record *rec)
{
	totals_add(&ts->totals, rec);
	if (ts->procs.fd < 0)
		return;
	format_proc(&ts->line, rec);
	put_line(ts, &ts->procs);
}

static void format_io(struct strbuf *sb, const struct io_event *ev)
{
	sb_reset(sb);
	sb_add_time_us(sb, ev->start_us);
	add_sep(sb);
	sb_add_time_us(sb, ev->end_us);
	add_sep(sb);
	sb_add_i64(sb, ev->pid);
	add_seconds_field(sb, ev->utime_start_us);
	add_seconds_field(sb, ev->utime_end_us);
	add_seconds_field(sb, ev->stime_start_us);
	add_seconds_field(sb, ev->stime_end_us);
	add_u64_field(sb, ev->inode_id);
	add_sep(sb);
	sb_addc(sb, ev->type);
	add_sep(sb);
	sb_add_i64(sb, ev->result);
	add_u64_field(sb, ev->handle_id);
	add_sep(sb);
	sb_add_i64(sb, ev->offset);
	add_u64_field(sb, ev->size);
	add_sep(sb);
	sb_add_hex32(sb, ev->flags);
	add_str_field(sb, ev->path);
	add_str_field(sb, ev->path2);
	sb_addc(sb, '\n');
}

void trace_io(struct trace_sink *ts, const struct io_event *ev)
{
	iostats_add(&ts->io_summary.stats, ev);
	if (ts->io.fd < 0)
		return;
	format_io(&ts->line, ev);
	put_line(ts, &ts->io);
}

static void add_size_field(struct strbuf *sb, int64_t size)
{
	add_sep(sb);
	if (size >= 0)
		sb_add_i64(sb, size);
}

static void add_time_field(struct strbuf *sb, int64_t usec)
{
	add_sep(sb);
	if (usec >= 0)
		sb_add_time_us(sb, usec);
}

/* Four value,count pairs; the ones past ntop empty and 0. */
static void add_top_fields(struct strbuf *sb, const struct size_count *top,
			   size_t ntop)
{
	for (size_t i = 0; i < 4; i++) {
		add_sep(sb);
		if (i < ntop)
			sb_add_u64(sb, top[i].size);
		add_u64_field(sb, i < ntop ? top[i].count : 0);
	}
}

/* The slowest access's latency in seconds and its size: empty if none. */
static void add_slowest_fields(struct strbuf *sb, const struct rw_stats *rw)
{
	add_sep(sb);
	if (rw->max_time_us >= 0)
		sb_add_time_us(sb, rw->max_time_us);
	add_sep(sb);
	if (rw->max_time_us >= 0)
		sb_add_u64(sb, rw->max_time_size);
}

/* Darshan's POSIX counters of one file (docs/trace-format.md). */
static void format_file_stats(struct strbuf *sb, const struct file_stats *f)
{
	static const struct file_stats none = {
		.first_open_us = -1,
		.last_open_us = -1,
		.first_close_us = -1,
		.last_close_us = -1,
	};
	const struct rw_stats *rd, *wr;
	struct size_count top[4];

	if (!f)
		f = &none;
	rd = file_reads(f);
	wr = file_writes(f);
	add_u64_field(sb, f->opens);
	add_u64_field(sb, rd->ops);
	add_u64_field(sb, wr->ops);
	add_u64_field(sb, f->stats);
	add_u64_field(sb, f->seeks);
	add_u64_field(sb, f->fsyncs);
	add_u64_field(sb, f->mmaps);
	add_u64_field(sb, rd->bytes);
	add_u64_field(sb, wr->bytes);
	add_size_field(sb, rd->pos.max_byte);
	add_size_field(sb, wr->pos.max_byte);
	add_u64_field(sb, rd->pos.consec);
	add_u64_field(sb, wr->pos.consec);
	add_u64_field(sb, rd->pos.seq);
	add_u64_field(sb, wr->pos.seq);
	add_u64_field(sb, f->rw_switches);
	for (int i = 0; i < IOSTATS_SIZE_BUCKETS; i++)
		add_u64_field(sb, rd->size_bucket[i]);
	for (int i = 0; i < IOSTATS_SIZE_BUCKETS; i++)
		add_u64_field(sb, wr->size_bucket[i]);
	add_top_fields(sb, top, iostats_top_sizes(f, top, 4));
	add_time_field(sb, rd->first_us);
	add_time_field(sb, rd->last_us);
	add_time_field(sb, wr->first_us);
	add_time_field(sb, wr->last_us);
	add_seconds_field(sb, rd->time_us);
	add_seconds_field(sb, wr->time_us);
	add_seconds_field(sb, f->meta_time_us);
	add_time_field(sb, f->first_open_us);
	add_time_field(sb, f->last_open_us);
	add_time_field(sb, f->first_close_us);
	add_time_field(sb, f->last_close_us);
	add_slowest_fields(sb, rd);
	add_slowest_fields(sb, wr);
	add_top_fields(sb, top, iostats_top_strides(f, top, 4));
}

/* A birth time in seconds with its nine digits of nanoseconds: the
 * report joins files by it, so no digit is rounded away.  Empty: none. */
static void add_birth_field(struct strbuf *sb, uint64_t ns)
{
	add_sep(sb);
	if (ns)
		sb_addf(sb, "%llu.%09llu",
			(unsigned long long)(ns / 1000000000u),
			(unsigned long long)(ns % 1000000000u));
}

static void format_file(struct strbuf *sb, const struct file_record *rec,
			const struct file_stats *f)
{
	sb_reset(sb);
	sb_add_u64(sb, rec->inode_id);
	add_sep(sb);
	sb_addf(sb, "%llu:%llu", (unsigned long long)rec->dev_major,
		(unsigned long long)rec->dev_minor);
	add_u64_field(sb, rec->ino);
	add_str_field(sb, rec->mount_point);
	add_str_field(sb, rec->fstype);
	add_size_field(sb, rec->size_first_open);
	add_size_field(sb, rec->size_last_close);
	format_file_stats(sb, f);
	add_u64_field(sb, rec->npaths);
	add_str_field(sb, rec->paths);
	add_birth_field(sb, rec->birth_ns);
	sb_addc(sb, '\n');
}

void trace_file(struct trace_sink *ts, const struct file_record *rec)
{
	io_summary_add_file(&ts->io_summary, rec);
	if (ts->files.fd < 0)
		return;
	format_file(&ts->line, rec,
		    iostats_file(&ts->io_summary.stats, rec->inode_id));
	put_line(ts, &ts->files);
}

void trace_thread(struct trace_sink *ts, const struct thread_record *rec)
{
	if (ts->threads.fd < 0)
		return;
	sb_reset(&ts->line);
	sb_add_time_us(&ts->line, rec->start_us);
	add_u64_field(&ts->line, (uint64_t)rec->pid);
	add_u64_field(&ts->line, (uint64_t)rec->tid);
	add_time_field(&ts->line, rec->end_us);
	sb_addc(&ts->line, '\n');
	put_line(ts, &ts->threads);
}

void trace_tick(struct trace_sink *ts)
{
	int64_t now = now_monotonic_us();

	if (now - ts->last_flush_us < 1000000)
		return;
	ts->last_flush_us = now;
	if (ts->procs.fd >= 0)
		tf_flush(&ts->procs);
	if (ts->io.fd >= 0)
		tf_flush(&ts->io);
	if (ts->threads.fd >= 0)
		tf_flush(&ts->threads);
	check_write_error(ts, &ts->procs);
	check_write_error(ts, &ts->io);
	check_write_error(ts, &ts->threads);
}

static void close_file(struct trace_sink *ts, struct tracefile *tf)
{
	bool was_open = tf->fd >= 0;

	tf_close(tf);
	if (!was_open)
		return;
	check_write_error(ts, tf);
	if (tf->bytes_lost)
		trace_note(ts, "%s: %llu bytes of trace lost", tf->name,
			   (unsigned long long)tf->bytes_lost);
}

/* summary.json is built in memory: never larger than this. */
#define SUMMARY_MAX_BYTES (64u << 20)

/* The summary in sb; the per-file list goes if it makes it too long. */
static void format_summary(struct trace_sink *ts, struct run_summary *s,
			   struct strbuf *sb)
{
	sb_reset(sb);
	summary_format(sb, s, ts->problems);
	if (sb->truncated && !s->files_left_out) {
		/* Files' paths (up to 64 KiB each) made it too long. */
		trace_problem(ts,
			      "%s/summary.json would exceed %u MiB: its "
			      "per-file list is left out (files.csv has "
			      "every file)",
			      ts->dir.path, SUMMARY_MAX_BYTES >> 20);
		s->files_left_out = true;
		sb_reset(sb);
		summary_format(sb, s, ts->problems);
	}
}

/*
 * sb over the file from its start, cut there: a second try overwrites
 * the blocks the first one (or the reserve) took.  0 or -errno.
 */
static int write_whole(int fd, const struct strbuf *sb)
{
	int err;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	err = write_all(fd, sb->buf, sb->len);
	if (!err && ftruncate(fd, (off_t)sb->len) < 0)
		err = -errno;
	return err;
}

/* Whether a summary that did not fit may fit without its per-file list. */
static bool may_shrink(const struct run_summary *s, int err)
{
	return (err == -ENOSPC || err == -EDQUOT || err == -EFBIG) &&
	       !s->files_left_out && s->io && s->io->nfiles > 0;
}

/* The summary into fd, which it closes; 0 or -errno. */
static int write_content(struct trace_sink *ts, struct run_summary *s, int fd)
{
	struct strbuf sb;
	int err;

	sb_init(&sb, SUMMARY_MAX_BYTES);
	format_summary(ts, s, &sb);
	err = write_whole(fd, &sb);
	if (may_shrink(s, err)) {
		/* A full filesystem or quota: what the reserve holds. */
		trace_problem(ts,
			      "writing %s/summary.json failed: %s; it is "
			      "written again without its per-file list",
			      ts->dir.path, strerror(-err));
		s->files_left_out = true;
		format_summary(ts, s, &sb);
		err = write_whole(fd, &sb);
	}
	if (sb.truncated)
		warnx_line("%s/summary.json is cut at %u MiB: not valid JSON",
			   ts->dir.path, SUMMARY_MAX_BYTES >> 20);
	sb_release(&sb);
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

static void write_summary(struct trace_sink *ts, struct run_summary *s)
{
	int fd = ts->summary_fd;
	int err;

	ts->summary_fd = -1;
	if (fd < 0)
		fd = outdir_create_file(&ts->dir, summary_part);
	if (fd < 0) {
		open_failed(ts, "summary.json", fd);
		return;
	}
	err = write_content(ts, s, fd);
	if (err) {
		warnx_line("writing %s/summary.json failed: %s", ts->dir.path,
			   strerror(-err));
		/* Half a summary is none: the trace reads as unfinished. */
		unlinkat(ts->dir.dirfd, summary_part, 0);
		return;
	}
	err = outdir_publish(&ts->dir, summary_part, "summary.json");
	if (err && outdir_removed(&ts->dir))
		warnx_line("the trace directory %s was removed during the run "
			   "(by the task?): its trace is lost",
			   ts->dir.path);
	else if (err)
		warnx_line("cannot create %s/summary.json: %s; the summary is "
			   "left in %s/%s",
			   ts->dir.path, strerror(-err), ts->dir.path,
			   summary_part);
}

void trace_finish(struct trace_sink *ts, struct run_summary *s)
{
	close_file(ts, &ts->procs);
	close_file(ts, &ts->io);
	close_file(ts, &ts->files);
	close_file(ts, &ts->threads);
	s->io = &ts->io_summary;
	if (trace_has_dir(ts))
		write_summary(ts, s);
	s->io = NULL;
	io_summary_release(&ts->io_summary);
	outdir_close(&ts->dir);
	sb_release(&ts->line);
}
