// SPDX-License-Identifier: MIT
/*
 * iowrap [run] [OPTIONS] -- COMMAND [ARGS...]: runs the task under the
 * tracer and writes its trace directory.  Whatever happens to the trace,
 * the task runs and iowrap exits with the task's status.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builtin.h"
#include "cliopt.h"
#include "cmdpath.h"
#include "fdfilter.h"
#include "filter.h"
#include "hostinfo.h"
#include "launch.h"
#include "signals.h"
#include "summary.h"
#include "taskid.h"
#include "trace.h"
#include "tracer.h"
#include "util.h"

#define MAX_PREFIXES 64

struct run_options {
	const char *output;
	const char *root;
	const char *task_name;
	struct kv_list labels;
	long spin_us;
	enum follow_how follow_cpu;
	int tracer_threads;
	enum handover handover;
	const char *include[MAX_PREFIXES + 1];
	const char *exclude[MAX_PREFIXES + 1];
	size_t ninclude, nexclude;
	enum trace_level level;
	bool force;
	bool strict;
	bool wait_orphans;
	long orphan_timeout_s; /* -1: wait for the orphans */
	char **command;
};

static const char usage_text[] =
	"usage: iowrap [OPTIONS] -- COMMAND [ARGS...]\n"
	"\n"
	"Runs COMMAND, follows all its processes and threads, and writes a trace\n"
	"directory: procs.csv (one row per process) and summary.json.\n"
	"\n"
	"  -o, --output DIR     trace directory (default: see --root, else\n"
	"                       $IOWRAP_DIR, $IOWRAP_ROOT, a Nextflow task's\n"
	"                       WORKDIR/.iowrap, ./iowrap.HOSTNAME.PID); 0700\n"
	"      --root DIR       write to DIR/HOST/KEY/ (KEY: the task's key,\n"
	"                       -2, -3... if taken); default $IOWRAP_ROOT\n"
	"      --task NAME      the task's name (and key) in summary.json\n"
	"      --label KEY=VALUE  a label in summary.json (repeatable)\n"
	"  -f, --force          reuse a non-empty trace directory\n"
	"  -l, --level LEVEL    summary: processes only (default); files: also\n"
	"                       opens, closes, metadata; full: also every read,\n"
	"                       write, seek and sync (io.csv)\n"
	"      --include PREFIX trace only files under PREFIX (repeatable)\n"
	"      --exclude PREFIX do not trace files under PREFIX (repeatable;\n"
	"                       /proc, /sys and /dev by default); the longest\n"
	"                       prefix decides: --include / --include /dev/shm\n"
	"                       traces /dev/shm too\n"
	"      --spin-us N      poll N us for the next stop before sleeping\n"
	"                       (default 50; 0: always sleep)\n"
	"      --follow-cpu HOW how to keep the tracer on the CPU of a tracee\n"
	"                       that stops often: auto (default: pin_tracee),\n"
	"                       pin_tracee, sched_idle (the task's mask kept;\n"
	"                       pin_tracee where SCHED_IDLE is one-way), off\n"
	"      --no-follow-cpu  the same as --follow-cpu off\n"
	"      --tracer-threads N  trace with N threads (1..16; default: one\n"
	"                       per CPU, at most 8; files and full levels)\n"
	"      --handover WHEN  busy: a new process or thread goes to a tracer\n"
	"                       thread with fewer busy tracees (default);\n"
	"                       always: to the next one in turn; never\n"
	"      --strict         exit 125 instead of running the task untraced\n"
	"                       when ptrace cannot be used\n"
	"      --no-wait-orphans  stop tracing when the main process exits;\n"
	"                       processes left running are detached\n"
	"      --orphan-timeout SECONDS  once the main process has exited,\n"
	"                       end the processes left running after SECONDS\n"
	"                       (SIGTERM, then SIGKILL 2 s later)\n"
	"  -h, --help           this text\n"
	"  -V, --version        the version\n"
	"\n"
	"Exit status: the task's own (128+N if it died of signal N); 125 iowrap\n"
	"failed before the task ran, 126 COMMAND not executable, 127 not found.\n"
	"\n"
	"iowrap tasks DIR... lists the traced tasks under DIR (--help).\n";

static int usage_error(const char *fmt, const char *arg);

/* --orphan-timeout's largest value, a week. */
#define ORPHAN_TIMEOUT_MAX_S 604800

enum {
	OPT_STRICT = 256,
	OPT_NO_WAIT_ORPHANS,
	OPT_ORPHAN_TIMEOUT,
	OPT_NO_FOLLOW_CPU,
	OPT_FOLLOW_CPU,
	OPT_TRACER_THREADS,
	OPT_HANDOVER,
	OPT_INCLUDE,
	OPT_EXCLUDE,
	OPT_SPIN_US,
	OPT_ROOT,
	OPT_TASK,
	OPT_LABEL,
};

/* Paths under /proc, /sys and /dev are not traced unless an --include
 * under them says so (iotrace.c's excluded). */
static const char *const default_exclude[] = { "/proc", "/sys", "/dev" };

static int add_prefix(const char **list, size_t *n, const char *prefix)
{
	if (prefix[0] != '/')
		return usage_error("'%s' is not an absolute path prefix",
				   prefix);
	if (*n >= MAX_PREFIXES)
		return usage_error(
			"%s",
			"too many --include/--exclude prefixes (64 each)");
	list[(*n)++] = prefix;
	list[*n] = NULL;
	return -1;
}

static int usage_error(const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	warnx_line("%s; see iowrap --help", msg);
	return EXIT_IOWRAP_FAILED;
}

static int parse_label(struct run_options *o, const char *arg)
{
	struct strbuf why;
	int status = -1;

	sb_init(&why, 0);
	if (taskid_parse_label(arg, &o->labels, &why) < 0) {
		sb_addf(&why, ", not '%.64s'", arg);
		status = usage_error("%s", sb_str(&why));
	}
	sb_release(&why);
	return status;
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct run_options *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "level", required_argument, NULL, 'l' },
		{ "include", required_argument, NULL, OPT_INCLUDE },
		{ "exclude", required_argument, NULL, OPT_EXCLUDE },
		{ "spin-us", required_argument, NULL, OPT_SPIN_US },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "task", required_argument, NULL, OPT_TASK },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "no-wait-orphans", no_argument, NULL, OPT_NO_WAIT_ORPHANS },
		{ "orphan-timeout", required_argument, NULL,
		  OPT_ORPHAN_TIMEOUT },
		{ "no-follow-cpu", no_argument, NULL, OPT_NO_FOLLOW_CPU },
		{ "follow-cpu", required_argument, NULL, OPT_FOLLOW_CPU },
		{ "tracer-threads", required_argument, NULL,
		  OPT_TRACER_THREADS },
		{ "handover", required_argument, NULL, OPT_HANDOVER },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char msg[320];
	int c;

	memset(o, 0, sizeof(*o));
	o->wait_orphans = true;
	o->orphan_timeout_s = -1;
	o->spin_us = 50;
	o->follow_cpu = FOLLOW_AUTO;
	o->tracer_threads = 0; /* one per CPU (tracer_run) */
	for (size_t i = 0; i < ARRAY_SIZE(default_exclude); i++)
		o->exclude[o->nexclude++] = default_exclude[i];
	/* '+': the first non-option is the command; its options are its own. */
	while ((c = cliopt_next(argc, argv, "+:o:fl:hV", longopts, msg,
				sizeof(msg))) != -1) {
		switch (c) {
		case 'o':
			/* An unset variable, never the working directory:
			 * with -f that would clear the task's own files. */
			if (!*optarg)
				return usage_error("%s",
						   "-o needs a directory");
			o->output = optarg;
			break;
		case 'f':
			o->force = true;
			break;
		case 'l': {
			int level = trace_level_parse(optarg);

			if (level < 0)
				return usage_error(
					"unknown level '%s' (summary, files or full)",
					optarg);
			o->level = (enum trace_level)level;
			break;
		}
		case OPT_STRICT:
			o->strict = true;
			break;
		case OPT_ROOT:
			if (!*optarg)
				return usage_error("%s",
						   "--root needs a directory");
			o->root = optarg;
			break;
		case OPT_TASK:
			if (!*optarg || strlen(optarg) > TASK_VALUE_MAX)
				return usage_error(
					"--task takes a name of 1 to 4096 bytes, not '%.64s'",
					optarg);
			o->task_name = optarg;
			break;
		case OPT_LABEL:
			if (parse_label(o, optarg) >= 0)
				return EXIT_IOWRAP_FAILED;
			break;
		case OPT_SPIN_US: {
			uint64_t us;

			if (!parse_u64(optarg, &us) || us > 100000)
				return usage_error(
					"--spin-us takes microseconds from 0 to 100000, not '%s'",
					optarg);
			o->spin_us = (long)us;
			break;
		}
		case OPT_INCLUDE:
			if (add_prefix(o->include, &o->ninclude, optarg) >= 0)
				return EXIT_IOWRAP_FAILED;
			break;
		case OPT_EXCLUDE:
			if (add_prefix(o->exclude, &o->nexclude, optarg) >= 0)
				return EXIT_IOWRAP_FAILED;
			break;
		case OPT_NO_WAIT_ORPHANS:
			o->wait_orphans = false;
			break;
		case OPT_ORPHAN_TIMEOUT: {
			uint64_t s;

			if (!parse_u64(optarg, &s) || s > ORPHAN_TIMEOUT_MAX_S)
				return usage_error(
					"--orphan-timeout takes seconds from 0 to 604800 (a week), not '%s'",
					optarg);
			o->orphan_timeout_s = (long)s;
			break;
		}
		case OPT_TRACER_THREADS: {
			uint64_t n;

			if (!parse_u64(optarg, &n) || n < 1 ||
			    n > TRACER_MAX_THREADS)
				return usage_error(
					"--tracer-threads takes 1 to 16, not '%s'",
					optarg);
			o->tracer_threads = (int)n;
			break;
		}
		case OPT_HANDOVER: {
			int h = handover_parse(optarg);

			if (h < 0)
				return usage_error(
					"--handover takes busy, always or never, not '%s'",
					optarg);
			o->handover = (enum handover)h;
			break;
		}
		case OPT_NO_FOLLOW_CPU:
			o->follow_cpu = FOLLOW_OFF;
			break;
		case OPT_FOLLOW_CPU: {
			int how = follow_parse(optarg);

			if (how < 0)
				return usage_error(
					"--follow-cpu takes auto, pin_tracee, sched_idle or off, not '%s'",
					optarg);
			o->follow_cpu = (enum follow_how)how;
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("iowrap %s\n", IOWRAP_VERSION);
			return 0;
		default:
			return usage_error("%s", msg);
		}
	}
	if (!o->wait_orphans && o->level != LEVEL_SUMMARY)
		return usage_error(
			"%s",
			"--no-wait-orphans needs --level summary: a seccomp filter outlives its tracer, so detached processes would see their traced syscalls fail");
	if (!o->wait_orphans && o->orphan_timeout_s >= 0)
		return usage_error(
			"%s",
			"--orphan-timeout and --no-wait-orphans exclude each other: the orphans are either ended or left running");
	if (optind >= argc)
		return usage_error(
			"%s",
			"no command given: iowrap [OPTIONS] -- COMMAND [ARGS...]");
	o->command = argv + optind;
	return -1;
}

static char *default_output_dir(void)
{
	char host[HOST_NAME_MAX + 1] = "localhost";
	struct strbuf sb;

	gethostname(host, sizeof(host) - 1);
	host[HOST_NAME_MAX] = '\0';
	/* A hostname is not a path: keep it one component. */
	for (char *p = host; *p; p++)
		if (*p == '/')
			*p = '_';
	sb_init(&sb, 0);
	sb_addf(&sb, "iowrap.%s.%d", host, (int)getpid());
	return sb_detach(&sb);
}

/* check_own_proc()'s answers. */
#define PROC_MISSING (-ENOMEDIUM)
#define PROC_OF_ANOTHER_NS (-EXDEV)

/*
 * The tracer reads the task's processes in /proc: where there is none (a
 * chroot or sandbox without it) it would get nothing, and where it shows
 * another pid namespace than iowrap's (unshare -p without --mount-proc)
 * other processes' figures under the task's pids.
 */
static int check_own_proc(void)
{
	char self[32];
	ssize_t n = readlink("/proc/self", self, sizeof(self) - 1);

	if (n <= 0)
		return PROC_MISSING;
	self[n] = '\0';
	return strtol(self, NULL, 10) == (long)getpid() ? 0 :
							  PROC_OF_ANOTHER_NS;
}

/* Why ptrace is unavailable, with the fix, in one line. */
static void explain_no_ptrace(int err, struct strbuf *why)
{
	if (err == PROC_MISSING) {
		sb_adds(why,
			"/proc is not mounted where iowrap runs (a chroot or sandbox without it) and the tracer reads the task's processes there; mount it (mount -t proc proc /proc, bwrap --proc /proc)");
		return;
	}
	if (err == PROC_OF_ANOTHER_NS) {
		sb_adds(why,
			"/proc shows another pid namespace than iowrap's (unshare -p without --mount-proc) and the tracer would read other processes there; mount this namespace's (unshare -pf --mount-proc)");
		return;
	}

	char scope[16] = "";

	if (read_file_at(AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope", scope,
			 sizeof(scope)) > 0 &&
	    scope[0] == '3') {
		sb_adds(why,
			"ptrace is disabled by Yama (kernel.yama.ptrace_scope=3); an administrator must lower it");
		return;
	}
	sb_addf(why,
		"ptrace is not permitted (%s): iowrap may itself be traced (a debugger, strace) or a seccomp profile blocks ptrace; in a container add CAP_SYS_PTRACE or allow ptrace in its seccomp profile",
		strerror(-err));
}

struct run_state {
	struct run_options opt;
	struct trace_sink sink;
	struct host_info host;
	struct task_context context;
	struct cgroup_resolver cgroups;
	struct run_summary summary;
	struct strbuf untraced_reason;
	int was_subreaper; /* PR_GET_CHILD_SUBREAPER before we set it */
	struct strbuf cmdpath;
	char cwd[PATH_MAX];
	struct task_identity task;
	char host_dir[256];
	struct option_value options[7];
	struct filter_pair filter;
	struct fd_numbers inherited; /* named by the scoped filter */
};

static int exit_status_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_IOWRAP_FAILED;
}

static void set_main_exit(struct run_summary *s, int status)
{
	s->exit_known = true;
	if (WIFSIGNALED(status)) {
		s->exit_signal = WTERMSIG(status);
		s->core_dumped = WCOREDUMP(status);
	} else {
		s->exit_code = WEXITSTATUS(status);
	}
	s->iowrap_status = exit_status_of(status);
}

static void rusage_totals(struct tree_totals *t, const struct rusage *ru)
{
	memset(t, 0, sizeof(*t));
	t->utime_us = (uint64_t)ru->ru_utime.tv_sec * 1000000 +
		      (uint64_t)ru->ru_utime.tv_usec;
	t->stime_us = (uint64_t)ru->ru_stime.tv_sec * 1000000 +
		      (uint64_t)ru->ru_stime.tv_usec;
	t->cpu_ns = (t->utime_us + t->stime_us) * 1000;
	t->peak_rss_kib = (uint64_t)ru->ru_maxrss;
	t->minflt = (uint64_t)ru->ru_minflt;
	t->majflt = (uint64_t)ru->ru_majflt;
	t->ctxt_voluntary = (uint64_t)ru->ru_nvcsw;
	t->ctxt_involuntary = (uint64_t)ru->ru_nivcsw;
	t->read_bytes = (uint64_t)ru->ru_inblock * 512;
	t->write_bytes = (uint64_t)ru->ru_oublock * 512;
}

/* The task runs as a plain child: only wait4's rusage describes it. */
static void run_untraced(struct run_state *st, struct launch *l)
{
	struct rusage ru;
	int status;
	pid_t r;

	launch_release(l, LAUNCH_RUN_BARE);
	do
		r = wait4(l->pid, &status, 0, &ru);
	while (r < 0 && errno == EINTR);
	st->summary.end_us = now_realtime_us();
	if (r < 0) {
		trace_problem(&st->sink, "waiting for the task failed: %s",
			      strerror(errno));
		return;
	}
	set_main_exit(&st->summary, status);
	rusage_totals(&st->summary.totals, &ru);
	st->summary.totals_source = "rusage";
}

/* Untraced, the main process is all that is known of the tree: it ran,
 * and it ran COMMAND unless its exec failed; its children are not seen. */
static void count_main_process(struct tree_totals *t, bool exec_failed)
{
	t->processes = 1;
	t->processes_max_concurrent = 1;
	t->threads = 1;
	t->execs = exec_failed ? 0 : 1;
}

/* What --orphan-timeout did, or that its timer could not run. */
static void note_orphans_ended(struct run_state *st)
{
	unsigned terminated, killed;

	signals_orphans_ended(&terminated, &killed);
	st->summary.orphans_terminated = terminated;
	st->summary.orphans_killed = killed;
	if (!signals_orphan_timer_running())
		trace_problem(
			&st->sink,
			"--orphan-timeout: its timer could not be set, so the processes left running were waited for");
}

static void run_traced(struct run_state *st, struct launch *l)
{
	struct tracer_config cfg = {
		.wait_orphans = st->opt.wait_orphans,
		.level = st->opt.level,
		.spin_us = st->opt.spin_us,
		.follow_cpu = st->opt.follow_cpu,
		.threads = st->opt.tracer_threads,
		.handover = st->opt.handover,
		.include = st->opt.include,
		.exclude = st->opt.exclude,
		.sink = &st->sink,
		.cgroups = &st->cgroups,
		.tick = &signals_tick,
		.inherited = st->inherited,
		.lose_fork_events = getenv("IOWRAP_TEST_LOSE_FORK_EVENTS") !=
				    NULL,
	};
	struct tracer_result res;

	launch_release(l, LAUNCH_RUN);
	signals_start_ticker();
	if (tracer_run(&cfg, l->pid, &res) < 0)
		trace_problem(&st->sink, "tracing broke off: %s", res.error);
	signals_stop_ticker();
	st->summary.end_us = res.main_end_us ? res.main_end_us :
					       now_realtime_us();
	if (!st->opt.wait_orphans)
		st->summary.end_us = now_realtime_us();
	st->summary.totals = st->sink.totals;
	st->summary.totals.processes_max_concurrent = res.max_concurrent;
	st->summary.totals_source = "ptrace-exit-stops";
	st->summary.orphans_detached = res.orphans_detached;
	if (st->opt.orphan_timeout_s >= 0)
		note_orphans_ended(st);
	st->summary.syscall_stops = res.syscall_stops;
	st->summary.unknown_syscalls = res.unknown_syscalls;
	st->summary.used_io_uring = res.used_io_uring;
	st->summary.used_linux_aio = res.used_linux_aio;
	st->summary.fd_scoped = res.fd_scoped;
	st->summary.fd_filters = res.fd_filters;
	if (res.fd_filter_failures)
		trace_problem(
			&st->sink,
			"%llu descriptor filters could not be added: reads and writes on those descriptors may be missing from io.csv",
			(unsigned long long)res.fd_filter_failures);
	if (res.holds_expired)
		trace_problem(
			&st->sink,
			"%llu new process(es) waited %d s for their creator's fork event in vain and went on without it: what they inherited (descriptors, filters) may be missing from the trace",
			(unsigned long long)res.holds_expired, HOLD_LIMIT_S);
	st->summary.follow_phases = res.follow_phases;
	st->summary.follow_starved = res.follow_starved;
	st->summary.follow_moves = res.follow_moves;
	st->summary.follow_how = res.follow_how;
	st->summary.tracer_threads = (uint64_t)res.threads;
	st->summary.handoffs = res.handoffs;
	st->summary.holds_expired = res.holds_expired;
	st->summary.handover = handover_name(st->opt.handover);
	if (res.main_reaped)
		set_main_exit(&st->summary, res.main_status);
	else
		trace_problem(&st->sink,
			      "the task's exit status never reached iowrap");
}

static void record_options(struct run_state *st)
{
	struct option_value *o = st->options;

	o[0] = (struct option_value){ "output", st->sink.dir.path, -1 };
	o[1] = (struct option_value){ "force", NULL, st->opt.force };
	o[2] = (struct option_value){ "strict", NULL, st->opt.strict };
	o[3] = (struct option_value){ "wait_orphans", NULL,
				      st->opt.wait_orphans };
	o[4] = (struct option_value){ "level", trace_level_name(st->opt.level),
				      -1 };
	o[5] = (struct option_value){ "root", st->opt.root, -1 };
	o[6] = (struct option_value){ "task", st->opt.task_name, -1 };
	st->summary.options = o;
	st->summary.noptions = 7;
}

/* Where the trace goes: -o > --root > IOWRAP_DIR > IOWRAP_ROOT > a
 * Nextflow task's WORKDIR/.iowrap > ./iowrap.HOST.PID. */
static void choose_place(struct run_state *st, const char **dir,
			 const char **root)
{
	const char *env_dir = getenv("IOWRAP_DIR");
	const char *env_root = getenv("IOWRAP_ROOT");

	*dir = NULL;
	*root = NULL;
	if (st->opt.output)
		*dir = st->opt.output;
	else if (st->opt.root)
		*root = st->opt.root;
	else if (env_dir && *env_dir)
		*dir = env_dir;
	else if (env_root && *env_root)
		*root = env_root;
}

/* DIR/HOST/KEY or WORKDIR/.iowrap: new, never shared with another task. */
static int open_unique(struct run_state *st, const char *root,
		       struct strbuf *why)
{
	const char *workdir = st->task.field[TF_NF_WORKDIR];
	const char *name = root ? st->task.key : ".iowrap";
	unsigned attempt = 1;
	int err;

	err = trace_open_unique(&st->sink, root ? root : workdir,
				root ? st->host_dir : NULL, name, &attempt,
				why);
	if (err || attempt == 1)
		return err;
	warnx_line(
		"trace directory %s was taken by another task; writing to %s",
		name, st->sink.dir.path);
	/* The path ends in the name mkdir gave us. */
	if (root)
		taskid_set_key(&st->task, strrchr(st->sink.dir.path, '/') + 1);
	return 0;
}

static int open_trace(struct run_state *st)
{
	const char *dir, *root;
	char *fallback = NULL;
	struct strbuf why;
	bool unique;
	int err;

	choose_place(st, &dir, &root);
	unique = root || (!dir && st->task.nf_workdir_confirmed);
	sb_init(&why, 0);
	if (unique) {
		err = open_unique(st, root, &why);
	} else {
		fallback = dir ? NULL : default_output_dir();
		err = trace_open(&st->sink, dir ? dir : fallback, st->opt.force,
				 &why);
	}
	free(fallback);
	if (err == -EEXIST && !unique) {
		warnx_line("%s", sb_str(&why));
		sb_release(&why);
		return EXIT_IOWRAP_FAILED;
	}
	if (err) {
		warnx_line("%s%s", sb_str(&why),
			   st->opt.strict ? "" : "; the task runs untraced");
		sb_release(&why);
		return st->opt.strict ? EXIT_IOWRAP_FAILED : -1;
	}
	sb_release(&why);
	return -1;
}

/* Identity problems are said once, in one line; the task goes on.  The
 * first quotes paths and values: no newline or escape reaches stderr. */
static void say_task_warnings(const struct kv_list *w)
{
	struct strbuf first;

	if (!w->n)
		return;
	sb_init(&first, 0);
	sb_addf(&first, "%.200s: %.300s", w->items[0].key, w->items[0].value);
	for (size_t i = 0; i < first.len; i++)
		if ((unsigned char)first.buf[i] < 0x20 || first.buf[i] == 0x7f)
			first.buf[i] = '?';
	if (w->n == 1)
		warnx_line("task identity: %s", sb_str(&first));
	else
		warnx_line(
			"task identity: %s; %zu more warnings in summary.json task.warnings",
			sb_str(&first), w->n - 1);
	sb_release(&first);
}

static void detect_task(struct run_state *st)
{
	struct task_inputs in = {
		.command = st->opt.command,
		.cwd = st->cwd,
		.task_name = st->opt.task_name,
		.labels = &st->opt.labels,
		.parent = getppid(),
		.hostname = st->host_dir,
		.pid = getpid(),
		.now_us = st->summary.start_us,
	};

	taskid_host_component(st->host.hostname, st->host_dir,
			      sizeof(st->host_dir));
	taskid_detect(&st->task, &in);
	say_task_warnings(&st->task.warnings);
	st->summary.task = &st->task;
}

static void init_state(struct run_state *st)
{
	memset(st, 0, sizeof(*st));
	trace_init(&st->sink);
	sb_init(&st->untraced_reason, 0);
	sb_init(&st->cmdpath, PATH_MAX);
	if (!getcwd(st->cwd, sizeof(st->cwd)))
		st->cwd[0] = '\0';
	host_info_read(&st->host);
	cgroup_resolver_init(&st->cgroups);
	task_context_read(&st->context, &st->cgroups);
	st->summary.host = &st->host;
	st->summary.context = &st->context;
	st->summary.cwd = st->cwd;
	st->summary.mode = "ptrace";
	st->summary.start_us = now_realtime_us();
}

static int finish(struct run_state *st)
{
	st->summary.command = st->opt.command;
	st->summary.wait_orphans = st->opt.wait_orphans;
	st->summary.orphan_timeout_s = st->opt.orphan_timeout_s;
	st->summary.level = trace_level_name(st->opt.level);
	if (!st->summary.end_us)
		st->summary.end_us = now_realtime_us();
	record_options(st);
	trace_finish(&st->sink, &st->summary);
	return st->summary.iowrap_status;
}

/* The command cannot be run: say so in the summary too. */
/* Says why COMMAND (found at path, if it was) cannot run; returns the exit
 * status that means it. */
static int say_unusable(const char *name, const char *path, int err)
{
	if (err == -ENOENT && path && launch_say_bad_interpreter(path))
		return EXIT_NOT_FOUND;
	if (err == -ENOENT && !strchr(name, '/'))
		warnx_line(
			"%s: command not found on PATH; check its name or give its full path",
			name);
	else
		warnx_line("%s: %s; check the path and its permissions", name,
			   err == -EACCES ? "not executable" : strerror(-err));
	return err == -ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE;
}

static int command_unusable(struct run_state *st, const char *name, int err)
{
	int status = say_unusable(name, NULL, err);

	st->summary.exec_error = strerror(-err);
	st->summary.mode = "not-started";
	st->summary.iowrap_status = status;
	return finish(st);
}

/* In the task, right before its exec: 0, 1 (NO_NEW_PRIVS had to be set)
 * or the errno that kept the filter out. */
static int install_filter(void *arg)
{
	const struct filter_pair *filters = arg;
	bool forced_nnp;
	int err = filter_install(filters, &forced_nnp);

	return err ? -err : forced_nnp;
}

static void note_filter(struct run_state *st, int note)
{
	if (!st->filter.plain.len)
		return;
	if (note == 1)
		st->summary.no_new_privs = true;
	else if (note > 1)
		trace_problem(
			&st->sink,
			"the seccomp filter could not be installed: %s; only process events were traced",
			strerror(note));
}

/* Whether fd, a FIFO, has a name (mkfifo): the tracer traces those as
 * files.  The kernel names an anonymous pipe "pipe:[INO]". */
static bool is_named_fifo(int fd)
{
	char link[48], target[2];

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	/* Only the first byte matters: a cut name is no error. */
	return readlink(link, target, sizeof(target)) > 0 && target[0] == '/';
}

/* Whether a descriptor of ours, of stat st, may hold a traced file. */
static bool may_be_traced_file(int fd, const struct stat *st)
{
	return S_ISREG(st->st_mode) ||
	       (S_ISFIFO(st->st_mode) && is_named_fifo(fd));
}

/*
 * The descriptors the task starts with that may hold a traced file: ours
 * that survive its exec and are regular files or named FIFOs (a
 * redirection to a file, cat < input, wc < fifo).  Their data syscalls
 * stop from the start; a descriptor number the task gets a file on later
 * gets its filter then.
 */
static size_t inherited_files(int *fds, size_t cap)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	size_t n = 0;

	if (!dir)
		return cap + 1; /* cannot tell: every descriptor stops */
	while ((e = readdir(dir))) {
		int fd = (int)strtol(e->d_name, NULL, 10);
		int flags = fcntl(fd, F_GETFD);
		struct stat st;

		if (e->d_name[0] == '.' || fd == dirfd(dir) || flags < 0 ||
		    (flags & FD_CLOEXEC) || fstat(fd, &st) < 0 ||
		    !may_be_traced_file(fd, &st))
			continue;
		if (n == cap) {
			n = cap + 1; /* too many to name: every one stops */
			break;
		}
		fds[n++] = fd;
	}
	closedir(dir);
	return n;
}

/* The filter is built before the task forks, so errors are ours alone. */
static void build_filter(struct run_state *st)
{
	int fds[FDFILTER_MAX_FDS];
	size_t nfds;
	struct strbuf why;

	if (st->opt.level == LEVEL_SUMMARY || !trace_has_dir(&st->sink))
		return;
	nfds = inherited_files(fds, FDFILTER_MAX_FDS);
	st->inherited.overflow = nfds > FDFILTER_MAX_FDS;
	for (size_t i = 0; i < nfds && !st->inherited.overflow; i++)
		fd_numbers_add(&st->inherited, fds[i]);
	/* More than a filter names, or than the tracer lists: all stop. */
	if (st->inherited.overflow)
		nfds = FDFILTER_MAX_FDS + 1;
	sb_init(&why, 0);
	if (filter_build(st->opt.level, fds, nfds, &st->filter, &why) < 0)
		trace_problem(&st->sink, "%s; only process events are traced",
			      sb_str(&why));
	sb_release(&why);
}

/*
 * The task could not be started beside iowrap (no descriptor left for the
 * launch's pipes, no process for its fork: a task run near its limits).
 * A monitor must never fail a workflow: it runs in iowrap's place,
 * untraced, as it would without iowrap (--strict: not at all).  The
 * summary says so, with no exit status: iowrap is gone when it ends.
 */
static int run_in_place(struct run_state *st, int err)
{
	sb_addf(&st->untraced_reason,
		"cannot start the task beside iowrap (%s); it runs in iowrap's place, untraced",
		strerror(-err));
	warnx_line("%s", sb_str(&st->untraced_reason));
	st->summary.mode = "untraced";
	st->summary.untraced_reason = sb_str(&st->untraced_reason);
	st->summary.iowrap_status = st->opt.strict ? EXIT_IOWRAP_FAILED : -1;
	if (st->opt.strict)
		return finish(st);
	finish(st);
	signals_restore_for_child();
	umask_for_the_task();
	/* Kept across execve(2): as iowrap was started, not our orphans'
	 * reaper. */
	prctl(PR_SET_CHILD_SUBREAPER, (long)st->was_subreaper, 0L, 0L, 0L);
	launch_exec(sb_str(&st->cmdpath), st->opt.command);
	/* The summary, published, says untraced: the exec failing now,
	 * after the command was found runnable, is left to stderr. */
	return say_unusable(st->opt.command[0], sb_str(&st->cmdpath), -errno);
}

/* --strict and no ptrace: the task never runs, and the summary says why. */
static int refuse_untraced(struct run_state *st, struct launch *l, int err)
{
	explain_no_ptrace(err, &st->untraced_reason);
	warnx_line("%s; not running the task (--strict)",
		   sb_str(&st->untraced_reason));
	launch_release(l, LAUNCH_CANCEL);
	waitpid(l->pid, NULL, 0);
	st->summary.mode = "not-started";
	st->summary.untraced_reason = sb_str(&st->untraced_reason);
	st->summary.iowrap_status = EXIT_IOWRAP_FAILED;
	return finish(st);
}

static int start_task(struct run_state *st)
{
	struct launch l = { .before_exec = NULL };
	bool untraced;
	int err, note;

	build_filter(st);
	if (st->filter.plain.len) {
		l.before_exec = install_filter;
		l.hook_arg = &st->filter;
	}
	err = launch_prepare(&l, sb_str(&st->cmdpath), st->opt.command);

	if (err)
		return run_in_place(st, err);
	if (st->opt.orphan_timeout_s >= 0)
		signals_set_orphan_timeout(st->opt.orphan_timeout_s);
	signals_set_target(l.pid);
	/* Nowhere to write a trace: do not slow the task for nothing. */
	err = trace_has_dir(&st->sink) ? check_own_proc() : -ENOTDIR;
	if (!err)
		err = tracer_seize(l.pid, st->opt.level);
	if (err && st->opt.strict)
		return refuse_untraced(st, &l, err);
	if (err == -ENOTDIR) {
		sb_adds(&st->untraced_reason, "no trace directory");
	} else if (err) {
		explain_no_ptrace(err, &st->untraced_reason);
		warnx_line("%s; running the task untraced",
			   sb_str(&st->untraced_reason));
	}
	untraced = err != 0;
	if (untraced) {
		st->summary.mode = "untraced";
		st->summary.untraced_reason = sb_str(&st->untraced_reason);
		run_untraced(st, &l);
	} else {
		run_traced(st, &l);
	}
	err = launch_exec_error(&l, &note);
	note_filter(st, note);
	launch_say_exec_error(sb_str(&st->cmdpath), err);
	if (err)
		st->summary.exec_error = strerror(err);
	if (untraced)
		count_main_process(&st->summary.totals, err != 0);
	return finish(st);
}

/*
 * Under another iowrap (a wrapped Slurm job step running a wrapped
 * Snakemake job, say) the outer one already follows every process and
 * ptrace cannot be had twice: run COMMAND as if this iowrap were not there,
 * writing nothing.
 */
static int run_nested(struct run_state *st)
{
	int err = cmdpath_resolve(st->opt.command[0], getenv("PATH"),
				  &st->cmdpath);

	if (!err) {
		execv(sb_str(&st->cmdpath), st->opt.command);
		return say_unusable(st->opt.command[0], sb_str(&st->cmdpath),
				    -errno);
	}
	return say_unusable(st->opt.command[0], NULL, err);
}

int cmd_run(int argc, char **argv)
{
	struct run_state *st = xcalloc(1, sizeof(*st));
	int status = parse_options(argc, argv, &st->opt);
	int err;

	if (status >= 0)
		return status;
	{
		struct run_options opt = st->opt;

		init_state(st);
		st->opt = opt;
	}
	if (traced_by_same_program())
		return run_nested(st);
	detect_task(st);
	umask_for_own_files();
	signals_setup();
	status = open_trace(st);
	if (status >= 0)
		return status;
	/* Daemonised grandchildren are reparented to us, stay traced and
	 * are reaped here instead of escaping to init. */
	if (prctl(PR_GET_CHILD_SUBREAPER, &st->was_subreaper, 0L, 0L, 0L) < 0)
		st->was_subreaper = 0;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) < 0)
		trace_problem(&st->sink, "cannot become a child subreaper: %s",
			      strerror(errno));
	err = cmdpath_resolve(st->opt.command[0], getenv("PATH"), &st->cmdpath);
	if (err)
		return command_unusable(st, st->opt.command[0], err);
	return start_task(st);
}
