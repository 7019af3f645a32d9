// SPDX-License-Identifier: MIT
#include "emit_out.h"

#include <errno.h>

#include "util.h"

void out_flush(struct out *o)
{
	int err;

	if (!o->sb.len || o->err)
		return;
	/* A part cut at the buffer's limit: a broken file is no report. */
	if (o->sb.truncated) {
		o->err = -EFBIG;
		return;
	}
	err = write_all(o->fd, o->sb.buf, o->sb.len);
	if (err < 0)
		o->err = err;
	sb_reset(&o->sb);
}

/* Durations and times as exact microseconds: "12.000345"; null if unknown. */
void json_secs(struct json *j, const char *key, int64_t us)
{
	if (us < 0)
		json_null(j, key);
	else
		json_time(j, key, us);
}
