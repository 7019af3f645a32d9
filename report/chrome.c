// SPDX-License-Identifier: MIT
/*
 * The traces as Trace Event Format JSON (Chrome's about:tracing format,
 * which Perfetto's UI and trace_processor import): one process track per
 * task, one thread track per process of the task, a complete ("X") event
 * per process lifetime and per io.csv operation.  Streamed: an event is
 * formatted and written per row, so 10 million events cost no memory.
 */
#include "export.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csvin.h"
#include "hmap.h"
#include "json.h"
#include "load.h"
#include "parse.h"
#include "research.h"
#include "util.h"

/* Flush the buffer to the stream once it holds this much. */
#define CHROME_FLUSH_BYTES (256 * 1024)

struct chrome_out {
	FILE *out;
	struct strbuf sb;
	struct strbuf
		label; /* an event's name, reused: no allocation per event */
	bool first; /* no event written yet: no comma before the next */
	bool failed;
	long long events;
};

static void flush_out(struct chrome_out *co)
{
	/* A part cut at the buffer's limit would break the JSON. */
	if (co->sb.truncated) {
		co->failed = true;
		errno = EFBIG;
	} else if (co->sb.len &&
		   fwrite(co->sb.buf, 1, co->sb.len, co->out) != co->sb.len) {
		co->failed = true;
	}
	sb_reset(&co->sb);
}

/* Starts an event object: {"ph":"X","pid":P,"tid":T, */
static void begin_event(struct chrome_out *co, const char *ph, uint64_t pid,
			uint64_t tid)
{
	sb_adds(&co->sb, co->first ? "\n" : ",\n");
	co->first = false;
	sb_adds(&co->sb, "{\"ph\":\"");
	sb_adds(&co->sb, ph);
	sb_adds(&co->sb, "\",\"pid\":");
	sb_add_u64(&co->sb, pid);
	sb_adds(&co->sb, ",\"tid\":");
	sb_add_u64(&co->sb, tid);
}

static void add_key_string(struct strbuf *sb, const char *key, const char *s,
			   size_t len)
{
	sb_addc(sb, ',');
	json_add_string(sb, key, strlen(key));
	sb_addc(sb, ':');
	json_add_string(sb, s, len);
}

static void add_key_i64(struct strbuf *sb, const char *key, int64_t v)
{
	sb_addc(sb, ',');
	json_add_string(sb, key, strlen(key));
	sb_addc(sb, ':');
	if (v < 0) {
		sb_addc(sb, '-');
		sb_add_u64(sb, (uint64_t)0 - (uint64_t)v);
	} else {
		sb_add_u64(sb, (uint64_t)v);
	}
}

static void end_event(struct chrome_out *co)
{
	sb_addc(&co->sb, '}');
	co->events++;
	if (co->sb.len >= CHROME_FLUSH_BYTES)
		flush_out(co);
}

/* A metadata event naming a process (task) or thread (process) track. */
static void name_track(struct chrome_out *co, const char *what, uint64_t pid,
		       uint64_t tid, const char *name)
{
	begin_event(co, "M", pid, tid);
	add_key_string(&co->sb, "name", what, strlen(what));
	sb_adds(&co->sb, ",\"args\":{\"name\":");
	json_add_string(&co->sb, name, strlen(name));
	sb_addc(&co->sb, '}');
	end_event(co);
}

/* Starts the slice of a process's or thread's lifetime on its track. */
static void begin_lifetime(struct chrome_out *co, uint64_t tpid, uint64_t tid,
			   const char *what, int64_t start, int64_t end)
{
	begin_event(co, "X", tpid, tid);
	add_key_string(&co->sb, "name", what, strlen(what));
	add_key_string(&co->sb, "cat", what, strlen(what));
	add_key_i64(&co->sb, "ts", start);
	add_key_i64(&co->sb, "dur", end - start);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/*
 * procs.csv and threads.csv: a thread track per row (a process, or a
 * thread other than its process's first, whose tid io.csv's rows carry),
 * named, and a slice for its lifetime (none for one still running when
 * tracing ended).  Columns: time, end_time, the track's id, and the
 * process's program or the thread's process.
 */
enum { L_TIME, L_END, L_ID, L_OF, L_NCOLS };

struct track_kind {
	const char *file;
	const char *cols[L_NCOLS];
	size_t nrequired;
	const char *what; /* the lifetime slice's name and category */
};

static const struct track_kind process_tracks = { "procs.csv",
						  { "time", "end_time", "pid",
						    "exe" },
						  3,
						  "process" };
/* None for a trace without threads.csv (summary level, older ones). */
static const struct track_kind thread_tracks = { "threads.csv",
						 { "time", "end_time", "tid",
						   "pid" },
						 4,
						 "thread" };

/* A process's track is its program's name, a thread's "thread of PID". */
static void name_row_track(struct chrome_out *co, const struct track_kind *k,
			   struct csv_file *cf, uint64_t tpid, uint64_t id)
{
	const char *of = cell(cf, L_OF);
	char name[64];

	if (k == &thread_tracks) {
		snprintf(name, sizeof(name), "thread of %s", of);
		name_track(co, "thread_name", tpid, id, name);
	} else {
		name_track(co, "thread_name", tpid, id,
			   of[0] ? basename_of(of) : "?");
	}
}

static void export_tracks(struct chrome_out *co, struct workflow *wf,
			  struct task *t, uint64_t tpid, int dirfd,
			  const struct track_kind *k)
{
	struct csv_problems prob = { 0 };
	struct csv_file cf = {
		.wf = wf, .t = t, .name = k->file, .prob = &prob
	};
	int64_t start, end;
	uint64_t id, of;

	if (csv_open(&cf, dirfd, k->cols, L_NCOLS, k->nrequired) < 0)
		return;
	while (csv_row(&cf)) {
		if (!parse_u64(cell(&cf, L_ID), &id) ||
		    !parse_time_us(cell(&cf, L_TIME), &start) ||
		    (k == &thread_tracks && !parse_u64(cell(&cf, L_OF), &of))) {
			bad_row(&cf, "time/pid/tid");
			continue;
		}
		name_row_track(co, k, &cf, tpid, id);
		if (!parse_time_us(cell(&cf, L_END), &end) || end < start)
			continue;
		begin_lifetime(co, tpid, id, k->what, start, end);
		sb_adds(&co->sb, ",\"args\":{");
		json_add_string(&co->sb, k->cols[L_OF], strlen(k->cols[L_OF]));
		sb_addc(&co->sb, ':');
		if (k == &thread_tracks)
			sb_add_u64(&co->sb, of);
		else
			json_add_string(&co->sb, cell(&cf, L_OF),
					cell_len(&cf, L_OF));
		sb_addc(&co->sb, '}');
		end_event(co);
	}
	csv_close(&cf);
}

/* Reads, writes and closes carry no path: they are named after the path
 * their inode id was last opened (or named) under.  Memory grows with
 * files, not with events. */
struct path_names {
	struct hmap inodes; /* inode id -> index in path[] */
	char **path;
	size_t npaths, alloc;
};

static size_t new_name(struct path_names *pn, uint64_t inode)
{
	if (pn->npaths == pn->alloc) {
		pn->alloc = pn->alloc ? pn->alloc * 2 : 64;
		pn->path = xrealloc(pn->path, pn->alloc * sizeof(*pn->path));
	}
	pn->path[pn->npaths] = NULL;
	hmap_put(&pn->inodes, &inode, sizeof(inode), pn->npaths);
	return pn->npaths++;
}

/* The row's path if it has one (remembered for its inode), else the
 * inode's; "" if neither is known. */
static const char *path_of(struct path_names *pn, uint64_t inode,
			   const char *path)
{
	size_t i;

	if (!inode)
		return path;
	i = hmap_get(&pn->inodes, &inode, sizeof(inode));
	if (!path[0])
		return i == HMAP_NONE ? "" : pn->path[i];
	if (i == HMAP_NONE)
		i = new_name(pn, inode);
	if (!pn->path[i] || strcmp(pn->path[i], path) != 0) {
		free(pn->path[i]);
		pn->path[i] = xstrdup(path);
	}
	return pn->path[i];
}

static void path_names_release(struct path_names *pn)
{
	for (size_t i = 0; i < pn->npaths; i++)
		free(pn->path[i]);
	free(pn->path);
	hmap_release(&pn->inodes);
}

enum {
	I_START,
	I_END,
	I_PID,
	I_TYPE,
	I_RESULT,
	I_HANDLE,
	I_OFFSET,
	I_SIZE,
	I_PATH,
	I_INODE,
	I_NCOLS
};
static const char *const io_cols[I_NCOLS] = {
	"time_start", "time_end", "pid",  "type", "result",
	"handle",     "offset",	  "size", "path", "inode",
};

/* The args of an operation: what io.csv says, numbers as numbers; the
 * path is the file's (path_of()). */
static void add_io_args(struct strbuf *sb, struct csv_file *cf,
			const char *path)
{
	static const int numeric[] = { I_RESULT, I_HANDLE, I_OFFSET, I_SIZE };
	int64_t v;

	sb_adds(sb, ",\"args\":{\"path\":");
	json_add_string(sb, path, strlen(path));
	for (size_t i = 0; i < ARRAY_SIZE(numeric); i++)
		if (parse_i64(cell(cf, numeric[i]), &v))
			add_key_i64(sb, io_cols[numeric[i]], v);
	sb_addc(sb, '}');
}

/* "R input.bam": the operation's type and the file's name. */
static void add_op_name(struct chrome_out *co, char type, const char *path)
{
	sb_reset(&co->label);
	sb_addc(&co->label, type);
	sb_addc(&co->label, ' ');
	sb_adds(&co->label, basename_of(path));
	sb_adds(&co->sb, ",\"name\":");
	json_add_string(&co->sb, sb_str(&co->label), co->label.len);
}

static void export_io(struct chrome_out *co, struct workflow *wf,
		      struct task *t, uint64_t tpid, int dirfd)
{
	struct csv_problems prob = { 0 };
	struct csv_file cf = {
		.wf = wf, .t = t, .name = "io.csv", .prob = &prob
	};
	struct path_names names = { .npaths = 0 };
	int64_t start, end;
	uint64_t pid, inode;

	if (csv_open(&cf, dirfd, io_cols, I_NCOLS, 4) < 0)
		return;
	hmap_init(&names.inodes);
	while (csv_row(&cf)) {
		const char *type = cell(&cf, I_TYPE);
		const char *path;

		if (!parse_time_us(cell(&cf, I_START), &start) ||
		    !parse_time_us(cell(&cf, I_END), &end) || end < start ||
		    !parse_u64(cell(&cf, I_PID), &pid) || !type[0] || type[1] ||
		    !opt_u64(&cf, I_INODE, &inode)) {
			bad_row(&cf, "time_start/time_end/pid/type/inode");
			continue;
		}
		path = path_of(&names, inode, cell(&cf, I_PATH));
		begin_event(co, "X", tpid, pid);
		add_op_name(co, type[0], path);
		add_key_string(&co->sb, "cat", type, 1);
		add_key_i64(&co->sb, "ts", start);
		add_key_i64(&co->sb, "dur", end - start);
		add_io_args(&co->sb, &cf, path);
		end_event(co);
	}
	path_names_release(&names);
	csv_close(&cf);
}

/* A trace of the research's tools: no procs.csv, so a thread track is
 * named after its pid. */
struct research_ctx {
	struct chrome_out *co;
	uint64_t tpid;
	struct hmap pids; /* pid -> 0: its track is named */
	struct path_names names;
};

static void research_event(void *ctx, const struct io_row *r)
{
	struct research_ctx *rc = ctx;
	struct chrome_out *co = rc->co;
	const char *path = path_of(&rc->names, r->inode, r->path);
	char tname[32];

	if (hmap_get(&rc->pids, &r->pid, sizeof(r->pid)) == HMAP_NONE) {
		hmap_put(&rc->pids, &r->pid, sizeof(r->pid), 0);
		snprintf(tname, sizeof(tname), "pid %llu",
			 (unsigned long long)r->pid);
		name_track(co, "thread_name", rc->tpid, r->pid, tname);
	}
	begin_event(co, "X", rc->tpid, r->pid);
	add_op_name(co, r->type, path);
	add_key_string(&co->sb, "cat", &r->type, 1);
	add_key_i64(&co->sb, "ts", r->start);
	add_key_i64(&co->sb, "dur", r->end - r->start);
	sb_adds(&co->sb, ",\"args\":{\"path\":");
	json_add_string(&co->sb, path, strlen(path));
	add_key_i64(&co->sb, "offset", r->offset); /* -1 but for R, W */
	add_key_i64(&co->sb, "size", r->size);
	add_key_i64(&co->sb, "result", r->result);
	add_key_i64(&co->sb, "handle", (int64_t)r->handle);
	if (r->mount_root[0])
		add_key_string(&co->sb, "mount_root", r->mount_root,
			       strlen(r->mount_root));
	sb_addc(&co->sb, '}');
	end_event(co);
}

static void export_research(struct chrome_out *co, struct workflow *wf,
			    struct task *t, uint64_t tpid, int dirfd,
			    const char *name)
{
	struct csv_problems prob = { 0 };
	struct research_ctx rc = { .co = co, .tpid = tpid };

	hmap_init(&rc.pids);
	hmap_init(&rc.names.inodes);
	research_scan(wf, t, dirfd, name, &prob, research_event, &rc);
	path_names_release(&rc.names);
	hmap_release(&rc.pids);
}

/* The research's tools wrote it: no io.csv, a Fig. 2a CSV instead. */
static bool research_trace(int dirfd, char *name, size_t size)
{
	struct stat st;

	return fstatat(dirfd, "io.csv", &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	       research_csv_find(dirfd, name, size);
}

static void export_task(struct chrome_out *co, struct workflow *wf,
			struct task *t, uint64_t tpid)
{
	char research[NAME_MAX + 1];
	int dirfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	name_track(co, "process_name", tpid, 0, t->name ? t->name : t->dir);
	if (dirfd < 0)
		return;
	if (research_trace(dirfd, research, sizeof(research))) {
		export_research(co, wf, t, tpid, dirfd, research);
	} else {
		export_tracks(co, wf, t, tpid, dirfd, &process_tracks);
		export_tracks(co, wf, t, tpid, dirfd, &thread_tracks);
		export_io(co, wf, t, tpid, dirfd);
	}
	close(dirfd);
}

long long export_chrome(struct workflow *wf, FILE *out)
{
	struct chrome_out co = { .out = out, .first = true };

	sb_init(&co.sb, 0);
	sb_init(&co.label, 0);
	sb_adds(&co.sb, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
	/* pid 0 means "no process" to some viewers: tasks count from 1. */
	for (size_t i = 0; i < wf->ntasks && !co.failed; i++)
		export_task(&co, wf, &wf->task[i], (uint64_t)i + 1);
	sb_adds(&co.sb, "\n]}\n");
	flush_out(&co);
	sb_release(&co.sb);
	sb_release(&co.label);
	return co.failed ? -1 : co.events;
}
