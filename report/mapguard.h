/* SPDX-License-Identifier: MIT */
/*
 * Mapped trace files that survive being cut shorter while they are read.
 * A page of a file mapping past the file's end, or one its file system
 * cannot read (EIO from NFS or Lustre), raises SIGBUS when touched, and
 * the report would die with every task's analysis.  A guarded mapping has
 * the rest of its pages replaced by zeros at the first such fault and is
 * marked cut: its reader stops there with a warning.
 */
#ifndef IOWRAP_REPORT_MAPGUARD_H
#define IOWRAP_REPORT_MAPGUARD_H

#include <stdbool.h>
#include <stddef.h>

int map_guard_add(const void *data, size_t len);
void map_guard_remove(const void *data);
bool map_guard_cut(const void *data);

#endif
