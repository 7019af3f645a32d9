// SPDX-License-Identifier: MIT
#include "html.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "csvin.h"
#include "util.h"

/* Input bytes escaped per write(2): bounds the memory a big report takes. */
#define HTML_CHUNK (256u << 10)

/* The template's markers, in the order they occur in it. */
static const char *const markers[] = {
	"@IOWRAP_STYLE@",
	"@IOWRAP_DATA@",
	"@IOWRAP_ECHARTS@",
	"@IOWRAP_APP@",
};

enum { MARK_STYLE, MARK_DATA, MARK_ECHARTS, MARK_APP, MARK_COUNT };

struct asset {
	const char *data;
	size_t len;
};

static struct asset asset_of(const char *start, const char *end)
{
	struct asset a = { start, (size_t)(end - start) };

	return a;
}

/* Bytes of UTF-8 E2 80 A8 / E2 80 A9 that start at s[i], else 0. */
static int line_separator_at(const unsigned char *s, size_t len, size_t i)
{
	if (i + 2 < len && s[i] == 0xe2 && s[i + 1] == 0x80 &&
	    (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))
		return 3;
	return 0;
}

/* How many bytes at the end might be a line separator cut in two. */
static size_t cut_separator_tail(const unsigned char *s, size_t len)
{
	if (len >= 1 && s[len - 1] == 0xe2)
		return 1;
	if (len >= 2 && s[len - 2] == 0xe2 && s[len - 1] == 0x80)
		return 2;
	return 0;
}

size_t html_escape_json(struct strbuf *out, const char *json, size_t len,
			int more)
{
	const unsigned char *s = (const unsigned char *)json;
	size_t end = more ? len - cut_separator_tail(s, len) : len;
	size_t i = 0, plain = 0;

	while (i < end) {
		const char *esc = NULL;
		size_t skip = 1;

		if (s[i] == '<')
			esc = "\\u003c";
		else if (s[i] == '>')
			esc = "\\u003e";
		else if (s[i] == '&')
			esc = "\\u0026";
		else if (line_separator_at(s, end, i)) {
			esc = s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029";
			skip = 3;
		}
		if (!esc) {
			i++;
			continue;
		}
		sb_add(out, json + plain, i - plain);
		sb_adds(out, esc);
		i += skip;
		plain = i;
	}
	sb_add(out, json + plain, end - plain);
	return end;
}

/* The template's text between markers: MARK_COUNT + 1 pieces. */
static int split_template(struct asset pieces[MARK_COUNT + 1])
{
	struct asset t = asset_of(report_web_template, report_web_template_end);
	const char *pos = t.data, *end = t.data + t.len;

	for (int m = 0; m < MARK_COUNT; m++) {
		size_t mlen = strlen(markers[m]);
		const char *at =
			memmem(pos, (size_t)(end - pos), markers[m], mlen);

		if (!at)
			return -EINVAL;
		pieces[m] = asset_of(pos, at);
		pos = at + mlen;
	}
	pieces[MARK_COUNT] = asset_of(pos, end);
	return 0;
}

static int write_json_escaped(int fd, const char *json, size_t len)
{
	struct strbuf out;
	size_t done = 0;
	int err = 0;

	sb_init(&out, 8 * HTML_CHUNK);
	while (!err && done < len) {
		size_t piece = len - done < HTML_CHUNK ? len - done :
							 HTML_CHUNK;

		sb_reset(&out);
		done += html_escape_json(&out, json + done, piece,
					 done + piece < len);
		/* Six bytes per input byte at most: the bound is never hit. */
		err = out.truncated ? -ENOMEM : write_all(fd, out.buf, out.len);
	}
	/* A mapped report.json cut shorter meanwhile read as zeros: the
	 * page would be broken, so none is written. */
	if (!err && mapped_file_cut(json))
		err = -EIO;
	sb_release(&out);
	return err;
}

static int write_page(int fd, const char *json, size_t len)
{
	struct asset pieces[MARK_COUNT + 1];
	struct asset fill[MARK_COUNT] = {
		[MARK_STYLE] = asset_of(report_web_style, report_web_style_end),
		[MARK_ECHARTS] =
			asset_of(report_web_echarts, report_web_echarts_end),
		[MARK_APP] = asset_of(report_web_app, report_web_app_end),
	};
	int err = split_template(pieces);

	for (int m = 0; !err && m < MARK_COUNT; m++) {
		err = write_all(fd, pieces[m].data, pieces[m].len);
		if (err)
			break;
		if (m == MARK_DATA)
			err = write_json_escaped(fd, json, len);
		else
			err = write_all(fd, fill[m].data, fill[m].len);
	}
	if (!err)
		err = write_all(fd, pieces[MARK_COUNT].data,
				pieces[MARK_COUNT].len);
	return err;
}

/* ".NAME.tmp": a dot file next to NAME, on the same filesystem. */
static void temp_name(struct strbuf *tmp, const char *name)
{
	sb_addf(tmp, ".%s.tmp", name);
}

int report_write_html(int dirfd, const char *name, const char *report_json,
		      size_t len)
{
	struct strbuf tmp;
	int fd, err;

	sb_init(&tmp, 4096);
	temp_name(&tmp, name);
	if (tmp.truncated || strchr(name, '/')) {
		sb_release(&tmp);
		return -EINVAL;
	}
	if (unlinkat(dirfd, sb_str(&tmp), 0) < 0 && errno != ENOENT) {
		err = -errno;
		goto out;
	}
	fd = openat(dirfd, sb_str(&tmp),
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
			    O_NOCTTY,
		    0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = write_page(fd, report_json, len);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(dirfd, sb_str(&tmp), dirfd, name) < 0)
		err = -errno;
	if (err)
		unlinkat(dirfd, sb_str(&tmp), 0);
out:
	sb_release(&tmp);
	return err;
}

int report_write_html_from(int dirfd, const char *json_name, const char *name)
{
	const char *json;
	size_t len;
	int err = map_file(dirfd, json_name, &json, &len);

	if (err)
		return err;
	err = report_write_html(dirfd, name, json ? json : "", len);
	unmap_file(json, len);
	return err;
}
