"""iowrap export --format chrome: Trace Event Format JSON (what Perfetto
and chrome://tracing import) checked event by event against the traces."""
import csv
import io
import json
import os
import subprocess
from decimal import Decimal

from conftest import IOWRAP, chrome_events, run_iowrap


def rows(path):
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def base(path):
    """report/chrome.c's basename: the path itself if it ends in '/'."""
    i = path.rfind("/")
    return path[i + 1:] if i >= 0 and path[i + 1:] else path


def usec(seconds):
    return int(Decimal(seconds) * 1000000)


def test_chrome_export_matches_the_traces(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    (work / "in.txt").write_text("hello\n" * 1000)
    odd = work / 'odd "name",\nwith\tcontrol.txt'
    traces = tmp_path / "traces"
    run_iowrap(["--task", "copy", "-l", "full", "--", "sh", "-c",
                f"cat in.txt > out.txt; cp in.txt '{odd.name}'"],
               outdir=traces / "t1", cwd=work, check=0)
    run_iowrap(["--task", "count", "-l", "full", "--", "wc", "-l",
                "out.txt"], outdir=traces / "t2", cwd=work, check=0)
    events = chrome_events(tmp_path / "trace.json", traces)

    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {1: "copy", 2: "count"}
    for tpid, task in ((1, "t1"), (2, "t2")):
        procs = rows(traces / task / "procs.csv")
        threads = {e["tid"]: e["args"]["name"] for e in events
                   if e["ph"] == "M" and e["name"] == "thread_name"
                   and e["pid"] == tpid}
        assert threads == {int(r["pid"]): r["exe"].rsplit("/", 1)[-1]
                           for r in procs}
        lifetimes = sorted((e["tid"], e["ts"], e["dur"]) for e in events
                           if e["ph"] == "X" and e["pid"] == tpid
                           and e["cat"] == "process")
        assert lifetimes == sorted(
            (int(r["pid"]), usec(r["time"]),
             usec(r["end_time"]) - usec(r["time"])) for r in procs)
        ops = [e for e in events if e["ph"] == "X" and e["pid"] == tpid
               and e["cat"] != "process"]
        want = rows(traces / task / "io.csv")
        assert len(ops) == len(want) > 0
        names = {}      # inode id -> the path it was last named by
        named_rw = 0
        for e, r in zip(ops, want):
            path = r["path"]
            if r["inode"] not in ("", "0"):
                if path:
                    names[r["inode"]] = path
                path = names.get(r["inode"], "")
            assert e["tid"] == int(r["pid"])
            assert e["cat"] == r["type"]
            assert e["name"] == r["type"] + " " + base(path)
            assert e["ts"] == usec(r["time_start"])
            assert e["dur"] == usec(r["time_end"]) - usec(r["time_start"])
            assert e["args"]["path"] == path
            named_rw += r["type"] in "RW" and r["path"] == "" and path != ""
            for key in ("result", "handle", "offset", "size"):
                if r[key] != "":
                    assert e["args"][key] == int(r[key]), (key, r)
        # io.csv's reads and writes carry no path: named after the open.
        assert named_rw > 0
    # Exactly: a process_name per task, a thread_name per process, a
    # lifetime slice per ended process, a slice per io.csv row.
    procs = [r for t in ("t1", "t2") for r in rows(traces / t / "procs.csv")]
    ops = sum(len(rows(traces / t / "io.csv")) for t in ("t1", "t2"))
    ended = sum(1 for r in procs if r["end_time"] != "")
    assert len(events) == 2 + len(procs) + ended + ops
    assert sum(e["ph"] == "M" for e in events) == 2 + len(procs)
    # The hostile name survived JSON escaping exactly.
    assert any(e["ph"] == "X" and e["args"].get("path") == str(odd)
               for e in events)


def test_chrome_export_names_thread_tracks(tmp_path):
    """io.csv's rows of a thread other than a process's first carry its
    tid: its track is named after its process (threads.csv) and has its
    lifetime, so that no operation lands on a track without a name."""
    work = tmp_path / "w"
    work.mkdir()
    script = ("import threading\n"
              "def work(i):\n"
              "    open(f'out{i}', 'w').write('x' * 1000)\n"
              "ts = [threading.Thread(target=work, args=(i,)) "
              "for i in range(3)]\n"
              "[t.start() for t in ts]; [t.join() for t in ts]\n")
    traces = tmp_path / "traces"
    run_iowrap(["-l", "full", "--", "/usr/bin/python3", "-c", script],
               outdir=traces / "t", cwd=work, check=0)
    events = chrome_events(tmp_path / "trace.json", traces)
    threads = rows(traces / "t" / "threads.csv")
    assert len(threads) == 3
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    for r in threads:
        assert names[int(r["tid"])] == f"thread of {r['pid']}"
    lifetimes = sorted((e["tid"], e["ts"], e["dur"], e["args"]["pid"])
                       for e in events
                       if e["ph"] == "X" and e["cat"] == "thread")
    assert lifetimes == sorted(
        (int(r["tid"]), usec(r["time"]),
         usec(r["end_time"]) - usec(r["time"]), int(r["pid"]))
        for r in threads)
    ops = [e for e in events if e["ph"] == "X"
           and e["cat"] not in ("process", "thread")]
    assert {e["tid"] for e in ops} <= set(names)
    assert any(e["tid"] == int(r["tid"]) for e in ops for r in threads)


def test_chrome_export_bad_input(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    p = subprocess.run([str(IOWRAP), "export", "--format", "chrome",
                        str(empty)], capture_output=True, text=True)
    assert p.returncode == 3
    assert p.stderr.splitlines() == [
        f"iowrap: report: {empty}: no trace directory (summary.json or "
        "procs.csv) at or below it",
        "iowrap: export: no readable trace found"]
    assert p.stdout == ""
    p = subprocess.run([str(IOWRAP), "export", "--format", "perfetto",
                        str(empty)], capture_output=True, text=True)
    assert p.returncode == 2
    assert "--format must be csv or chrome" in p.stderr


def test_chrome_export_invalid_utf8_path(tmp_path):
    """A name that is not UTF-8: each bad byte becomes U+FFFD (json.c)."""
    work = tmp_path / "w"
    work.mkdir()
    bad = os.fsencode(str(work)) + b"/bad\xff\xfe.txt"
    with open(bad, "wb") as f:
        f.write(b"x" * 100)
    run_iowrap(["-l", "full", "--", "cat", bad.decode("utf-8",
                                                      "surrogateescape")],
               outdir=tmp_path / "t", cwd=work, check=0)
    p = subprocess.run([str(IOWRAP), "export", "--format", "chrome",
                        str(tmp_path / "t")], capture_output=True)
    assert p.returncode == 0, p.stderr
    p.stdout.decode("utf-8")           # strictly valid UTF-8
    events = json.loads(p.stdout)["traceEvents"]
    want = str(work) + "/bad\ufffd\ufffd.txt"
    reads = [e for e in events if e["ph"] == "X" and e.get("cat") == "R"
             and e["args"]["path"] == want]
    assert reads and reads[0]["name"] == "R bad\ufffd\ufffd.txt"
    assert sum(e["args"]["result"] for e in reads) == 100


def write_synthetic(d, n):
    """A trace of n reads (procs.csv and io.csv as iowrap writes them)."""
    d.mkdir()
    (d / "procs.csv").write_text(
        "time,end_time,pid,ppid,exe\n1.000000,9.000000,100,1,/bin/cat\n")
    with open(d / "io.csv", "w") as f:
        f.write("time_start,time_end,pid,utime_start,utime_end,"
                "stime_start,stime_end,inode,type,result,handle,offset,"
                "size,flags,path,path2\n")
        f.writelines(f"1.{i:06d},1.{i:06d},100,0,0,0,0,1,R,4096,1,"
                     f"{i * 4096},4096,0x00000000,/d/f,\n" for i in range(n))


def export_maxrss(trace, out):
    """Peak RSS (KiB) of one export run, from wait4's rusage."""
    pid = os.spawnv(os.P_NOWAIT, str(IOWRAP), [
        str(IOWRAP), "export", "--format", "chrome", "-o", str(out),
        str(trace)])
    _, status, usage = os.wait4(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_maxrss


def test_chrome_export_memory_does_not_grow_with_events(tmp_path):
    """10,000 and 800,000 events (a 59 MB io.csv): peak RSS within
    12 MiB (before csvin handed read pages back it grew by the file)."""
    sizes = {}
    for n in (10000, 800000):
        write_synthetic(tmp_path / f"t{n}", n)
        out = tmp_path / f"t{n}.json"
        sizes[n] = export_maxrss(tmp_path / f"t{n}", out)
        with open(out) as f:
            events = json.load(f)["traceEvents"]
        assert len(events) == 3 + n
        assert events[-1]["ts"] == 1000000 + n - 1
        assert events[-1]["args"]["offset"] == (n - 1) * 4096
        del events
    assert (tmp_path / "t800000" / "io.csv").stat().st_size > 50 << 20
    assert sizes[800000] - sizes[10000] < 12 << 10, sizes


def test_export_into_a_file_it_reads(tmp_path):
    """-o FILE is written beside FILE and renamed over it once whole:
    exported into the trace's own procs.csv, the table is read before it
    is replaced.  Before, FILE was opened with O_TRUNC first: the export
    read an empty procs.csv and wrote nothing, exit 0.  A directory at
    FILE is refused before anything is read, and no temporary file is
    left."""
    t = run_iowrap(["sh", "-c", "true"], outdir=tmp_path / "t")
    procs = rows(t.dir / "procs.csv")
    p = subprocess.run([str(IOWRAP), "export", "--format", "csv", "--table",
                        "procs", "-o", "procs.csv", "."], cwd=t.dir,
                       capture_output=True, text=True)
    assert (p.returncode, p.stderr) == (0, "")
    exported = rows(t.dir / "procs.csv")
    assert [r["pid"] for r in exported] == [r["pid"] for r in procs]
    assert all(r["trace_dir"] == "." for r in exported)
    (tmp_path / "d").mkdir()
    p = subprocess.run([str(IOWRAP), "export", "--format", "chrome", "-o",
                        str(tmp_path / "d"), str(t.dir)],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert p.stderr == (f"iowrap: export: cannot create {tmp_path / 'd'}: "
                        "Is a directory; choose another -o FILE\n")
    p = subprocess.run([str(IOWRAP), "export", "--format", "chrome", "-o",
                        str(tmp_path / "missing" / "x.json"), str(t.dir)],
                       capture_output=True, text=True)
    assert (p.returncode, p.stderr) == (1, (
        f"iowrap: export: cannot create {tmp_path / 'missing' / 'x.json'}: "
        "No such file or directory; choose another -o FILE\n"))
    assert sorted(os.listdir(tmp_path)) == ["d", "t"]
    assert sorted(os.listdir(t.dir)) == ["procs.csv", "summary.json"]
