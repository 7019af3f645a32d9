// SPDX-License-Identifier: MIT
#include "fdtable.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* No fd above this is tracked (RLIMIT_NOFILE is far lower in practice). */
#define FD_LIMIT (1 << 20)

struct ofd *ofd_new(const char *path)
{
	struct ofd *o = xcalloc(1, sizeof(*o));

	o->refs = 1;
	o->offset = -1;
	o->fs_settles = -1;
	o->path = xstrdup(path ? path : "");
	return o;
}

void ofd_get(struct ofd *o)
{
	o->refs++;
}

void ofd_put(struct ofd *o)
{
	if (!o || --o->refs > 0)
		return;
	free(o->path);
	free(o);
}

struct fdtable *fdtable_new(void)
{
	struct fdtable *t = xcalloc(1, sizeof(*t));

	t->refs = 1;
	return t;
}

struct fdtable *fdtable_copy(const struct fdtable *t)
{
	struct fdtable *c = fdtable_new();

	if (!t || !t->size)
		return c;
	c->size = t->size;
	c->traced = t->traced;
	c->slot = xcalloc((size_t)t->size, sizeof(*c->slot));
	for (int fd = 0; fd < t->size; fd++) {
		c->slot[fd] = t->slot[fd];
		if (c->slot[fd].ofd)
			ofd_get(c->slot[fd].ofd);
	}
	return c;
}

const struct fd_numbers *fdtable_traced(const struct fdtable *t)
{
	static const struct fd_numbers none;

	return t ? &t->traced : &none;
}

void fdtable_put(struct fdtable *t)
{
	if (!t || --t->refs > 0)
		return;
	for (int fd = 0; fd < t->size; fd++)
		ofd_put(t->slot[fd].ofd);
	free(t->slot);
	free(t);
}

struct ofd *fdtable_get(const struct fdtable *t, int fd)
{
	return fd >= 0 && fd < t->size ? t->slot[fd].ofd : NULL;
}

static bool grow(struct fdtable *t, int fd)
{
	int size = t->size ? t->size : 64;

	if (fd < 0 || fd >= FD_LIMIT)
		return false;
	if (fd < t->size)
		return true;
	while (size <= fd)
		size *= 2;
	t->slot = xrealloc(t->slot, (size_t)size * sizeof(*t->slot));
	memset(t->slot + t->size, 0,
	       (size_t)(size - t->size) * sizeof(*t->slot));
	t->size = size;
	return true;
}

void fdtable_set(struct fdtable *t, int fd, struct ofd *o, bool cloexec)
{
	if (!grow(t, fd))
		return;
	ofd_get(o);
	ofd_put(t->slot[fd].ofd);
	t->slot[fd].ofd = o;
	t->slot[fd].cloexec = cloexec;
	if (o->traced)
		fd_numbers_add(&t->traced, fd);
}

void fdtable_set_cloexec(struct fdtable *t, int fd, bool cloexec)
{
	if (fdtable_get(t, fd))
		t->slot[fd].cloexec = cloexec;
}

struct ofd *fdtable_take(struct fdtable *t, int fd)
{
	struct ofd *o = fdtable_get(t, fd);

	if (o)
		t->slot[fd].ofd = NULL;
	return o;
}

void fdtable_exec(struct fdtable *t)
{
	for (int fd = 0; fd < t->size; fd++) {
		if (t->slot[fd].ofd && t->slot[fd].cloexec) {
			ofd_put(t->slot[fd].ofd);
			t->slot[fd].ofd = NULL;
		}
	}
}
