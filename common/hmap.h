/* SPDX-License-Identifier: MIT */
/*
 * A byte-string keyed hash map from key to a caller's index (open
 * addressing, linear probing).  The report keys files by path and a task's
 * files by the trace's inode id; keys are copied, so callers may reuse
 * their buffers.
 */
#ifndef IOWRAP_COMMON_HMAP_H
#define IOWRAP_COMMON_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	char *key; /* NULL: empty */
	size_t keylen;
	uint64_t hash;
	size_t value;
};

struct hmap {
	struct hmap_slot *slot;
	size_t cap; /* a power of two */
	size_t count;
};

void hmap_init(struct hmap *m);
void hmap_release(struct hmap *m);
/* Returns the value stored under key, or (size_t)-1. */
size_t hmap_get(const struct hmap *m, const void *key, size_t keylen);
/* Stores value under key (replacing any old value); storing HMAP_NONE
 * makes the key read as absent. */
void hmap_put(struct hmap *m, const void *key, size_t keylen, size_t value);

#define HMAP_NONE ((size_t)-1)

#endif
