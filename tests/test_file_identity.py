"""Files joined by identity: files.csv's birth column and summary.json's
host.boot_id, and the report joining a read to the version another task
wrote when the file was hard-linked or renamed outside every trace
(Nextflow's stageInMode 'link', Snakemake's shadow outputs, an admin's
mv), where no name leads to it (docs/report-format.md, "File identity")."""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import IOWRAP
from test_report import (append_steps, flow_edges, report, run_tasks,
                         staged_with_a_pair, task, written_as)


def files_rows(trace):
    data = (trace / "files.csv").read_bytes().decode("utf-8",
                                                     "surrogateescape")
    return list(csv.DictReader(io.StringIO(data, newline="")))


def write_files_rows(trace, rows, fields):
    out = io.StringIO(newline="")
    w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r[k] for k in fields})
    (trace / "files.csv").write_bytes(
        out.getvalue().encode("utf-8", "surrogateescape"))


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


def staged_workflow(tmp_path, move):
    """T1 writes out.txt; outside the traces, move(out.txt, staged/in.txt)
    (a hard link or a rename); T2 reads staged/in.txt into res.txt."""
    d = tmp_path / "data"
    (d / "staged").mkdir(parents=True)
    traces = tmp_path / "traces"
    run_tasks(traces, [{"T1": f"echo hello > {d}/out.txt"}])
    move(d / "out.txt", d / "staged" / "in.txt")
    run_tasks(traces, [{"T2": f"cat {d}/staged/in.txt > {d}/res.txt"}])
    return d, traces


def joined(rep):
    return (flow_edges(rep) == {("T1", "T2", "in.txt", 6)} and
            written_as(rep) == {("T1", "T2", "in.txt", "out.txt")})


def input_names(rep):
    """The files the WCP takes as workflow inputs, by last name."""
    paths = {f["id"]: Path(f["path"]).name for f in rep["files"]}
    return {paths[v["file"]] for v in rep["wcp"]["vertices"]
            if v["kind"] == "input"}


def transfer_steps(rep):
    """WCP edges between written versions: (writer, task, mutation)."""
    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    vs = {v["id"]: v for v in rep["wcp"]["vertices"]}
    return {(names[vs[e["from"]]["task"]], names[e["task"]], e["mutation"])
            for e in rep["wcp"]["edges"]
            if vs[e["from"]]["kind"] == "written"}


@pytest.mark.parametrize("move", [os.link, os.rename],
                         ids=["link", "rename"])
def test_a_file_moved_outside_the_traces_is_joined_by_identity(tmp_path,
                                                               move):
    """No name leads from staged/in.txt to out.txt: before, T2's read was
    a workflow input.  The file's identity joins it to T1's version."""
    d, traces = staged_workflow(tmp_path, move)
    _, err, rep = report(traces / "T1", traces / "T2", out=tmp_path / "r")
    assert joined(rep), (flow_edges(rep), err)
    assert input_names(rep) == set()
    assert transfer_steps(rep) == {("T1", "T2", "TRANSFER")}


def join_after(tmp_path, edit):
    """The link workflow joins; after edit(T1's out.txt row, T2's in.txt
    row, T2's summary), it is reported again: whether it still joins."""
    d, traces = staged_workflow(tmp_path, os.link)
    _, _, rep = report(traces / "T1", traces / "T2", out=tmp_path / "r1")
    assert joined(rep)
    rows = files_rows(traces / "T2")
    fields = list(rows[0].keys())
    (mine,) = [r for r in rows if r["paths"] == f"{d}/staged/in.txt"]
    summary = json.loads((traces / "T2" / "summary.json").read_text())
    fields = edit(row_of(traces / "T1", d / "out.txt"), mine, summary,
                  fields) or fields
    write_files_rows(traces / "T2", rows, fields)
    (traces / "T2" / "summary.json").write_text(json.dumps(summary))
    _, err, rep = report(traces / "T1", traces / "T2", out=tmp_path / "r2")
    return rep, err


def test_same_dev_and_inode_but_another_birth_is_another_file(tmp_path):
    """An inode number reused by a new file: its birth differs by 1 ns,
    and the read stays a workflow input."""
    def reborn(t1_row, row, summary, fields):
        assert (row["dev"], row["ino"], row["birth"]) == (
            t1_row["dev"], t1_row["ino"], t1_row["birth"])
        sec, ns = row["birth"].split(".")
        ns = int(ns) + 1 if ns != "999999999" else int(ns) - 1
        row["birth"] = f"{sec}.{ns:09d}"

    rep, _ = join_after(tmp_path, reborn)
    assert flow_edges(rep) == set() and input_names(rep) == {"in.txt"}


def test_a_new_file_under_a_reused_inode_number_is_not_joined(tmp_path):
    """T1's out.txt is removed and ext4 gives its inode number to the next
    file made (after a tick of the birth clock): the same dev and ino, a
    later birth, so T2's read of it is a workflow input, not T1's."""
    d = tmp_path / "data"
    (d / "staged").mkdir(parents=True)
    traces = tmp_path / "traces"
    run_tasks(traces, [{"T1": f"echo hello > {d}/out.txt"}])
    old = os.stat(d / "out.txt")
    time.sleep(0.05)
    os.unlink(d / "out.txt")
    made = []
    for i in range(1000):
        p = d / "staged" / f"c{i}"
        p.write_text("world\n")
        st = os.stat(p)
        if (st.st_dev, st.st_ino) == (old.st_dev, old.st_ino):
            p.rename(d / "staged" / "in.txt")
            break
        made.append(p)
    else:
        fstype = row_of(traces / "T1", d / "out.txt")["fstype"]
        pytest.skip(f"{fstype} gave the removed file's inode number to none "
                    f"of 1000 new files: the test needs a file system that "
                    f"reuses it at once (tmpfs never does: it numbers inodes "
                    f"from a counter); put --basetemp on ext4")
    for p in made:
        p.unlink()
    run_tasks(traces, [{"T2": f"cat {d}/staged/in.txt > {d}/res.txt"}])
    was = row_of(traces / "T1", d / "out.txt")
    now = row_of(traces / "T2", d / "staged" / "in.txt")
    assert (now["dev"], now["ino"]) == (was["dev"], was["ino"])
    assert was["birth"] and now["birth"] and now["birth"] != was["birth"]
    _, err, rep = report(traces / "T1", traces / "T2", out=tmp_path / "r")
    assert flow_edges(rep) == set() and input_names(rep) == {"in.txt"}


def test_no_birth_no_join(tmp_path):
    """Same device and inode number, no birth time (a file system whose
    birth times do not last): no guessing."""
    def no_birth(t1_row, row, summary, fields):
        row["birth"] = ""

    rep, _ = join_after(tmp_path, no_birth)
    assert flow_edges(rep) == set() and input_names(rep) == {"in.txt"}


def test_another_boot_is_another_file(tmp_path):
    """A trace of another boot (or host): same device, inode number and
    birth, but another boot id: no join."""
    def other_boot(t1_row, row, summary, fields):
        b = summary["host"]["boot_id"]
        summary["host"]["boot_id"] = ("0" if b[0] != "0" else "1") + b[1:]

    rep, _ = join_after(tmp_path, other_boot)
    assert flow_edges(rep) == set() and input_names(rep) == {"in.txt"}


def test_an_older_trace_without_birth_or_boot_id_still_loads(tmp_path):
    """files.csv without the birth column and summary.json without
    host.boot_id (traces before them): every row read, no warning, no
    join by identity."""
    def older(t1_row, row, summary, fields):
        del summary["host"]["boot_id"]
        return [f for f in fields if f != "birth"]

    rep, err = join_after(tmp_path, older)
    assert "T2" not in err and "files.csv" not in err, err
    (t2,) = [t for t in rep["tasks"] if Path(t["dir"]).name == "T2"]
    assert t2["problems"]["files_csv"]["rows_skipped"] == 0
    assert t2["problems"]["files_csv"]["rows"] == len(
        files_rows(Path(t2["dir"])))
    assert flow_edges(rep) == set() and input_names(rep) == {"in.txt"}


@pytest.mark.parametrize("birth", ["1.5", "x", "1.0000000001",
                                   "1.000000000x", "0.000000000",
                                   "99999999999.000000000"])
def test_a_bad_birth_cell_drops_only_the_identity(tmp_path, birth):
    """A birth that is not SEC.NNNNNNNNN (nine decimals, not 0, ten
    digits of seconds at most) is named in a warning and read as no
    birth: no join by identity, but the row stays, its sizes and mount
    with it."""
    cells = {}

    def bad(t1_row, row, summary, fields):
        row["birth"] = birth
        cells.update(row)

    rep, err = join_after(tmp_path, bad)
    assert "column dev/ino/birth; no identity" in err, err
    assert "row skipped" not in err, err
    (t2,) = [t for t in rep["tasks"] if Path(t["dir"]).name == "T2"]
    assert t2["problems"]["files_csv"]["rows_skipped"] == 0
    (f,) = [f for f in t2["files"] if f["path"] == cells["paths"]]
    assert (f["size_first_open"], f["size_last_close"], f["mount_point"],
            f["fstype"]) == (6, 6, cells["mount_point"], cells["fstype"])
    assert flow_edges(rep) == set() and input_names(rep) == {"in.txt"}


def same_identity(traces, a, b):
    """Task a's record of one file and task b's of another name: the
    same dev, ino and birth (one file: the join by identity applies)."""
    ra, rb = row_of(traces / a[0], a[1]), row_of(traces / b[0], b[1])
    return ra["birth"] != "" and all(ra[k] == rb[k]
                                     for k in ("dev", "ino", "birth"))


def test_a_read_before_the_file_was_written_is_not_joined(tmp_path):
    """Outside the traces out.txt is made and linked to staged/in.txt; T2
    reads staged/in.txt; then T1 overwrites out.txt in place.  The same
    file, but T1's version began after the read: the read is an input
    (the time rule), not T1 -> T2."""
    d = tmp_path / "data"
    (d / "staged").mkdir(parents=True)
    (d / "out.txt").write_text("orig\n")
    os.link(d / "out.txt", d / "staged" / "in.txt")
    traces = tmp_path / "traces"
    run_tasks(traces, [{"T2": f"cat {d}/staged/in.txt > {d}/res.txt"},
                       {"T1": f"echo hello > {d}/out.txt"}])
    assert same_identity(traces, ("T1", d / "out.txt"),
                         ("T2", d / "staged" / "in.txt"))
    _, err, rep = report(traces / "T1", traces / "T2", out=tmp_path / "r")
    assert flow_edges(rep) == set(), err
    assert input_names(rep) == {"in.txt"}


def test_the_latest_version_of_the_file_is_joined(tmp_path):
    """T1 writes out.txt, T2 overwrites it in place (the same file),
    outside the traces it is renamed to staged/in.txt, T3 reads it: T3
    read T2's 7 bytes, the latest version by identity, not T1's."""
    d = tmp_path / "data"
    (d / "staged").mkdir(parents=True)
    traces = tmp_path / "traces"
    run_tasks(traces, [{"T1": f"echo hello > {d}/out.txt"},
                       {"T2": f"echo world2 > {d}/out.txt"}])
    os.rename(d / "out.txt", d / "staged" / "in.txt")
    run_tasks(traces, [{"T3": f"cat {d}/staged/in.txt > {d}/res.txt"}])
    assert same_identity(traces, ("T1", d / "out.txt"),
                         ("T2", d / "out.txt"))
    _, err, rep = report(*(traces / t for t in ("T1", "T2", "T3")),
                         out=tmp_path / "r")
    assert flow_edges(rep) == {("T2", "T3", "in.txt", 7)}, err
    assert written_as(rep) == {("T2", "T3", "in.txt", "out.txt")}
    assert transfer_steps(rep) == {("T2", "T3", "TRANSFER")}


def in_place_through_a_link(tmp_path):
    """T1 writes out.txt; outside the traces it is linked to
    staged/in.txt; T2 overwrites staged/in.txt in place (O_TRUNC, the
    same inode); T3 reads out.txt: the 6 bytes it read are T2's."""
    d = tmp_path / "data"
    (d / "staged").mkdir(parents=True)
    traces = tmp_path / "traces"
    run_tasks(traces, [{"T1": f"echo hello > {d}/out.txt"}])
    os.link(d / "out.txt", d / "staged" / "in.txt")
    run_tasks(traces, [{"T2": f"echo newer > {d}/staged/in.txt"},
                       {"T3": f"cat {d}/out.txt > {d}/res.txt"}])
    assert (d / "res.txt").read_text() == "newer\n"
    assert same_identity(traces, ("T2", d / "staged" / "in.txt"),
                         ("T3", d / "out.txt"))
    return d, traces


def test_a_write_in_place_through_another_name_is_read(tmp_path):
    """out.txt's name finds T1's version, of the file T3 read; the file
    has a later one, T2's, written through its other name: T2 -> T3 on
    out.txt, written as in.txt (before: T1 -> T3, names first)."""
    d, traces = in_place_through_a_link(tmp_path)
    _, err, rep = report(*(traces / t for t in ("T1", "T2", "T3")),
                         out=tmp_path / "r")
    assert flow_edges(rep) == {("T2", "T3", "out.txt", 6)}, err
    assert written_as(rep) == {("T2", "T3", "out.txt", "in.txt")}
    assert transfer_steps(rep) == {("T2", "T3", "TRANSFER")}
    assert input_names(rep) == set()


def edit_trace(trace, path, row_edit=None, summary_edit=None):
    """Applies row_edit to trace's files.csv row of path, summary_edit to
    its summary.json."""
    rows = files_rows(trace)
    fields = list(rows[0].keys())
    if row_edit:
        row_edit(next(r for r in rows if r["paths"] == str(path)))
    write_files_rows(trace, rows, fields)
    summary = json.loads((trace / "summary.json").read_text())
    if summary_edit:
        summary_edit(summary)
    (trace / "summary.json").write_text(json.dumps(summary))


def other_boot(summary):
    b = summary["host"]["boot_id"]
    summary["host"]["boot_id"] = ("0" if b[0] != "0" else "1") + b[1:]


def no_birth(row):
    row["birth"] = ""


def other_device(row):
    major, minor = row["dev"].split(":")
    row["dev"] = f"{int(major) + 1}:{minor}"


@pytest.mark.parametrize("edit", [{"summary_edit": other_boot},
                                  {"row_edit": no_birth},
                                  {"row_edit": other_device}],
                         ids=["other-boot", "no-birth", "other-device"])
def test_where_the_file_is_not_known_names_decide(tmp_path, edit):
    """The in-place workflow with T3's trace of another boot (the same
    dev, ino and birth, but a device number is the boot's: not known to
    be another file, nor the same), without T3's birth of out.txt, or
    with its out.txt on another device under the same inode number and
    birth (its file system mounted again elsewhere: test_a_file_system_
    mounted_again_keeps_its_names; other-device was an input, T3's dev
    deciding the file was another, on d826f24): the names' version,
    T1 -> T3, not an input."""
    d, traces = in_place_through_a_link(tmp_path)
    edit_trace(traces / "T3", d / "out.txt", **edit)
    _, err, rep = report(*(traces / t for t in ("T1", "T2", "T3")),
                         out=tmp_path / "r")
    assert flow_edges(rep) == {("T1", "T3", "out.txt", 6)}, err
    assert written_as(rep) == set() and input_names(rep) == set()
    assert transfer_steps(rep) == {("T1", "T3", "TRANSFER")}


def flows_by_path(rep, d):
    """Data-flow edges as (writer, reader, file, written_as), paths
    relative to d (written_as None where the reader's name)."""
    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    paths = {f["id"]: str(Path(f["path"]).relative_to(d))
             for f in rep["files"] if f["path"].startswith(f"{d}/")}
    return {(names[e["writer"]], names[e["reader"]], paths[e["file"]],
             paths[e["written_as"]] if "written_as" in e else None)
            for e in rep["data_flow"]["edges"]}


def test_a_file_renamed_onto_a_written_name_outside_the_traces(tmp_path):
    """T1 writes out; T2 writes shadow/out; outside the traces shadow/out
    is renamed onto out (Snakemake's shadow rule); T3 reads out.  The
    name finds T1's version, of a file that is gone: T3 read T2's
    (before: T1 -> T3)."""
    d = tmp_path / "data"
    (d / "shadow").mkdir(parents=True)
    traces = tmp_path / "traces"
    run_tasks(traces, [{"T1": f"echo old > {d}/out"},
                       {"T2": f"echo shadow > {d}/shadow/out"}])
    os.rename(d / "shadow" / "out", d / "out")
    run_tasks(traces, [{"T3": f"cat {d}/out > {d}/res"}])
    _, err, rep = report(*(traces / t for t in ("T1", "T2", "T3")),
                         out=tmp_path / "r")
    assert flows_by_path(rep, d) == {("T2", "T3", "out", "shadow/out")}, err
    assert transfer_steps(rep) == {("T2", "T3", "TRANSFER")}
    assert input_names(rep) == set()


def wait_for(path, proc):
    for _ in range(6000):
        if path.exists() or proc.poll() is not None:
            return
        time.sleep(0.01)


def test_a_write_to_a_file_renamed_over_is_not_to_the_new_one(tmp_path):
    """T1 writes out, T0 writes new; Tw opens out to append, and after
    Tm's `mv new out` appends to what it opened, T1's file, now nameless;
    T3 reads out: T0's file.  Tw's version, begun after the rename, is
    under the name out but of another file (before: Tw -> T3;
    docs/report-format.md had it as a limitation)."""
    d = tmp_path / "data"
    d.mkdir()
    traces = tmp_path / "traces"
    run_tasks(traces, [{"T1": f"echo old > {d}/out"},
                       {"T0": f"echo new > {d}/new"}])
    # No O_CREAT: an appender's open that may create begins its version.
    tw = task(traces, "Tw", f"cd {d} && /usr/bin/python3 -c '"
                            "import os, time\n"
                            "fd = os.open(\"out\", os.O_WRONLY | os.O_APPEND)\n"
                            "open(\"ready\", \"w\").close()\n"
                            "while not os.path.exists(\"go\"): time.sleep(0.01)\n"
                            "os.write(fd, b\"late\\n\")'")
    wait_for(d / "ready", tw)
    run_tasks(traces, [{"Tm": f"mv {d}/new {d}/out"}])
    (d / "go").touch()
    _, err = tw.communicate(timeout=120)
    assert tw.returncode == 0, err
    run_tasks(traces, [{"T3": f"cat {d}/out > {d}/res"}])
    assert (d / "res").read_text() == "new\n"
    assert (d / "ready").exists() and not (d / "new").exists()
    _, err, rep = report(*(traces / t for t in ("T1", "T0", "Tw", "Tm",
                                                "T3")),
                         out=tmp_path / "r")
    assert flows_by_path(rep, d) == {("T0", "T3", "out", "new")}, err
    # Tw builds on T1's version: its out (APPEND) and its ready (SPLIT).
    assert transfer_steps(rep) == {("T0", "T3", "TRANSFER"),
                                   ("T1", "Tw", "APPEND"),
                                   ("T1", "Tw", "SPLIT")}


@pytest.mark.parametrize("replace", ["link", "file"])
def test_a_stale_version_of_a_replaced_name_is_not_read(tmp_path, replace):
    """T1 writes out, then T0 writes in; T2 removes in, and in is made
    anew: a link to out (by T2: `rm in; ln -s out in`), or a file made
    outside the traces.  The unlink by another task ends no name, so in's
    name finds T0's version, later than T1's: but it is another file's.
    T3 read out's (T1 -> T3), or a file no task wrote (an input), not
    T0's (before: T0 -> T3)."""
    d = tmp_path / "data"
    d.mkdir()
    traces = tmp_path / "traces"
    remake = "ln -s out in" if replace == "link" else "true"
    run_tasks(traces, [{"T1": f"echo new > {d}/out"},
                       {"T0": f"echo stale > {d}/in"},
                       {"T2": f"cd {d}; rm in; {remake}"}])
    if replace == "file":
        (d / "in").write_text("fresh\n")
    run_tasks(traces, [{"T3": f"cat {d}/in > {d}/res"}])
    _, err, rep = report(*(traces / t for t in ("T1", "T0", "T2", "T3")),
                         out=tmp_path / "r")
    if replace == "link":
        assert flows_by_path(rep, d) == {("T1", "T3", "in", "out")}, err
        assert input_names(rep) == set()
    else:
        assert flows_by_path(rep, d) == set(), err
        assert input_names(rep) == {"in"}


def test_an_append_by_identity_builds_on_another_tasks_version(tmp_path):
    """T1 writes out.txt; outside the traces it is linked to
    staged/in.txt; T2 appends to staged/in.txt.  The append's own
    version is of the same file and begins at the append: it is not the
    version appended to.  T2 builds on T1's (APPEND T1 -> T2), not on
    its own (a loop) nor on an input."""
    d = tmp_path / "data"
    (d / "staged").mkdir(parents=True)
    traces = tmp_path / "traces"
    run_tasks(traces, [{"T1": f"echo hello > {d}/out.txt"}])
    os.link(d / "out.txt", d / "staged" / "in.txt")
    run_tasks(traces, [{"T2": f"echo more >> {d}/staged/in.txt"}])
    assert (d / "out.txt").read_text() == "hello\nmore\n"
    assert same_identity(traces, ("T1", d / "out.txt"),
                         ("T2", d / "staged" / "in.txt"))
    _, err, rep = report(traces / "T1", traces / "T2", out=tmp_path / "r")
    assert transfer_steps(rep) == {("T1", "T2", "APPEND")}, err
    assert input_names(rep) == set() and flow_edges(rep) == set()


def test_a_write_through_one_name_of_a_link_is_read_by_the_other(tmp_path):
    """T1 writes a, T2 links it to b, T3 rewrites a in place (O_TRUNC,
    the same file), T4 reads b.  The link gave b what a held then, T1's
    version; the file has T3's since (before: T1 -> T4)."""
    d = tmp_path / "data"
    d.mkdir()
    traces = tmp_path / "traces"
    run_tasks(traces, [{"T1": f"echo one > {d}/a"}, {"T2": f"ln {d}/a {d}/b"},
                       {"T3": f"echo three > {d}/a"},
                       {"T4": f"cat {d}/b > {d}/res"}])
    assert (d / "res").read_text() == "three\n"
    _, err, rep = report(*(traces / t for t in ("T1", "T2", "T3", "T4")),
                         out=tmp_path / "r")
    assert flows_by_path(rep, d) == {("T3", "T4", "b", "a")}, err
    assert input_names(rep) == set()


def test_an_append_after_a_rename_is_read_by_the_new_name(tmp_path):
    """T2 opens log to append (without O_CREAT: its version begins at
    its first write), T3 renames it log.1, then T2 appends to what it
    opened; T4 reads log.1: T2's line is in it, so T2 -> T4 on log.1
    written as log (before: T1 -> T4, a rename moving only what its
    source held at the rename)."""
    d, traces = staged_with_a_pair(
        tmp_path, "echo 1 > log", lambda signal, wait: (
            "/usr/bin/python3 -c 'import os, subprocess\n"
            "fd = os.open(\"log\", os.O_WRONLY | os.O_APPEND)\n"
            f"subprocess.run(\"{signal('opened')}; {wait('moved')}\", "
            "shell=True)\n"
            "os.write(fd, b\"2\\n\")'",
            f"{wait('opened')}; mv log log.1; {signal('moved')}"),
        "cat log.1 > o4")
    assert (d / "o4").read_text() == "1\n2\n"
    _, err, rep = report(traces, out=tmp_path / "r")
    assert flows_by_path(rep, d) == {("T2", "T4", "log.1", "log")}, err
    assert append_steps(rep) == [("T1", "T2")]


def attach_loop(img):
    """img attached to a free loop device (another each call); skips the
    test where the system has none to give."""
    p = subprocess.run(["losetup", "--find", "--show", str(img)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"no loop device here: {p.stderr.strip()}")
    return p.stdout.strip()


@pytest.mark.skipif(os.geteuid() != 0 or not all(
    shutil.which(c) for c in ("losetup", "mkfs.ext4", "unshare")),
    reason="needs root, losetup, mkfs.ext4 and unshare (loop mounts)")
def test_a_file_system_mounted_again_keeps_its_names(tmp_path):
    """T1 writes out on an ext4 image mounted from one loop device; it is
    unmounted and mounted again from another (the image attached twice:
    another device number, the same inode number and birth time); T3
    reads out, T1's bytes: T1 -> T3 by names, not an input (d826f24 took
    the other device for another file)."""
    img, mnt, traces = tmp_path / "fs.img", tmp_path / "mnt", tmp_path / "t"
    mnt.mkdir()
    with open(img, "wb") as f:
        f.truncate(32 << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], check=True,
                   capture_output=True)
    devs = [attach_loop(img)]
    try:
        devs.append(attach_loop(img))
        # A mount namespace of its own: its mounts go with it.
        script = (f"set -e; mount {devs[0]} {mnt}\n"
                  f"{IOWRAP} --level full -o {traces}/T1 -- "
                  f"sh -c 'echo one > {mnt}/out'\n"
                  f"stat -c %d {mnt}/out; umount {mnt}\n"
                  f"mount {devs[1]} {mnt}\n"
                  f"{IOWRAP} --level full -o {traces}/T3 -- "
                  f"sh -c 'cat {mnt}/out > {mnt}/res'\n"
                  f"stat -c %d {mnt}/out; cat {mnt}/res; umount {mnt}")
        p = subprocess.run(["unshare", "-m", "sh", "-c", script],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0 and "mount" in p.stderr and \
                not (traces / "T1").exists():
            pytest.skip(f"no ext4 loop mount here: {p.stderr.strip()}")
        assert p.returncode == 0, p.stderr
    finally:
        for dev in devs:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
    dev1, dev3, res = p.stdout.split("\n")[:3]
    assert dev1 != dev3 and res == "one"
    r1, r3 = row_of(traces / "T1", mnt / "out"), row_of(traces / "T3",
                                                        mnt / "out")
    assert r1["dev"] != r3["dev"] and r1["birth"] != ""
    assert (r1["ino"], r1["birth"]) == (r3["ino"], r3["birth"])
    _, err, rep = report(traces / "T1", traces / "T3", out=tmp_path / "r")
    assert flow_edges(rep) == {("T1", "T3", "out", 4)}, err
    assert input_names(rep) == set()
