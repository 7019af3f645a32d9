#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The polling alternative: a /proc poller like resource_monitor's level 1.

run(argv, interval=1.0) starts argv, reads /proc/PID/{stat,status,io} at
once and then every `interval` seconds while the process runs, and keeps
the last values seen.  A process that has exited (a zombie, or gone) is
not sampled any more: its /proc figures are then incomplete or zero
(VmHWM and io vanish with the mm), and a poller that does not own the
process cannot count on seeing it before it is reaped.  The child's exit
is noticed through a pidfd, so the run ends without waiting for the next
tick; the samples are the same as with a plain sleep loop.

run(argv, interval=None) runs argv without polling (the native baseline).

Either way the result also carries what wait4() returned for the child
(the rusage of the main process only, not of its descendants) and the
child's stdout, which is read only after the child has exited (it must be
small: it sits in the pipe until then), so that the child's final write
never has to wake a reader.

Run as a script: poller.py [-i SECONDS] -- COMMAND [ARGS...] prints the
result as JSON.
"""

import argparse
import json
import os
import select
import subprocess
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _read(path):
    with open(path, "rb") as f:
        return f.read().decode("ascii", "replace")


def sample(pid):
    """One reading of a live process, or None if it has exited."""
    try:
        stat = _read(f"/proc/{pid}/stat")
        status = _read(f"/proc/{pid}/status")
        io = _read(f"/proc/{pid}/io")
        # The process may have exited between the reads: read stat again.
        stat_after = _read(f"/proc/{pid}/stat")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    after = stat_after[stat_after.rindex(")") + 2:].split()
    if fields[0] in "ZX" or after[0] in "ZX":
        return None
    # fields[0] is field 3 (state): utime is field 14, stime field 15.
    s = {
        "utime_s": int(fields[11]) / CLK_TCK,
        "stime_s": int(fields[12]) / CLK_TCK,
    }
    for line in status.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS", "VmPeak"):
            s[key.lower() + "_kib"] = int(value.split()[0])
    if "vmhwm_kib" not in s:
        return None  # the mm is gone: it is exiting
    for line in io.splitlines():
        key, _, value = line.partition(":")
        s[key] = int(value)
    s["cpu_s"] = s["utime_s"] + s["stime_s"]
    return s


def run(argv, interval=1.0, stdin=subprocess.DEVNULL, stderr=None):
    """Runs argv; polls it every `interval` s unless interval is None."""
    t0 = time.monotonic()
    child = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE,
                             stderr=stderr)
    # Popen returns once the exec has succeeded: the first sample is of
    # the new program, at its very start.
    samples = 0
    last = None
    if interval is not None:
        pidfd = os.pidfd_open(child.pid)
        try:
            while True:
                s = sample(child.pid)
                if s is None:
                    break
                last = s
                last["t_s"] = time.monotonic() - t0
                samples += 1
                ready, _, _ = select.select([pidfd], [], [], interval)
                if ready:
                    break  # exited: the next tick would find it gone
        finally:
            os.close(pidfd)
    _, status, ru = os.wait4(child.pid, 0)
    wall = time.monotonic() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    out = child.stdout.read()
    child.stdout.close()
    return {
        "argv": list(argv),
        "returncode": child.returncode,
        "wall_s": wall,
        "interval_s": interval,
        "samples": samples,
        "last": last,
        "rusage": {
            "utime_s": ru.ru_utime,
            "stime_s": ru.ru_stime,
            "cpu_s": ru.ru_utime + ru.ru_stime,
            "maxrss_kib": ru.ru_maxrss,
        },
        "stdout": out,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-i", "--interval", type=float, default=1.0,
                    help="seconds between samples (default 1)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command")
    res = run(cmd, args.interval)
    sys.stdout.buffer.write(res.pop("stdout"))
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
