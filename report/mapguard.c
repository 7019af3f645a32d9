// SPDX-License-Identifier: MIT
#include "mapguard.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The report maps a few files at a time (a trace's summary.json, io.csv,
 * files.csv; report.json for the HTML). */
#define GUARDS_MAX 16

struct map_guard {
	uintptr_t start, end; /* whole pages; start 0: slot free */
	volatile sig_atomic_t cut;
};

static struct map_guard guards[GUARDS_MAX];
static uintptr_t page_size;
static bool handler_installed;

/*
 * Async-signal-safe: it touches only the table and makes one mmap.  A
 * fault outside every guarded mapping (a bug, not a cut file) gets the
 * default action back and faults again, so it still dies with SIGBUS; a
 * SIGBUS sent by kill or sigqueue (si_code <= 0: si_addr means nothing)
 * is raised again with the default action, so it still ends the report
 * as before.
 */
static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t addr = (uintptr_t)si->si_addr;

	(void)uctx;
	if (si->si_code <= 0) {
		signal(sig, SIG_DFL);
		raise(sig); /* blocked in here: delivered on return */
		return;
	}
	for (size_t i = 0; i < GUARDS_MAX; i++) {
		struct map_guard *g = &guards[i];
		uintptr_t from = addr & ~(page_size - 1);

		if (!g->start || addr < g->start || addr >= g->end)
			continue;
		if (mmap((void *)from, g->end - from, PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			 0) == MAP_FAILED)
			break;
		g->cut = 1;
		return;
	}
	signal(sig, SIG_DFL);
}

static int install_handler(void)
{
	struct sigaction sa;

	if (handler_installed)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) < 0)
		return -errno;
	page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
	handler_installed = true;
	return 0;
}

/* Guards the mapping of len bytes at data; -EMFILE if the table is full. */
int map_guard_add(const void *data, size_t len)
{
	int err = install_handler();

	if (err)
		return err;
	for (size_t i = 0; i < GUARDS_MAX; i++) {
		struct map_guard *g = &guards[i];

		if (g->start)
			continue;
		g->cut = 0;
		g->end = ((uintptr_t)data + len + page_size - 1) &
			 ~(page_size - 1);
		/* The handler takes a slot by its start: end is set first. */
		atomic_signal_fence(memory_order_seq_cst);
		g->start = (uintptr_t)data;
		return 0;
	}
	return -EMFILE;
}

static struct map_guard *guard_of(const void *data)
{
	for (size_t i = 0; i < GUARDS_MAX; i++)
		if (guards[i].start && guards[i].start == (uintptr_t)data)
			return &guards[i];
	return NULL;
}

/* Before the mapping at data is unmapped. */
void map_guard_remove(const void *data)
{
	struct map_guard *g = guard_of(data);

	if (g)
		g->start = 0;
}

/* Whether the file mapped at data was found cut shorter (or unreadable):
 * its bytes from the first page that faulted on are zeros. */
bool map_guard_cut(const void *data)
{
	struct map_guard *g = guard_of(data);

	return g && g->cut;
}
