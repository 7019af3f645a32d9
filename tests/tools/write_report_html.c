// SPDX-License-Identifier: MIT
/*
 * build/write-report-html REPORT_JSON OUTDIR: report_write_html() on a
 * given JSON file, so that tests/test_report_html.py can check the page
 * with any report.json (a fixture, a hostile one, a huge one) without
 * running the analysis.  OUTDIR must exist; OUTDIR/report.html must not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "html.h"
#include "util.h"

static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	*len = 0;
	while ((n = read(fd, buf + *len, (size_t)st.st_size - *len)) > 0)
		*len += (size_t)n;
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int main(int argc, char **argv)
{
	size_t len = 0;
	char *json;
	int dirfd, err;

	if (argc != 3) {
		fprintf(stderr,
			"usage: write-report-html REPORT_JSON OUTDIR\n");
		return 2;
	}
	json = slurp(argv[1], &len);
	if (!json) {
		fprintf(stderr, "write-report-html: cannot read %s: %s\n",
			argv[1], strerror(errno));
		return 1;
	}
	dirfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "write-report-html: cannot open %s: %s\n",
			argv[2], strerror(errno));
		return 1;
	}
	err = report_write_html(dirfd, "report.html", json, len);
	if (err)
		fprintf(stderr, "write-report-html: %s/report.html: %s\n",
			argv[2], strerror(-err));
	close(dirfd);
	free(json);
	return err ? 1 : 0;
}
