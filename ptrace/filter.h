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
	SC_LSEEK,
	SC_IO_URING_SETUP,
	SC_IO_URING_ENTER,
	/* i386 names whose arguments differ from the 64-bit syscall's */
	SC_TRUNCATE64,
	SC_FTRUNCATE64,
	SC_MMAP2,
	SC_SENDFILE64,
	SC_LLSEEK,
	SC_COUNT,
};

/* SECCOMP_RET_DATA layout. */
#define SC_DATA_ID_MASK 0x7fffu
#define SC_DATA_NEEDS_EXIT 0x8000u
/* An architecture the filter does not know: traced, exit stop wanted. */
#define SC_DATA_UNKNOWN (SC_DATA_NEEDS_EXIT | SC_UNKNOWN)

/* The last syscall numbers Debian 12's libseccomp 2.5.4 knows (x32's with the x32
 * bit): newer ones are trapped as SC_UNKNOWN. */
#define MAX_NR_X86_64 456u
#define MAX_NR_X32 (0x40000000u | 547u)
#define MAX_NR_I386 456u

/* Scans libseccomp's tables for the above (a unit test compares). */
uint32_t filter_max_known_nr(uint32_t arch, uint32_t base);

/* "summary", "files" or "full"; returns -1 for anything else. */
int trace_level_parse(const char *s);
const char *trace_level_name(enum trace_level level);

/* Builds the filter for a level into prog (malloc'd); 0 or -errno. */
int filter_build(enum trace_level level, struct sock_fprog *prog,
		 struct strbuf *why);
void filter_free(struct sock_fprog *prog);
/*
 * Installs the filter in the calling process (the task, before exec).
 * Without NO_NEW_PRIVS, which a setuid program inside the task would lose
 * its privileges to, first; with it if the kernel asks for it.  Sets
 * *forced_nnp when NO_NEW_PRIVS had to be set.  0 or -errno.
 */
int filter_install(const struct sock_fprog *prog, bool *forced_nnp);

#endif
