// SPDX-License-Identifier: MIT
/* busyloop N: runs about N instructions of sin() and cos() of pseudo-random
 * numbers (the CPU workload of the accuracy benchmark, bench/accuracy.py),
 * then prints its own ground truth (tests/helpers/truth.h).
 * libm is opened with dlopen() because the helpers are linked without -lm.
 * Instructions per iteration were counted with valgrind --tool=callgrind
 * (glibc 2.36, x86_64, the FMA variants of sin and cos): 202 per iteration,
 * so N is approximate on other libms. */
#include <dlfcn.h>
#include <stdint.h>

#include "truth.h"

#define INSNS_PER_ITER 202

int main(int argc, char **argv)
{
	static struct truth t;
	double (*sin_fn)(double), (*cos_fn)(double);
	unsigned long long n, iters;
	uint64_t s = 0x9e3779b97f4a7c15ull;
	char members[256];
	double acc = 0.0;
	void *libm;

	if (argc != 2) {
		fprintf(stderr, "usage: busyloop INSTRUCTIONS\n");
		return 2;
	}
	n = strtoull(argv[1], NULL, 10);
	libm = dlopen("libm.so.6", RTLD_NOW);
	if (!libm) {
		fprintf(stderr, "busyloop: %s\n", dlerror());
		return 3;
	}
	*(void **)&sin_fn = dlsym(libm, "sin");
	*(void **)&cos_fn = dlsym(libm, "cos");
	if (!sin_fn || !cos_fn)
		return 3;
	if (truth_begin(&t))
		return 4;

	iters = n / INSNS_PER_ITER;
	for (unsigned long long i = 0; i < iters; i++) {
		double x;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		x = (double)(s >> 11) * 0x1.0p-53 * 6.283185307179586;
		acc += sin_fn(x) * cos_fn(x);
	}

	snprintf(members, sizeof(members),
		 "\"helper\":\"busyloop\",\"arg\":%llu,\"iterations\":%llu,"
		 "\"checksum\":%.6f,",
		 n, iters, acc);
	return truth_end(&t, members);
}
