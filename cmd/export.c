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
#include <string.h>
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

static FILE *open_output(const char *path)
{
	int fd;
	FILE *f;

	if (!path)
		return stdout;
	/* O_NOFOLLOW: a symlink planted at FILE is not written through. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		warnx_line(
			"export: cannot create %s: %s; choose another -o FILE",
			path, strerror(errno));
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

static int export_to(struct workflow *wf, const struct export_opts *o)
{
	char table[16];
	long long rows;
	int err;
	FILE *out = open_output(o->output);

	if (!out)
		return 1;
	snprintf(table, sizeof(table), "%s.csv", o->table);
	errno = 0;
	rows = o->chrome ? export_chrome(wf, out) : export_csv(wf, table, out);
	err = rows < 0 ? errno : 0;
	if (out != stdout && fclose(out) != 0 && !err) {
		rows = -1;
		err = errno;
	}
	if (rows < 0) {
		warnx_line("export: cannot write %s: %s",
			   o->output ? o->output : "stdout",
			   strerror(err ? err : EIO));
		/* Half an export is none. */
		if (out != stdout)
			unlink(o->output);
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
