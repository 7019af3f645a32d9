// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <stdlib.h>

#include "pidmap.h"
#include "unit.h"

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static void *ptr(uintptr_t v)
{
	return (void *)v;
}

static size_t occupied(const struct pidmap *m)
{
	size_t n = 0;

	for (size_t i = 0; i <= m->mask; i++)
		n += m->slot[i].key != 0;
	return n;
}

static void pidmap_basics(void)
{
	struct pidmap m;
	int x, y;

	pidmap_init(&m);
	CHECK_UINT(m.count, 0);
	CHECK(pidmap_get(&m, 1) == NULL);
	CHECK(pidmap_remove(&m, 1) == NULL);
	pidmap_put(&m, 1, &x);
	pidmap_put(&m, 4194304, &y);
	pidmap_put(&m, 2147483647, &x);
	CHECK_UINT(m.count, 3);
	CHECK(pidmap_get(&m, 1) == &x);
	CHECK(pidmap_get(&m, 4194304) == &y);
	CHECK(pidmap_get(&m, 2147483647) == &x);
	CHECK(pidmap_get(&m, 2) == NULL);
	/* put on an existing key replaces the value */
	pidmap_put(&m, 1, &y);
	CHECK_UINT(m.count, 3);
	CHECK(pidmap_get(&m, 1) == &y);
	CHECK(pidmap_remove(&m, 1) == &y);
	CHECK_UINT(m.count, 2);
	CHECK(pidmap_get(&m, 1) == NULL);
	CHECK(pidmap_remove(&m, 1) == NULL);
	CHECK_UINT(m.count, 2);
	CHECK(pidmap_get(&m, 4194304) == &y);
	CHECK_UINT(occupied(&m), 2);
	pidmap_release(&m);
	CHECK(m.slot == NULL);
	CHECK_UINT(m.count, 0);
}

static void pidmap_growth(void)
{
	struct pidmap m;
	size_t cap0;
	bool ok = true;

	pidmap_init(&m);
	cap0 = m.mask + 1;
	CHECK((cap0 & (cap0 - 1)) == 0);
	for (pid_t k = 1; k <= 100000; k++)
		pidmap_put(&m, k, ptr((uintptr_t)k * 8));
	CHECK_UINT(m.count, 100000);
	CHECK(m.mask + 1 > cap0);
	CHECK(((m.mask + 1) & m.mask) == 0);
	/* never fuller than 3/4 */
	CHECK(m.count * 4 <= (m.mask + 1) * 3);
	CHECK_UINT(occupied(&m), 100000);
	for (pid_t k = 1; k <= 100000 && ok; k++)
		ok = CHECK(pidmap_get(&m, k) == ptr((uintptr_t)k * 8));
	CHECK(pidmap_get(&m, 100001) == NULL);
	/* remove the odd keys: the even ones stay */
	for (pid_t k = 1; k <= 100000 && ok; k += 2)
		ok = CHECK(pidmap_remove(&m, k) == ptr((uintptr_t)k * 8));
	CHECK_UINT(m.count, 50000);
	CHECK_UINT(occupied(&m), 50000);
	for (pid_t k = 1; k <= 100000 && ok; k++)
		ok = CHECK(pidmap_get(&m, k) ==
			   (k % 2 ? NULL : ptr((uintptr_t)k * 8)));
	pidmap_release(&m);
}

/*
 * Keys that all have the same home slot, whatever the capacity (up to
 * 2^25): key * 2654435769 (mod 2^32) lands in one 128-aligned window.
 * This follows the hash in pidmap.c; if it changes, the keys are merely
 * ordinary ones.  Returns how many were stored (positive pids only).
 */
static size_t cluster_keys(uint32_t window, pid_t *out, size_t max)
{
	const uint32_t c = 2654435769u;
	uint32_t inv = c;
	size_t n = 0;

	for (int i = 0; i < 5; i++)
		inv *= 2 - c * inv;
	for (uint32_t t = 0; t < 128 && n < max; t++) {
		uint32_t k = inv * ((window << 7) + t);

		if (k != 0 && k <= INT32_MAX)
			out[n++] = (pid_t)k;
	}
	return n;
}

enum { MAX_KEYS = 8000 };

struct model {
	pid_t key[MAX_KEYS];
	bool present[MAX_KEYS];
	void *value[MAX_KEYS];
	size_t nkeys, count;
};

static void add_key(struct model *md, pid_t k)
{
	for (size_t i = 0; i < md->nkeys; i++)
		if (md->key[i] == k)
			return;
	if (md->nkeys < MAX_KEYS)
		md->key[md->nkeys++] = k;
}

/* Every key of the model is found with its value, and nothing else. */
static bool check_all(const struct pidmap *m, const struct model *md)
{
	for (size_t i = 0; i < md->nkeys; i++) {
		void *want = md->present[i] ? md->value[i] : NULL;

		if (!CHECK(pidmap_get(m, md->key[i]) == want)) {
			unit_note("key %d, %s", (int)md->key[i],
				  md->present[i] ? "present" : "absent");
			return false;
		}
	}
	return CHECK_UINT(m->count, md->count) &&
	       CHECK_UINT(occupied(m), md->count);
}

static void pidmap_random_against_model(void)
{
	static struct model md;
	struct pidmap m;
	uintptr_t gen = 1;
	pid_t cl[128];
	size_t n;
	size_t max_cap = 0, max_count = 0;

	rng_state = 0x9e3779b97f4a7c15ull;
	/* consecutive pids, random pids, and two collision clusters, one
	 * homed on the last slot so that probe runs wrap around */
	for (pid_t k = 1; k <= 3000; k++)
		add_key(&md, k);
	while (md.nkeys < 5500)
		add_key(&md, (pid_t)(1 + rng() % INT32_MAX));
	n = cluster_keys(0x1ffffff, cl, 128);
	for (size_t i = 0; i < n; i++)
		add_key(&md, cl[i]);
	n = cluster_keys(0x123, cl, 128);
	for (size_t i = 0; i < n; i++)
		add_key(&md, cl[i]);

	pidmap_init(&m);
	for (int op = 0; op < 100000; op++) {
		/* fill up, churn, then drain */
		unsigned put_pct = op < 30000 ? 75 : op < 70000 ? 50 : 20;
		size_t i = rng() % 10 < 3 ? md.nkeys - 1 - rng() % 128 :
					    rng() % md.nkeys;
		unsigned r = rng() % 100;
		pid_t k = md.key[i];

		if (r < put_pct) {
			void *v = ptr(gen++ * 16);

			pidmap_put(&m, k, v);
			if (!md.present[i])
				md.count++;
			md.present[i] = true;
			md.value[i] = v;
			if (!CHECK(pidmap_get(&m, k) == v))
				goto fail;
		} else if (r < put_pct + (100 - put_pct) * 3 / 4) {
			void *want = md.present[i] ? md.value[i] : NULL;

			if (!CHECK(pidmap_remove(&m, k) == want))
				goto fail;
			if (md.present[i])
				md.count--;
			md.present[i] = false;
			md.value[i] = NULL;
		} else {
			if (!CHECK(pidmap_get(&m, k) ==
				   (md.present[i] ? md.value[i] : NULL)))
				goto fail;
		}
		if (!CHECK_UINT(m.count, md.count))
			goto fail;
		if (m.mask + 1 > max_cap)
			max_cap = m.mask + 1;
		if (md.count > max_count)
			max_count = md.count;
		if (op % 1000 == 999 && !check_all(&m, &md))
			goto fail;
	}
	check_all(&m, &md);
	/* it grew well past its first size, and emptied again */
	CHECK(max_cap >= 4096);
	CHECK(md.count * 2 < max_count);
	pidmap_release(&m);
	return;
fail:
	unit_note("operation failed; map count %zu, model count %zu", m.count,
		  md.count);
	pidmap_release(&m);
}

/*
 * Removing from the middle of long probe runs keeps every other key
 * reachable (the backward shift moves the right entries, and only those).
 */
static void pidmap_cluster_removal(void)
{
	pid_t keys[3 * 128 + 40];
	size_t n = 0;
	struct pidmap m;
	bool in[3 * 128 + 40];

	rng_state = 7;
	n += cluster_keys(0x1ffffff, keys + n, 128);
	n += cluster_keys(0x1fffffe, keys + n, 128);
	n += cluster_keys(0x0, keys + n, 128);
	/* ordinary neighbours interleaved in the same runs */
	for (pid_t k = 1; k <= 40; k++)
		keys[n++] = k;
	for (int round = 0; round < 20; round++) {
		pidmap_init(&m);
		/* insert in a random order */
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = rng() % (i + 1);
			pid_t t = keys[i];

			keys[i] = keys[j];
			keys[j] = t;
		}
		for (size_t i = 0; i < n; i++) {
			pidmap_put(&m, keys[i], ptr((uintptr_t)keys[i]));
			in[i] = true;
		}
		CHECK_UINT(m.count, n);
		/* remove in another random order, checking all after each */
		for (size_t left = n; left > 0; left--) {
			size_t pick = rng() % left, i;

			for (i = 0; i < n; i++)
				if (in[i] && pick-- == 0)
					break;
			if (!CHECK(pidmap_remove(&m, keys[i]) ==
				   ptr((uintptr_t)keys[i])))
				goto fail;
			in[i] = false;
			for (size_t j = 0; j < n; j++) {
				void *want = in[j] ? ptr((uintptr_t)keys[j]) :
						     NULL;

				if (!CHECK(pidmap_get(&m, keys[j]) == want)) {
					unit_note("key %d after removing %d",
						  (int)keys[j], (int)keys[i]);
					goto fail;
				}
			}
		}
		CHECK_UINT(m.count, 0);
		CHECK_UINT(occupied(&m), 0);
		pidmap_release(&m);
	}
	return;
fail:
	unit_note("round with %zu keys", n);
	pidmap_release(&m);
}

const struct unit_test pidmap_tests[] = {
	UNIT_TEST(pidmap_basics),
	UNIT_TEST(pidmap_growth),
	UNIT_TEST(pidmap_random_against_model),
	UNIT_TEST(pidmap_cluster_removal),
	UNIT_END,
};
