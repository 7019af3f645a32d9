# Snakemake log handler (--log-handler-script) that jobscript.sh gives the
# Snakemake process running a group job.  That process runs the group's jobs
# in threads of its own, so their shell commands share one environment and
# nothing in it says which job a command belongs to.  What it does say, just
# before it starts a job, is the job's rule, wildcards and formatted shell
# command (a "job_info" message, then a "shellcmd" one, from the same
# thread).  Each such job becomes one file in $IOWRAP_SNAKEMAKE_JOBS_DIR:
# "COMMAND\0RULE\0WILDCARDS\0" (WILDCARDS as k=v,k2=v2), COMMAND as
# Snakemake's shell() will run it (with its prefix and suffix), the file
# named by COMMAND's SHA-256, so that bin/bash finds the one job whose
# command is exactly the one it runs without reading the others.  Two jobs
# with the same command make that file name neither (an empty RULE): no
# guess.  A file is written under a temporary name and renamed, so a
# command never matches half a record.  Never raises: a monitor must not
# fail the job.
import hashlib
import os
import threading

JOBS_DIR = os.environ.get("IOWRAP_SNAKEMAKE_JOBS_DIR", "")
# job_info seen, shellcmd not yet: per thread, as both come from one thread.
_pending = {}
_lock = threading.Lock()


def _run_command(cmd):
    """CMD as snakemake.shell.shell() joins it before running it."""
    from snakemake.shell import shell

    return " ".join((shell._process_prefix, cmd,
                     shell._process_suffix)).strip()


def _job_record(info, command):
    wildcards = ",".join(f"{k}={v}"
                         for k, v in (info.get("wildcards") or {}).items())
    fields = (command, str(info.get("name", "")), wildcards)
    return "".join(f + "\0" for f in fields).encode("utf-8", "surrogateescape")


def _old_record(name):
    try:
        with open(name, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _write_record(command, data):
    key = command.encode("utf-8", "surrogateescape")
    name = os.path.join(JOBS_DIR, hashlib.sha256(key).hexdigest())
    with _lock:
        old = _old_record(name + ".job")
        if old == data:
            return
        if old is not None:  # another job runs the same command
            data = command.encode("utf-8", "surrogateescape") + b"\0\0\0"
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
            command = _run_command(cmd)
            _write_record(command, _job_record(info, command))


def log_handler(msg):
    if not JOBS_DIR:
        return
    try:
        _handle(msg)
    except Exception:  # tracing is best effort
        pass
