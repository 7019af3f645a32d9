// SPDX-License-Identifier: MIT
#include "hmap.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* FNV-1a: short keys (paths, 8-byte ids) and no adversary that gains by
 * collisions beyond a slower report. */
static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	return h;
}

void hmap_init(struct hmap *m)
{
	m->slot = NULL;
	m->cap = 0;
	m->count = 0;
}

void hmap_release(struct hmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slot[i].key);
	free(m->slot);
	hmap_init(m);
}

static struct hmap_slot *find_slot(const struct hmap *m, const void *key,
				   size_t keylen, uint64_t hash)
{
	size_t i = hash & (m->cap - 1);

	for (;;) {
		struct hmap_slot *s = &m->slot[i];

		if (!s->key || (s->hash == hash && s->keylen == keylen &&
				memcmp(s->key, key, keylen) == 0))
			return s;
		i = (i + 1) & (m->cap - 1);
	}
}

static void grow(struct hmap *m)
{
	struct hmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->slot = xcalloc(m->cap, sizeof(*m->slot));
	for (size_t i = 0; i < old.cap; i++) {
		struct hmap_slot *o = &old.slot[i];

		if (o->key)
			*find_slot(m, o->key, o->keylen, o->hash) = *o;
	}
	free(old.slot);
}

size_t hmap_get(const struct hmap *m, const void *key, size_t keylen)
{
	const struct hmap_slot *s;

	if (!m->cap)
		return HMAP_NONE;
	s = find_slot(m, key, keylen, hash_bytes(key, keylen));
	return s->key ? s->value : HMAP_NONE;
}

void hmap_put(struct hmap *m, const void *key, size_t keylen, size_t value)
{
	uint64_t hash = hash_bytes(key, keylen);
	struct hmap_slot *s;

	if ((m->count + 1) * 4 > m->cap * 3)
		grow(m);
	s = find_slot(m, key, keylen, hash);
	if (!s->key) {
		s->key = xmalloc(keylen + 1);
		memcpy(s->key, key, keylen);
		s->key[keylen] = '\0';
		s->keylen = keylen;
		s->hash = hash;
		m->count++;
	}
	s->value = value;
}
