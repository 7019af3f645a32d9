/* SPDX-License-Identifier: MIT */
/*
 * argv as one field: the words joined by spaces, each quoted the way a POSIX
 * shell reads it back ('it'\''s').  A word made only of characters a shell
 * leaves alone is written bare, so common command lines stay readable.
 * argv_split() is the exact inverse, for any bytes.
 */
#ifndef IOWRAP_ARGV_H
#define IOWRAP_ARGV_H

#include <stddef.h>

#include "strbuf.h"

void argv_quote_word(struct strbuf *sb, const char *word, size_t len);
/* Quotes a NUL-separated list as /proc/PID/cmdline holds it. */
void argv_quote_nul_list(struct strbuf *sb, const char *list, size_t len);
void argv_quote_vector(struct strbuf *sb, char *const *argv);
/* Splits a quoted line back into NUL-separated words; returns the number
 * of words, or -1 if the quoting is malformed. */
int argv_split(const char *line, size_t len, struct strbuf *out);

#endif
