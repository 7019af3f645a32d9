/* SPDX-License-Identifier: MIT */
/* Where the task runs: the host, the task's cgroup and its container. */
#ifndef IOWRAP_HOSTINFO_H
#define IOWRAP_HOSTINFO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"

struct host_info {
	char hostname[256];
	char kernel[256]; /* release */
	char kernel_version[256];
	char arch[65];
	long cpus_online;
	uint64_t memory_bytes;
	double load[3];
	/* This boot's /proc/sys/kernel/random/boot_id: with a device and
	 * inode number and birth time, a file's identity across traces of
	 * one boot (the report joins by it).  Empty: not readable. */
	char boot_id[37];
};

/* Maps cgroup paths to ids; remembers the cgroup2 mount point. */
struct cgroup_resolver {
	bool has_v2;
	char v2_mount[512];
	char last_path[1024];
	uint64_t last_id;
};

struct task_context {
	struct cgroup_entry cgroup;
	uint64_t cgroup_id;
	char container_id[65];
	const char *container_source; /* "cgroup", "mountinfo" or NULL */
};

void host_info_read(struct host_info *h);
void cgroup_resolver_init(struct cgroup_resolver *cr);
/* The cgroup v2 id (inode of the cgroup's directory); 0 if unknown. */
uint64_t cgroup_resolve_id(struct cgroup_resolver *cr,
			   const struct cgroup_entry *cg);
void task_context_read(struct task_context *ctx, struct cgroup_resolver *cr);

#endif
