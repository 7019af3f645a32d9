// SPDX-License-Identifier: MIT
/*
 * iowrap export --format csv [--table io|procs|files] [-o FILE] TRACE_DIR...
 * iowrap export --format chrome [-o FILE] TRACE_DIR...
 *
 * csv: one CSV of every trace below TRACE_DIR for DuckDB or pandas: the
 * chosen table of all tasks, each row prefixed with task_id, task_name,
 * task_key, host and trace_dir.  chrome: Trace Event Format JSON that
 * Perfetto opens (report/chrome.c).  Exit status: 0 written, 1 cannot
 * write, 2 usage error, 3 no readable trace found.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "cliopt.h"
#include "export.h"
#include "load.h"
#include "util.h"

static const char export_usage[] =
	"usage: iowrap export --format csv [--table io|procs|files] [-o FILE] TRACE_DIR...\n"
	"       iowrap export --format chrome [-o FILE] TRACE_DIR...\n"
	"  csv: the table of every trace at or below TRACE_DIR as one CSV,\n"
	"  each row prefixed with task_id, task_name, task_key, host, trace_dir.\n"
	"  chrome: Trace Event Format JSON for Perfetto (ui.perfetto.dev) or\n"
	"  chrome://tracing: a track per task and process, a slice per operation.\n"
	"  -o, --output FILE  default: stdout\n"
	"Exit status: 0 written, 1 cannot write, 2 usage error, 3 no trace.\n";

struct export_opts {
	const char *output;
	const char *table;
	bool chrome;
};

static int export_usage_error(const char *what)
{
	warnx_line("export: %s", what);
	fputs(export_usage, stderr);
	return 2;
}

static int parse_export_args(int argc, char **argv, struct export_opts *o)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "table", required_argument, NULL, 'T' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = NULL;
	char msg[320];
	int c;

	o->output = NULL;
	o->table = "io";
	o->chrome = false;
	optind = 1;
	while ((c = cliopt_next(argc, argv, "+:o:h", longopts, msg,
				sizeof(msg))) != -1) {
		if (c == 'F')
			format = optarg;
		else if (c == 'T')
			o->table = optarg;
		else if (c == 'o')
			o->output = optarg;
		else if (c == 'h')
			return fputs(export_usage, stdout), 1;
		else
			return export_usage_error(msg);
	}
	if (!format ||
	    (strcmp(format, "csv") != 0 && strcmp(format, "chrome") != 0))
		return export_usage_error("--format must be csv or chrome");
	o->chrome = strcmp(format, "chrome") == 0;
	if (strcmp(o->table, "io") && strcmp(o->table, "procs") &&
	    strcmp(o->table, "files"))
		return export_usage_error("--table must be io, procs or files");
	if (optind >= argc)
		return export_usage_error("no trace directory given");
	return 0;
}

/*
 * -o FILE is written under a new name beside it and renamed over it once
 * whole: FILE may be one of the traces read (procs.csv, exported from its
 * own directory), which must not be cut before it is read, and a failed
 * export leaves FILE as it was.  The new name is made with O_EXCL and
 * O_NOFOLLOW under the directory's fd: nothing planted there is written
 * through.
 */
struct output {
	FILE *f;
	int dirfd;
	const char *name; /* FILE's last component */
	char tmp[40];
};

static int output_dir(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	if (!slash) {
		*name = path;
		return open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	*name = slash + 1;
	dir = xstrdup(path);
	dir[slash == path ? 1 : slash - path] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	return fd;
}

static int create_tmp(struct output *out)
{
	for (int tries = 0; tries < 16; tries++) {
		int fd;

		snprintf(out->tmp, sizeof(out->tmp), ".iowrap-export.%016llx",
			 (unsigned long long)random_u64());
		fd = openat(out->dirfd, out->tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC,
			    0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

static bool open_output(struct output *out, const char *path)
{
	struct stat st;
	int fd;

	out->f = stdout;
	out->dirfd = -1;
	if (!path)
		return true;
	out->dirfd = output_dir(path, &out->name);
	if (out->dirfd < 0)
		goto refused;
	/* A directory ("dir/", ".", "..", a directory's name) is no file. */
	if (!*out->name ||
	    (fstatat(out->dirfd, out->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	     S_ISDIR(st.st_mode))) {
		errno = EISDIR;
		goto refused;
	}
	fd = create_tmp(out);
	if (fd < 0)
		goto refused;
	out->f = fdopen(fd, "w");
	if (out->f)
		return true;
	close(fd);
	unlinkat(out->dirfd, out->tmp, 0);
refused:
	warnx_line("export: cannot create %s: %s; choose another -o FILE", path,
		   strerror(errno));
	if (out->dirfd >= 0)
		close(out->dirfd);
	return false;
}

/* Closes the output; FILE gets its name if it is whole.  0 or errno. */
static int close_output(struct output *out, bool whole)
{
	int err = 0;

	if (out->f == stdout)
		return fflush(stdout) == 0 || !whole ? 0 : errno;
	if (fclose(out->f) != 0)
		err = errno;
	if (whole && !err &&
	    renameat(out->dirfd, out->tmp, out->dirfd, out->name) < 0)
		err = errno;
	if (!whole || err)
		unlinkat(out->dirfd, out->tmp, 0); /* half an export is none */
	close(out->dirfd);
	return err;
}

static int export_to(struct workflow *wf, const struct export_opts *o)
{
	struct output out;
	char table[16];
	long long rows;
	int err, closed;

	if (!open_output(&out, o->output))
		return 1;
	snprintf(table, sizeof(table), "%s.csv", o->table);
	errno = 0;
	rows = o->chrome ? export_chrome(wf, out.f) :
			   export_csv(wf, table, out.f);
	err = rows < 0 ? (errno ? errno : EIO) : 0;
	closed = close_output(&out, !err);
	if (!err)
		err = closed;
	if (err) {
		warnx_line("export: cannot write %s: %s",
			   o->output ? o->output : "stdout", strerror(err));
		return 1;
	}
	return 0;
}

int cmd_export(int argc, char **argv)
{
	struct export_opts o;
	struct workflow wf = { 0 };
	int rc = parse_export_args(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	if (!load_traces(&wf, argv + optind, argc - optind, false)) {
		warnx_line("export: no readable trace found");
		workflow_release(&wf);
		return 3;
	}
	rc = export_to(&wf, &o);
	workflow_release(&wf);
	return rc;
}
