/* SPDX-License-Identifier: MIT */
/*
 * Cross-task analysis: files by path across tasks, data flow between tasks
 * and the Workflow Critical Path (Nguyen and Karavanic): file versions as
 * vertices, the tasks' mutations as edges, the longest elapsed-time path by
 * dynamic programming in topological order.
 */
#ifndef IOWRAP_REPORT_ANALYZE_H
#define IOWRAP_REPORT_ANALYZE_H

#include "accesses.h"
#include "model.h"

#define NO_INDEX ((size_t)-1)

struct file_ref {
	size_t task, file; /* wf->task[task].file[file] */
};

/* One path across all tasks. */
struct gfile {
	const char *path; /* a task's copy */
	size_t path_len;
	bool system; /* programs, libraries, /etc: not workflow data */
	struct file_ref *ref;
	size_t nrefs, refs_alloc;
	uint64_t bytes_read, bytes_written;
	/* Distinct tasks: one may hold several records of a path (a name
	 * reused by a rename or a rewrite). */
	uint64_t ntasks, readers, writers;
	size_t last_reader, last_writer; /* the tasks counted last */
	uint64_t reads, writes; /* R/W with a known offset (Fig. 5) */
	uint64_t max_distinct; /* largest max_byte_read + 1 of one task */
	uint64_t placed_read; /* bytes of reads with an offset, all tasks */
	int64_t first_us, last_us; /* R/W accesses; -1: none */
	size_t input_vertex; /* WCP vertex before any traced write */
	size_t vfirst, nversions; /* its written versions, by first write */
	bool read_as_other; /* a version read under another name (a rename) */
};

/* A task read a file version another task wrote. */
struct flow {
	size_t writer, reader;
	size_t file; /* by the name the reader used */
	size_t written_as; /* the name the writer wrote it by */
	uint64_t bytes;
};

/* A task's rename or link (struct name_move), in workflow time order. */
struct move {
	const struct name_move *nm;
	size_t task;
	size_t group; /* the first move of its row: the state before it */
	size_t to; /* its destination's index in names */
	size_t src; /* the written version the name took; NO_INDEX */
};

/* A move of a name below a renamed directory, made by the report for
 * the names any task used there (moves_below.c). */
struct below_move {
	struct name_move nm;
	size_t task;
};

enum vertex_kind { V_START, V_INPUT, V_WRITTEN, V_DELETED, V_MEMORY };

/* Inputs x outputs of one task above which they meet in a memory state. */
#define WCP_MAX_PAIRS 64
enum mutation { M_TRANSFER, M_CONVERT, M_APPEND, M_SPLIT, M_MERGE, M_DELETE };

struct vertex {
	enum vertex_kind kind;
	size_t file; /* gfile; NO_INDEX for the start */
	size_t task; /* the writer or deleter; NO_INDEX */
	size_t tfile; /* that task's record of the file; NO_INDEX */
	int64_t time_us; /* when the state existed */
	int64_t first_us; /* a written version: its first write */
	int64_t size; /* bytes; -1 not known */
	/* the DP's result */
	int64_t dist_us;
	size_t pred_edge;
};

struct edge {
	size_t from, to, task;
	enum mutation mutation;
	int64_t cost_us;
};

/* A time span [from, last] over which entry k of a name's list is live,
 * and the task it is of. */
struct reach_span {
	size_t k, task;
	int64_t from, last;
};

struct reach_best; /* wcp_reach.c */

/* Per name, its spans' start and end times cut time into slots, and a
 * segment tree over them keeps, per node, the latest entry live over the
 * node's slots and the latest of another task (wcp_reach.c). */
struct reach_index {
	size_t *xfirst; /* name d's slots: x[xfirst[d] .. xfirst[d + 1]],
			 * its tree node[2 * xfirst[d] ..] */
	int64_t *x; /* each slot's first time, ascending */
	struct reach_best *node;
};

struct analysis {
	struct gfile *file;
	size_t nfiles, files_alloc;
	struct hmap by_path;
	struct flow *flow;
	size_t nflows, flows_alloc;
	struct vertex *vertex;
	size_t nvertices, vertices_alloc;
	struct edge *edge;
	size_t nedges, edges_alloc;
	uint64_t edges_dropped; /* would have gone back in time */
	struct move *move; /* by time, task, row */
	size_t nmoves;
	struct below_move *below; /* names moved with their directory */
	size_t nbelow, below_alloc;
	struct hmap names; /* a name moved to or renamed away -> index */
	size_t *name_first, *name_move; /* name k's moves, in order:
					 * name_move[name_first[k] ..
					 * name_first[k + 1]] */
	size_t nnames;
	int64_t *name_moved_us; /* name k's first move that was no symbolic
				 * link's rename; INT64_MAX: none */
	size_t *name_file_move; /* per position in name_move, the first
				 * from there in its name's moves that was
				 * no symbolic link's rename (its name's end:
				 * none) */
	size_t *name_vfirst, *name_version; /* name k's versions renamed by
					     * their writers, as above */
	struct hmap reached; /* the kernel's name of a file written
			      * through a symbolic link -> index */
	size_t *reached_vfirst, *reached_version; /* name k's versions
						   * written through links:
						   * reached_version[
						   * reached_vfirst[k] ..
						   * reached_vfirst[k + 1]] */
	struct reach_index reach; /* when each of those is under its name
				   * (wcp_reach.c) */
	struct hmap idents; /* a file's identity -> its group (wcp_ident.c) */
	size_t *ident_vfirst, *ident_version; /* group k's versions, as
					       * above */
	size_t nidents;
	size_t *path; /* WCP edge ids, start to end */
	size_t npath;
	int64_t t0_us, t1_us; /* first task start, last task end */
	struct access_sample acc; /* Fig. 5 (accesses.c) */
};

void analyze(struct workflow *wf, struct analysis *an);
void analysis_release(struct analysis *an);

const char *mutation_name(enum mutation m);
const char *vertex_kind_name(enum vertex_kind k);

/* Every task's renames and links in time order, indexed by destination
 * (moves.c). */
void moves_collect(struct workflow *wf, struct analysis *an);
/* The last move into the name, or plain rename away from it (*into
 * false), that ended by time t and comes before move bound; NO_INDEX if
 * none. */
size_t moves_last_at(const struct analysis *an, const char *path, size_t len,
		     int64_t t, size_t bound, bool *into);
/* Whether a move filled or vacated the name path by time t, not counting
 * renames of symbolic links the renaming task made: those moved no file,
 * and what leads through the name is found by where it leads. */
bool moves_name_moved_by(const struct analysis *an, const char *path,
			 size_t len, int64_t t);
/* Whether such a move filled or vacated the name path after time after,
 * and when the first did (*when). */
bool moves_name_moved_after(const struct analysis *an, const char *path,
			    size_t len, int64_t after, int64_t *when);
/* Where the file the name path led to at *since is at time until: renames
 * and exchanges of its name take it along (to the name returned, *len,
 * from *since; *bound: the first move after the last one followed); a
 * rename or link into its name replaces it (*gone_us: then, else
 * INT64_MAX). */
const char *moves_follow(const struct analysis *an, const char *path,
			 size_t *len, int64_t *since, int64_t until,
			 size_t *bound, int64_t *gone_us);
void moves_release(struct analysis *an);
/* The moves of the names below each renamed directory, to an->below
 * (moves_below.c); an->move in time order. */
void moves_below(struct workflow *wf, struct analysis *an);

/* Builds the WCP graph and its critical path (wcp.c). */
void wcp_build(struct workflow *wf, struct analysis *an);
/* Version x could be what task self read at t, and is later than best
 * (NO_INDEX: none yet): begun by t, and not self's own. */
static inline bool later_version(const struct analysis *an, size_t x,
				 size_t best, size_t self, int64_t t)
{
	const struct vertex *v = &an->vertex[x];

	return v->first_us <= t && v->task != self &&
	       (best == NO_INDEX || v->first_us > an->vertex[best].first_us);
}

/* A written version in a group (a name, a file's identity), at its
 * first write. */
struct version_ref {
	size_t group;
	int64_t first_us;
	size_t v;
};
/* The order of refs by group, then by first write; 0 where both are the
 * same (wcp.c). */
int wcp_ref_order(const struct version_ref *x, const struct version_ref *y);
/* Sorts ref[0 .. n) by cmp, which orders by group first, and lays it out
 * by group: group k's versions are (*version)[(*vfirst)[k] ..
 * (*vfirst)[k + 1]]; every group below ngroups has one (wcp.c). */
void wcp_group_versions(struct version_ref *ref, size_t n, size_t ngroups,
			int (*cmp)(const void *, const void *), size_t **vfirst,
			size_t **version);
/* Of version[lo .. hi), ordered by first write, the end of those begun
 * by t (wcp.c). */
size_t wcp_begun_by(const struct analysis *an, const size_t *version, size_t lo,
		    size_t hi, int64_t t);

/* Written versions by their files' identity, and the latest one of
 * the file record f of task self is, begun by t (wcp_ident.c). */
void wcp_index_identities(const struct workflow *wf, struct analysis *an);
size_t wcp_identity_version(const struct workflow *wf,
			    const struct analysis *an, const struct tfile *f,
			    size_t self, int64_t t);
/* Whether a version was written to the file a record is (wcp_ident.c). */
enum file_match { FILE_UNKNOWN, FILE_SAME, FILE_OTHER };
enum file_match wcp_version_file(const struct workflow *wf,
				 const struct analysis *an, size_t x,
				 const struct tfile *f, size_t self);
void wcp_identities_release(struct analysis *an);
/* The longest path by cost through the DAG in O(V + E): Kahn's
 * topological order, then one relaxation per edge (wcp_path.c). */
void wcp_longest_path(struct analysis *an);
/* Indexes names 0 .. names - 1, whose spans are span[sfirst[d] ..
 * sfirst[d + 1]], and answers: of name d's entries live at time t, the
 * latest (greatest k) not of task self; NO_INDEX if none. */
void reach_index_build(struct reach_index *ri, size_t names,
		       const size_t *sfirst, const struct reach_span *span);
size_t reach_index_latest(const struct reach_index *ri, size_t d, size_t self,
			  int64_t t);
void reach_index_release(struct reach_index *ri);

#endif
