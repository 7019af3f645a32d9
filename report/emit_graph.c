// SPDX-License-Identifier: MIT
/* report.json's cross-task sections: files, data flow, the WCP. */
#include "emit_out.h"

#include "util.h"

static void emit_gfile(struct json *j, size_t id, const struct gfile *g)
{
	uint64_t reread = gfile_reread_bytes(g);

	json_open_object(j, NULL);
	json_u64(j, "id", id);
	json_str(j, "path", g->path);
	json_bool(j, "system", g->system);
	json_u64(j, "tasks", g->ntasks);
	json_u64(j, "readers", g->readers);
	json_u64(j, "writers", g->writers);
	json_u64(j, "bytes_read", g->bytes_read);
	json_u64(j, "bytes_written", g->bytes_written);
	json_u64(j, "reread_bytes", reread);
	json_secs(j, "first_access_s", g->first_us);
	json_secs(j, "last_access_s", g->first_us >= 0 ? g->last_us : -1);
	json_open_array(j, "task_files");
	for (size_t r = 0; r < g->nrefs; r++) {
		json_open_array(j, NULL);
		json_u64(j, NULL, g->ref[r].task);
		json_u64(j, NULL, g->ref[r].file);
		json_close_array(j);
	}
	json_close_array(j);
	json_close_object(j);
}

void emit_files(struct out *o, struct workflow *wf, const struct analysis *an)
{
	(void)wf;
	json_open_array(&o->j, "files");
	for (size_t g = 0; g < an->nfiles; g++) {
		emit_gfile(&o->j, g, &an->file[g]);
		out_flush(o);
	}
	json_close_array(&o->j);
}

static uint64_t key_readers(const void *ctx, size_t i)
{
	const struct gfile *g = &((const struct analysis *)ctx)->file[i];

	return g->system ? 0 : g->readers;
}

static void emit_read_by_many(struct json *j, const struct analysis *an)
{
	size_t top[REPORT_TOP_N];
	size_t n = top_n(an->nfiles, key_readers, an, top, REPORT_TOP_N);

	json_open_array(j, "read_by_many");
	for (size_t i = 0; i < n; i++)
		if (key_readers(an, top[i]) >= 2)
			json_u64(j, NULL, top[i]);
	json_close_array(j);
}

void emit_data_flow(struct out *o, const struct analysis *an)
{
	struct json *j = &o->j;
	uint64_t reread = 0;

	json_open_object(j, "data_flow");
	json_open_array(j, "edges");
	for (size_t i = 0; i < an->nflows; i++) {
		/* Hundreds of readers of thousands of files: millions. */
		if (i % 4096 == 4095)
			out_flush(o);
		json_open_object(j, NULL);
		json_u64(j, "writer", an->flow[i].writer);
		json_u64(j, "reader", an->flow[i].reader);
		json_u64(j, "file", an->flow[i].file);
		/* Renamed or linked between writer and reader. */
		if (an->flow[i].written_as != an->flow[i].file)
			json_u64(j, "written_as", an->flow[i].written_as);
		json_u64(j, "bytes", an->flow[i].bytes);
		json_close_object(j);
	}
	json_close_array(j);
	json_open_array(j, "written_never_read");
	for (size_t g = 0; g < an->nfiles; g++) {
		const struct gfile *f = &an->file[g];

		if (!f->system && f->writers && !f->readers &&
		    !f->read_as_other)
			json_u64(j, NULL, g);
		if (!f->system)
			reread += gfile_reread_bytes(f);
	}
	json_close_array(j);
	emit_read_by_many(j, an);
	json_u64(j, "reread_bytes", reread);
	json_close_object(j);
}

/* "host:mount" of the writer's (or deleter's) view of the file; a
 * task's memory state is "host:memory"; null when no task is known. */
static void emit_location(struct json *j, const struct vertex *v,
			  struct workflow *wf)
{
	const struct task *tk;
	const char *where = "memory";
	struct strbuf loc;

	if (v->task == NO_INDEX) {
		json_null(j, "location");
		return;
	}
	tk = &wf->task[v->task];
	/* The record's own mount: its name may lead elsewhere by now. */
	if (v->file != NO_INDEX)
		where = v->tfile != NO_INDEX && tk->file[v->tfile].mount_point ?
				tk->file[v->tfile].mount_point :
				"";
	sb_init(&loc, 8192);
	sb_addf(&loc, "%s:%s", tk->host ? tk->host : "", where);
	json_str(j, "location", sb_str(&loc));
	sb_release(&loc);
}

static void emit_vertex(struct json *j, size_t id, const struct vertex *v,
			struct workflow *wf, const struct analysis *an)
{
	json_open_object(j, NULL);
	json_u64(j, "id", id);
	json_str(j, "kind", vertex_kind_name(v->kind));
	if (v->file == NO_INDEX) {
		json_null(j, "file");
		json_null(j, "path");
	} else {
		json_u64(j, "file", v->file);
		json_str(j, "path", an->file[v->file].path);
	}
	if (v->task == NO_INDEX)
		json_null(j, "task");
	else
		json_u64(j, "task", v->task);
	json_secs(j, "time_s", v->time_us);
	json_i64(j, "size", v->size);
	emit_location(j, v, wf);
	json_secs(j, "path_time_s", v->dist_us);
	json_close_object(j);
}

static void emit_edge(struct json *j, size_t id, const struct edge *e)
{
	json_open_object(j, NULL);
	json_u64(j, "id", id);
	json_u64(j, "from", e->from);
	json_u64(j, "to", e->to);
	if (e->task == NO_INDEX)
		json_null(j, "task");
	else
		json_u64(j, "task", e->task);
	json_str(j, "mutation", mutation_name(e->mutation));
	json_secs(j, "cost_s", e->cost_us);
	json_close_object(j);
}

void emit_wcp(struct out *o, struct workflow *wf, const struct analysis *an)
{
	struct json *j = &o->j;
	int64_t length = 0;

	json_open_object(j, "wcp");
	json_open_array(j, "vertices");
	for (size_t v = 0; v < an->nvertices; v++) {
		emit_vertex(j, v, &an->vertex[v], wf, an);
		out_flush(o);
	}
	json_close_array(j);
	json_open_array(j, "edges");
	for (size_t e = 0; e < an->nedges; e++) {
		emit_edge(j, e, &an->edge[e]);
		out_flush(o);
	}
	json_close_array(j);
	json_u64(j, "edges_dropped", an->edges_dropped);
	json_open_array(j, "path");
	for (size_t i = 0; i < an->npath; i++) {
		json_u64(j, NULL, an->path[i]);
		length += an->edge[an->path[i]].cost_us;
	}
	json_close_array(j);
	json_secs(j, "length_s", length);
	json_close_object(j);
}

/* [task, start_s, end_s, offset, size, "R"] on one line: report.json
 * holds up to ACCESS_MAX_TOTAL of them. */
static void emit_point(struct json *j, const struct access_point *p)
{
	struct strbuf *sb = j->sb;

	json_begin_raw(j, NULL);
	sb_addc(sb, '[');
	sb_add_u64(sb, p->task);
	sb_addc(sb, ',');
	sb_add_time_us(sb, p->start_us);
	sb_addc(sb, ',');
	sb_add_time_us(sb, p->end_us);
	sb_addc(sb, ',');
	sb_add_i64(sb, p->offset);
	sb_addc(sb, ',');
	sb_add_u64(sb, p->size);
	sb_adds(sb, p->type == 'W' ? ",\"W\"]" : ",\"R\"]");
}

static void emit_access_file(struct out *o, const struct access_sample *s,
			     const struct access_file *f)
{
	struct json *j = &o->j;

	json_open_object(j, NULL);
	json_u64(j, "file", f->file);
	json_u64(j, "total", f->total);
	json_u64(j, "reads", f->reads);
	json_u64(j, "writes", f->writes);
	json_bool(j, "sampled", f->kept < f->total);
	json_open_array(j, "points");
	for (uint64_t k = 0; k < f->kept; k++) {
		emit_point(j, &s->point[f->first + k]);
		if (k % 1024 == 1023)
			out_flush(o);
	}
	json_close_array(j);
	json_close_object(j);
	out_flush(o);
}

/* Fig. 5: the sampled accesses per file, and how they were sampled. */
void emit_accesses(struct out *o, const struct analysis *an)
{
	const struct access_sample *s = &an->acc;
	uint64_t kept = 0;

	for (size_t k = 0; k < s->nfiles; k++)
		kept += s->file[k].kept;
	json_open_object(&o->j, "access_sampling");
	json_u64(&o->j, "max_per_file", ACCESS_MAX_PER_FILE);
	json_u64(&o->j, "max_total", ACCESS_MAX_TOTAL);
	json_u64(&o->j, "files", s->nfiles);
	json_u64(&o->j, "accesses", s->total);
	json_u64(&o->j, "points", kept);
	json_u64(&o->j, "sampled_files", s->sampled_files);
	json_bool(&o->j, "sampled", kept < s->total);
	json_close_object(&o->j);
	json_open_array(&o->j, "accesses");
	for (size_t k = 0; k < s->nfiles; k++)
		emit_access_file(o, s, &s->file[k]);
	json_close_array(&o->j);
}
