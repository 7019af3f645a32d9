/* SPDX-License-Identifier: MIT */
/*
 * One CSV of all traces for DuckDB or pandas: a table (io.csv, procs.csv
 * or files.csv) of every task, each row prefixed with the task's columns.
 */
#ifndef IOWRAP_REPORT_EXPORT_H
#define IOWRAP_REPORT_EXPORT_H

#include <stdio.h>

#include "model.h"

/* Writes the merged table NAME ("io.csv", ...) of wf's tasks to out;
 * returns rows written, or -1 on a write error. */
long long export_csv(struct workflow *wf, const char *name, FILE *out);
/* Trace Event Format JSON (Perfetto, chrome://tracing); events or -1. */
long long export_chrome(struct workflow *wf, FILE *out);

#endif
