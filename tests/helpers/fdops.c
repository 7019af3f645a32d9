// SPDX-License-Identifier: MIT
/*
 * fdops FILE N: N rounds of fstat, lseek and fsync on /dev/null (a
 * descriptor iowrap does not trace) and of fstat and lseek on FILE.  Built
 * against glibc (fstat is newfstatat with AT_EMPTY_PATH), musl (the fstat
 * syscall) and for i386 (fstat64 or statx, _llseek).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
		if (fstat(data, &st) < 0 || lseek(data, 5, SEEK_SET) != 5)
			return 1;
	}
	return 0;
}
