// SPDX-License-Identifier: MIT
#include "textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_all(int fd, size_t max, struct strbuf *out, struct strbuf *why)
{
	char buf[65536];
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			sb_addf(why, "read: %s", strerror(err));
			return -err;
		}
		if (n == 0)
			return 0;
		if (out->len + (size_t)n > max) {
			sb_addf(why, "larger than %zu MiB", max >> 20);
			return -EFBIG;
		}
		sb_add(out, buf, (size_t)n);
	}
}

int textfile_read_at(int dirfd, const char *path, int oflags, size_t max,
		     struct strbuf *out, struct strbuf *why)
{
	struct stat st;
	int fd, rc;

	fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | oflags);
	if (fd < 0) {
		rc = -errno;
		sb_addf(why, "%s", strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		sb_adds(why, "not a regular file");
		close(fd);
		return -EINVAL;
	}
	if ((unsigned long long)st.st_size > max) {
		sb_addf(why, "larger than %zu MiB", max >> 20);
		close(fd);
		return -EFBIG;
	}
	sb_reset(out);
	rc = read_all(fd, max, out, why);
	close(fd);
	if (rc == 0 && out->truncated) {
		sb_adds(why, "out of memory");
		rc = -ENOMEM;
	}
	return rc;
}
