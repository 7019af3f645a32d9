// SPDX-License-Identifier: MIT
/*
 * Longest path in a DAG in linear time.  Crux ran a shortest-path search
 * on inverse costs and patched MERGE by hand; on a DAG the longest path
 * needs no trick: visit vertices in topological order and relax each
 * edge once.  Among equally long ways into a vertex the one from the
 * later state wins: at a MERGE that is the input that arrived last, the
 * paper's rule.
 */
#include <stdlib.h>

#include "analyze.h"
#include "util.h"

struct csr {
	size_t *first; /* out-edges of v: id[first[v] .. first[v+1]) */
	size_t *id;
};

static void build_csr(const struct analysis *an, struct csr *g, size_t *indeg)
{
	size_t n = an->nvertices;

	g->first = xcalloc(n + 1, sizeof(size_t));
	g->id = xcalloc(an->nedges ? an->nedges : 1, sizeof(size_t));
	for (size_t e = 0; e < an->nedges; e++) {
		g->first[an->edge[e].from + 1]++;
		indeg[an->edge[e].to]++;
	}
	for (size_t v = 0; v < n; v++)
		g->first[v + 1] += g->first[v];
	{
		size_t *fill = xcalloc(n + 1, sizeof(size_t));

		for (size_t e = 0; e < an->nedges; e++) {
			size_t u = an->edge[e].from;

			g->id[g->first[u] + fill[u]++] = e;
		}
		free(fill);
	}
}

/* Whether edge e is a better way into its target than the current one. */
static bool better(const struct analysis *an, size_t e, int64_t cand)
{
	const struct vertex *v = &an->vertex[an->edge[e].to];
	const struct edge *cur;

	if (v->pred_edge == NO_INDEX)
		return cand >= v->dist_us;
	if (cand != v->dist_us)
		return cand > v->dist_us;
	cur = &an->edge[v->pred_edge];
	if (an->vertex[an->edge[e].from].time_us !=
	    an->vertex[cur->from].time_us)
		return an->vertex[an->edge[e].from].time_us >
		       an->vertex[cur->from].time_us;
	return an->edge[e].from < cur->from;
}

static void relax_in_topological_order(struct analysis *an, const struct csr *g,
				       size_t *indeg)
{
	size_t n = an->nvertices, head = 0, tail = 0;
	size_t *queue = xcalloc(n ? n : 1, sizeof(size_t));

	for (size_t v = 0; v < n; v++)
		if (!indeg[v])
			queue[tail++] = v;
	while (head < tail) {
		size_t u = queue[head++];

		for (size_t k = g->first[u]; k < g->first[u + 1]; k++) {
			size_t e = g->id[k];
			struct vertex *v = &an->vertex[an->edge[e].to];
			int64_t cand =
				an->vertex[u].dist_us + an->edge[e].cost_us;

			if (better(an, e, cand)) {
				v->dist_us = cand;
				v->pred_edge = e;
			}
			if (!--indeg[an->edge[e].to])
				queue[tail++] = an->edge[e].to;
		}
	}
	free(queue);
}

static size_t path_end(const struct analysis *an)
{
	size_t best = 0;

	for (size_t v = 1; v < an->nvertices; v++) {
		const struct vertex *a = &an->vertex[v], *b = &an->vertex[best];

		if (a->dist_us > b->dist_us ||
		    (a->dist_us == b->dist_us && a->time_us > b->time_us))
			best = v;
	}
	return best;
}

static void trace_back(struct analysis *an, size_t end)
{
	size_t n = 0;

	for (size_t v = end; an->vertex[v].pred_edge != NO_INDEX;
	     v = an->edge[an->vertex[v].pred_edge].from)
		n++;
	an->path = xcalloc(n ? n : 1, sizeof(size_t));
	an->npath = n;
	for (size_t v = end; an->vertex[v].pred_edge != NO_INDEX;
	     v = an->edge[an->vertex[v].pred_edge].from)
		an->path[--n] = an->vertex[v].pred_edge;
}

void wcp_longest_path(struct analysis *an)
{
	struct csr g;
	size_t *indeg = xcalloc(an->nvertices + 1, sizeof(size_t));

	for (size_t v = 0; v < an->nvertices; v++) {
		an->vertex[v].dist_us = 0;
		an->vertex[v].pred_edge = NO_INDEX;
	}
	build_csr(an, &g, indeg);
	relax_in_topological_order(an, &g, indeg);
	trace_back(an, path_end(an));
	free(g.first);
	free(g.id);
	free(indeg);
}
