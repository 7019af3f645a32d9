// SPDX-License-Identifier: MIT
#include "tracefile.h"

#include <errno.h>
#include <unistd.h>

#include "util.h"

int tf_open(struct tracefile *tf, struct outdir *od, const char *name)
{
	tf->name = name;
	tf->error = 0;
	tf->error_reported = false;
	tf->bytes_lost = 0;
	sb_init(&tf->buf, 4 * TRACEFILE_FLUSH_AT);
	tf->fd = od->dirfd >= 0 ? outdir_create_file(od, name) : -EBADF;
	if (tf->fd < 0) {
		tf->error = tf->fd;
		tf->fd = -1;
	}
	return tf->error;
}

void tf_put(struct tracefile *tf, const struct strbuf *record)
{
	if (tf->error) {
		tf->bytes_lost += record->len;
		return;
	}
	if (tf->buf.len + record->len > tf->buf.limit)
		tf_flush(tf);
	if (record->len > tf->buf.limit) {
		int err = write_all(tf->fd, record->buf, record->len);

		if (err)
			tf->error = err;
		return;
	}
	sb_add(&tf->buf, record->buf, record->len);
	if (tf->buf.len >= TRACEFILE_FLUSH_AT)
		tf_flush(tf);
}

int tf_flush(struct tracefile *tf)
{
	if (!tf->error && tf->buf.len) {
		int err = write_all(tf->fd, tf->buf.buf, tf->buf.len);

		if (err) {
			tf->error = err;
			tf->bytes_lost += tf->buf.len;
		}
	}
	sb_reset(&tf->buf);
	return tf->error;
}

int tf_close(struct tracefile *tf)
{
	tf_flush(tf);
	if (tf->fd >= 0 && close(tf->fd) < 0 && !tf->error)
		tf->error = -errno;
	tf->fd = -1;
	sb_release(&tf->buf);
	return tf->error;
}
