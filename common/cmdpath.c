// SPDX-License-Identifier: MIT
#include "cmdpath.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0 if path names an executable regular file, else why not. */
static int check_candidate(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return -EACCES;
	return 0;
}

int cmdpath_resolve(const char *name, const char *path_env, struct strbuf *path)
{
	const char *dir;
	int first_error = -ENOENT;

	sb_reset(path);
	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		sb_adds(path, name);
		return check_candidate(name);
	}
	if (!path_env)
		path_env = "/usr/local/bin:/bin:/usr/bin";
	for (dir = path_env;; dir++) {
		const char *end = strchrnul(dir, ':');
		int err;

		sb_reset(path);
		/* An empty PATH entry means the current directory. */
		if (end == dir)
			sb_addc(path, '.');
		else
			sb_add(path, dir, (size_t)(end - dir));
		sb_addc(path, '/');
		sb_adds(path, name);
		err = check_candidate(sb_str(path));
		if (err == 0)
			return 0;
		/* As execvp: a found but unusable file beats "not found". */
		if (err == -EACCES && first_error == -ENOENT)
			first_error = err;
		if (!*end)
			break;
		dir = end;
	}
	sb_reset(path);
	sb_adds(path, name);
	return first_error;
}
