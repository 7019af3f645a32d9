// SPDX-License-Identifier: MIT
#include "model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "display.h"
#include "strbuf.h"
#include "util.h"

enum { WARNINGS_PRINTED = 50 };

/* One line on stderr: names and reasons from traces (a directory named
 * with a newline and escape sequences) cannot forge or hide lines. */
static void warn_on_terminal(const char *line)
{
	struct strbuf shown;

	sb_init(&shown, 0);
	display_adds(&shown, line);
	warnx_line("report: %s", sb_str(&shown));
	sb_release(&shown);
}

void workflow_warn(struct workflow *wf, const char *fmt, ...)
{
	struct strbuf sb;
	va_list ap;

	if (wf->quiet)
		return;
	sb_init(&sb, 4096);
	va_start(ap, fmt);
	{
		char line[4096];

		vsnprintf(line, sizeof(line), fmt, ap);
		sb_adds(&sb, line);
	}
	va_end(ap);
	wf->warnings++;
	if (wf->warnings <= WARNINGS_PRINTED)
		warn_on_terminal(sb_str(&sb));
	else if (wf->warnings == WARNINGS_PRINTED + 1)
		warnx_line(
			"report: further warnings are only counted in report.json");
	if (wf->nwarning_kept < WORKFLOW_WARNINGS_KEPT) {
		if (!wf->warning)
			wf->warning = xcalloc(WORKFLOW_WARNINGS_KEPT,
					      sizeof(*wf->warning));
		wf->warning[wf->nwarning_kept++] = sb_detach(&sb);
	}
	sb_release(&sb);
}
