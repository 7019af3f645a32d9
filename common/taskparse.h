/* SPDX-License-Identifier: MIT */
/*
 * Pure parsers behind the task identity (common/taskid.h): the header of a
 * Nextflow .command.run, a Snakemake job script's "# properties = {json}"
 * line, a Kubernetes downward-API labels file, and trace keys.  They take
 * text that anyone may have written and never trust it: every value they
 * return is bounded (TASK_VALUE_MAX, or the text's length for the Nextflow
 * name, which the caller cuts), a cut one is said (*cut), and every failure
 * is a reason in why.
 */
#ifndef IOWRAP_TASKPARSE_H
#define IOWRAP_TASKPARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/* The most bytes kept of one identity value; longer ones are cut. */
#define TASK_VALUE_MAX 4096
/* The longest trace key (a directory name under --root/HOST). */
#define TASK_KEY_MAX 120
/* The most entries kept of a map read from a file (labels, wildcards):
 * kv_set is linear, so an unbounded map would make parsing quadratic. */
#define TASK_MAP_MAX 1024

/* An ordered list of key/value strings (labels, wildcards, sources). */
struct kv {
	char *key;
	char *value;
};

struct kv_list {
	struct kv *items;
	size_t n;
};

/* Appends a copy of key and value. */
void kv_add(struct kv_list *l, const char *key, const char *value);
/* Replaces the value of key if present (keeping its place), else adds. */
void kv_set(struct kv_list *l, const char *key, const char *value);
const char *kv_get(const struct kv_list *l, const char *key);
void kv_release(struct kv_list *l);

/* A malloc'd copy of at most TASK_VALUE_MAX bytes of s[0..len), cut at a
 * UTF-8 character boundary; *cut says whether anything was dropped. */
char *task_value_dup(const char *s, size_t len, bool *cut);

/* Writes a key made of [A-Za-z0-9._-] only into out (size > max): every
 * other byte becomes '_', a leading '.' too (no hidden or "." names), and
 * at most max bytes are kept.  Returns its length (0 for empty input). */
size_t task_key_sanitise(const char *in, char *out, size_t max);

/*
 * The task name in a .command.run header: Nextflow 24 writes
 *   ### name: 'FASTQC (sample_1)'
 * inside a "### ---" ... "### ..." block, Nextflow 22-23 wrote
 *   # NEXTFLOW TASK: FASTQC (sample_1)
 * Only the leading comment block is read (up to the first line that is not
 * a comment).  Returns 0 with the name in name, whole (the caller cuts it
 * to TASK_VALUE_MAX and says so), -ENOENT if there is none,
 * -EINVAL if the header holds NUL bytes (a binary file).
 */
int nextflow_header_name(const char *text, size_t len, struct strbuf *name);
/* The process of a task name: the part before " (", else all of it. */
void nextflow_process_of(const char *name, struct strbuf *process);
/* "3f/a2b4..." from a work directory ending in two hex components (2 hex
 * digits, then at least 6); false if it does not look like one. */
bool nextflow_hash_of(const char *workdir, struct strbuf *hash);

/*
 * Finds the "# properties = " line in a job script's leading comment
 * block.  complete says whether text is the whole file.  Returns 0 and
 * points *json at the value, -ENOENT if there is none, -EINVAL if the line
 * is cut (no newline and more file, or the file ends mid-line is fine).
 */
int snakemake_find_properties(const char *text, size_t len, bool complete,
			      const char **json, size_t *json_len);

struct snakemake_props {
	char *rule; /* NULL: absent */
	char *jobid;
	/* A group job's (type "group"): its groupid and its own jobid, a
	 * UUID; rule, jobid and wildcards are then absent. */
	char *group, *group_jobid;
	struct kv_list wildcards;
	bool has_wildcards;
	bool cut; /* a value was longer than TASK_VALUE_MAX */
	bool too_many; /* more than TASK_MAP_MAX wildcards; the rest dropped */
};

/* Parses the properties JSON; 0, or -EINVAL with the reason in why. */
int snakemake_parse_properties(const char *json, size_t len,
			       struct snakemake_props *p, struct strbuf *why);
void snakemake_props_release(struct snakemake_props *p);
/* "k=v,k2=v2" (IOWRAP_SNAKEMAKE_WILDCARDS); -EINVAL if a pair has no '='
 * or an empty key.  Pairs before the bad one are kept; *cut says whether a
 * key or value was cut to TASK_VALUE_MAX. */
int snakemake_parse_wildcards(const char *text, struct kv_list *out, bool *cut);

/* A Go-quoted string ("..." with \n, \t, \", \\, \xHH, \NNN, \uHHHH,
 * \UHHHHHHHH) at s; appends the bytes to out and returns the length of
 * the quoted text, or -1 if it is malformed. */
long go_unquote(const char *s, size_t len, struct strbuf *out);
/* A downward-API labels file: key="value" lines.  Returns the number of
 * malformed lines and of lines past TASK_MAP_MAX labels (skipped); the
 * first one is described in why.  *cut says whether a key or value was cut
 * to TASK_VALUE_MAX. */
int k8s_parse_labels(const char *text, size_t len, struct kv_list *out,
		     struct strbuf *why, bool *cut);

#endif
