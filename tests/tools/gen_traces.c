// SPDX-License-Identifier: MIT
/*
 * gen-traces DIR TASKS EVENTS_PER_TASK
 *
 * Synthetic `iowrap --level full` traces for bench/report_scale.py: TASKS
 * trace directories DIR/tNNNNN (summary.json, procs.csv, files.csv, io.csv)
 * of EVENTS_PER_TASK io.csv rows each, written in big buffered chunks.
 * Shapes as a pipeline's tasks have them: each task opens a few files,
 * reads a reference every task shares (sequential, 64 KiB), its input (the
 * previous task's output, sequential, 4 KiB), an index at random offsets
 * (512 B), and writes its output sequentially (4 KiB), with a stat now and
 * then.  Deterministic: the same arguments give the same bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define T0_US 1700000000000000LL /* the workflow's start */
#define TASK_GAP_US 200000 /* between task starts */
#define EVENT_US 20 /* between events of a task */

enum { F_REF, F_IN, F_IDX, F_OUT, NFILES };

static const char *const kind_name[NFILES] = { "ref.fa", "in", "idx", "out" };

struct gen {
	const char *dir;
	unsigned long tasks, events;
	uint64_t rng;
};

static uint64_t next_rand(struct gen *g)
{
	g->rng = g->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return g->rng >> 33;
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "gen-traces: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static FILE *create(const char *tdir, const char *name, char *buf, size_t bufsz)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	f = fopen(path, "wx");
	if (!f)
		die("cannot create", path);
	setvbuf(f, buf, _IOFBF, bufsz);
	return f;
}

static void finish(FILE *f, const char *name)
{
	if (ferror(f) || fclose(f) != 0)
		die("cannot write", name);
}

/* The path task t uses for file kind k; the input is task t-1's output. */
static void file_path(char *out, size_t n, unsigned long t, int k)
{
	if (k == F_REF)
		snprintf(out, n, "/data/ref.fa");
	else if (k == F_IN && t == 0)
		snprintf(out, n, "/data/input.dat");
	else
		snprintf(out, n, "/data/%s_%05lu.dat",
			 kind_name[k == F_IN ? 3 : k], k == F_IN ? t - 1 : t);
}

static void io_row(FILE *f, int64_t us, int k, char type, int64_t result,
		   int64_t offset, unsigned flags, const char *path)
{
	fprintf(f,
		"%" PRId64 ".%06" PRId64 ",%" PRId64 ".%06" PRId64
		",100,0.000000,0.000000,0.000000,0.000000,%d,%c,%" PRId64
		",%d,%" PRId64 ",%" PRId64 ",0x%08x,%s,\n",
		us / 1000000, us % 1000000, (us + 8) / 1000000,
		(us + 8) % 1000000, k + 1, type, result, k + 3, offset,
		result > 0 ? result : 0, flags, path);
}

/* One data event: the file kind and its size follow a fixed mix. */
static void data_row(struct gen *g, FILE *f, int64_t us, int64_t *pos)
{
	uint64_t r = next_rand(g) % 100;

	if (r < 30) {
		io_row(f, us, F_REF, 'R', 65536, pos[F_REF], 0, "");
		pos[F_REF] += 65536;
	} else if (r < 55) {
		io_row(f, us, F_IN, 'R', 4096, pos[F_IN], 0, "");
		pos[F_IN] += 4096;
	} else if (r < 70) {
		io_row(f, us, F_IDX, 'R', 512,
		       (int64_t)(next_rand(g) % 200000) * 512, 0, "");
	} else if (r < 97) {
		io_row(f, us, F_OUT, 'W', 4096, pos[F_OUT], 0, "");
		pos[F_OUT] += 4096;
	} else {
		io_row(f, us, F_IDX, 'S', 0, -1, 0, "");
	}
}

static void write_io(struct gen *g, const char *tdir, unsigned long t,
		     int64_t start, char *buf, size_t bufsz)
{
	FILE *f = create(tdir, "io.csv", buf, bufsz);
	int64_t pos[NFILES] = { 0 };
	char path[256];
	unsigned long e = 0;

	fputs("time_start,time_end,pid,utime_start,utime_end,stime_start,"
	      "stime_end,inode,type,result,handle,offset,size,flags,path,path2\n",
	      f);
	for (int k = 0; k < NFILES && e < g->events; k++, e++) {
		file_path(path, sizeof(path), t, k);
		io_row(f, start + (int64_t)e * EVENT_US, k, 'O', k + 3, 0,
		       k == F_OUT ? 0x241 : 0, path);
	}
	for (; e < g->events; e++)
		data_row(g, f, start + (int64_t)e * EVENT_US, pos);
	finish(f, "io.csv");
}

static void write_files(const char *tdir, unsigned long t, char *buf,
			size_t bufsz)
{
	FILE *f = create(tdir, "files.csv", buf, bufsz);
	char path[256];

	fputs("inode,mount_point,fstype,size_first_open,size_last_close,paths\n",
	      f);
	for (int k = 0; k < NFILES; k++) {
		file_path(path, sizeof(path), t, k);
		fprintf(f, "%d,/data,ext4,%d,%d,%s\n", k + 1,
			k == F_OUT ? 0 : 1 << 30, 1 << 30, path);
	}
	finish(f, "files.csv");
}

static void write_meta(const char *tdir, unsigned long t, int64_t start,
		       int64_t end, char *buf, size_t bufsz)
{
	FILE *f = create(tdir, "summary.json", buf, bufsz);

	fprintf(f,
		"{\"schema\":\"iowrap-summary/1\",\"command\":[\"step\",\"%lu\"],"
		"\"start_time_s\":%" PRId64 ".%06" PRId64
		",\"end_time_s\":%" PRId64 ".%06" PRId64
		",\"task\":{\"key\":\"t%05lu\",\"name\":\"STEP (%lu)\","
		"\"engine\":\"nextflow\",\"nextflow\":{\"process\":\"STEP_%lu\"}},"
		"\"exit\":{\"code\":0},\"tracing\":{\"complete\":true,"
		"\"level\":\"full\"},\"totals\":{\"cpu_total_s\":1.0,"
		"\"peak_rss_kib\":10240,\"processes\":1},"
		"\"host\":{\"hostname\":\"node%02lu\"},\"mounts\":[]}\n",
		t, start / 1000000, start % 1000000, end / 1000000,
		end % 1000000, t, t, t % 8, t % 16);
	finish(f, "summary.json");
	f = create(tdir, "procs.csv", buf, bufsz);
	fprintf(f,
		"time,ppid,pid,end_time,cpu_s,vmhwm_kib\n"
		"%" PRId64 ".%06" PRId64 ",1,100,%" PRId64 ".%06" PRId64
		",1.0,10240\n",
		start / 1000000, start % 1000000, end / 1000000, end % 1000000);
	finish(f, "procs.csv");
}

int main(int argc, char **argv)
{
	static char buf[4 << 20];
	struct gen g = { .rng = 42 };
	char tdir[4096];

	if (argc != 4) {
		fputs("usage: gen-traces DIR TASKS EVENTS_PER_TASK\n", stderr);
		return 2;
	}
	g.dir = argv[1];
	g.tasks = strtoul(argv[2], NULL, 10);
	g.events = strtoul(argv[3], NULL, 10);
	if (mkdir(g.dir, 0755) < 0 && errno != EEXIST)
		die("cannot create", g.dir);
	for (unsigned long t = 0; t < g.tasks; t++) {
		int64_t start = T0_US + (int64_t)t * TASK_GAP_US;
		int64_t end = start + (int64_t)g.events * EVENT_US + 1000;

		snprintf(tdir, sizeof(tdir), "%s/t%05lu", g.dir, t);
		if (mkdir(tdir, 0755) < 0)
			die("cannot create", tdir);
		write_meta(tdir, t, start, end, buf, sizeof(buf));
		write_files(tdir, t, buf, sizeof(buf));
		write_io(&g, tdir, t, start, buf, sizeof(buf));
	}
	return 0;
}
