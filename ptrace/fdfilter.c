// SPDX-License-Identifier: MIT
#include "fdfilter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "filter.h"
#include "util.h"

#define X32_SYSCALL_BIT 0x40000000u

/* Which arguments name a descriptor (bit n: argument n). */
enum fd_args {
	FD_ARG0 = 1,
	FD_ARG01 = 3, /* sendfile: out, in */
	FD_ARG02 = 5, /* copy_file_range, splice: in, out */
};

struct native_data_call {
	uint32_t nr;
	uint16_t id;
	uint8_t fd_args;
};

/* The data syscalls of --level full, by their x86_64 numbers. */
static const struct native_data_call native_calls[] = {
	{ SYS_read, SC_READ, FD_ARG0 },
	{ SYS_write, SC_WRITE, FD_ARG0 },
	{ SYS_pread64, SC_PREAD, FD_ARG0 },
	{ SYS_pwrite64, SC_PWRITE, FD_ARG0 },
	{ SYS_readv, SC_READV, FD_ARG0 },
	{ SYS_writev, SC_WRITEV, FD_ARG0 },
	{ SYS_preadv, SC_PREADV, FD_ARG0 },
	{ SYS_pwritev, SC_PWRITEV, FD_ARG0 },
	{ SYS_preadv2, SC_PREADV2, FD_ARG0 },
	{ SYS_pwritev2, SC_PWRITEV2, FD_ARG0 },
	{ SYS_lseek, SC_LSEEK, FD_ARG0 },
	{ SYS_fsync, SC_FSYNC, FD_ARG0 },
	{ SYS_fdatasync, SC_FDATASYNC, FD_ARG0 },
	{ SYS_sync_file_range, SC_SYNC_FILE_RANGE, FD_ARG0 },
	{ SYS_fallocate, SC_FALLOCATE, FD_ARG0 },
	{ SYS_sendfile, SC_SENDFILE, FD_ARG01 },
	{ SYS_copy_file_range, SC_COPY_FILE_RANGE, FD_ARG02 },
	{ SYS_splice, SC_SPLICE, FD_ARG02 },
};

unsigned fdfilter_native_id(uint32_t nr)
{
	for (size_t i = 0; i < ARRAY_SIZE(native_calls); i++)
		if (native_calls[i].nr == nr)
			return native_calls[i].id;
	return SC_UNKNOWN;
}

/* ---- a small BPF assembler: forward jumps to labels ---------------- */

enum label {
	L_HIT, /* a traced descriptor: stop */
	L_ALLOW, /* an untraced one: run */
	L_ARG0, /* the descriptor groups of native_calls */
	L_ARG01,
	L_ARG02,
	L_NOT_DATA, /* not a data syscall (the prologue goes on) */
	L_X32,
	L_OTHER_ARCH,
	L_I386_NR,
	L_TRAP, /* a syscall newer than our tables */
	L_END, /* after the prologue: libseccomp's program */
	L_COUNT,
};

#define MAX_FIXUPS 256

struct bpf_asm {
	struct sock_filter *code;
	size_t len, cap;
	long at[L_COUNT]; /* -1 until placed */
	struct {
		size_t insn;
		enum label jt, jf; /* L_COUNT: the next instruction */
	} fix[MAX_FIXUPS];
	size_t nfix;
	bool overflow;
};

static void asm_init(struct bpf_asm *a, struct sock_filter *code, size_t cap)
{
	a->code = code;
	a->len = 0;
	a->cap = cap;
	a->nfix = 0;
	a->overflow = false;
	for (int i = 0; i < L_COUNT; i++)
		a->at[i] = -1;
}

static void emit(struct bpf_asm *a, struct sock_filter insn)
{
	if (a->len == a->cap) {
		a->overflow = true;
		return;
	}
	a->code[a->len++] = insn;
}

static void place(struct bpf_asm *a, enum label l)
{
	a->at[l] = (long)a->len;
}

static void load(struct bpf_asm *a, size_t offset)
{
	emit(a, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					     (uint32_t)offset));
}

static void ret(struct bpf_asm *a, uint32_t action)
{
	emit(a, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

/* if (A op k) goto jt else goto jf; L_COUNT is the next instruction. */
static void jump(struct bpf_asm *a, uint16_t op, uint32_t k, enum label jt,
		 enum label jf)
{
	if (a->nfix == MAX_FIXUPS) {
		a->overflow = true;
		return;
	}
	a->fix[a->nfix].insn = a->len;
	a->fix[a->nfix].jt = jt;
	a->fix[a->nfix].jf = jf;
	a->nfix++;
	emit(a, (struct sock_filter)BPF_JUMP(BPF_JMP | op | BPF_K, k, 0, 0));
}

static void goto_label(struct bpf_asm *a, enum label l)
{
	/* BPF_JA's offset is 32-bit: k, fixed like a conditional's jt. */
	jump(a, BPF_JA, 0, l, L_COUNT);
}

static bool offset_to(const struct bpf_asm *a, size_t insn, enum label l,
		      uint32_t *off)
{
	if (l == L_COUNT) {
		*off = 0;
		return true;
	}
	if (a->at[l] <= (long)insn)
		return false;
	*off = (uint32_t)(a->at[l] - (long)insn - 1);
	return true;
}

static int asm_finish(struct bpf_asm *a)
{
	if (a->overflow)
		return -E2BIG;
	for (size_t i = 0; i < a->nfix; i++) {
		struct sock_filter *insn = &a->code[a->fix[i].insn];
		uint32_t jt, jf;

		if (!offset_to(a, a->fix[i].insn, a->fix[i].jt, &jt) ||
		    !offset_to(a, a->fix[i].insn, a->fix[i].jf, &jf))
			return -EINVAL;
		if (BPF_OP(insn->code) == BPF_JA) {
			insn->k = jt;
			continue;
		}
		if (jt > 255 || jf > 255)
			return -E2BIG;
		insn->jt = (uint8_t)jt;
		insn->jf = (uint8_t)jf;
	}
	return (int)a->len;
}

/* ---- the data block ------------------------------------------------ */

#define ARG_LOW(n) (offsetof(struct seccomp_data, args) + 8 * (n))

static enum label group_label(uint8_t fd_args)
{
	return fd_args == FD_ARG0  ? L_ARG0 :
	       fd_args == FD_ARG01 ? L_ARG01 :
				     L_ARG02;
}

/*
 * The descriptor is an int: the kernel ignores the upper half of the
 * register, so only the lower one is compared (a garbage upper half
 * cannot slip past).  Little-endian: the lower half comes first.
 */
static void match_fds(struct bpf_asm *a, int arg, const int *fds, size_t n)
{
	load(a, ARG_LOW(arg));
	for (size_t i = 0; i < n; i++)
		jump(a, BPF_JEQ, (uint32_t)fds[i], L_HIT, L_COUNT);
}

/* With A holding a native syscall number: data syscalls on fds go to
 * L_HIT, on others to L_ALLOW, anything else to L_NOT_DATA. */
static void data_block(struct bpf_asm *a, const int *fds, size_t n, bool all)
{
	for (size_t i = 0; i < ARRAY_SIZE(native_calls); i++)
		jump(a, BPF_JEQ, native_calls[i].nr,
		     all ? L_HIT : group_label(native_calls[i].fd_args),
		     L_COUNT);
	goto_label(a, L_NOT_DATA);
	if (all)
		return;
	place(a, L_ARG0);
	match_fds(a, 0, fds, n);
	goto_label(a, L_ALLOW);
	place(a, L_ARG01);
	match_fds(a, 0, fds, n);
	match_fds(a, 1, fds, n);
	goto_label(a, L_ALLOW);
	place(a, L_ARG02);
	match_fds(a, 0, fds, n);
	match_fds(a, 2, fds, n);
	goto_label(a, L_ALLOW);
}

static void data_returns(struct bpf_asm *a)
{
	place(a, L_HIT);
	ret(a, SECCOMP_RET_TRACE | SC_DATA_OURS | SC_DATA_NEEDS_EXIT |
		       SC_NATIVE_DATA);
	place(a, L_ALLOW);
	ret(a, SECCOMP_RET_ALLOW);
}

int fdfilter_scoped(struct sock_filter *code, size_t cap, const int *fds,
		    size_t nfds, bool all)
{
	struct bpf_asm a;

	if (nfds > FDFILTER_MAX_FDS)
		return -E2BIG;
	asm_init(&a, code, cap);
	load(&a, offsetof(struct seccomp_data, arch));
	jump(&a, BPF_JEQ, AUDIT_ARCH_X86_64, L_COUNT, L_ALLOW);
	load(&a, offsetof(struct seccomp_data, nr));
	jump(&a, BPF_JGE, X32_SYSCALL_BIT, L_ALLOW, L_COUNT);
	data_block(&a, fds, nfds, all);
	data_returns(&a);
	/* Not a data syscall: let it run. */
	a.at[L_NOT_DATA] = a.at[L_ALLOW];
	return asm_finish(&a);
}

/*
 * Syscall numbers newer than libseccomp's tables would run untraced under
 * its program: the prologue traps them (SC_UNKNOWN), for each of our
 * three personalities, before libseccomp's program runs.
 */
int fdfilter_prologue(struct sock_filter *code, size_t cap, bool scoped,
		      const int *fds, size_t nfds)
{
	struct bpf_asm a;
	bool all = nfds > FDFILTER_MAX_FDS;

	asm_init(&a, code, cap);
	load(&a, offsetof(struct seccomp_data, arch));
	jump(&a, BPF_JEQ, AUDIT_ARCH_X86_64, L_COUNT, L_OTHER_ARCH);
	load(&a, offsetof(struct seccomp_data, nr));
	jump(&a, BPF_JGE, X32_SYSCALL_BIT, L_X32, L_COUNT);
	jump(&a, BPF_JGT, MAX_NR_X86_64, L_TRAP, L_COUNT);
	if (scoped) {
		data_block(&a, fds, all ? 0 : nfds, all);
		data_returns(&a);
		place(&a, L_NOT_DATA);
	}
	goto_label(&a, L_END);
	place(&a, L_X32);
	jump(&a, BPF_JGT, MAX_NR_X32, L_TRAP, L_END);
	place(&a, L_OTHER_ARCH);
	jump(&a, BPF_JEQ, AUDIT_ARCH_I386, L_COUNT, L_END);
	load(&a, offsetof(struct seccomp_data, nr));
	jump(&a, BPF_JGT, MAX_NR_I386, L_TRAP, L_END);
	place(&a, L_TRAP);
	ret(&a, SECCOMP_RET_TRACE | SC_DATA_UNKNOWN);
	place(&a, L_END);
	return asm_finish(&a);
}

void fd_numbers_add(struct fd_numbers *s, int fd)
{
	if (fd < 0)
		return;
	if (fd < FDSCOPE_LOW) {
		s->low |= 1ull << fd;
		return;
	}
	if (fd_numbers_has(s, fd))
		return;
	if (s->nhigh < FDSCOPE_HIGH)
		s->high[s->nhigh++] = fd;
	else
		s->overflow = true;
}

bool fd_numbers_has(const struct fd_numbers *s, int fd)
{
	if (fd < 0)
		return false;
	if (fd < FDSCOPE_LOW)
		return (s->low >> fd) & 1;
	for (size_t i = 0; i < s->nhigh; i++)
		if (s->high[i] == fd)
			return true;
	return false;
}

/* Adds fd to the plan's list; a list too long becomes "all". */
static void plan_fd(struct fd_plan *plan, int fd)
{
	if (plan->nfds == FDFILTER_MAX_FDS)
		plan->all = true;
	else
		plan->fds[plan->nfds++] = fd;
}

/* Every exit stop asks, and so does a call that could be settled at its
 * entry; the usual answer is nothing, found with bit operations and at
 * most 8 lookups for numbers above 64. */
bool fdscope_pending(const struct fd_scope *s, const struct fd_numbers *traced)
{
	if (s->all || s->gave_up)
		return false;
	if (s->want_all || traced->overflow || (traced->low & ~s->fds.low))
		return true;
	for (size_t i = 0; i < traced->nhigh; i++)
		if (!fd_numbers_has(&s->fds, traced->high[i]))
			return true;
	return false;
}

bool fdscope_plan(const struct fd_scope *s, const struct fd_numbers *traced,
		  struct fd_plan *plan)
{
	uint64_t low = traced->low & ~s->fds.low;

	if (!fdscope_pending(s, traced))
		return false;
	plan->nfds = 0;
	plan->all = s->want_all || traced->overflow;
	for (; low && !plan->all; low &= low - 1)
		plan_fd(plan, __builtin_ctzll(low));
	for (size_t i = 0; i < traced->nhigh && !plan->all; i++)
		if (!fd_numbers_has(&s->fds, traced->high[i]))
			plan_fd(plan, traced->high[i]);
	if (!plan->nfds && !plan->all)
		return false;
	if (s->filters + 1 >= FDSCOPE_MAX_FILTERS)
		plan->all = true;
	if (plan->all)
		plan->nfds = 0;
	plan->len = fdfilter_scoped(plan->code, FDFILTER_MAX_INSNS, plan->fds,
				    plan->nfds, plan->all);
	if (plan->len < 0) {
		plan->all = true;
		plan->nfds = 0;
		plan->len = fdfilter_scoped(plan->code, FDFILTER_MAX_INSNS,
					    NULL, 0, true);
	}
	return plan->len > 0;
}

void fdscope_done(struct fd_scope *s, const struct fd_plan *plan, bool added)
{
	if (!added) {
		s->gave_up = true;
		return;
	}
	s->filters++;
	for (size_t i = 0; i < plan->nfds; i++)
		fd_numbers_add(&s->fds, plan->fds[i]);
	s->all = s->all || plan->all;
}

#define MAX_RETRIES 8

bool fdscope_may_retry(struct fd_scope *s, int err)
{
	return err == -ESRCH && ++s->retries <= MAX_RETRIES;
}

void fdscope_inherit(struct fd_scope *child, const struct fd_scope *parent)
{
	child->fds.low |= parent->fds.low;
	for (size_t i = 0; i < parent->fds.nhigh; i++)
		fd_numbers_add(&child->fds, parent->fds.high[i]);
	child->all = child->all || parent->all;
	child->gave_up = child->gave_up || parent->gave_up;
	child->filters += parent->filters;
	/* Its own clone or io_uring asks for its own filter. */
}
