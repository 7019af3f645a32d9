"""Real programs from a workflow's toolbox under strace -ff -y and under
iowrap --level full, each on the same freshly made working tree: per file
the same opens (failed ones too), reads, writes, closes, seeks, stats,
unlinks, mkdirs, renames and bytes; per program, the same bytes through
pipes and sockets; per process, the bytes of its R and W rows and of its
untraced descriptors add up to the kernel's rchar and wchar; the task's
output and exit status are its own.  At --level files too, without the
reads, writes and seeks."""
import collections
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_iowrap
from oracle import (assert_rchar_wchar_add_up, assert_same_ops,
                    handles_without_open, iowrap_ops,
                    iowrap_untraced_by_program, strace_ops,
                    strace_untraced_by_program)

pytestmark = pytest.mark.usefixtures("filter_mode")

DATA = Path(__file__).resolve().parent / "data" / "programs"
PY = "/usr/bin/python3"

TREE = ("mkdir -p src/a/b src/c && for i in $(seq 1 30); do "
        "seq 1 $((i*100)) > src/a/f$i; seq $i 500 > src/c/g$i; done && "
        "head -c 300000 /usr/bin/gcc > src/a/b/bin1 && ln -s a/f1 src/link1 "
        "&& find src -exec touch -h -d 2020-01-01 {} +")
BIG = ("for i in 1 2; do cat /usr/bin/gcc /usr/bin/perl; done > big && "
       "seq 1 400000 >> big")

# name -> (what makes the working tree, the task), both run by sh -c in it.
CASES = {
    # Every file older than the index: no racily clean entry, which git
    # reads again or not depending on the second its index was written.
    # One thread packs: two search deltas in an order of their own.  Not
    # git gc: it writes its pid, whose digits vary, to gc.pid.lock.
    "git": (TREE, "git init -q r && cp -a src r/ && cd r && "
            "git config pack.threads 1 && git add . && "
            "git commit -qm one && echo x >> src/a/f1 && "
            "touch -d 2020-01-02 src/a/f1 && git commit -qam two "
            "&& git mv src/c src/d && git commit -qm three && "
            "git log --stat >/dev/null && git repack -adq && "
            "git pack-refs --all && git prune && "
            "git fsck --no-progress && git status --short | wc -l"),
    "xz_threads": (BIG, "xz -T2 -1 -k big && xz -T2 -dc big.xz > big2 && "
                   "cmp big big2 && xz -T2 -t big.xz"),
    "sqlite_wal": ("true", "sqlite3 db 'PRAGMA journal_mode=WAL; "
                   "create table t(a,b); create index ti on t(a);' "
                   ">/dev/null && for i in 1 2 3; do sqlite3 db "
                   "\"insert into t select value, randomblob(200) from "
                   "generate_series(1,500); update t set b=zeroblob(100) "
                   "where a%7=$i;\"; done && sqlite3 db 'PRAGMA "
                   "wal_checkpoint(TRUNCATE); select count(*), "
                   "sum(length(b)) from t; PRAGMA journal_mode=DELETE; "
                   "vacuum;'"),
    "python_pools": ("true", f"{PY} {DATA}/pool.py"),
    "find_xargs": (TREE, "find src -type f -exec wc -c {} + > sizes && "
                   "find src -name 'f*' -print0 | xargs -0 -P2 -n3 md5sum "
                   "| sort > sums && find src -type f -exec sh -c "
                   "'cat \"$1\" >> all' _ {} \\; && wc -c all"),
    "make_ar": (f"sh {DATA}/cproject.sh", "cd p && make -s -j2 && ./prog "
                "&& ar rcs lib.a f1.o f2.o && make -s clean && ls"),
    "cp_mv": (TREE, "cp -r src dup && cp -a src dup2 && mkdir -p x/y && "
              "mv dup x/y/ && mv dup2/a x/ && "
              "cp --reflink=auto src/a/b/bin1 bin1c && "
              "cp --sparse=always src/a/b/bin1 bin1s && "
              "mv x/y/dup x/dupmoved && rm -r dup2"),
    "links_renames": ("seq 1 1000 > base", "for i in $(seq 1 40); do "
                      "ln base h$i; ln -s base s$i; mv h$i r$i; "
                      "cat s$i >> acc; echo $i > t$i.tmp; mv -f t$i.tmp t$i; "
                      "done; for i in $(seq 1 40); do mv r$i q$i; "
                      "done; cat t* | wc -c; ls | wc -l"),
    "perl_awk": (TREE, "perl -e 'for $i (1..50) { open(F, \">>\", "
                 "\"pl.out\") or die; print F \"line $i\\n\" x $i; close F } "
                 "open(G, \"<\", \"pl.out\"); while (<G>) { $n++ } "
                 "open(H, \">\", \"pl.cnt\"); print H \"$n\\n\"; close H; "
                 "rename \"pl.cnt\", \"pl.count\"; "
                 "sysopen(S, \"pl.sys\", 1|64); syswrite(S, \"abc\" x 1000); "
                 "close S; unlink \"pl.sys\";' && "
                 "awk '{ print $1 * 2 > \"aw.out\"; s += $1 } "
                 "END { print s >> \"aw.sum\" }' src/a/f30 && "
                 "awk 'BEGIN { while ((getline l < \"src/a/f20\") > 0) n++; "
                 "print n | \"cat > aw.pipe\" }'"),
    "split_tee": (BIG, "split -b 1M big part_ && split -n 3 big nth_ && "
                  "split -l 30000 big lines_ && "
                  "tee copy1 copy2 < big > copy4 && "
                  "tee -a copy3 < big >/dev/null && "
                  "cmp big copy4"),
    "sort_parallel": ("seq 1 300000 | sed 's/\\(.*\\)/k\\1 \\1/' > in && "
                      "seq 1 100000 >> in",
                      "sort -S 1M --parallel=2 -T . in > out && "
                      "sort -S 1M --parallel=2 -T . -n -k2 -o out2 in && "
                      "sort -m out out > merged && wc -l out out2 merged"),
    "fio_engines": ("true", "fio --minimal --name=ps --ioengine=psync "
                    "--rw=randrw --bs=4k --size=1M --filename=f1 --fsync=4 "
                    ">/dev/null && fio --minimal --name=pv "
                    "--ioengine=pvsync2 --rw=write --bs=8k --size=1M "
                    "--filename=f2 >/dev/null && fio --minimal --name=mm "
                    "--ioengine=mmap --rw=randrw --bs=4k --size=1M "
                    "--filename=f3 >/dev/null && fio --minimal --name=sp "
                    "--ioengine=splice --rw=read --bs=16k --size=1M "
                    "--filename=f2 >/dev/null && fio --minimal --name=va "
                    "--ioengine=sync --rw=readwrite --bs=4k --size=512k "
                    "--filename=f4 --thread >/dev/null && "
                    "fio --minimal --name=pa --ioengine=posixaio "
                    "--rw=randwrite --bs=4k --size=512k --iodepth=4 "
                    "--filename=f5 >/dev/null && ls f1 f2 f3 f4 f5 | wc -l"),
    "archivers": (TREE, "tar cf t.tar src && lz4 -q t.tar t.lz4 && "
                  "lz4 -q -d t.lz4 t2.tar && cmp t.tar t2.tar && "
                  "zip -qr z.zip src && mkdir u && cd u && "
                  "unzip -q ../z.zip && cd .. && diff -r src u/src && "
                  "bzip2 -k t.tar && bzip2 -dc t.tar.bz2 | cmp - t.tar"),
    "busybox": (TREE, "busybox tar cf t.tar src && mkdir o && "
                "busybox tar xf t.tar -C o && busybox cp -r src o/cp && "
                "busybox sort -r src/a/f30 > rs && "
                "busybox md5sum src/a/* | busybox wc -l && "
                "busybox sed s/1/one/ o/src/a/f2 > sed.out && "
                "busybox dd if=src/a/b/bin1 of=dd.out bs=4k conv=notrunc "
                "2>/dev/null"),
    "coreutils": (BIG + " && seq 1 20000 > s",
                  "seq 1 30000 | tac > t1 && tac s > t2 && "
                  "shuf -n 100 --random-source=s s -o sh1 && cp s sh2 && "
                  "shred -n 1 -u sh2 && truncate -s 5M tr1 && "
                  "truncate -s -1K tr1 && install -m 644 s inst && "
                  "tail -c 1000 big > tl && head -c -1000 s > hd && "
                  "csplit -s s 5000 10000 && sed -i s/1/X/ inst && "
                  "perl -pi -e s/2/Y/ inst && "
                  "dd if=big of=dio bs=1M iflag=direct oflag=direct "
                  "2>/dev/null && dd if=s of=sp bs=4k conv=sparse,fsync "
                  "oflag=append 2>/dev/null && tee -p tp < s | "
                  "uniq -c | sort -rn > counts && "
                  "od -An -tx1 -N 1000 big | base64 | fold -w 70 > od.out "
                  "&& paste s s | cut -f2 | sum && fallocate -l 1M fa && "
                  "fallocate -p -o 4096 -l 8192 fa && sync fa"),
    "stdin_redirections": ("seq 1 3000 > in",
                           "cat < in > out1; while read x; do echo $x; "
                           "done < in | tail -1 > out2; exec 3<in; "
                           "head -c 1000 <&3 >/dev/null; "
                           "cat <&3 | wc -c >> out2"),
    "descriptors": ("true", f"{PY} {DATA}/descriptors.py"),
    "copies": ("true", f"{PY} {DATA}/copies.py"),
    "odd_arguments": ("true", f"{PY} {DATA}/odd_arguments.py"),
    "odd_names": ("true", f"{PY} {DATA}/odd_names.py"),
    # Many threads of one process: the JVM's (javac's too), libuv's pool.
    # -Xshare:off: no class data archive, whose mapping varies by run.
    "java": ("true", f"cp {DATA}/JavaIO.java . && javac -d cls JavaIO.java "
             "&& java -Xshare:off -cp cls JavaIO"),
    "node": ("true", f"node {DATA}/node_io.js"),
    # rsync's temporary files and renames, --inplace's rewrites, --delete.
    "rsync": (TREE, "rsync -a src/ r1/ && rsync -a --inplace src/ r2/ && "
              "echo more >> src/a/f3 && rsync -a --delete src/ r1/ && "
              "rsync -a --whole-file src/ r3/"),
    "diff_patch": (TREE, "cp -r src new && seq 1 50 >> new/a/f2 && "
                   "sed -i 3d new/c/g4 && (diff -ruN src new > p.diff; "
                   "true) && cd src && patch -s -p1 < ../p.diff && cd .. && "
                   "diff -r src new"),
    # Named FIFOs between a producer in the background and a reader (as
    # Snakemake's pipe() outputs, or a shell's mkfifo streams).  Each
    # producer writes once, less than PIPE_BUF (4 KiB, atomic), and each
    # reader reads more at a time: one read with it all, one of 0 at
    # the writer's close, whatever the timing.
    "named_fifo": ("seq 1 500 > in && mkfifo f1 f2",
                   "seq 1 1000 > f1 & wc -c < f1 > n1; wait; "
                   "gzip -c in > f1 & gzip -dc < f1 > back; wait; "
                   "tee copy < in > f2 & cat f2 > out2; wait; "
                   "cmp in back && cmp in out2 && cmp in copy && cat n1"),
}

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C", "TZ": "UTC",
       "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
       "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
       "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
TOOLS = ("git", "xz", "sqlite3", "fio", "lz4", "zip", "unzip", "bzip2",
         "busybox", "perl", "awk", "make", "cc", "ar", "tar", "javac",
         "java", "node", "rsync", "diff", "patch")
# Handles with no O row, each case: descriptors.py's child receives two
# files over a socket after its parent closed them (docs/tracer.md).
HANDLES_WITHOUT_OPEN = {"descriptors": 2}
FULL_ONLY = ("R", "W", "Rbytes", "Wbytes", "L")
# Programs whose bytes through pipes differ from run to run: a spawned
# multiprocessing child reads its parent's pickled state, pids and all;
# make -j2 trades as many jobserver tokens as its jobs' pace asks for.
UNTRACED_VARIES = {"python_pools": (os.path.realpath(PY),),
                   "make_ar": (os.path.realpath("/usr/bin/make"),)}


def fresh_tree(workdir, setup, env):
    """The working tree the case starts from, made again from nothing."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir()
    subprocess.run(["sh", "-c", setup], cwd=workdir, env=env, check=True,
                   capture_output=True)


def assert_untraced_bytes_match(trace, prefix, varies):
    """Per program, the bytes moved through pipes and sockets are what
    strace saw moved through them: the R and W rows of every file, also
    outside the tree, are all there (a missing one would be counted as
    untraced).  Not for a program that read or wrote a file of /proc,
    /sys or /dev (their contents, and timings written to /dev/null, vary
    from run to run), nor for one whose pipes carry pids (varies)."""
    want, special = strace_untraced_by_program(prefix)
    got = iowrap_untraced_by_program(trace)
    left_out = special | set(varies)
    assert {p: v for p, v in got.items() if p not in left_out} == \
        {p: v for p, v in want.items() if p not in left_out}


def traced_run(level, cmd, workdir, setup, env, outdir, native):
    """iowrap --level LEVEL -- sh -c CMD on a fresh tree, whose output and
    exit status must be the native run's."""
    fresh_tree(workdir, setup, env)
    t = run_iowrap(["--level", level, "--", "sh", "-c", cmd],
                   outdir=outdir, cwd=workdir, env=env,
                   stdin=subprocess.DEVNULL, text=False)
    assert (t.returncode, t.stdout) == (native.returncode, native.stdout), \
        t.stderr
    return t


def files_level(ops):
    """What --level files records of ops: no reads, writes nor seeks."""
    kept = {path: collections.Counter({kind: n for kind, n in c.items()
                                       if kind not in FULL_ONLY})
            for path, c in ops.items()}
    return {path: c for path, c in kept.items() if c}


def missing_tools(cmd):
    return [tool for tool in TOOLS + ("strace",)
            if (tool == "strace" or re.search(rf"(^|[\s|;&(]){tool}\s", cmd))
            and not shutil.which(tool)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_programs_match_strace(name, tmp_path):
    setup, cmd = CASES[name]
    missing = missing_tools(cmd)
    if missing:
        pytest.skip(f"not installed: {' '.join(missing)}")
    workdir = tmp_path / "w"
    home = tmp_path / "home"
    home.mkdir()
    env = dict(ENV, HOME=str(home))
    fresh_tree(workdir, setup, env)
    native = subprocess.run(["sh", "-c", cmd], cwd=workdir, env=env,
                            capture_output=True, stdin=subprocess.DEVNULL)
    assert native.returncode == 0, native.stderr
    fresh_tree(workdir, setup, env)
    want = strace_ops(["sh", "-c", cmd], workdir, tmp_path / "st", env=env,
                      stdin=subprocess.DEVNULL)
    t = traced_run("full", cmd, workdir, setup, env, tmp_path / "t", native)
    got, rows = iowrap_ops(t, workdir)
    assert_same_ops(got, want)
    assert len(handles_without_open(t, rows, workdir)) == \
        HANDLES_WITHOUT_OPEN.get(name, 0)
    assert_rchar_wchar_add_up(t, rows)
    assert_untraced_bytes_match(t, tmp_path / "st",
                                UNTRACED_VARIES.get(name, ()))
    tracing = t.summary["tracing"]
    assert tracing["complete"] and not tracing.get("problems"), tracing
    # --level files: the same, without reads, writes and seeks.
    t = traced_run("files", cmd, workdir, setup, env, tmp_path / "tf",
                   native)
    assert_same_ops(iowrap_ops(t, workdir)[0], files_level(want))
