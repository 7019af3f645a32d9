/* SPDX-License-Identifier: MIT */
/*
 * A trace's CSV file read by column name (so that added or reordered
 * columns of other format versions still read), row by row from a
 * read-only mapping: memory does not grow with the file.
 */
#ifndef IOWRAP_REPORT_CSVIN_H
#define IOWRAP_REPORT_CSVIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "csv.h"
#include "model.h"

struct csv_file {
	struct workflow *wf;
	struct task *t;
	const char *name;
	struct csv_problems *prob;
	const char *data;
	size_t len;
	struct csv_reader r;
	struct csv_record rec;
	size_t nheader;
	int col[CSV_MAX_FIELDS]; /* wanted column -> field index or -1 */
	size_t dropped; /* bytes of the mapping handed back (read past) */
};

int map_file(int dirfd, const char *name, const char **data, size_t *len);
void unmap_file(const char *data, size_t len);
bool mapped_file_cut(const char *data);
#define CUT_REST_IGNORED "the rest of it is ignored"
void warn_cut(struct workflow *wf, const struct task *t, const char *name,
	      size_t line, const char *instead);
void drop_read_pages(const char *data, size_t *dropped, size_t pos);

int csv_open(struct csv_file *cf, int dirfd, const char *const *want,
	     size_t nwant, size_t nrequired);
void csv_close(struct csv_file *cf);
bool csv_row(struct csv_file *cf);
const char *cell(struct csv_file *cf, int w);
size_t cell_len(struct csv_file *cf, int w);
void bad_row(struct csv_file *cf, const char *column);
/* A bad value in column the row is kept without: warns what it lost. */
void bad_cell(struct csv_file *cf, const char *column, const char *outcome);
bool opt_u64(struct csv_file *cf, int w, uint64_t *out);

#endif
