"""Processes that see the files through a mount namespace or a root of
their own (unshare -m, bwrap and the container runtimes built like it,
chroot): a path a process of the task names is looked up where that
process sees it, not where the tracer does.  The oracle is the file itself:
its device, inode number and size as the process reports them from inside
(stat(1) in the task) and as os.stat and /proc/self/mountinfo show them
from outside."""
import csv
import io
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import IOWRAP

BUSYBOX = Path("/bin/busybox")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
INSIDE = "inside, and longer\n"
STAT = '/bin/busybox stat -c "%d %i %s"'
CAT = "/bin/busybox cat"  # open, sendfile, close: no fstat


def csv_rows(trace_dir, name):
    text = (trace_dir / name).read_bytes().decode("utf-8", "surrogateescape")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def dev_of(number):
    """files.csv's dev column for a device number."""
    return f"{os.major(number)}:{os.minor(number)}"


def iowrap(user, out, cmd):
    pre = NOBODY if user == "nobody" else []
    return subprocess.run(pre + [str(IOWRAP), "-l", "full", "-o", str(out),
                                 "--"] + cmd, capture_output=True,
                          text=True, timeout=120, cwd="/")


def traced(user, out, cmd):
    """iowrap's run of cmd: its stdout, io.csv and files.csv by id."""
    p = iowrap(user, out, cmd)
    assert p.returncode == 0, p.stderr
    summary = (out / "summary.json").read_text()
    assert '"complete": true' in summary, summary
    files = {r["inode"]: r for r in csv_rows(out, "files.csv")}
    return p.stdout, csv_rows(out, "io.csv"), files


def stat_lines(stdout):
    """stat's "dev ino size" lines of the task's output."""
    return [tuple(int(x) for x in line.split())
            for line in stdout.splitlines()
            if line.replace(" ", "").isdigit()]


def ids_of(rows, path):
    return {r["inode"] for r in rows if r["path"] == path}


def assert_is(row, dev_ino_size):
    dev, ino, size = dev_ino_size
    assert (row["dev"], row["ino"]) == (dev_of(dev), str(ino)), row
    assert row["size_last_close"] in ("", str(size)), row


@pytest.fixture
def base():
    """A directory for the test's files, which nobody may read, with out/
    for the trace, which nobody may write; removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("needs root (to become nobody, to chroot)")
    d = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        d.chmod(0o755)
        (d / "out").mkdir()
        os.chown(d / "out", 65534, 65534)
        yield d
    finally:
        shutil.rmtree(d)


def build_root(base):
    """A root of busybox (static) alone, with etc/hostname (a name the
    host has too, another file there), abs, an absolute symlink to it
    that leads elsewhere when followed from the tracer's root, and lnk, an
    absolute symlink to the directory etc/sub (so /lnk/.. is /etc)."""
    root = base / "root"
    for d in ("bin", "etc/sub", "tmp", "proc", "dev"):
        (root / d).mkdir(parents=True)
    shutil.copy2(BUSYBOX, root / "bin" / "busybox")
    (root / "etc" / "hostname").write_text(INSIDE)
    os.symlink("/etc/hostname", root / "abs")
    os.symlink("/etc/sub", root / "lnk")
    # Not through the symlinks: abs leads to the host's /etc/hostname.
    for p in [root] + list(root.iterdir()):
        if not p.is_symlink():
            p.chmod(0o755)
    return root


def last_mount_of(dev):
    """The last mount of device dev in the tracer's mountinfo (the one on
    top): [mount point, fstype]."""
    found = None
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            f = line.split()
            if f[2] == dev_of(dev):
                found = [f[4], f[f.index("-") + 1]]
    return found


def require(user, probe):
    p = subprocess.run((NOBODY if user == "nobody" else []) + probe,
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        pytest.skip(f"{' '.join(probe)} as {user}: {p.stderr.strip()}")


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_a_mount_namespace_of_its_own(base, user):
    """unshare -m (nobody: -rm, in a user namespace) and a tmpfs over d,
    where the tracer's d/f is another file: the stat and open of d/f in
    the task are of the tmpfs file, its mount and size; the outside file,
    never touched, is not in files.csv.  Before, the stat counted for the
    outside file (the tracer looked the path up in its own namespace) and
    the tmpfs had no mount point."""
    d = base / "d"
    d.mkdir(mode=0o777)
    (d / "f").write_text("outside\n")
    (d / "f").chmod(0o666)
    outside = os.stat(d / "f")
    unshare = ["unshare", "-rm" if user == "nobody" else "-m"]
    require(user, unshare + ["true"])
    f = d / "f"
    script = (f"mount -t tmpfs none {d} && printf '{INSIDE.strip()}\\n' > {f}"
              f" && {STAT} {f} && {CAT} {f}")
    stdout, rows, files = traced(user, base / "out",
                                 unshare + ["sh", "-c", script])
    (inside,) = stat_lines(stdout)
    assert stdout.splitlines()[1:] == [INSIDE.strip()]
    (ident,) = ids_of(rows, str(f))
    assert ident != "0"
    # The shell's open, stat's, cat's.
    assert sorted(r["type"] for r in rows if r["path"] == str(f)) == \
        ["O", "O", "S"]
    assert_is(files[ident], inside)
    assert (files[ident]["mount_point"], files[ident]["fstype"]) == \
        (str(d), "tmpfs")
    assert (dev_of(outside.st_dev), str(outside.st_ino)) not in \
        {(r["dev"], r["ino"]) for r in files.values()}


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_a_bind_mount_of_a_mounted_device(base, user):
    """A directory of the root file system bound elsewhere in a mount
    namespace of the task's (a container's volume, its /etc/hostname):
    the file read through the bind mount is on it, and a file of the root
    file system read by its own path on the root mount.  Before, every
    file of that device got the bind mount's point (the last mount of
    its device in mountinfo)."""
    src, dst = base / "src", base / "dst"
    for d in (src, dst):
        d.mkdir(mode=0o777)
    (src / "f").write_text(INSIDE)
    (src / "f").chmod(0o666)
    (base / "g").write_text("root file system\n")
    (base / "g").chmod(0o666)
    unshare = ["unshare", "-rm" if user == "nobody" else "-m"]
    require(user, unshare + ["true"])
    script = (f"mount --bind {src} {dst} && {CAT} {dst}/f {base}/g")
    stdout, rows, files = traced(user, base / "out",
                                 unshare + ["sh", "-c", script])
    assert stdout == INSIDE + "root file system\n"
    root = subprocess.run(["findmnt", "-n", "-o", "TARGET", "--target",
                           str(base)], capture_output=True, text=True,
                          check=True).stdout.strip()
    (bound,) = ids_of(rows, f"{dst}/f")
    (plain,) = ids_of(rows, f"{base}/g")
    assert (files[bound]["mount_point"], files[plain]["mount_point"]) == \
        (str(dst), root)


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_a_container_root(base, user):
    """bwrap in a user namespace, its root the busybox tree (pivot_root),
    /tmp a tmpfs: a path named from the cwd, an absolute symlink followed,
    a ".." after a symlinked directory (/lnk/.. is /etc, not /) and a
    file made on the tmpfs are the container's files, as its stat and the
    tree from outside say.  Before, the stats had no inode id or the
    host's /etc/hostname, the ".." was taken as written (/hostname), and
    the tmpfs had no mount point."""
    root = build_root(base)
    require(user, ["bwrap", "--unshare-user", "--ro-bind", "/", "/",
                   "true"])
    script = (f"cd /etc && {STAT} hostname && /bin/busybox stat -L -c "
              f'"%d %i %s" /abs && {STAT} /lnk/../hostname && '
              f"/bin/busybox cat hostname /abs && "
              f"echo new > /tmp/n && {STAT} /tmp/n")
    stdout, rows, files = traced(
        user, base / "out",
        ["bwrap", "--unshare-user", "--bind", str(root), "/", "--proc",
         "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "/bin/busybox", "sh",
         "-c", script])
    hostname, via_abs, via_dotdot, tmp_n = stat_lines(stdout)
    outside = os.stat(root / "etc" / "hostname")
    assert hostname == via_abs == via_dotdot == (outside.st_dev,
                                                 outside.st_ino, len(INSIDE))
    (ident,) = ids_of(rows, "/etc/hostname") | ids_of(rows, "/abs")
    assert ident != "0"
    # A stat and an open each by both names, and the stat by /lnk/..
    assert sorted(r["type"] for r in rows
                  if r["path"] in ("/etc/hostname", "/abs")) == \
        ["O", "O", "S", "S", "S"]
    assert not [r for r in rows if "hostname" in r["path"] and
                r["path"] not in ("/etc/hostname", "/abs")]
    assert_is(files[ident], hostname)
    (n_ident,) = ids_of(rows, "/tmp/n")
    assert_is(files[n_ident], tmp_n)
    assert (files[n_ident]["mount_point"], files[n_ident]["fstype"]) == \
        ("/tmp", "tmpfs")


def test_a_chroot(base):
    """chroot into the busybox tree: the task's names are the chroot's
    (/etc/hostname, built from its cwd too, not the tree's path on the
    host), an absolute symlink leads inside it, and the file's mount is
    the one the tree is on (a chroot's mountinfo lists none above it)."""
    root = build_root(base)
    script = (f"cd /etc && {STAT} hostname && /bin/busybox cat hostname "
              f"/abs")
    stdout, rows, files = traced("root", base / "out",
                                 ["chroot", str(root), "/bin/busybox", "sh",
                                  "-c", script])
    (inside,) = stat_lines(stdout)
    outside = os.stat(root / "etc" / "hostname")
    assert inside == (outside.st_dev, outside.st_ino, len(INSIDE))
    (ident,) = ids_of(rows, "/etc/hostname") | ids_of(rows, "/abs")
    assert sorted(r["type"] for r in rows
                  if r["path"] in ("/etc/hostname", "/abs")) == \
        ["O", "O", "S"]
    assert not [r for r in rows if r["path"].startswith(str(root) + "/")]
    assert_is(files[ident], inside)
    assert [files[ident]["mount_point"], files[ident]["fstype"]] == \
        last_mount_of(outside.st_dev)


def test_a_namespace_number_used_again(base):
    """Two mount namespaces one after the other: the second often gets the
    first's inode number (and its tmpfs the first's device number), once
    the first is gone.  Each file has the mount point of its own
    namespace's tmpfs.  Before, the second namespace's files took the
    first's mount table: b/g was on a's tmpfs."""
    a, b = base / "a", base / "b"
    a.mkdir()
    b.mkdir()
    require("root", ["unshare", "-m", "true"])
    one = f"mount -t tmpfs none {a} && echo one > {a}/f && {STAT} {a}/f"
    two = f"mount -t tmpfs none {b} && echo two > {b}/g && {STAT} {b}/g"
    stdout, rows, files = traced(
        "root", base / "out",
        ["sh", "-c", f"unshare -m sh -c '{one}' && unshare -m sh -c '{two}'"])
    f_stat, g_stat = stat_lines(stdout)
    for path, st, mount in ((a / "f", f_stat, a), (b / "g", g_stat, b)):
        (ident,) = ids_of(rows, str(path))
        assert_is(files[ident], st)
        assert (files[ident]["mount_point"], files[ident]["fstype"]) == \
            (str(mount), "tmpfs")


def test_a_directory_opened_before_the_chroot(base):
    """A directory descriptor opened outside, used inside: the kernel's
    name for it is taken again in the chroot's view (/etc), so a stat
    relative to it names /etc/hostname and counts for that file.  Before,
    the row kept the outside name, which the tracer then looked up inside
    the chroot, where it leads nowhere (inode 0)."""
    root = build_root(base)
    script = (f"import os\n"
              f"d = os.open({str(root / 'etc')!r}, os.O_RDONLY)\n"
              f"os.chroot({str(root)!r})\n"
              f"os.chdir('/')\n"
              f"st = os.stat('hostname', dir_fd=d)\n"
              f"print(st.st_dev, st.st_ino, st.st_size)\n")
    stdout, rows, files = traced("root", base / "out",
                                 ["python3", "-c", script])
    (inside,) = stat_lines(stdout)
    outside = os.stat(root / "etc" / "hostname")
    assert inside == (outside.st_dev, outside.st_ino, len(INSIDE))
    (row,) = [r for r in rows if r["path"] == "/etc/hostname"]
    assert row["type"] == "S" and row["inode"] != "0"
    assert_is(files[row["inode"]], inside)


def test_a_tmpfs_unmounted_and_another_mounted(base):
    """In one mount namespace, a tmpfs on a, written, unmounted, and a new
    tmpfs on b: the kernel gives the second the first's device number,
    and its first file the first's inode number.  b/g is another file
    (its birth time) on the tmpfs at b (mountinfo read again after the
    umount).  Before, b/g was a/f, on a."""
    a, b = base / "a", base / "b"
    a.mkdir()
    b.mkdir()
    require("root", ["unshare", "-m", "true"])
    script = (f"mount -t tmpfs none {a} && echo one > {a}/f && {STAT} {a}/f"
              f" && umount {a} && mount -t tmpfs none {b} && "
              f"echo two > {b}/g && {STAT} {b}/g")
    stdout, rows, files = traced("root", base / "out",
                                 ["unshare", "-m", "sh", "-c", script])
    f_stat, g_stat = stat_lines(stdout)
    ids = []
    for path, st, mount in ((a / "f", f_stat, a), (b / "g", g_stat, b)):
        (ident,) = ids_of(rows, str(path))
        assert_is(files[ident], st)
        assert (files[ident]["mount_point"], files[ident]["fstype"]) == \
            (str(mount), "tmpfs")
        ids.append(ident)
    assert ids[0] != ids[1]


THREAD_ALONE = """
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, MS_REC, MS_PRIVATE = 0x20000, 0x4000, 0x40000
d = {d!r}
def moved():
    # This thread alone: its own cwd and root, then mount namespace.
    assert libc.unshare(CLONE_NEWNS) == 0, ctypes.get_errno()
    assert libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) == 0
    assert libc.mount(b"none", d.encode(), b"tmpfs", 0, None) == 0
    with open(d + "/f", "w") as f:
        f.write("inside, and longer\\n")
    st = os.stat(d + "/f")
    print(st.st_dev, st.st_ino, st.st_size, flush=True)
st = os.stat(d + "/f")
print(st.st_dev, st.st_ino, st.st_size, flush=True)
t = threading.Thread(target=moved)
t.start()
t.join()
st = os.stat(d + "/f")
print(st.st_dev, st.st_ino, st.st_size, flush=True)
"""


def test_a_thread_in_a_mount_namespace_of_its_own(base):
    """unshare(CLONE_NEWNS) by one thread (Go's LockOSThread way) moves that
    thread alone: the main thread's stat of d/f, before and after, is of
    the file outside; the thread's, of the tmpfs file it made, on that
    tmpfs.  Before, the thread's calls were looked up as its process's
    first thread saw them."""
    d = base / "d"
    d.mkdir()
    (d / "f").write_text("outside\n")
    stdout, rows, files = traced("root", base / "out", [
        "python3", "-c", THREAD_ALONE.format(d=str(d))])
    before, inside, after = stat_lines(stdout)
    outside = os.stat(d / "f")
    assert before == after == (outside.st_dev, outside.st_ino, 8)
    # Path stats (handle 0): main, thread, main; and open's fstat.
    stats = [r for r in rows if r["path"] == str(d / "f")
             and r["type"] == "S" and r["handle"] == "0"]
    assert len(stats) == 3
    (opened,) = [r for r in rows if r["path"] == str(d / "f")
                 and r["type"] == "O"]
    assert opened["inode"] == stats[1]["inode"]
    assert stats[0]["inode"] == stats[2]["inode"] != stats[1]["inode"]
    assert_is(files[stats[0]["inode"]], before)
    assert_is(files[stats[1]["inode"]], inside)
    assert (files[stats[1]["inode"]]["mount_point"],
            files[stats[1]["inode"]]["fstype"]) == (str(d), "tmpfs")


def test_more_chroots_one_after_another_than_views_kept(base):
    """1,100 chroots one after the other, each into a tree of its own,
    more than the 1,024 views iowrap keeps at once: a view no process is
    in any more gives its slot to the next, so the last chroot's stat is
    still of its own tree's file.  Before, views past the 1,024th were
    looked up as the tracer sees the files (inode 0, and a problem in the
    summary)."""
    n = 1100
    trees = base / "trees"
    trees.mkdir()
    # One copy, linked into every tree (not the host's busybox).
    shutil.copy2(BUSYBOX, base / "busybox")
    for i in range(n):
        (trees / str(i) / "bin").mkdir(parents=True)
        os.link(base / "busybox", trees / str(i) / "bin" / "busybox")
        (trees / str(i) / "f").write_text("x" * (i % 7))
    script = (f"i=0; while [ $i -lt {n} ]; do chroot {trees}/$i "
              f"/bin/busybox stat -c '%d %i %s' /f || exit 1; "
              f"i=$((i+1)); done")
    stdout, rows, files = traced("root", base / "out", ["sh", "-c", script])
    stats = [r for r in rows if r["path"] == "/f" and r["type"] == "S"]
    assert len(stats) == n
    for i in (0, n - 1):
        outside = os.stat(trees / str(i) / "f")
        assert stat_lines(stdout)[i] == (outside.st_dev, outside.st_ino,
                                         i % 7)
        assert_is(files[stats[i]["inode"]], stat_lines(stdout)[i])
    assert len({r["inode"] for r in stats}) == n
