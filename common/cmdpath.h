/* SPDX-License-Identifier: MIT */
/* Finds a command the way execvp(3) does, but before forking, so that
 * "not found" and "not executable" are told apart and reported clearly. */
#ifndef IOWRAP_CMDPATH_H
#define IOWRAP_CMDPATH_H

#include "strbuf.h"

/* Fills path; returns 0, -ENOENT (exit 127), -EACCES or -EISDIR (126). */
int cmdpath_resolve(const char *name, const char *path_env,
		    struct strbuf *path);

#endif
