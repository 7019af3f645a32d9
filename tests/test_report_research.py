"""iowrap report on traces written by the research's own eBPF / FUSE
tools (Witzke et al., Fig. 2a): '#' comment header, ", " separators,
millisecond times, type U, and the eBPF variant's path:mountroot:sbroot."""
import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

from conftest import IOWRAP, chrome_events

FIXTURE = Path(__file__).resolve().parent / "data" / "research-ebpf"

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
        f"iowrap: report: {name}:5: bad value (times, pid, inode, type, result, "
        "handle, offset, size or flags); row skipped",
        f"iowrap: report: {name}:13: 5 fields, want 15; row skipped",
        f"iowrap: report: {name}:14: truncated last line ignored",
    ]
    (task,) = rep["tasks"]
    assert task["events"] == len(ROWS) - 1
    files = {f["path"]: f for f in task["files"]}
    assert (files[IN]["read"]["ops"], files[IN]["read"]["bytes"]) == \
        (2, 612)


# The fixture (tests/data/research-ebpf, provenance in tests/data/README.md).
WORK = "/home/witzke/nf-rnaseq/outdir/work/52/f11191010952840e07774a95bcd36e"
FQ = WORK + "/WT_REP2_1_val_1.fq.gz"
ZIP = WORK + "/WT_REP2_1_val_1_fastqc.zip"


def test_research_fixture_report_json(tmp_path):
    p, rep = report(tmp_path, FIXTURE)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    (task,) = rep["tasks"]
    assert task["name"] == "node1"
    assert task["events"] == 10
    assert task["problems"]["io_csv"] == {
        "missing": False, "rows": 10, "rows_skipped": 0, "truncated": False}
    # ms times read exactly: the task runs from the first row to the last.
    assert task["start_time_s"] == 1714067937.744
    assert task["end_time_s"] == 1714067937.760
    assert task["wall_time_s"] == 0.016
    files = {f["path"]: f for f in task["files"]}
    assert set(files) == {FQ, ZIP}     # :/home:/ cut off
    fq, zp = files[FQ], files[ZIP]
    assert (fq["inode"], zp["inode"]) == (5277, 5278)
    assert fq["mount_point"] == zp["mount_point"] == "/home"
    # Fig. 2a's read (offset 1034), then 1546 (consecutive), then 4096.
    assert fq["read"] == {
        "ops": 3, "bytes": 1124, "time_s": 0.003,
        "first_time_s": 1714067937.745, "last_time_s": 1714067937.751,
        "max_byte": 4195, "consecutive": 1, "sequential": 2, "random": 0,
        "pattern": "sequential"}
    assert fq["write"]["ops"] == 0
    assert (fq["opens"], fq["unlinked_s"]) == (1, 1714067937.760)
    assert zp["write"]["ops"] == 2 and zp["write"]["bytes"] == 5096
    assert zp["created_s"] == 1714067937.753    # 0x8241: O_CREAT|O_TRUNC
    # Fig. 4: first to last data access over the task's runtime.
    assert (fq["access_span_s"], fq["access_span_fraction"]) == (0.006,
                                                                 0.375)
    assert (zp["access_span_s"], zp["access_span_fraction"]) == (0.003,
                                                                 0.1875)
    assert task["file_read_bytes"] == 1124
    assert task["file_write_bytes"] == 5096


def test_research_fixture_text(tmp_path):
    p = subprocess.run([str(IOWRAP), "report", "--text", "-o",
                        str(tmp_path / "rep"), str(FIXTURE)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "Workflow: 1 tasks, 0.016 s wall, 0.000 s CPU, 2 files"
    assert lines[1] == ("  files: 1124 bytes read, 5096 bytes written; "
                        "pipes/sockets/exec: 0 read, 0 written")
    row = [ln.split() for ln in lines if ln.startswith("  node1")]
    assert row[0] == ["node1", "0.016", "0.000", "0", "1124", "5096"]
    tops = [ln.split() for ln in lines if ln.rstrip().endswith((FQ, ZIP))]
    assert ["0", "5096", "0", "1", ZIP] in tops
    assert ["1124", "0", "1", "0", FQ] in tops


def fixture_copy(tmp_path, edit):
    d = tmp_path / "t" / "node1"
    shutil.copytree(FIXTURE / "node1", d)
    f = d / "ebpf-io.csv"
    f.write_text(edit(f.read_text()))
    return f


def test_research_hostile_paths(tmp_path):
    """A ':' inside the path itself, a path without the mount suffixes,
    padding blanks everywhere, a cut last line: warned with file and line,
    and read as far as the rows allow."""
    def edit(text):
        lines = text.splitlines(keepends=True)
        # line 2: a ':' in the file name; split at the last two ':'.
        lines[1] = lines[1].replace("val_1.fq.gz:/home:/",
                                    "val_1:x.fq.gz:/home:/")
        # line 3: fields padded to a width (the tool's padding).
        lines[2] = lines[2].replace(", 512, 35625, 1034,",
                                    ",    512,  35625,   1034 ,")
        # line 7: blanks after the path, before the mount suffix.
        lines[6] = lines[6].replace("fastqc.zip:/home:/",
                                    "fastqc.zip  :/home:/")
        # line 11: a plain path holding ':' (no suffix): kept whole.
        lines[10] = lines[10].replace("val_1.fq.gz:/home:/",
                                      "val_1:x.fq.gz")
        return "".join(lines) + "1714067937.761, 1714067937.761, 11"
    f = fixture_copy(tmp_path, edit)
    p, rep = report(tmp_path, f.parent.parent)
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines() == [
        f"iowrap: report: {f}:2: path holds ':' itself; split at the last "
        "two ':' (a mount root with ':' would be misread)",
        f"iowrap: report: {f}:7: blanks before :mountroot trimmed (padding, "
        "or part of the name: cannot tell)",
        f"iowrap: report: {f}:11: path holds ':' but no :mountroot:sbroot "
        "suffix; kept whole",
        f"iowrap: report: {f}:12: truncated last line ignored",
    ]
    (task,) = rep["tasks"]
    assert task["events"] == 10
    assert task["problems"]["io_csv"]["truncated"] is True
    files = {f["path"]: f for f in task["files"]}
    fq = files[WORK + "/WT_REP2_1_val_1:x.fq.gz"]
    assert (fq["read"]["ops"], fq["read"]["bytes"]) == (3, 1124)
    assert fq["read"]["consecutive"] == 1    # the padded 1034 was read
    assert fq["unlinked_s"] == 1714067937.760
    assert files[ZIP]["write"]["bytes"] == 5096


def test_research_many_odd_paths_are_counted(tmp_path):
    """Past five warnings of a kind per file, the rest are counted."""
    row = ("1714067937.744, 1714067937.744, 1, 0, 0, 0, 0, {i}, O, 0, {i}, "
           "0, 0, 0x00008000, /d/a:{i}\n")
    f = fixture_copy(tmp_path, lambda text: text + "".join(
        row.format(i=100 + i) for i in range(8)))
    p, _ = report(tmp_path, f.parent.parent)
    assert p.returncode == 0, p.stderr
    warned = [ln.split(": ")[2] for ln in p.stderr.splitlines()]
    assert warned == [f"{f}:{n}" for n in range(12, 17)] + [
        f"{f}"]
    assert p.stderr.splitlines()[-1].endswith(
        ": 3 more rows with ':' in the path")


def test_research_export_csv_and_chrome(tmp_path):
    out = tmp_path / "all.csv"
    p = subprocess.run([str(IOWRAP), "export", "--format", "csv", "-o",
                        str(out), str(FIXTURE)], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(), newline="")))
    assert len(rows) == 10
    assert [r["type"] for r in rows] == ["O", "R", "R", "R", "C", "O", "W",
                                         "W", "C", "U"]
    assert rows[0]["path"] == FQ and rows[5]["path"] == ZIP
    assert rows[1]["path"] == ""      # reads carry no path (Sect. IV-A)
    assert rows[1]["offset"] == "1034" and rows[1]["time_start"] == \
        "1714067937.745"
    assert rows[0]["task_name"] == "node1" and rows[0]["path2"] == ""
    assert rows[0]["utime_start"] == "27151.124"

    events = chrome_events(tmp_path / "trace.json", FIXTURE)
    meta = [e for e in events if e["ph"] == "M"]
    assert meta == [
        {"ph": "M", "pid": 1, "tid": 0, "name": "process_name",
         "args": {"name": "node1"}},
        {"ph": "M", "pid": 1, "tid": 1169224, "name": "thread_name",
         "args": {"name": "pid 1169224"}}]
    ops = [e for e in events if e["ph"] == "X"]
    assert len(ops) == len(events) - 2 == 10
    # ms -> us exactly; a read is named after the file its open named.
    assert ops[1] == {
        "ph": "X", "pid": 1, "tid": 1169224,
        "name": "R WT_REP2_1_val_1.fq.gz", "cat": "R",
        "ts": 1714067937745000, "dur": 0,
        "args": {"path": FQ, "offset": 1034, "size": 512, "result": 512,
                 "handle": 35625}}
    assert (ops[2]["ts"], ops[2]["dur"]) == (1714067937746000, 2000)
    assert ops[9]["name"] == "U WT_REP2_1_val_1.fq.gz"
    assert ops[9]["args"]["mount_root"] == "/home"
    assert [e["args"]["path"] for e in ops].count(ZIP) == 4
