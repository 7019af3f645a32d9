/* SPDX-License-Identifier: MIT */
/*
 * Readers of /proc.  The parse_* functions take the file's text and are pure
 * (unit-tested on captured and hostile input); the read_* functions read a
 * live process through a /proc directory fd.
 */
#ifndef IOWRAP_PROCFS_H
#define IOWRAP_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "strbuf.h"

struct proc_stat {
	char state;
	pid_t ppid;
	uint64_t flags; /* the kernel's PF_* flags of the task */
	uint64_t minflt, majflt;
	uint64_t utime_ticks, stime_ticks;
	uint64_t num_threads;
	uint64_t starttime_ticks;
	int processor; /* CPU it last ran on; -1 if the kernel omits it */
};

struct proc_status {
	pid_t tgid, ppid;
	pid_t tracer_pid; /* TracerPid: the tracing thread's tid, or 0 */
	uint64_t vmpeak_kib, vmhwm_kib;
	uint64_t threads;
	uint64_t ctxt_voluntary, ctxt_involuntary;
	bool has_vm; /* kernel threads and zombies have no Vm* lines */
	bool no_new_privs;
	uint64_t seccomp_filters; /* Linux 5.9; 0 before */
	/* SigPnd | ShdPnd: the signals pending for the thread or its
	 * process, bit sig - 1 for sig. */
	uint64_t sig_pending;
	uint64_t sig_blocked; /* SigBlk: the thread's mask */
	uint64_t sig_caught; /* SigCgt: the signals with a handler */
};

struct proc_io {
	uint64_t rchar, wchar, syscr, syscw;
	uint64_t read_bytes, write_bytes, cancelled_write_bytes;
};

struct cgroup_entry {
	int version; /* 2 for the "0::" line, 1 otherwise; 0: none */
	char path[1024]; /* path inside the hierarchy */
	char controller[64]; /* v1: the controller list of the chosen line */
};

int parse_proc_stat(const char *text, struct proc_stat *st);
int parse_proc_status(const char *text, struct proc_status *st);
int parse_proc_io(const char *text, struct proc_io *io);
/* Picks the v2 line if the host has a cgroup2 mount (has_v2), else the v1
 * line of the memory controller, else name=systemd, else the first. */
int parse_proc_cgroup(const char *text, bool has_v2, struct cgroup_entry *cg);
/* Finds a 64-hex-digit container id in cgroup or mountinfo text; with
 * after set, only right after that string (mountinfo also holds the ids of
 * image layers, which are not container ids). */
bool find_container_id(const char *text, const char *after, char id[65]);
/* mountinfo writes space, tab, newline and backslash as \NNN; in and out
 * may be the same buffer. */
void mountinfo_unescape(const char *in, char *out, size_t size);
struct mountinfo_entry {
	uint64_t id; /* the mount's id, as statx's STATX_MNT_ID gives it */
	unsigned major, minor;
	char point[4096]; /* unescaped */
	char fstype[64];
};

/* One line of /proc/PID/mountinfo; 0 or -EINVAL. */
int parse_mountinfo_line(const char *line, size_t len,
			 struct mountinfo_entry *m);
/* The mount point of the cgroup2 filesystem in mountinfo text. */
bool find_cgroup2_mount(const char *mountinfo, char *dir, size_t size);
/* The value of the entry of that type in /proc/PID/auxv's n bytes, of a
 * 64-bit process or a 32-bit one (i386, x32); false if it has none. */
bool find_auxv_entry(const unsigned char *auxv, size_t n, uint64_t type,
		     uint64_t *value);

int proc_open_root(void);
int read_proc_stat(int procfd, pid_t pid, struct proc_stat *st);
/* The same through /proc/PID/stat kept open (pread: fresh at every read;
 * -ESRCH once the process is gone). */
int read_proc_stat_fd(int fd, struct proc_stat *st);
int read_task_status(int procfd, pid_t tgid, pid_t tid, struct proc_status *st);
/*
 * The call thread tid of process pid is in, from /proc/PID/task/TID/
 * syscall: 0 and its number in *nr (-1: stopped outside a call, as a
 * signal-delivery stop), TASK_SYSCALL_RUNNING when the thread is running
 * (the kernel says no more then: it may be in any call or none), or
 * -errno (-ENOENT or -ESRCH: gone; -EINVAL: neither a number nor
 * "running").  The number comes first: a line cut short will do.
 */
#define TASK_SYSCALL_RUNNING 1
int parse_task_syscall(const char *text, long *nr);
int read_task_syscall(int procfd, pid_t pid, pid_t tid, long *nr);
/*
 * A process's CPU clocks (clock_getcpuclockid's; the kernel lets any
 * process read another's): PROF is user plus system time and VIRT user
 * time, both tick-sampled; SCHED is the exact on-CPU time of all its
 * threads, the dead ones included.  No /proc read.
 */
enum process_clock {
	PROCESS_CLOCK_PROF = 0,
	PROCESS_CLOCK_VIRT = 1,
	PROCESS_CLOCK_SCHED = 2
};
int read_process_clock_ns(pid_t pid, enum process_clock which, uint64_t *ns);
/* /proc/PID/io (tid 0): the process's, with its dead threads and the
 * children it reaped; /proc/PID/task/TID/io: that thread's own. */
int read_task_io(int procfd, pid_t pid, pid_t tid, struct proc_io *io);
int read_proc_cgroup(int procfd, pid_t pid, bool has_v2,
		     struct cgroup_entry *cg);
/* readlink of /proc/PID/NAME (exe, cwd) into sb. */
int read_proc_link(int procfd, pid_t pid, const char *name, struct strbuf *sb);
/*
 * /proc/PID/cmdline, quoted as common/argv.h describes, bounded by the
 * caller's buffer (read_file_at's size: one byte is kept for a NUL).  A
 * tracer reads one at every exec: the buffer is the caller's to reuse, as
 * a fresh 64 KiB allocation is an mmap, page faults and a munmap whose TLB
 * flush interrupts the task's CPU.  sb is left as it was if it fails.
 */
int read_proc_cmdline(int procfd, pid_t pid, char *buf, size_t size,
		      struct strbuf *sb);

/*
 * A list of pids separated by spaces or newlines, as /proc/PID/task/TID/
 * children has it, parsed in chunks of any size: fn(pid, arg) for each.
 * A word that is not a pid (not all digits, or above the kernel's limit)
 * is skipped.  pid_list_end() ends the last word.
 */
typedef void (*pid_fn)(pid_t pid, void *arg);
struct pid_list {
	uint32_t value;
	bool in_word, bad;
};
void pid_list_feed(struct pid_list *l, const char *buf, size_t n, pid_fn fn,
		   void *arg);
void pid_list_end(struct pid_list *l, pid_fn fn, void *arg);
/* fn for each process /proc/PID/task/TID/children lists (that thread's
 * children, Linux 3.5 with CONFIG_PROC_CHILDREN): 0 or -errno. */
int read_task_children(int procfd, pid_t pid, pid_t tid, pid_fn fn, void *arg);

/* True when this process's tracer runs the same program file (an iowrap
 * started by a task iowrap traces). */
bool traced_by_same_program(void);

#endif
