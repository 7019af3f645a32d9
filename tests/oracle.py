"""strace as the oracle: per file, the operations and bytes strace -ff -y
sees a command make, and the same figures from iowrap's io.csv."""
import collections
import csv
import functools
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
# Calls on a name, by their io.csv type.
NAMING = {"unlink": "U", "unlinkat": "U", "rmdir": "U", "mkdir": "D",
          "mkdirat": "D", "rename": "N", "renameat": "N", "renameat2": "N"}
CREATES = ("clone", "clone3", "fork", "vfork")
TRACED = ",".join(OPENS + READS + WRITES + COPIES + STATS + tuple(NAMING) +
                  CREATES + ("execve", "close", "lseek", "chdir", "fchdir"))
LINE = re.compile(r"^(\w+)\((.*)\) += (-?\d+)")
UNFINISHED = re.compile(r"^(\w+)\((.*)\) += \?")
FD_PATH = re.compile(r"^(?P<fd>-?\d+)<(?P<path>[^>]*)>")
DIRFD = re.compile(r"^(?:-?\d+|AT_FDCWD)<(?P<path>[^>]*)>")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
OPENED = re.compile(r"= (\d+)<([^>]*)>")
CWD = re.compile(r"\bAT_FDCWD<([^>]*)>")
# strace's escapes in a string or a -y name: a byte it does not print as
# itself is \ooo (">" too, in a name), and \n \t \" \\ ... are C's.
ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{2})|(.))", re.S)
C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f",
             "a": "\a", "b": "\b"}
# mkstemp-style names (sort's, ar's, sed -i's, zip's, git's, patch's
# NAME.oXXXXXX, rsync's .NAME.XXXXXX), made up anew in each run, and what
# they are known by.
TEMP_NAMES = (
    (re.compile(r"^(sort|st|sed|zi|t|XX|tmp_obj_|tmp_idx_|tmp_pack_|packs_|"
                r"refs_)[A-Za-z0-9]{6}$"), r"\1XXXXXX"),
    (re.compile(r"^\.tmp-\d+-"), ".tmp-PID-"),
    (re.compile(r"^#\d+$"), "#INO"),  # O_TMPFILE's, before its link
    (re.compile(r"^(.+\.o)[A-Za-z0-9]{6}$"), r"\1XXXXXX"),
    (re.compile(r"^(\..+\.)[A-Za-z0-9]{6}$"), r"\1XXXXXX"),
)


def unescaped(text):
    """A name as strace wrote it, as the str iowrap's io.csv gives (its
    bytes decoded as UTF-8 with surrogateescape)."""
    raw = bytearray()
    end = 0
    for m in ESCAPE.finditer(text):
        raw += text[end:m.start()].encode("utf-8", "surrogateescape")
        octal, hexa, char = m.groups()
        if octal:
            raw.append(int(octal, 8))
        elif hexa:
            raw.append(int(hexa, 16))
        else:
            raw += C_ESCAPES.get(char, char).encode("utf-8",
                                                    "surrogateescape")
        end = m.end()
    raw += text[end:].encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "surrogateescape")


def inside(path, root):
    return path == root or path.startswith(root + "/")


def copy_paths(name, args):
    """The source's and the destination's path of sendfile(out, in),
    copy_file_range(in, ..., out) or splice(in, ..., out)."""
    fds = re.findall(r"(?:^|, )(\d+)<([^>]*)>", args)
    src, dst = (fds[1], fds[0]) if name == "sendfile" else (fds[0], fds[1])
    return unescaped(src[1]), unescaped(dst[1])


def count_copy(ops, name, args, ret, root):
    """A copy is a read of the source and a write of the destination."""
    for kind, path in zip(("R", "W"), copy_paths(name, args)):
        if inside(path, root):
            ops[path][kind] += 1
            ops[path][kind + "bytes"] += max(ret, 0)


def strace_logs(prefix):
    """strace -ff -o PREFIX's logs: tid -> its lines."""
    logs = {}
    for log in glob.glob(f"{prefix}.*"):
        with open(log, errors="surrogateescape") as f:
            logs[int(log.rsplit(".", 1)[1])] = f.readlines()
    return logs


def cwds_of(lines):
    """Line index -> the process's cwd there, for the calls that name a
    relative path without a directory (open, stat, access, unlink ...).
    strace -y shows the cwd as AT_FDCWD's name in the calls that take one,
    and chdir and fchdir move it; before any of those, the cwd is the one
    shown next."""
    known = []
    cwd = None
    for line in lines:
        known.append(cwd)
        shown = CWD.search(line)
        moved = re.match(r'^chdir\("((?:[^"\\]|\\.)*)"\) += 0', line)
        into = re.match(r"^fchdir\(\d+<([^>]*)>\) += 0", line)
        if shown:
            cwd = unescaped(shown.group(1))
        elif moved:
            path = unescaped(moved.group(1))
            cwd = os.path.normpath(os.path.join(cwd, path)) \
                if cwd or path.startswith("/") else None
        elif into:
            cwd = unescaped(into.group(1))
        elif line.startswith(("chdir(", "fchdir(")):
            cwd = None  # failed, or not known where to

    def cwd_at(i):
        if known[i] is not None:
            return known[i]
        for line in lines[i + 1:]:
            if line.startswith(("chdir(", "fchdir(")):
                break
            shown = CWD.search(line)
            if shown:
                return unescaped(shown.group(1))
        raise AssertionError(f"no cwd known for {lines[i]!r}")

    return cwd_at


def named_path(name, args, cwd_at):
    """The file a call names: its descriptor's (fstat; "" or NULL with a
    descriptor), else its path from the directory strace -y shows or the
    cwd (as written, "." and ".." taken lexically)."""
    if name == "fstat":
        return unescaped(FD_PATH.match(args).group("path"))
    dirfd = DIRFD.match(args)
    dir_path = unescaped(dirfd.group("path")) if dirfd else None
    rest = args[dirfd.end():] if dirfd else args
    string = STRING.match(rest.lstrip(", "))
    if not string or string.group(1) == "":
        return dir_path
    path = unescaped(string.group(1))
    if path.startswith("/"):
        return os.path.normpath(path)
    base = dir_path if dirfd else cwd_at()
    return os.path.normpath(os.path.join(base, path))


def count_line(ops, line, root, cwd_at):
    if UNFINISHED.match(line) and root in line:
        raise AssertionError(f"a call strace saw unfinished: {line!r}")
    m = LINE.match(line)
    if not m:
        return
    name, args, ret = m.group(1), m.group(2), int(m.group(3))
    if name in STATS or name in NAMING or (name in OPENS and ret < 0):
        path = named_path(name, args, cwd_at)
        kind = "S" if name in STATS else NAMING.get(name, "O failed")
        if path and inside(path, root):
            ops[path][kind] += 1
        return
    if name in OPENS:
        fd = OPENED.search(line)
        if fd and inside(unescaped(fd.group(2)), root):
            ops[unescaped(fd.group(2))]["O"] += 1
        return
    if name in COPIES:
        count_copy(ops, name, args, ret, root)
        return
    kind = {"close": "C", "lseek": "L"}.get(name)
    if name in READS or name in WRITES:
        kind = "R" if name in READS else "W"
    arg0 = FD_PATH.match(args)
    path = unescaped(arg0.group("path")) if arg0 else None
    if not kind or not path or not inside(path, root):
        return
    if kind in ("R", "W"):
        ops[path][kind + "bytes"] += max(ret, 0)
    ops[path][kind] += 1


def untraced(path):
    """What iowrap does not trace per operation but counts in a process's
    untraced bytes: pipes and sockets (strace -y: pipe:[N], socket:[N]),
    and what it leaves out by default, /proc, /sys and /dev."""
    return not path.startswith("/") or \
        path.startswith(("/proc/", "/sys/", "/dev/"))


def moved_untraced(name, args, ret):
    """[read, written] bytes a call moved through untraced descriptors, and
    whether any of them is a file of /proc, /sys or /dev (whose contents,
    and what a program writes to /dev/null, may change from run to run);
    splice's bytes count in neither (nor in rchar and wchar)."""
    moved, special = [0, 0], False
    arg0 = FD_PATH.match(args)
    if ret <= 0 or name == "splice":
        return moved, special
    if name in COPIES:
        sides = enumerate(copy_paths(name, args))
    elif (name in READS or name in WRITES) and arg0:
        sides = ((0 if name in READS else 1,
                  unescaped(arg0.group("path"))),)
    else:
        return moved, special
    for kind, path in sides:
        if untraced(path):
            moved[kind] += ret
            special |= path.startswith("/")
    return moved, special


def strace_untraced_by_program(prefix):
    """Program -> [bytes read, bytes written] through untraced descriptors
    by the processes and threads that ended running it, from the logs of
    strace_ops, and the set of programs that moved bytes through a file
    of /proc, /sys or /dev.  A process runs the program of its last
    execve, or, if it made none, the one its creator ran at the clone."""
    logs = strace_logs(prefix)
    made_at = {}  # tid -> (its creator's tid, the line of the clone)
    for tid, lines in logs.items():
        for i, line in enumerate(lines):
            m = LINE.match(line)
            if m and m.group(1) in CREATES and int(m.group(3)) > 0:
                made_at[int(m.group(3))] = (tid, i)

    cwds = {}

    @functools.cache
    def program_at(tid, end):
        lines = logs[tid]
        for i in range(end - 1, -1, -1):
            m = LINE.match(lines[i])
            if m and m.group(1) == "execve" and m.group(3) == "0":
                path = unescaped(STRING.match(m.group(2)).group(1))
                if not path.startswith("/"):
                    if tid not in cwds:
                        cwds[tid] = cwds_of(lines)
                    path = os.path.join(cwds[tid](i), path)
                return os.path.realpath(path)
        return program_at(*made_at[tid]) if tid in made_at else None

    totals = collections.defaultdict(lambda: [0, 0])
    special = set()
    for tid, lines in logs.items():
        program = program_at(tid, len(lines))
        for line in lines:
            m = LINE.match(line)
            if m:
                moved, odd = moved_untraced(m.group(1), m.group(2),
                                            int(m.group(3)))
                totals[program][0] += moved[0]
                totals[program][1] += moved[1]
                if odd:
                    special.add(program)
    return dict(totals), special


def strace_ops(cmd, workdir, prefix, **kw):
    """path -> Counter of O, O failed, R, W, C, L, S, U, D, N and R/W
    bytes, for workdir and the files under it, from strace -ff -y running
    cmd in workdir; kw go to subprocess.run (env, stdin)."""
    subprocess.run(["strace", "-ff", "-qq", "-y", "-s", "0", "-e",
                    f"trace={TRACED}", "-e", "signal=none",
                    "-o", str(prefix)] + cmd, check=True,
                   capture_output=True, cwd=workdir, **kw)
    ops = collections.defaultdict(collections.Counter)
    root = os.path.realpath(workdir)
    for lines in strace_logs(prefix).values():
        cwd_at = cwds_of(lines)
        for i, line in enumerate(lines):
            count_line(ops, line, root, lambda i=i: cwd_at(i))
    return ops


def io_rows(trace):
    data = (trace.dir / "io.csv").read_bytes().decode("utf-8",
                                                     "surrogateescape")
    return list(csv.DictReader(io.StringIO(data, newline="")))


def opened_rows(trace, path):
    """The rows of the handle the one O row of path got, that O row
    first."""
    rows = io_rows(trace)
    (handle,) = [r["handle"] for r in rows
                 if r["type"] == "O" and r["path"] == str(path)]
    return [r for r in rows if r["handle"] == handle]


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


def handles_without_open(trace, rows, workdir):
    """The handles of files under workdir that have no O row."""
    opened = {r["handle"] for r in rows
              if r["type"] == "O" and int(r["result"]) >= 0}
    first_path = file_first_paths(trace)
    root = os.path.realpath(workdir)
    return {r["handle"] for r in rows
            if r["handle"] != "0" and r["handle"] not in opened and
            inside(first_path.get(r["inode"], ""), root)}


def iowrap_ops(trace, workdir):
    """The same counters from io.csv: an operation on a handle is its
    handle's, named by the path it was opened by; a stat, a failed open
    and a name's U, D or N row by its path."""
    rows = io_rows(trace)
    handle_path = {}
    for r in rows:
        if r["type"] == "O" and int(r["result"]) >= 0:
            handle_path[r["handle"]] = kernel_name(r["path"])
    first_path = file_first_paths(trace)
    ops = collections.defaultdict(collections.Counter)
    root = os.path.realpath(workdir)
    for r in rows:
        kind = r["type"]
        by_name = kind in ("U", "D", "N") or \
            (kind in ("S", "O") and r["handle"] == "0")
        if by_name:
            if inside(r["path"], root):
                ops[r["path"]]["O failed" if kind == "O" else kind] += 1
            continue
        path = handle_path.get(r["handle"]) or first_path.get(r["inode"])
        if not path or not inside(path, root):
            continue
        if kind in ("O", "C", "L", "R", "W", "S"):
            ops[path][kind] += 1
        if kind in ("R", "W"):
            ops[path][kind + "bytes"] += max(int(r["result"]), 0)
    return ops, rows


def thread_owners(trace):
    """threads.csv: tid -> its row (time, pid, tid, end_time)."""
    with open(trace.dir / "threads.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len({r["tid"] for r in rows}) == len(rows)
    return {r["tid"]: r for r in rows}


def assert_rchar_wchar_add_up(trace, rows):
    """Per process: its threads' R and W results (io.csv's pid is the
    thread's id), less what splice moved (which the kernel counts in
    neither), plus its untraced bytes, are its rchar and wchar.  The
    tracer takes the untraced bytes from rchar and wchar, so this catches
    R and W rows counted twice, not missing ones: comparing the untraced
    bytes with strace's does."""
    owner = {tid: r["pid"] for tid, r in thread_owners(trace).items()}
    moved = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        if r["type"] in ("R", "W"):
            pid = owner.get(r["pid"], r["pid"])
            moved[pid][r["type"] == "W"] += max(int(r["result"]), 0)
    for p in trace.procs:
        read, wrote = moved[p["pid"]]
        assert read - int(p["spliced_read_bytes"]) + \
            int(p["untraced_read_bytes"]) == int(p["rchar"]), p
        assert wrote - int(p["spliced_write_bytes"]) + \
            int(p["untraced_write_bytes"]) == int(p["wchar"]), p


def iowrap_untraced_by_program(trace):
    """procs.csv: program -> [bytes read, bytes written] through untraced
    descriptors by the processes that ended running it (less what the
    kernel read loading programs, which no syscall shows)."""
    totals = collections.defaultdict(lambda: [0, 0])
    for p in trace.procs:
        total = totals[p["exe"]]
        total[0] += int(p["untraced_read_bytes"]) - int(p["exec_read_bytes"])
        total[1] += int(p["untraced_write_bytes"])
    return dict(totals)


def temp_name(path):
    """What a name made up anew in each run (TEMP_NAMES) is known by: its
    directory and its shape; any other name is known by itself."""
    d, base = os.path.split(path)
    for pattern, shape in TEMP_NAMES:
        if pattern.search(base):
            return os.path.join(d, pattern.sub(shape, base))
    return path


def comparable(ops, others):
    """Files whose names both runs have, by name; the others as a
    multiset of their counters under temp_name."""
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
    lines += [f"{name} only in iowrap: {counter}"
              for (name, counter) in sorted(only_got.elements())]
    lines += [f"{name} only in strace: {counter}"
              for (name, counter) in sorted(only_want.elements())]
    return lines


def assert_same_ops(got, want):
    lines = differences(got, want)
    assert not lines, "\n".join(lines)
