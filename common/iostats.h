/* SPDX-License-Identifier: MIT */
/*
 * Darshan-style counters per file and, per mount and filesystem type,
 * log2 request-size histograms with summed latency (the eBPF workload
 * characterisation paper's metrics), built from the io_events as they are
 * written.  Pure: unit-tested without a tracer.
 */
#ifndef IOWRAP_IOSTATS_H
#define IOWRAP_IOSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access_seq.h"
#include "record.h"
#include "strbuf.h"

/* Darshan's access-size buckets: 0-100, 100-1K, ... 1G+. */
#define IOSTATS_SIZE_BUCKETS 10
/* log2 buckets: bucket k holds sizes in [2^k, 2^(k+1)); bucket 0 also 0. */
#define IOSTATS_LOG2_BUCKETS 41
#define IOSTATS_SIZES_TRACKED 64
/* Darshan keeps 32 distinct strides while it runs. */
#define IOSTATS_STRIDES_TRACKED 32

/* A log2 histogram's bucket that holds anything: sizes in
 * [2^bucket, 2^(bucket+1)), bucket 0 also 0. */
struct log2_bin {
	uint64_t count, time_us; /* and their summed latency */
	uint32_t bucket;
};

/* The bins in bucket order, grown as they come: a file's reads or writes
 * fall in one to three of the 41, so a file keeps no 41-bucket arrays. */
struct log2_hist {
	struct log2_bin *bins;
	uint32_t n, alloc;
};

struct rw_stats {
	uint64_t ops, bytes;
	struct access_seq pos;
	uint64_t size_bucket[IOSTATS_SIZE_BUCKETS];
	int64_t first_us, last_us;
	uint64_t time_us; /* summed latency */
	int64_t max_time_us; /* the slowest one's latency; -1: none */
	uint64_t max_time_size; /* and its bytes (the first such) */
	struct log2_hist log2;
};

struct size_count {
	uint64_t size, count;
};

/* Distinct values and how often each came, in the order they first did:
 * grown as they come (most files see one to three), up to a limit. */
struct value_counts {
	struct size_count *list;
	uint32_t n, alloc;
};

/* A file's reads and writes: about 400 bytes, so made at its first (most
 * files a task touches are only opened or stat'ed). */
struct file_rw {
	struct rw_stats read, write;
	struct value_counts sizes;
	/* Gaps before forward accesses, reads and writes together. */
	struct value_counts strides;
};

struct file_stats {
	bool used;
	uint64_t opens, stats, seeks, fsyncs, mmaps;
	uint64_t rw_switches;
	char last_rw; /* 'R', 'W' or 0 */
	uint64_t meta_time_us;
	/* Darshan's F_OPEN_START/END and F_CLOSE_START/END timestamps:
	 * the first one's start, the last one's end; -1: none. */
	int64_t first_open_us, last_open_us, first_close_us, last_close_us;
	struct file_rw *rw; /* NULL: never read nor written */
};

struct iostats {
	struct file_stats *files; /* index: inode id */
	size_t nfiles;
};

void iostats_init(struct iostats *st);
void iostats_release(struct iostats *st);
void iostats_add(struct iostats *st, const struct io_event *ev);
/* A file as the summary lists it. */
struct file_entry {
	uint64_t id;
	char *path; /* the first path it was opened under */
	char *mount_point, *fstype;
};

/* Per mount point and filesystem type. */
struct mount_stats {
	char *mount_point, *fstype;
	uint64_t files, opens, stats;
	struct rw_stats read, write;
	uint64_t meta_time_us;
};

/* What summary.json says of the task's files (--level files/full). */
struct io_summary {
	bool enabled;
	struct iostats stats;
	struct file_entry *files;
	size_t nfiles;
	struct mount_stats *mounts;
	size_t nmounts;
};

void io_summary_init(struct io_summary *io);
void io_summary_release(struct io_summary *io);
/* Lists a file (files.csv's row) and adds its counters to its mount. */
void io_summary_add_file(struct io_summary *io, const struct file_record *rec);

/* NULL if the inode id was never seen. */
const struct file_stats *iostats_file(const struct iostats *st, uint64_t id);
/* Its reads' and writes' counters (empty ones if it had none). */
const struct rw_stats *file_reads(const struct file_stats *f);
const struct rw_stats *file_writes(const struct file_stats *f);
/* The n most common access sizes, most common first (ties: smaller). */
size_t iostats_top_sizes(const struct file_stats *f, struct size_count *out,
			 size_t n);
/* The n most common strides, in the same order. */
size_t iostats_top_strides(const struct file_stats *f, struct size_count *out,
			   size_t n);
/* Adds src's read and write histograms into dst's. */
void iostats_merge_rw(struct rw_stats *dst, const struct rw_stats *src);
void rw_stats_init(struct rw_stats *rw);
void rw_stats_release(struct rw_stats *rw);
int iostats_size_bucket(uint64_t size);
int iostats_log2_bucket(uint64_t size);
extern const char *const iostats_bucket_names[IOSTATS_SIZE_BUCKETS];

#endif
