"""iowrap report on traces written by the research's own eBPF / FUSE
tools (Witzke et al., Fig. 2a): '#' comment header, ", " separators,
millisecond times, type U, and the eBPF variant's path:mountroot:sbroot."""
import json
import subprocess

from conftest import IOWRAP

# Fig. 2a's header line, as the figure prints it.
HEADER = ("# eBPF and FUSE-Overlay-FS IO tracing log with: time_start, "
          "time_end, pid, utime_start, utime_end, stime_start, stime_end, "
          "inode, type, result, handle, offset, size, flags, path\n")

# (start, end, pid, inode, type, result, handle, offset, size, flags, path)
IN = "/data/work/52/f111/in.fq.gz"
OUT = "/data/work/52/f111/out,1.txt"   # a comma in the name: path is last
ROWS = [
    ("1714067937.744", "1714067937.744", 1169224, 5277, "O", 0, 35625, 0, 0,
     "0x00008000", IN + ":/data:/"),              # the eBPF path variant
    ("1714067937.745", "1714067937.745", 1169224, 5277, "R", 512, 35625,
     0, 512, "0x00008000", ""),
    ("1714067937.746", "1714067937.748", 1169224, 5277, "R", 512, 35625,
     512, 512, "0x00008000", ""),
    ("1714067937.750", "1714067937.751", 1169224, 5277, "R", 100, 35625,
     4096, 512, "0x00008000", ""),
    ("1714067937.752", "1714067937.752", 1169224, 5277, "C", 0, 35625, 0, 0,
     "0x00008000", ""),
    ("1714067937.753", "1714067937.753", 1169224, 5300, "O", 0, 35626, 0, 0,
     "0x00008241", OUT),                          # Fig. 2a: a plain path
    ("1714067937.754", "1714067937.756", 1169224, 5300, "W", 4096, 35626, 0,
     4096, "0x00008241", ""),
    ("1714067937.757", "1714067937.757", 1169224, 5300, "W", 1000, 35626,
     4096, 1000, "0x00008241", ""),
    ("1714067937.758", "1714067937.758", 1169224, 5300, "C", 0, 35626, 0, 0,
     "0x00008241", ""),
    ("1714067937.760", "1714067937.760", 1169224, 5277, "U", 0, 0, 0, 0,
     "0x00000000", IN + ":/data:/"),
]


def line(r):
    start, end, pid, inode, typ, res, handle, off, size, flags, path = r
    # Padded like the figure: ", " between fields, times with ms.
    return (f"{start}, {end}, {pid}, 27151.124, 27151.124, 27151.124, "
            f"27151.124, {inode}, {typ}, {res}, {handle}, {off}, {size}, "
            f"{flags}, {path}\n")


def write_trace(d, rows=ROWS, tail=""):
    d.mkdir(parents=True)
    (d / "node1-io.csv").write_text(
        HEADER + "# example open log entry:\n" +
        "".join(line(r) for r in rows) + tail)


def report(tmp_path, traces):
    out = tmp_path / "rep"
    p = subprocess.run([str(IOWRAP), "report", "-o", str(out), str(traces)],
                       capture_output=True, text=True)
    return p, json.loads((out / "report.json").read_text())


def test_research_csv_numbers(tmp_path):
    traces = tmp_path / "traces"
    write_trace(traces / "node1")
    p, rep = report(tmp_path, traces)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    (task,) = rep["tasks"]
    assert task["name"] == "node1"
    assert task["events"] == len(ROWS)
    assert task["start_time_s"] == 1714067937.744
    assert task["end_time_s"] == 1714067937.760
    files = {f["path"]: f for f in task["files"]}
    assert set(files) == {IN, OUT}
    rd = files[IN]["read"]
    assert (rd["ops"], rd["bytes"]) == (3, 1124)
    assert (rd["consecutive"], rd["sequential"]) == (1, 2)
    assert files[IN]["opens"] == 1
    assert files[IN]["unlinked_s"] == 1714067937.760
    # Fig. 4: first to last access of the data, over the task's runtime.
    assert files[IN]["first_access_s"] == 1714067937.745
    assert files[IN]["last_access_s"] == 1714067937.751
    assert abs(files[IN]["access_span_fraction"] - 0.006 / 0.016) < 1e-9
    wr = files[OUT]["write"]
    assert (wr["ops"], wr["bytes"]) == (2, 5096)
    assert (wr["consecutive"], wr["sequential"]) == (1, 1)
    assert task["file_read_bytes"] == 1124
    assert task["file_write_bytes"] == 5096


def test_research_csv_hostile(tmp_path):
    traces = tmp_path / "traces"
    bad = list(ROWS)
    bad[2] = ("1714067937.746", "x", 1169224, 5277, "R", 512, 35625, 512,
              512, "0x00008000", "")
    write_trace(traces / "n", rows=bad,
                tail="1714067937.8, 1714067937.8, 1, 2, 3\n"
                     "1714067937.9, 1714067937.9, 1169224, 27151.124")
    p, rep = report(tmp_path, traces)
    assert p.returncode == 0, p.stderr
    name = traces / "n" / "node1-io.csv"
    assert p.stderr.splitlines() == [
        f"iowrap: report: {name}:5: bad value (times, inode, type, result, offset "
        "or flags); row skipped",
        f"iowrap: report: {name}:13: 5 fields, want 15; row skipped",
        f"iowrap: report: {name}:14: truncated last line ignored",
    ]
    (task,) = rep["tasks"]
    assert task["events"] == len(ROWS) - 1
    files = {f["path"]: f for f in task["files"]}
    assert (files[IN]["read"]["ops"], files[IN]["read"]["bytes"]) == \
        (2, 612)
