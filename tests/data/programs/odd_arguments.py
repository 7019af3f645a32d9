"""Arguments the kernel reads its own way, for tests/test_programs.py:
descriptors with high bits set (the kernel takes the low 32), descriptor
numbers up to the file limit, sendfile and copy_file_range onto the same
file, empty and negative requests, a read into an unmapped buffer, a read
of a directory.  Writes in the current directory; what the calls return
goes to stderr."""
import ctypes
import os
import resource
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_read, SYS_write, SYS_pread64, SYS_sendfile = 0, 1, 17, 40


def say(*what):
    print(*what, file=sys.stderr)


def attempt(what, call, *args):
    try:
        say(what, call(*args))
    except OSError as e:
        say(what, e)


def high_bits(fd, w):
    """A syscall's int argument is the register's low 32 bits."""
    buf = ctypes.create_string_buffer(100000)
    say(libc.syscall(SYS_read, ctypes.c_long((1 << 32) | fd), buf, 1000),
        libc.syscall(SYS_pread64, ctypes.c_long((7 << 32) | fd), buf, 2000,
                     5),
        libc.syscall(SYS_write, ctypes.c_long((3 << 32) | w), buf, 1500),
        libc.syscall(SYS_sendfile, ctypes.c_long((1 << 40) | w),
                     ctypes.c_long((1 << 33) | fd), None, 700))


def high_numbers(fd):
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (OSError, ValueError) as e:
        say(e)
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    for n in (1023, 1024, 4095, 4096, 8191, soft - 1):
        try:
            os.dup2(fd, n)
            os.pread(n, 333, 0)
            os.write(n, b"z" * 10)
            os.close(n)
        except OSError as e:
            say(n, e)


def onto_itself(fd, w):
    s = os.open("c", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(s, b"q" * 5000)
    os.lseek(s, 0, 0)
    attempt("self sendfile", os.sendfile, s, s, None, 1000)
    attempt("self copy_file_range", os.copy_file_range, s, s, 1000, 0,
            10000)
    attempt("copy_file_range of 0", os.copy_file_range, fd, w, 0)


def empty_and_bad(fd, w):
    os.readv(fd, [])
    os.sendfile(w, fd, None, 0)
    attempt("pread at -5", os.pread, fd, 10, -5)
    say("write of NULL", libc.syscall(SYS_write, ctypes.c_long(w), None, 10))
    say("read into page 0",
        libc.syscall(SYS_read, ctypes.c_long(fd), ctypes.c_void_p(16), 10))
    d = os.open(".", os.O_RDONLY)
    attempt("read of a directory", os.read, d, 10)


with open("a", "wb") as f:
    f.write(bytes(range(256)) * 400)
fd = os.open("a", os.O_RDWR)
w = os.open("b", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
high_bits(fd, w)
high_numbers(fd)
onto_itself(fd, w)
empty_and_bad(fd, w)
