/* SPDX-License-Identifier: MIT */
/*
 * The seccomp filter's rules, and the BPF libseccomp compiles them into.
 *
 * libseccomp takes 1-3 ms and some 300 allocations to compile the rules,
 * the same ones at every run: that was most of what iowrap cost a short
 * task.  So it runs once, at build time: build/filtergen (filtergen.c)
 * compiles each body with filter_body_build() and writes them into
 * build/gen/filter_bodies.c, which is linked into iowrap as
 * filter_bodies[].  At run time filter.c only puts the prologue
 * (fdfilter.c) in front of the body.  libseccomp's output depends only on
 * its own syscall tables, not on the kernel it runs on.
 */
#ifndef IOWRAP_FILTERRULES_H
#define IOWRAP_FILTERRULES_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>

#include "filter.h"

enum filter_body_kind {
	FILTER_BODY_FILES, /* --level files */
	FILTER_BODY_FULL, /* --level full, every descriptor */
	FILTER_BODY_FULL_SCOPED, /* --level full, behind the scoped prologue */
	FILTER_BODY_COUNT,
};

struct filter_body {
	const struct sock_filter *insns;
	unsigned short len;
};

/* Generated (build/gen/filter_bodies.c). */
extern const struct filter_body filter_bodies[FILTER_BODY_COUNT];

/* Build time only (links libseccomp): */
/* Compiles a body into prog->filter (malloc'd); 0 or -errno. */
int filter_body_build(enum filter_body_kind kind, struct sock_fprog *prog);
/* The highest syscall number libseccomp knows for an arch. */
uint32_t filter_max_known_nr(uint32_t arch, uint32_t base);

#endif
