"""A file's identity across traces: files.csv's birth column and
summary.json's host.boot_id (docs/trace-format.md)."""
import csv
import io
import json
import os
import re
import subprocess
from pathlib import Path

from conftest import IOWRAP


def files_rows(trace):
    data = (trace / "files.csv").read_bytes().decode("utf-8",
                                                     "surrogateescape")
    return list(csv.DictReader(io.StringIO(data, newline="")))


def row_of(trace, path):
    (row,) = [r for r in files_rows(trace) if r["paths"] == str(path)]
    return row


def statx_birth(path):
    """coreutils' statx birth time, "SEC.NNNNNNNNN": %W gives the
    seconds, %w the nanoseconds after them."""
    out = subprocess.run(["stat", "--printf", "%W\n%w", str(path)],
                         capture_output=True, text=True, check=True).stdout
    sec, human = out.split("\n")
    frac = re.search(r"\.(\d{9}) ", human)
    assert sec != "0" and frac, out
    return f"{sec}.{frac.group(1)}"


def test_files_csv_birth_is_statx_birth_time_and_summary_has_boot_id(
        tmp_path):
    """The birth column is the file's statx birth time to the nanosecond
    (python3 < 3.12 has no st_birthtime: coreutils' stat is the
    reference), the last column; host.boot_id is the kernel's."""
    out = tmp_path / "out.txt"
    trace = tmp_path / "t"
    p = subprocess.run([str(IOWRAP), "--level", "files", "-o", str(trace),
                        "--", "sh", "-c", f"echo hi > {out}; cat {out}"],
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    header = (trace / "files.csv").read_text().split("\n")[0].split(",")
    assert header[-2:] == ["paths", "birth"]
    row = row_of(trace, out)
    st = os.stat(out)
    assert (row["dev"], row["ino"]) == (
        f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}", str(st.st_ino))
    assert row["birth"] == statx_birth(out)
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    summary = json.loads((trace / "summary.json").read_text())
    assert summary["host"]["boot_id"] == boot
