// SPDX-License-Identifier: MIT
#include "export.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csvin.h"
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

static long long export_task(struct workflow *wf, size_t id, const char *name,
			     struct columns *c, struct strbuf *sb, FILE *out)
{
	struct task *t = &wf->task[id];
	struct csv_problems prob = { 0 };
	struct csv_file cf = { .wf = wf, .t = t, .name = name, .prob = &prob };
	long long rows = 0;
	int dirfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dirfd < 0)
		return 0;
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
