// SPDX-License-Identifier: MIT
#include "taskid.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* "group.key": the sub-object and the key of each field, in JSON order. */
static const char *const field_names[TF_COUNT] = {
	[TF_NF_WORKDIR] = "nextflow.workdir",
	[TF_NF_SCRATCH_DIR] = "nextflow.scratch_dir",
	[TF_NF_HASH] = "nextflow.hash",
	[TF_NF_NAME] = "nextflow.name",
	[TF_NF_PROCESS] = "nextflow.process",
	[TF_SMK_RULE] = "snakemake.rule",
	[TF_SMK_JOBID] = "snakemake.jobid",
	[TF_SMK_GROUP] = "snakemake.group",
	[TF_SMK_GROUP_JOBID] = "snakemake.group_jobid",
	[TF_SMK_GROUP_RULES] = "snakemake.group_rules",
	[TF_SLURM_JOB_ID] = "slurm.job_id",
	[TF_SLURM_ARRAY_JOB_ID] = "slurm.array_job_id",
	[TF_SLURM_ARRAY_TASK_ID] = "slurm.array_task_id",
	[TF_SLURM_STEP_ID] = "slurm.step_id",
	[TF_SLURM_PROCID] = "slurm.procid",
	[TF_SLURM_LOCALID] = "slurm.localid",
	[TF_SLURM_NODEID] = "slurm.nodeid",
	[TF_SLURM_NODENAME] = "slurm.nodename",
	[TF_SLURM_JOB_NAME] = "slurm.job_name",
	[TF_AF_DAG_ID] = "airflow.dag_id",
	[TF_AF_TASK_ID] = "airflow.task_id",
	[TF_AF_DAG_RUN_ID] = "airflow.dag_run_id",
	[TF_AF_TRY_NUMBER] = "airflow.try_number",
	[TF_K8S_POD_NAME] = "kubernetes.pod_name",
	[TF_K8S_NAMESPACE] = "kubernetes.namespace",
	[TF_K8S_POD_UID] = "kubernetes.pod_uid",
	[TF_K8S_NODE_NAME] = "kubernetes.node_name",
};

/* Fields read from the environment: the first variable set wins. */
struct env_field {
	enum task_field field;
	const char *vars[4];
};

static const struct env_field env_fields[] = {
	{ TF_SLURM_JOB_ID, { "SLURM_JOB_ID" } },
	{ TF_SLURM_ARRAY_JOB_ID, { "SLURM_ARRAY_JOB_ID" } },
	{ TF_SLURM_ARRAY_TASK_ID, { "SLURM_ARRAY_TASK_ID" } },
	{ TF_SLURM_STEP_ID, { "SLURM_STEP_ID" } },
	{ TF_SLURM_PROCID, { "SLURM_PROCID" } },
	{ TF_SLURM_LOCALID, { "SLURM_LOCALID" } },
	{ TF_SLURM_NODEID, { "SLURM_NODEID" } },
	{ TF_SLURM_NODENAME, { "SLURMD_NODENAME" } },
	{ TF_SLURM_JOB_NAME, { "SLURM_JOB_NAME" } },
	{ TF_AF_DAG_ID, { "AIRFLOW_CTX_DAG_ID" } },
	{ TF_AF_TASK_ID, { "AIRFLOW_CTX_TASK_ID" } },
	{ TF_AF_DAG_RUN_ID, { "AIRFLOW_CTX_DAG_RUN_ID" } },
	{ TF_AF_TRY_NUMBER, { "AIRFLOW_CTX_TRY_NUMBER" } },
	{ TF_K8S_POD_NAME,
	  { "IOWRAP_K8S_POD_NAME", "POD_NAME", "KUBERNETES_POD_NAME" } },
	{ TF_K8S_NAMESPACE,
	  { "IOWRAP_K8S_NAMESPACE", "POD_NAMESPACE", "KUBERNETES_NAMESPACE" } },
	{ TF_K8S_POD_UID,
	  { "IOWRAP_K8S_POD_UID", "POD_UID", "KUBERNETES_POD_UID" } },
	{ TF_K8S_NODE_NAME,
	  { "IOWRAP_K8S_NODE_NAME", "NODE_NAME", "KUBERNETES_NODE_NAME" } },
};

/* Bytes read of a .command.run header or a job script. */
enum { SCRIPT_HEAD_MAX = 1 << 20, CMDLINE_MAX = 1 << 16, SCRIPT_WORDS = 16 };

static void warn(struct task_identity *t, const char *what, const char *fmt,
		 ...) __attribute__((format(printf, 3, 4)));

static void warn(struct task_identity *t, const char *what, const char *fmt,
		 ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kv_add(&t->warnings, what, msg);
}

/* Sets a field from untrusted bytes, cut to TASK_VALUE_MAX. */
static void set_field(struct task_identity *t, enum task_field f,
		      const char *value, size_t len, const char *from)
{
	bool cut;

	free(t->field[f]);
	t->field[f] = task_value_dup(value, len, &cut);
	kv_set(&t->sources, field_names[f], from);
	if (cut)
		warn(t, from, "%zu bytes, cut to %zu", len,
		     strlen(t->field[f]));
}

/* A value of a map (wildcards, labels) from that source was cut. */
static void warn_cut(struct task_identity *t, const char *from)
{
	warn(t, from, "a value was cut to %d bytes", TASK_VALUE_MAX);
}

static void set_field_str(struct task_identity *t, enum task_field f,
			  const char *value, const char *from)
{
	set_field(t, f, value, strlen(value), from);
}

/* The first variable set of each field's; a field already known stays. */
static void read_env_table(struct task_identity *t,
			   const struct env_field *table, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct env_field *e = &table[i];

		for (size_t k = 0; k < ARRAY_SIZE(e->vars) && e->vars[k]; k++) {
			const char *v = getenv(e->vars[k]);
			char from[64];

			if (!v || !*v || t->field[e->field])
				continue;
			snprintf(from, sizeof(from), "env %s", e->vars[k]);
			set_field_str(t, e->field, v, from);
			break;
		}
	}
}

/* Reads the rest of fd up to max bytes in all into sb; 0, or -errno. */
static int read_fd_head(int fd, size_t max, struct strbuf *sb, bool *complete)
{
	char buf[8192];

	*complete = false;
	while (sb->len < max) {
		size_t want = max - sb->len < sizeof(buf) ? max - sb->len :
							    sizeof(buf);
		ssize_t n = read(fd, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			*complete = true;
			break;
		}
		sb_add(sb, buf, (size_t)n);
	}
	return 0;
}

#ifndef CONFIGFS_MAGIC
#define CONFIGFS_MAGIC 0x62656570
#endif

/* Files made up by the kernel: reading one can be slow or have effects. */
static bool on_pseudo_filesystem(int fd)
{
	static const unsigned long pseudo[] = {
		PROC_SUPER_MAGIC,   SYSFS_MAGIC,	 DEBUGFS_MAGIC,
		TRACEFS_MAGIC,	    CONFIGFS_MAGIC,	 SECURITYFS_MAGIC,
		EFIVARFS_MAGIC,	    SELINUX_MAGIC,	 BPF_FS_MAGIC,
		CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC,
	};
	struct statfs fs;

	if (fstatfs(fd, &fs) < 0)
		return true;
	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
		if ((unsigned long)fs.f_type == pseudo[i])
			return true;
	return false;
}

/*
 * Opens a regular file under dirfd for reading, if accept (optional) takes
 * it; never a FIFO or a device, whose open can have effects (a tape
 * rewinds).  What is checked is what is read: the O_PATH descriptor looked
 * at is the one reopened, through /proc/self/fd.  The descriptor, or
 * -errno (-EINVAL: not a regular file, or not accepted).
 */
static int open_checked(int dirfd, const char *path,
			bool (*accept)(int fd, const struct stat *st))
{
	char self[64];
	struct stat st;
	int fd, rfd;

	fd = openat(dirfd, path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (accept && !accept(fd, &st))) {
		close(fd);
		return -EINVAL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	rfd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (rfd < 0)
		rfd = -errno;
	close(fd);
	return rfd;
}

/* Reads up to max bytes of a regular file under dirfd; 0, or -errno. */
static int read_head(int dirfd, const char *path, size_t max, struct strbuf *sb,
		     bool *complete)
{
	int fd = open_checked(dirfd, path, NULL), err;

	if (fd < 0)
		return fd;
	err = read_fd_head(fd, max, sb, complete);
	close(fd);
	return err;
}

/*
 * Whether a word of a command line may be a job script worth opening.  The
 * words are the task's arguments, not ours to read: a file of /proc or
 * /sys may change something when read (/proc/kmsg consumes the kernel's
 * messages), so pseudo filesystems are left alone, and so is anything
 * too short to start with "#!".
 */
static bool may_be_script(int fd, const struct stat *st)
{
	return st->st_size >= 2 && !on_pseudo_filesystem(fd);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The directory of a .command.sh / .command.run word, made absolute. */
static bool nextflow_script_dir(const char *word, const char *cwd,
				struct strbuf *dir)
{
	const char *base = base_name(word);
	struct stat st;

	if (strcmp(base, ".command.sh") && strcmp(base, ".command.run"))
		return false;
	/* Only a script that is really there names a work directory: the
	 * trace goes into it, and a made-up path must not be created. */
	if (stat(word, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	sb_reset(dir);
	if (word[0] != '/') {
		if (!cwd[0])
			return false;
		sb_adds(dir, cwd);
		sb_addc(dir, '/');
	}
	sb_add(dir, word, (size_t)(base - word));
	while (dir->len > 1 && dir->buf[dir->len - 1] == '/')
		dir->len--;
	dir->buf[dir->len] = '\0';
	return !dir->truncated && dir->len > 0;
}

/* Says why .command.run gave no name; silent if there is none at a
 * directory that only NXF_TASK_WORKDIR named (a scratch dir has none). */
static void no_task_name(struct task_identity *t, const char *path,
			 int read_err, int parse_err)
{
	if (read_err == -ENOENT && !t->nf_workdir_confirmed)
		return;
	if (read_err == -EINVAL || parse_err == -EINVAL)
		warn(t, ".command.run", "%s is not a text file; no task name",
		     path);
	else if (read_err)
		warn(t, ".command.run", "cannot read %s: %s; no task name",
		     path, strerror(-read_err));
	else
		warn(t, ".command.run", "%s has no task name header", path);
}

static void nextflow_header(struct task_identity *t, const char *workdir)
{
	struct strbuf path, text, name, process;
	int read_err, parse_err = -ENOENT;
	struct stat st;
	bool complete;

	sb_init(&path, PATH_MAX + 32);
	sb_init(&text, 0);
	sb_init(&name, 0);
	sb_init(&process, 0);
	sb_addf(&path, "%s/.command.run", workdir);
	if (lstat(sb_str(&path), &st) == 0)
		t->nf_workdir_confirmed = true;
	read_err =
		read_head(AT_FDCWD, sb_str(&path), 1 << 16, &text, &complete);
	if (!read_err)
		parse_err =
			nextflow_header_name(sb_str(&text), text.len, &name);
	if (!read_err && !parse_err) {
		set_field(t, TF_NF_NAME, sb_str(&name), name.len,
			  ".command.run header");
		/* Of the name as kept: one cut is one warning. */
		nextflow_process_of(t->field[TF_NF_NAME], &process);
		set_field(t, TF_NF_PROCESS, sb_str(&process), process.len,
			  "nextflow.name before \" (\"");
	} else {
		no_task_name(t, sb_str(&path), read_err, parse_err);
	}
	sb_release(&path);
	sb_release(&text);
	sb_release(&name);
	sb_release(&process);
}

static void detect_nextflow(struct task_identity *t,
			    const struct task_inputs *in)
{
	const char *env = getenv("NXF_TASK_WORKDIR");
	struct strbuf dir, hash;
	char from[64];

	sb_init(&dir, PATH_MAX);
	sb_init(&hash, 0);
	for (size_t i = 0; i < SCRIPT_WORDS && in->command[i]; i++) {
		if (!nextflow_script_dir(in->command[i], in->cwd, &dir))
			continue;
		snprintf(from, sizeof(from), "argv[%zu] %s path", i,
			 base_name(in->command[i]));
		set_field(t, TF_NF_WORKDIR, dir.buf, dir.len, from);
		t->nf_workdir_confirmed = true;
		break;
	}
	if (env && *env && !t->field[TF_NF_WORKDIR])
		set_field_str(t, TF_NF_WORKDIR, env,
			      "env NXF_TASK_WORKDIR (the scratch dir if "
			      "scratch is on)");
	else if (env && *env && strcmp(env, t->field[TF_NF_WORKDIR]))
		set_field_str(t, TF_NF_SCRATCH_DIR, env,
			      "env NXF_TASK_WORKDIR");
	if (t->field[TF_NF_WORKDIR]) {
		if (nextflow_hash_of(t->field[TF_NF_WORKDIR], &hash))
			set_field(t, TF_NF_HASH, hash.buf, hash.len,
				  "nextflow.workdir's last two components");
		nextflow_header(t, t->field[TF_NF_WORKDIR]);
	}
	sb_release(&dir);
	sb_release(&hash);
}

static void apply_snakemake_props(struct task_identity *t,
				  struct snakemake_props *p, const char *from)
{
	if (p->rule)
		set_field_str(t, TF_SMK_RULE, p->rule, from);
	if (p->jobid)
		set_field_str(t, TF_SMK_JOBID, p->jobid, from);
	if (p->group)
		set_field_str(t, TF_SMK_GROUP, p->group, from);
	if (p->group_jobid)
		set_field_str(t, TF_SMK_GROUP_JOBID, p->group_jobid, from);
	if (p->has_wildcards) {
		kv_release(&t->wildcards);
		t->wildcards = p->wildcards;
		p->wildcards = (struct kv_list){ NULL, 0 };
		t->has_wildcards = true;
		kv_set(&t->sources, "snakemake.wildcards", from);
	}
	if (p->cut)
		warn_cut(t, from);
	if (p->too_many)
		warn(t, from, "more than %d wildcards; the rest are ignored",
		     TASK_MAP_MAX);
}

/* A job script's properties header; true if one was found. */
static bool snakemake_script(struct task_identity *t, int dirfd,
			     const char *path, const char *from)
{
	struct snakemake_props p;
	struct strbuf text, why;
	const char *json;
	size_t len;
	bool complete, found = false;
	int err, fd;

	fd = open_checked(dirfd, path, may_be_script);
	if (fd < 0)
		return false;
	sb_init(&text, SCRIPT_HEAD_MAX + 1);
	sb_init(&why, 0);
	if (read_fd_head(fd, 2, &text, &complete) < 0 || text.len < 2 ||
	    memcmp(text.buf, "#!", 2) != 0)
		goto out;
	if (read_fd_head(fd, SCRIPT_HEAD_MAX, &text, &complete) < 0)
		goto out;
	err = snakemake_find_properties(text.buf, text.len, complete, &json,
					&len);
	found = err != -ENOENT;
	if (err == -EINVAL)
		warn(t, from,
		     "the properties line of %s is longer than %d "
		     "bytes; ignored",
		     path, SCRIPT_HEAD_MAX);
	else if (err == 0 &&
		 snakemake_parse_properties(json, len, &p, &why) < 0)
		warn(t, from, "%s in %s; ignored", sb_str(&why), path);
	else if (err == 0) {
		apply_snakemake_props(t, &p, from);
		snakemake_props_release(&p);
	}
out:
	close(fd);
	sb_release(&text);
	sb_release(&why);
	return found;
}

static bool snakemake_from_argv(struct task_identity *t,
				const struct task_inputs *in)
{
	char from[96];

	for (size_t i = 0; i < SCRIPT_WORDS && in->command[i]; i++) {
		const char *w = in->command[i];

		if (w[0] == '-' || strlen(w) >= PATH_MAX)
			continue;
		snprintf(from, sizeof(from), "argv[%zu] job script properties",
			 i);
		if (snakemake_script(t, AT_FDCWD, w, from))
			return true;
	}
	return false;
}

/* The script the parent shell runs: a word of /proc/PPID/cmdline. */
static void snakemake_from_parent(struct task_identity *t, pid_t ppid)
{
	char path[64], from[96];
	struct strbuf cmd;
	bool complete;
	int cwd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)ppid);
	sb_init(&cmd, CMDLINE_MAX + 1);
	if (ppid <= 1 ||
	    read_head(AT_FDCWD, path, CMDLINE_MAX, &cmd, &complete) < 0 ||
	    !cmd.len) {
		sb_release(&cmd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)ppid);
	cwd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sb_str(&cmd);
	/* Word 0 is the interpreter; the script is one of the next ones. */
	for (size_t off = strlen(cmd.buf) + 1, i = 1;
	     off < cmd.len && i < SCRIPT_WORDS; i++) {
		const char *w = cmd.buf + off;

		off += strlen(w) + 1;
		if (w[0] == '-' || strlen(w) >= PATH_MAX ||
		    (w[0] != '/' && cwd < 0))
			continue;
		snprintf(from, sizeof(from),
			 "parent pid %d argv[%zu] job script properties",
			 (int)ppid, i);
		if (snakemake_script(t, w[0] == '/' ? AT_FDCWD : cwd, w, from))
			break;
	}
	if (cwd >= 0)
		close(cwd);
	sb_release(&cmd);
}

/* Set by jobscript.sh (a group's fields) and bin/bash (a group's job). */
static const struct env_field snakemake_env[] = {
	{ TF_SMK_RULE, { "IOWRAP_SNAKEMAKE_RULE" } },
	{ TF_SMK_JOBID, { "IOWRAP_SNAKEMAKE_JOBID" } },
	{ TF_SMK_GROUP, { "IOWRAP_SNAKEMAKE_GROUP" } },
	{ TF_SMK_GROUP_JOBID, { "IOWRAP_SNAKEMAKE_GROUP_JOBID" } },
	{ TF_SMK_GROUP_RULES, { "IOWRAP_SNAKEMAKE_GROUP_RULES" } },
};

static void snakemake_from_env(struct task_identity *t)
{
	const char *wc = getenv("IOWRAP_SNAKEMAKE_WILDCARDS");
	bool cut;

	/* A job script's properties, read first, win. */
	read_env_table(t, snakemake_env, ARRAY_SIZE(snakemake_env));
	if (!wc || t->has_wildcards)
		return;
	if (snakemake_parse_wildcards(wc, &t->wildcards, &cut) < 0)
		warn(t, "env IOWRAP_SNAKEMAKE_WILDCARDS",
		     "not k=v,k2=v2; the pairs after the bad one are ignored");
	if (cut)
		warn_cut(t, "env IOWRAP_SNAKEMAKE_WILDCARDS");
	t->has_wildcards = true;
	kv_set(&t->sources, "snakemake.wildcards",
	       "env IOWRAP_SNAKEMAKE_WILDCARDS");
}

static void detect_snakemake(struct task_identity *t,
			     const struct task_inputs *in)
{
	if (!snakemake_from_argv(t, in))
		snakemake_from_parent(t, in->parent);
	snakemake_from_env(t);
}

static void detect_k8s_labels(struct task_identity *t)
{
	const char *dir = getenv("IOWRAP_K8S_PODINFO");
	struct strbuf path, text, why;
	bool complete, cut;
	int bad, err;

	sb_init(&path, PATH_MAX + 16);
	sb_init(&text, 0);
	sb_init(&why, 0);
	sb_addf(&path, "%s/labels", dir && *dir ? dir : "/etc/podinfo");
	err = read_head(AT_FDCWD, sb_str(&path), 1 << 20, &text, &complete);
	if (err == 0) {
		bad = k8s_parse_labels(text.buf ? text.buf : "", text.len,
				       &t->k8s_labels, &why, &cut);
		kv_set(&t->sources, "kubernetes.labels", sb_str(&path));
		if (bad)
			warn(t, sb_str(&path),
			     "%d malformed lines skipped (%s)", bad,
			     sb_str(&why));
		if (cut)
			warn_cut(t, sb_str(&path));
	} else if (err != -ENOENT && dir && *dir) {
		warn(t, sb_str(&path), "cannot read: %s", strerror(-err));
	}
	sb_release(&path);
	sb_release(&text);
	sb_release(&why);
}

static void detect_kubernetes(struct task_identity *t, const char *hostname)
{
	const char *svc = getenv("KUBERNETES_SERVICE_HOST");

	detect_k8s_labels(t);
	/* A pod's hostname is its name unless the spec sets another. */
	if (!t->field[TF_K8S_POD_NAME] && svc && *svc && hostname[0])
		set_field_str(t, TF_K8S_POD_NAME, hostname,
			      "hostname (KUBERNETES_SERVICE_HOST is set)");
}

static bool group_detected(const struct task_identity *t, const char *group)
{
	size_t n = strlen(group);

	for (int f = 0; f < TF_COUNT; f++)
		if (t->field[f] && strncmp(field_names[f], group, n) == 0 &&
		    field_names[f][n] == '.')
			return true;
	if (strcmp(group, "snakemake") == 0)
		return t->has_wildcards;
	if (strcmp(group, "kubernetes") == 0)
		return t->k8s_labels.n > 0;
	return false;
}

/* Most specific first: workflow engines, then schedulers and pods. */
static const char *const engines[] = { "nextflow", "snakemake", "airflow",
				       "slurm", "kubernetes" };

static const char *pick_engine(const struct task_identity *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
		if (group_detected(t, engines[i]))
			return engines[i];
	return "none";
}

static const char *fv(const struct task_identity *t, enum task_field f)
{
	return t->field[f] ? t->field[f] : "";
}

/* "120_3, step 0, task 1" for a name; "120_3.0.1" for a key. */
static void slurm_jobspec(const struct task_identity *t, struct strbuf *sb,
			  bool words)
{
	const char *step = words ? ", step " : ".";
	const char *task = words ? ", task " : ".";

	if (t->field[TF_SLURM_ARRAY_JOB_ID] && t->field[TF_SLURM_ARRAY_TASK_ID])
		sb_addf(sb, "%s_%s", t->field[TF_SLURM_ARRAY_JOB_ID],
			t->field[TF_SLURM_ARRAY_TASK_ID]);
	else
		sb_adds(sb, fv(t, TF_SLURM_JOB_ID));
	if (t->field[TF_SLURM_STEP_ID]) {
		sb_addf(sb, "%s%s", step, t->field[TF_SLURM_STEP_ID]);
		if (t->field[TF_SLURM_PROCID])
			sb_addf(sb, "%s%s", task, t->field[TF_SLURM_PROCID]);
	}
}

static void snakemake_name(const struct task_identity *t, struct strbuf *sb)
{
	sb_adds(sb, t->field[TF_SMK_RULE]);
	if (!t->wildcards.n)
		return;
	sb_addc(sb, '[');
	for (size_t i = 0; i < t->wildcards.n; i++)
		sb_addf(sb, "%s%s=%s", i ? "," : "", t->wildcards.items[i].key,
			t->wildcards.items[i].value);
	sb_addc(sb, ']');
}

/*
 * smk-RULE-JOBID; a group's job has no jobid of the main Snakemake process
 * (jobscript.sh), its group's own jobid instead: smk-RULE-GROUPJOBID, and
 * smk-group-GROUPJOBID when the rule is not known either.
 */
static void snakemake_key(const struct task_identity *t, struct strbuf *sb)
{
	const char *id = t->field[TF_SMK_JOBID] ? t->field[TF_SMK_JOBID] :
						  t->field[TF_SMK_GROUP_JOBID];

	sb_addf(sb, "smk-%s",
		t->field[TF_SMK_RULE] ? t->field[TF_SMK_RULE] : "group");
	if (id)
		sb_addf(sb, "-%s", id);
	else if (!t->field[TF_SMK_RULE])
		sb_addf(sb, "-%s", t->field[TF_SMK_GROUP]);
}

/* The engine's own name for the task; false if it has none. */
static bool engine_name(const struct task_identity *t, const char *engine,
			struct strbuf *sb)
{
	if (!strcmp(engine, "nextflow") && t->field[TF_NF_NAME])
		sb_adds(sb, t->field[TF_NF_NAME]);
	else if (!strcmp(engine, "snakemake") && t->field[TF_SMK_RULE])
		snakemake_name(t, sb);
	else if (!strcmp(engine, "snakemake") && t->field[TF_SMK_GROUP])
		sb_addf(sb, "group %s", t->field[TF_SMK_GROUP]);
	else if (!strcmp(engine, "airflow") && t->field[TF_AF_DAG_ID])
		sb_addf(sb, "%s.%s", t->field[TF_AF_DAG_ID],
			fv(t, TF_AF_TASK_ID));
	else if (!strcmp(engine, "slurm") && t->field[TF_SLURM_JOB_ID]) {
		sb_addf(sb, "%s (job ",
			t->field[TF_SLURM_JOB_NAME] ?
				t->field[TF_SLURM_JOB_NAME] :
				"slurm");
		slurm_jobspec(t, sb, true);
		sb_addc(sb, ')');
	} else if (!strcmp(engine, "kubernetes") && t->field[TF_K8S_POD_NAME])
		sb_adds(sb, t->field[TF_K8S_POD_NAME]);
	else
		return false;
	return true;
}

static void choose_name(struct task_identity *t, const struct task_inputs *in)
{
	struct strbuf sb;
	bool cut;

	sb_init(&sb, TASK_VALUE_MAX * 4);
	if (in->task_name) {
		sb_adds(&sb, in->task_name);
		kv_set(&t->sources, "name", "option --task");
	}
	for (size_t i = 0; i < ARRAY_SIZE(engines) && !sb.len; i++) {
		if (engine_name(t, engines[i], &sb))
			kv_set(&t->sources, "name", engines[i]);
	}
	if (!sb.len) {
		sb_adds(&sb, base_name(in->command[0]));
		kv_set(&t->sources, "name", "command basename");
	}
	t->name = task_value_dup(sb.buf, sb.len, &cut);
	sb_release(&sb);
}

/* The engine's stable key for the task; false if it has none. */
static bool engine_key(const struct task_identity *t, const char *engine,
		       struct strbuf *sb)
{
	if (!strcmp(engine, "nextflow") && t->field[TF_NF_HASH]) {
		const char *h = t->field[TF_NF_HASH];
		size_t slash = strcspn(h, "/");

		/* "3f/a2b4..." -> "nf-3f-a2b4...", as the contract spells it. */
		sb_adds(sb, "nf-");
		sb_add(sb, h, slash);
		if (h[slash])
			sb_addf(sb, "-%s", h + slash + 1);
	} else if (!strcmp(engine, "snakemake") &&
		   (t->field[TF_SMK_RULE] || t->field[TF_SMK_GROUP])) {
		snakemake_key(t, sb);
	} else if (!strcmp(engine, "airflow") && t->field[TF_AF_DAG_ID]) {
		sb_addf(sb, "af-%s-%s-%s-%s", t->field[TF_AF_DAG_ID],
			fv(t, TF_AF_TASK_ID), fv(t, TF_AF_DAG_RUN_ID),
			fv(t, TF_AF_TRY_NUMBER));
	} else if (!strcmp(engine, "slurm") && t->field[TF_SLURM_JOB_ID]) {
		sb_adds(sb, "slurm-");
		slurm_jobspec(t, sb, false);
	} else if (!strcmp(engine, "kubernetes") && t->field[TF_K8S_POD_NAME]) {
		sb_addf(sb, "k8s-%s%s%s", fv(t, TF_K8S_NAMESPACE),
			t->field[TF_K8S_NAMESPACE] ? "-" : "",
			t->field[TF_K8S_POD_NAME]);
	} else {
		return false;
	}
	return true;
}

/* time+host+pid+random: unique without any coordination. */
static void fallback_key(const struct task_inputs *in, struct strbuf *sb)
{
	time_t secs = (time_t)(in->now_us / 1000000);
	uint32_t rnd = (uint32_t)random_u64();
	struct tm tm;
	char when[32] = "0";

	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	sb_addf(sb, "%s-%s-%d-%08x", when, in->hostname, (int)in->pid, rnd);
}

static void choose_key(struct task_identity *t, const struct task_inputs *in)
{
	char key[TASK_KEY_MAX + 1];
	struct strbuf sb;

	sb_init(&sb, TASK_VALUE_MAX * 4);
	if (in->task_name) {
		sb_adds(&sb, in->task_name);
		kv_set(&t->sources, "key", "option --task");
	}
	for (size_t i = 0; i < ARRAY_SIZE(engines) && !sb.len; i++)
		if (engine_key(t, engines[i], &sb))
			kv_set(&t->sources, "key", engines[i]);
	if (!task_key_sanitise(sb_str(&sb), key, TASK_KEY_MAX)) {
		sb_reset(&sb);
		fallback_key(in, &sb);
		task_key_sanitise(sb_str(&sb), key, TASK_KEY_MAX);
		kv_set(&t->sources, "key", "time+host+pid+random");
	}
	t->key = xstrdup(key);
	sb_release(&sb);
}

void taskid_detect(struct task_identity *t, const struct task_inputs *in)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; in->labels && i < in->labels->n; i++)
		kv_set(&t->labels, in->labels->items[i].key,
		       in->labels->items[i].value);
	if (t->labels.n)
		kv_set(&t->sources, "labels", "option --label");
	detect_nextflow(t, in);
	detect_snakemake(t, in);
	read_env_table(t, env_fields, ARRAY_SIZE(env_fields));
	detect_kubernetes(t, in->hostname);
	t->engine = pick_engine(t);
	choose_name(t, in);
	choose_key(t, in);
}

void taskid_set_key(struct task_identity *t, const char *key)
{
	free(t->key);
	t->key = xstrdup(key);
}

void taskid_release(struct task_identity *t)
{
	free(t->key);
	free(t->name);
	for (int f = 0; f < TF_COUNT; f++)
		free(t->field[f]);
	kv_release(&t->labels);
	kv_release(&t->wildcards);
	kv_release(&t->k8s_labels);
	kv_release(&t->sources);
	kv_release(&t->warnings);
	memset(t, 0, sizeof(*t));
}

static void format_map(struct json *j, const char *key, const struct kv_list *l)
{
	json_open_object(j, key);
	for (size_t i = 0; i < l->n; i++)
		json_str(j, l->items[i].key, l->items[i].value);
	json_close_object(j);
}

static void format_group(struct json *j, const struct task_identity *t,
			 const char *group)
{
	size_t n = strlen(group);

	if (!group_detected(t, group))
		return;
	json_open_object(j, group);
	for (int f = 0; f < TF_COUNT; f++)
		if (t->field[f] && strncmp(field_names[f], group, n) == 0 &&
		    field_names[f][n] == '.')
			json_str(j, field_names[f] + n + 1, t->field[f]);
	if (!strcmp(group, "snakemake") && t->has_wildcards)
		format_map(j, "wildcards", &t->wildcards);
	if (!strcmp(group, "kubernetes") && t->k8s_labels.n)
		format_map(j, "labels", &t->k8s_labels);
	json_close_object(j);
}

void taskid_format(struct json *j, const struct task_identity *t)
{
	struct strbuf line;

	json_open_object(j, "task");
	json_str(j, "key", t->key);
	json_str(j, "name", t->name);
	json_str(j, "engine", t->engine);
	format_map(j, "labels", &t->labels);
	for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
		format_group(j, t, engines[i]);
	json_open_array(j, "sources");
	for (size_t i = 0; i < t->sources.n; i++) {
		json_open_object(j, NULL);
		json_str(j, "field", t->sources.items[i].key);
		json_str(j, "from", t->sources.items[i].value);
		json_close_object(j);
	}
	json_close_array(j);
	json_open_array(j, "warnings");
	sb_init(&line, 0);
	for (size_t i = 0; i < t->warnings.n; i++) {
		sb_reset(&line);
		sb_addf(&line, "%s: %s", t->warnings.items[i].key,
			t->warnings.items[i].value);
		json_str(j, NULL, sb_str(&line));
	}
	sb_release(&line);
	json_close_array(j);
	json_close_object(j);
}

void taskid_host_component(const char *hostname, char *out, size_t size)
{
	char shortname[256];
	size_t n = strcspn(hostname, ".");

	if (n >= sizeof(shortname))
		n = sizeof(shortname) - 1;
	memcpy(shortname, hostname, n);
	shortname[n] = '\0';
	if (!task_key_sanitise(shortname, out, size - 1))
		snprintf(out, size, "localhost");
}

static bool is_label_key_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("._-/", c);
}

int taskid_parse_label(const char *arg, struct kv_list *labels,
		       struct strbuf *why)
{
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : 0;
	char key[257];

	for (size_t i = 0; i < klen; i++)
		if (!is_label_key_char((unsigned char)arg[i]))
			klen = 0;
	if (!eq || klen == 0 || klen >= sizeof(key)) {
		sb_adds(why, "--label takes KEY=VALUE with a KEY of 1 to 256 "
			     "letters, digits, '.', '_', '-' or '/'");
		return -EINVAL;
	}
	if (strlen(eq + 1) > TASK_VALUE_MAX) {
		sb_addf(why, "--label value longer than %d bytes",
			TASK_VALUE_MAX);
		return -EINVAL;
	}
	memcpy(key, arg, klen);
	key[klen] = '\0';
	kv_set(labels, key, eq + 1);
	return 0;
}
