/* SPDX-License-Identifier: MIT */
/*
 * One traced operation at a time per file position and per file end.
 *
 * The offset of a read or write at the file position comes from the
 * position the tracer keeps, and that of an appending write from the
 * file's size at its exit stop.  Both are exact only if no other
 * operation on the same position, or the same file's end, runs between
 * the entry and exit stops: two threads reading one shared descriptor, or
 * two processes appending to one log, would otherwise be told each
 * other's offsets.  The kernel runs such operations one at a time anyway
 * (f_pos_lock for a shared regular file's position, the inode lock for
 * writes), so holding the second at its entry stop until the first has
 * left changes no outcome a task can rely on; it only fixes the order.
 */
#ifndef IOWRAP_OPQUEUE_H
#define IOWRAP_OPQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tracee;

struct opqueue {
	uint64_t key;
	struct tracee *holder; /* resumed, between its entry and exit */
	struct tracee *head, *tail; /* held at their entry stops, in order */
};

/* The keys in use: few (one per operation in flight), so an array. */
struct opqueues {
	struct opqueue *q;
	size_t count, alloc;
};

/* Keys: a file position by its handle id, a file's end by its inode id. */
static inline uint64_t opqueue_position_key(uint64_t handle_id)
{
	return handle_id << 1;
}

static inline uint64_t opqueue_end_key(uint64_t inode_id)
{
	return inode_id << 1 | 1;
}

/* t's operation needs key (non-zero): true if t holds it and goes on,
 * false if t is to stay stopped until opqueue_leave() hands it over.  t
 * holds no key then: every traced call it makes ends in an exit stop or
 * its death, and both leave (a key kept would make t wait on itself). */
bool opqueue_enter(struct opqueues *qs, struct tracee *t, uint64_t key);
/* t's operation is over (its exit stop) or t is gone (its death): returns
 * the tracee that now holds the key, to be resumed, or NULL. */
struct tracee *opqueue_leave(struct opqueues *qs, struct tracee *t);
void opqueue_release(struct opqueues *qs);

#endif
