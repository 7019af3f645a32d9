# Snakemake log handler (--log-handler-script) that jobscript.sh gives the
# Snakemake process running a group job.  That process runs the group's jobs
# in threads of its own, so their shell commands share one environment and
# nothing in it says which job a command belongs to.  What it does say, just
# before it starts a job, is the job's rule, wildcards and formatted shell
# command (a "job_info" message, then a "shellcmd" one, from the same
# thread).  Each such job becomes one file in $IOWRAP_SNAKEMAKE_JOBS_DIR:
# "COMMAND\0RULE\0WILDCARDS\0" (WILDCARDS as k=v,k2=v2), which bin/bash
# matches against the command it is asked to run.  A file is written under
# a temporary name and renamed, so a command never matches half a record.
# Never raises: a monitor must not fail the job.
import os
import threading

JOBS_DIR = os.environ.get("IOWRAP_SNAKEMAKE_JOBS_DIR", "")
# job_info seen, shellcmd not yet: per thread, as both come from one thread.
_pending = {}
_lock = threading.Lock()
_count = [0]


def _job_record(info, cmd):
    wildcards = ",".join(f"{k}={v}"
                         for k, v in (info.get("wildcards") or {}).items())
    fields = (cmd.strip(), str(info.get("name", "")), wildcards)
    return "".join(f + "\0" for f in fields).encode("utf-8", "surrogateescape")


def _write_record(data):
    with _lock:
        _count[0] += 1
        name = os.path.join(JOBS_DIR, "%d" % _count[0])
    with open(name + ".tmp", "wb") as f:
        f.write(data)
    os.rename(name + ".tmp", name + ".job")


def _handle(msg):
    level = msg.get("level")
    thread = threading.get_ident()
    if level == "job_info":
        _pending[thread] = msg
    elif level == "shellcmd" and thread in _pending:
        info = _pending.pop(thread)
        cmd = msg.get("msg")
        if isinstance(cmd, str) and cmd.strip():
            _write_record(_job_record(info, cmd))


def log_handler(msg):
    if not JOBS_DIR:
        return
    try:
        _handle(msg)
    except Exception:  # tracing is best effort
        pass
