// SPDX-License-Identifier: MIT
/* The Snakemake log parser, on Snakemake 7.21's own output (and the
 * "Finished jobid:" line of Snakemake 8). */
#include <string.h>

#include "smklog.h"
#include "unit.h"

static const char real_log[] =
	"Building DAG of jobs...\n"
	"Using shell: /usr/bin/bash\n"
	"Select jobs to execute...\n"
	"\n"
	"[Sun Nov 22 10:53:11 2026]\n"
	"rule extract:\n"
	"    input: samples.txt\n"
	"    output: work/b.txt\n"
	"    jobid: 5\n"
	"    reason: Missing output files: work/b.txt\n"
	"    wildcards: sample=b\n"
	"    resources: mem_mb=1000, mem_mib=954, disk_mb=1000, "
	"disk_mib=954, tmpdir=<TBD>\n"
	"\n"
	"grep '^b' samples.txt > work/b.txt\n"
	"\n"
	"[Sun Nov 22 10:53:11 2026]\n"
	"checkpoint split:\n"
	"    input: work/b.txt, samples.txt\n"
	"    output: parts/\n"
	"    jobid: 7\n"
	"    wildcards: sample=x, rest=a, b=c\n"
	"\n"
	"[Sun Nov 22 10:53:12 2026]\n"
	"Finished job 5.\n"
	"1 of 8 steps (12%) done\n"
	"[Sun Nov 22 10:53:13 2026]\n"
	"Error in rule split:\n"
	"    jobid: 7\n"
	"    input: work/b.txt, samples.txt\n"
	"    shell:\n"
	"        split ...\n"
	"        (one of the commands exited with non-zero exit code)\n"
	"\n"
	"[Sun Nov 22 10:53:15 2026]\n"
	"localrule all:\n"
	"    input: merged.txt\n"
	"    jobid: 0\n"
	"    resources: tmpdir=/tmp\n"
	"\n"
	"[Sun Nov 22 10:53:16 2026]\n"
	"Finished jobid: 0 (Rule: all)\n"
	"[Sun Nov 22 10:53:17 2026]\n"
	"rule upper:\n"
	"    input: work/a.txt\n"
	"    output: work/a.upper\n"
	"    jobid: 12\n"
	"\n"
	"[Sun Nov 22 10:53:18 2026]\n"
	"rule merge:\n"
	"    input: work/a.upper\n"
	"    outp";

static void smklog_real_log(void)
{
	struct smklog l;
	const struct smk_job *j;

	smklog_parse(real_log, sizeof(real_log) - 1, &l);
	if (!CHECK_UINT(l.n, 4))
		goto out;
	j = &l.jobs[0];
	CHECK_STR(j->rule, "extract");
	CHECK_STR(j->jobid, "5");
	CHECK_STR(j->input, "samples.txt");
	CHECK_STR(j->output, "work/b.txt");
	CHECK_STR(j->wildcards, "sample=b");
	CHECK_STR(j->start, "Sun Nov 22 10:53:11 2026");
	CHECK_STR(j->end, "Sun Nov 22 10:53:12 2026");
	CHECK(!j->local);
	CHECK_INT(j->status, SMK_FINISHED);
	j = &l.jobs[1];
	CHECK_STR(j->rule, "split");
	CHECK_STR(j->jobid, "7");
	CHECK_STR(j->input, "work/b.txt, samples.txt");
	CHECK_STR(j->wildcards, "sample=x, rest=a, b=c");
	CHECK_INT(j->status, SMK_FAILED);
	CHECK_STR(j->end, NULL);
	j = &l.jobs[2];
	CHECK_STR(j->rule, "all");
	CHECK(j->local);
	CHECK_STR(j->output, NULL);
	CHECK_STR(j->wildcards, NULL);
	CHECK_INT(j->status, SMK_FINISHED);
	CHECK_STR(j->end, "Sun Nov 22 10:53:16 2026");
	j = &l.jobs[3];
	CHECK_STR(j->rule, "upper");
	CHECK_STR(j->jobid, "12");
	CHECK_INT(j->status, SMK_STARTED);
	/* merge: cut before its jobid. */
	CHECK_UINT(l.cut, 1);
out:
	smklog_release(&l);
}

static void smklog_bad_blocks(void)
{
	static const char log[] = "rule a:\n"
				  "    jobid: 1x\n"
				  "rule b c:\n"
				  "    jobid: 2\n"
				  "rule d:\n"
				  "    jobid: \n"
				  "Finished job .\n"
				  "Finished job 99.\n"
				  "rule e:\r\n"
				  "    jobid: 3\r\n";
	struct smklog l;

	smklog_parse(log, sizeof(log) - 1, &l);
	CHECK_UINT(l.cut, 2);
	if (CHECK_UINT(l.n, 1)) {
		CHECK_STR(l.jobs[0].rule, "e");
		CHECK_STR(l.jobs[0].jobid, "3");
	}
	smklog_release(&l);
	smklog_parse("", 0, &l);
	CHECK_UINT(l.n, 0);
	smklog_release(&l);
}

/* 300 jobs (past the first growth of the job array), finished in
 * reverse order; a jobid seen twice (a log of two runs) is the later
 * block's. */
static void smklog_many_jobs(void)
{
	struct strbuf log;
	struct smklog l;
	bool all_finished = true;

	sb_init(&log, 0);
	for (int i = 0; i < 300; i++)
		sb_addf(&log, "rule r%d:\n    jobid: %d\n\n", i, i);
	sb_adds(&log, "rule again:\n    jobid: 7\n\n");
	for (int i = 299; i >= 0; i--)
		sb_addf(&log, "[Sun Nov 22 10:53:11 2026]\nFinished job %d.\n",
			i);
	smklog_parse(log.buf, log.len, &l);
	if (!CHECK_UINT(l.n, 301))
		goto out;
	for (int i = 0; i < 300; i++)
		if (i != 7 && l.jobs[i].status != SMK_FINISHED)
			all_finished = false;
	CHECK(all_finished);
	CHECK_INT(l.jobs[7].status, SMK_STARTED);
	CHECK_STR(l.jobs[300].rule, "again");
	CHECK_INT(l.jobs[300].status, SMK_FINISHED);
out:
	smklog_release(&l);
	sb_release(&log);
}

const struct unit_test smklog_tests[] = {
	UNIT_TEST(smklog_real_log),
	UNIT_TEST(smklog_bad_blocks),
	UNIT_TEST(smklog_many_jobs),
	UNIT_END,
};
