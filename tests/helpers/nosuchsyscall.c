// SPDX-License-Identifier: MIT
/* nosuchsyscall: calls syscall number 1000, which no kernel has yet (and
 * on x86_64 the same number with the x32 bit): a tracer must let it run
 * (ENOSYS from the kernel itself) and may trap it.  Prints each result. */
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	long r = syscall(1000);

	printf("%ld %d\n", r, r < 0 ? errno : 0);
#ifdef __x86_64__
	r = syscall(0x40000000 | 1000);
	printf("%ld %d\n", r, r < 0 ? errno : 0);
#endif
	return 0;
}
