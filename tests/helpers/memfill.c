// SPDX-License-Identifier: MIT
/* memfill MIB: mallocs MIB MiB in chunks of up to 64 MiB, writes every page
 * of each chunk as soon as it is allocated, and exits at once after the
 * last page: no sleep, no free, so the peak lasts until the exit (the
 * memory workload of the accuracy benchmark, bench/accuracy.py).  Before
 * exiting it prints its own ground truth (tests/helpers/truth.h), and
 * tail_ns: the time from the last page written to the final readings,
 * which must stay well under 1 ms.
 */
#include "truth.h"

#define CHUNK_MIB 64

static unsigned long long ns(const struct timespec *ts)
{
	return (unsigned long long)ts->tv_sec * 1000000000ull +
	       (unsigned long long)ts->tv_nsec;
}

int main(int argc, char **argv)
{
	static struct truth t;
	unsigned long long mib, done = 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct timespec last, now;
	char members[256];

	if (argc != 2) {
		fprintf(stderr, "usage: memfill MIB\n");
		return 2;
	}
	mib = strtoull(argv[1], NULL, 10);
	if (truth_begin(&t))
		return 4;

	while (done < mib) {
		unsigned long long n = mib - done < CHUNK_MIB ? mib - done :
								CHUNK_MIB;
		size_t bytes = (size_t)n << 20;
		volatile char *mem = malloc(bytes);

		if (!mem)
			return 3;
		for (size_t i = 0; i < bytes; i += page)
			mem[i] = (char)(i / page + 1);
		done += n;
	}
	clock_gettime(CLOCK_MONOTONIC, &last);
	snprintf(members, sizeof(members),
		 "\"helper\":\"memfill\",\"arg\":%llu,\"filled_kib\":%llu,",
		 mib, mib << 10);
	clock_gettime(CLOCK_MONOTONIC, &now);
	snprintf(members + strlen(members), sizeof(members) - strlen(members),
		 "\"tail_ns\":%llu,", ns(&now) - ns(&last));
	return truth_end(&t, members);
}
