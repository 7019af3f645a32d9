// SPDX-License-Identifier: MIT
#include "hostinfo.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util.h"

/* A boot id as the kernel writes it: 36 characters of lowercase hex and
 * dashes (8-4-4-4-12), then a newline. */
static bool is_boot_id(const char *s, size_t len)
{
	if (len != 37 || s[36] != '\n')
		return false;
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' :
			   !((s[i] >= '0' && s[i] <= '9') ||
			     (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

static void read_boot_id(char id[37])
{
	char buf[64];
	ssize_t n = read_file_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id",
				 buf, sizeof(buf));

	id[0] = '\0';
	if (n > 0 && is_boot_id(buf, (size_t)n)) {
		memcpy(id, buf, 36);
		id[36] = '\0';
	}
}

void host_info_read(struct host_info *h)
{
	struct utsname u;
	struct sysinfo si;

	memset(h, 0, sizeof(*h));
	if (uname(&u) == 0) {
		snprintf(h->hostname, sizeof(h->hostname), "%s", u.nodename);
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
		snprintf(h->kernel_version, sizeof(h->kernel_version), "%s",
			 u.version);
		snprintf(h->arch, sizeof(h->arch), "%s", u.machine);
	}
	h->cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
	if (sysinfo(&si) == 0) {
		h->memory_bytes = (uint64_t)si.totalram * si.mem_unit;
		for (int i = 0; i < 3; i++)
			h->load[i] = (double)si.loads[i] /
				     (double)(1 << SI_LOAD_SHIFT);
	}
	read_boot_id(h->boot_id);
}

/* mountinfo and cgroup files can be large on busy hosts: bound them. */
static char *read_small_proc_file(const char *path, size_t max)
{
	char *buf = xmalloc(max);

	if (read_file_at(AT_FDCWD, path, buf, max) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void cgroup_resolver_init(struct cgroup_resolver *cr)
{
	char *mi = read_small_proc_file("/proc/self/mountinfo", 1u << 20);

	memset(cr, 0, sizeof(*cr));
	if (mi)
		cr->has_v2 = find_cgroup2_mount(mi, cr->v2_mount,
						sizeof(cr->v2_mount));
	free(mi);
}

uint64_t cgroup_resolve_id(struct cgroup_resolver *cr,
			   const struct cgroup_entry *cg)
{
	char path[2048];
	struct stat st;

	if (!cr->has_v2 || cg->version != 2)
		return 0;
	if (cr->last_id && strcmp(cr->last_path, cg->path) == 0)
		return cr->last_id;
	snprintf(path, sizeof(path), "%s%s", cr->v2_mount, cg->path);
	if (stat(path, &st) != 0)
		return 0;
	snprintf(cr->last_path, sizeof(cr->last_path), "%s", cg->path);
	cr->last_id = (uint64_t)st.st_ino;
	return cr->last_id;
}

void task_context_read(struct task_context *ctx, struct cgroup_resolver *cr)
{
	char *text;

	memset(ctx, 0, sizeof(*ctx));
	text = read_small_proc_file("/proc/self/cgroup", 64 * 1024);
	if (text) {
		if (parse_proc_cgroup(text, cr->has_v2, &ctx->cgroup) == 0)
			ctx->cgroup_id = cgroup_resolve_id(cr, &ctx->cgroup);
		if (find_container_id(text, NULL, ctx->container_id))
			ctx->container_source = "cgroup";
		free(text);
	}
	if (ctx->container_source)
		return;
	text = read_small_proc_file("/proc/self/mountinfo", 1u << 20);
	if (text && find_container_id(text, "containers/", ctx->container_id))
		ctx->container_source = "mountinfo";
	free(text);
}
