/* SPDX-License-Identifier: MIT */
/*
 * Values (a task's records, the workflow's names) filed under the
 * directory of a name, to find every one below a directory that a rename
 * moves.  A rename empties the directory it moves: what was below it is
 * taken, so the next rename of that name sees only what came there since,
 * and each filing is walked over at most once (an exchange, which leaves
 * something under both names, takes nothing).
 */
#ifndef IOWRAP_REPORT_DIRTREE_H
#define IOWRAP_REPORT_DIRTREE_H

#include <stdbool.h>
#include <stddef.h>

#include "hmap.h"

struct dirnode {
	size_t child, sibling; /* subdirectories; (size_t)-1: none */
	size_t first; /* the first value filed directly in it */
	size_t parent; /* (size_t)-1: a top directory */
	bool attached; /* under its parent (a top directory: always) */
};

struct dirlink {
	size_t value, next;
};

struct dirtree {
	/* (parent node, a directory's last name) -> its node: a deep tree
	 * costs each name's bytes once, not each directory's whole path
	 * (2,000 names 120 levels deep in a hostile trace: 1 GB so). */
	struct hmap ix;
	char *key; /* a lookup's */
	size_t key_alloc;
	struct dirnode *node;
	size_t nnodes, nodes_alloc;
	struct dirlink *link;
	size_t nlinks, links_alloc;
	size_t *stack; /* a walk's */
	size_t stack_alloc;
};

void dirtree_init(struct dirtree *dt);
void dirtree_release(struct dirtree *dt);
/* Files value under the directory of name (none: nowhere). */
void dirtree_file(struct dirtree *dt, const char *name, size_t len,
		  size_t value);
/* Calls fn with every value filed below the directory dir, at any depth
 * (maybe twice, and maybe since moved: fn checks); with take, they are
 * no longer below it after.  fn may file values, not below dir. */
void dirtree_walk(struct dirtree *dt, const char *dir, size_t len, bool take,
		  void (*fn)(void *ctx, size_t value), void *ctx);

#endif
