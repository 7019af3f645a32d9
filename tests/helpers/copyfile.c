// SPDX-License-Identifier: MIT
/* copyfile IN OUT [STATUS]: copies IN to OUT with 4 KiB read()s and
 * write()s and exits with STATUS (default 0).  Built static
 * (build/helpers/copyfile-static) it reads nothing else, so the bytes a
 * trace counts for it are exactly IN's size read and written. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[4096];
	ssize_t n;
	int in, out;

	if (argc != 3 && argc != 4)
		return 2;
	in = open(argv[1], O_RDONLY);
	out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0)
		return 2;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return 2;
	if (n < 0 || close(out) < 0)
		return 2;
	return argc == 4 ? atoi(argv[3]) : 0;
}
