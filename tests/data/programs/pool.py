"""multiprocessing pools, forked and spawned, writing and reading files,
for tests/test_programs.py."""
import multiprocessing
import os


def work(i):
    with open(f"out/p{i}.txt", "w") as f:
        for k in range(2000):
            f.write(f"{i} {k}\n")
    with open(f"out/p{i}.txt") as f:
        return len(f.read())


if __name__ == "__main__":
    os.makedirs("out", exist_ok=True)
    for method in ("fork", "spawn"):
        pool = multiprocessing.get_context(method).Pool(3)
        print(sum(pool.map(work, range(8))))
        pool.close()
        pool.join()
