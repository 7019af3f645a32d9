/* SPDX-License-Identifier: MIT */
/*
 * What the report knows after reading the traces: tasks, and per task the
 * files it touched (task x file), accumulated while io.csv streams past.
 * Memory grows with tasks and files, never with events.
 */
#ifndef IOWRAP_REPORT_MODEL_H
#define IOWRAP_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "access_seq.h"
#include "dirtree.h"
#include "hmap.h"

/* Reads or writes of one task to one file, Darshan-style. */
struct rw_acc {
	uint64_t ops;
	uint64_t bytes;
	uint64_t time_us; /* summed latency */
	int64_t first_us; /* first start; -1: none */
	int64_t last_us; /* last end */
	struct access_seq pos;
};

struct tfile {
	char *path; /* last name (a rename moves it) */
	size_t path_len;
	char *access_path; /* the name at its first open (or read or
			    * write, if earlier), if the task renamed it
			    * after; NULL: path */
	size_t access_path_len;
	char *reached; /* the kernel's name for the file an open through a
			* symbolic link reached (io.csv's path2); NULL: none */
	size_t reached_len;
	uint64_t inode; /* the trace's id; 0 if only known by path */
	/* files.csv's device, inode number and birth time (ns; 0: none,
	 * then no identity): with the task's boot id, the file itself,
	 * whatever names it was given outside the traces (wcp_ident.c). */
	uint64_t dev_major, dev_minor, ino, birth_ns;
	size_t names; /* names in the task's by_path that lead to it */
	char *mount_point;
	char *fstype;
	int64_t size_first_open; /* -1: not known */
	int64_t size_last_close;
	uint64_t opens, stats, other_meta; /* metadata operations */
	uint64_t meta_time_us;
	struct rw_acc rd, wr;
	/* When the task read the version it read: its first read's start,
	 * or, for reads at no position (a FIFO's, which wait for the
	 * writer's write), the end of the first that returned bytes (of the
	 * first read, if none did); -1: no read. */
	int64_t read_at_us;
	int64_t first_access_us; /* first R/W start, -1: none */
	int64_t last_access_us; /* last R/W end */
	int64_t created_us; /* open with O_CREAT|O_TRUNC for writing; -1 */
	int64_t first_open_us; /* first successful open's start; -1 */
	int64_t fresh_us; /* first open with O_TRUNC or O_EXCL for writing */
	int64_t append_us; /* first appending write's start; -1 */
	int64_t unlink_us; /* when the task removed it; -1 */
	int64_t renamed_us; /* when its rename gave it path; -1: none */
	bool appended; /* wrote with O_APPEND or at its old end */
	bool executed; /* exec'd or mapped: a program, not data */
	bool tmpfile; /* opened O_TMPFILE, no name of its own yet */
	/* Its first open for writing kept the data there (O_CREAT, no
	 * O_TRUNC, of a non-empty file): created nothing, unless the task
	 * changed it (a write, or changed_meta). */
	bool kept_data;
	bool changed_meta; /* truncated, fallocated, cloned into, mapped
			    * writable */
	size_t wcp_vertex; /* the version this task wrote; analysis only */
};

/*
 * A name the task gave a file (io.csv's N and H rows): `to` holds from
 * then on what `from` held just before.  Other tasks that use `to` later
 * read what was written as `from` (analysis: wcp.c).  A RENAME_EXCHANGE
 * is two moves of one row (same seq), each from the state before it.
 */
struct name_move {
	int64_t time_us; /* the call's end */
	uint64_t seq; /* the task's io.csv row */
	char *from, *to;
	size_t from_len, to_len;
	size_t tfile; /* the task's record of the file moved; (size_t)-1 */
	bool vacates; /* a plain rename: from holds nothing after it */
	bool carries; /* the record goes from `from` to `to`: a rename, an
		       * exchange's half, an O_TMPFILE file's first name */
	bool swaps; /* an exchange's half: `from` holds what `to` held */
	bool below; /* a name below a renamed directory, moved with it */
	bool link; /* renamed a symbolic link the task made: no file moved,
		    * what leads through `to` is found as it is reached */
};

/* An open's flags: O_TMPFILE's own bit (its O_DIRECTORY is per arch). */
#define IO_O_TMPFILE 020000000

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1) /* renameat2: the two names swap */
#endif

/* Requests of [2^k, 2^(k+1)) bytes, the eBPF paper's log2 buckets. */
struct size_hist {
	uint64_t count[64];
	double time_s[64];
};

struct mount_row {
	char *mount_point;
	char *fstype;
	uint64_t files, opens, stats, reads, writes;
	uint64_t bytes_read, bytes_written;
	double read_time_s, write_time_s, meta_time_s;
	struct size_hist read_sizes, write_sizes;
};

struct csv_problems {
	uint64_t rows; /* data rows read */
	uint64_t skipped; /* rows skipped: bad numbers, wrong column count */
	bool truncated; /* a cut last line was ignored */
	bool missing; /* the file is not there */
};

struct task {
	char *dir; /* the trace directory */
	char *name, *key, *engine, *host, *level;
	char *boot_id; /* host.boot_id; NULL: an older trace */
	char *command; /* argv joined by spaces, for display */
	char *group; /* logical task: Nextflow process, Snakemake rule, name */
	int64_t start_us, end_us; /* -1: not known */
	int64_t exit_code; /* -1: not known or killed */
	int64_t exit_signal;
	bool complete; /* tracing.complete; false also if summary missing */
	bool async_io; /* used io_uring or Linux AIO: writes with no W row */
	bool summary_ok;
	double cpu_s;
	uint64_t peak_rss_kib;
	uint64_t rchar, wchar;
	uint64_t untraced_read, untraced_write; /* pipes, sockets, exec */
	uint64_t processes;
	uint64_t events; /* io.csv rows used */
	uint64_t file_read_bytes, file_write_bytes; /* io.csv R/W results */
	uint64_t data_time_us, meta_time_us;
	struct csv_problems io, files, procs;
	struct tfile *file;
	size_t nfiles, files_alloc;
	struct hmap by_inode, by_path;
	struct dirtree dirs; /* records by their paths' directories */
	size_t moved_below; /* records renamed with their directory */
	struct hmap symlinks; /* names it made symbolic links, still so */
	struct name_move *move; /* in io.csv order */
	size_t nmoves, moves_alloc;
	size_t *file_move, *file_move_first; /* record i's moves, in order:
					      * move[file_move[
					      * file_move_first[i] ..
					      * file_move_first[i + 1]]] */
	struct mount_row *mount;
	size_t nmounts;
};

struct workflow {
	struct task *task;
	size_t ntasks, tasks_alloc;
	uint64_t warnings;
	char **warning; /* the first WORKFLOW_WARNINGS_KEPT messages */
	size_t nwarning_kept;
	bool quiet; /* a second pass: the first one warned already */
};

#define WORKFLOW_WARNINGS_KEPT 200

/* Two names of known lengths are the same. */
static inline bool same_name(const char *a, size_t alen, const char *b,
			     size_t blen)
{
	return alen == blen && !memcmp(a, b, alen);
}

/* A task's own records renamed with their directories, at most: a
 * directory of n files renamed r times is n x r moves, about 13 us and
 * 470 bytes each (docs/report-format.md, "Directories"). */
#define TASK_MOVED_BELOW_MAX (1u << 18)

/* The name path is below the directory dir: dir/... */
static inline bool name_below(const char *path, size_t len, const char *dir,
			      size_t dlen)
{
	return len > dlen + 1 && path[dlen] == '/' && !memcmp(path, dir, dlen);
}

/* A name moves with a renamed directory above it if it is at most this
 * long and deep: each directory above it is looked up by its name. */
#define BELOW_NAME_MAX 4096
#define BELOW_DEPTH_MAX 128

static inline bool moves_with_dir(const char *path, size_t len)
{
	size_t depth = 0;

	if (len > BELOW_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (path[i] == '/' && ++depth > BELOW_DEPTH_MAX)
			return false;
	return true;
}

/* The length of the directory part of path: "/a/b" -> 2; 0: none. */
static inline size_t name_dir_len(const char *path, size_t len)
{
	while (len > 1 && path[len - 1] != '/')
		len--;
	return len > 1 ? len - 1 : 0;
}

static inline int64_t task_wall_us(const struct task *t)
{
	return t->start_us >= 0 && t->end_us >= t->start_us ?
		       t->end_us - t->start_us :
		       0;
}

/* A warning on stderr ("iowrap: report: ...") kept for report.json. */
void workflow_warn(struct workflow *wf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
