/* SPDX-License-Identifier: MIT */
/*
 * The task's identity, detected from inside the task: summary.json's
 * "task" object (docs/summary-schema.md).  Every value is a string, at
 * most TASK_VALUE_MAX bytes, and every field records where it came from.
 * Nothing here can fail the task: what cannot be read becomes a warning.
 */
#ifndef IOWRAP_TASKID_H
#define IOWRAP_TASKID_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "json.h"
#include "taskparse.h"

enum task_field {
	TF_NF_WORKDIR,
	TF_NF_SCRATCH_DIR,
	TF_NF_HASH,
	TF_NF_NAME,
	TF_NF_PROCESS,
	TF_SMK_RULE,
	TF_SMK_JOBID,
	TF_SMK_GROUP,
	TF_SMK_GROUP_JOBID,
	TF_SMK_GROUP_RULES,
	TF_SLURM_JOB_ID,
	TF_SLURM_ARRAY_JOB_ID,
	TF_SLURM_ARRAY_TASK_ID,
	TF_SLURM_STEP_ID,
	TF_SLURM_PROCID,
	TF_SLURM_LOCALID,
	TF_SLURM_NODEID,
	TF_SLURM_NODENAME,
	TF_SLURM_JOB_NAME,
	TF_AF_DAG_ID,
	TF_AF_TASK_ID,
	TF_AF_DAG_RUN_ID,
	TF_AF_TRY_NUMBER,
	TF_K8S_POD_NAME,
	TF_K8S_NAMESPACE,
	TF_K8S_POD_UID,
	TF_K8S_NODE_NAME,
	TF_COUNT
};

struct task_identity {
	char *key; /* the trace directory's name under --root */
	char *name;
	const char *engine; /* "nextflow", ..., "none" */
	char *field[TF_COUNT]; /* NULL: not detected */
	struct kv_list labels; /* --label, in order */
	struct kv_list wildcards; /* snakemake.wildcards */
	bool has_wildcards;
	struct kv_list k8s_labels; /* kubernetes.labels */
	struct kv_list sources; /* field -> where it came from */
	struct kv_list warnings; /* key: what, value: the problem */
	/* The Nextflow work directory came from a .command.* path or holds
	 * a .command.run: <workdir>/.iowrap is a safe default trace dir. */
	bool nf_workdir_confirmed;
};

struct task_inputs {
	char *const *command; /* the task's argv */
	const char *cwd; /* iowrap's working directory ("" if unknown) */
	const char *task_name; /* --task, or NULL */
	const struct kv_list *labels; /* --label pairs */
	pid_t parent; /* whose running script may be a Snakemake job */
	const char *hostname; /* for the fallback key */
	pid_t pid;
	int64_t now_us;
};

/* Detects everything; never fails.  Release with taskid_release(). */
void taskid_detect(struct task_identity *t, const struct task_inputs *in);
void taskid_release(struct task_identity *t);
/* Replaces the key (the trace directory got a -N suffix). */
void taskid_set_key(struct task_identity *t, const char *key);
/* Writes "task": {...} into an open JSON object. */
void taskid_format(struct json *j, const struct task_identity *t);
/* "3f_x" style short host name for DIR/HOST/: [A-Za-z0-9._-] only. */
void taskid_host_component(const char *hostname, char *out, size_t size);
/* --label KEY=VALUE: 0, or -EINVAL with the reason in why. */
int taskid_parse_label(const char *arg, struct kv_list *labels,
		       struct strbuf *why);

#endif
