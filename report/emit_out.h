/* SPDX-License-Identifier: MIT */
/* The pieces report.json's writers share. */
#ifndef IOWRAP_REPORT_EMIT_OUT_H
#define IOWRAP_REPORT_EMIT_OUT_H

#include "emit.h"
#include "json.h"

struct out {
	struct json j;
	struct strbuf sb;
	int fd;
	int err;
};

/* Writes what is buffered; the first error is kept in o->err. */
void out_flush(struct out *o);
/* Durations and times as exact microseconds: "12.000345"; null if < 0. */
void json_secs(struct json *j, const char *key, int64_t us);

/* report.json's cross-task sections (emit_graph.c). */
void emit_files(struct out *o, struct workflow *wf, const struct analysis *an);
void emit_data_flow(struct out *o, const struct analysis *an);
void emit_wcp(struct out *o, struct workflow *wf, const struct analysis *an);
/* Fig. 5's sampled accesses per file. */
void emit_accesses(struct out *o, const struct analysis *an);

#endif
