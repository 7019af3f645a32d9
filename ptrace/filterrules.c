// SPDX-License-Identifier: MIT
/* Build time only: see filterrules.h. */
#include "filterrules.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

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
	RULE(SC_OPEN_BY_HANDLE_AT, open_by_handle_at, LEVEL_FILES),
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
	RULE(SC_UNSHARE, unshare, LEVEL_FILES),
	/* Its operations open and close files unseen: said in the summary,
	 * and no call is settled at its entry after it. */
	RULE(SC_IO_URING_SETUP, io_uring_setup, LEVEL_FILES),
	RULE(SC_NEW_VIEW, chroot, LEVEL_FILES),
	RULE(SC_NEW_VIEW, pivot_root, LEVEL_FILES),
	RULE(SC_NEW_VIEW, setns, LEVEL_FILES),
	RULE(SC_MOUNT, mount, LEVEL_FILES),
	RULE(SC_MOUNT, umount, LEVEL_FILES),
	RULE(SC_MOUNT, umount2, LEVEL_FILES),
	RULE(SC_MOUNT, move_mount, LEVEL_FILES),
	RULE_ENTRY(SC_SCHED_AFFINITY, sched_getaffinity, LEVEL_FILES),
	RULE_ENTRY(SC_SCHED_AFFINITY, sched_setaffinity, LEVEL_FILES),
	RULE_ENTRY(SC_SETUID, setuid, LEVEL_FILES),
	RULE_ENTRY(SC_SETUID, setuid32, LEVEL_FILES),
	RULE_ENTRY(SC_SETUID, setreuid, LEVEL_FILES),
	RULE_ENTRY(SC_SETUID, setreuid32, LEVEL_FILES),
	RULE_ENTRY(SC_SETUID, setresuid, LEVEL_FILES),
	RULE_ENTRY(SC_SETUID, setresuid32, LEVEL_FILES),
	RULE_ENTRY(SC_SETUID, setfsuid, LEVEL_FILES),
	RULE_ENTRY(SC_SETUID, setfsuid32, LEVEL_FILES),
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
	RULE(SC_IOCTL_CLONE, ioctl, LEVEL_FULL),
	RULE(SC_LSEEK, lseek, LEVEL_FULL),
	RULE(SC_LLSEEK, _llseek, LEVEL_FULL),
	RULE(SC_IO_URING_ENTER, io_uring_enter, LEVEL_FULL),
	RULE_ENTRY(SC_IO_SUBMIT, io_submit, LEVEL_FULL),
	RULE_SCOPED(SC_RECVMSG, recvmsg, false),
	RULE_SCOPED(SC_RECVMMSG, recvmmsg, false),
	RULE_SCOPED(SC_PIDFD_GETFD, pidfd_getfd, false),
	RULE_SCOPED(SC_MEMFD_CREATE, memfd_create, false),
	RULE_SCOPED(SC_CLONE, clone, true),
	RULE_SCOPED(SC_CLONE3, clone3, true),
	RULE_SCOPED(SC_SECCOMP, seccomp, true),
	RULE_SCOPED(SC_PRCTL_SECCOMP, prctl, true),
};

/* One argument's value under a mask: "arg & mask == value". */
struct masked_eq {
	uint64_t mask, value;
};

/* A stop for each of cmps (they add up: any one of them stops). */
static int add_masked_rules(scmp_filter_ctx ctx, uint32_t data, int nr,
			    unsigned int arg, const struct masked_eq *cmps,
			    size_t ncmps)
{
	for (size_t i = 0; i < ncmps; i++) {
		int err =
			seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), nr, 1,
					 SCMP_CMP(arg, SCMP_CMP_MASKED_EQ,
						  cmps[i].mask, cmps[i].value));

		if (err < 0)
			return err;
	}
	return 0;
}

/*
 * ioctl stops for a few commands only: FIOCLEX and FIONCLEX set and clear
 * close-on-exec, as fcntl's F_SETFD does (Python's os.set_inheritable
 * uses them); FICLONE and FICLONERANGE make a reflink copy (cp on xfs
 * and btrfs), which reads and writes nothing.  The kernel takes the
 * command as an unsigned int: the mask keeps a garbage upper half from
 * slipping past.
 */
static const struct masked_eq cloexec_cmds[] = { { 0xffffffffu, FIOCLEX },
						 { 0xffffffffu, FIONCLEX } };
static const struct masked_eq clone_cmds[] = { { 0xffffffffu, IOCTL_FICLONE },
					       { 0xffffffffu,
						 IOCTL_FICLONERANGE } };

/*
 * fcntl stops for the commands that change what the tracer keeps: a new
 * descriptor (F_DUPFD, F_DUPFD_CLOEXEC), close-on-exec (F_SETFD) and
 * O_APPEND (F_SETFL).  Locks (sqlite takes and drops one around every
 * transaction: a third of its stops) and the F_GET commands run free.
 */
static const struct masked_eq fcntl_cmds[] = {
	{ 0xffffffffu, F_DUPFD },
	{ 0xffffffffu, F_DUPFD_CLOEXEC },
	{ 0xffffffffu, F_SETFD },
	{ 0xffffffffu, F_SETFL },
};

/*
 * unshare() with a flag that parts the caller from its descriptor table or
 * its cwd (CLONE_NEWNS unshares the cwd too); a new user namespace needs a
 * process of one thread, whose cwd is its process's anyway.
 */
static const struct masked_eq unshare_flags[] = { { CLONE_FILES, CLONE_FILES },
						  { CLONE_FS, CLONE_FS },
						  { CLONE_NEWNS,
						    CLONE_NEWNS } };

/* setns() into a mount namespace: nstype 0 (any: the fd says) or, with a
 * pidfd, a set of namespaces that has it. */
static const struct masked_eq setns_types[] = { { 0xffffffffu, 0 },
						{ CLONE_NEWNS, CLONE_NEWNS } };

static int add_rule(scmp_filter_ctx ctx, const struct sc_rule *r)
{
	uint32_t data = SC_DATA_OURS | (uint32_t)r->id |
			(r->entry_only ? 0 : SC_DATA_NEEDS_EXIT);

	switch (r->id) {
	case SC_MMAP:
	case SC_MMAP2:
		/* mmap of a file only: MAP_ANONYMOUS not in flags (arg 3). */
		return seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), r->nr, 1,
					SCMP_A3(SCMP_CMP_MASKED_EQ,
						MAP_ANONYMOUS, 0));
	case SC_IOCTL_CLOEXEC:
		return add_masked_rules(ctx, data, r->nr, 1, cloexec_cmds,
					ARRAY_SIZE(cloexec_cmds));
	case SC_IOCTL_CLONE:
		return add_masked_rules(ctx, data, r->nr, 1, clone_cmds,
					ARRAY_SIZE(clone_cmds));
	case SC_FCNTL:
		return add_masked_rules(ctx, data, r->nr, 1, fcntl_cmds,
					ARRAY_SIZE(fcntl_cmds));
	case SC_CLONE:
		/* A second process on the same descriptor table. */
		return seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), r->nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ,
						CLONE_FILES | CLONE_THREAD,
						CLONE_FILES));
	case SC_UNSHARE:
		return add_masked_rules(ctx, data, r->nr, 0, unshare_flags,
					ARRAY_SIZE(unshare_flags));
	case SC_NEW_VIEW:
		if (r->nr != __SNR_setns)
			return seccomp_rule_add(ctx, SCMP_ACT_TRACE(data),
						r->nr, 0);
		return add_masked_rules(ctx, data, r->nr, 1, setns_types,
					ARRAY_SIZE(setns_types));
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

/* Scans libseccomp's tables: filtergen checks filter.h's MAX_NR_ against
 * them, so that a new libseccomp cannot leave the prologue behind. */
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

/* libseccomp writes BPF to an fd: give it a memfd and read it back. */
static int export_to_memory(scmp_filter_ctx ctx, struct sock_fprog *prog)
{
	int fd = memfd_create("iowrap-filter", MFD_CLOEXEC);
	off_t size;
	int err;

	if (fd < 0)
		return -errno;
	err = seccomp_export_bpf(ctx, fd);
	size = err ? 0 : lseek(fd, 0, SEEK_END);
	if (!err && (size <= 0 || size % sizeof(struct sock_filter) ||
		     size / sizeof(struct sock_filter) > BPF_MAXINSNS))
		err = -E2BIG;
	if (!err) {
		prog->len = (unsigned short)(size / sizeof(struct sock_filter));
		prog->filter = malloc((size_t)size);
		if (!prog->filter)
			err = -ENOMEM;
		else if (pread(fd, prog->filter, (size_t)size, 0) != size)
			err = -EIO;
		if (err) {
			free(prog->filter);
			memset(prog, 0, sizeof(*prog));
		}
	}
	close(fd);
	return err;
}

static void filter_body_params(enum filter_body_kind kind,
			       enum trace_level *level, bool *scoped)
{
	*level = kind == FILTER_BODY_FILES ? LEVEL_FILES : LEVEL_FULL;
	*scoped = kind == FILTER_BODY_FULL_SCOPED;
}

int filter_body_build(enum filter_body_kind kind, struct sock_fprog *prog)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	enum trace_level level;
	bool scoped;
	int err;

	if (!ctx)
		return -ENOMEM;
	filter_body_params(kind, &level, &scoped);
	/* The native arch is in the filter already; add i386 and x32. */
	err = seccomp_arch_add(ctx, SCMP_ARCH_X86);
	if (!err)
		err = seccomp_arch_add(ctx, SCMP_ARCH_X32);
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
				       SCMP_ACT_TRACE(SC_DATA_UNKNOWN));
	if (!err)
		err = add_rules(ctx, level, scoped);
	if (!err)
		err = export_to_memory(ctx, prog);
	seccomp_release(ctx);
	return err;
}
