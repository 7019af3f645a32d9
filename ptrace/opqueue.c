// SPDX-License-Identifier: MIT
#include "opqueue.h"

#include <stdlib.h>
#include <string.h>

#include "process.h"
#include "util.h"

static struct opqueue *find(struct opqueues *qs, uint64_t key)
{
	for (size_t i = 0; i < qs->count; i++)
		if (qs->q[i].key == key)
			return &qs->q[i];
	return NULL;
}

static struct opqueue *add(struct opqueues *qs, uint64_t key)
{
	if (qs->count == qs->alloc) {
		qs->alloc = qs->alloc * 2 + 4;
		qs->q = xrealloc(qs->q, qs->alloc * sizeof(*qs->q));
	}
	qs->q[qs->count] = (struct opqueue){ .key = key };
	return &qs->q[qs->count++];
}

bool opqueue_enter(struct opqueues *qs, struct tracee *t, uint64_t key)
{
	struct opqueue *q = find(qs, key);

	t->queue_key = key;
	t->queue_next = NULL;
	if (!q) {
		add(qs, key)->holder = t;
		return true;
	}
	if (q->tail)
		q->tail->queue_next = t;
	else
		q->head = t;
	q->tail = t;
	return false;
}

/* Takes t out of q's waiting list; false if it was not there. */
static bool unlink_waiter(struct opqueue *q, struct tracee *t)
{
	struct tracee *prev = NULL;

	for (struct tracee *w = q->head; w; prev = w, w = w->queue_next) {
		if (w != t)
			continue;
		if (prev)
			prev->queue_next = w->queue_next;
		else
			q->head = w->queue_next;
		if (q->tail == w)
			q->tail = prev;
		return true;
	}
	return false;
}

struct tracee *opqueue_leave(struct opqueues *qs, struct tracee *t)
{
	struct opqueue *q = t->queue_key ? find(qs, t->queue_key) : NULL;
	struct tracee *next;

	t->queue_key = 0;
	if (!q || unlink_waiter(q, t) || q->holder != t)
		return NULL;
	next = q->head;
	if (!next) {
		*q = qs->q[--qs->count]; /* the last one fills its place */
		return NULL;
	}
	q->head = next->queue_next;
	if (!q->head)
		q->tail = NULL;
	next->queue_next = NULL;
	q->holder = next;
	return next;
}

void opqueue_release(struct opqueues *qs)
{
	free(qs->q);
	memset(qs, 0, sizeof(*qs));
}
