// SPDX-License-Identifier: MIT
#include "dirtree.h"

#include <stdlib.h>

#include "model.h"
#include "util.h"

#define NONE ((size_t)-1)

void dirtree_init(struct dirtree *dt)
{
	*dt = (struct dirtree){ 0 };
	hmap_init(&dt->ix);
}

void dirtree_release(struct dirtree *dt)
{
	hmap_release(&dt->ix);
	free(dt->node);
	free(dt->link);
	free(dt->stack);
}

static size_t node_of(struct dirtree *dt, const char *dir, size_t len)
{
	size_t n = hmap_get(&dt->ix, dir, len);

	if (n != HMAP_NONE)
		return n;
	dt->node = xgrow(dt->node, &dt->nodes_alloc, dt->nnodes,
			 sizeof(*dt->node));
	dt->node[dt->nnodes] = (struct dirnode){
		.child = NONE,
		.sibling = NONE,
		.first = NONE,
		.attached = !name_dir_len(dir, len),
	};
	hmap_put(&dt->ix, dir, len, dt->nnodes);
	return dt->nnodes++;
}

/* The node of directory dir, linked under the directories above it up
 * to one that is (a rename took it off, or it is new). */
static size_t attached_node(struct dirtree *dt, const char *dir, size_t len)
{
	size_t n = node_of(dt, dir, len), first = n;

	while (!dt->node[n].attached) {
		size_t p = node_of(dt, dir, name_dir_len(dir, len));

		dt->node[n].attached = true;
		dt->node[n].sibling = dt->node[p].child;
		dt->node[p].child = n;
		len = name_dir_len(dir, len);
		n = p;
	}
	return first;
}

void dirtree_file(struct dirtree *dt, const char *name, size_t len,
		  size_t value)
{
	size_t d = name_dir_len(name, len), n;

	if (!d)
		return;
	n = attached_node(dt, name, d);
	dt->link = xgrow(dt->link, &dt->links_alloc, dt->nlinks,
			 sizeof(*dt->link));
	dt->link[dt->nlinks] = (struct dirlink){ value, dt->node[n].first };
	dt->node[n].first = dt->nlinks++;
}

static void push(struct dirtree *dt, size_t *top, size_t n)
{
	dt->stack =
		xgrow(dt->stack, &dt->stack_alloc, *top, sizeof(*dt->stack));
	dt->stack[(*top)++] = n;
}

void dirtree_walk(struct dirtree *dt, const char *dir, size_t len, bool take,
		  void (*fn)(void *ctx, size_t value), void *ctx)
{
	size_t n = hmap_get(&dt->ix, dir, len), top = 0;

	if (n == HMAP_NONE)
		return;
	for (size_t c = dt->node[n].child; c != NONE; c = dt->node[c].sibling)
		push(dt, &top, c);
	if (take)
		dt->node[n].child = NONE;
	/* The names in dir itself are below it too. */
	for (size_t l = dt->node[n].first, x = n;;) {
		/* Indices only: fn may grow the arrays. */
		for (; l != NONE; l = dt->link[l].next)
			fn(ctx, dt->link[l].value);
		if (take) {
			dt->node[x].first = NONE;
			if (x != n) {
				dt->node[x].attached = false;
				dt->node[x].child = NONE;
			}
		}
		if (!top)
			break;
		x = dt->stack[--top];
		for (size_t c = dt->node[x].child; c != NONE;
		     c = dt->node[c].sibling)
			push(dt, &top, c);
		l = dt->node[x].first;
	}
}
