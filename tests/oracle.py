"""strace as the oracle: per file, the operations and bytes strace -ff -y
sees a command make, and the same figures from iowrap's io.csv."""
import collections
import csv
import glob
import io
import os
import re
import shlex
import subprocess

OPENS = ("open", "openat", "openat2", "creat")
READS = ("read", "pread64", "readv", "preadv", "preadv2")
WRITES = ("write", "pwrite64", "writev", "pwritev", "pwritev2")
COPIES = ("sendfile", "copy_file_range", "splice")
STATS = ("stat", "lstat", "fstat", "newfstatat", "statx", "access",
         "faccessat", "faccessat2")
TRACED = ",".join(OPENS + READS + WRITES + COPIES + STATS +
                  ("close", "lseek"))
LINE = re.compile(r"^(\w+)\((.*)\) += (-?\d+)")
FD_PATH = re.compile(r"^(-?\d+)<([^>]*)>")
OPENED = re.compile(r"= (\d+)<([^>]*)>")
CWD = re.compile(r"\bAT_FDCWD<([^>]*)>")


def count_copy(ops, name, args, ret, under):
    """sendfile(out, in), copy_file_range(in, ..., out), splice(in, ...,
    out): a read of the source and a write of the destination."""
    fds = re.findall(r"(\d+)<([^>]*)>", args)
    src, dst = (fds[1], fds[0]) if name == "sendfile" else (fds[0], fds[1])
    for kind, (_, path) in (("R", src), ("W", dst)):
        if path.startswith(under):
            ops[path][kind] += 1
            ops[path][kind + "bytes"] += max(ret, 0)


def cwds_of(lines):
    """Line index -> the process's cwd there, for the calls that name a
    relative path without a directory (access, stat, lstat): strace -y
    shows the cwd as AT_FDCWD's name in the calls that take one, so it is
    the last shown since the last chdir, or else the next shown."""
    seen = [(i, m.group(1)) for i, line in enumerate(lines)
            for m in [CWD.search(line)] if m]
    moves = [i for i, line in enumerate(lines)
             if line.startswith(("chdir(", "fchdir("))]

    def cwd_at(i):
        moved = max([k for k in moves if k < i], default=-1)
        before = [d for k, d in seen if moved < k < i]
        if before:
            return before[-1]
        until = min([k for k in moves if k > i], default=len(lines))
        after = [d for k, d in seen if i < k < until]
        return after[0] if after else None

    return cwd_at


def stat_target(name, args, cwd):
    """The file a stat or access names: its descriptor's (fstat, or "" with
    AT_EMPTY_PATH), else its path from the directory strace -y shows or
    the cwd (the path as written, "." and ".." taken lexically)."""
    dirfd = FD_PATH.match(args) or re.match(r"^AT_FDCWD<([^>]*)>", args)
    path = re.search(r'"((?:[^"\\]|\\.)*)"', args)
    if name == "fstat" or (path and path.group(1) == ""):
        return dirfd.group(dirfd.lastindex) if dirfd else None
    if not path:
        return None
    base = dirfd.group(dirfd.lastindex) if dirfd else cwd
    if path.group(1).startswith("/"):
        return os.path.normpath(path.group(1))
    if base is None:
        return f"(no cwd known for {name}({args}))"
    return os.path.normpath(os.path.join(base, path.group(1)))


def count_line(ops, line, under, cwd=None):
    m = LINE.match(line)
    if not m:
        return
    name, args, ret = m.group(1), m.group(2), int(m.group(3))
    if name in STATS:
        path = stat_target(name, args, cwd)
        if path and (path.startswith(under) or path.startswith("(")):
            ops[path]["S"] += 1
        return
    if name in OPENS:
        fd = OPENED.search(line)
        if fd and fd.group(2).startswith(under):
            ops[fd.group(2)]["O"] += 1
        return
    if name in COPIES:
        count_copy(ops, name, args, ret, under)
        return
    arg0 = FD_PATH.match(args)
    kind = {"close": "C", "lseek": "L"}.get(name)
    if name in READS or name in WRITES:
        kind = "R" if name in READS else "W"
    if not kind or not arg0 or not arg0.group(2).startswith(under):
        return
    path = arg0.group(2)
    if kind in "RW":
        ops[path][kind + "bytes"] += max(ret, 0)
    ops[path][kind] += 1


def strace_ops(cmd, workdir, prefix, **kw):
    """path -> Counter of O, R, W, C, L, S and R/W bytes, for the files
    under workdir, from strace -ff -y running cmd in workdir; kw go to
    subprocess.run (env, stdin)."""
    subprocess.run(["strace", "-ff", "-qq", "-y", "-s", "0", "-e",
                    f"trace={TRACED},chdir,fchdir", "-e", "signal=none",
                    "-o", str(prefix)] + cmd, check=True,
                   capture_output=True, cwd=workdir, **kw)
    ops = collections.defaultdict(collections.Counter)
    under = os.path.realpath(workdir) + "/"
    for log in glob.glob(f"{prefix}.*"):
        with open(log, errors="surrogateescape") as f:
            lines = f.readlines()
        cwd_at = cwds_of(lines)
        for i, line in enumerate(lines):
            relative = line.startswith(("access(\"", "stat(\"", "lstat(\""))
            count_line(ops, line, under, cwd_at(i) if relative else None)
    return ops


def io_rows(trace):
    data = (trace.dir / "io.csv").read_bytes().decode("utf-8",
                                                     "surrogateescape")
    return list(csv.DictReader(io.StringIO(data, newline="")))


def file_first_paths(trace):
    """files.csv: inode id -> the first path it was seen under, for a
    handle that has no O row (a descriptor received over a socket after
    its sender closed its own: docs/tracer.md)."""
    data = (trace.dir / "files.csv").read_bytes().decode("utf-8",
                                                        "surrogateescape")
    paths = {}
    for r in csv.DictReader(io.StringIO(data, newline="")):
        names = shlex.split(r["paths"])
        if names:
            paths[r["inode"]] = kernel_name(names[0])
    return paths


def kernel_name(path):
    """strace -y's name for a file iowrap names by the path it was opened
    by: the symbolic links in it followed as they are at the end, and an
    O_TMPFILE file's "DIR/#INO (deleted)" without the " (deleted)"."""
    return os.path.realpath(path.removesuffix(" (deleted)"))


def iowrap_ops(trace, workdir):
    """The same counters from io.csv: each operation is its handle's, named
    by the path it was opened by, with the symbolic links in it resolved
    as they are at the end (strace -y shows the kernel's name)."""
    rows = io_rows(trace)
    handle_path = {}
    for r in rows:
        if r["type"] == "O" and int(r["result"]) >= 0:
            handle_path[r["handle"]] = kernel_name(r["path"])
    first_path = file_first_paths(trace)
    ops = collections.defaultdict(collections.Counter)
    under = os.path.realpath(workdir) + "/"
    for r in rows:
        if r["type"] == "S" and r["handle"] == "0":
            if r["path"].startswith(under):
                ops[r["path"]]["S"] += 1
            continue
        if r["handle"] == "0":
            continue
        path = handle_path.get(r["handle"]) or first_path.get(r["inode"])
        if not path or not path.startswith(under):
            continue
        t = r["type"]
        if t in "OCLRWS":
            ops[path][t] += 1
        if t in "RW":
            ops[path][t + "bytes"] += max(int(r["result"]), 0)
    return ops, rows


def temp_name(path):
    """A name made up at random (mkstemp's XXXXXX: sort's, ar's, sed -i's,
    git's) differs between two runs: it is known by its directory and
    what comes before its last six characters, with its numbers (a pid:
    git's .tmp-PID-pack-...) left out."""
    d, base = os.path.split(path)
    return d, re.sub(r"[0-9]+", "N", base[:-6]) + "XXXXXX"


def comparable(ops, others):
    """Files whose names both runs have, by name; the others (temporary
    names) as a multiset of their counters under temp_name."""
    named, temp = {}, []
    for path, counter in ops.items():
        if path in others:
            named[path] = dict(counter)
        else:
            temp.append((temp_name(path), tuple(sorted(counter.items()))))
    return named, sorted(temp)


def differences(got, want):
    """Lines naming each file, or temporary name, whose counters differ."""
    (named_got, temp_got), (named_want, temp_want) = \
        comparable(got, want), comparable(want, got)
    lines = [f"{path}: iowrap {named_got.get(path)} strace "
             f"{named_want.get(path)}"
             for path in sorted(set(named_got) | set(named_want))
             if named_got.get(path) != named_want.get(path)]
    only_got = collections.Counter(temp_got) - collections.Counter(temp_want)
    only_want = collections.Counter(temp_want) - collections.Counter(temp_got)
    lines += [f"temporary name {name} only in iowrap: {counter}"
              for (name, counter) in sorted(only_got.elements())]
    lines += [f"temporary name {name} only in strace: {counter}"
              for (name, counter) in sorted(only_want.elements())]
    return lines


def assert_same_ops(got, want):
    lines = differences(got, want)
    assert not lines, "\n".join(lines)
