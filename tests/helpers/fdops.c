// SPDX-License-Identifier: MIT
/*
 * fdops FILE N: N rounds of fstat, lseek, fsync and faccessat2 with
 * AT_EMPTY_PATH on /dev/null (a descriptor iowrap does not trace) and of
 * fstat, lseek and faccessat2 on FILE.  Built against glibc (fstat is
 * newfstatat with AT_EMPTY_PATH), musl (the fstat syscall) and for i386
 * (fstat64 or statx, _llseek).  faccessat2 is called directly: libcs differ
 * in whether and how they pass AT_EMPTY_PATH on.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_faccessat2
#define SYS_faccessat2 439 /* x86_64, x32 (with its bit) and i386 */
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

static int access_fd(int fd)
{
	return (int)syscall(SYS_faccessat2, fd, "", R_OK, AT_EMPTY_PATH);
}

int main(int argc, char **argv)
{
	struct stat st;
	int null, data, rounds;

	if (argc != 3)
		return 2;
	rounds = atoi(argv[2]);
	null = open("/dev/null", O_RDWR);
	data = open(argv[1], O_RDONLY);
	if (null < 0 || data < 0)
		return 1;
	for (int i = 0; i < rounds; i++) {
		if (fstat(null, &st) < 0 || lseek(null, 0, SEEK_SET) < 0)
			return 1;
		fsync(null); /* EINVAL: /dev/null has nothing to sync */
		if (access_fd(null) < 0)
			return 1;
		if (fstat(data, &st) < 0 || lseek(data, 5, SEEK_SET) != 5 ||
		    access_fd(data) < 0)
			return 1;
	}
	return 0;
}
