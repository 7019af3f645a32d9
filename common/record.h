/* SPDX-License-Identifier: MIT */
/*
 * The event model: what a tracer reports and the writers in common/ format.
 * A tracer fills these in; it never formats output itself.
 */
#ifndef IOWRAP_RECORD_H
#define IOWRAP_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Resource usage of one process, read at its threads' exit stops. */
struct proc_usage {
	uint64_t cpu_ns; /* on-CPU time, summed over all threads */
	uint64_t utime_us; /* cpu_ns split by the kernel's user/system ratio */
	uint64_t stime_us;
	uint64_t vmhwm_kib; /* peak resident set size */
	uint64_t vmpeak_kib; /* peak virtual memory size */
	uint64_t rchar, wchar, syscr, syscw;
	uint64_t read_bytes, write_bytes, cancelled_write_bytes;
	uint64_t ctxt_voluntary, ctxt_involuntary;
	uint64_t minflt, majflt;
	/* --level full: bytes read and written through descriptors that are
	 * not traced per operation (pipes, sockets, excluded paths), and the
	 * kernel's reads of the program at exec, which the first includes */
	uint64_t untraced_read_bytes, untraced_write_bytes, exec_read_bytes;
	bool io_traced; /* the three above are known */
	/* the R and W results written to io.csv: what is left of rchar and
	 * wchar went through untraced descriptors */
	uint64_t traced_read_bytes, traced_write_bytes;
	/* those of splice(2), which the kernel counts in neither rchar nor
	 * wchar (sendfile and copy_file_range it counts) */
	uint64_t spliced_read_bytes, spliced_write_bytes;
	uint32_t threads; /* threads the process ever had, the main one too */
	bool measured; /* false: no exit stop was seen (e.g. SIGKILL) */
	/* /proc/PID/io was read: an unprivileged tracer may not read a
	 * process that made itself non-dumpable (ssh, agents) */
	bool io_known;
};

enum proc_end {
	PROC_EXITED, /* exit status known */
	PROC_DETACHED, /* still running when tracing ended */
	PROC_LOST, /* vanished without an exit status reaching us */
};

/*
 * A thread other than its process's first (threads.csv): io.csv's pid
 * column is the id of the thread that made the call, and this row says
 * whose thread that is.
 */
struct thread_record {
	pid_t tid;
	pid_t pid; /* its process (thread group id) */
	int64_t start_us; /* first seen */
	int64_t end_us; /* its exit stop, else when it was last known */
};

struct proc_record {
	pid_t pid;
	pid_t ppid;
	int64_t start_us; /* first seen: the fork, as seen by the tracer */
	int64_t end_us;
	uint64_t cgroup_id; /* cgroup v2 id (directory inode); 0: unknown */
	const char *cgroup_path;
	const char *exe; /* after the last exec */
	const char *argv; /* quoted as common/argv.h describes */
	const char *cwd; /* at exit */
	uint32_t execs;
	enum proc_end end;
	int exit_code; /* valid when end == PROC_EXITED and !exit_signal */
	int exit_signal; /* 0 when it exited normally */
	bool core_dumped;
	struct proc_usage usage;
};

/*
 * One file operation, the research's I/O trace row (Witzke et al.,
 * Fig. 2a).  inode_id and handle_id are ids the tracer assigns: a reused
 * fd or inode number gets a new id.
 */
struct io_event {
	int64_t start_us, end_us;
	pid_t pid;
	/* the thread's user and system CPU time at entry and exit, µs */
	uint64_t utime_start_us, utime_end_us;
	uint64_t stime_start_us, stime_end_us;
	uint64_t inode_id;
	char type; /* O R W C U N S T M X F L: see docs/trace-format.md */
	int64_t result; /* bytes, fd, 0, or -errno */
	uint64_t handle_id;
	int64_t offset; /* the file position the operation used; -1: none */
	uint64_t size; /* bytes asked for */
	uint32_t flags; /* open flags; H: 0 link, IO_SYMLINK symlink */
	const char *path; /* opens, exec, namespace changes; else NULL */
	const char *path2; /* rename and link targets */
};

/* An H row's flags: symlink(2) or symlinkat(2), whose path is the target
 * as written; 0 is a link or linkat.  Bit 0 is no linkat flag
 * (AT_SYMLINK_FOLLOW 0x400, AT_EMPTY_PATH 0x1000), which the row may
 * carry one day. */
#define IO_SYMLINK 0x1

/* One file the task used: a files.csv row, per inode id. */
struct file_record {
	uint64_t inode_id;
	uint64_t dev_major, dev_minor, ino;
	const char *mount_point; /* NULL: not found in mountinfo */
	const char *fstype;
	int64_t size_first_open; /* -1: unknown */
	int64_t size_last_close; /* -1: never closed while traced */
	const char *paths; /* quoted as common/argv.h describes */
	uint32_t npaths;
	uint64_t birth_ns; /* statx's birth time; 0: not kept (birth_kept) */
};

#endif
