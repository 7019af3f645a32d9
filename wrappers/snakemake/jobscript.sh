#!/bin/bash
# properties = {properties}
# Snakemake job script (--jobscript) that traces the job's shell commands with
# iowrap. The line above holds the job's properties. A single job's rule,
# jobid and wildcards are exported as IOWRAP_SNAKEMAKE_RULE/JOBID/WILDCARDS
# for iowrap's task object. A group job (pipe() outputs, `group:`) runs
# several jobs in one Snakemake process whose environment all of them share:
# its group id, its own job id and its rules are exported as
# IOWRAP_SNAKEMAKE_GROUP/GROUP_JOBID/GROUP_RULES, and that process gets
# group_jobs.py as its log handler, which writes each job's rule, wildcards
# and shell command into IOWRAP_SNAKEMAKE_JOBS_DIR (a temporary directory)
# just before the job starts; bin/bash finds its command there.
# bin/ (first on PATH) holds a `bash` that Snakemake takes as its shell
# executable and that runs each command as `iowrap -- bash -c "..."`.
# IOWRAP_HOME: where iowrap and this folder live (default /opt/iowrap, holding
# iowrap and snakemake/); IOWRAP_ROOT: where traces go (default
# .snakemake/iowrap in the workflow's directory); IOWRAP_SNAKEMAKE_ARGS: more
# iowrap options (e.g. "--level files").
IOWRAP_HOME=${{IOWRAP_HOME:-/opt/iowrap}}
export IOWRAP_HOME
IOWRAP_ROOT=${{IOWRAP_ROOT:-$PWD/.snakemake/iowrap}}
export IOWRAP_ROOT
# This job's identity alone: a workflow run from within a traced job (a
# nested snakemake) inherits that job's, which a group job, exporting no
# rule, would otherwise keep for all its jobs.
unset IOWRAP_SNAKEMAKE_RULE IOWRAP_SNAKEMAKE_JOBID IOWRAP_SNAKEMAKE_WILDCARDS \
    IOWRAP_SNAKEMAKE_GROUP IOWRAP_SNAKEMAKE_GROUP_JOBID \
    IOWRAP_SNAKEMAKE_GROUP_RULES IOWRAP_SNAKEMAKE_JOBS_DIR
read -r -d '' exec_job <<'IOWRAP_EXEC_JOB'
{exec_job}
IOWRAP_EXEC_JOB
iowrap_group_exec=
eval "$(python3 - "$0" "$exec_job" "$IOWRAP_HOME/snakemake/group_jobs.py" 2>/dev/null <<'PY'
import json, os, shlex, sys
script, exec_job, handler = sys.argv[1:4]
props = None
with open(script, encoding="utf-8") as f:
    for line in f:
        if line.startswith("# properties = "):
            props = json.loads(line[len("# properties = "):])
            break


def export(key, value):
    print("export IOWRAP_SNAKEMAKE_%s=%s" % (key, shlex.quote(value)))


def target_rules(exec_job):
    """The rules of --target-jobs RULE:WC ... (one word per job), sorted;
    none if the command does not split into words."""
    try:
        words = shlex.split(exec_job)
    except ValueError:
        return []
    rules = set()
    if "--target-jobs" in words:
        for word in words[words.index("--target-jobs") + 1:]:
            if word.startswith("-"):
                break
            rules.add(word.split(":", 1)[0])
    return sorted(rules)


if props and props.get("type") == "single":
    wildcards = ",".join("%s=%s" % kv for kv in props.get("wildcards", dict()).items())
    export("RULE", props["rule"])
    export("JOBID", str(props["jobid"]))
    export("WILDCARDS", wildcards)
elif props and props.get("type") == "group":
    # One field missing loses that field only.
    for key, field in (("GROUP", "groupid"), ("GROUP_JOBID", "jobid")):
        if props.get(field) is not None:
            export(key, str(props[field]))
    export("GROUP_RULES", ",".join(target_rules(exec_job)))
    # The log handler goes right after "-m snakemake": exec_job may end in
    # "&& touch FINISHED || ...", after which no option can go. Snakemake
    # fails a job whose handler script it cannot find (IOWRAP_HOME not on
    # this node): without one the jobs run, unnamed.
    at = exec_job.find(" -m snakemake ")
    if at >= 0 and os.path.isfile(handler) and os.access(handler, os.R_OK):
        at += len(" -m snakemake")
        print("iowrap_group_exec=" + shlex.quote(
            exec_job[:at] + " --log-handler-script " + shlex.quote(handler)
            + exec_job[at:]))
PY
)"
if [ -n "$iowrap_group_exec" ] &&
   IOWRAP_SNAKEMAKE_JOBS_DIR=$(mktemp -d "${{TMPDIR:-/tmp}}/iowrap-smk.XXXXXX"); then
    export IOWRAP_SNAKEMAKE_JOBS_DIR
    trap 'rm -rf -- "$IOWRAP_SNAKEMAKE_JOBS_DIR"' EXIT
    exec_job=$iowrap_group_exec
fi
# Last: whatever runs bash from here on (python3 above may itself be a bash
# script, e.g. a pyenv shim) goes through iowrap.
export PATH="$IOWRAP_HOME/snakemake/bin:$PATH"
eval "$exec_job"
