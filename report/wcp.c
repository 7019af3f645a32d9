// SPDX-License-Identifier: MIT
/*
 * The Workflow Critical Path from traces.  Vertices are data states: the
 * start of the workflow (Crux's null vertex), a file as it was before any
 * traced task wrote it ("input"), each task's version of a file it wrote,
 * and a file's removal.  Edges are the mutations a task made: from every
 * data version it read to every version it wrote.  An edge costs the
 * elapsed time from when both its input state and its task existed to the
 * output state, so idle time between tasks is not work on the path.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util.h"

static size_t add_vertex(struct analysis *an, enum vertex_kind kind,
			 size_t file, size_t task, int64_t time_us)
{
	struct vertex *v;

	if (an->nvertices == an->vertices_alloc) {
		an->vertices_alloc =
			an->vertices_alloc ? an->vertices_alloc * 2 : 64;
		an->vertex = xrealloc(an->vertex,
				      an->vertices_alloc * sizeof(*an->vertex));
	}
	v = &an->vertex[an->nvertices];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->file = file;
	v->task = task;
	v->tfile = NO_INDEX;
	v->time_us = time_us;
	v->first_us = time_us;
	v->size = -1;
	v->pred_edge = NO_INDEX;
	return an->nvertices++;
}

static void add_edge(struct workflow *wf, struct analysis *an, size_t from,
		     size_t to, size_t task, enum mutation m)
{
	const struct vertex *u = &an->vertex[from], *v = &an->vertex[to];
	int64_t ready = u->time_us;
	struct edge *e;

	if (u->time_us > v->time_us) {
		an->edges_dropped++;
		return;
	}
	if (task != NO_INDEX && wf->task[task].start_us > ready)
		ready = wf->task[task].start_us;
	if (an->nedges == an->edges_alloc) {
		an->edges_alloc = an->edges_alloc ? an->edges_alloc * 2 : 64;
		an->edge =
			xrealloc(an->edge, an->edges_alloc * sizeof(*an->edge));
	}
	e = &an->edge[an->nedges++];
	e->from = from;
	e->to = to;
	e->task = task;
	e->mutation = m;
	e->cost_us = v->time_us > ready ? v->time_us - ready : 0;
}

static bool wrote(const struct tfile *f)
{
	return (f->wr.ops && f->wr.bytes) || f->created_us >= 0;
}

static bool is_input(const struct tfile *f)
{
	if (!f->rd.ops)
		return false;
	/* Read back what the task wrote itself: not an input. */
	return !wrote(f) || f->wr.first_us < 0 ||
	       f->rd.first_us < f->wr.first_us;
}

/* Appended to a version it did not make itself: one it neither created
 * (O_EXCL) nor truncated before its first append. */
static bool appends_to_earlier(const struct tfile *f)
{
	return wrote(f) && f->appended &&
	       (f->fresh_us < 0 || f->fresh_us > f->append_us);
}

static int64_t min_known(int64_t a, int64_t b)
{
	if (a < 0)
		return b;
	return b < 0 || a < b ? a : b;
}

static void add_version(struct analysis *an, size_t g, size_t task, size_t i,
			struct tfile *f)
{
	int64_t last = f->wr.last_us > f->created_us ? f->wr.last_us :
						       f->created_us;
	size_t v = add_vertex(an, V_WRITTEN, g, task, last);

	an->vertex[v].tfile = i;
	an->vertex[v].first_us = min_known(f->wr.first_us, f->created_us);
	an->vertex[v].size = f->size_last_close >= 0 ? f->size_last_close :
						       f->wr.pos.max_byte + 1;
	f->wcp_vertex = v;
}

static int cmp_version(const void *a, const void *b)
{
	const struct vertex *x = a, *y = b;

	if (x->first_us != y->first_us)
		return x->first_us < y->first_us ? -1 : 1;
	if (x->time_us != y->time_us)
		return x->time_us < y->time_us ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

/*
 * Each record that wrote the file points at its own version; one that
 * did not, at its task's last.  A task renaming a temporary file onto
 * the same name again and again has a record, and a version, per round:
 * the rename carries that round's (move_sources), so each must keep its
 * own (when all pointed at the task's last, each rename looked its
 * source up by name instead: a time cubic in the rounds).  latest, by
 * task, is NO_INDEX on entry and on return: one pass over the versions
 * in order leaves each task's last in it (a scan of them per record was
 * refs x versions).
 */
static void link_versions(struct workflow *wf, struct analysis *an,
			  const struct gfile *gf, size_t *latest)
{
	size_t end = gf->vfirst + gf->nversions;

	for (size_t v = gf->vfirst; v < end; v++) {
		wf->task[an->vertex[v].task]
			.file[an->vertex[v].tfile]
			.wcp_vertex = v;
		latest[an->vertex[v].task] = v;
	}
	for (size_t r = 0; r < gf->nrefs; r++) {
		struct tfile *f =
			&wf->task[gf->ref[r].task].file[gf->ref[r].file];

		if (!wrote(f) && latest[gf->ref[r].task] != NO_INDEX)
			f->wcp_vertex = latest[gf->ref[r].task];
	}
	for (size_t v = gf->vfirst; v < end; v++)
		latest[an->vertex[v].task] = NO_INDEX;
}

/* Every task's written version of every data file, grouped by file and
 * ordered by first write. */
static void add_versions(struct workflow *wf, struct analysis *an)
{
	size_t *latest = xcalloc(wf->ntasks + 1, sizeof(*latest));

	for (size_t t = 0; t < wf->ntasks; t++)
		latest[t] = NO_INDEX;
	for (size_t g = 0; g < an->nfiles; g++) {
		struct gfile *gf = &an->file[g];

		gf->vfirst = an->nvertices;
		if (gf->system)
			continue;
		for (size_t r = 0; r < gf->nrefs; r++) {
			struct tfile *f =
				&wf->task[gf->ref[r].task].file[gf->ref[r].file];

			if (wrote(f))
				add_version(an, g, gf->ref[r].task,
					    gf->ref[r].file, f);
		}
		gf->nversions = an->nvertices - gf->vfirst;
		sort_array(an->vertex + gf->vfirst, gf->nversions,
			   sizeof(*an->vertex), cmp_version);
		link_versions(wf, an, gf, latest);
	}
	free(latest);
}

/* a was opened before b; a known time comes before an unknown one. */
static bool opened_before(const struct tfile *a, const struct tfile *b)
{
	return a->first_open_us >= 0 &&
	       (b->first_open_us < 0 || a->first_open_us < b->first_open_us);
}

/* The size the file had when a task first opened it, in time: a task
 * that rewrote it later (in any path order) saw another file. */
static int64_t size_before_writes(struct workflow *wf, const struct gfile *gf)
{
	const struct tfile *first = NULL;

	for (size_t r = 0; r < gf->nrefs; r++) {
		const struct tfile *f =
			&wf->task[gf->ref[r].task].file[gf->ref[r].file];

		if (f->size_first_open >= 0 &&
		    (!first || opened_before(f, first)))
			first = f;
	}
	return first ? first->size_first_open : -1;
}

static size_t input_vertex(struct workflow *wf, struct analysis *an, size_t g)
{
	struct gfile *gf = &an->file[g];

	if (gf->input_vertex == NO_INDEX) {
		gf->input_vertex =
			add_vertex(an, V_INPUT, g, NO_INDEX, an->t0_us);
		an->vertex[gf->input_vertex].size = size_before_writes(wf, gf);
		add_edge(wf, an, 0, gf->input_vertex, NO_INDEX, M_TRANSFER);
	}
	return gf->input_vertex;
}

/* The name a task's record had at its first open (or read or write, if
 * earlier): access_path if it renamed the record after, else its path. */
static const char *first_name(const struct tfile *f, size_t *len)
{
	*len = f->access_path ? f->access_path_len : f->path_len;
	return f->access_path ? f->access_path : f->path;
}

/* The name a task's record had at its first open (or read or write, if
 * earlier), and when: the name is looked up then, what it led to read
 * at time t. */
static const char *access_name(const struct tfile *f, int64_t t, size_t *len,
			       int64_t *opened)
{
	*opened = f->first_open_us >= 0 && f->first_open_us < t ?
			  f->first_open_us :
			  t;
	return first_name(f, len);
}

/* Whether move m, of a record first opened or used at time from, took it
 * from the name path to m->to. */
static bool carries_name(const struct name_move *m, int64_t from,
			 const char *path, size_t len)
{
	return m->carries && m->time_us >= from &&
	       same_name(m->from, m->from_len, path, len);
}

/*
 * The names version v had by time t, in order: its writer's record's,
 * from the name it was first opened by, through the writer's own renames
 * (and exchanges, and an O_TMPFILE's link).  Calls name() with each; the
 * last is the one it had at t.
 */
static void version_names(const struct workflow *wf, const struct vertex *v,
			  int64_t t,
			  void (*name)(void *ctx, const char *path, size_t len),
			  void *ctx)
{
	const struct task *tk = &wf->task[v->task];
	const struct tfile *f = &tk->file[v->tfile];
	int64_t from = min_known(f->first_open_us, f->first_access_us);
	size_t len;
	const char *path = first_name(f, &len);

	name(ctx, path, len);
	for (size_t i = tk->file_move_first[v->tfile];
	     i < tk->file_move_first[v->tfile + 1]; i++) {
		const struct name_move *m = &tk->move[tk->file_move[i]];

		if (m->time_us > t)
			break;
		if (carries_name(m, from, path, len)) {
			path = m->to;
			len = m->to_len;
			name(ctx, path, len);
		}
	}
}

struct last_name {
	const char *path;
	size_t len;
};

static void keep_name(void *ctx, const char *path, size_t len)
{
	struct last_name *n = ctx;

	n->path = path;
	n->len = len;
}

/* Whether version v was under the name path at time t (version_names). */
static bool named_at(const struct workflow *wf, const struct vertex *v,
		     const char *path, size_t len, int64_t t)
{
	const struct tfile *f = &wf->task[v->task].file[v->tfile];
	struct last_name n;

	if (f->renamed_us < 0)
		return same_name(f->path, f->path_len, path, len);
	version_names(wf, v, t, keep_name, &n);
	return same_name(n.path, n.len, path, len);
}

struct name_index {
	struct analysis *an;
	size_t v;
	bool fill;
};

static void index_name(void *ctx, const char *path, size_t len)
{
	struct name_index *x = ctx;
	struct analysis *an = x->an;
	size_t d = hmap_get(&an->names, path, len);

	if (d == HMAP_NONE)
		return;
	if (x->fill)
		an->name_version[an->name_vfirst[d]++] = x->v;
	else
		an->name_vfirst[d + 1]++;
}

/* Every version its writer renamed, under each name it had (moves.c's
 * names): a reader of one of them finds it, not only by its last. */
static void index_renamed(struct workflow *wf, struct analysis *an)
{
	struct name_index x = { .an = an };
	size_t n = an->nnames;

	an->name_vfirst = xcalloc(n + 2, sizeof(size_t));
	for (int pass = 0; pass < 2 && an->nmoves; pass++) {
		for (x.v = 0; x.v < an->nvertices; x.v++) {
			const struct vertex *v = &an->vertex[x.v];

			if (v->kind == V_WRITTEN &&
			    wf->task[v->task].file[v->tfile].renamed_us >= 0)
				version_names(wf, v, INT64_MAX, index_name, &x);
		}
		if (pass)
			break;
		for (size_t d = 0; d < n; d++)
			an->name_vfirst[d + 1] += an->name_vfirst[d];
		an->name_version =
			xcalloc(an->name_vfirst[n] + 1, sizeof(size_t));
		x.fill = true;
	}
	/* The fill advanced each start to the next name's: move back. */
	for (size_t d = n; d > 0 && an->name_version; d--)
		an->name_vfirst[d] = an->name_vfirst[d - 1];
	an->name_vfirst[0] = 0;
}

/* The latest version begun by t, not self's, among those its writer
 * renamed that had the name path at t; NO_INDEX if none. */
static size_t renamed_version(const struct workflow *wf,
			      const struct analysis *an, const char *path,
			      size_t len, size_t self, int64_t t)
{
	size_t d = an->nmoves ? hmap_get(&an->names, path, len) : HMAP_NONE;
	size_t best = NO_INDEX;

	if (d == HMAP_NONE || !an->name_version)
		return NO_INDEX;
	for (size_t k = an->name_vfirst[d]; k < an->name_vfirst[d + 1]; k++) {
		size_t v = an->name_version[k];

		if (later_version(an, v, best, self, t) &&
		    named_at(wf, &an->vertex[v], path, len, t))
			best = v;
	}
	return best;
}

int wcp_ref_order(const struct version_ref *x, const struct version_ref *y)
{
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return (x->first_us > y->first_us) - (x->first_us < y->first_us);
}

/* By group, each group's versions by first write, as a file's are. */
static int cmp_reached(const void *a, const void *b)
{
	const struct version_ref *x = a, *y = b;
	int c = wcp_ref_order(x, y);

	return c ? c : (x->v > y->v) - (x->v < y->v);
}

void wcp_group_versions(struct version_ref *ref, size_t n, size_t ngroups,
			int (*cmp)(const void *, const void *), size_t **vfirst,
			size_t **version)
{
	sort_array(ref, n, sizeof(*ref), cmp);
	*vfirst = xcalloc(ngroups + 1, sizeof(size_t));
	*version = xcalloc(n + 1, sizeof(size_t));
	for (size_t k = 0; k < n; k++) {
		(*version)[k] = ref[k].v;
		(*vfirst)[ref[k].group + 1] = k + 1;
	}
}

size_t wcp_begun_by(const struct analysis *an, const size_t *version, size_t lo,
		    size_t hi, int64_t t)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (an->vertex[version[mid]].first_us <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The kernel's name of the file version v's writer reached through a
 * symbolic link, its index in an->reached (added); NO_INDEX if none. */
static size_t reached_key(const struct workflow *wf, struct analysis *an,
			  size_t v, size_t *names)
{
	const struct vertex *x = &an->vertex[v];
	const struct tfile *f;
	size_t d;

	if (x->kind != V_WRITTEN)
		return NO_INDEX;
	f = &wf->task[x->task].file[x->tfile];
	if (!f->reached)
		return NO_INDEX;
	d = hmap_get(&an->reached, f->reached, f->reached_len);
	if (d == HMAP_NONE) {
		d = (*names)++;
		hmap_put(&an->reached, f->reached, f->reached_len, d);
	}
	return d;
}

/*
 * Whether the name the writer opened was itself a symbolic link (its
 * last name, not a directory on the way): the kernel's name ends in
 * another last name (`ln -s real/a out`), or the writer made the name a
 * link.  A rename onto such a name replaced the link (GNU sed -i on a
 * link does), not the file it led to.
 */
static bool opened_a_link(const struct task *writer, const struct tfile *f,
			  const char *opened, size_t len)
{
	size_t a = name_dir_len(opened, len);
	size_t b = name_dir_len(f->reached, f->reached_len);

	return !same_name(opened + a, len - a, f->reached + b,
			  f->reached_len - b) ||
	       hmap_get(&writer->symlinks, opened, len) != HMAP_NONE;
}

/* The last time version v, written through a symbolic link, can be under
 * the kernel's name its writer's open reached: where the name it opened
 * was no link itself, before the first rename by any task that filled or
 * vacated that name since the version began (`sed -i L/f`, `mv tmp L/f`
 * under a linked directory L replace the file the kernel's name holds):
 * a rename of that name may have moved the link or the file, and where
 * the file went is not known.  INT64_MAX: no such end. */
static int64_t reached_last(const struct workflow *wf,
			    const struct analysis *an, const struct vertex *v)
{
	const struct task *writer = &wf->task[v->task];
	const struct tfile *f = &writer->file[v->tfile];
	size_t len;
	const char *opened = first_name(f, &len);
	int64_t moved;

	if (opened_a_link(writer, f, opened, len) ||
	    !moves_name_moved_after(an, opened, len, v->first_us, &moved))
		return INT64_MAX;
	return moved - 1;
}

struct reach_spans {
	struct reach_span *span;
	size_t n, alloc;
	size_t k, task; /* the entry and task of those added */
	int64_t from, last; /* the times they are cut to */
};

/* [from, last] cut to [s->from, s->last], unless that is empty. */
static void add_reach_span(struct reach_spans *s, int64_t from, int64_t last)
{
	if (from < s->from)
		from = s->from;
	if (last > s->last)
		last = s->last;
	if (from > last)
		return;
	s->span = xgrow(s->span, &s->alloc, s->n, sizeof(*s->span));
	s->span[s->n++] = (struct reach_span){ s->k, s->task, from, last };
}

/*
 * The times version v is under the name its writer's record was first
 * opened by (named_at for every t), to s: version_names's name at t is
 * the one after the record's moves up to the first after t, so the name
 * a move gives holds from the latest time of the moves up to it on.
 */
static void add_named_spans(const struct workflow *wf, const struct vertex *v,
			    struct reach_spans *s)
{
	const struct task *tk = &wf->task[v->task];
	const struct tfile *f = &tk->file[v->tfile];
	int64_t from = min_known(f->first_open_us, f->first_access_us);
	int64_t seen = INT64_MIN, since = INT64_MIN;
	size_t len, plen;
	const char *opened = first_name(f, &len), *path = opened;
	bool named = true;

	if (f->renamed_us < 0) {
		if (same_name(f->path, f->path_len, opened, len))
			add_reach_span(s, INT64_MIN, INT64_MAX);
		return;
	}
	plen = len;
	for (size_t i = tk->file_move_first[v->tfile];
	     i < tk->file_move_first[v->tfile + 1]; i++) {
		const struct name_move *m = &tk->move[tk->file_move[i]];

		if (m->time_us > seen)
			seen = m->time_us;
		if (!carries_name(m, from, path, plen))
			continue;
		path = m->to;
		plen = m->to_len;
		if (named == same_name(path, plen, opened, len))
			continue;
		named = !named;
		if (named)
			since = seen;
		else if (seen > since)
			add_reach_span(s, since, seen - 1);
	}
	if (named)
		add_reach_span(s, since, INT64_MAX);
}

/* Each kernel's name's versions (index_reached), each with the times it
 * is still under the name: from its first write, while its writer has it
 * by the name it opened, and by reached_last. */
static void index_reached_spans(const struct workflow *wf, struct analysis *an,
				size_t names)
{
	struct reach_spans s = { 0 };
	size_t *sfirst = xcalloc(names + 1, sizeof(size_t));

	for (size_t d = 0; d < names; d++) {
		for (s.k = an->reached_vfirst[d];
		     s.k < an->reached_vfirst[d + 1]; s.k++) {
			const struct vertex *v =
				&an->vertex[an->reached_version[s.k]];

			s.task = v->task;
			s.from = v->first_us;
			s.last = reached_last(wf, an, v);
			add_named_spans(wf, v, &s);
		}
		sfirst[d + 1] = s.n;
	}
	reach_index_build(&an->reach, names, sfirst, s.span);
	free(sfirst);
	free(s.span);
}

/* Every version written through a symbolic link, under the kernel's name
 * of the file it reached: the writer's name is the link's, and a reader
 * by the file's own name, or through another link to it, finds it. */
static void index_reached(const struct workflow *wf, struct analysis *an)
{
	struct version_ref *ref = xcalloc(an->nvertices + 1, sizeof(*ref));
	size_t n = 0, names = 0;

	hmap_init(&an->reached);
	for (size_t v = 0; v < an->nvertices; v++) {
		size_t d = reached_key(wf, an, v, &names);

		if (d != NO_INDEX)
			ref[n++] = (struct version_ref){ d,
							 an->vertex[v].first_us,
							 v };
	}
	wcp_group_versions(ref, n, names, cmp_reached, &an->reached_vfirst,
			   &an->reached_version);
	free(ref);
	index_reached_spans(wf, an, names);
}

/* The latest version begun by t, not self's, written through a symbolic
 * link to the file named path and still under it then
 * (index_reached_spans); NO_INDEX if none. */
static size_t reached_version(const struct analysis *an, const char *path,
			      size_t len, size_t self, int64_t t)
{
	size_t d = hmap_get(&an->reached, path, len);
	size_t k;

	if (d == HMAP_NONE)
		return NO_INDEX;
	k = reach_index_latest(&an->reach, d, self, t);
	return k != NO_INDEX ? an->reached_version[k] : NO_INDEX;
}

/* The latest version written by another task (or by itself when self is
 * NO_INDEX) that had begun by time t and was under the file's path then
 * (named_at); NO_INDEX if none. */
static size_t written_version(const struct workflow *wf,
			      const struct analysis *an, size_t g, size_t self,
			      int64_t t)
{
	const struct gfile *gf = &an->file[g];
	size_t lo = 0, hi = gf->nversions;

	/* Versions are ordered by first write: binary search for the
	 * last one begun by t, then skip the task's own. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (an->vertex[gf->vfirst + mid].first_us <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0 && (an->vertex[gf->vfirst + lo - 1].task == self ||
			  !named_at(wf, &an->vertex[gf->vfirst + lo - 1],
				    gf->path, gf->path_len, t)))
		lo--;
	return lo > 0 ? gf->vfirst + lo - 1 : NO_INDEX;
}

/* Of versions v and w (either NO_INDEX: none), the one begun later; v if
 * at the same time. */
static size_t later_of(const struct analysis *an, size_t v, size_t w)
{
	if (w != NO_INDEX &&
	    (v == NO_INDEX || an->vertex[w].first_us > an->vertex[v].first_us))
		return w;
	return v;
}

/*
 * What task self (NO_INDEX: any) found at time t in the file it opened by
 * the name path at time opened (<= t).  The open chose the file: it is
 * followed through later renames and exchanges of its name, by any task,
 * to the name it had at t (moves_follow), and a rename or link into its
 * name that replaced it ends what it could hold.  Then it held the later
 * of the version the last move into that name (before move bound)
 * carried, and the latest version written by that name, or through a
 * symbolic link to the file of that name (by another task) by t.  NO_INDEX if no traced task wrote it, or a rename took it away
 * before the open.
 */
static size_t named_version(const struct workflow *wf,
			    const struct analysis *an, const char *path,
			    size_t len, size_t self, int64_t opened, int64_t t,
			    size_t bound)
{
	int64_t since = opened, gone_us;
	const char *name =
		moves_follow(an, path, &len, &since, t, &bound, &gone_us);
	size_t g = hmap_get(&an->by_path, name, len);
	bool into = false;
	size_t m = moves_last_at(an, name, len, since, bound, &into);
	size_t v, src;

	if (gone_us <= t)
		t = gone_us - 1;
	v = g != HMAP_NONE ? written_version(wf, an, g, self, t) : NO_INDEX;
	v = later_of(an, v, renamed_version(wf, an, name, len, self, t));
	v = later_of(an, v, reached_version(an, name, len, self, t));

	if (m == NO_INDEX ||
	    (v != NO_INDEX && an->vertex[v].first_us > an->move[m].nm->time_us))
		return v;
	if (!into)
		return NO_INDEX;
	src = an->move[m].src;
	/* The task's own version it was (an appender's, begun at its
	 * open): what the name held before that, for it. */
	if (src != NO_INDEX && an->vertex[src].task == self)
		src = named_version(wf, an, an->move[m].nm->from,
				    an->move[m].nm->from_len, self,
				    an->move[m].nm->time_us,
				    an->move[m].nm->time_us, an->move[m].group);
	return src;
}

/*
 * The version each move carried, in time order: the renaming task's own
 * if it had written the file by then, else what the source name held
 * before the move's row (so the two moves of an exchange see the state
 * before both).
 */
static void move_sources(struct workflow *wf, struct analysis *an)
{
	for (size_t k = 0; k < an->nmoves; k++) {
		struct move *m = &an->move[k];
		const struct name_move *nm = m->nm;
		const struct tfile *f =
			nm->tfile != NO_INDEX ?
				&wf->task[m->task].file[nm->tfile] :
				NULL;

		if (f && wrote(f) && f->wcp_vertex != NO_INDEX &&
		    an->vertex[f->wcp_vertex].first_us <= nm->time_us)
			m->src = f->wcp_vertex;
		else
			m->src = named_version(wf, an, nm->from, nm->from_len,
					       NO_INDEX, nm->time_us,
					       nm->time_us, m->group);
	}
}

/* Version v was written, by the name it has, through a symbolic link to
 * another file than the one record f's open reached (the link was made
 * anew between): if that file became f's by a rename, f's kernel's name
 * finds it. */
static bool reached_other(const struct workflow *wf, const struct vertex *v,
			  const struct tfile *f)
{
	const struct tfile *w = &wf->task[v->task].file[v->tfile];

	return w->reached && w->renamed_us < 0 &&
	       !same_name(w->reached, w->reached_len, f->reached,
			  f->reached_len);
}

/*
 * named_version of the name record f (NULL: none) was opened by, and if
 * its open went through a symbolic link and no move filled or vacated the
 * name by t, of the kernel's name for the file the open reached (a
 * Nextflow task's staged input, a link to an earlier task's output), from
 * the same times: the later of the two.  The kernel's name is where the
 * file was; the task's name may hold a stale version (a link made where a
 * file was: the unlink of another task does not end a name), and holds
 * none of the file's if it was written through the name when that led to
 * another file (the link was made anew).  But a name with moves has a
 * history the kernel's name lacks: `mv $L/ext $L/out` under a linked
 * directory $L replaced what the kernel's name of out held.
 */
static size_t version_by_names(const struct workflow *wf,
			       const struct analysis *an, const struct tfile *f,
			       const char *name, size_t len, size_t self,
			       int64_t opened, int64_t t)
{
	size_t v =
		named_version(wf, an, name, len, self, opened, t, an->nmoves);
	size_t k;

	if (!f || !f->reached || moves_name_moved_by(an, name, len, t))
		return v;
	k = named_version(wf, an, f->reached, f->reached_len, self, opened, t,
			  an->nmoves);
	if (v != NO_INDEX && reached_other(wf, &an->vertex[v], f))
		v = NO_INDEX;
	return later_of(an, v, k);
}

/*
 * The version task self's record f read (or appended to) at time t.  Where
 * its names found one (version_by_names) and both that version's writer's
 * record and f have a known identity, the file decides: a version of
 * another file (moved or linked onto the name where no trace saw it, or
 * the name's stale version after an unlink) was not read, the file's
 * latest by identity was; a version of this file was, unless the file
 * was written later through another name.  Unknown: the names' version.
 * Where the names found none, the file's latest by identity.
 */
static size_t found_version(const struct workflow *wf,
			    const struct analysis *an, const struct tfile *f,
			    const char *name, size_t len, size_t self,
			    int64_t opened, int64_t t)
{
	size_t v = version_by_names(wf, an, f, name, len, self, opened, t);
	enum file_match m;

	if (v == NO_INDEX)
		return wcp_identity_version(wf, an, f, self, t);
	m = wcp_version_file(wf, an, v, f, self);
	if (m == FILE_UNKNOWN)
		return v;
	return later_of(an, m == FILE_SAME ? v : NO_INDEX,
			wcp_identity_version(wf, an, f, self, t));
}

/* The version a task saw at time t in file g, opened by that name then
 * (record f's, if not NULL): a written one, else the input. */
static size_t seen_version(struct workflow *wf, struct analysis *an, size_t g,
			   const struct tfile *f, const char *name, size_t len,
			   size_t self, int64_t opened, int64_t t)
{
	size_t v = found_version(wf, an, f, name, len, self, opened, t);

	return v != NO_INDEX ? v : input_vertex(wf, an, g);
}

/*
 * The version a task appended to, or NO_INDEX when there was none to
 * speak of: no task had written the file and it was empty when the task
 * opened it.  io.csv cannot tell `>> newlog` creating the file from an
 * append to an empty one; either way no data came before.
 */
static size_t appended_version(struct workflow *wf, struct analysis *an,
			       size_t g, size_t self, const struct tfile *f)
{
	size_t len;
	int64_t opened;
	const char *name = access_name(f, f->wr.first_us, &len, &opened);
	size_t v = found_version(wf, an, f, name, len, self, opened,
				 f->wr.first_us);

	if (v != NO_INDEX)
		return v;
	return f->size_first_open == 0 ? NO_INDEX : input_vertex(wf, an, g);
}

struct task_io {
	size_t *in_v, *in_f; /* input vertices and the task's file records */
	size_t *out_v, *out_f;
	size_t nin, nout;
};

static size_t gfile_of(struct analysis *an, const struct tfile *f)
{
	return f->path_len ? hmap_get(&an->by_path, f->path, f->path_len) :
			     HMAP_NONE;
}

static void find_task_io(struct workflow *wf, struct analysis *an, size_t t,
			 struct task_io *io)
{
	struct task *tk = &wf->task[t];

	io->nin = io->nout = 0;
	for (size_t i = 0; i < tk->nfiles; i++) {
		const struct tfile *f = &tk->file[i];
		size_t g = gfile_of(an, f);

		if (g == HMAP_NONE || an->file[g].system)
			continue;
		if (is_input(f)) {
			size_t len;
			int64_t opened;
			const char *name =
				access_name(f, f->read_at_us, &len, &opened);

			io->in_v[io->nin] = seen_version(wf, an, g, f, name,
							 len, t, opened,
							 f->read_at_us);
			io->in_f[io->nin++] = i;
		} else if (appends_to_earlier(f)) {
			/* Appending builds on the version before. */
			io->in_v[io->nin] = appended_version(wf, an, g, t, f);
			if (io->in_v[io->nin] != NO_INDEX)
				io->in_f[io->nin++] = i;
		}
		if (wrote(f)) {
			io->out_v[io->nout] = f->wcp_vertex;
			io->out_f[io->nout++] = i;
		}
	}
}

static enum mutation classify(struct analysis *an, const struct task *tk,
			      const struct task_io *io, size_t i, size_t o)
{
	const struct tfile *fi = &tk->file[io->in_f[i]];
	const struct tfile *fo = &tk->file[io->out_f[o]];

	/* The same file, maybe by another name (renamed before). */
	if (io->in_f[i] == io->out_f[o] ||
	    an->vertex[io->in_v[i]].file == an->vertex[io->out_v[o]].file)
		return fo->appended ? M_APPEND : M_CONVERT;
	if (io->nin > 1)
		return M_MERGE;
	if (io->nout > 1)
		return M_SPLIT;
	/* One in, one out: a copy (cp, stage-in) reads all of its input
	 * and writes as many bytes; anything else changed the data. */
	if (fo->wr.bytes == fi->rd.bytes &&
	    (int64_t)fi->rd.bytes >= an->vertex[io->in_v[i]].size)
		return M_TRANSFER;
	return M_CONVERT;
}

static void add_flows(struct workflow *wf, struct analysis *an, size_t t,
		      const struct task_io *io)
{
	for (size_t i = 0; i < io->nin; i++) {
		const struct vertex *v = &an->vertex[io->in_v[i]];
		const struct tfile *f = &wf->task[t].file[io->in_f[i]];
		struct flow *fl;

		/* An append alone depends on the version but reads none of
		 * it; a read, before or after the append, reads it. */
		if (v->kind != V_WRITTEN || v->task == t || !f->rd.ops)
			continue;
		if (an->nflows == an->flows_alloc) {
			an->flows_alloc =
				an->flows_alloc ? an->flows_alloc * 2 : 64;
			an->flow = xrealloc(
				an->flow, an->flows_alloc * sizeof(*an->flow));
		}
		fl = &an->flow[an->nflows++];
		fl->writer = v->task;
		fl->reader = t;
		fl->file = gfile_of(an, f);
		fl->written_as = v->file;
		fl->bytes = f->rd.bytes;
		if (fl->file != v->file)
			an->file[v->file].read_as_other = true;
	}
}

static void add_deletions(struct workflow *wf, struct analysis *an, size_t t)
{
	struct task *tk = &wf->task[t];

	for (size_t i = 0; i < tk->nfiles; i++) {
		const struct tfile *f = &tk->file[i];
		size_t g = gfile_of(an, f);
		size_t cur, del;

		if (f->unlink_us < 0 || g == HMAP_NONE || an->file[g].system)
			continue;
		cur = seen_version(wf, an, g, NULL, f->path, f->path_len,
				   NO_INDEX, f->unlink_us, f->unlink_us);
		del = add_vertex(an, V_DELETED, g, t, f->unlink_us);
		an->vertex[del].size = 0;
		an->vertex[del].tfile = i;
		add_edge(wf, an, cur, del, t, M_DELETE);
	}
}

/*
 * A task that reads many files and writes many would need every pair as
 * an edge.  Past WCP_MAX_PAIRS its data goes through one state in the
 * task's memory, as Crux models a load: inputs MERGE into it, outputs
 * SPLIT from it.  A path through it is exactly as long as the direct edge
 * (its time is the latest input's, or the task's start), but an output
 * written before that time loses its in-edges (counted as dropped).
 */
static void add_memory_hub(struct workflow *wf, struct analysis *an, size_t t,
			   const struct task_io *io)
{
	int64_t when = wf->task[t].start_us;
	size_t hub;

	for (size_t i = 0; i < io->nin; i++)
		if (an->vertex[io->in_v[i]].time_us > when)
			when = an->vertex[io->in_v[i]].time_us;
	hub = add_vertex(an, V_MEMORY, NO_INDEX, t, when);
	for (size_t i = 0; i < io->nin; i++)
		add_edge(wf, an, io->in_v[i], hub, t, M_MERGE);
	for (size_t o = 0; o < io->nout; o++)
		add_edge(wf, an, hub, io->out_v[o], t, M_SPLIT);
}

static void add_task_mutations(struct workflow *wf, struct analysis *an,
			       size_t t, struct task_io *io)
{
	const struct task *tk = &wf->task[t];

	find_task_io(wf, an, t, io);
	add_flows(wf, an, t, io);
	if (io->nin * io->nout > WCP_MAX_PAIRS) {
		add_memory_hub(wf, an, t, io);
		add_deletions(wf, an, t);
		return;
	}
	for (size_t o = 0; o < io->nout; o++) {
		if (!io->nin)
			add_edge(wf, an, 0, io->out_v[o], t, M_CONVERT);
		for (size_t i = 0; i < io->nin; i++)
			add_edge(wf, an, io->in_v[i], io->out_v[o], t,
				 classify(an, tk, io, i, o));
	}
	add_deletions(wf, an, t);
}

static void reset_versions(struct workflow *wf)
{
	for (size_t t = 0; t < wf->ntasks; t++)
		for (size_t i = 0; i < wf->task[t].nfiles; i++)
			wf->task[t].file[i].wcp_vertex = NO_INDEX;
}

void wcp_build(struct workflow *wf, struct analysis *an)
{
	struct task_io io;
	size_t most = 1;

	reset_versions(wf);
	add_vertex(an, V_START, NO_INDEX, NO_INDEX, an->t0_us);
	add_versions(wf, an);
	index_renamed(wf, an);
	index_reached(wf, an);
	wcp_index_identities(wf, an);
	move_sources(wf, an);
	for (size_t t = 0; t < wf->ntasks; t++)
		if (wf->task[t].nfiles > most)
			most = wf->task[t].nfiles;
	io.in_v = xcalloc(most, sizeof(size_t));
	io.in_f = xcalloc(most, sizeof(size_t));
	io.out_v = xcalloc(most, sizeof(size_t));
	io.out_f = xcalloc(most, sizeof(size_t));
	for (size_t t = 0; t < wf->ntasks; t++)
		add_task_mutations(wf, an, t, &io);
	free(io.in_v);
	free(io.in_f);
	free(io.out_v);
	free(io.out_f);
	wcp_longest_path(an);
}
