// SPDX-License-Identifier: MIT
#include "dirtree.h"

#include <stdlib.h>
#include <string.h>

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
	free(dt->key);
}

/* Directory part below parent (NONE: a top one): its node, made if
 * create, else NONE where there is none. */
static size_t child_node(struct dirtree *dt, size_t parent, const char *part,
			 size_t len, bool create)
{
	size_t klen = sizeof(parent) + len, n;

	if (klen > dt->key_alloc) {
		dt->key = xrealloc(dt->key, klen);
		dt->key_alloc = klen;
	}
	memcpy(dt->key, &parent, sizeof(parent));
	memcpy(dt->key + sizeof(parent), part, len);
	n = hmap_get(&dt->ix, dt->key, klen);
	if (n != HMAP_NONE || !create)
		return n == HMAP_NONE ? NONE : n;
	dt->node = xgrow(dt->node, &dt->nodes_alloc, dt->nnodes,
			 sizeof(*dt->node));
	dt->node[dt->nnodes] = (struct dirnode){
		.child = NONE,
		.sibling = NONE,
		.first = NONE,
		.parent = parent,
		.attached = parent == NONE,
	};
	hmap_put(&dt->ix, dt->key, klen, dt->nnodes);
	return dt->nnodes++;
}

/* The node of directory dir, one part (between slashes) at a time; NONE
 * if it has none, or is not there and not to be made. */
static size_t dir_node(struct dirtree *dt, const char *dir, size_t len,
		       bool create)
{
	size_t n = NONE;

	for (size_t i = 0, j; i < len; i = j + 1) {
		for (j = i; j < len && dir[j] != '/'; j++)
			;
		if (j == i)
			continue;
		n = child_node(dt, n, dir + i, j - i, create);
		if (n == NONE)
			return NONE;
	}
	return n;
}

/* Node n linked under the directories above it up to one that is (a
 * rename took it off, or it is new). */
static void attach(struct dirtree *dt, size_t n)
{
	while (!dt->node[n].attached) {
		size_t p = dt->node[n].parent;

		dt->node[n].attached = true;
		dt->node[n].sibling = dt->node[p].child;
		dt->node[p].child = n;
		n = p;
	}
}

void dirtree_file(struct dirtree *dt, const char *name, size_t len,
		  size_t value)
{
	size_t d = name_dir_len(name, len), n;

	if (!d)
		return;
	n = dir_node(dt, name, d, true);
	if (n == NONE)
		return;
	attach(dt, n);
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
	size_t n = dir_node(dt, dir, len, false), top = 0;

	if (n == NONE)
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
