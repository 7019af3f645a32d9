// SPDX-License-Identifier: MIT
/* fileops FILE: file operations whose offsets a tracer must get right
 * (pread/pwrite, lseek, readv/writev, dup and fork sharing a position,
 * O_APPEND and RWF_APPEND, sendfile, fallocate, openat2).  Prints the operations it made on FILE, one per
 * line: TYPE OFFSET SIZE RESULT, the oracle for io.csv. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x20 /* Linux 6.9; glibc 2.39 */
#endif

static char buf[8192];

/* A failed call's result as io.csv has it: -errno (RWF_NOAPPEND fails
 * with EOPNOTSUPP before Linux 6.9). */
static long long result(long long ret)
{
	return ret < 0 ? -errno : ret;
}

static void out(char type, long long off, long long size, long long res)
{
	printf("%c %lld %lld %lld\n", type, off, size, res);
}

static int open_in_root(const char *path)
{
	struct {
		unsigned long long flags, mode, resolve;
	} how = { O_RDONLY, 0, 0x10 /* RESOLVE_IN_ROOT */ };
	const char *name = strrchr(path, '/');
	char dir[4096];
	int dirfd;

	snprintf(dir, sizeof(dir), "%.*s/", (int)(name - path), path);
	dirfd = open(dir, O_PATH | O_DIRECTORY);
	if (dirfd < 0)
		return -1;
	return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
}

int main(int argc, char **argv)
{
	struct iovec iov[2] = { { buf, 30 }, { buf + 30, 40 } };
	int fd, fd2, fd3;
	pid_t pid;

	if (argc != 2)
		return 2;
	memset(buf, 'a', sizeof(buf));
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	out('W', 0, 1000, write(fd, buf, 1000));
	out('W', 5000, 100, pwrite(fd, buf, 100, 5000));
	out('L', 10, 0, lseek(fd, 10, SEEK_SET));
	out('R', 10, 50, read(fd, buf, 50));
	out('R', 4990, 20, pread(fd, buf, 20, 4990));
	out('R', 60, 70, readv(fd, iov, 2));
	fd2 = dup(fd);
	out('R', 130, 10, read(fd2, buf, 10));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		out('R', 140, 5, read(fd, buf, 5));
		return 0;
	}
	waitpid(pid, NULL, 0);
	out('R', 145, 5, read(fd, buf, 5));
	close(fd2);
	fd3 = open(argv[1], O_WRONLY | O_APPEND);
	out('W', 5100, 7, write(fd3, buf, 7));
	iov[0].iov_len = 3;
	iov[1].iov_len = 4;
	out('W', 5107, 7, writev(fd3, iov, 2));
	/* O_APPEND makes pwrite append too; RWF_APPEND and RWF_NOAPPEND
	 * set and clear it per call.  None moves the position. */
	out('W', 5114, 5, pwrite(fd3, buf, 5, 0));
	out('W', 5119, 7, pwritev2(fd, iov, 2, 10, RWF_APPEND));
	out('W', 20, 7, result(pwritev2(fd3, iov, 2, 20, RWF_NOAPPEND)));
	/* sendfile into another file: an R here at fd's position. */
	fd2 = open("/dev/null", O_WRONLY);
	out('R', 150, 25, sendfile(fd2, fd, NULL, 25));
	close(fd2);
	out('T', -1, 6000, ftruncate(fd, 6000));
	out('F', -1, 0, fsync(fd));
	/* Ranges; a failed seek has no position. */
	out('A', 6000, 100, fallocate(fd, FALLOC_FL_KEEP_SIZE, 6000, 100));
	out('F', 0, 4096, sync_file_range(fd, 0, 4096, SYNC_FILE_RANGE_WRITE));
	out('L', -1, 0, result(lseek(fd, -10, SEEK_SET)));
	close(fd3);
	close(fd);
	/* The same file by openat2 with RESOLVE_IN_ROOT, its directory as
	 * root: "/name" is the file, not a file at the top of the tree. */
	fd = open_in_root(argv[1]);
	out('R', 0, 5, read(fd, buf, 5));
	close(fd);
	return 0;
}
