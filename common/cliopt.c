// SPDX-License-Identifier: MIT
#include "cliopt.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* "--name" of a long option's word, without its "=value". */
static void long_name(const char *word, char *out, size_t size)
{
	snprintf(out, size, "%.*s", (int)strcspn(word, "="), word);
}

static bool is_long(const char *word)
{
	return strncmp(word, "--", 2) == 0;
}

/*
 * A long option of no_argument given "=value" also returns '?', with its
 * val in optopt, as an unknown short option does: the word tells them
 * apart (a prefix of such an option's name, then '=').
 */
static bool value_refused(const char *word, const struct option *longopts)
{
	size_t n = strcspn(word + 2, "=");

	if (!is_long(word) || !word[2 + n])
		return false;
	for (; longopts->name; longopts++)
		if (longopts->has_arg == no_argument &&
		    longopts->val == optopt &&
		    strncmp(longopts->name, word + 2, n) == 0)
			return true;
	return false;
}

/* "-c" of a short option, printable: the message goes to a terminal. */
static void short_name(int c, char *out, size_t size)
{
	snprintf(out, size, "-%c", c > ' ' && c < 127 ? c : '?');
}

static void cliopt_error(int c, char **argv, const struct option *longopts,
			 char *msg, size_t size)
{
	/* musl leaves optind past argv[argc] when a short option's argument
	 * is missing. */
	const char *word = argv[optind - 1] ? argv[optind - 1] : "";
	bool no_value = c == '?' && optopt && value_refused(word, longopts);
	char name[128];

	/* A missing argument always moves optind past the option's word; an
	 * unknown short option may not (-zf), but it is in optopt. */
	if (c == ':' ? is_long(word) : !optopt || no_value)
		long_name(word, name, sizeof(name));
	else
		short_name(optopt, name, sizeof(name));
	if (c == ':')
		snprintf(msg, size, "option '%s' needs an argument", name);
	else if (no_value)
		snprintf(msg, size, "option '%s' takes no value", name);
	else
		snprintf(msg, size, "unknown option '%s'", name);
}

/* "-x", "--x": not "-" (stdin, by custom) nor "-1" (a number). */
static bool looks_like_option(const char *s)
{
	return s[0] == '-' && s[1] && !(s[1] >= '0' && s[1] <= '9');
}

static bool value_suspect(int c, char **argv, char *msg, size_t size)
{
	bool own_word = optarg == argv[optind - 1];
	const char *word = argv[optind - (own_word ? 2 : 1)];
	char name[128];

	if (strcmp(optarg, "--") != 0 &&
	    !(own_word && looks_like_option(optarg)))
		return false;
	if (is_long(word))
		long_name(word, name, sizeof(name));
	else
		short_name(c, name, sizeof(name));
	if (strcmp(optarg, "--") == 0)
		snprintf(
			msg, size,
			"option '%s' has '--' as its value: an unset or empty variable before '--'?",
			name);
	else
		snprintf(
			msg, size,
			"option '%s' would take '%.64s' as its value: an unset or empty variable before it? (a value starting with '-' is given attached: %s%s%.64s)",
			name, optarg, name, is_long(word) ? "=" : "", optarg);
	return true;
}

int cliopt_next(int argc, char **argv, const char *optstring,
		const struct option *longopts, char *msg, size_t size)
{
	int c;

	opterr = 0;
	/* musl leaves optarg as it was for an option without a value. */
	optarg = NULL;
	c = getopt_long(argc, argv, optstring, longopts, NULL);
	if (c == '?' || c == ':') {
		cliopt_error(c, argv, longopts, msg, size);
		return '?';
	}
	if (optarg && value_suspect(c, argv, msg, size))
		return '?';
	return c;
}
