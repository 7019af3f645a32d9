/* SPDX-License-Identifier: MIT */
/*
 * Messages for the subcommands' getopt_long loops (opterr = 0, an
 * optstring starting with ':'): each names the option as the user wrote
 * it, so that a mistyped or misplaced option is found at once.
 */
#ifndef IOWRAP_CLIOPT_H
#define IOWRAP_CLIOPT_H

#include <getopt.h>
#include <stddef.h>

/*
 * getopt_long(argc, argv, optstring, longopts) (optstring "+:..." or ":..."),
 * refusing also a value an unset variable would have given: "--"
 * (`-o $DIR --`), or, in its own word, what looks like the next option
 * (`--root $DIR --task x`; such a value is given attached: --root=-x,
 * -o-x; "-" and negative numbers are taken).  Returns the option,
 * -1 at the end, or '?' with msg naming the option as the user wrote it:
 * "unknown option '--bogus'", "option '-o' needs an argument"...
 */
int cliopt_next(int argc, char **argv, const char *optstring,
		const struct option *longopts, char *msg, size_t size);

#endif
