"""Names that strace writes escaped, for tests/test_programs.py: UTF-8,
a byte that is not UTF-8, a newline, a tab, quotes, a comma, a backslash
and ">" (which ends strace -y's names), in a directory name that becomes
the cwd and in file names, opened by this process, sh, cat and cp."""
import os
import subprocess

DIR = b'd\xc3\xa9 x,"y>z\\w\tq'
NAME = b"f\nl\xff m"
COPY = b"c,'" + NAME

os.mkdir(DIR)
os.chdir(DIR)
with open(NAME, "wb") as f:
    f.write(b"hello\n" * 100)
# The shell opens the copy: a file python hands to a child is closed there
# by close_range, which the strace oracle does not follow.
subprocess.run([b"sh", b"-c", b'cat "$1" > "$2"', b"sh", NAME, COPY],
               check=True)
subprocess.run([b"cp", NAME, NAME + b".2"], check=True)
os.rename(NAME + b".2", b'"q"')
os.symlink(NAME, b"s\\l")
with open(b"s\\l", "rb") as f:
    f.read()
os.stat(NAME)
os.lstat(b"s\\l")
os.unlink(COPY)
os.chdir(b"..")
with open(DIR + b"/" + NAME, "ab") as f:
    f.write(b"more")
os.stat(DIR + b'/"q"')
