// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "html.h"
#include "unit.h"
#include "util.h"

/* Inputs escaped in one piece, and what must come out. */
static const struct escape_case {
	const char *in, *out;
	size_t in_len, out_len;
} escape_cases[] = {
#define CASE(in, out)                                    \
	{                                                \
		in, out, sizeof(in) - 1, sizeof(out) - 1 \
	}
	/* The end of the data element, in any case. */
	CASE("{\"p\":\"</script><script>alert(1)</SCRIPT>\"}",
	     "{\"p\":\"\\u003c/script\\u003e\\u003cscript\\u003e"
	     "alert(1)\\u003c/SCRIPT\\u003e\"}"),
	/* A comment start (which would change how </script> is parsed). */
	CASE("[\"<!-- x -->\",\"a&b\"]",
	     "[\"\\u003c!-- x --\\u003e\",\"a\\u0026b\"]"),
	/* U+2028 and U+2029; U+2027 and U+202A stay as they are. */
	CASE("\"a\xe2\x80\xa8"
	     "b\xe2\x80\xa9"
	     "c\xe2\x80\xa7"
	     "d\xe2\x80\xaa\"",
	     "\"a\\u2028b\\u2029c\xe2\x80\xa7"
	     "d\xe2\x80\xaa\""),
	/* Quotes, backslashes, escaped newlines, U+FFFD and NUL pass. */
	CASE("{\"p\":\"a\\\"b\\\\\\n\xef\xbf\xbd\"}\0x",
	     "{\"p\":\"a\\\"b\\\\\\n\xef\xbf\xbd\"}\0x"),
	CASE("", ""),
	/* A cut separator at the very end is copied, not escaped. */
	CASE("x\xe2\x80", "x\xe2\x80"),
#undef CASE
};

static void html_escape_cases(void)
{
	struct strbuf sb;

	sb_init(&sb, 0);
	for (size_t i = 0; i < ARRAY_SIZE(escape_cases); i++) {
		const struct escape_case *c = &escape_cases[i];

		sb_reset(&sb);
		CHECK_UINT(html_escape_json(&sb, c->in, c->in_len, 0),
			   c->in_len);
		if (!CHECK_MEM(sb.buf, sb.len, c->out, c->out_len))
			unit_note("case %zu", i);
		if (!CHECK(!memchr(sb.buf, '<', sb.len)))
			unit_note("case %zu", i);
	}
	sb_release(&sb);
}

/* A separator split over two pieces is escaped once, whole. */
static void html_escape_split_pieces(void)
{
	static const char in[] = "ab\xe2\x80\xa8<c";
	struct strbuf sb;

	sb_init(&sb, 0);
	for (size_t cut = 0; cut <= sizeof(in) - 1; cut++) {
		size_t used;

		sb_reset(&sb);
		used = html_escape_json(&sb, in, cut, 1);
		CHECK(used <= cut && cut - used <= 2);
		html_escape_json(&sb, in + used, sizeof(in) - 1 - used, 0);
		if (!CHECK_SB(&sb, "ab\\u2028\\u003cc"))
			unit_note("cut at %zu", cut);
	}
	sb_release(&sb);
}

static char *read_back(int dirfd, const char *name, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (buf && read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	close(fd);
	return buf;
}

static int temp_dir(char *path)
{
	if (!mkdtemp(path))
		return -1;
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* A second run replaces the page; a planted symlink is replaced, not
 * followed; a stale temporary file is not in the way. */
static void page_replaces_old_and_symlinks(int dirfd)
{
	size_t len = 0;
	char *page;

	CHECK_INT(report_write_html(dirfd, "report.html", "[1]", 3), 0);
	CHECK_INT(unlinkat(dirfd, "report.html", 0), 0);
	CHECK_INT(symlinkat("/tmp/iowrap-html-victim", dirfd, "report.html"),
		  0);
	CHECK_INT(symlinkat("/tmp/iowrap-html-victim2", dirfd,
			    ".report.html.tmp"),
		  0);
	CHECK_INT(report_write_html(dirfd, "report.html", "[2]", 3), 0);
	CHECK(access("/tmp/iowrap-html-victim", F_OK) < 0);
	CHECK(access("/tmp/iowrap-html-victim2", F_OK) < 0);
	CHECK(faccessat(dirfd, ".report.html.tmp", F_OK, AT_SYMLINK_NOFOLLOW) <
	      0);
	page = read_back(dirfd, "report.html", &len);
	CHECK(page && strstr(page, "id=\"iowrap-report-data\">[2]</script>"));
	free(page);
	CHECK_INT(report_write_html(dirfd, "a/b.html", "[]", 2), -EINVAL);
}

/* From report.json on disk: the same page; a symlink is refused. */
static void page_from_json_file(int dirfd)
{
	static const char json[] = "{\"x\":\"<\"}";
	size_t a_len = 0, b_len = 0;
	char *a, *b;
	int fd =
		openat(dirfd, "report.json", O_WRONLY | O_CREAT | O_EXCL, 0600);

	if (!CHECK(fd >= 0))
		return;
	CHECK(write(fd, json, sizeof(json) - 1) == sizeof(json) - 1);
	close(fd);
	CHECK_INT(report_write_html(dirfd, "a.html", json, sizeof(json) - 1),
		  0);
	CHECK_INT(report_write_html_from(dirfd, "report.json", "b.html"), 0);
	a = read_back(dirfd, "a.html", &a_len);
	b = read_back(dirfd, "b.html", &b_len);
	CHECK(a && b && a_len == b_len && !memcmp(a, b, a_len));
	free(a);
	free(b);
	CHECK_INT(symlinkat("report.json", dirfd, "link.json"), 0);
	CHECK_INT(report_write_html_from(dirfd, "link.json", "c.html"), -ELOOP);
	CHECK_INT(report_write_html_from(dirfd, "missing.json", "c.html"),
		  -ENOENT);
	CHECK_INT(report_write_html_from(dirfd, ".", "c.html"), -EINVAL);
	CHECK(faccessat(dirfd, "c.html", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
	unlinkat(dirfd, "link.json", 0);
	unlinkat(dirfd, "report.json", 0);
	unlinkat(dirfd, "a.html", 0);
	unlinkat(dirfd, "b.html", 0);
}

static void html_page_embeds_everything(void)
{
	char path[] = "/tmp/iowrap-html-XXXXXX";
	static const char json[] = "{\"t\":\"</script><!--\"}";
	const char *data, *close_tag;
	size_t len = 0;
	char *page;
	int dirfd = temp_dir(path);

	if (!CHECK(dirfd >= 0))
		return;
	CHECK_INT(report_write_html(dirfd, "report.html", json,
				    sizeof(json) - 1),
		  0);
	page = read_back(dirfd, "report.html", &len);
	if (CHECK(page)) {
		size_t assets =
			(size_t)(report_web_template_end -
				 report_web_template) +
			(size_t)(report_web_style_end - report_web_style) +
			(size_t)(report_web_echarts_end - report_web_echarts) +
			(size_t)(report_web_app_end - report_web_app);

		CHECK(!strstr(page, "@IOWRAP_"));
		CHECK(strstr(page, "echarts") != NULL);
		data = strstr(page, "id=\"iowrap-report-data\">");
		if (CHECK(data)) {
			data += strlen("id=\"iowrap-report-data\">");
			CHECK(!strncmp(
				data,
				"{\"t\":\"\\u003c/script\\u003e\\u003c!--\"}</script>",
				45));
			close_tag = strstr(data, "</script>");
			CHECK(close_tag == data + 36);
		}
		/* Markers out, 5 escapes of 5 extra bytes each in. */
		CHECK_UINT(len, assets - 4 * 14 + 1 + sizeof(json) - 1 + 3 * 5);
	}
	free(page);
	page_replaces_old_and_symlinks(dirfd);
	page_from_json_file(dirfd);
	unlinkat(dirfd, "report.html", 0);
	close(dirfd);
	rmdir(path);
}

const struct unit_test html_tests[] = {
	UNIT_TEST(html_escape_cases),
	UNIT_TEST(html_escape_split_pieces),
	UNIT_TEST(html_page_embeds_everything),
	UNIT_END,
};
