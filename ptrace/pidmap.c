// SPDX-License-Identifier: MIT
#include "pidmap.h"

#include <stdlib.h>

#include "util.h"

void pidmap_init(struct pidmap *m)
{
	m->mask = 63;
	m->count = 0;
	m->slot = xcalloc(m->mask + 1, sizeof(*m->slot));
}

void pidmap_release(struct pidmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->mask = m->count = 0;
}

static size_t home(const struct pidmap *m, pid_t key)
{
	/* Fibonacci hashing spreads consecutive pids. */
	return (size_t)(((uint32_t)key * 2654435769u) >> 7) & m->mask;
}

static size_t find(const struct pidmap *m, pid_t key)
{
	size_t i = home(m, key);

	while (m->slot[i].key && m->slot[i].key != key)
		i = (i + 1) & m->mask;
	return i;
}

void *pidmap_get(const struct pidmap *m, pid_t key)
{
	size_t i = find(m, key);

	return m->slot[i].key ? m->slot[i].value : NULL;
}

static void grow(struct pidmap *m)
{
	struct pidmap_slot *old = m->slot;
	size_t old_cap = m->mask + 1;

	m->mask = old_cap * 2 - 1;
	m->slot = xcalloc(m->mask + 1, sizeof(*m->slot));
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].key)
			m->slot[find(m, old[i].key)] = old[i];
	}
	free(old);
}

void pidmap_put(struct pidmap *m, pid_t key, void *value)
{
	size_t i;

	if ((m->count + 1) * 4 > (m->mask + 1) * 3)
		grow(m);
	i = find(m, key);
	if (!m->slot[i].key)
		m->count++;
	m->slot[i].key = key;
	m->slot[i].value = value;
}

void *pidmap_remove(struct pidmap *m, pid_t key)
{
	size_t i = find(m, key), j;
	void *value;

	if (!m->slot[i].key)
		return NULL;
	value = m->slot[i].value;
	m->count--;
	/* Shift back entries whose probe run passed through slot i. */
	for (j = (i + 1) & m->mask; m->slot[j].key; j = (j + 1) & m->mask) {
		size_t h = home(m, m->slot[j].key);

		if (((j - h) & m->mask) >= ((j - i) & m->mask)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].key = 0;
	m->slot[i].value = NULL;
	return value;
}
