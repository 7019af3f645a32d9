"""iowrap export --format chrome: Trace Event Format JSON (what Perfetto
and chrome://tracing import) checked event by event against the traces."""
import csv
import io
import json
import subprocess
from decimal import Decimal

from conftest import IOWRAP, run_iowrap


def rows(path):
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    return list(csv.DictReader(io.StringIO(text, newline="")))


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
    out = tmp_path / "trace.json"
    p = subprocess.run([str(IOWRAP), "export", "--format", "chrome", "-o",
                        str(out), str(traces)], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    events = json.loads(out.read_text())["traceEvents"]

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
        for e, r in zip(ops, want):
            assert e["tid"] == int(r["pid"])
            assert e["cat"] == r["type"]
            assert e["name"] == r["type"] + " " + \
                r["path"].rsplit("/", 1)[-1]
            assert e["ts"] == usec(r["time_start"])
            assert e["dur"] == usec(r["time_end"]) - usec(r["time_start"])
            assert e["args"]["path"] == r["path"]
            for key in ("result", "handle", "offset", "size"):
                if r[key] != "":
                    assert e["args"][key] == int(r[key]), (key, r)
    # The hostile name survived JSON escaping exactly.
    assert any(e["ph"] == "X" and e["args"].get("path") == str(odd)
               for e in events)


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
