/* SPDX-License-Identifier: MIT */
/*
 * report.html: one self-contained page (template, CSS, Apache ECharts,
 * app.js and the report's JSON), all embedded in the binary at build time
 * (report/web_assets.S), so the page opens offline and iowrap stays one
 * file.  The JSON goes into a <script type="application/json"> element and
 * is treated as hostile: nothing in it can end that element or start a
 * comment, whatever paths or command lines it holds.
 */
#ifndef IOWRAP_REPORT_HTML_H
#define IOWRAP_REPORT_HTML_H

#include <stddef.h>

#include "strbuf.h"

/* The assets as linked in; each ends at *_end (no NUL counted). */
extern const char report_web_template[], report_web_template_end[];
extern const char report_web_style[], report_web_style_end[];
extern const char report_web_echarts[], report_web_echarts_end[];
extern const char report_web_app[], report_web_app_end[];

/*
 * Appends JSON text to out so that it can sit inside a <script> element:
 * '<', '>' and '&' become \u003c, \u003e, \u0026 and the line separators
 * U+2028 and U+2029 become \u2028 and \u2029.  Those characters can only
 * occur inside JSON strings, where the escapes mean the same characters,
 * so JSON.parse() reads back exactly the input; "</script" and "<!--" can
 * no longer occur.  Input that is not JSON stays not JSON (and harmless).
 * Returns how many bytes of json it consumed: all of len, except up to two
 * trailing bytes that may begin U+2028/U+2029 when more input follows
 * (more = 1); pass them again with the next piece.
 */
size_t html_escape_json(struct strbuf *out, const char *json, size_t len,
			int more);

/*
 * Writes the page with report_json embedded as NAME under dirfd, as
 * report.json is written: to ".NAME.tmp" (O_EXCL|O_NOFOLLOW, mode 0644)
 * renamed over NAME, so a reader never sees half a page and a symlink
 * named NAME is replaced, not followed.  Returns 0 or -errno (EINVAL: the
 * built-in template lacks a marker); on failure nothing is left behind.
 */
int report_write_html(int dirfd, const char *name, const char *report_json,
		      size_t len);

/*
 * The same with the JSON read from json_name under dirfd (a regular file,
 * not followed if a symlink; mapped, not copied): what `iowrap report`
 * calls right after writing report.json.
 */
int report_write_html_from(int dirfd, const char *json_name, const char *name);

#endif
