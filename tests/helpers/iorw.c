// SPDX-License-Identifier: MIT
/* iorw MIB [DIR]: writes a new file of MIB MiB in DIR (default $TMPDIR, else
 * /tmp) with 4 KiB write()s, reads it back with 4 KiB read()s, and deletes
 * it (the I/O workload of the accuracy benchmark, bench/accuracy.py; no
 * fsync).  Then prints its own ground truth (tests/helpers/truth.h) and
 * file_read, file_written: the bytes its read()s and write()s of the file
 * returned. */
#include "truth.h"

#define BUF_SIZE 4096

int main(int argc, char **argv)
{
	static struct truth t;
	static char path[4096], buf[BUF_SIZE];
	unsigned long long mib, total, file_written = 0, file_read = 0;
	char members[256];
	const char *dir;
	ssize_t n;
	int fd;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: iorw MIB [DIR]\n");
		return 2;
	}
	mib = strtoull(argv[1], NULL, 10);
	total = mib << 20;
	dir = argc == 3 ? argv[2] : getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	if (snprintf(path, sizeof(path), "%s/iorw.XXXXXX", dir) >=
	    (int)sizeof(path))
		return 2;
	if (truth_begin(&t))
		return 4;

	fd = mkstemp(path);
	if (fd < 0) {
		perror("iorw: mkstemp");
		return 3;
	}
	memset(buf, 'x', sizeof(buf));
	while (file_written < total) {
		size_t want = total - file_written < sizeof(buf) ?
				      (size_t)(total - file_written) :
				      sizeof(buf);

		n = write(fd, buf, want);
		if (n <= 0) {
			unlink(path);
			return 3;
		}
		file_written += (unsigned long long)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		unlink(path);
		return 3;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		file_read += (unsigned long long)n;
	close(fd);
	unlink(path);
	if (n < 0 || file_read != total)
		return 3;
	counted_read += file_read;
	counted_write += file_written;

	snprintf(members, sizeof(members),
		 "\"helper\":\"iorw\",\"arg\":%llu,\"file_read\":%llu,"
		 "\"file_written\":%llu,",
		 mib, file_read, file_written);
	return truth_end(&t, members);
}
