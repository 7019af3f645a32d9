"""Descriptor tricks for tests/test_programs.py: 40 files open at once,
dup2 to high numbers, F_DUPFD, close_range, SCM_RIGHTS to a child, memfd,
reopening through /proc/self/fd and /dev/fd, threads sharing an O_APPEND
descriptor, preadv2/pwritev2 at offset -1, a descriptor read across exec,
posix_spawn with a dup2 file action.  Writes in the current directory."""
import array
import fcntl
import os
import socket
import subprocess
import threading

NEW = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


def write_inputs():
    for i in range(40):
        with open(f"in{i}", "wb") as f:
            f.write(bytes((k * (i + 1)) & 255 for k in range(3000 + i * 97)))


def many_and_high():
    fds = [os.open(f"in{i}", os.O_RDONLY) for i in range(40)]
    for fd in reversed(fds):
        os.read(fd, 1000)
    for k, fd in enumerate(fds[:12]):
        high = 100 + k * 37
        os.dup2(fd, high)
        os.read(high, 500)
        os.close(high)
    n = os.open("in0", os.O_RDONLY)
    os.dup2(n, 1000)
    os.read(1000, 77)
    os.lseek(1000, 0, 0)
    os.read(n, 10)
    os.read(fcntl.fcntl(n, fcntl.F_DUPFD, 500), 33)
    os.read(fcntl.fcntl(n, fcntl.F_DUPFD_CLOEXEC, 700), 44)
    for fd in range(3, 61):  # strace cannot tell what close_range closed
        try:
            os.close(fd)
        except OSError:
            pass
    for fd in fds[37:]:
        try:
            os.read(fd, 10)
        except OSError:
            pass


def receive_and_use(sock, go):
    """The child: reads the first descriptor, reads and writes the
    second, both received once the sender has closed its own."""
    os.read(go, 1)
    _, ancillary, _, _ = sock.recvmsg(10, socket.CMSG_SPACE(4 * 2))
    fds = array.array("i")
    fds.frombytes(ancillary[0][2][:8])
    for fd in fds:
        os.read(fd, 1234)
    os.write(fds[1], b"via scm " * 50)
    os._exit(0)


def send_to_a_child():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    wait, go = os.pipe()
    pid = os.fork()
    if pid == 0:
        a.close()
        receive_and_use(b, wait)
    b.close()
    r = os.open("in5", os.O_RDONLY)
    w = os.open("scm_out", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                        array.array("i", [r, w]).tobytes())])
    os.close(r)
    os.close(w)
    os.write(go, b"g")
    os.waitpid(pid, 0)


def other_names():
    m = os.memfd_create("mymem")
    os.write(m, b"memfd data " * 100)
    os.lseek(m, 0, 0)
    os.read(m, 300)
    f = os.open("in7", os.O_RDONLY)
    os.read(os.open(f"/proc/self/fd/{f}", os.O_RDONLY), 999)
    os.read(os.open(f"/dev/fd/{f}", os.O_RDONLY), 888)


def threads_sharing():
    out = os.open("thr_app", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    src = os.open("in9", os.O_RDONLY)

    def work(k):
        for j in range(50):
            os.write(out, f"{k}:{j}\n".encode() * 3)
            os.pread(src, 100, j * 10)
            os.read(src, 7)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def vectors_at_the_position():
    p = os.open("pv", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.pwritev(p, [b"a" * 100], -1)
    os.pwritev(p, [b"b" * 50], -1, 0)
    os.lseek(p, 0, 0)
    os.preadv(p, [bytearray(60)], -1)
    os.preadv(p, [bytearray(60)], -1, 0)


def across_exec():
    os.dup2(os.open("in11", os.O_RDONLY), 5)
    subprocess.run(["/bin/sh", "-c", "cat <&5 > from_exec; "
                    "head -c 100 /dev/fd/5 >/dev/null; exec 7<in12; "
                    "read x <&7; cat <&7 >> from_exec"], close_fds=False)
    out = os.open("spawned", NEW, 0o644)
    pid = os.posix_spawn("/bin/cat", ["cat", "in13"], os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, out, 1)])
    os.waitpid(pid, 0)


write_inputs()
many_and_high()
send_to_a_child()
other_names()
threads_sharing()
vectors_at_the_position()
across_exec()
print("done")
