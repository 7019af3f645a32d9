/* SPDX-License-Identifier: MIT */
/*
 * The seccomp-bpf filter: only the syscalls a tracing level needs stop the
 * task (SECCOMP_RET_TRACE); everything else runs at native speed.  The
 * filter's SECCOMP_RET_DATA names the syscall (enum sc_id) and says whether
 * the tracer wants its exit stop too, so a syscall fully handled at entry
 * costs one stop (PRoot's technique) and the tracer needs no per-arch
 * syscall tables.  An unknown architecture is traced, never killed.
 */
#ifndef IOWRAP_FILTER_H
#define IOWRAP_FILTER_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>

#include "strbuf.h"

/* Linux 4.17 (filter.c, inject.c: the task keeps its speculation
 * mitigations as they are untraced). */
#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif

enum trace_level {
	LEVEL_SUMMARY, /* no syscall stops: process events only */
	LEVEL_FILES, /* opens, closes, metadata, exec, namespace changes */
	LEVEL_FULL, /* and every read, write, seek and sync */
};

enum sc_id {
	SC_UNKNOWN = 0,
	SC_OPEN,
	SC_OPENAT,
	SC_OPENAT2,
	SC_CREAT,
	SC_CLOSE,
	SC_CLOSE_RANGE,
	SC_DUP,
	SC_DUP2,
	SC_DUP3,
	SC_FCNTL,
	SC_IOCTL_CLOEXEC, /* ioctl FIOCLEX or FIONCLEX only */
	SC_EXECVE,
	SC_EXECVEAT,
	SC_UNLINK,
	SC_UNLINKAT,
	SC_RMDIR,
	SC_RENAME,
	SC_RENAMEAT,
	SC_RENAMEAT2,
	SC_LINK,
	SC_LINKAT,
	SC_SYMLINK,
	SC_SYMLINKAT,
	SC_MKDIR,
	SC_MKDIRAT,
	SC_TRUNCATE,
	SC_FTRUNCATE,
	SC_MMAP,
	SC_CHDIR,
	SC_FCHDIR,
	SC_STAT,
	SC_LSTAT,
	SC_FSTAT,
	SC_FSTATAT,
	SC_STATX,
	SC_ACCESS,
	SC_FACCESSAT,
	SC_FACCESSAT2,
	SC_READ,
	SC_WRITE,
	SC_PREAD,
	SC_PWRITE,
	SC_READV,
	SC_WRITEV,
	SC_PREADV,
	SC_PWRITEV,
	SC_PREADV2,
	SC_PWRITEV2,
	SC_SENDFILE,
	SC_COPY_FILE_RANGE,
	SC_SPLICE,
	SC_FSYNC,
	SC_FDATASYNC,
	SC_SYNC_FILE_RANGE,
	SC_FALLOCATE,
	SC_IOCTL_CLONE, /* ioctl FICLONE or FICLONERANGE only */
	SC_LSEEK,
	SC_IO_URING_SETUP,
	SC_IO_URING_ENTER,
	SC_IO_SUBMIT, /* Linux AIO */
	/* i386 names whose arguments differ from the 64-bit syscall's */
	SC_TRUNCATE64,
	SC_FTRUNCATE64,
	SC_MMAP2,
	SC_SENDFILE64,
	SC_LLSEEK,
	/* Only under descriptor-scoped filters (fdfilter.h): a native data
	 * syscall on a filtered descriptor (its number says which), and the
	 * calls that bring a process a descriptor without an open, or a
	 * second process to its descriptor table. */
	SC_NATIVE_DATA,
	SC_RECVMSG,
	SC_RECVMMSG,
	SC_PIDFD_GETFD,
	SC_MEMFD_CREATE,
	SC_OPEN_BY_HANDLE_AT,
	SC_CLONE, /* with CLONE_FILES, without CLONE_THREAD */
	SC_CLONE3,
	/* the task's own seccomp(SET_MODE_STRICT/FILTER) and
	 * prctl(PR_SET_SECCOMP): the tracer's filters must be in before */
	SC_SECCOMP,
	SC_PRCTL_SECCOMP,
	/* unshare(CLONE_FILES, CLONE_FS or CLONE_NEWNS): a descriptor table or
	 * a cwd of the caller's own */
	SC_UNSHARE,
	/* chroot, pivot_root, setns (to a mount namespace): the caller's
	 * root or mount namespace, where its paths lead, may be another from
	 * here */
	SC_NEW_VIEW,
	/* mount, umount, move_mount: a mount point or device number may
	 * stand for another file system from here */
	SC_MOUNT,
	/* sched_getaffinity and sched_setaffinity, and the calls that change
	 * the caller's uid: a tracee pinned for CPU following gets its own
	 * mask back first (cpufollow.h) */
	SC_SCHED_AFFINITY,
	SC_SETUID,
	SC_COUNT,
};

/*
 * linux/fs.h's reflink ioctls, the same number in every personality
 * (struct file_clone_range is four 64-bit fields).
 */
#define IOCTL_FICLONE 0x40049409u
#define IOCTL_FICLONERANGE 0x4020940du

/*
 * SECCOMP_RET_DATA layout: the id, a tag that says the stop is one of
 * iowrap's filters' and not of a filter of the task's own (tracer.c,
 * foreign_stop()), and whether the exit stop is wanted.
 */
#define SC_DATA_ID_MASK 0x00ffu
#define SC_DATA_TAG_MASK 0x7f00u
#define SC_DATA_OURS 0x5a00u
#define SC_DATA_NEEDS_EXIT 0x8000u
/* An architecture the filter does not know: traced, exit stop wanted. */
#define SC_DATA_UNKNOWN (SC_DATA_OURS | SC_DATA_NEEDS_EXIT | SC_UNKNOWN)

_Static_assert(SC_COUNT <= SC_DATA_ID_MASK + 1,
	       "every enum sc_id fits in SECCOMP_RET_DATA's id bits");

/* The last syscall numbers the bundled libseccomp knows (x32's with the
 * x32 bit): newer ones are trapped as SC_UNKNOWN.  build/filtergen refuses
 * to build the filter if its tables end elsewhere. */
#define MAX_NR_X86_64 456u
#define MAX_NR_X32 (0x40000000u | 547u)
#define MAX_NR_I386 456u

/* "summary", "files" or "full"; returns -1 for anything else. */
int trace_level_parse(const char *s);
const char *trace_level_name(enum trace_level level);

/* The filters of a level: plain traces every descriptor; scoped (--level
 * full only, else empty) lets native data syscalls through except on the
 * descriptors it names (fdfilter.h). */
struct filter_pair {
	struct sock_fprog plain, scoped;
};

/*
 * Builds the filters for a level (malloc'd); inherited_fds[0..n) are the
 * task's descriptors that may hold a traced file when it starts.  0 or
 * -errno.
 */
int filter_build(enum trace_level level, const int *inherited_fds, size_t n,
		 struct filter_pair *f, struct strbuf *why);
void filter_free(struct filter_pair *f);
/*
 * Installs a filter in the calling process (the task, before exec).
 * Without NO_NEW_PRIVS, which a setuid program inside the task would lose
 * its privileges to, first; with it if the kernel asks for it.  The
 * scoped filter needs filters added later, which only NO_NEW_PRIVS
 * guarantees (a process may drop CAP_SYS_ADMIN): it is the one installed
 * under NO_NEW_PRIVS, the plain one otherwise.  Sets *forced_nnp when
 * NO_NEW_PRIVS had to be set.  0 or -errno.
 */
int filter_install(const struct filter_pair *f, bool *forced_nnp);

#endif
