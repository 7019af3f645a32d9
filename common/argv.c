// SPDX-License-Identifier: MIT
#include "argv.h"

#include <stdbool.h>
#include <string.h>

static bool is_bare_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("_@%+=:,./-", c);
}

void argv_quote_word(struct strbuf *sb, const char *word, size_t len)
{
	bool bare = len > 0;

	for (size_t i = 0; i < len && bare; i++)
		bare = word[i] && is_bare_char((unsigned char)word[i]);
	if (bare) {
		sb_add(sb, word, len);
		return;
	}
	sb_addc(sb, '\'');
	for (size_t i = 0; i < len; i++) {
		if (word[i] == '\'')
			sb_adds(sb, "'\\''");
		else
			sb_addc(sb, word[i]);
	}
	sb_addc(sb, '\'');
}

void argv_quote_nul_list(struct strbuf *sb, const char *list, size_t len)
{
	size_t start = 0;

	/* cmdline ends with a NUL; a missing one means it was cut short. */
	while (start < len) {
		const char *end = memchr(list + start, '\0', len - start);
		size_t wlen = end ? (size_t)(end - (list + start)) :
				    len - start;

		if (start)
			sb_addc(sb, ' ');
		argv_quote_word(sb, list + start, wlen);
		start += wlen + 1;
	}
}

void argv_quote_vector(struct strbuf *sb, char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			sb_addc(sb, ' ');
		argv_quote_word(sb, argv[i], strlen(argv[i]));
	}
}

int argv_split(const char *line, size_t len, struct strbuf *out)
{
	size_t i = 0;
	int words = 0;

	sb_reset(out);
	while (i < len) {
		if (line[i] == ' ') {
			i++;
			continue;
		}
		while (i < len && line[i] != ' ') {
			if (line[i] == '\'') {
				const char *close =
					memchr(line + i + 1, '\'', len - i - 1);

				if (!close)
					return -1;
				sb_add(out, line + i + 1,
				       (size_t)(close - line) - i - 1);
				i = (size_t)(close - line) + 1;
			} else if (line[i] == '\\') {
				if (i + 1 >= len)
					return -1;
				sb_addc(out, line[i + 1]);
				i += 2;
			} else {
				sb_addc(out, line[i++]);
			}
		}
		sb_addc(out, '\0');
		words++;
	}
	return words;
}
