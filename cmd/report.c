// SPDX-License-Identifier: MIT
/*
 * iowrap report [-o OUTDIR] [--text] TRACE_DIR...
 *
 * Reads every trace directory at or below the given directories and writes
 * OUTDIR/report.json (docs/report-format.md); --text prints the headline
 * tables.  Exit status: 0 report written (warnings possible), 1 the report
 * could not be written, 2 usage error, 3 no readable trace found.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "builtin.h"
#include "cliopt.h"
#include "emit.h"
#include "html.h"
#include "load.h"
#include "outdir.h"
#include "util.h"

enum {
	REPORT_OK = 0,
	REPORT_WRITE_FAILED = 1,
	REPORT_USAGE = 2,
	REPORT_NO_TRACE = 3,
};

static const char report_usage[] =
	"usage: iowrap report [-o OUTDIR] [--text] TRACE_DIR...\n"
	"  Reads the traces at or below each TRACE_DIR (a directory with\n"
	"  summary.json or procs.csv) and writes OUTDIR/report.json and\n"
	"  OUTDIR/report.html (one file, opens offline in a browser).\n"
	"  -o, --output OUTDIR  where they go (default: .)\n"
	"  -t, --text           also print the headline tables on stdout\n"
	"  -h, --help\n"
	"Exit status: 0 written (warnings on stderr), 1 cannot write,\n"
	"2 usage error, 3 no readable trace found.\n";

struct report_opts {
	const char *outdir;
	bool text;
};

static int usage_error(const char *fmt, const char *arg)
{
	struct strbuf msg;

	sb_init(&msg, 4096);
	sb_addf(&msg, fmt, arg);
	warnx_line("report: %s", sb_str(&msg));
	sb_release(&msg);
	fputs(report_usage, stderr);
	return -1;
}

static int parse_report_args(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "text", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char msg[320];
	int c;

	o->outdir = ".";
	o->text = false;
	optind = 1;
	/* cliopt names a bad option as written, and refuses "--" or an
	 * option-looking word as -o's value, as in every subcommand. */
	while ((c = cliopt_next(argc, argv, "+:o:th", longopts, msg,
				sizeof(msg))) != -1) {
		switch (c) {
		case 'o':
			o->outdir = optarg;
			break;
		case 't':
			o->text = true;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return 1;
		default:
			return usage_error("%s", msg);
		}
	}
	if (optind >= argc) {
		warnx_line("report: no trace directory given");
		fputs(report_usage, stderr);
		return -1;
	}
	return 0;
}

static void warn_outdir(const char *path, int err)
{
	if (err == -ELOOP || err == -ENOTDIR)
		warnx_line(
			"report: output directory %s is not a directory%s; choose another -o OUTDIR",
			path, err == -ELOOP ? " but a symlink" : "");
	else
		warnx_line(
			"report: cannot use %s as output directory: %s; choose another -o OUTDIR",
			path, strerror(-err));
}

/* The output directory: created if missing (parents too), never followed
 * if it is a symlink; an existing one keeps its other files. */
static int open_outdir(const char *path)
{
	struct outdir od;
	struct strbuf why;
	int err, fd;

	sb_init(&why, 4096);
	err = outdir_create(&od, path, false, &why);
	if (err == 0) {
		fd = od.dirfd;
		od.dirfd = -1;
		outdir_close(&od);
	} else if (err == -EEXIST) {
		fd = open(path,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			warn_outdir(path, -errno);
	} else {
		/* why speaks of a trace directory: this is the output. */
		warn_outdir(path, err);
		fd = -1;
	}
	sb_release(&why);
	return fd;
}

/* report.json through a temporary name and rename: readers never see a
 * half-written report, and a symlink named report.json is replaced, not
 * followed. */
static int write_report(int dirfd, struct workflow *wf,
			const struct analysis *an)
{
	static const char tmp[] = ".report.json.tmp";
	int fd, err;

	if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT)
		return -errno;
	fd = openat(dirfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = emit_json(fd, wf, an);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, "report.json") < 0)
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

static int report_and_write(struct workflow *wf, const struct report_opts *o)
{
	struct analysis an;
	int dirfd, err;

	analyze(wf, &an);
	if (o->text)
		emit_text(wf, &an);
	dirfd = open_outdir(o->outdir);
	if (dirfd < 0) {
		analysis_release(&an);
		return REPORT_WRITE_FAILED;
	}
	err = write_report(dirfd, wf, &an);
	analysis_release(&an);
	if (err) {
		close(dirfd);
		warnx_line(
			"report: cannot write %s/report.json: %s; choose another -o OUTDIR",
			o->outdir, strerror(-err));
		return REPORT_WRITE_FAILED;
	}
	err = report_write_html_from(dirfd, "report.json", "report.html");
	close(dirfd);
	if (err) {
		warnx_line(
			"report: cannot write %s/report.html: %s; choose another -o OUTDIR",
			o->outdir, strerror(-err));
		return REPORT_WRITE_FAILED;
	}
	return REPORT_OK;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o;
	struct workflow wf = { 0 };
	int rc = parse_report_args(argc, argv, &o);

	if (rc)
		return rc > 0 ? REPORT_OK : REPORT_USAGE;
	if (!load_traces(&wf, argv + optind, argc - optind, true)) {
		warnx_line(
			"report: no readable trace found; run tasks under `iowrap --level full -o DIR` and pass DIR");
		workflow_release(&wf);
		return REPORT_NO_TRACE;
	}
	rc = report_and_write(&wf, &o);
	workflow_release(&wf);
	return rc;
}
