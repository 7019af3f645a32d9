// SPDX-License-Identifier: MIT
/*
 * Versions found by the file itself: a file moved or hard-linked outside
 * every trace (Nextflow's `stageInMode 'link'`, Snakemake's shadow
 * outputs, an admin's mv) is read by a name no task wrote, or by one
 * whose last version is another file's.  Its identity is its boot id,
 * device, inode number and birth time: an inode number is reused once its
 * file is gone, but a new file gets another birth time, and another boot
 * (another host) has another boot id.  No birth time, no identity:
 * nothing is guessed.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util.h"

/* A boot id as the kernel writes it: 8-4-4-4-12 hex digits. */
#define BOOT_ID_LEN 36
/* A key: the device (major, minor), the file on it (inode number, birth
 * time), then the boot id. */
#define DEV_LEN (2 * sizeof(uint64_t))
#define FILE_ID_LEN (2 * sizeof(uint64_t))
#define IDENT_KEY_LEN (DEV_LEN + FILE_ID_LEN + BOOT_ID_LEN)

/* Record f's identity in task tk as a key; false if it has none. */
static bool identity_key(const struct task *tk, const struct tfile *f,
			 unsigned char key[IDENT_KEY_LEN])
{
	const uint64_t id[4] = { f->dev_major, f->dev_minor, f->ino,
				 f->birth_ns };

	if (!f->birth_ns || !tk->boot_id || strlen(tk->boot_id) != BOOT_ID_LEN)
		return false;
	memcpy(key, id, sizeof(id));
	memcpy(key + sizeof(id), tk->boot_id, BOOT_ID_LEN);
	return true;
}

/* Written version x's file's identity group, made if new; HMAP_NONE if
 * its file has no identity. */
static size_t version_group(const struct workflow *wf, struct analysis *an,
			    size_t x)
{
	const struct vertex *v = &an->vertex[x];
	const struct task *tk = &wf->task[v->task];
	unsigned char key[IDENT_KEY_LEN];
	size_t g;

	if (v->kind != V_WRITTEN || !identity_key(tk, &tk->file[v->tfile], key))
		return HMAP_NONE;
	g = hmap_get(&an->idents, key, sizeof(key));
	if (g == HMAP_NONE) {
		g = an->nidents++;
		hmap_put(&an->idents, key, sizeof(key), g);
	}
	return g;
}

/* By group, each group's versions by first write, and of those begun at
 * one time the first made first: walking back from the last begun by a
 * read finds the latest, and of equals the first made. */
static int cmp_ident(const void *a, const void *b)
{
	const struct version_ref *x = a, *y = b;
	int c = wcp_ref_order(x, y);

	return c ? c : (x->v < y->v) - (x->v > y->v);
}

/* Every written version whose file has an identity, grouped by it (one
 * key per version): group g's are ident_version[ident_vfirst[g] ..
 * ident_vfirst[g + 1]], ordered by cmp_ident. */
void wcp_index_identities(const struct workflow *wf, struct analysis *an)
{
	struct version_ref *ref = xcalloc(an->nvertices + 1, sizeof(*ref));
	size_t n = 0;

	hmap_init(&an->idents);
	for (size_t x = 0; x < an->nvertices; x++) {
		size_t g = version_group(wf, an, x);

		if (g != HMAP_NONE)
			ref[n++] = (struct version_ref){ g,
							 an->vertex[x].first_us,
							 x };
	}
	wcp_group_versions(ref, n, an->nidents, cmp_ident, &an->ident_vfirst,
			   &an->ident_version);
	free(ref);
}

/*
 * Whether version x was written to the file task self's record f is: not
 * known where either has no identity or the two traces are of different
 * boots (a device number is the boot's, and a file system shared between
 * hosts is not told from a local one), never "another file" then.  Nor
 * where only the device differs: the same inode number and birth time
 * (to the nanosecond) on another device is the file system mounted again
 * from another one (a disk image attached to another loop device), or a
 * copy of it.
 */
enum file_match wcp_version_file(const struct workflow *wf,
				 const struct analysis *an, size_t x,
				 const struct tfile *f, size_t self)
{
	const struct vertex *v = &an->vertex[x];
	const struct task *writer = &wf->task[v->task];
	unsigned char a[IDENT_KEY_LEN], b[IDENT_KEY_LEN];

	if (!f || self == NO_INDEX || v->kind != V_WRITTEN ||
	    !identity_key(writer, &writer->file[v->tfile], a) ||
	    !identity_key(&wf->task[self], f, b) ||
	    memcmp(a + IDENT_KEY_LEN - BOOT_ID_LEN,
		   b + IDENT_KEY_LEN - BOOT_ID_LEN, BOOT_ID_LEN) != 0)
		return FILE_UNKNOWN;
	if (memcmp(a, b, IDENT_KEY_LEN) == 0)
		return FILE_SAME;
	return memcmp(a + DEV_LEN, b + DEV_LEN, FILE_ID_LEN) == 0 ?
		       FILE_UNKNOWN :
		       FILE_OTHER;
}

/*
 * The latest version of the file task self's record f is, by identity,
 * begun by time t and not self's own (the rules names follow:
 * written_version); NO_INDEX if none, or f or self has no identity.
 */
size_t wcp_identity_version(const struct workflow *wf,
			    const struct analysis *an, const struct tfile *f,
			    size_t self, int64_t t)
{
	unsigned char key[IDENT_KEY_LEN];
	size_t g, first, k;

	if (!f || self == NO_INDEX || !an->nidents ||
	    !identity_key(&wf->task[self], f, key))
		return NO_INDEX;
	g = hmap_get(&an->idents, key, sizeof(key));
	if (g == HMAP_NONE)
		return NO_INDEX;
	/* The last begun by t (cmp_ident), then back past self's own. */
	first = an->ident_vfirst[g];
	k = wcp_begun_by(an, an->ident_version, first, an->ident_vfirst[g + 1],
			 t);
	while (k > first && an->vertex[an->ident_version[k - 1]].task == self)
		k--;
	return k > first ? an->ident_version[k - 1] : NO_INDEX;
}

void wcp_identities_release(struct analysis *an)
{
	if (an->ident_vfirst)
		hmap_release(&an->idents);
	free(an->ident_vfirst);
	free(an->ident_version);
}
