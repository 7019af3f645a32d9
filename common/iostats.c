// SPDX-License-Identifier: MIT
#include "iostats.h"

#include <stdlib.h>
#include <string.h>

#include "argv.h"
#include "util.h"

const char *const iostats_bucket_names[IOSTATS_SIZE_BUCKETS] = {
	"0_100", "100_1K", "1K_10K",   "10K_100K", "100K_1M",
	"1M_4M", "4M_10M", "10M_100M", "100M_1G",  "1G_PLUS",
};

void iostats_init(struct iostats *st)
{
	memset(st, 0, sizeof(*st));
}

static void file_rw_free(struct file_rw *rw)
{
	if (!rw)
		return;
	rw_stats_release(&rw->read);
	rw_stats_release(&rw->write);
	free(rw->sizes.list);
	free(rw->strides.list);
	free(rw);
}

void iostats_release(struct iostats *st)
{
	for (size_t i = 0; i < st->nfiles; i++)
		file_rw_free(st->files[i].rw);
	free(st->files);
	memset(st, 0, sizeof(*st));
}

void rw_stats_init(struct rw_stats *rw)
{
	memset(rw, 0, sizeof(*rw));
	rw->pos = (struct access_seq)ACCESS_SEQ_INIT;
	rw->first_us = -1;
	rw->last_us = -1;
	rw->max_time_us = -1;
}

void rw_stats_release(struct rw_stats *rw)
{
	free(rw->log2.bins);
	rw->log2 = (struct log2_hist){ 0 };
}

/* Adds to bucket's bin, made in its place in the order if new. */
static void log2_add(struct log2_hist *h, uint32_t bucket, uint64_t count,
		     uint64_t time_us)
{
	uint32_t i = 0;

	while (i < h->n && h->bins[i].bucket < bucket)
		i++;
	if (i == h->n || h->bins[i].bucket != bucket) {
		if (h->n == h->alloc) {
			h->alloc = h->alloc ? h->alloc * 2 : 2;
			h->bins =
				xrealloc(h->bins, h->alloc * sizeof(*h->bins));
		}
		memmove(&h->bins[i + 1], &h->bins[i],
			(h->n - i) * sizeof(*h->bins));
		h->bins[i] = (struct log2_bin){ .bucket = bucket };
		h->n++;
	}
	h->bins[i].count += count;
	h->bins[i].time_us += time_us;
}

static struct file_stats *file_for(struct iostats *st, uint64_t id)
{
	struct file_stats *f;

	if (id >= st->nfiles) {
		size_t n = st->nfiles ? st->nfiles : 64;

		while (n <= id)
			n *= 2;
		st->files = xrealloc(st->files, n * sizeof(*st->files));
		memset(st->files + st->nfiles, 0,
		       (n - st->nfiles) * sizeof(*st->files));
		st->nfiles = n;
	}
	f = &st->files[id];
	if (!f->used) {
		f->used = true;
		f->first_open_us = f->last_open_us = -1;
		f->first_close_us = f->last_close_us = -1;
	}
	return f;
}

int iostats_size_bucket(uint64_t size)
{
	static const uint64_t upper[IOSTATS_SIZE_BUCKETS - 1] = {
		100,	 1024,	   10240,     102400,	  1048576,
		4194304, 10485760, 104857600, 1073741824,
	};
	int b = 0;

	while (b < IOSTATS_SIZE_BUCKETS - 1 && size > upper[b])
		b++;
	return b;
}

int iostats_log2_bucket(uint64_t size)
{
	int b = 0;

	while (size > 1 && b < IOSTATS_LOG2_BUCKETS - 1) {
		size >>= 1;
		b++;
	}
	return b;
}

static void count_value(struct value_counts *vc, uint32_t max, uint64_t value)
{
	for (uint32_t i = 0; i < vc->n; i++) {
		if (vc->list[i].size == value) {
			vc->list[i].count++;
			return;
		}
	}
	/* Past the limit new values are not ranked (documented). */
	if (vc->n == max)
		return;
	if (vc->n == vc->alloc) {
		vc->alloc = vc->alloc ? vc->alloc * 2 : 4;
		if (vc->alloc > max)
			vc->alloc = max;
		vc->list = xrealloc(vc->list, vc->alloc * sizeof(*vc->list));
	}
	vc->list[vc->n++] = (struct size_count){ value, 1 };
}

/*
 * Darshan's STRIDE: how far past the end of the previous access of the
 * same kind this one starts, 0 for a consecutive one.  Darshan counts the
 * first access and backward ones as stride 0 too; they have no stride
 * here, so that 0 means consecutive only.
 */
static void count_stride(struct file_rw *f, const struct access_seq *pos,
			 int64_t offset)
{
	if (offset < 0 || pos->last_end < 0 || offset < pos->last_end)
		return;
	count_value(&f->strides, IOSTATS_STRIDES_TRACKED,
		    (uint64_t)(offset - pos->last_end));
}

/* Darshan's F_MAX_READ_TIME and MAX_READ_TIME_SIZE (and writes'): the
 * first of the slowest. */
static void note_slowest(struct rw_stats *rw, int64_t latency, uint64_t bytes)
{
	if (latency > rw->max_time_us) {
		rw->max_time_us = latency;
		rw->max_time_size = bytes;
	}
}

static struct file_rw *rw_of(struct file_stats *f)
{
	if (!f->rw) {
		f->rw = xcalloc(1, sizeof(*f->rw));
		rw_stats_init(&f->rw->read);
		rw_stats_init(&f->rw->write);
	}
	return f->rw;
}

/* What rw_stats_init makes: a file never read or written. */
static const struct rw_stats no_rw = {
	.pos = ACCESS_SEQ_INIT,
	.first_us = -1,
	.last_us = -1,
	.max_time_us = -1,
};

const struct rw_stats *file_reads(const struct file_stats *f)
{
	return f->rw ? &f->rw->read : &no_rw;
}

const struct rw_stats *file_writes(const struct file_stats *f)
{
	return f->rw ? &f->rw->write : &no_rw;
}

/* One read or write of ev->result bytes at ev->offset. */
static void add_rw(struct file_rw *f, struct rw_stats *rw,
		   const struct io_event *ev)
{
	uint64_t bytes = (uint64_t)ev->result;
	int64_t latency = ev->end_us - ev->start_us;
	int lb = iostats_log2_bucket(bytes);

	rw->ops++;
	rw->bytes += bytes;
	rw->size_bucket[iostats_size_bucket(bytes)]++;
	if (latency < 0)
		latency = 0;
	rw->time_us += (uint64_t)latency;
	log2_add(&rw->log2, (uint32_t)lb, 1, (uint64_t)latency);
	note_slowest(rw, latency, bytes);
	if (rw->first_us < 0)
		rw->first_us = ev->start_us;
	rw->last_us = ev->end_us;
	count_stride(f, &rw->pos, ev->offset);
	access_seq_add(&rw->pos, ev->offset, bytes);
	count_value(&f->sizes, IOSTATS_SIZES_TRACKED, bytes);
}

/* The first one's start and the last one's end. */
static void note_span(int64_t *first_us, int64_t *last_us,
		      const struct io_event *ev)
{
	if (*first_us < 0)
		*first_us = ev->start_us;
	*last_us = ev->end_us;
}

void iostats_add(struct iostats *st, const struct io_event *ev)
{
	struct file_rw *rw;
	struct file_stats *f;
	int64_t latency = ev->end_us - ev->start_us;

	if (!ev->inode_id)
		return;
	f = file_for(st, ev->inode_id);
	if (latency < 0)
		latency = 0;
	switch (ev->type) {
	case 'R':
	case 'W':
		if (ev->result < 0)
			return;
		if (f->last_rw && f->last_rw != ev->type)
			f->rw_switches++;
		f->last_rw = ev->type;
		rw = rw_of(f);
		add_rw(rw, ev->type == 'R' ? &rw->read : &rw->write, ev);
		return;
	case 'O':
		if (ev->result < 0)
			break;
		f->opens++;
		note_span(&f->first_open_us, &f->last_open_us, ev);
		break;
	case 'C':
		/* The descriptor is gone whatever close returns. */
		note_span(&f->first_close_us, &f->last_close_us, ev);
		break;
	case 'S':
		f->stats++;
		break;
	case 'L':
		f->seeks += ev->result >= 0; /* Darshan's POSIX_SEEKS */
		break;
	case 'F':
		f->fsyncs++;
		break;
	case 'M':
		f->mmaps++;
		break;
	}
	f->meta_time_us += (uint64_t)latency;
}

const struct file_stats *iostats_file(const struct iostats *st, uint64_t id)
{
	return id < st->nfiles && st->files[id].used ? &st->files[id] : NULL;
}

static size_t top_values(const struct size_count *list, size_t nlist,
			 struct size_count *out, size_t n)
{
	size_t got = 0;
	bool taken[IOSTATS_SIZES_TRACKED] = { false };

	if (nlist > IOSTATS_SIZES_TRACKED)
		nlist = IOSTATS_SIZES_TRACKED;
	while (got < n) {
		size_t best = nlist;

		for (size_t i = 0; i < nlist; i++) {
			if (taken[i])
				continue;
			if (best == nlist || list[i].count > list[best].count ||
			    (list[i].count == list[best].count &&
			     list[i].size < list[best].size))
				best = i;
		}
		if (best == nlist)
			break;
		taken[best] = true;
		out[got++] = list[best];
	}
	return got;
}

size_t iostats_top_sizes(const struct file_stats *f, struct size_count *out,
			 size_t n)
{
	return f->rw ? top_values(f->rw->sizes.list, f->rw->sizes.n, out, n) :
		       0;
}

size_t iostats_top_strides(const struct file_stats *f, struct size_count *out,
			   size_t n)
{
	return f->rw ? top_values(f->rw->strides.list, f->rw->strides.n, out,
				  n) :
		       0;
}

void iostats_merge_rw(struct rw_stats *dst, const struct rw_stats *src)
{
	dst->ops += src->ops;
	dst->bytes += src->bytes;
	dst->time_us += src->time_us;
	for (uint32_t i = 0; i < src->log2.n; i++)
		log2_add(&dst->log2, src->log2.bins[i].bucket,
			 src->log2.bins[i].count, src->log2.bins[i].time_us);
	for (int i = 0; i < IOSTATS_SIZE_BUCKETS; i++)
		dst->size_bucket[i] += src->size_bucket[i];
}

void io_summary_init(struct io_summary *io)
{
	memset(io, 0, sizeof(*io));
	iostats_init(&io->stats);
}

void io_summary_release(struct io_summary *io)
{
	for (size_t i = 0; i < io->nfiles; i++) {
		free(io->files[i].path);
		free(io->files[i].mount_point);
		free(io->files[i].fstype);
	}
	for (size_t i = 0; i < io->nmounts; i++) {
		free(io->mounts[i].mount_point);
		free(io->mounts[i].fstype);
		rw_stats_release(&io->mounts[i].read);
		rw_stats_release(&io->mounts[i].write);
	}
	free(io->files);
	free(io->mounts);
	iostats_release(&io->stats);
	memset(io, 0, sizeof(*io));
}

static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static struct mount_stats *mount_for(struct io_summary *io, const char *point,
				     const char *fstype)
{
	struct mount_stats *m;

	for (size_t i = 0; i < io->nmounts; i++)
		if (same(io->mounts[i].mount_point, point) &&
		    same(io->mounts[i].fstype, fstype))
			return &io->mounts[i];
	io->mounts =
		xrealloc(io->mounts, (io->nmounts + 1) * sizeof(*io->mounts));
	m = &io->mounts[io->nmounts++];
	memset(m, 0, sizeof(*m));
	m->mount_point = xstrdup(point ? point : "");
	m->fstype = xstrdup(fstype ? fstype : "");
	rw_stats_init(&m->read);
	rw_stats_init(&m->write);
	return m;
}

/* The first word of a quoted path list (common/argv.h), unquoted. */
static char *first_path(const char *paths)
{
	struct strbuf sb;
	char *s;

	sb_init(&sb, 1u << 20);
	if (argv_split(paths, strlen(paths), &sb) < 1) {
		sb_release(&sb);
		return xstrdup("");
	}
	s = xstrdup(sb_str(&sb));
	sb_release(&sb);
	return s;
}

void io_summary_add_file(struct io_summary *io, const struct file_record *rec)
{
	const struct file_stats *f = iostats_file(&io->stats, rec->inode_id);
	struct file_entry *e;
	struct mount_stats *m;

	io->files = xrealloc(io->files, (io->nfiles + 1) * sizeof(*io->files));
	e = &io->files[io->nfiles++];
	e->id = rec->inode_id;
	e->path = first_path(rec->paths);
	e->mount_point = xstrdup(rec->mount_point ? rec->mount_point : "");
	e->fstype = xstrdup(rec->fstype ? rec->fstype : "");
	m = mount_for(io, rec->mount_point, rec->fstype);
	m->files++;
	if (!f)
		return;
	m->opens += f->opens;
	m->stats += f->stats;
	m->meta_time_us += f->meta_time_us;
	iostats_merge_rw(&m->read, file_reads(f));
	iostats_merge_rw(&m->write, file_writes(f));
}
