// SPDX-License-Identifier: MIT
#include "filter.h"

#include <errno.h>
#include <stddef.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdfilter.h"
#include "filterrules.h"
#include "util.h"

static const char *const level_names[] = { "summary", "files", "full" };

int trace_level_parse(const char *s)
{
	return index_of_name(level_names, ARRAY_SIZE(level_names), s);
}

const char *trace_level_name(enum trace_level level)
{
	return level_names[level];
}

#define PROLOGUE_MAX 512

/* Our prologue, then libseccomp's body for the level (filterrules.h). */
static int assemble(enum filter_body_kind kind, bool scoped, const int *fds,
		    size_t nfds, struct sock_fprog *prog)
{
	const struct filter_body *body = &filter_bodies[kind];
	struct sock_filter head[PROLOGUE_MAX];
	int head_len = fdfilter_prologue(head, PROLOGUE_MAX, scoped, fds, nfds);
	size_t len;

	if (head_len < 0)
		return head_len;
	len = (size_t)head_len + body->len;
	if (len > BPF_MAXINSNS)
		return -E2BIG;
	prog->filter = xmalloc(len * sizeof(*prog->filter));
	prog->len = (unsigned short)len;
	memcpy(prog->filter, head, (size_t)head_len * sizeof(*head));
	memcpy(prog->filter + head_len, body->insns,
	       body->len * sizeof(*body->insns));
	return 0;
}

int filter_build(enum trace_level level, const int *inherited_fds, size_t n,
		 struct filter_pair *f, struct strbuf *why)
{
	int err;

	memset(f, 0, sizeof(*f));
	err = assemble(level == LEVEL_FILES ? FILTER_BODY_FILES :
					      FILTER_BODY_FULL,
		       false, NULL, 0, &f->plain);
	if (!err && level == LEVEL_FULL)
		err = assemble(FILTER_BODY_FULL_SCOPED, true, inherited_fds, n,
			       &f->scoped);
	if (err) {
		sb_addf(why, "cannot build the seccomp filter: %s",
			strerror(-err));
		filter_free(f);
	}
	return err;
}

void filter_free(struct filter_pair *f)
{
	free(f->plain.filter);
	free(f->scoped.filter);
	memset(f, 0, sizeof(*f));
}

/*
 * A filter makes the kernel force speculation mitigations on the task
 * (SSBD; IBPB and STIBP at its context switches, two per stop) where they
 * are in "seccomp" mode: the x86 default of older kernels, a boot option
 * on newer ones.  They are there for sandboxed code; this filter only
 * traces, so the task keeps the state it has untraced (SPEC_ALLOW, Linux
 * 4.17).  An older kernel refuses the flag (EINVAL), one before 3.17 has
 * no seccomp() (ENOSYS): prctl then, as before.
 */
static int set_filter(const struct sock_fprog *prog)
{
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		    SECCOMP_FILTER_FLAG_SPEC_ALLOW, prog) == 0)
		return 0;
	/* Whatever seccomp() said (a container profile may refuse it with
	 * EPERM and allow prctl), prctl's errno is the one that counts. */
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0L, 0L);
}

static bool has_nnp(void)
{
	return prctl(PR_GET_NO_NEW_PRIVS, 0L, 0L, 0L, 0L) == 1;
}

/* The scoped filter if this process cannot lose the right to add
 * filters, else the plain one. */
static const struct sock_fprog *choose(const struct filter_pair *f)
{
	return f->scoped.len && has_nnp() ? &f->scoped : &f->plain;
}

int filter_install(const struct filter_pair *f, bool *forced_nnp)
{
	*forced_nnp = false;
	/* With CAP_SYS_ADMIN (or NO_NEW_PRIVS already set) this works and
	 * setuid programs in the task keep working. */
	if (set_filter(choose(f)) == 0)
		return 0;
	if (errno != EACCES)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0)
		return -errno;
	*forced_nnp = true;
	if (set_filter(choose(f)) < 0)
		return -errno;
	return 0;
}
