// SPDX-License-Identifier: MIT
#include "filter.h"

#include <errno.h>
#include <stddef.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdfilter.h"
#include "util.h"

struct sc_rule {
	enum sc_id id;
	int nr; /* libseccomp's number: native, or a pseudo one */
	enum trace_level level;
	bool entry_only; /* nothing to learn at its exit */
	bool scoped_only; /* wanted under a descriptor-scoped filter only */
};

/* __SNR_ pasted here: libc headers define some names (pread64) as macros. */
#define RULE(id, name, level)                         \
	{                                             \
		id, __SNR_##name, level, false, false \
	}
#define RULE_ENTRY(id, name, level)                  \
	{                                            \
		id, __SNR_##name, level, true, false \
	}
#define RULE_SCOPED(id, name, entry_only)                      \
	{                                                      \
		id, __SNR_##name, LEVEL_FULL, entry_only, true \
	}

/*
 * Every personality's name for each syscall: libseccomp maps a name to
 * each architecture of the filter and leaves it out where it does not
 * exist (stat64 is i386's stat, for example).
 */
static const struct sc_rule rules[] = {
	RULE(SC_OPEN, open, LEVEL_FILES),
	RULE(SC_OPENAT, openat, LEVEL_FILES),
	RULE(SC_OPENAT2, openat2, LEVEL_FILES),
	RULE(SC_CREAT, creat, LEVEL_FILES),
	RULE_ENTRY(SC_CLOSE, close, LEVEL_FILES),
	RULE_ENTRY(SC_CLOSE_RANGE, close_range, LEVEL_FILES),
	RULE(SC_DUP, dup, LEVEL_FILES),
	RULE(SC_DUP2, dup2, LEVEL_FILES),
	RULE(SC_DUP3, dup3, LEVEL_FILES),
	RULE(SC_FCNTL, fcntl, LEVEL_FILES),
	RULE(SC_FCNTL, fcntl64, LEVEL_FILES),
	RULE(SC_IOCTL_CLOEXEC, ioctl, LEVEL_FILES),
	RULE(SC_EXECVE, execve, LEVEL_FILES),
	RULE(SC_EXECVEAT, execveat, LEVEL_FILES),
	RULE(SC_UNLINK, unlink, LEVEL_FILES),
	RULE(SC_UNLINKAT, unlinkat, LEVEL_FILES),
	RULE(SC_RMDIR, rmdir, LEVEL_FILES),
	RULE(SC_RENAME, rename, LEVEL_FILES),
	RULE(SC_RENAMEAT, renameat, LEVEL_FILES),
	RULE(SC_RENAMEAT2, renameat2, LEVEL_FILES),
	RULE(SC_LINK, link, LEVEL_FILES),
	RULE(SC_LINKAT, linkat, LEVEL_FILES),
	RULE(SC_SYMLINK, symlink, LEVEL_FILES),
	RULE(SC_SYMLINKAT, symlinkat, LEVEL_FILES),
	RULE(SC_MKDIR, mkdir, LEVEL_FILES),
	RULE(SC_MKDIRAT, mkdirat, LEVEL_FILES),
	RULE(SC_TRUNCATE, truncate, LEVEL_FILES),
	RULE(SC_TRUNCATE64, truncate64, LEVEL_FILES),
	RULE(SC_FTRUNCATE, ftruncate, LEVEL_FILES),
	RULE(SC_FTRUNCATE64, ftruncate64, LEVEL_FILES),
	RULE(SC_MMAP, mmap, LEVEL_FILES),
	RULE(SC_MMAP2, mmap2, LEVEL_FILES),
	RULE(SC_CHDIR, chdir, LEVEL_FILES),
	RULE(SC_FCHDIR, fchdir, LEVEL_FILES),
	RULE(SC_STAT, stat, LEVEL_FILES),
	RULE(SC_STAT, stat64, LEVEL_FILES),
	RULE(SC_LSTAT, lstat, LEVEL_FILES),
	RULE(SC_LSTAT, lstat64, LEVEL_FILES),
	RULE(SC_FSTAT, fstat, LEVEL_FILES),
	RULE(SC_FSTAT, fstat64, LEVEL_FILES),
	RULE(SC_FSTATAT, newfstatat, LEVEL_FILES),
	RULE(SC_FSTATAT, fstatat64, LEVEL_FILES),
	RULE(SC_STATX, statx, LEVEL_FILES),
	RULE(SC_ACCESS, access, LEVEL_FILES),
	RULE(SC_FACCESSAT, faccessat, LEVEL_FILES),
	RULE(SC_FACCESSAT2, faccessat2, LEVEL_FILES),
	RULE(SC_READ, read, LEVEL_FULL),
	RULE(SC_WRITE, write, LEVEL_FULL),
	RULE(SC_PREAD, pread64, LEVEL_FULL),
	RULE(SC_PWRITE, pwrite64, LEVEL_FULL),
	RULE(SC_READV, readv, LEVEL_FULL),
	RULE(SC_WRITEV, writev, LEVEL_FULL),
	RULE(SC_PREADV, preadv, LEVEL_FULL),
	RULE(SC_PWRITEV, pwritev, LEVEL_FULL),
	RULE(SC_PREADV2, preadv2, LEVEL_FULL),
	RULE(SC_PWRITEV2, pwritev2, LEVEL_FULL),
	RULE(SC_SENDFILE, sendfile, LEVEL_FULL),
	RULE(SC_SENDFILE64, sendfile64, LEVEL_FULL),
	RULE(SC_COPY_FILE_RANGE, copy_file_range, LEVEL_FULL),
	RULE(SC_SPLICE, splice, LEVEL_FULL),
	RULE(SC_FSYNC, fsync, LEVEL_FULL),
	RULE(SC_FDATASYNC, fdatasync, LEVEL_FULL),
	RULE(SC_SYNC_FILE_RANGE, sync_file_range, LEVEL_FULL),
	RULE(SC_FALLOCATE, fallocate, LEVEL_FULL),
	RULE(SC_LSEEK, lseek, LEVEL_FULL),
	RULE(SC_LLSEEK, _llseek, LEVEL_FULL),
	RULE(SC_IO_URING_SETUP, io_uring_setup, LEVEL_FULL),
	RULE(SC_IO_URING_ENTER, io_uring_enter, LEVEL_FULL),
	RULE_SCOPED(SC_RECVMSG, recvmsg, false),
	RULE_SCOPED(SC_RECVMMSG, recvmmsg, false),
	RULE_SCOPED(SC_PIDFD_GETFD, pidfd_getfd, false),
	RULE_SCOPED(SC_MEMFD_CREATE, memfd_create, false),
	RULE_SCOPED(SC_OPEN_BY_HANDLE_AT, open_by_handle_at, false),
	RULE_SCOPED(SC_CLONE, clone, true),
	RULE_SCOPED(SC_CLONE3, clone3, true),
	RULE_SCOPED(SC_SECCOMP, seccomp, true),
	RULE_SCOPED(SC_PRCTL_SECCOMP, prctl, true),
};

static const char *const level_names[] = { "summary", "files", "full" };

int trace_level_parse(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
		if (strcmp(s, level_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *trace_level_name(enum trace_level level)
{
	return level_names[level];
}

/*
 * ioctl's FIOCLEX and FIONCLEX set and clear close-on-exec, as fcntl's
 * F_SETFD does (Python's os.set_inheritable uses them); no other ioctl
 * stops.  The kernel takes the command as an unsigned int: the mask
 * keeps a garbage upper half from slipping past.
 */
static int add_ioctl_rules(scmp_filter_ctx ctx, uint32_t data, int nr)
{
	int err = seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), nr, 1,
				   SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu,
					   FIOCLEX));

	if (err < 0)
		return err;
	return seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), nr, 1,
				SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu,
					FIONCLEX));
}

static int add_rule(scmp_filter_ctx ctx, const struct sc_rule *r)
{
	uint32_t data = (uint32_t)r->id |
			(r->entry_only ? 0 : SC_DATA_NEEDS_EXIT);

	switch (r->id) {
	case SC_MMAP:
	case SC_MMAP2:
		/* mmap of a file only: MAP_ANONYMOUS not in flags (arg 3). */
		return seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), r->nr, 1,
					SCMP_A3(SCMP_CMP_MASKED_EQ,
						MAP_ANONYMOUS, 0));
	case SC_IOCTL_CLOEXEC:
		return add_ioctl_rules(ctx, data, r->nr);
	case SC_CLONE:
		/* A second process on the same descriptor table. */
		return seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), r->nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ,
						CLONE_FILES | CLONE_THREAD,
						CLONE_FILES));
	case SC_SECCOMP:
		/* SECCOMP_SET_MODE_STRICT (0) or _FILTER (1); the kernel reads
		 * the operation as an unsigned int. */
		return seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), r->nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ, 0xfffffffeu,
						0));
	case SC_PRCTL_SECCOMP:
		return seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), r->nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu,
						PR_SET_SECCOMP));
	default:
		return seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), r->nr, 0);
	}
}

static int add_rules(scmp_filter_ctx ctx, enum trace_level level, bool scoped)
{
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		int err;

		if (rules[i].level > level || (rules[i].scoped_only && !scoped))
			continue;
		err = add_rule(ctx, &rules[i]);
		if (err < 0)
			return err;
	}
	return 0;
}

/* The highest syscall number libseccomp knows for an arch: scanning its
 * tables costs a millisecond per task, so the values for the bundled
 * libseccomp are constants, checked against the tables by a unit test. */
uint32_t filter_max_known_nr(uint32_t arch, uint32_t base)
{
	uint32_t max = 0;

	for (uint32_t nr = 0; nr < 1024; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(arch,
							      (int)(base | nr));

		if (name)
			max = nr;
		free(name);
	}
	return base | max;
}

#define PROLOGUE_MAX 512

/* libseccomp writes BPF to an fd: give it a memfd and read it back,
 * after our prologue. */
static int export_to_memory(scmp_filter_ctx ctx, const struct sock_filter *head,
			    size_t head_len, struct sock_fprog *prog)
{
	int fd = memfd_create("iowrap-filter", MFD_CLOEXEC);
	const size_t head_size = head_len * sizeof(struct sock_filter);
	off_t size;
	int err;

	if (fd < 0)
		return -errno;
	err = seccomp_export_bpf(ctx, fd);
	size = err ? 0 : lseek(fd, 0, SEEK_END);
	if (!err &&
	    (size <= 0 || size % sizeof(struct sock_filter) ||
	     size / sizeof(struct sock_filter) + head_len > BPF_MAXINSNS))
		err = -E2BIG;
	if (!err) {
		prog->len = (unsigned short)(size / sizeof(struct sock_filter) +
					     head_len);
		prog->filter = xmalloc(head_size + (size_t)size);
		memcpy(prog->filter, head, head_size);
		if (pread(fd, prog->filter + head_len, (size_t)size, 0) !=
		    size) {
			err = -EIO;
			free(prog->filter);
			memset(prog, 0, sizeof(*prog));
		}
	}
	close(fd);
	return err;
}

static int build_one(enum trace_level level, bool scoped, const int *fds,
		     size_t nfds, struct sock_fprog *prog)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	struct sock_filter head[PROLOGUE_MAX];
	int head_len = fdfilter_prologue(head, PROLOGUE_MAX, scoped, fds, nfds);
	int err;

	if (!ctx)
		return -ENOMEM;
	/* The native arch is in the filter already; add i386 and x32. */
	err = head_len < 0 ? head_len : seccomp_arch_add(ctx, SCMP_ARCH_X86);
	if (!err)
		err = seccomp_arch_add(ctx, SCMP_ARCH_X32);
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
				       SCMP_ACT_TRACE(SC_DATA_UNKNOWN));
	/* The task sets (or not) NO_NEW_PRIVS itself: filter_install. */
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (!err)
		err = add_rules(ctx, level, scoped);
	if (!err)
		err = export_to_memory(ctx, head, (size_t)head_len, prog);
	seccomp_release(ctx);
	return err;
}

int filter_build(enum trace_level level, const int *inherited_fds, size_t n,
		 struct filter_pair *f, struct strbuf *why)
{
	int err;

	memset(f, 0, sizeof(*f));
	err = build_one(level, false, NULL, 0, &f->plain);
	if (!err && level == LEVEL_FULL)
		err = build_one(level, true, inherited_fds, n, &f->scoped);
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

#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif

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
