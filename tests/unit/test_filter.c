// SPDX-License-Identifier: MIT
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>

#include "fdfilter.h"
#include "filter.h"
#include "unit.h"

/*
 * The kernel's classic BPF, for the instructions our prologue and
 * libseccomp use: the filters are run here on made-up syscalls.
 */
static uint32_t run_bpf(const struct sock_fprog *prog,
			const struct seccomp_data *d)
{
	uint32_t a = 0;

	for (size_t pc = 0; pc < prog->len; pc++) {
		const struct sock_filter *f = &prog->filter[pc];
		bool taken;

		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			memcpy(&a, (const char *)d + f->k, sizeof(a));
			continue;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= f->k;
			continue;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			continue;
		case BPF_JMP | BPF_JEQ | BPF_K:
			taken = a == f->k;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			taken = a > f->k;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			taken = a >= f->k;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			taken = (a & f->k) != 0;
			break;
		case BPF_RET | BPF_K:
			return f->k;
		default:
			return 0xdeadu; /* an instruction this test lacks */
		}
		pc += taken ? f->jt : f->jf;
	}
	return 0xbadu; /* ran off the end */
}

static uint32_t run_call(const struct sock_fprog *prog, uint32_t arch, int nr,
			 uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct seccomp_data d = { .nr = nr, .arch = arch };

	d.args[0] = a0;
	d.args[1] = a1;
	d.args[2] = a2;
	return run_bpf(prog, &d);
}

#define TRACE_NATIVE \
	(SECCOMP_RET_TRACE | SC_DATA_OURS | SC_DATA_NEEDS_EXIT | SC_NATIVE_DATA)
#define I386_READ 3
#define I386_OPEN 5

static void filter_builds_for_each_level(void)
{
	struct filter_pair files, full;
	struct strbuf why;
	const int fds[] = { 0, 7 };

	sb_init(&why, 0);
	CHECK_INT(filter_build(LEVEL_FILES, fds, 2, &files, &why), 0);
	CHECK_INT(filter_build(LEVEL_FULL, fds, 2, &full, &why), 0);
	CHECK(files.plain.len > 10 && files.plain.len < full.plain.len);
	CHECK(full.plain.len < BPF_MAXINSNS);
	CHECK_INT(files.scoped.len, 0);
	CHECK(full.scoped.len > 10 && full.scoped.len < BPF_MAXINSNS);
	CHECK_STR(sb_str(&why), "");
	filter_free(&files);
	filter_free(&full);
	sb_release(&why);
}

/* The filters under test: the base pair for fds 0 and 7, and filters
 * added to a running process for fd 3 and for every fd. */
enum which { PLAIN, SCOPED, ADDED_3, ADDED_ALL, NPROGS };

struct filter_case {
	enum which prog;
	uint32_t arch;
	int nr;
	uint64_t a0, a1, a2;
	uint32_t expect;
};

#define TRACE_ID(id) \
	(SECCOMP_RET_TRACE | SC_DATA_OURS | SC_DATA_NEEDS_EXIT | (id))

static const struct filter_case filter_cases[] = {
	/* Plain: every read stops; scoped: a native read on the named
	 * descriptors only, an i386 read always; opens stop in both. */
	{ PLAIN, AUDIT_ARCH_X86_64, SYS_read, 3, 0, 0, TRACE_ID(SC_READ) },
	{ SCOPED, AUDIT_ARCH_X86_64, SYS_read, 3, 0, 0, SECCOMP_RET_ALLOW },
	{ SCOPED, AUDIT_ARCH_X86_64, SYS_read, 7, 0, 0, TRACE_NATIVE },
	/* The kernel ignores the upper half of an fd: so does the filter. */
	{ SCOPED, AUDIT_ARCH_X86_64, SYS_write, 0xffffffff00000007ull, 0, 0,
	  TRACE_NATIVE },
	/* sendfile(out, in), splice(in, off, out): either descriptor. */
	{ SCOPED, AUDIT_ARCH_X86_64, SYS_sendfile, 1, 7, 0, TRACE_NATIVE },
	{ SCOPED, AUDIT_ARCH_X86_64, SYS_splice, 4, 7, 5, SECCOMP_RET_ALLOW },
	{ SCOPED, AUDIT_ARCH_X86_64, SYS_splice, 4, 1, 7, TRACE_NATIVE },
	{ SCOPED, AUDIT_ARCH_I386, I386_READ, 3, 0, 0, TRACE_ID(SC_READ) },
	{ SCOPED, AUDIT_ARCH_X86_64, SYS_openat, 3, 0, 0, TRACE_ID(SC_OPENAT) },
	{ SCOPED, AUDIT_ARCH_I386, I386_OPEN, 0, 0, 0, TRACE_ID(SC_OPEN) },
	{ SCOPED, AUDIT_ARCH_X86_64, SYS_getpid, 0, 0, 0, SECCOMP_RET_ALLOW },
	/* Newer than our tables: trapped, in both. */
	{ SCOPED, AUDIT_ARCH_X86_64, MAX_NR_X86_64 + 1, 0, 0, 0,
	  SECCOMP_RET_TRACE | SC_DATA_UNKNOWN },
	{ PLAIN, AUDIT_ARCH_I386, MAX_NR_I386 + 1, 0, 0, 0,
	  SECCOMP_RET_TRACE | SC_DATA_UNKNOWN },
	/* clone stops with CLONE_FILES and without CLONE_THREAD, scoped. */
	{ SCOPED, AUDIT_ARCH_X86_64, SYS_clone, CLONE_FILES, 0, 0,
	  SECCOMP_RET_TRACE | SC_DATA_OURS | SC_CLONE },
	{ SCOPED, AUDIT_ARCH_X86_64, SYS_clone, CLONE_FILES | CLONE_THREAD, 0,
	  0, SECCOMP_RET_ALLOW },
	{ PLAIN, AUDIT_ARCH_X86_64, SYS_clone, CLONE_FILES, 0, 0,
	  SECCOMP_RET_ALLOW },
	/* Added: its descriptors' native data syscalls, nothing else. */
	{ ADDED_3, AUDIT_ARCH_X86_64, SYS_pread64, 3, 0, 0, TRACE_NATIVE },
	{ ADDED_3, AUDIT_ARCH_X86_64, SYS_pread64, 4, 0, 0, SECCOMP_RET_ALLOW },
	{ ADDED_3, AUDIT_ARCH_X86_64, SYS_openat, 3, 0, 0, SECCOMP_RET_ALLOW },
	{ ADDED_3, AUDIT_ARCH_I386, I386_READ, 3, 0, 0, SECCOMP_RET_ALLOW },
	{ ADDED_ALL, AUDIT_ARCH_X86_64, SYS_fsync, 99, 0, 0, TRACE_NATIVE },
	{ ADDED_ALL, AUDIT_ARCH_X86_64, SYS_close, 99, 0, 0,
	  SECCOMP_RET_ALLOW },
};

static void added_filter(struct sock_fprog *prog, struct sock_filter *code,
			 bool all)
{
	const int fd3[] = { 3 };
	int len = fdfilter_scoped(code, FDFILTER_MAX_INSNS, fd3, all ? 0 : 1,
				  all);

	CHECK(len > 0);
	prog->filter = code;
	prog->len = (unsigned short)(len > 0 ? len : 0);
}

static void filter_stops_where_it_should(void)
{
	static struct sock_filter added[2][FDFILTER_MAX_INSNS];
	struct sock_fprog progs[NPROGS];
	struct filter_pair f;
	struct strbuf why;
	const int fds[] = { 0, 7 };

	sb_init(&why, 0);
	CHECK_INT(filter_build(LEVEL_FULL, fds, 2, &f, &why), 0);
	progs[PLAIN] = f.plain;
	progs[SCOPED] = f.scoped;
	added_filter(&progs[ADDED_3], added[0], false);
	added_filter(&progs[ADDED_ALL], added[1], true);
	for (size_t i = 0; i < sizeof(filter_cases) / sizeof(*filter_cases);
	     i++) {
		const struct filter_case *c = &filter_cases[i];

		CHECK_UINT(run_call(&progs[c->prog], c->arch, c->nr, c->a0,
				    c->a1, c->a2),
			   c->expect);
	}
	CHECK_UINT(fdfilter_native_id(SYS_pread64), SC_PREAD);
	CHECK_UINT(fdfilter_native_id(SYS_getpid), SC_UNKNOWN);
	filter_free(&f);
	sb_release(&why);
}

static struct fd_numbers numbers(const int *fds, size_t n)
{
	struct fd_numbers s = { .low = 0 };

	for (size_t i = 0; i < n; i++)
		fd_numbers_add(&s, fds[i]);
	return s;
}

/* What a process lacks: new numbers (bash's 255 too), all of them past
 * the cap, none after a failure. */
static void filter_scope_plans(void)
{
	const int first[] = { 3 }, more[] = { 3, 5, 255 };
	struct fd_numbers t1 = numbers(first, 1), t2 = numbers(more, 3);
	struct fd_scope s = { .fds = t1 };
	struct fd_plan plan;
	struct fd_numbers many = { .overflow = true };

	CHECK(!fdscope_plan(&s, &t1, &plan));
	CHECK(fdscope_plan(&s, &t2, &plan));
	CHECK_UINT(plan.nfds, 2);
	CHECK_INT(plan.fds[0], 5);
	CHECK_INT(plan.fds[1], 255);
	CHECK(!plan.all);
	fdscope_done(&s, &plan, true);
	CHECK(fd_numbers_has(&s.fds, 255) && fd_numbers_has(&s.fds, 5));
	CHECK(!fd_numbers_has(&s.fds, 254));
	CHECK_UINT(s.filters, 1);
	CHECK(!fdscope_plan(&s, &t2, &plan));
	CHECK(fdscope_plan(&s, &many, &plan));
	CHECK(plan.all);
	s.filters = FDSCOPE_MAX_FILTERS - 1;
	t2.low |= 1u << 9;
	CHECK(fdscope_plan(&s, &t2, &plan));
	CHECK(plan.all);
	fdscope_done(&s, &plan, true);
	CHECK(!fdscope_plan(&s, &many, &plan));
	s = (struct fd_scope){ .fds = t1 };
	CHECK(fdscope_plan(&s, &t2, &plan));
	fdscope_done(&s, &plan, false);
	CHECK(!fdscope_plan(&s, &many, &plan)); /* given up */
}

static void filter_level_names(void)
{
	CHECK_INT(trace_level_parse("summary"), LEVEL_SUMMARY);
	CHECK_INT(trace_level_parse("files"), LEVEL_FILES);
	CHECK_INT(trace_level_parse("full"), LEVEL_FULL);
	CHECK_INT(trace_level_parse("Full"), -1);
	CHECK_INT(trace_level_parse(""), -1);
}

const struct unit_test filter_tests[] = {
	UNIT_TEST(filter_builds_for_each_level),
	UNIT_TEST(filter_stops_where_it_should),
	UNIT_TEST(filter_scope_plans),
	UNIT_TEST(filter_level_names),
	UNIT_END,
};
