/* SPDX-License-Identifier: MIT */
/*
 * Text from traces and logs on a terminal: anything that could move the
 * cursor, change colours, reorder text (bidi controls) or hide itself is
 * shown escaped, so a hostile task name cannot forge or hide a table row.
 */
#ifndef IOWRAP_DISPLAY_H
#define IOWRAP_DISPLAY_H

#include <stddef.h>

#include "strbuf.h"

/*
 * Appends s[0..len) with '\\' as "\\\\", C0 and C1 controls, DEL, bidi
 * controls and line/paragraph separators as \xHH or \u{HHHH}, and bytes
 * that are not valid UTF-8 as \xHH.  Returns the columns added (one per
 * character; East Asian wide characters are not told apart).
 */
size_t display_add(struct strbuf *sb, const char *s, size_t len);
size_t display_adds(struct strbuf *sb, const char *s);

#endif
