// SPDX-License-Identifier: MIT
#include "export.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csvin.h"
#include "load.h"
#include "research.h"
#include "util.h"

static const char *const task_cols[] = { "task_id", "task_name", "task_key",
					 "host", "trace_dir" };

/* The first trace's header names the columns; later traces' fields are
 * matched by name, so a column missing in an older trace stays empty. */
struct columns {
	char *name[CSV_MAX_FIELDS];
	size_t n;
};

static void write_header(struct strbuf *sb, const struct columns *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(task_cols); i++) {
		csv_add_str(sb, task_cols[i]);
		sb_addc(sb, ',');
	}
	for (size_t i = 0; i < c->n; i++) {
		if (i)
			sb_addc(sb, ',');
		csv_add_str(sb, c->name[i]);
	}
	sb_addc(sb, '\n');
}

static void write_task_cols(struct strbuf *sb, size_t id, const struct task *t)
{
	sb_add_u64(sb, id);
	sb_addc(sb, ',');
	csv_add_str(sb, t->name ? t->name : "");
	sb_addc(sb, ',');
	csv_add_str(sb, t->key ? t->key : "");
	sb_addc(sb, ',');
	csv_add_str(sb, t->host ? t->host : "");
	sb_addc(sb, ',');
	csv_add_str(sb, t->dir);
	sb_addc(sb, ',');
}

static int flush(struct strbuf *sb, FILE *out)
{
	size_t n = sb->len ? fwrite(sb->buf, 1, sb->len, out) : 0;
	bool ok = n == sb->len;

	sb_reset(sb);
	return ok ? 0 : -1;
}

static void take_header(struct columns *c, struct csv_file *cf)
{
	if (c->n)
		return;
	for (size_t i = 0; i < cf->nheader; i++)
		c->name[c->n++] = xstrdup(sb_str(&cf->rec.field[i]));
}

/* io.csv's rows from a trace of the research's tools (research.h). */
struct research_rows {
	size_t id;
	const struct task *t;
	const struct columns *c;
	int field[CSV_MAX_FIELDS]; /* column -> Fig. 2a field; -1: none */
	struct strbuf *sb;
	FILE *out;
	long long rows;
};

static void research_row(void *ctx, const struct io_row *r)
{
	struct research_rows *rr = ctx;

	if (rr->rows < 0)
		return;
	write_task_cols(rr->sb, rr->id, rr->t);
	for (size_t i = 0; i < rr->c->n; i++) {
		int k = rr->field[i];
		/* The path without its :mountroot:sbroot suffix. */
		const char *v = k < 0			? "" :
				k == RESEARCH_NCOLS - 1 ? r->path :
							  r->raw[k];

		if (i)
			sb_addc(rr->sb, ',');
		csv_add_field(rr->sb, v, strlen(v));
	}
	sb_addc(rr->sb, '\n');
	rr->rows++;
	if (rr->sb->len > (1u << 20) && flush(rr->sb, rr->out) < 0)
		rr->rows = -1;
}

/* The columns of io.csv when a research trace comes first. */
static void research_header(struct columns *c, struct strbuf *sb)
{
	for (size_t i = 0; i < RESEARCH_NCOLS; i++)
		c->name[c->n++] = xstrdup(research_columns[i]);
	c->name[c->n++] = xstrdup("path2");
	write_header(sb, c);
}

static long long export_research(struct workflow *wf, size_t id, int dirfd,
				 const char *file, struct columns *c,
				 struct strbuf *sb, FILE *out)
{
	struct csv_problems prob = { 0 };
	struct research_rows rr = {
		.id = id, .t = &wf->task[id], .c = c, .sb = sb, .out = out
	};

	if (!c->n)
		research_header(c, sb);
	for (size_t i = 0; i < c->n; i++) {
		rr.field[i] = -1;
		for (int k = 0; k < RESEARCH_NCOLS; k++)
			if (strcmp(c->name[i], research_columns[k]) == 0)
				rr.field[i] = k;
	}
	research_scan(wf, &wf->task[id], dirfd, file, &prob, research_row, &rr);
	return rr.rows;
}

/* io.csv of a trace of the research's tools: the name of its CSV. */
static bool research_io(const char *name, int dirfd, char *file, size_t size)
{
	struct stat st;

	return strcmp(name, "io.csv") == 0 &&
	       fstatat(dirfd, "io.csv", &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	       research_csv_find(dirfd, file, size);
}

static long long export_task(struct workflow *wf, size_t id, const char *name,
			     struct columns *c, struct strbuf *sb, FILE *out)
{
	struct task *t = &wf->task[id];
	struct csv_problems prob = { 0 };
	struct csv_file cf = { .wf = wf, .t = t, .name = name, .prob = &prob };
	long long rows = 0;
	char research[NAME_MAX + 1];
	int dirfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dirfd < 0)
		return 0;
	if (research_io(name, dirfd, research, sizeof(research))) {
		rows = export_research(wf, id, dirfd, research, c, sb, out);
		close(dirfd);
		return rows;
	}
	if (csv_open(&cf, dirfd, NULL, 0, 0) == 0) {
		bool first = !c->n;

		take_header(c, &cf);
		if (first)
			write_header(sb, c);
		/* Columns of this trace by the first trace's names. */
		for (size_t i = 0; i < c->n; i++) {
			cf.col[i] = -1;
			for (size_t k = 0; k < cf.nheader; k++)
				if (strcmp(sb_str(&cf.rec.field[k]),
					   c->name[i]) == 0)
					cf.col[i] = (int)k;
		}
		while (csv_row(&cf)) {
			write_task_cols(sb, id, t);
			for (size_t i = 0; i < c->n; i++) {
				if (i)
					sb_addc(sb, ',');
				csv_add_field(sb, cell(&cf, (int)i),
					      cell_len(&cf, (int)i));
			}
			sb_addc(sb, '\n');
			rows++;
			if (sb->len > (1u << 20) && flush(sb, out) < 0)
				rows = -1;
			if (rows < 0)
				break;
		}
	}
	csv_close(&cf);
	close(dirfd);
	return rows;
}

long long export_csv(struct workflow *wf, const char *name, FILE *out)
{
	struct columns c = { .n = 0 };
	struct strbuf sb;
	long long total = 0;

	sb_init(&sb, 64u << 20);
	for (size_t t = 0; t < wf->ntasks && total >= 0; t++) {
		long long n = export_task(wf, t, name, &c, &sb, out);

		total = n < 0 ? -1 : total + n;
	}
	if (flush(&sb, out) < 0 || fflush(out) != 0)
		total = -1;
	for (size_t i = 0; i < c.n; i++)
		free(c.name[i]);
	sb_release(&sb);
	return total;
}
