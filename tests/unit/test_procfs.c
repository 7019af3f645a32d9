// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfs.h"
#include "unit.h"

/* ---- /proc/PID/stat ---- */

static void procfs_stat_real_line(void)
{
	static const char line[] =
		"4242 (bash) S 4241 4242 4242 34816 4300 4194560 2186 12003 7 "
		"3 51 23 40 13 20 0 3 0 5678901 9244672 1290 "
		"18446744073709551615 94113356812288 94113357722493 "
		"140726235374064 0 0 0 65536 3686404 1266761467 1 0 0 17 1 0 "
		"0 0 0 0 94113357959664 94113358008884 94113382277120 "
		"140726235382583 140726235382588 140726235382588 "
		"140726235385838 0\n";
	struct proc_stat st;

	CHECK_INT(parse_proc_stat(line, &st), 0);
	CHECK_INT(st.state, 'S');
	CHECK_INT(st.ppid, 4241);
	CHECK_UINT(st.flags, 4194560);
	CHECK_UINT(st.minflt, 2186);
	CHECK_UINT(st.majflt, 7);
	CHECK_UINT(st.utime_ticks, 51);
	CHECK_UINT(st.stime_ticks, 23);
	CHECK_UINT(st.num_threads, 3);
	CHECK_UINT(st.starttime_ticks, 5678901);
	CHECK_INT(st.processor, 1);
}

/* comm is up to 15 bytes of anything, ')' and spaces included. */
static void procfs_stat_hostile_comm(void)
{
	static const char *const lines[] = {
		"1234 (a) b) c) S 1 1234 1234 0 -1 4194304 11 0 22 0 33 44 0 "
		"0 20 0 5 0 777 1 2 3\n",
		"1234 () R ) S 1 1234 1234 0 -1 4194304 11 0 22 0 33 44 0 0 "
		"20 0 5 0 777 1 2 3\n",
		"1234 (x) Z 9 9 9 9 9) S 1 1234 1234 0 -1 4194304 11 0 22 0 "
		"33 44 0 0 20 0 5 0 777\n",
		"1234 (a\nb (c) S 1 1234 1234 0 -1 4194304 11 0 22 0 33 44 0 0 "
		"20 0 5 0 777\n",
		"1234 ( ) S 1 1234 1234 0 -1 4194304 11 0 22 0 33 44 0 0 20 0 "
		"5 0 777",
		"1234 ()) S 1 1234 1234 0 -1 4194304 11 0 22 0 33 44 0 0 20 0 "
		"5 0 777\n",
	};
	struct proc_stat st;

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		unsigned long before = unit_failures();

		CHECK_INT(parse_proc_stat(lines[i], &st), 0);
		CHECK_INT(st.state, 'S');
		CHECK_INT(st.ppid, 1);
		CHECK_UINT(st.minflt, 11);
		CHECK_UINT(st.majflt, 22);
		CHECK_INT(st.processor, -1);
		CHECK_UINT(st.utime_ticks, 33);
		CHECK_UINT(st.stime_ticks, 44);
		CHECK_UINT(st.num_threads, 5);
		CHECK_UINT(st.starttime_ticks, 777);
		if (unit_failures() != before)
			unit_note("line %zu", i);
	}
}

static void procfs_stat_garbage(void)
{
	static const char *const bad[] = {
		"",
		"\n",
		"garbage",
		"1234",
		"1234 (bash",
		"1234 (bash)",
		"1234 (bash)S 1 1234 1234 0 -1 4194304 11 0 22 0 33 44 0 0 20 "
		"0 5 0 777",
		"1234 (bash) S 1 2 3",
		/* 19 fields after the comm: starttime missing */
		"1234 (bash) S 1 1234 1234 0 -1 4194304 11 0 22 0 33 44 0 0 20 "
		"0 5 0",
		")",
		") ",
		"))))))))",
	};
	struct proc_stat st;
	char big[5000];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&st, 0x55, sizeof(st));
		if (!CHECK_INT(parse_proc_stat(bad[i], &st), -EINVAL))
			unit_note("input %zu", i);
		CHECK_INT(st.state, 0);
		CHECK_UINT(st.starttime_ticks, 0);
	}
	/* Long input: no overflow of the parser's copy. */
	memset(big, '9', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_INT(parse_proc_stat(big, &st), -EINVAL);
	big[10] = ')';
	big[11] = ' ';
	CHECK_INT(parse_proc_stat(big, &st), -EINVAL);
	for (size_t i = 12; i + 1 < sizeof(big); i += 2)
		big[i] = ' ';
	CHECK_INT(parse_proc_stat(big, &st), 0);
	CHECK_INT(st.state, '9');
	CHECK_UINT(st.starttime_ticks, 9);
	/* Non-numeric fields read as 0 rather than failing. */
	CHECK_INT(parse_proc_stat("1 (x) S a b c d e f g h i j k l m n o p q r "
				  "s t u",
				  &st),
		  0);
	CHECK_INT(st.ppid, 0);
	CHECK_UINT(st.starttime_ticks, 0);
}

/* ---- /proc/PID/status ---- */

static const char status_running[] = "Name:\tcat\n"
				     "Umask:\t0022\n"
				     "State:\tR (running)\n"
				     "Tgid:\t10444\n"
				     "Ngid:\t0\n"
				     "Pid:\t10447\n"
				     "PPid:\t10441\n"
				     "TracerPid:\t4242\n"
				     "Uid:\t0\t0\t0\t0\n"
				     "Gid:\t0\t0\t0\t0\n"
				     "FDSize:\t256\n"
				     "Groups:\t \n"
				     "NStgid:\t99\n"
				     "NSpid:\t98\n"
				     "NSpgid:\t10441\n"
				     "NSsid:\t18406\n"
				     "Kthread:\t0\n"
				     "VmPeak:\t    3060 kB\n"
				     "VmSize:\t    3000 kB\n"
				     "VmLck:\t       0 kB\n"
				     "VmPin:\t       0 kB\n"
				     "VmHWM:\t    1772 kB\n"
				     "VmRSS:\t    1700 kB\n"
				     "RssAnon:\t     108 kB\n"
				     "VmData:\t     360 kB\n"
				     "VmSwap:\t       0 kB\n"
				     "HugetlbPages:\t       0 kB\n"
				     "CoreDumping:\t0\n"
				     "Threads:\t4\n"
				     "SigQ:\t0/96365\n"
				     "SigPnd:\t0000000000000001\n"
				     "ShdPnd:\t0000000000004000\n"
				     "SigBlk:\t0000000000010000\n"
				     "SigIgn:\t0000000000000004\n"
				     "SigCgt:\t000000004b817efb\n"
				     "Cpus_allowed_list:\t0-1\n"
				     "voluntary_ctxt_switches:\t150\n"
				     "nonvoluntary_ctxt_switches:\t27\n";

static void procfs_status_running(void)
{
	struct proc_status st;

	CHECK_INT(parse_proc_status(status_running, &st), 0);
	CHECK_INT(st.tgid, 10444);
	CHECK_INT(st.ppid, 10441);
	CHECK_INT(st.tracer_pid, 4242);
	CHECK_UINT(st.vmpeak_kib, 3060);
	CHECK_UINT(st.vmhwm_kib, 1772);
	CHECK_UINT(st.threads, 4);
	CHECK_UINT(st.ctxt_voluntary, 150);
	CHECK_UINT(st.ctxt_involuntary, 27);
	CHECK_UINT(st.sig_pending, 0x4001); /* SIGHUP, SIGTERM */
	CHECK_UINT(st.sig_blocked, 0x10000); /* SIGCHLD */
	CHECK_UINT(st.sig_caught, 0x4b817efb); /* SigIgn's is not */
	CHECK(st.has_vm);
}

static void procfs_status_zombie(void)
{
	static const char zombie[] = "Name:\tdefunct\n"
				     "State:\tZ (zombie)\n"
				     "Tgid:\t777\n"
				     "Ngid:\t0\n"
				     "Pid:\t777\n"
				     "PPid:\t1\n"
				     "TracerPid:\t0\n"
				     "Threads:\t1\n"
				     "SigQ:\t0/96365\n"
				     "voluntary_ctxt_switches:\t5\n"
				     "nonvoluntary_ctxt_switches:\t2\n";
	struct proc_status st;

	memset(&st, 0x55, sizeof(st));
	CHECK_INT(parse_proc_status(zombie, &st), 0);
	CHECK_INT(st.tgid, 777);
	CHECK_INT(st.ppid, 1);
	CHECK_INT(st.tracer_pid, 0);
	CHECK(!st.has_vm);
	CHECK_UINT(st.vmpeak_kib, 0);
	CHECK_UINT(st.vmhwm_kib, 0);
	CHECK_UINT(st.threads, 1);
	CHECK_UINT(st.ctxt_voluntary, 5);
	CHECK_UINT(st.ctxt_involuntary, 2);
}

static void procfs_status_edges(void)
{
	struct proc_status st;

	/* No Tgid line: not a status file. */
	memset(&st, 0x55, sizeof(st));
	CHECK_INT(parse_proc_status("", &st), -EINVAL);
	CHECK_INT(st.tgid, 0);
	CHECK(!st.has_vm);
	CHECK_INT(parse_proc_status("garbage\n\n\n", &st), -EINVAL);
	CHECK_INT(parse_proc_status("NStgid:\t5\nPPid:\t3\n", &st), -EINVAL);
	CHECK_INT(parse_proc_status("Tgid:\tabc\n", &st), -EINVAL);
	CHECK_INT(parse_proc_status("Tgid\t12\n", &st), -EINVAL);

	/* A pending mask of more than 64 bits, or none, is not read. */
	CHECK_INT(parse_proc_status("Tgid:\t12\nShdPnd:\t10000000000000000\n"
				    "SigPnd:\t\n",
				    &st),
		  0);
	CHECK_UINT(st.sig_pending, 0);
	CHECK_INT(parse_proc_status("Tgid:\t12\nShdPnd:\tFfffffffFFFFFFFF\n",
				    &st),
		  0);
	CHECK_UINT(st.sig_pending, UINT64_MAX);

	/* Last line without a newline; only VmHWM present. */
	CHECK_INT(parse_proc_status("Tgid:\t12\nVmHWM:\t  88 kB", &st), 0);
	CHECK_INT(st.tgid, 12);
	CHECK_UINT(st.vmhwm_kib, 88);
	CHECK_UINT(st.vmpeak_kib, 0);
	CHECK(st.has_vm);

	/* Largest value, and one past it (ignored, not wrapped). */
	CHECK_INT(parse_proc_status("Tgid:\t1\n"
				    "VmPeak:\t18446744073709551615 kB\n"
				    "VmHWM:\t18446744073709551616 kB\n",
				    &st),
		  0);
	CHECK_UINT(st.vmpeak_kib, UINT64_MAX);
	CHECK_UINT(st.vmhwm_kib, 0);
	CHECK(st.has_vm);
}

/* ---- /proc/PID/io ---- */

static void procfs_io(void)
{
	static const char io_text[] = "rchar: 6976\n"
				      "wchar: 12\n"
				      "syscr: 10\n"
				      "syscw: 3\n"
				      "read_bytes: 4096\n"
				      "write_bytes: 8192\n"
				      "cancelled_write_bytes: 512\n";
	struct proc_io io;

	CHECK_INT(parse_proc_io(io_text, &io), 0);
	CHECK_UINT(io.rchar, 6976);
	CHECK_UINT(io.wchar, 12);
	CHECK_UINT(io.syscr, 10);
	CHECK_UINT(io.syscw, 3);
	CHECK_UINT(io.read_bytes, 4096);
	CHECK_UINT(io.write_bytes, 8192);
	CHECK_UINT(io.cancelled_write_bytes, 512);

	memset(&io, 0x55, sizeof(io));
	CHECK_INT(parse_proc_io("wchar: 18446744073709551615", &io), 0);
	CHECK_UINT(io.wchar, UINT64_MAX);
	CHECK_UINT(io.rchar, 0);
	CHECK_UINT(io.cancelled_write_bytes, 0);

	CHECK_INT(parse_proc_io("", &io), -EINVAL);
	CHECK_INT(parse_proc_io("nothing: 1\nhere\n", &io), -EINVAL);
	CHECK_INT(parse_proc_io("rchar: x\n", &io), -EINVAL);
	CHECK_UINT(io.rchar, 0);
}

/* ---- /proc/PID/cgroup ---- */

static void check_cgroup(const char *text, bool has_v2, int version,
			 const char *path, const char *controller)
{
	struct cgroup_entry cg;

	CHECK_INT(parse_proc_cgroup(text, has_v2, &cg), 0);
	CHECK_INT(cg.version, version);
	CHECK_STR(cg.path, path);
	CHECK_STR(cg.controller, controller);
}

static const char cgroup_hybrid[] =
	"9:name=systemd:/user.slice/user-1000.slice/session-3.scope\n"
	"8:pids:/user.slice/user-1000.slice/session-3.scope\n"
	"7:blkio:/user.slice\n"
	"4:memory:/process_api/eec715baa4154487343567a99c4bc7d5\n"
	"3:cpuset:/\n"
	"2:cpu,cpuacct:/user.slice\n"
	"0::/user.slice/user-1000.slice/session-3.scope\n";

static void procfs_cgroup_v2(void)
{
	check_cgroup("0::/user.slice/x.scope\n", true, 2, "/user.slice/x.scope",
		     "");
	check_cgroup("0::/user.slice/x.scope", true, 2, "/user.slice/x.scope",
		     "");
	check_cgroup("0::/\n", true, 2, "/", "");
	check_cgroup("0::/a:b:c\n", true, 2, "/a:b:c", "");
	check_cgroup("0::/with space/x\n", true, 2, "/with space/x", "");
}

static void procfs_cgroup_v1(void)
{
	/* the hybrid text without its v2 line */
	const char *v1 = cgroup_hybrid;
	char text[sizeof(cgroup_hybrid)];
	char *v2line;

	memcpy(text, v1, sizeof(text));
	v2line = strstr(text, "0::");
	if (!CHECK(v2line))
		return;
	*v2line = '\0';
	check_cgroup(text, false, 1,
		     "/process_api/eec715baa4154487343567a99c4bc7d5", "memory");
	check_cgroup(text, true, 1,
		     "/process_api/eec715baa4154487343567a99c4bc7d5", "memory");
	/* the memory controller mounted with another */
	check_cgroup("3:cpu:/a\n5:cpuset,memory:/m\n1:name=systemd:/s\n", false,
		     1, "/m", "cpuset,memory");
	/* no memory controller: name=systemd */
	check_cgroup("3:cpu:/a\n4:nomemory:/n\n1:name=systemd:/user.slice/b\n",
		     false, 1, "/user.slice/b", "name=systemd");
	/* neither: the first line */
	check_cgroup("3:cpu,cpuacct:/a\n2:pids:/b\n", false, 1, "/a",
		     "cpu,cpuacct");
}

static void procfs_cgroup_hybrid(void)
{
	check_cgroup(cgroup_hybrid, true, 2,
		     "/user.slice/user-1000.slice/session-3.scope", "");
	check_cgroup(cgroup_hybrid, false, 1,
		     "/process_api/eec715baa4154487343567a99c4bc7d5", "memory");
}

static void procfs_cgroup_garbage(void)
{
	static const char *const bad[] = {
		"", "\n", "garbage\n", "0:/x\n", "hello\nworld",
	};
	struct cgroup_entry cg;
	char longpath[3000];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!CHECK_INT(parse_proc_cgroup(bad[i], true, &cg), -ENOENT))
			unit_note("input %zu", i);
		CHECK_INT(cg.version, 0);
	}
	/* A path longer than the entry holds is cut, not overflowed. */
	memcpy(longpath, "0::/", 4);
	memset(longpath + 4, 'p', sizeof(longpath) - 5);
	longpath[sizeof(longpath) - 1] = '\0';
	CHECK_INT(parse_proc_cgroup(longpath, true, &cg), 0);
	CHECK_UINT(strlen(cg.path), sizeof(cg.path) - 1);
}

/*
 * procfs.h: "Picks the v2 line if the host has a cgroup2 mount (has_v2),
 * else the v1 line of the memory controller, else name=systemd, else the
 * first."  On a pure v2 host with no cgroup2 mount in our namespace the
 * only (first) line is the v2 one; the task's cgroup path is still known.
 */
static void procfs_cgroup_v2_without_mount(void)
{
	check_cgroup("0::/user.slice/x.scope\n", false, 2,
		     "/user.slice/x.scope", "");
}

/* ---- container ids ---- */

#define ID "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define ID_UPPER \
	"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"
#define LAYER "9d2b1c6f0a8e7d4c3b2a19f8e7d6c5b4a3928170f6e5d4c3b2a1908f7e6d5c4b"

static void check_id(const char *text, const char *after, const char *want)
{
	char id[65];

	memset(id, 'X', sizeof(id));
	if (!want) {
		CHECK(!find_container_id(text, after, id));
		return;
	}
	if (CHECK(find_container_id(text, after, id)))
		CHECK_STR(id, want);
}

static void procfs_container_id_cgroup(void)
{
	/* docker (cgroupfs driver) */
	check_id("12:memory:/docker/" ID "\n", NULL, ID);
	check_id("0::/docker/" ID, NULL, ID);
	/* docker (systemd driver) */
	check_id("0::/system.slice/docker-" ID ".scope\n", NULL, ID);
	/* kubernetes with containerd */
	check_id("0::/kubepods.slice/kubepods-besteffort.slice/"
		 "kubepods-besteffort-pod1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d"
		 ".slice/cri-containerd-" ID ".scope\n",
		 NULL, ID);
	/* podman */
	check_id("0::/user.slice/user-1000.slice/user@1000.service/user.slice/"
		 "libpod-" ID ".scope/container\n",
		 NULL, ID);
	/* v1 with several lines, the id on a later one */
	check_id("3:cpuset:/\n2:cpu:/docker/" ID "\n1:name=systemd:/docker/" ID
		 "\n",
		 NULL, ID);
	/* no container */
	check_id("0::/user.slice/user-1000.slice/session-3.scope\n", NULL,
		 NULL);
	check_id("0::/\n", NULL, NULL);
	check_id("", NULL, NULL);
}

static void procfs_container_id_rejects(void)
{
	/* uppercase is not how runtimes write ids */
	check_id("0::/docker/" ID_UPPER "\n", NULL, NULL);
	check_id("0::/docker-" ID_UPPER ".scope", NULL, NULL);
	/* a 65-digit run is something else, at either end */
	check_id("0::/docker/" ID "a\n", NULL, NULL);
	check_id("0::/docker/a" ID "\n", NULL, NULL);
	check_id("0::/docker/A" ID "\n", NULL, NULL);
	check_id("0::/docker/" ID "F\n", NULL, NULL);
	check_id(ID "0", NULL, NULL);
	/* 63 digits */
	check_id(
		"0::/docker/"
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85"
		"\n",
		NULL, NULL);
	/* a 64 run with one non-hex digit */
	check_id(
		"0::/docker/"
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85g"
		"\n",
		NULL, NULL);
	/* a rejected run, then a good one */
	check_id("0::/a" ID "/docker-" ID ".scope\n", NULL, ID);
}

static const char mountinfo_docker[] =
	"1203 1180 0:120 / / rw,relatime master:300 - overlay overlay "
	"rw,lowerdir=/var/lib/docker/overlay2/l/Q2ZJ5WQ7X:/var/lib/docker/"
	"overlay2/l/ABCDEFGH,upperdir=/var/lib/docker/overlay2/" LAYER
	"/diff,workdir=/var/lib/docker/overlay2/" LAYER "/work\n"
	"1204 1203 0:123 / /proc rw,nosuid,nodev,noexec,relatime - proc proc "
	"rw\n"
	"1210 1203 254:1 /var/lib/docker/containers/" ID "/resolv.conf "
	"/etc/resolv.conf rw,relatime - ext4 /dev/vda1 rw\n"
	"1211 1203 254:1 /var/lib/docker/containers/" ID "/hostname "
	"/etc/hostname rw,relatime - ext4 /dev/vda1 rw\n";

static void procfs_container_id_mountinfo(void)
{
	static const char layers_only[] =
		"1203 1180 0:120 / / rw,relatime - overlay overlay "
		"rw,upperdir=/var/lib/docker/overlay2/" LAYER
		"/diff,workdir=/var/lib/docker/overlay2/" LAYER "/work\n"
		"1210 1203 254:1 /var/lib/docker/containers/" ID_UPPER
		"/hostname /etc/hostname rw - ext4 /dev/vda1 rw\n"
		"1211 1203 254:1 /var/lib/docker/containers/" ID
		"0/hosts /etc/hosts rw - ext4 /dev/vda1 rw\n";
	static const char podman[] =
		"610 570 0:44 / / rw - overlay overlay rw,upperdir=/var/lib/"
		"containers/storage/overlay/" LAYER "/diff\n"
		"620 610 0:50 /containers/storage/overlay-containers/" ID
		"/userdata/hostname /etc/hostname rw - tmpfs tmpfs rw\n";

	check_id(mountinfo_docker, "containers/", ID);
	/* without the marker the first run wins: an image layer */
	check_id(mountinfo_docker, NULL, LAYER);
	check_id(layers_only, "containers/", NULL);
	check_id(podman, "containers/", ID);
	check_id("containers/", "containers/", NULL);
	check_id("", "containers/", NULL);
	check_id("containers/" ID, "containers/", ID);
	check_id("xcontainers/" ID "/", "containers/", ID);
}

/* ---- the cgroup2 mount ---- */

static void check_mount(const char *mountinfo, const char *want)
{
	char dir[512];

	memset(dir, 'X', sizeof(dir));
	if (!want) {
		CHECK(!find_cgroup2_mount(mountinfo, dir, sizeof(dir)));
		return;
	}
	if (CHECK(find_cgroup2_mount(mountinfo, dir, sizeof(dir))))
		CHECK_STR(dir, want);
}

static const char mountinfo_hybrid[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup "
	"rw,memory\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup "
	"rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static void procfs_cgroup2_mount(void)
{
	/* systemd, pure v2, with an optional field */
	check_mount("21 26 0:19 / /sys rw,nosuid,nodev,noexec,relatime "
		    "shared:7 - sysfs sysfs rw\n"
		    "35 21 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,"
		    "relatime shared:9 - cgroup2 cgroup2 "
		    "rw,nsdelegate,memory_recursiveprot\n",
		    "/sys/fs/cgroup");
	/* every kind of optional field */
	check_mount("35 24 0:30 / /sys/fs/cgroup rw shared:9 master:2 "
		    "propagate_from:1 unbindable - cgroup2 cgroup2 rw\n",
		    "/sys/fs/cgroup");
	/* in a container: no optional fields, source "cgroup", no newline */
	check_mount("1340 1203 0:30 / /sys/fs/cgroup ro,nosuid,nodev,noexec,"
		    "relatime - cgroup2 cgroup rw,nsdelegate",
		    "/sys/fs/cgroup");
	/* hybrid */
	check_mount(mountinfo_hybrid, "/sys/fs/cgroup/unified");
	/* only the filesystem type counts */
	check_mount("50 22 0:40 / /mnt/cgroup2 rw - tmpfs cgroup2 rw\n"
		    "51 22 0:41 / /cgroup2 rw - cgroup cgroup2 rw,memory\n",
		    NULL);
	/* v1 only */
	check_mount("32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup "
		    "cgroup rw,cpu\n",
		    NULL);
}

static void procfs_cgroup2_mount_garbage(void)
{
	static const char *const bad[] = {
		"",
		"\n\n\n",
		"a b c\n",
		"1 2 3 4 5 6 -\n",
		"1 2 3 4 - cgroup2\n",
		"- cgroup2 - cgroup2\n",
	};
	char line[6000];
	char small[8];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_mount(bad[i], NULL);
	/* A very long line before the cgroup2 one. */
	memset(line, 'x', 5000);
	line[5000] = '\n';
	strcpy(line + 5001, "41 31 0:38 / /cg rw - cgroup2 cgroup2 rw\n");
	check_mount(line, "/cg");
	/* A small buffer gets a cut, terminated path. */
	memset(small, 'X', sizeof(small));
	CHECK(find_cgroup2_mount(mountinfo_hybrid, small, sizeof(small)));
	CHECK_STR(small, "/sys/fs");
}

/*
 * mountinfo escapes space, tab, newline and backslash in paths as octal
 * (proc_pid_mountinfo(5)); the mount point must come back unescaped.
 */
static void procfs_cgroup2_mount_escaped(void)
{
	check_mount("41 31 0:38 / /sys/fs/cgroup\\040v2 rw - cgroup2 cgroup2 "
		    "rw\n",
		    "/sys/fs/cgroup v2");
}

/* ---- /proc/PID/task/TID/children ---- */

struct pids_seen {
	pid_t pid[16];
	size_t n;
};

static void note_pid(pid_t pid, void *arg)
{
	struct pids_seen *s = arg;

	if (s->n < 16)
		s->pid[s->n] = pid;
	s->n++;
}

/* text fed in chunks of chunk bytes: the pids fn was given, with commas. */
static void pids_of(const char *text, size_t chunk, char *out, size_t size)
{
	struct pid_list l = { 0 };
	struct pids_seen s = { .n = 0 };
	size_t len = strlen(text), used = 0;

	for (size_t at = 0; at < len; at += chunk)
		pid_list_feed(&l, text + at,
			      len - at < chunk ? len - at : chunk, note_pid,
			      &s);
	pid_list_end(&l, note_pid, &s);
	out[0] = '\0';
	for (size_t i = 0; i < s.n && i < 16 && used + 12 < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%d",
					 i ? "," : "", (int)s.pid[i]);
}

static void procfs_children_list(void)
{
	char got[200];

	/* As the kernel writes it: each pid followed by a space. */
	for (size_t chunk = 1; chunk < 24; chunk++) {
		pids_of("28080 1 4194303 ", chunk, got, sizeof(got));
		CHECK_STR(got, "28080,1,4194303");
	}
	pids_of("12 34", 2, got, sizeof(got));
	CHECK_STR(got, "12,34");
	pids_of("", 1, got, sizeof(got));
	CHECK_STR(got, "");
	pids_of("  \n \n", 3, got, sizeof(got));
	CHECK_STR(got, "");
}

static void procfs_children_garbage(void)
{
	char got[200];

	/* Not pids: letters, signs, 0, above the kernel's limit, a run of
	 * digits that would wrap a 32-bit value. */
	pids_of("7 x 12a -3 0 4194305 99999999999999999999 8\n9", 4, got,
		sizeof(got));
	CHECK_STR(got, "7,8,9");
}

/* This process's own children, as the kernel lists them. */
static void procfs_children_real(void)
{
	struct pids_seen s = { .n = 0 };
	pid_t child = fork();
	int procfd = proc_open_root(), status;

	if (child == 0) {
		pause();
		_exit(0);
	}
	if (!CHECK(child > 0) || !CHECK(procfd >= 0))
		return;
	CHECK_INT(read_task_children(procfd, getpid(), gettid(), note_pid, &s),
		  0);
	CHECK_UINT(s.n, 1);
	CHECK_INT(s.pid[0], child);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	CHECK_INT(read_task_children(procfd, getpid(), 999999999, note_pid, &s),
		  -ENOENT);
	close(procfd);
}

/* ---- /proc/PID/task/TID/syscall ---- */

static void procfs_syscall_lines(void)
{
	long nr = 7;

	CHECK_INT(parse_task_syscall("61 0x3 0x7ffc9e3c 0x0 0x0 0x0 0x0 "
				     "0x7ffc9e3c08 0x7f2b1c8e\n",
				     &nr),
		  0);
	CHECK_INT(nr, 61);
	CHECK_INT(parse_task_syscall("-1 0x7ffc9e3c08 0x401000\n", &nr), 0);
	CHECK_INT(nr, -1);
	CHECK_INT(parse_task_syscall("56 0x1200011 0", &nr), 0); /* cut */
	CHECK_INT(nr, 56);
	nr = 7;
	CHECK_INT(parse_task_syscall("running\n", &nr), TASK_SYSCALL_RUNNING);
	CHECK_INT(parse_task_syscall("", &nr), -EINVAL);
	CHECK_INT(parse_task_syscall("x 0x1", &nr), -EINVAL);
	CHECK_INT(parse_task_syscall("56x 0x1", &nr), -EINVAL);
	CHECK_INT(parse_task_syscall("runningx\n", &nr), -EINVAL);
	CHECK_INT(parse_task_syscall("99999999999999999999999 0x1", &nr),
		  -EINVAL);
	CHECK_INT(nr, 7);
}

/* A child blocked in pause(2) (the raw call: a libc may make it ppoll),
 * then gone. */
static void procfs_syscall_real(void)
{
	pid_t child = fork();
	int procfd = proc_open_root(), status, err = -EINVAL;
	long nr = -2;

	if (child == 0) {
		syscall(SYS_pause);
		_exit(0);
	}
	if (!CHECK(child > 0))
		goto out;
	/* Running until it has entered the call: 10 s at most. */
	for (int tries = 0; procfd >= 0 && tries < 10000; tries++) {
		err = read_task_syscall(procfd, child, child, &nr);
		if (err < 0 || (err == 0 && nr == SYS_pause))
			break;
		usleep(1000);
	}
	CHECK_INT(err, 0);
	CHECK_INT(nr, SYS_pause);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	if (CHECK(procfd >= 0))
		CHECK_INT(read_task_syscall(procfd, child, child, &nr),
			  -ENOENT);
out:
	if (procfd >= 0)
		close(procfd);
}

/* ---- /proc/PID/auxv ---- */

/* AT_EXECFN (31), the first entry's type and value, and no AT_RANDOM
 * (25): the blob's own. */
static void check_auxv(const void *auxv, size_t n, uint64_t execfn,
		       uint64_t first_type, uint64_t first)
{
	uint64_t v = 0;

	CHECK(find_auxv_entry(auxv, n, 31, &v));
	CHECK_UINT(v, execfn);
	CHECK(find_auxv_entry(auxv, n, first_type, &v));
	CHECK_UINT(v, first);
	CHECK(!find_auxv_entry(auxv, n, 25, &v));
}

/* As x86_64 lays it out: AT_SYSINFO_EHDR first, AT_EXECFN near the end. */
static void procfs_auxv_64(void)
{
	static const uint64_t auxv[] = {
		33, 0x7ffd1c5f1000, 6,	4096,		17, 100,
		31, 0x7ffd1c5aefe9, 15, 0x7ffd1c5ae2f9, 0,  0
	};

	check_auxv(auxv, sizeof(auxv), 0x7ffd1c5aefe9, 33, 0x7ffd1c5f1000);
}

/* An i386 program's (compat_binfmt_elf): 32-bit pairs, seen on Linux 6.18. */
static void procfs_auxv_32(void)
{
	static const uint32_t auxv[] = { 32, 0xf7f745e0, 33, 0xf7f74000,
					 6,  4096,	 31, 0xffbdbff2,
					 15, 0xffbdb2cb, 0,  0 };

	check_auxv(auxv, sizeof(auxv), 0xffbdbff2, 32, 0xf7f745e0);
}

/* Cut short, empty, no AT_NULL, an entry after AT_NULL: never past n. */
static void procfs_auxv_garbage(void)
{
	static const uint64_t cut[] = { 33, 0x7ffd1c5f1000, 31 };
	static const uint64_t after_null[] = { 6, 4096, 0, 0, 31, 1 };
	uint64_t v = 7;

	CHECK(!find_auxv_entry((const void *)cut, sizeof(cut), 31, &v));
	CHECK(!find_auxv_entry((const void *)cut, 7, 33, &v));
	CHECK(!find_auxv_entry((const void *)cut, 0, 33, &v));
	CHECK(find_auxv_entry((const void *)cut, 16, 33, &v));
	CHECK(!find_auxv_entry((const void *)after_null, sizeof(after_null), 31,
			       &v));
	CHECK_UINT(v, 0x7ffd1c5f1000);
}

/* A mountinfo line: its mount id (statx's STATX_MNT_ID), device, point
 * (unescaped) and type; a line without the separator is refused. */
static void procfs_mountinfo_line(void)
{
	static const char line[] =
		"1234 29 254:1 /srv/data /mnt/my\\040data rw,relatime "
		"shared:1 - ext4 /dev/vda1 rw";
	static const char *const bad[] = {
		"x 29 254:1 / / rw - ext4 a b", /* no mount id */
		"1 2 254:1 / / rw shared:1", /* no " - fstype" */
	};
	struct mountinfo_entry m;

	if (!CHECK_INT(parse_mountinfo_line(line, sizeof(line) - 1, &m), 0))
		return;
	CHECK_UINT(m.id, 1234);
	CHECK_UINT(m.major, 254);
	CHECK_UINT(m.minor, 1);
	CHECK_STR(m.point, "/mnt/my data");
	CHECK_STR(m.fstype, "ext4");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(parse_mountinfo_line(bad[i], strlen(bad[i]), &m),
			  -EINVAL);
}

const struct unit_test procfs_tests[] = {
	UNIT_TEST(procfs_mountinfo_line),
	UNIT_TEST(procfs_auxv_64),
	UNIT_TEST(procfs_auxv_32),
	UNIT_TEST(procfs_auxv_garbage),
	UNIT_TEST(procfs_children_list),
	UNIT_TEST(procfs_children_garbage),
	UNIT_TEST(procfs_children_real),
	UNIT_TEST(procfs_syscall_lines),
	UNIT_TEST(procfs_syscall_real),
	UNIT_TEST(procfs_stat_real_line),
	UNIT_TEST(procfs_stat_hostile_comm),
	UNIT_TEST(procfs_stat_garbage),
	UNIT_TEST(procfs_status_running),
	UNIT_TEST(procfs_status_zombie),
	UNIT_TEST(procfs_status_edges),
	UNIT_TEST(procfs_io),
	UNIT_TEST(procfs_cgroup_v2),
	UNIT_TEST(procfs_cgroup_v1),
	UNIT_TEST(procfs_cgroup_hybrid),
	UNIT_TEST(procfs_cgroup_garbage),
	UNIT_TEST(procfs_cgroup_v2_without_mount),
	UNIT_TEST(procfs_container_id_cgroup),
	UNIT_TEST(procfs_container_id_rejects),
	UNIT_TEST(procfs_container_id_mountinfo),
	UNIT_TEST(procfs_cgroup2_mount),
	UNIT_TEST(procfs_cgroup2_mount_garbage),
	UNIT_TEST(procfs_cgroup2_mount_escaped),
	UNIT_END,
};
