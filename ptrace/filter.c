// SPDX-License-Identifier: MIT
#include "filter.h"

#include <errno.h>
#include <stddef.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

struct sc_rule {
	enum sc_id id;
	int nr; /* libseccomp's number: native, or a pseudo one */
	enum trace_level level;
	bool entry_only; /* nothing to learn at its exit */
};

/* __SNR_ pasted here: libc headers define some names (pread64) as macros. */
#define RULE(id, name, level)                  \
	{                                      \
		id, __SNR_##name, level, false \
	}
#define RULE_ENTRY(id, name, level)           \
	{                                     \
		id, __SNR_##name, level, true \
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
	default:
		return seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), r->nr, 0);
	}
}

static int add_rules(scmp_filter_ctx ctx, enum trace_level level)
{
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		int err;

		if (rules[i].level > level)
			continue;
		err = add_rule(ctx, &rules[i]);
		if (err < 0)
			return err;
	}
	return 0;
}

#define X32_SYSCALL_BIT 0x40000000u
#define PROLOGUE_LEN 10

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

/*
 * Syscall numbers newer than libseccomp's tables would run untraced under
 * its program: this prologue traps them (SC_UNKNOWN), for each of our
 * three personalities, before libseccomp's program runs.
 */
static void build_prologue(struct sock_filter *p)
{
	const uint32_t trace = SECCOMP_RET_TRACE | SC_DATA_UNKNOWN;
	const struct sock_filter code[PROLOGUE_LEN] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
				 offsetof(struct seccomp_data, arch)),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SCMP_ARCH_X86_64, 0, 4),
		/* 2 */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		/* 3 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 1, 0),
		/* 4 */
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, MAX_NR_X86_64, 4, 5),
		/* 5 */
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, MAX_NR_X32, 3, 4),
		/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SCMP_ARCH_X86, 0, 3),
		/* 7 */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		/* 8 */
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, MAX_NR_I386, 0, 1),
		/* 9 */ BPF_STMT(BPF_RET | BPF_K, trace),
	};

	memcpy(p, code, sizeof(code));
}

/* libseccomp writes BPF to an fd: give it a memfd and read it back,
 * after our prologue. */
static int export_to_memory(scmp_filter_ctx ctx, struct sock_fprog *prog)
{
	int fd = memfd_create("iowrap-filter", MFD_CLOEXEC);
	const size_t head = PROLOGUE_LEN * sizeof(struct sock_filter);
	off_t size;
	int err;

	if (fd < 0)
		return -errno;
	err = seccomp_export_bpf(ctx, fd);
	size = err ? 0 : lseek(fd, 0, SEEK_END);
	if (!err &&
	    (size <= 0 || size % sizeof(struct sock_filter) ||
	     size / sizeof(struct sock_filter) + PROLOGUE_LEN > BPF_MAXINSNS))
		err = -E2BIG;
	if (!err) {
		prog->len = (unsigned short)(size / sizeof(struct sock_filter) +
					     PROLOGUE_LEN);
		prog->filter = xmalloc(head + (size_t)size);
		build_prologue(prog->filter);
		if (pread(fd, prog->filter + PROLOGUE_LEN, (size_t)size, 0) !=
		    size) {
			err = -EIO;
			filter_free(prog);
		}
	}
	close(fd);
	return err;
}

int filter_build(enum trace_level level, struct sock_fprog *prog,
		 struct strbuf *why)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int err;

	memset(prog, 0, sizeof(*prog));
	if (!ctx) {
		sb_adds(why, "cannot create a seccomp filter (libseccomp)");
		return -ENOMEM;
	}
	/* The native arch is in the filter already; add i386 and x32. */
	err = seccomp_arch_add(ctx, SCMP_ARCH_X86);
	if (!err)
		err = seccomp_arch_add(ctx, SCMP_ARCH_X32);
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
				       SCMP_ACT_TRACE(SC_DATA_UNKNOWN));
	/* The task sets (or not) NO_NEW_PRIVS itself: filter_install. */
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (!err)
		err = add_rules(ctx, level);
	if (!err)
		err = export_to_memory(ctx, prog);
	if (err)
		sb_addf(why, "cannot build the seccomp filter: %s",
			strerror(-err));
	seccomp_release(ctx);
	return err;
}

void filter_free(struct sock_fprog *prog)
{
	free(prog->filter);
	prog->filter = NULL;
	prog->len = 0;
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

int filter_install(const struct sock_fprog *prog, bool *forced_nnp)
{
	*forced_nnp = false;
	/* With CAP_SYS_ADMIN (or NO_NEW_PRIVS already set) this works and
	 * setuid programs in the task keep working. */
	if (set_filter(prog) == 0)
		return 0;
	if (errno != EACCES)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0)
		return -errno;
	*forced_nnp = true;
	if (set_filter(prog) < 0)
		return -errno;
	return 0;
}
