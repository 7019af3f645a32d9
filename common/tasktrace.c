// SPDX-License-Identifier: MIT
#include "tasktrace.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonget.h"
#include "taskparse.h"
#include "textfile.h"
#include "util.h"

/* The basename of command[0]: the name of a task with no task object. */
static char *command_name(const cJSON *summary)
{
	const cJSON *argv0 = cJSON_GetArrayItem(jget(summary, "command"), 0);
	const char *s, *slash;

	if (!cJSON_IsString(argv0) || !argv0->valuestring)
		return NULL;
	s = argv0->valuestring;
	slash = strrchr(s, '/');
	return xstrdup(slash && slash[1] ? slash + 1 : s);
}

static void load_exit(const cJSON *summary, struct task_trace *t)
{
	const cJSON *exit_obj = jget(summary, "exit");
	double code;

	if (jget_number(exit_obj, "code", &code) && code >= -1e9 &&
	    code <= 1e9) {
		t->has_exit_code = true;
		t->exit_code = (int64_t)code;
	}
	t->signal_name = jget_strdup(exit_obj, "signal_name");
}

/* File bytes from "mounts" (--level full: --level files counts no reads
 * or writes), else rchar/wchar. */
static void load_io(const cJSON *summary, struct task_trace *t)
{
	const cJSON *mounts = jget(summary, "mounts"), *m;
	const cJSON *totals = jget(summary, "totals");
	uint64_t r, w;

	if (cJSON_IsArray(mounts) && t->level &&
	    strcmp(t->level, "full") == 0) {
		t->has_io = t->io_from_files = true;
		cJSON_ArrayForEach(m, mounts)
		{
			if (jget_count(m, "bytes_read", &r))
				t->read_bytes += r;
			if (jget_count(m, "bytes_written", &w))
				t->written_bytes += w;
		}
		return;
	}
	if (jget_count(totals, "rchar_bytes", &r) &&
	    jget_count(totals, "wchar_bytes", &w)) {
		t->has_io = true;
		t->read_bytes = r;
		t->written_bytes = w;
	}
}

static void load_identity(cJSON *summary, struct task_trace *t)
{
	const cJSON *nf, *smk;

	t->task = cJSON_DetachItemFromObjectCaseSensitive(summary, "task");
	if (!cJSON_IsObject(t->task)) {
		cJSON_Delete(t->task);
		t->task = NULL;
	}
	t->name = jget_strdup(t->task, "name");
	if (!t->name)
		t->name = command_name(summary);
	t->key = jget_strdup(t->task, "key");
	t->engine = jget_strdup(t->task, "engine");
	nf = jget(t->task, "nextflow");
	t->nf_hash = jget_strdup(nf, "hash");
	if (!t->nf_hash)
		t->nf_hash = task_trace_hash_from_path(t->path);
	smk = jget(t->task, "snakemake");
	t->smk_rule = jget_strdup(smk, "rule");
	t->smk_jobid = jget_strdup(smk, "jobid");
}

static void load_fields(cJSON *summary, struct task_trace *t)
{
	/* A time a calendar shows (a hostile 1e300 is no time_t). */
	t->has_start = jget_number(summary, "start_time_s", &t->start_s) &&
		       t->start_s >= 0 && t->start_s < 1e12;
	t->has_wall = jget_number(summary, "wall_time_s", &t->wall_s);
	t->host = jget_strdup(jget(summary, "host"), "hostname");
	t->level = jget_strdup(jget(summary, "tracing"), "level");
	load_exit(summary, t);
	load_io(summary, t);
	load_identity(summary, t);
}

int task_trace_load(int dirfd, const char *path, struct task_trace *t,
		    struct strbuf *why)
{
	struct strbuf text;
	cJSON *summary;
	int rc;

	memset(t, 0, sizeof(*t));
	sb_init(&text, TASKTRACE_SUMMARY_MAX + 1);
	rc = textfile_read_at(dirfd, "summary.json", O_NOFOLLOW,
			      TASKTRACE_SUMMARY_MAX, &text, why);
	if (rc < 0) {
		sb_release(&text);
		return rc;
	}
	t->path = xstrdup(path);
	summary = cJSON_ParseWithLength(text.buf, text.len);
	if (!summary) {
		rc = jget_names_summary_early(text.buf, text.len);
		if (rc)
			t->error = xstrdup("summary.json is not valid JSON "
					   "(cut mid-write?)");
	} else if (!jget_is_summary(summary)) {
		rc = 0;
	} else {
		rc = 1;
		load_fields(summary, t);
	}
	cJSON_Delete(summary);
	sb_release(&text);
	if (rc == 0)
		task_trace_release(t);
	return rc;
}

void task_trace_release(struct task_trace *t)
{
	char **strings[] = { &t->path,	   &t->error,	    &t->name,
			     &t->key,	   &t->engine,	    &t->host,
			     &t->level,	   &t->signal_name, &t->nf_hash,
			     &t->smk_rule, &t->smk_jobid };

	for (size_t i = 0; i < ARRAY_SIZE(strings); i++)
		free(*strings[i]);
	cJSON_Delete(t->task);
	memset(t, 0, sizeof(*t));
}

/* A directory with procs.csv and no iowrap summary.json: the tracer was
 * killed (or the task is still running): procs.csv is written as the task
 * runs, summary.json at its end; or the summary is damaged.  Listed,
 * marked. */
static void procs_only_trace(const char *path, const char *error,
			     struct task_trace *t)
{
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(path);
	t->error = xstrdup(error);
}

int task_trace_probe(struct tracescan *ts, int fd, const char *path,
		     void **data)
{
	enum tracescan_kind kind = tracescan_kind(ts, fd, path);
	struct task_trace t;
	struct strbuf why;
	int rc;

	if (kind == TRACESCAN_NONE)
		return 0;
	sb_init(&why, 0);
	rc = task_trace_load(fd, path, &t, &why);
	if (rc < 0 && rc != -ENOENT)
		tracescan_warn(ts, path, "/summary.json", sb_str(&why));
	else if (rc > 0 && t.error)
		tracescan_warn(ts, path, "/summary.json", t.error);
	else if (rc == 0)
		tracescan_warn(ts, path, "/summary.json",
			       "not an iowrap summary (no \"schema\": "
			       "\"iowrap-summary/N\")");
	if (rc < 0 && rc != -ENOENT && !tracescan_has_file(fd, "procs.csv")) {
		sb_release(&why);
		return 0;
	}
	if (rc == -ENOENT)
		procs_only_trace(path,
				 "no summary.json (iowrap killed, or the "
				 "task still running)",
				 &t);
	else if (rc == 0)
		procs_only_trace(path,
				 "summary.json is not an iowrap summary "
				 "(damaged?)",
				 &t);
	else if (rc < 0)
		procs_only_trace(path, "summary.json cannot be read", &t);
	sb_release(&why);
	*data = xmalloc(sizeof(t));
	memcpy(*data, &t, sizeof(t));
	return 1;
}

void task_trace_free(void *t)
{
	if (!t)
		return;
	task_trace_release(t);
	free(t);
}

/* ".iowrap", or ".iowrap-N" for a task run again in its work directory. */
static bool is_iowrap_dir_name(const char *name)
{
	if (strncmp(name, ".iowrap", 7) != 0)
		return false;
	name += 7;
	if (*name == '\0')
		return true;
	if (*name++ != '-' || !*name)
		return false;
	for (; *name; name++)
		if (*name < '0' || *name > '9')
			return false;
	return true;
}

char *task_trace_hash_from_path(const char *path)
{
	struct strbuf dir, hash;
	const char *slash = strrchr(path, '/');
	char *out = NULL;

	if (!slash || !is_iowrap_dir_name(slash + 1))
		return NULL;
	sb_init(&dir, 0);
	sb_init(&hash, 256);
	sb_add(&dir, path, (size_t)(slash - path));
	if (nextflow_hash_of(sb_str(&dir), &hash))
		out = sb_detach(&hash);
	sb_release(&dir);
	sb_release(&hash);
	return out;
}
