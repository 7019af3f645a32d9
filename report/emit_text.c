// SPDX-License-Identifier: MIT
/* --text: the headline tables for a terminal on a login node. */
#include <stdio.h>

#include "display.h"
#include "emit.h"
#include "util.h"

enum { FLOW_ROWS = 20 };

/* A name from a trace on one line, padded to width columns: controls,
 * bidi overrides and bytes not UTF-8 escaped (display.h). */
static void put_escaped(const char *s, int width)
{
	struct strbuf sb;
	size_t cols;

	sb_init(&sb, 0);
	cols = display_adds(&sb, s);
	fputs(sb_str(&sb), stdout);
	for (; cols < (size_t)width; cols++)
		putchar(' ');
	sb_release(&sb);
}

static double sec(int64_t us)
{
	return (double)us / 1e6;
}

static void print_totals(struct workflow *wf, const struct analysis *an)
{
	uint64_t rd = 0, wr = 0, urd = 0, uwr = 0;
	double cpu = 0;

	for (size_t t = 0; t < wf->ntasks; t++) {
		rd += wf->task[t].file_read_bytes;
		wr += wf->task[t].file_write_bytes;
		urd += wf->task[t].untraced_read;
		uwr += wf->task[t].untraced_write;
		cpu += wf->task[t].cpu_s;
	}
	printf("Workflow: %zu tasks, %.3f s wall, %.3f s CPU, %zu files\n",
	       wf->ntasks, sec(an->t1_us - an->t0_us), cpu, an->nfiles);
	printf("  files: %llu bytes read, %llu bytes written; pipes/sockets/exec: %llu read, %llu written\n",
	       (unsigned long long)rd, (unsigned long long)wr,
	       (unsigned long long)urd, (unsigned long long)uwr);
	if (wf->warnings)
		printf("  %llu warnings (see stderr and report.json)\n",
		       (unsigned long long)wf->warnings);
}

static uint64_t key_wall(const void *ctx, size_t i)
{
	return (uint64_t)task_wall_us(&((const struct workflow *)ctx)->task[i]);
}

static uint64_t key_io(const void *ctx, size_t i)
{
	const struct task *t = &((const struct workflow *)ctx)->task[i];

	return t->file_read_bytes + t->file_write_bytes;
}

static void print_tasks(struct workflow *wf, const char *title,
			uint64_t (*key)(const void *, size_t))
{
	size_t top[REPORT_TOP_N];
	size_t n = top_n(wf->ntasks, key, wf, top, REPORT_TOP_N);

	printf("\n%s\n  %-32s %10s %10s %10s %14s %14s\n", title, "task",
	       "wall s", "cpu s", "peak KiB", "read B", "written B");
	for (size_t i = 0; i < n; i++) {
		const struct task *t = &wf->task[top[i]];

		printf("  ");
		put_escaped(t->name, 32);
		printf(" %10.3f %10.3f %10llu %14llu %14llu\n",
		       sec(task_wall_us(t)), t->cpu_s,
		       (unsigned long long)t->peak_rss_kib,
		       (unsigned long long)t->file_read_bytes,
		       (unsigned long long)t->file_write_bytes);
	}
}

static uint64_t key_file_bytes(const void *ctx, size_t i)
{
	const struct gfile *g = &((const struct analysis *)ctx)->file[i];

	return g->system ? 0 : g->bytes_read + g->bytes_written;
}

static void print_files(const struct analysis *an)
{
	size_t top[REPORT_TOP_N];
	size_t n = top_n(an->nfiles, key_file_bytes, an, top, REPORT_TOP_N);

	printf("\nTop files (workflow data, by bytes)\n  %14s %14s %6s %6s  %s\n",
	       "read B", "written B", "rdrs", "wrtrs", "path");
	for (size_t i = 0; i < n; i++) {
		const struct gfile *g = &an->file[top[i]];

		if (!key_file_bytes(an, top[i]))
			break;
		printf("  %14llu %14llu %6llu %6llu  ",
		       (unsigned long long)g->bytes_read,
		       (unsigned long long)g->bytes_written,
		       (unsigned long long)g->readers,
		       (unsigned long long)g->writers);
		put_escaped(g->path, 0);
		putchar('\n');
	}
}

static void print_flows(struct workflow *wf, const struct analysis *an)
{
	printf("\nData flow (writer -> reader: file)\n");
	for (size_t i = 0; i < an->nflows && i < FLOW_ROWS; i++) {
		const struct flow *f = &an->flow[i];

		printf("  ");
		put_escaped(wf->task[f->writer].name, 0);
		printf(" -> ");
		put_escaped(wf->task[f->reader].name, 0);
		printf(": ");
		put_escaped(an->file[f->file].path, 0);
		if (f->written_as != f->file) {
			printf(" (written as ");
			put_escaped(an->file[f->written_as].path, 0);
			putchar(')');
		}
		printf(" (%llu B)\n", (unsigned long long)f->bytes);
	}
	if (an->nflows > FLOW_ROWS)
		printf("  ... %zu more in report.json\n",
		       an->nflows - FLOW_ROWS);
}

static void put_vertex(struct workflow *wf, const struct analysis *an, size_t v)
{
	const struct vertex *vx = &an->vertex[v];

	if (vx->kind == V_START) {
		printf("(start)");
		return;
	}
	if (vx->kind == V_MEMORY) {
		printf("(memory of ");
		put_escaped(wf->task[vx->task].name, 0);
		putchar(')');
		return;
	}
	put_escaped(an->file[vx->file].path, 0);
	if (vx->kind == V_DELETED)
		printf(" (deleted)");
	else if (vx->kind == V_INPUT)
		printf(" (input)");
	else {
		printf(" @");
		put_escaped(wf->task[vx->task].name, 0);
	}
}

static void print_wcp(struct workflow *wf, const struct analysis *an)
{
	int64_t total = 0;

	printf("\nWorkflow Critical Path\n  %3s %-9s %10s  %s\n", "#",
	       "mutation", "cost s", "step");
	for (size_t i = 0; i < an->npath; i++) {
		const struct edge *e = &an->edge[an->path[i]];

		total += e->cost_us;
		printf("  %3zu %-9s %10.6f  ", i + 1,
		       mutation_name(e->mutation), sec(e->cost_us));
		put_vertex(wf, an, e->from);
		printf(" -> ");
		put_vertex(wf, an, e->to);
		putchar('\n');
	}
	printf("  length %.6f s over %zu steps\n", sec(total), an->npath);
}

void emit_text(struct workflow *wf, const struct analysis *an)
{
	print_totals(wf, an);
	print_tasks(wf, "Slowest tasks", key_wall);
	print_tasks(wf, "Most I/O-heavy tasks (file bytes)", key_io);
	print_files(an);
	print_flows(wf, an);
	print_wcp(wf, an);
	fflush(stdout);
}
