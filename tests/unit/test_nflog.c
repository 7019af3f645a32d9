// SPDX-License-Identifier: MIT
/* The .nextflow.log task line parser, on lines as Nextflow's
 * TaskHandler.toString() and GridTaskHandler.toStringBuilder() write them. */
#include <string.h>

#include "nflog.h"
#include "unit.h"

#define PREFIX                                      \
	"Nov-22 10:01:02.345 [Task monitor] DEBUG " \
	"n.processor.TaskPollingMonitor - Task completed > "
#define HASH "3f/a2b4c6d8e9f00112233445566778899"

static enum nflog_result parse(const char *rec, struct nflog_task *t,
			       size_t *dropped)
{
	return nflog_parse_record(rec, strlen(rec), t, dropped);
}

static void nflog_local_line(void)
{
	static const char rec[] = PREFIX
		"TaskHandler[id: 1; name: sayHello (1); status: "
		"COMPLETED; exit: 0; error: -; workDir: "
		"/home/u/work/" HASH "]";
	struct nflog_task t;
	size_t dropped;

	if (!CHECK_INT(parse(rec, &t, &dropped), NFLOG_TASK))
		return;
	CHECK_UINT(dropped, 0);
	CHECK_STR(t.log_time, "Nov-22 10:01:02.345");
	CHECK_STR(t.job_id, NULL);
	CHECK_STR(t.id, "1");
	CHECK_STR(t.name, "sayHello (1)");
	CHECK_STR(t.status, "COMPLETED");
	CHECK_STR(t.exit, "0");
	CHECK_STR(t.error, "-");
	CHECK_STR(t.workdir, "/home/u/work/" HASH);
	CHECK_STR(t.hash, HASH);
	CHECK_STR(t.started_ms, NULL);
	CHECK(!t.timed_out);
	nflog_task_release(&t);
}

static void nflog_grid_line(void)
{
	/* GridTaskHandler: jobId first, no ';' after workDir. */
	static const char rec[] =
		"Feb-07 16:50:04.562 [Task monitor] DEBUG "
		"n.processor.TaskPollingMonitor - Task completed > "
		"TaskHandler[jobId: 18583433_7; id: 3; name: FILTLONG "
		"(SRR19683890); status: COMPLETED; exit: 140; error: -; "
		"workDir: /scratch/b/work/10/c282556a2175a28172de84931f51df "
		"started: 1675785003943; exited: 2023-02-07T21:49:48Z; ]";
	struct nflog_task t;
	size_t dropped;

	if (!CHECK_INT(parse(rec, &t, &dropped), NFLOG_TASK))
		return;
	CHECK_STR(t.job_id, "18583433_7");
	CHECK_STR(t.id, "3");
	CHECK_STR(t.name, "FILTLONG (SRR19683890)");
	CHECK_STR(t.exit, "140");
	CHECK_STR(t.workdir,
		  "/scratch/b/work/10/c282556a2175a28172de84931f51df");
	CHECK_STR(t.hash, "10/c282556a2175a28172de84931f51df");
	CHECK_STR(t.started_ms, "1675785003943");
	CHECK_STR(t.exited, "2023-02-07T21:49:48Z");
	nflog_task_release(&t);
}

static void nflog_name_with_separators(void)
{
	/* Names and error messages may hold "; ", "]" and "workDir". */
	static const char rec[] = PREFIX
		"TaskHandler[jobId: 7; id: 12; name: A;B] (x; y]; "
		"workDir: no); status: COMPLETED; exit: 1; error: "
		"nextflow.exception.ProcessFailedException: a; b]; "
		"workDir: /w/" HASH " started: -; exited: -; ]";
	struct nflog_task t;
	size_t dropped;

	if (!CHECK_INT(parse(rec, &t, &dropped), NFLOG_TASK))
		return;
	CHECK_STR(t.name, "A;B] (x; y]; workDir: no)");
	CHECK_STR(t.error, "nextflow.exception.ProcessFailedException: a; b]");
	CHECK_STR(t.workdir, "/w/" HASH);
	CHECK_STR(t.started_ms, "-");
	nflog_task_release(&t);
}

static void nflog_cut_lines(void)
{
	static const char *const cut[] = {
		PREFIX "TaskHandler[id: 1; name: sayHel",
		PREFIX "TaskHandler[id: 1; name: a]; status: COMPLETED; exit: "
		       "0; error: -; workDir: /w/3f/a2b4",
		PREFIX "TaskHandler[id: 1; name: a]",
		PREFIX "TaskHandler[id: 1; name: a; status: COMPLETED; exit: "
		       "0; error: -; workDir: /w/3f/a2]",
		PREFIX "TaskHandler[jobId: 5; id: 1; name: a; status: "
		       "COMPLETED; exit: 0; error: -; workDir: /w/" HASH
		       " started: 1; exi",
		PREFIX "TaskHandler[",
		PREFIX "TaskHandler[id: x; name: a; status: COMPLETED; exit: "
		       "0; error: -; workDir: /w/" HASH "]",
	};
	struct nflog_task t;
	size_t dropped;

	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		if (!CHECK_INT(parse(cut[i], &t, &dropped), NFLOG_CUT))
			unit_note("case %zu", i);
	}
}

static void nflog_other_lines(void)
{
	static const char *const other[] = {
		"Dec-05 09:59:06.046 [Task submitter] DEBUG "
		"nextflow.executor.GridTaskHandler - [SLURM] submitted process "
		"blast (2) > jobId: 15; workDir: /d/work/b9/"
		"51bc58d8a55df65387afc6b217947b",
		"Nov-22 10:01:02.345 [main] DEBUG nextflow.cli.CmdRun - N",
		"",
	};
	struct nflog_task t;
	size_t dropped;

	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		CHECK_INT(parse(other[i], &t, &dropped), NFLOG_OTHER);
}

static void nflog_timed_out_and_s3(void)
{
	static const char s3[] =
		"Jun-03 12:10:57.578 [Task monitor] DEBUG "
		"n.processor.TaskPollingMonitor - Task timed-out > "
		"TaskHandler[id: 2; name: extract (1); status: SUBMITTED; "
		"exit: -; error: -; workDir: s3://bkt/work/" HASH "]";
	struct nflog_task t;
	size_t dropped;

	if (!CHECK_INT(parse(s3, &t, &dropped), NFLOG_TASK))
		return;
	CHECK(t.timed_out);
	CHECK_STR(t.exit, "-");
	CHECK_STR(t.status, "SUBMITTED");
	CHECK_STR(t.hash, HASH);
	nflog_task_release(&t);
}

static void nflog_record_start(void)
{
	CHECK(nflog_is_record_start("Nov-22 10:01:02.345 [main] DEBUG", 32));
	CHECK(nflog_is_record_start("11\xe6\x9c\x88-29 22:36:35.094 [Task",
				    31));
	CHECK(!nflog_is_record_start("    at x.y(z.java:1)", 20));
	CHECK(!nflog_is_record_start("Nov-2 10:01:02.345 [main]", 25));
	CHECK(!nflog_is_record_start("Nov-22 10:01:02.345", 19));
	CHECK(!nflog_is_record_start("a b-22 10:01:02.345 [main]", 26));
}

static void nflog_whole_log(void)
{
	/* A log with a multi-line error, a line cut mid-write followed by the
	 * next record, a cut line glued to the next one, and a last line cut
	 * with no newline. */
	static const char log[] =
		"Nov-22 10:00:00.000 [main] DEBUG nextflow.cli.Launcher - go\n" PREFIX
		"TaskHandler[id: 1; name: a; status: COMPLETED; exit: 1; "
		"error: java.lang.Exception: line one\nline two; workDir: "
		"/w/aa/000000000000000000000000000001]\n" PREFIX
		"TaskHandler[id: 2; name: b; status: COMPL\n" PREFIX
		"TaskHandler[id: 3; name: c; stat" PREFIX
		"TaskHandler[id: 4; name: d; status: COMPLETED; exit: 0; "
		"error: -; workDir: /w/bb/000000000000000000000000000004]\n"
		"    at some.Stack(Trace.java:1)\n" PREFIX
		"TaskHandler[id: 5; name: e; status: COMPLETED; exit: 0; "
		"error: -; workDir: /w/cc/0000000000000000000000000000";
	struct nflog l;

	nflog_parse(log, sizeof(log) - 1, &l);
	if (!CHECK_UINT(l.n, 2))
		goto out;
	CHECK_STR(l.tasks[0].id, "1");
	CHECK_STR(l.tasks[0].error, "java.lang.Exception: line one\nline two");
	CHECK_STR(l.tasks[0].hash, "aa/000000000000000000000000000001");
	CHECK_STR(l.tasks[1].id, "4");
	CHECK_STR(l.tasks[1].hash, "bb/000000000000000000000000000004");
	CHECK_UINT(l.cut, 3);
out:
	nflog_release(&l);
}

const struct unit_test nflog_tests[] = {
	UNIT_TEST(nflog_local_line),
	UNIT_TEST(nflog_grid_line),
	UNIT_TEST(nflog_name_with_separators),
	UNIT_TEST(nflog_cut_lines),
	UNIT_TEST(nflog_other_lines),
	UNIT_TEST(nflog_timed_out_and_s3),
	UNIT_TEST(nflog_record_start),
	UNIT_TEST(nflog_whole_log),
	UNIT_END,
};
