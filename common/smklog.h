/* SPDX-License-Identifier: MIT */
/*
 * The jobs of a Snakemake log (.snakemake/log/DATE.snakemake.log, the same
 * text Snakemake prints): each job is a block
 *   [Sun Nov 22 10:53:11 2026]
 *   rule extract:                  (or localrule, checkpoint, ...)
 *       input: samples.txt
 *       output: work/b.txt
 *       jobid: 5
 *       wildcards: sample=b
 *       ...
 * and later "Finished job 5." (Snakemake 8: "Finished jobid: 5 (Rule: X)")
 * or an "Error in rule extract:" block with "    jobid: 5".  A block cut
 * before its jobid is counted, not guessed.
 */
#ifndef IOWRAP_SMKLOG_H
#define IOWRAP_SMKLOG_H

#include <stdbool.h>
#include <stddef.h>

enum smk_status {
	SMK_STARTED = 0, /* no end seen (still running, or the log ends) */
	SMK_FINISHED,
	SMK_FAILED,
};

struct smk_job {
	char *rule;
	char *jobid;
	char *input; /* as the log prints them: "a, b"; NULL if absent */
	char *output;
	char *wildcards; /* "a=b, c=d"; NULL if none */
	char *start; /* the time stamp line before the block, "Sun Nov ..." */
	char *end; /* the one before "Finished job N." */
	bool local; /* "localrule" / "localcheckpoint" */
	enum smk_status status;
};

struct smklog {
	struct smk_job *jobs;
	size_t n;
	size_t cut; /* blocks without a jobid (cut mid-write), skipped */
};

void smklog_parse(const char *text, size_t len, struct smklog *log);
void smklog_release(struct smklog *log);
const char *smk_status_name(enum smk_status s);

#endif
