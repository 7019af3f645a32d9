// SPDX-License-Identifier: MIT
/* threads N MS: N threads each burn MS milliseconds of CPU; the main
 * thread exits first with pthread_exit when argv[3] is "leader-exits". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long burn_ms;

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *burn(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	while (thread_cpu_s() * 1000 < (double)burn_ms)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[256];

	burn_ms = argc > 2 ? atol(argv[2]) : 50;
	if (n < 1 || n > 256)
		return 2;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, burn, NULL);
	if (argc > 3 && strcmp(argv[3], "leader-exits") == 0)
		pthread_exit(NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
