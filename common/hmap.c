// SPDX-License-Identifier: MIT
#include "hmap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/*
 * SipHash-1-3 under a key drawn once per run: trace files are hostile
 * (a report of other users' traces), and with a known hash a few
 * thousand crafted paths falling into one probe run would make the
 * report quadratic.  Keys are never ordered by hash, so the output does
 * not depend on the key.
 */
static uint64_t rotl64(uint64_t x, unsigned b)
{
	return x << b | x >> (64 - b);
}

struct sip {
	uint64_t v0, v1, v2, v3;
};

static void sip_round(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = rotl64(s->v1, 13) ^ s->v0;
	s->v0 = rotl64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl64(s->v3, 16) ^ s->v2;
	s->v0 += s->v3;
	s->v3 = rotl64(s->v3, 21) ^ s->v0;
	s->v2 += s->v1;
	s->v1 = rotl64(s->v1, 17) ^ s->v2;
	s->v2 = rotl64(s->v2, 32);
}

static void sip_absorb(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	s->v0 ^= m;
}

static const uint64_t *hash_key(void)
{
	static uint64_t key[2];
	static bool drawn;

	if (!drawn) {
		key[0] = random_u64();
		key[1] = random_u64();
		drawn = true;
	}
	return key;
}

static uint64_t hash_bytes(const void *key, size_t len)
{
	const uint64_t *k = hash_key();
	const unsigned char *p = key;
	struct sip s = { k[0] ^ 0x736f6d6570736575ull,
			 k[1] ^ 0x646f72616e646f6dull,
			 k[0] ^ 0x6c7967656e657261ull,
			 k[1] ^ 0x7465646279746573ull };
	uint64_t last = (uint64_t)len << 56;
	size_t whole = len - len % 8;

	for (size_t i = 0; i < whole; i += 8) {
		uint64_t m = 0;

		for (unsigned b = 0; b < 8; b++)
			m |= (uint64_t)p[i + b] << (8 * b);
		sip_absorb(&s, m);
	}
	for (size_t b = 0; b < len % 8; b++)
		last |= (uint64_t)p[whole + b] << (8 * b);
	sip_absorb(&s, last);
	s.v2 ^= 0xff;
	for (int r = 0; r < 3; r++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
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
