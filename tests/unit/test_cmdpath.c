// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmdpath.h"
#include "unit.h"

/*
 * A scratch tree:
 *   A/exe A/noexec A/subdir/ A/both(0644) A/first
 *   B/both(0755) B/first B/exe
 *   C/noexec
 * The tests run as root, where access(X_OK) succeeds if any x bit is set:
 * "not executable" files are 0644.
 */
static char top[64];
static char dir_a[96], dir_b[96], dir_c[96];

static void make_file(const char *dir, const char *name, mode_t mode)
{
	char path[160];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (!CHECK(fd >= 0))
		return;
	(void)!write(fd, "#!/bin/sh\n", 10);
	close(fd);
	CHECK_INT(chmod(path, mode), 0);
}

static bool make_tree(void)
{
	snprintf(top, sizeof(top), "/tmp/iowrap-unit-XXXXXX");
	if (!CHECK(mkdtemp(top)))
		return false;
	snprintf(dir_a, sizeof(dir_a), "%s/A", top);
	snprintf(dir_b, sizeof(dir_b), "%s/B", top);
	snprintf(dir_c, sizeof(dir_c), "%s/C", top);
	CHECK_INT(mkdir(dir_a, 0755), 0);
	CHECK_INT(mkdir(dir_b, 0755), 0);
	CHECK_INT(mkdir(dir_c, 0755), 0);
	make_file(dir_a, "exe", 0755);
	make_file(dir_a, "noexec", 0644);
	make_file(dir_a, "both", 0644);
	make_file(dir_a, "first", 0700);
	make_file(dir_b, "both", 0755);
	make_file(dir_b, "first", 0755);
	make_file(dir_b, "exe", 0755);
	make_file(dir_c, "noexec", 0644);
	{
		char sub[128];

		snprintf(sub, sizeof(sub), "%s/subdir", dir_a);
		CHECK_INT(mkdir(sub, 0755), 0);
	}
	return unit_failures() == 0;
}

static void remove_tree(void)
{
	static const char *const files[] = {
		"A/exe", "A/noexec", "A/both",	 "A/first", "B/both", "B/first",
		"B/exe", "C/noexec", "A/subdir", "A",	    "B",      "C",
	};
	char path[160];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", top, files[i]);
		if (remove(path) != 0)
			unit_note("cannot remove %s", path);
	}
	if (rmdir(top) != 0)
		unit_note("cannot remove %s", top);
}

/* Resolves name on path_env; checks the result and the path it gives. */
static void check_resolve(const char *name, const char *path_env, int want,
			  const char *want_path)
{
	struct strbuf sb;
	int err;

	sb_init(&sb, 0);
	sb_adds(&sb, "stale");
	err = cmdpath_resolve(name, path_env, &sb);
	if (!CHECK_INT(err, want) | !CHECK_STR(sb_str(&sb), want_path))
		unit_note("name \"%s\", PATH \"%s\"", name,
			  path_env ? path_env : "(unset)");
	sb_release(&sb);
}

static void cmdpath_search(void)
{
	char path_env[512], want[512];

	if (!make_tree())
		goto out;
	/* found */
	snprintf(want, sizeof(want), "%s/exe", dir_a);
	check_resolve("exe", dir_a, 0, want);
	snprintf(path_env, sizeof(path_env), "/nonexistent:%s/:%s", dir_c,
		 dir_a);
	check_resolve("exe", path_env, 0, want);
	/* the first executable wins */
	snprintf(path_env, sizeof(path_env), "%s:%s", dir_a, dir_b);
	snprintf(want, sizeof(want), "%s/first", dir_a);
	check_resolve("first", path_env, 0, want);
	snprintf(path_env, sizeof(path_env), "%s:%s", dir_b, dir_a);
	snprintf(want, sizeof(want), "%s/first", dir_b);
	check_resolve("first", path_env, 0, want);
	/* a later executable beats an earlier non-executable file */
	snprintf(path_env, sizeof(path_env), "%s:%s", dir_a, dir_b);
	snprintf(want, sizeof(want), "%s/both", dir_b);
	check_resolve("both", path_env, 0, want);
out:
	remove_tree();
}

static void cmdpath_not_found(void)
{
	char path_env[512];

	if (!make_tree())
		goto out;
	check_resolve("missing", dir_a, -ENOENT, "missing");
	snprintf(path_env, sizeof(path_env), "%s:%s:/nonexistent", dir_a,
		 dir_b);
	check_resolve("missing", path_env, -ENOENT, "missing");
	check_resolve("", path_env, -ENOENT, "");
	/* a directory on PATH is not a command */
	check_resolve("subdir", dir_a, -ENOENT, "subdir");
out:
	remove_tree();
}

static void cmdpath_not_executable(void)
{
	char path_env[512];

	if (!make_tree())
		goto out;
	check_resolve("noexec", dir_a, -EACCES, "noexec");
	snprintf(path_env, sizeof(path_env), "/nonexistent:%s:%s", dir_b,
		 dir_a);
	check_resolve("noexec", path_env, -EACCES, "noexec");
	/* found twice, executable nowhere */
	snprintf(path_env, sizeof(path_env), "%s:%s", dir_a, dir_c);
	check_resolve("noexec", path_env, -EACCES, "noexec");
	/* found first, nothing better after it */
	snprintf(path_env, sizeof(path_env), "%s:%s", dir_c, dir_b);
	check_resolve("noexec", path_env, -EACCES, "noexec");
out:
	remove_tree();
}

static void cmdpath_with_slash(void)
{
	char name[512];

	if (!make_tree())
		goto out;
	snprintf(name, sizeof(name), "%s/exe", dir_a);
	check_resolve(name, "/nonexistent", 0, name);
	snprintf(name, sizeof(name), "%s/noexec", dir_a);
	check_resolve(name, dir_b, -EACCES, name);
	snprintf(name, sizeof(name), "%s/subdir", dir_a);
	check_resolve(name, dir_a, -EISDIR, name);
	snprintf(name, sizeof(name), "%s/subdir/", dir_a);
	check_resolve(name, dir_a, -EISDIR, name);
	check_resolve(dir_a, NULL, -EISDIR, dir_a);
	snprintf(name, sizeof(name), "%s/missing", dir_a);
	check_resolve(name, dir_a, -ENOENT, name);
	/* not a regular file */
	check_resolve("/dev/null", NULL, -EACCES, "/dev/null");
out:
	remove_tree();
}

/* An empty PATH entry, leading, trailing or in the middle, means ".". */
static void cmdpath_empty_entry_is_cwd(void)
{
	char path_env[512], name[512];
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (!CHECK(cwd >= 0) || !make_tree())
		goto out;
	if (!CHECK_INT(chdir(dir_a), 0))
		goto out;
	check_resolve("exe", "", 0, "./exe");
	check_resolve("exe", ":/nonexistent", 0, "./exe");
	check_resolve("exe", "/nonexistent:", 0, "./exe");
	check_resolve("exe", "/nonexistent::/also-not", 0, "./exe");
	snprintf(path_env, sizeof(path_env), "%s::", dir_b);
	snprintf(name, sizeof(name), "%s/exe", dir_b);
	check_resolve("exe", path_env, 0, name);
	/* "." not on PATH: not found there */
	check_resolve("exe", "/nonexistent", -ENOENT, "exe");
	check_resolve("noexec", ":", -EACCES, "noexec");
	/* a relative slash path is taken as is */
	check_resolve("./exe", "/nonexistent", 0, "./exe");
	check_resolve("subdir/../exe", "/nonexistent", 0, "subdir/../exe");
	check_resolve("./subdir", "/nonexistent", -EISDIR, "./subdir");
out:
	if (cwd >= 0) {
		CHECK_INT(fchdir(cwd), 0);
		close(cwd);
	}
	remove_tree();
}

/* With PATH unset the default list is searched. */
static void cmdpath_default_path(void)
{
	struct stat st;

	if (stat("/usr/local/bin/sh", &st) == 0 || stat("/bin/sh", &st) != 0) {
		unit_note("no /bin/sh, or a /usr/local/bin/sh: not checked");
		return;
	}
	check_resolve("sh", NULL, 0, "/bin/sh");
	check_resolve("iowrap-no-such-command", NULL, -ENOENT,
		      "iowrap-no-such-command");
}

const struct unit_test cmdpath_tests[] = {
	UNIT_TEST(cmdpath_search),
	UNIT_TEST(cmdpath_not_found),
	UNIT_TEST(cmdpath_not_executable),
	UNIT_TEST(cmdpath_with_slash),
	UNIT_TEST(cmdpath_empty_entry_is_cwd),
	UNIT_TEST(cmdpath_default_path),
	UNIT_END,
};
