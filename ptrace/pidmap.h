/* SPDX-License-Identifier: MIT */
/* A map from pid to pointer: open addressing, linear probing, and
 * backward-shift deletion so that lookups never walk tombstones. */
#ifndef IOWRAP_PIDMAP_H
#define IOWRAP_PIDMAP_H

#include <stddef.h>
#include <sys/types.h>

struct pidmap_slot {
	pid_t key; /* 0: empty */
	void *value;
};

struct pidmap {
	struct pidmap_slot *slot;
	size_t mask; /* capacity - 1, capacity a power of two */
	size_t count;
};

void pidmap_init(struct pidmap *m);
void pidmap_release(struct pidmap *m);
void *pidmap_get(const struct pidmap *m, pid_t key);
void pidmap_put(struct pidmap *m, pid_t key, void *value);
void *pidmap_remove(struct pidmap *m, pid_t key);

/* Iteration: for (i = 0; i <= m->mask; i++) if (m->slot[i].key) ... */

#endif
