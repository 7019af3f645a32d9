"""Calls that move data between descriptors, for tests/test_programs.py:
sendfile (to a file and a socket, with an offset), copy_file_range, splice
through a pipe, O_APPEND with pwrite/writev/RWF_APPEND, readv/preadv(2),
mmap writes, O_TMPFILE linked through /proc/self/fd, renameat2 exchange
and noreplace.  Writes in the current directory."""
import ctypes
import mmap
import os
import random
import socket
import sys

libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
NEW = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


def sendfiles():
    s = os.open("src", os.O_RDONLY)
    t = os.open("dst_sf", NEW, 0o644)
    while os.sendfile(t, s, None, 30000):
        pass
    os.sendfile(t, s, 10, 5000)
    os.close(t)
    a, b = socket.socketpair()
    os.sendfile(a.fileno(), s, 0, 4000)
    b.recv(5000)
    os.close(s)


def copy_file_ranges():
    s = os.open("src", os.O_RDONLY)
    t = os.open("dst_cfr", NEW, 0o644)
    while os.copy_file_range(s, t, 40000):
        pass
    os.copy_file_range(s, t, 1000, 5, 200000)
    os.close(s)
    os.close(t)


def splices():
    s = os.open("src", os.O_RDONLY)
    t = os.open("dst_sp", NEW, 0o644)
    r, w = os.pipe()
    while True:
        k = os.splice(s, w, 16384)
        if k == 0:
            break
        while k:
            k -= os.splice(r, t, k)
    os.close(s)
    os.close(t)


def appends_and_vectors():
    t = os.open("app", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(t, b"hello\n")
    os.pwrite(t, b"abc", 0)
    os.writev(t, [b"x" * 10, b"y" * 20])
    os.close(t)
    t = os.open("app", os.O_RDWR)
    os.pwritev(t, [b"1" * 7, b"2" * 9], 3)
    os.pwritev(t, [b"Z" * 11], 0, os.RWF_APPEND)
    os.lseek(t, 0, 0)
    os.readv(t, [bytearray(5), bytearray(8)])
    os.preadv(t, [bytearray(4), bytearray(4)], 2)
    os.preadv(t, [bytearray(4)], 1, os.RWF_HIPRI)
    os.close(t)


def mmap_writes():
    t = os.open("mm", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.ftruncate(t, 65536)
    m = mmap.mmap(t, 65536)
    m[0:100] = b"m" * 100
    m.flush()
    m.close()
    os.fsync(t)
    os.close(t)


def tmpfile_linked():
    t = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o644)
    os.write(t, b"tmpfile data\n" * 100)
    AT_SYMLINK_FOLLOW = 0x400
    libc.linkat(AT_FDCWD, f"/proc/self/fd/{t}".encode(), AT_FDCWD,
                b"tmplinked", AT_SYMLINK_FOLLOW)
    os.write(t, b"more\n")
    os.close(t)


def renames():
    with open("x1", "w") as f:
        f.write("one")
    with open("x2", "w") as f:
        f.write("two!")
    RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
    results = [libc.renameat2(AT_FDCWD, b"x1", AT_FDCWD, b"x2",
                              RENAME_EXCHANGE),
               libc.renameat2(AT_FDCWD, b"x1", AT_FDCWD, b"x2",
                              RENAME_NOREPLACE),
               libc.renameat2(AT_FDCWD, b"x1", AT_FDCWD, b"x3",
                              RENAME_NOREPLACE)]
    print(*results)
    for name in ("x2", "x3"):
        with open(name) as f:
            f.read()


with open("src", "wb") as f:
    f.write(random.Random(1).randbytes(100000))
sendfiles()
copy_file_ranges()
splices()
appends_and_vectors()
mmap_writes()
tmpfile_linked()
renames()
sys.stdout.flush()
