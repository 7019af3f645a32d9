"""report.html in real headless Chromium (Debian's `chromium`, driven over
the DevTools pipe by tests/cdp.py, no node): the page loads from file://
with the network off, logs no console error, fetches nothing, and every
chart either drew (a canvas with painted pixels and data in its series) or
says in a sentence why its data is absent.  Screenshots go to
build/test-artifacts/.

The pages are written by build/write-report-html (report_write_html() on a
given JSON file) from tests/data/report-sample.json -- the report.json that
the `report` branch's `iowrap report` (commit 7f76c90) wrote for a 4-task
workflow traced at --level full (tests/data/README.md) -- and from variants
of it: with the fields the page can draw beyond it, empty, hostile, huge,
not JSON."""
import json
import shutil
import subprocess
import time

import pytest

from conftest import ROOT

import cdp

WRITER = ROOT / "build" / "write-report-html"
SAMPLE = ROOT / "tests" / "data" / "report-sample.json"
ARTIFACTS = ROOT / "build" / "test-artifacts"
CHARTS = ["gantt", "task-read-sizes", "task-write-sizes", "task-size-time",
          "fig4", "fig5", "dataflow"]

pytestmark = pytest.mark.skipif(
    cdp.CHROMIUM is None,
    reason="chromium missing; fix: apt-get install chromium (ci/install-packages.sh)")

# What every chart box shows, read in the page.
CHART_STATE = r"""
(function () {
	return Array.from(document.querySelectorAll('[data-chart]')).map(function (box) {
		var r = { name: box.dataset.chart, state: box.dataset.state || '',
			  text: box.textContent.trim(), items: [], painted: 0 };
		var c = echarts.getInstanceByDom(box), cv, d, i;

		if (!c)
			return r;
		c.getOption().series.forEach(function (s) {
			r.items.push((s.data || []).length + (s.links || []).length);
		});
		cv = box.querySelector('canvas');
		d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
		for (i = 3; i < d.length; i += 4)
			if (d[i])
				r.painted++;
		return r;
	});
})()
"""


def sample():
    return json.loads(SAMPLE.read_text())


def fig4_cells(report):
    """The task x file cells the page draws: data files (not system, not
    executed) with a known span fraction."""
    return [(i, tf["file"]) for i, t in enumerate(report["tasks"])
            for tf in t["files"]
            if tf["access_span_fraction"] is not None and not tf["executed"]
            and not report["files"][tf["file"]]["system"]]


def with_extensions(report):
    """Adds what the page can draw but report.json does not have yet
    (docs/report-html.md): per-access points of one file (in.dat: 1464
    reads of 4 KiB by one task, then 45 reads of 64 KiB out of order by
    another)."""
    t0 = report["workflow"]["start_time_s"]
    g = next(f["id"] for f in report["files"] if f["path"].endswith("/in.dat"))
    pts = [[0, t0 + k * 1e-4, t0 + k * 1e-4 + 2e-5, k * 4096, 4096, "R"]
           for k in range(1464)]
    pts += [[2, t0 + 0.5 + k * 1e-3, t0 + 0.5 + k * 1e-3 + 1e-4,
             ((k * 7) % 45) * 65536, 65536, "R"] for k in range(45)]
    report["accesses"] = [{"file": g, "total": len(pts), "points": pts}]
    return report


def write_page(tmp_path, report, name="page"):
    out = tmp_path / name
    out.mkdir()
    src = tmp_path / f"{name}.json"
    if isinstance(report, (bytes, str)):
        src.write_bytes(report if isinstance(report, bytes) else report.encode())
    else:
        src.write_text(json.dumps(report, ensure_ascii=False))
    assert WRITER.exists(), f"{WRITER} missing: run make build/write-report-html"
    proc = subprocess.run([str(WRITER), str(src), str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return out / "report.html"


def load(page_path, shot=None):
    """Opens the page; returns (charts, page facts, errors, requests)."""
    with cdp.Browser() as b:
        page = b.open_page()
        page.navigate(page_path.as_uri())
        charts = page.evaluate(CHART_STATE)
        facts = page.evaluate(r"""({
			ready: document.body.getAttribute('data-ready'),
			notes: Array.from(document.querySelectorAll('.note')).map(e => e.textContent),
			absent: Array.from(document.querySelectorAll('.absent')).map(e => e.textContent),
			cells: Array.from(document.querySelectorAll('td')).map(e => e.textContent),
			sections: Array.from(document.querySelectorAll('section')).map(e => e.id),
			title: document.getElementById('subtitle').textContent,
			pwned: typeof window.pwned })""")
        if shot:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(str(ARTIFACTS / shot))
        return charts, facts, page.console_errors, page.requests


def assert_offline(page_path, requests):
    assert requests == [page_path.as_uri()], requests


def test_sample_report(tmp_path):
    """report.json as the report branch's `iowrap report` wrote it for a
    4-task workflow (SPLIT, 2 x MAP, MERGE) traced at --level full."""
    report = sample()
    path = write_page(tmp_path, report)
    charts, facts, errors, requests = load(path, "report-html-sample.png")
    assert errors == []
    assert_offline(path, requests)
    assert facts["ready"] == "1"
    assert [c["name"] for c in charts] == CHARTS
    state = {c["name"]: c["state"] for c in charts}
    # Per-access points are not in report.json (yet).
    assert state == {"gantt": "drawn", "task-read-sizes": "drawn",
                     "task-write-sizes": "drawn", "task-size-time": "drawn",
                     "fig4": "drawn", "fig5": "absent", "dataflow": "drawn"}
    for c in charts:
        if c["state"] == "drawn":
            assert sum(c["items"]) > 0 and c["painted"] > 1000, c
        else:
            assert c["items"] == [] and len(c["text"]) > 30, c
    items = {c["name"]: c["items"] for c in charts}
    assert items["gantt"] == [4]
    assert items["fig4"] == [len(fig4_cells(report))] == [12]
    # 4 tasks, 4 files passed between them, 8 edges.
    assert items["dataflow"] == [16]
    assert facts["sections"] == ["summary", "gantt", "tasks", "task", "fig4",
                                 "fig5", "dataflow"]
    cells = facts["cells"]
    # Logical tasks: --task names without an engine are their own group;
    # the longest first.
    assert cells[:2] == ["MAP (chunk_1)", "1"]
    # The per-task view opens on the task that moved most bytes (SPLIT, by
    # 4 bytes): one series per mount, one bar per log2 bucket up to the
    # largest size seen.
    heavy = max(report["tasks"],
                key=lambda t: t["file_read_bytes"] + t["file_write_bytes"])
    assert heavy["name"] == "SPLIT (all)"
    for chart, key in (("task-read-sizes", "read_sizes"),
                       ("task-write-sizes", "write_sizes")):
        want = [max(b["log2_size"] for b in m[key]) + 1
                for m in heavy["mounts"] if m[key]]
        assert items[chart] == want, chart
    for want in ("SPLIT (all)", "MAP (chunk_1)", "MERGE", "SPLIT",
                 "/tmp/html-wf/data/in.dat", "/tmp/html-wf/data/merged",
                 "527.6 ms", "vm:/"):
        assert want in cells, want
    assert not any("Showing" in n for n in facts["notes"])


def test_extended_report_draws_every_chart(tmp_path):
    report = with_extensions(sample())
    path = write_page(tmp_path, report)
    charts, facts, errors, requests = load(path, "report-html-extended.png")
    assert errors == []
    assert_offline(path, requests)
    for c in charts:
        assert c["state"] == "drawn", c
        assert sum(c["items"]) > 0 and c["painted"] > 1000, c
    items = {c["name"]: c["items"] for c in charts}
    assert items["fig5"] == [1509, 0]


def test_a_file_read_by_another_name_says_what_it_was_written_as(tmp_path):
    """A data-flow edge with written_as (the file renamed between its
    writer and its reader): the graph's two links of it say, in their
    tooltips, the name the writer wrote it by."""
    report = sample()
    files = {f["id"]: f["path"] for f in report["files"]}
    tasks = {t["id"]: t["name"] for t in report["tasks"]}
    edge = report["data_flow"]["edges"][0]
    edge["written_as"] = 21
    path = write_page(tmp_path, report)
    with cdp.Browser() as b:
        page = b.open_page()
        page.navigate(path.as_uri())
        tips = page.evaluate(r"""(function () {
		var box = document.querySelector('[data-chart="dataflow"]');
		var o = echarts.getInstanceByDom(box).getOption();

		return o.series[0].links.filter(function (l) {
			return l.writtenAs;
		}).map(function (l) {
			return o.tooltip[0].formatter({ dataType: 'edge', data: l });
		});
	})()""")
        assert page.console_errors == []
    writer, file, reader = (tasks[edge["writer"]], files[edge["file"]],
                            tasks[edge["reader"]])
    written = f"<br>1.43 MiB<br>written as {files[21]}"
    assert tips == [f"{writer} → {file}{written}", f"{file} → {reader}{written}"]


def test_empty_report_explains_every_chart(tmp_path):
    report = {"schema": "iowrap-report/1", "workflow": {"tasks": 0},
              "tasks": [], "files": [], "data_flow": {"edges": []},
              "wcp": {"vertices": [], "edges": [], "path": []},
              "warnings": {"count": 0, "messages": []}}
    path = write_page(tmp_path, report)
    charts, facts, errors, requests = load(path, "report-html-empty.png")
    assert errors == []
    assert_offline(path, requests)
    assert facts["ready"] == "1"
    # The per-task histograms are not there at all without tasks.
    assert [c["name"] for c in charts] == ["gantt", "fig4", "fig5", "dataflow"]
    for c in charts:
        assert c["state"] == "absent", c
        assert c["items"] == [] and len(c["text"]) > 30, c
    assert "The report holds no tasks." in facts["absent"]
    assert ("No critical path: the traces show no data passed between tasks."
            in facts["absent"])


def test_task_without_mounts_says_so(tmp_path):
    report = sample()
    for t in report["tasks"]:
        t["mounts"] = []
        t["top_files_by_bytes"] = []
    charts, facts, errors, _ = load(write_page(tmp_path, report))
    assert errors == []
    assert "No per-mount figures for this task." in facts["absent"]
    assert any(a.startswith("No file I/O recorded") for a in facts["absent"])


HOSTILE = ('</script><script>window.pwned=1</script><!--<script>'
           '\u2028\u2029"\'\n<img src=x onerror="window.pwned=2">&amp;\ufffd')


def test_hostile_paths_stay_text(tmp_path):
    report = with_extensions(sample())
    heavy = max(report["tasks"], key=lambda t: t["file_read_bytes"] + t["file_write_bytes"])
    heavy["name"] = "SPLIT " + HOSTILE
    heavy["files"][heavy["top_files_by_bytes"][0]]["path"] = "/data/" + HOSTILE
    in_dat = report["accesses"][0]["file"]
    report["files"][in_dat]["path"] = "/ref/" + HOSTILE
    report["inputs"] = [HOSTILE]
    report["warnings"] = {"count": 1, "messages": [HOSTILE]}
    path = write_page(tmp_path, report)
    html = path.read_bytes()
    # Only the page's own three </script> end tags; no raw separators.
    assert html.lower().count(b"</script") == 3
    assert "\u2028".encode() not in html and "\u2029".encode() not in html
    charts, facts, errors, requests = load(path, "report-html-hostile.png")
    assert errors == []
    assert_offline(path, requests)
    assert facts["pwned"] == "undefined"
    assert all(c["state"] == "drawn" for c in charts)
    assert "/data/" + HOSTILE in facts["cells"]
    assert "/ref/" + HOSTILE in facts["cells"]
    assert "SPLIT " + HOSTILE in facts["cells"]
    assert facts["title"].startswith(HOSTILE)


def test_big_report_is_capped_and_says_so(tmp_path):
    report = with_extensions(sample())
    t0 = report["workflow"]["start_time_s"]
    base = dict(report["tasks"][1])
    base["files"] = [tf for tf in base["files"]
                     if not report["files"][tf["file"]]["system"]]
    report["tasks"] = [dict(base, id=i, name=f"MAP (chunk_{i})",
                            host=f"n{i % 16}", start_time_s=t0 + i * 0.01,
                            end_time_s=t0 + i * 0.01 + 5)
                       for i in range(6000)]
    cells = len(fig4_cells(report))
    pts = [[i % 6000, t0 + i * 1e-4, t0 + i * 1e-4 + 1e-5, i * 4096, 4096, "R"]
           for i in range(50000)]
    report["accesses"][0].update(total=50000, points=pts)
    path = write_page(tmp_path, report)
    start = time.monotonic()
    charts, facts, errors, _ = load(path, "report-html-big.png")
    print(f"big report: {path.stat().st_size} bytes, {cells} Fig. 4 cells, "
          f"loaded and checked in {time.monotonic() - start:.1f} s")
    assert errors == []
    items = {c["name"]: c["items"] for c in charts}
    assert items["gantt"] == [2000]
    assert items["fig4"] == [3000]
    assert items["fig5"] == [3000, 0]
    notes = " ".join(facts["notes"])
    assert "Showing 2,000 of 6,000 tasks" in notes
    assert f"Showing 3,000 of {cells:,} task × file cells." in notes
    assert "Showing 3,000 of 50,000 accesses (evenly sampled)." in notes


def test_unreadable_data_gives_a_sentence(tmp_path):
    path = write_page(tmp_path, b'{"tasks": [ \xff </script> <!-- ')
    assert path.read_bytes().lower().count(b"</script") == 3
    charts, facts, errors, _ = load(path)
    assert errors == []
    assert charts == []
    assert len(facts["absent"]) == 1
    assert facts["absent"][0].startswith(
        "The report data embedded in this page could not be read")


def test_vendored_echarts_matches_its_pin(tmp_path):
    web = ROOT / "report" / "web"
    ok = subprocess.run(["bash", str(web / "check-vendor.sh")],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    copy_dir = tmp_path / "web"
    shutil.copytree(web, copy_dir, ignore=shutil.ignore_patterns("node_modules"))
    js = copy_dir / "vendor" / "echarts.min.js"
    data = bytearray(js.read_bytes())
    data[-10] ^= 1
    js.write_bytes(bytes(data))
    bad = subprocess.run(["bash", str(copy_dir / "check-vendor.sh")],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "does not match vendor/SHA256SUMS" in bad.stderr


def test_embedded_assets_are_the_tree_files(tmp_path):
    """The page holds the committed files byte for byte (a stale object
    would not), JSON first so that the data is there before any script."""
    html = write_page(tmp_path, {"tasks": []}).read_bytes()
    web = ROOT / "report" / "web"
    for name in ("style.css", "vendor/echarts.min.js", "app.js"):
        assert (web / name).read_bytes() in html, name
    assert html.index(b'{"tasks": []}') < html.index(
        (web / "vendor/echarts.min.js").read_bytes()[:200])


def iowrap_has_report(cwd):
    """Without the subcommand iowrap would trace a program named report
    (and leave a trace directory in cwd)."""
    proc = subprocess.run([str(ROOT / "bin" / "iowrap"), "report", "--help"],
                          capture_output=True, text=True, timeout=30, cwd=cwd)
    return proc.returncode == 0 and "usage: iowrap report" in proc.stdout


WORKFLOW = [
    ("SPLIT (all)", "head -c 150000 data/in.dat > data/chunk_1; "
                    "tail -c 150000 data/in.dat > data/chunk_2"),
    ("MAP (chunk_1)", "sleep 0.3; dd if=data/chunk_1 of=data/map_1 bs=4096 status=none"),
    ("MAP (chunk_2)", "dd if=data/chunk_2 of=data/map_2 bs=65536 status=none"),
    ("MERGE", "cat data/map_1 data/map_2 > data/merged"),
]


def test_iowrap_report_writes_the_page(tmp_path):
    """End to end once `iowrap report` is in this tree (branch report):
    trace a 4-task workflow, report it, and draw the page it wrote."""
    if not iowrap_has_report(tmp_path):
        pytest.skip("bin/iowrap has no report command on this branch")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "in.dat").write_bytes(bytes(range(256)) * 1200)
    for name, cmd in WORKFLOW:
        subprocess.run([str(ROOT / "bin" / "iowrap"), "--root", "traces",
                        "--task", name, "--level", "full", "--", "sh", "-c", cmd],
                       cwd=tmp_path, check=True, timeout=120)
    subprocess.run([str(ROOT / "bin" / "iowrap"), "report", "-o", "out", "traces"],
                   cwd=tmp_path, check=True, timeout=120)
    page = tmp_path / "out" / "report.html"
    assert page.exists(), (
        "iowrap report wrote report.json but no report.html; fix: call "
        "report_write_html() after report.json (docs/report-html.md)")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    charts, facts, errors, requests = load(page, "report-html-live.png")
    assert errors == []
    assert_offline(page, requests)
    items = {c["name"]: c["items"] for c in charts}
    assert items["gantt"] == [4]
    assert items["fig4"] == [len(fig4_cells(report))]
    # 4 tasks and the 4 files passed between them, 8 edges.
    assert items["dataflow"] == [16]
    assert "MAP (chunk_1)" in facts["cells"]
    # Fig. 5 opens on the first file of report.json's accesses (a data
    # file): one bar per read and per write the C side kept.
    first = report["accesses"][0]
    assert not report["files"][first["file"]]["system"]
    assert items["fig5"] == [sum(p[5] == "R" for p in first["points"]),
                             sum(p[5] == "W" for p in first["points"])]
    assert sum(items["fig5"]) == first["total"] > 0


@pytest.mark.parametrize("text", ["x='</SCRIPT>'", "a</style>", "<!-- c"])
def test_build_refuses_an_asset_that_ends_its_element(tmp_path, text):
    check = ROOT / "report" / "web" / "check-assets.sh"
    good = subprocess.run(["bash", str(check)] + [
        str(ROOT / "report" / "web" / f) for f in
        ("template.html", "style.css", "app.js", "vendor/echarts.min.js")],
        capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    bad = tmp_path / "app.js"
    bad.write_text("var a = 1;\n" + text + "\n")
    proc = subprocess.run(["bash", str(check), str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "would break report.html" in proc.stderr
