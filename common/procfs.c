// SPDX-License-Identifier: MIT
#include "procfs.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "argv.h"
#include "util.h"

/* CPU numbers beyond this are garbage, not a CPU (CPU_SETSIZE is 1024). */
#define CPU_FIELD_LIMIT 1024

/* Splits at spaces; returns the number of fields stored. */
static size_t split_fields(char *s, char **field, size_t max)
{
	size_t n = 0;

	while (*s && n < max) {
		while (*s == ' ')
			s++;
		if (!*s || *s == '\n')
			break;
		field[n++] = s;
		while (*s && *s != ' ' && *s != '\n')
			s++;
		if (*s)
			*s++ = '\0';
	}
	return n;
}

static uint64_t field_u64(const char *s)
{
	uint64_t v = 0;

	parse_u64(s, &v);
	return v;
}

int parse_proc_stat(const char *text, struct proc_stat *st)
{
	/* comm may hold spaces and ')': the fields start after the last ')'. */
	const char *paren = strrchr(text, ')');
	char copy[1024];
	char *f[40];
	size_t n;

	memset(st, 0, sizeof(*st));
	if (!paren || paren[1] != ' ')
		return -EINVAL;
	snprintf(copy, sizeof(copy), "%s", paren + 2);
	/* f[0] is field 3 (state) of proc(5). */
	n = split_fields(copy, f, ARRAY_SIZE(f));
	if (n < 20)
		return -EINVAL;
	st->state = f[0][0];
	st->ppid = (pid_t)field_u64(f[1]);
	st->flags = field_u64(f[6]);
	st->minflt = field_u64(f[7]);
	st->majflt = field_u64(f[9]);
	st->utime_ticks = field_u64(f[11]);
	st->stime_ticks = field_u64(f[12]);
	st->num_threads = field_u64(f[17]);
	st->starttime_ticks = field_u64(f[19]);
	/* f[36] is field 39, processor (since Linux 2.2.8). */
	st->processor = n > 36 && field_u64(f[36]) < CPU_FIELD_LIMIT ?
				(int)field_u64(f[36]) :
				-1;
	return 0;
}

/* A key of a "Key:\tvalue" file, with its length. */
struct keyword {
	const char *name;
	size_t len;
};

#define KEYWORD(s)               \
	{                        \
		s, sizeof(s) - 1 \
	}

/*
 * Which of keys the line's key is (-1: none of them, or no "Key:"), and
 * its value past the blanks.  One scan of the line, however many keys:
 * a status file has some 57 lines.
 */
static int keyword_of(const char *line, const struct keyword *keys,
		      size_t nkeys, const char **value)
{
	size_t len = strcspn(line, ":\n");

	if (line[len] != ':')
		return -1;
	for (size_t k = 0; k < nkeys; k++) {
		if (keys[k].len == len &&
		    memcmp(line, keys[k].name, len) == 0) {
			*value = line + len + 1 + strspn(line + len + 1, " \t");
			return (int)k;
		}
	}
	return -1;
}

static const char *next_line(const char *line)
{
	const char *end = strchr(line, '\n');

	return end ? end + 1 : NULL;
}

/* "value kB" -> value. */
static bool u64_value(const char *p, uint64_t *out)
{
	char num[24];
	size_t n = 0;

	while (isdigit((unsigned char)*p) && n < sizeof(num) - 1)
		num[n++] = *p++;
	num[n] = '\0';
	return parse_u64(num, out);
}

static unsigned hex_digit(char c)
{
	return isdigit((unsigned char)c) ?
		       (unsigned)(c - '0') :
		       (unsigned)(tolower((unsigned char)c) - 'a' + 10);
}

/* "0000000000004000" -> 0x4000 (a signal mask); more than 16 digits are
 * not a mask. */
static bool hex64_value(const char *p, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	for (; isxdigit((unsigned char)*p); p++, n++) {
		if (n == 16)
			return false;
		v = v << 4 | hex_digit(*p);
	}
	*out = v;
	return n > 0;
}

enum status_key {
	STATUS_TGID,
	STATUS_PPID,
	STATUS_TRACER_PID,
	STATUS_VMPEAK,
	STATUS_VMHWM,
	STATUS_THREADS,
	STATUS_VOLUNTARY,
	STATUS_NONVOLUNTARY,
	STATUS_NO_NEW_PRIVS,
	STATUS_SECCOMP_FILTERS,
	STATUS_SIGPND,
	STATUS_SHDPND,
	STATUS_SIGBLK,
	STATUS_SIGCGT,
};

static const struct keyword status_keys[] = {
	[STATUS_TGID] = KEYWORD("Tgid"),
	[STATUS_PPID] = KEYWORD("PPid"),
	[STATUS_TRACER_PID] = KEYWORD("TracerPid"),
	[STATUS_VMPEAK] = KEYWORD("VmPeak"),
	[STATUS_VMHWM] = KEYWORD("VmHWM"),
	[STATUS_THREADS] = KEYWORD("Threads"),
	[STATUS_VOLUNTARY] = KEYWORD("voluntary_ctxt_switches"),
	[STATUS_NONVOLUNTARY] = KEYWORD("nonvoluntary_ctxt_switches"),
	[STATUS_NO_NEW_PRIVS] = KEYWORD("NoNewPrivs"),
	[STATUS_SECCOMP_FILTERS] = KEYWORD("Seccomp_filters"),
	[STATUS_SIGPND] = KEYWORD("SigPnd"),
	[STATUS_SHDPND] = KEYWORD("ShdPnd"),
	[STATUS_SIGBLK] = KEYWORD("SigBlk"),
	[STATUS_SIGCGT] = KEYWORD("SigCgt"),
};

int parse_proc_status(const char *text, struct proc_status *st)
{
	uint64_t v[ARRAY_SIZE(status_keys)] = { 0 };
	unsigned seen = 0; /* bit k: status_keys[k]'s line was read */

	for (const char *line = text; line && *line; line = next_line(line)) {
		const char *value;
		int k = keyword_of(line, status_keys, ARRAY_SIZE(status_keys),
				   &value);
		bool mask = k >= STATUS_SIGPND && k <= STATUS_SIGCGT;

		if (k >= 0 && (mask ? hex64_value(value, &v[k]) :
				      u64_value(value, &v[k])))
			seen |= 1u << k;
	}
	memset(st, 0, sizeof(*st));
	st->tgid = (pid_t)v[STATUS_TGID];
	st->ppid = (pid_t)v[STATUS_PPID];
	st->tracer_pid = (pid_t)v[STATUS_TRACER_PID];
	st->vmpeak_kib = v[STATUS_VMPEAK];
	st->vmhwm_kib = v[STATUS_VMHWM];
	/* kernel threads and zombies have no Vm* lines */
	st->has_vm = seen & (1u << STATUS_VMPEAK | 1u << STATUS_VMHWM);
	st->threads = v[STATUS_THREADS];
	st->ctxt_voluntary = v[STATUS_VOLUNTARY];
	st->ctxt_involuntary = v[STATUS_NONVOLUNTARY];
	st->no_new_privs = v[STATUS_NO_NEW_PRIVS] == 1;
	st->seccomp_filters = v[STATUS_SECCOMP_FILTERS];
	st->sig_pending = v[STATUS_SIGPND] | v[STATUS_SHDPND];
	st->sig_blocked = v[STATUS_SIGBLK];
	st->sig_caught = v[STATUS_SIGCGT];
	return seen & 1u << STATUS_TGID ? 0 : -EINVAL;
}

static const struct keyword io_keys[] = {
	KEYWORD("rchar"),
	KEYWORD("wchar"),
	KEYWORD("syscr"),
	KEYWORD("syscw"),
	KEYWORD("read_bytes"),
	KEYWORD("write_bytes"),
	KEYWORD("cancelled_write_bytes"),
};

int parse_proc_io(const char *text, struct proc_io *io)
{
	uint64_t *field[ARRAY_SIZE(io_keys)] = {
		&io->rchar,
		&io->wchar,
		&io->syscr,
		&io->syscw,
		&io->read_bytes,
		&io->write_bytes,
		&io->cancelled_write_bytes,
	};
	int seen = 0;

	memset(io, 0, sizeof(*io));
	for (const char *line = text; line && *line; line = next_line(line)) {
		const char *value;
		int k = keyword_of(line, io_keys, ARRAY_SIZE(io_keys), &value);

		seen += k >= 0 && u64_value(value, field[k]);
	}
	return seen ? 0 : -EINVAL;
}

static void set_entry(struct cgroup_entry *cg, int version,
		      const char *controllers, size_t clen, const char *path,
		      size_t plen)
{
	cg->version = version;
	snprintf(cg->controller, sizeof(cg->controller), "%.*s", (int)clen,
		 controllers);
	snprintf(cg->path, sizeof(cg->path), "%.*s", (int)plen, path);
}

static int v1_rank(const char *ctl, size_t len)
{
	char buf[64];

	snprintf(buf, sizeof(buf), ",%.*s,", (int)len, ctl);
	if (strstr(buf, ",memory,"))
		return 3;
	if (strstr(buf, ",name=systemd,"))
		return 2;
	return 1;
}

int parse_proc_cgroup(const char *text, bool has_v2, struct cgroup_entry *cg)
{
	const char *line = text;
	int best = -1;

	memset(cg, 0, sizeof(*cg));
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':',
					     len - (size_t)(c1 - line) - 1) :
				      NULL;

		if (c2) {
			const char *ctl = c1 + 1;
			size_t clen = (size_t)(c2 - ctl);
			const char *path = c2 + 1;
			size_t plen = len - (size_t)(path - line);
			bool v2 = clen == 0 && c1 - line == 1 && line[0] == '0';
			/* Without a cgroup2 mount the "0::" line is the
			 * choice only on a host that has nothing else. */
			int rank = v2 ? (has_v2 ? 10 : 0) : v1_rank(ctl, clen);

			if (rank > best) {
				best = rank;
				set_entry(cg, v2 ? 2 : 1, ctl, clen, path,
					  plen);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return cg->version ? 0 : -ENOENT;
}

static bool is_hex_run(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) ||
		    isupper((unsigned char)s[i]))
			return false;
	return true;
}

bool find_container_id(const char *text, const char *after, char id[65])
{
	size_t len = strlen(text);
	size_t alen = after ? strlen(after) : 0;

	for (size_t i = alen; i + 64 <= len; i++) {
		bool start =
			after ? memcmp(text + i - alen, after, alen) == 0 :
				i == 0 || !isxdigit((unsigned char)text[i - 1]);
		bool end = i + 64 == len ||
			   !isxdigit((unsigned char)text[i + 64]);

		if (start && end && is_hex_run(text + i, 64)) {
			memcpy(id, text + i, 64);
			id[64] = '\0';
			return true;
		}
	}
	return false;
}

/* mountinfo writes space, tab, newline and backslash as \NNN. */
void mountinfo_unescape(const char *in, char *out, size_t size)
{
	size_t n = 0;

	while (*in && n + 1 < size) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' &&
		    in[2] >= '0' && in[2] <= '7' && in[3] >= '0' &&
		    in[3] <= '7') {
			out[n++] = (char)((in[1] - '0') * 64 +
					  (in[2] - '0') * 8 + (in[3] - '0'));
			in += 4;
		} else {
			out[n++] = *in++;
		}
	}
	out[n] = '\0';
}

int parse_mountinfo_line(const char *line, size_t len,
			 struct mountinfo_entry *m)
{
	char copy[4096];
	char *f[32];
	size_t n;

	snprintf(copy, sizeof(copy), "%.*s", (int)len, line);
	n = split_fields(copy, f, ARRAY_SIZE(f));
	/* id parent maj:min root point opts [optional...] - fstype source */
	if (n < 7 || sscanf(f[2], "%u:%u", &m->major, &m->minor) != 2 ||
	    !parse_u64(f[0], &m->id))
		return -EINVAL;
	for (size_t i = 6; i + 1 < n; i++) {
		if (strcmp(f[i], "-") == 0) {
			mountinfo_unescape(f[4], m->point, sizeof(m->point));
			snprintf(m->fstype, sizeof(m->fstype), "%s", f[i + 1]);
			return 0;
		}
	}
	return -EINVAL;
}

bool find_cgroup2_mount(const char *mountinfo, char *dir, size_t size)
{
	const char *line = mountinfo;
	struct mountinfo_entry m;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (parse_mountinfo_line(line, len, &m) == 0 &&
		    strcmp(m.fstype, "cgroup2") == 0) {
			snprintf(dir, size, "%s", m.point);
			return true;
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

int proc_open_root(void)
{
	return open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* PID/NAME, or PID/task/TID/NAME when tid is not 0, under /proc. */
static void pid_file_path(char path[80], pid_t pid, pid_t tid, const char *name)
{
	if (tid)
		snprintf(path, 80, "%d/task/%d/%s", (int)pid, (int)tid, name);
	else
		snprintf(path, 80, "%d/%s", (int)pid, name);
}

/* Reads /proc/PID/NAME, or /proc/PID/task/TID/NAME when tid is not 0. */
static ssize_t read_pid_file(int procfd, pid_t pid, pid_t tid, const char *name,
			     char *buf, size_t size)
{
	char path[80];

	pid_file_path(path, pid, tid, name);
	return read_file_at(procfd, path, buf, size);
}

int read_proc_stat(int procfd, pid_t pid, struct proc_stat *st)
{
	char buf[1024];
	ssize_t n = read_pid_file(procfd, pid, 0, "stat", buf, sizeof(buf));

	return n < 0 ? (int)n : parse_proc_stat(buf, st);
}

int read_proc_stat_fd(int fd, struct proc_stat *st)
{
	char buf[1024];
	ssize_t n;

	/*
	 * stat is a single-record seq_file: one read from its start returns
	 * all of it, fresh (its 52 fields fit in far less than buf).  One
	 * pread, not a second one to see the end.
	 */
	do
		n = pread(fd, buf, sizeof(buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return parse_proc_stat(buf, st);
}

int read_task_status(int procfd, pid_t pid, pid_t tid, struct proc_status *st)
{
	char buf[4096];
	ssize_t n = read_pid_file(procfd, pid, tid, "status", buf, sizeof(buf));

	return n < 0 ? (int)n : parse_proc_status(buf, st);
}

static bool is_line_end(char c)
{
	return c == '\n' || c == '\0';
}

int parse_task_syscall(const char *text, long *nr)
{
	char *end;
	long n;

	if (!strncmp(text, "running", 7) && is_line_end(text[7]))
		return TASK_SYSCALL_RUNNING;
	errno = 0;
	n = strtol(text, &end, 10);
	if (end == text || errno || !(*end == ' ' || is_line_end(*end)))
		return -EINVAL;
	*nr = n;
	return 0;
}

int read_task_syscall(int procfd, pid_t pid, pid_t tid, long *nr)
{
	/* Its number and six arguments, sp and pc: 64 bytes keep the
	 * number (read_file_at cuts the rest). */
	char buf[64];
	ssize_t n =
		read_pid_file(procfd, pid, tid, "syscall", buf, sizeof(buf));

	return n < 0 ? (int)n : parse_task_syscall(buf, nr);
}

/* include/linux/threads.h: PID_MAX_LIMIT on 64-bit. */
#define PID_LIMIT (4u << 20)

static void end_word(struct pid_list *l, pid_fn fn, void *arg)
{
	if (l->in_word && !l->bad && l->value > 0)
		fn((pid_t)l->value, arg);
	*l = (struct pid_list){ 0 };
}

void pid_list_feed(struct pid_list *l, const char *buf, size_t n, pid_fn fn,
		   void *arg)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == ' ' || c == '\n') {
			end_word(l, fn, arg);
			continue;
		}
		l->in_word = true;
		if (c < '0' || c > '9' || l->value > PID_LIMIT / 10) {
			l->bad = true;
			continue;
		}
		l->value = l->value * 10 + (c - '0');
		l->bad = l->bad || l->value > PID_LIMIT;
	}
}

void pid_list_end(struct pid_list *l, pid_fn fn, void *arg)
{
	end_word(l, fn, arg);
}

int read_task_children(int procfd, pid_t pid, pid_t tid, pid_fn fn, void *arg)
{
	struct pid_list list = { 0 };
	char path[80], buf[1024];
	ssize_t n;
	int fd;

	pid_file_path(path, pid, tid, "children");
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* A seq_file: a word is never cut between two reads, but the
	 * parser does not count on it. */
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return (int)n;
		}
		pid_list_feed(&list, buf, (size_t)n, fn, arg);
	}
	close(fd);
	pid_list_end(&list, fn, arg);
	return 0;
}

int read_process_clock_ns(pid_t pid, enum process_clock which, uint64_t *ns)
{
	clockid_t id = (clockid_t)((~(unsigned)pid << 3) | (unsigned)which);
	struct timespec ts;

	if (clock_gettime(id, &ts) < 0)
		return -errno;
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return 0;
}

int read_task_io(int procfd, pid_t pid, pid_t tid, struct proc_io *io)
{
	char buf[512];
	ssize_t n = read_pid_file(procfd, pid, tid, "io", buf, sizeof(buf));

	return n < 0 ? (int)n : parse_proc_io(buf, io);
}

int read_proc_cgroup(int procfd, pid_t pid, bool has_v2,
		     struct cgroup_entry *cg)
{
	char buf[4096];
	ssize_t n = read_pid_file(procfd, pid, 0, "cgroup", buf, sizeof(buf));

	return n < 0 ? (int)n : parse_proc_cgroup(buf, has_v2, cg);
}

int read_proc_link(int procfd, pid_t pid, const char *name, struct strbuf *sb)
{
	char path[48], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/%s", (int)pid, name);
	n = readlinkat(procfd, path, target, sizeof(target));
	if (n < 0)
		return -errno;
	sb_reset(sb);
	sb_add(sb, target, (size_t)n);
	return 0;
}

int read_proc_cmdline(int procfd, pid_t pid, char *buf, size_t size,
		      struct strbuf *sb)
{
	ssize_t n = read_pid_file(procfd, pid, 0, "cmdline", buf, size);

	if (n < 0)
		return (int)n;
	sb_reset(sb);
	argv_quote_nul_list(sb, buf, (size_t)n);
	return 0;
}

static pid_t tracer_pid(void)
{
	char status[4096];
	struct proc_status st;

	if (read_file_at(AT_FDCWD, "/proc/self/status", status,
			 sizeof(status)) <= 0 ||
	    parse_proc_status(status, &st) < 0)
		return 0;
	return st.tracer_pid;
}

bool traced_by_same_program(void)
{
	char exe[64];
	struct stat mine, its;
	pid_t tracer = tracer_pid();

	if (tracer <= 0)
		return false;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)tracer);
	return stat("/proc/self/exe", &mine) == 0 && stat(exe, &its) == 0 &&
	       mine.st_dev == its.st_dev && mine.st_ino == its.st_ino;
}

/* Types of auxv entries are below this (include/uapi/linux/auxvec.h). */
#define AUXV_MAX_TYPE 4096

/*
 * A 32-bit process's auxv holds 32-bit pairs (compat_binfmt_elf's
 * elf_addr_t): its first pair read as one 64-bit word is then no small
 * type, as x86's first value (AT_SYSINFO, AT_SYSINFO_EHDR, AT_HWCAP...)
 * is never 0.
 */
bool find_auxv_entry(const unsigned char *auxv, size_t n, uint64_t type,
		     uint64_t *value)
{
	uint64_t first;
	size_t word;

	if (n < sizeof(first))
		return false;
	memcpy(&first, auxv, sizeof(first));
	word = first < AUXV_MAX_TYPE ? 8 : 4;
	for (size_t i = 0; i + 2 * word <= n; i += 2 * word) {
		uint64_t t = 0, v = 0;

		memcpy(&t, auxv + i, word);
		memcpy(&v, auxv + i + word, word);
		if (t == 0) /* AT_NULL */
			return false;
		if (t == type) {
			*value = v;
			return true;
		}
	}
	return false;
}
