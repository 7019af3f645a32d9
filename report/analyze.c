// SPDX-License-Identifier: MIT
#include "analyze.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Where programs, libraries and configuration live: reads of these are
 * how a program starts, not the workflow's data flow. */
static const char *const system_prefixes[] = {
	"/usr/",  "/lib/", "/lib64/", "/lib32/", "/libx32/", "/bin/",
	"/sbin/", "/etc/", "/proc/",  "/sys/",	 "/dev/",    "/run/",
};

static bool is_system_path(const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(system_prefixes); i++)
		if (strncmp(path, system_prefixes[i],
			    strlen(system_prefixes[i])) == 0)
			return true;
	return false;
}

static size_t gfile_for(struct analysis *an, const struct tfile *f)
{
	size_t i = hmap_get(&an->by_path, f->path, f->path_len);
	struct gfile *g;

	if (i != HMAP_NONE)
		return i;
	if (an->nfiles == an->files_alloc) {
		an->files_alloc = an->files_alloc ? an->files_alloc * 2 : 64;
		an->file =
			xrealloc(an->file, an->files_alloc * sizeof(*an->file));
	}
	g = &an->file[an->nfiles];
	memset(g, 0, sizeof(*g));
	g->path = f->path;
	g->path_len = f->path_len;
	g->system = is_system_path(f->path);
	g->first_us = g->last_us = -1;
	g->input_vertex = NO_INDEX;
	g->last_reader = g->last_writer = NO_INDEX;
	hmap_put(&an->by_path, f->path, f->path_len, an->nfiles);
	return an->nfiles++;
}

static void add_ref(struct gfile *g, size_t task, size_t file,
		    const struct tfile *f)
{
	if (g->nrefs == g->refs_alloc) {
		g->refs_alloc = g->refs_alloc ? g->refs_alloc * 2 : 4;
		g->ref = xrealloc(g->ref, g->refs_alloc * sizeof(*g->ref));
	}
	/* Records come in task order: a repeat follows its task's first. */
	if (!g->nrefs || g->ref[g->nrefs - 1].task != task)
		g->ntasks++;
	g->ref[g->nrefs++] = (struct file_ref){ task, file };
	g->bytes_read += f->rd.bytes;
	g->bytes_written += f->wr.bytes;
	g->reads += f->rd.pos.placed;
	g->placed_read += f->rd.pos.placed_bytes;
	g->writes += f->wr.pos.placed;
	if (f->rd.ops > 0 && g->last_reader != task) {
		g->readers++;
		g->last_reader = task;
	}
	if ((f->wr.ops > 0 || f->created_us >= 0) && g->last_writer != task) {
		g->writers++;
		g->last_writer = task;
	}
	if (f->executed)
		g->system = true;
	if ((uint64_t)(f->rd.pos.max_byte + 1) > g->max_distinct)
		g->max_distinct = (uint64_t)(f->rd.pos.max_byte + 1);
	if (f->first_access_us >= 0 &&
	    (g->first_us < 0 || f->first_access_us < g->first_us))
		g->first_us = f->first_access_us;
	if (f->last_access_us > g->last_us)
		g->last_us = f->last_access_us;
}

static void collect_files(struct workflow *wf, struct analysis *an)
{
	for (size_t t = 0; t < wf->ntasks; t++) {
		struct task *tk = &wf->task[t];

		for (size_t i = 0; i < tk->nfiles; i++) {
			const struct tfile *f = &tk->file[i];
			size_t g;

			if (!f->path_len)
				continue;
			g = gfile_for(an, f); /* may move an->file */
			add_ref(&an->file[g], t, i, f);
		}
	}
}

static void workflow_span(struct workflow *wf, struct analysis *an)
{
	an->t0_us = an->t1_us = -1;
	for (size_t t = 0; t < wf->ntasks; t++) {
		const struct task *tk = &wf->task[t];

		if (tk->start_us >= 0 &&
		    (an->t0_us < 0 || tk->start_us < an->t0_us))
			an->t0_us = tk->start_us;
		if (tk->end_us > an->t1_us)
			an->t1_us = tk->end_us;
	}
	if (an->t0_us < 0)
		an->t0_us = 0;
	if (an->t1_us < an->t0_us)
		an->t1_us = an->t0_us;
}

void analyze(struct workflow *wf, struct analysis *an)
{
	memset(an, 0, sizeof(*an));
	hmap_init(&an->by_path);
	workflow_span(wf, an);
	collect_files(wf, an);
	moves_collect(wf, an);
	wcp_build(wf, an);
	accesses_sample(wf, an);
}

void analysis_release(struct analysis *an)
{
	for (size_t i = 0; i < an->nfiles; i++)
		free(an->file[i].ref);
	free(an->file);
	hmap_release(&an->by_path);
	free(an->flow);
	free(an->vertex);
	free(an->edge);
	free(an->path);
	moves_release(an);
	wcp_identities_release(an);
	accesses_release(&an->acc);
	memset(an, 0, sizeof(*an));
}

const char *mutation_name(enum mutation m)
{
	static const char *const names[] = { "TRANSFER", "CONVERT", "APPEND",
					     "SPLIT",	 "MERGE",   "DELETE" };

	return names[m];
}

const char *vertex_kind_name(enum vertex_kind k)
{
	static const char *const names[] = { "start", "input", "written",
					     "deleted", "memory" };

	return names[k];
}
