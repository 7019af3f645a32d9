#!/bin/bash
# properties = {properties}
# Snakemake job script (--jobscript) that traces the job's shell commands with
# iowrap. The line above holds the job's properties (rule, jobid, wildcards):
# they are exported as IOWRAP_SNAKEMAKE_RULE/JOBID/WILDCARDS for iowrap's task
# object. bin/ (first on PATH) holds a `bash` that Snakemake takes as its shell
# executable and that runs each command as `iowrap -- bash -c "..."`.
# IOWRAP_HOME: where iowrap and this folder live (default /opt/iowrap, holding
# iowrap and snakemake/); IOWRAP_ROOT: where traces go (default
# .snakemake/iowrap in the workflow's directory); IOWRAP_SNAKEMAKE_ARGS: more
# iowrap options (e.g. "--level files").
IOWRAP_HOME=${{IOWRAP_HOME:-/opt/iowrap}}
export IOWRAP_HOME
IOWRAP_ROOT=${{IOWRAP_ROOT:-$PWD/.snakemake/iowrap}}
export IOWRAP_ROOT
eval "$(python3 - "$0" 2>/dev/null <<'PY'
import json, shlex, sys
props = None
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        if line.startswith("# properties = "):
            props = json.loads(line[len("# properties = "):])
            break
if props and props.get("type") == "single":
    wildcards = ",".join("%s=%s" % kv for kv in props.get("wildcards", dict()).items())
    for key, value in (("RULE", props["rule"]), ("JOBID", str(props["jobid"])),
                       ("WILDCARDS", wildcards)):
        print("export IOWRAP_SNAKEMAKE_%s=%s" % (key, shlex.quote(value)))
PY
)"
# Last: whatever runs bash from here on (python3 above may itself be a bash
# script, e.g. a pyenv shim) goes through iowrap.
export PATH="$IOWRAP_HOME/snakemake/bin:$PATH"
{exec_job}
