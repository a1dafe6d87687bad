/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/sched.c - the static basic-block scheduler (model/sched.h).
 *
 * The block (after its entry context) is run as a stream of instructions
 * through a small out-of-order machine, in program order: each instruction
 * gets its dispatch cycle D, the cycle its result is ready C (from its
 * operands, units, ports and latency) and its retire cycle R.  While doing
 * so it remembers which constraint set C: that is the reason reported for
 * an issue point.
 */
#include "config.h"

#include <capstone/capstone.h>
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "model/sched.h"

/* ---- registers ----------------------------------------------------------- */

static const char *const gpr_names[16][5] = {
	{ "rax", "eax", "ax", "al", "ah" },   { "rcx", "ecx", "cx", "cl", "ch" },
	{ "rdx", "edx", "dx", "dl", "dh" },   { "rbx", "ebx", "bx", "bl", "bh" },
	{ "rsp", "esp", "sp", "spl", NULL },  { "rbp", "ebp", "bp", "bpl", NULL },
	{ "rsi", "esi", "si", "sil", NULL },  { "rdi", "edi", "di", "dil", NULL },
	{ "r8", "r8d", "r8w", "r8b", NULL },  { "r9", "r9d", "r9w", "r9b", NULL },
	{ "r10", "r10d", "r10w", "r10b", NULL }, { "r11", "r11d", "r11w", "r11b", NULL },
	{ "r12", "r12d", "r12w", "r12b", NULL }, { "r13", "r13d", "r13w", "r13b", NULL },
	{ "r14", "r14d", "r14w", "r14b", NULL }, { "r15", "r15d", "r15w", "r15b", NULL },
};

const char *sched_reg_name(unsigned reg)
{
	static char buf[DREG__COUNT][8];

	if (reg < 16)
		return gpr_names[reg][0];
	switch (reg) {
	case DREG_PC: return "rip";
	case DREG_FLAGS: return "flags";
	case DREG_X87: return "st";
	case DREG_MXCSR: return "mxcsr";
	case DREG_SEG: return "seg";
	}
	if (reg >= DREG_V0 && reg < DREG_V0 + 32) {
		if (!buf[reg][0])
			snprintf(buf[reg], sizeof(buf[reg]), "xmm%u", reg - DREG_V0);
		return buf[reg];
	}
	if (reg >= DREG_K0 && reg < DREG_K0 + 8) {
		if (!buf[reg][0])
			snprintf(buf[reg], sizeof(buf[reg]), "k%u", reg - DREG_K0);
		return buf[reg];
	}
	return "?";
}

/* The normalised register named s[0..len), or -1. */
static int x86_reg_number(const char *s, size_t len)
{
	char name[8];

	if (len == 0 || len >= sizeof(name))
		return -1;
	memcpy(name, s, len);
	name[len] = 0;
	for (unsigned r = 0; r < 16; r++)
		for (unsigned k = 0; k < 5; k++)
			if (gpr_names[r][k] && !strcmp(gpr_names[r][k], name))
				return (int)r;
	if (len >= 4 && (!strncmp(name, "xmm", 3) || !strncmp(name, "ymm", 3) ||
			 !strncmp(name, "zmm", 3)) && isdigit((unsigned char)name[3]))
		return DREG_V0 + atoi(name + 3);
	return -1;
}

/*
 * The memory operand of an Intel-syntax text: the text between the
 * brackets into mem (empty if none) and its registers into addr.
 */
static void parse_mem(const char *text, char *mem, size_t memsz, struct regset *addr)
{
	const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;
	size_t n;

	memset(addr, 0, sizeof(*addr));
	mem[0] = 0;
	if (!open || !close)
		return;
	n = (size_t)(close - open - 1);
	if (n >= memsz)
		n = memsz - 1;
	memcpy(mem, open + 1, n);
	mem[n] = 0;
	for (const char *p = open + 1; p < close;) {
		if (isalpha((unsigned char)*p)) {
			const char *q = p;
			int r;

			while (q < close && isalnum((unsigned char)*q))
				q++;
			r = x86_reg_number(p, (size_t)(q - p));
			if (r >= 0)
				regset_add(addr, (unsigned)r);
			p = q;
		} else {
			p++;
		}
	}
}

/* ---- fusion ----------------------------------------------------------------- */

enum jcc_kind { JCC_NONE, JCC_OSP, JCC_CARRY, JCC_ZERO, JCC_SIGNED };

static enum jcc_kind jcc_kind(unsigned id)
{
	switch (id) {
	case X86_INS_JO: case X86_INS_JNO: case X86_INS_JS: case X86_INS_JNS:
	case X86_INS_JP: case X86_INS_JNP:
		return JCC_OSP;
	case X86_INS_JB: case X86_INS_JAE: case X86_INS_JBE: case X86_INS_JA:
		return JCC_CARRY;
	case X86_INS_JE: case X86_INS_JNE:
		return JCC_ZERO;
	case X86_INS_JL: case X86_INS_JGE: case X86_INS_JLE: case X86_INS_JG:
		return JCC_SIGNED;
	default:
		return JCC_NONE;
	}
}

static bool sig_has(unsigned opsig, enum insn_opkind k)
{
	for (unsigned i = 0; i < 4; i++)
		if ((opsig >> (2 * i) & 3) == k)
			return true;
	return false;
}

/* Sandy Bridge..Skylake ([corsix]): no fusion with a memory operand and an immediate. */
static bool fuses_intel(unsigned id, enum jcc_kind j, unsigned opsig)
{
	if (sig_has(opsig, OPK_MEM) && sig_has(opsig, OPK_IMM))
		return false;
	switch (id) {
	case X86_INS_TEST: case X86_INS_AND:
		return true;
	case X86_INS_CMP: case X86_INS_ADD: case X86_INS_SUB:
		return j != JCC_OSP;
	case X86_INS_INC: case X86_INS_DEC:
		return j == JCC_ZERO || j == JCC_SIGNED;
	default:
		return false;
	}
}

/* Zen 3 and later ([corsix]): these with any flag-testing jcc. */
static bool fuses_zen3(unsigned id)
{
	switch (id) {
	case X86_INS_TEST: case X86_INS_AND: case X86_INS_OR: case X86_INS_XOR:
	case X86_INS_CMP: case X86_INS_ADD: case X86_INS_SUB: case X86_INS_INC: case X86_INS_DEC:
		return true;
	default:
		return false;
	}
}

/* True if `jcc` right after `first` forms one macro-op on model m. */
static bool macro_fused(const struct cpu_model *m, const struct insn *first,
			const struct insn *jcc)
{
	enum jcc_kind j;

	if (m->arch != ARCH_X86_64 || jcc->kind != INSN_CJUMP || first->kind != INSN_OTHER)
		return false;
	if (first->addr + first->len != jcc->addr || (first->flags & INSN_F_LOCK))
		return false;
	j = jcc_kind(jcc->cs_id);
	if (j == JCC_NONE || !regset_has(&first->writes, DREG_FLAGS))
		return false;
	switch (m->fusion) {
	case FUSION_INTEL_SNB:
		return fuses_intel(first->cs_id, j, first->opsig);
	case FUSION_AMD_ZEN3:
		return fuses_zen3(first->cs_id);
	default:
		return false;
	}
}

/* ---- per-instruction preparation ---------------------------------------------- */

/* What the scheduler needs of one instruction, computed once. */
struct proto {
	const struct insn *in;
	struct model_timing t;
	struct regset addr, data;   /* registers needed for the address / the rest */
	char mem[64];               /* memory operand text, "" if none */
	bool stack_op;              /* push/pop/call/ret: rsp from the stack engine */
	bool fused;                 /* fused into the instruction before it */
	bool serial;                /* waits for all older instructions */
	bool call;                  /* the callee runs after it: what follows starts afresh */
	bool uncertain;
	unsigned load_lat;          /* the load part of the latency (0 if no load) */
};

static bool is_stack_op(unsigned id)
{
	return id == X86_INS_PUSH || id == X86_INS_POP || id == X86_INS_CALL || id == X86_INS_RET;
}

static void prepare_regs(const struct cpu_model *m, struct proto *p)
{
	const struct insn *in = p->in;

	if (sig_has(in->opsig, OPK_MEM) || (p->t.flags & (ME_LOAD | ME_STORE)))
		parse_mem(in->text, p->mem, sizeof(p->mem), &p->addr);
	p->data = in->reads;
	p->data.w[0] &= ~p->addr.w[0];
	p->data.w[1] &= ~p->addr.w[1];
	p->stack_op = m->stack_engine && m->arch == ARCH_X86_64 && is_stack_op(in->cs_id);
	if (p->stack_op) {
		p->addr.w[0] &= ~(1ull << DREG_RSP);
		p->data.w[0] &= ~(1ull << DREG_RSP);
	}
	if (in->flags & INSN_F_ZERO_IDIOM || in->flags & INSN_F_NOP) {
		memset(&p->addr, 0, sizeof(p->addr));
		memset(&p->data, 0, sizeof(p->data));
	}
	p->data.w[DREG_PC >> 6] &= ~(1ull << (DREG_PC & 63));
	p->addr.w[DREG_PC >> 6] &= ~(1ull << (DREG_PC & 63));
}

/* The part of a load's latency spent loading (the rest is the operation). */
static unsigned load_part(const struct cpu_model *m, const struct proto *p)
{
	unsigned ld;

	if (!(p->t.flags & ME_LOAD))
		return 0;
	if (p->t.fu == FU_LOAD || p->t.fu == FU_BRANCH)
		return p->t.latency;
	ld = p->in->opsize >= 16 ? m->vec_load_latency : m->load_latency;
	return ld < p->t.latency ? ld : p->t.latency;
}

/*
 * What the table's key (no addressing mode) cannot say: a load through a
 * scaled index takes m->scaled_index_latency more.  Added in a loop's
 * steady state only, where a recurrence through the load shows its whole
 * latency; a block scheduled cold already overstates the latency of its
 * loads (the core ran them ahead of entry), and adding to it made those
 * estimates worse (docs/analysis.md, "Accuracy").
 */
static unsigned mem_terms(const char *mem);

static void address_latency(const struct cpu_model *m, struct proto *p, bool loop)
{
	if (loop && p->load_lat && m->scaled_index_latency &&
	    (strchr(p->mem, '*') || (m->index3_latency && mem_terms(p->mem) >= 3))) {
		p->load_lat += m->scaled_index_latency;
		p->t.latency += m->scaled_index_latency;
	}
}

/* The terms of a memory operand's text: "r15 + rsi + 0x10" has 3. */
static unsigned mem_terms(const char *mem)
{
	unsigned n = *mem ? 1 : 0;

	for (const char *c = mem + 1; *mem && *c; c++)
		if ((*c == '+' || *c == '-') && c[-1] == ' ')
			n++;
	return n;
}

/*
 * A lea computes on an ALU, which llvm-mca's znver3 table does not say
 * (m->lea_units); with three components (base, index, displacement) it is
 * slower and, on Zen, two ops (m->lea3_latency, m->lea3_units).
 */
static void lea_timing(const struct cpu_model *m, struct proto *p)
{
	struct model_timing *t = &p->t;

	if (p->in->cs_id != X86_INS_LEA || (t->flags & (ME_LOAD | ME_STORE)))
		return;
	if (m->lea_units && !t->n_groups) {
		t->groups[0] = (struct model_unit_group){ m->lea_units, 1 };
		t->n_groups = 1;
	}
	if (!m->lea3_latency || mem_terms(p->mem) < 3)
		return;
	if (t->latency < m->lea3_latency)
		t->latency = m->lea3_latency;
	if (m->lea3_units && t->n_groups < MODEL_MAX_GROUPS) {
		t->groups[t->n_groups++] = (struct model_unit_group){
			m->lea3_units, (uint8_t)(m->lea3_cycles ? m->lea3_cycles : 1) };
		t->uops++;
	}
}

static void prepare(const struct cpu_model *m, struct proto *p, const struct insn *in,
		    const struct insn *prev, bool loop)
{
	memset(p, 0, sizeof(*p));
	p->in = in;
	model_lookup(m, in, &p->t);
	if (p->t.fu == FU_BRANCH && !(p->t.flags & ME_LOAD))
		p->t.latency = 1;  /* resolves in a cycle; llvm-mca's 100 for calls is a placeholder */
	prepare_regs(m, p);
	p->fused = prev && macro_fused(m, prev, in);
	p->serial = p->t.fu == FU_SYSTEM;
	p->call = in->kind == INSN_CALL || in->kind == INSN_ICALL;
	p->uncertain = p->t.match == MODEL_DEFAULT || p->t.fu == FU_STRING ||
		       p->t.fu == FU_SYSTEM || (in->flags & INSN_F_REP) ||
		       ((p->t.flags & ME_UNMODELED) && p->t.latency >= 100);
	/* a locked op needs all its operands before it starts (no early load) */
	p->load_lat = (in->flags & INSN_F_LOCK) ? 0 : load_part(m, p);
	address_latency(m, p, loop);
	lea_timing(m, p);
}

/* ---- the machine -------------------------------------------------------------- */

struct resv {
	int start, end;   /* [start, end) */
	int holder;       /* stream index */
};

struct unit {
	struct resv *r;
	size_t n, alloc;
};

/* A constraint on when something can happen, and what imposed it. */
struct bind {
	int t;
	enum sched_reason why;
	unsigned reg, unit;
	int producer;     /* stream index, -1 */
};

/* One instruction of the stream. */
struct elem {
	const struct proto *p;
	int block_index;  /* -1 for a predecessor instruction */
	int pred_index;
	int iter;
	int D, S, C, R;
	bool taken;       /* a control transfer not followed by its fall-through */
	bool d_limited;   /* D was pushed by width, a taken branch or the ROB */
	bool d_serial;    /* D was pushed by a serialising instruction */
	struct bind why;
};

#define STORE_WINDOW 32

struct sim {
	const struct cpu_model *m;
	int reg_ready[DREG__COUNT];
	int reg_writer[DREG__COUNT];
	int disp_cycle;
	unsigned disp_used;
	int taken_cycle;              /* the cycle the last taken branch dispatched in */
	unsigned taken_used;          /* taken branches dispatched in it */
	int last_r;
	unsigned retired_last;
	int serial_until;
	int call_until;               /* after a call: dispatch resumes when it retired */
	struct unit *units;
	unsigned n_exec, n_units;     /* table units, then load ports, then store ports */
	int stores[STORE_WINDOW];     /* recent store stream indices, ring */
	unsigned n_stores;
	struct elem *e;
	size_t n, alloc;
};

static void sim_init(struct sim *s, const struct cpu_model *m)
{
	memset(s, 0, sizeof(*s));
	s->m = m;
	for (unsigned r = 0; r < DREG__COUNT; r++)
		s->reg_writer[r] = -1;
	s->n_exec = model_n_units(m);
	s->n_units = s->n_exec + m->loads_per_cycle + m->stores_per_cycle;
	s->units = xcalloc(s->n_units ? s->n_units : 1, sizeof(*s->units));
}

static void sim_release(struct sim *s)
{
	for (unsigned u = 0; u < s->n_units; u++)
		free(s->units[u].r);
	free(s->units);
	free(s->e);
}

static void bind_max(struct bind *b, int t, enum sched_reason why, unsigned reg,
		     int producer, unsigned unit)
{
	if (t > b->t) {
		b->t = t;
		b->why = why;
		b->reg = reg;
		b->producer = producer;
		b->unit = unit;
	}
}

/*
 * Earliest t >= from with [t, t+len) free on unit u; *holder = who pushed it.
 * A unit's reservations are disjoint and sorted by start, so by end too: the
 * first that can be in the way is found by bisection.
 */
static int unit_free(const struct unit *u, int from, int len, int *holder)
{
	int t = from;
	size_t lo = LOWER_BOUND(u->n, k, u->r[k].end <= from);

	*holder = -1;
	for (size_t i = lo; i < u->n; i++) {
		const struct resv *r = &u->r[i];

		if (r->end <= t)
			continue;
		if (r->start >= t + len)
			break;
		t = r->end;
		*holder = r->holder;
	}
	return t;
}

static void unit_take(struct unit *u, int start, int len, int holder)
{
	size_t i = u->n;

	ALLOC_GROW(u->r, u->n + 1, u->alloc);
	while (i > 0 && u->r[i - 1].start > start) {
		u->r[i] = u->r[i - 1];
		i--;
	}
	u->r[i].start = start;
	u->r[i].end = start + len;
	u->r[i].holder = holder;
	u->n++;
}

/* Drops reservations that end before `floor` (nothing can issue before it). */
static void unit_prune(struct unit *u, int floor)
{
	size_t k = 0;

	for (size_t i = 0; i < u->n; i++)
		if (u->r[i].end > floor)
			u->r[k++] = u->r[i];
	u->n = k;
}

/*
 * Reserves `len` cycles on one of the units [first, first+count) whose bit
 * is set in mask (all if mask is 0), from `from` on: on a single unit one
 * busy stretch (a divider), on several `len` single cycles wherever free.
 * Binds b with every slot that had to wait.  Returns the latest slot.
 */
static int take_units(struct sim *s, unsigned first, unsigned count, uint32_t mask,
		      unsigned len, int from, int self, struct bind *b, unsigned report_unit)
{
	unsigned n = 0, slots, width;
	int last = from;

	for (unsigned u = 0; u < count; u++)
		n += !mask || (mask >> u & 1);
	if (!n || !len)
		return from;
	slots = n == 1 ? 1 : len;
	width = n == 1 ? len : 1;
	for (unsigned k = 0; k < slots; k++) {
		int best = INT_MAX, best_holder = -1, holder;
		unsigned best_u = 0;

		for (unsigned u = 0; u < count; u++) {
			int t;

			if (mask && !(mask >> u & 1))
				continue;
			t = unit_free(&s->units[first + u], from, (int)width, &holder);
			if (t < best) {
				best = t;
				best_u = u;
				best_holder = holder;
			}
		}
		unit_take(&s->units[first + best_u], best, (int)width, self);
		if (best > last)
			last = best;
		if (best > from)
			bind_max(b, best, SCHED_UNIT, 0, best_holder,
				 report_unit == ~0u ? first + best_u : report_unit);
	}
	return last;
}

static void sim_push(struct sim *s, const struct proto *p, int block_index, int pred_index,
		     int iter)
{
	struct elem *e;

	ALLOC_GROW(s->e, s->n + 1, s->alloc);
	e = &s->e[s->n];
	memset(e, 0, sizeof(*e));
	e->p = p;
	e->block_index = block_index;
	e->pred_index = pred_index;
	e->iter = iter;
	if (s->n) {
		const struct insn *prev = s->e[s->n - 1].p->in;

		s->e[s->n - 1].taken = insn_is_control(prev) && prev->addr + prev->len != p->in->addr;
	}
	s->n++;
}

/* Binds b with the ready time of every register in rs (SCHED_DEP). */
static void bind_regs(const struct sim *s, const struct regset *rs, struct bind *b)
{
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t bits = rs->w[w]; bits; bits &= bits - 1) {
			unsigned r = w * 64 + (unsigned)__builtin_ctzll(bits);

			if (s->reg_writer[r] >= 0)
				bind_max(b, s->reg_ready[r], SCHED_DEP, r, s->reg_writer[r], 0);
		}
}

/* True if the two memory operands name the same address. */
static bool same_address(const struct sim *s, const struct proto *ld, const struct proto *st,
			 int st_index)
{
	bool ld_rip = ld->in->flags & INSN_F_RIP_REL, st_rip = st->in->flags & INSN_F_RIP_REL;

	if (ld_rip || st_rip)
		return ld_rip && st_rip && ld->in->mem_addr == st->in->mem_addr;
	if (strcmp(ld->mem, st->mem))
		return false;
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t bits = ld->addr.w[w]; bits; bits &= bits - 1) {
			unsigned r = w * 64 + (unsigned)__builtin_ctzll(bits);

			if (s->reg_writer[r] > st_index)
				return false;  /* the address moved since the store */
		}
	return true;
}

/* A load of the address an older store wrote waits for forwarding (SCHED_MEMDEP). */
static void bind_memdep(const struct sim *s, size_t i, struct bind *b)
{
	const struct proto *p = s->e[i].p;
	unsigned n = s->n_stores < STORE_WINDOW ? s->n_stores : STORE_WINDOW;

	if (!p->mem[0] && !(p->in->flags & INSN_F_RIP_REL))
		return;
	for (unsigned k = 1; k <= n; k++) {
		int j = s->stores[(s->n_stores - k) % STORE_WINDOW];
		const struct elem *st = &s->e[j];

		if (same_address(s, p, st->p, j)) {
			bind_max(b, st->C - 1 + (int)s->m->store_forward_latency, SCHED_MEMDEP, 0, j, 0);
			return;
		}
	}
}

/* Taken branches dispatched in the cycle of the last one (taken_per_cycle). */
static void count_taken(struct sim *s, const struct elem *e)
{
	if (!e->taken)
		return;
	if (s->taken_used && s->taken_cycle == e->D) {
		s->taken_used++;
	} else {
		s->taken_cycle = e->D;
		s->taken_used = 1;
	}
}

static void dispatch(struct sim *s, size_t i)
{
	const struct cpu_model *m = s->m;
	struct elem *e = &s->e[i], *prev = i ? &s->e[i - 1] : NULL;
	unsigned uops = e->p->t.uops;
	int d = s->disp_cycle;

	if (e->p->fused && prev) {
		e->D = prev->D;
		count_taken(s, e);
		return;
	}
	if (prev && prev->taken && s->taken_used >= m->taken_per_cycle && d < prev->D + 1)
		d = prev->D + 1;
	if (i >= m->rob_size && s->e[i - m->rob_size].R > d)
		d = s->e[i - m->rob_size].R;
	if (s->call_until > d)
		d = s->call_until;
	if (s->serial_until > d) {
		d = s->serial_until;
		e->d_serial = true;
	}
	if (d != s->disp_cycle)
		s->disp_used = 0;
	if (s->disp_used && s->disp_used + uops > m->dispatch_width) {
		d++;
		s->disp_used = 0;
	}
	e->D = d;
	e->d_limited = prev ? d > prev->D : d > 0;
	s->disp_cycle = d;
	s->disp_used += uops;
	if (s->disp_used > m->dispatch_width) {
		s->disp_cycle += (int)((s->disp_used - 1) / m->dispatch_width);
		s->disp_used = (s->disp_used - 1) % m->dispatch_width + 1;
	}
	count_taken(s, e);
}

static void take_groups(struct sim *s, const struct proto *p, int self, struct bind *b)
{
	int from = b->t;

	for (unsigned g = 0; g < p->t.n_groups; g++)
		take_units(s, 0, s->n_exec, p->t.groups[g].mask, p->t.groups[g].cycles, from,
			   self, b, ~0u);
}

static void take_port(struct sim *s, bool store, int self, struct bind *b)
{
	unsigned first = s->n_exec + (store ? s->m->loads_per_cycle : 0);
	unsigned count = store ? s->m->stores_per_cycle : s->m->loads_per_cycle;

	if (count)
		take_units(s, first, count, 0, 1, b->t, self, b,
			   store ? SCHED_UNIT_STORE_PORT : SCHED_UNIT_LOAD_PORT);
	if (store && s->m->stores_share_load_pipes && s->m->loads_per_cycle)
		take_units(s, s->n_exec, s->m->loads_per_cycle, 0, 1, b->t, self, b,
			   SCHED_UNIT_LOAD_PORT);
}

static void execute(struct sim *s, size_t i)
{
	struct elem *e = &s->e[i];
	const struct proto *p = e->p;
	struct bind b = { e->D, e->d_serial ? SCHED_SERIAL : e->d_limited ? SCHED_DISPATCH :
			  SCHED_LATENCY, 0, 0, -1 };

	if (p->fused && i) {
		e->S = s->e[i - 1].S;
		e->C = s->e[i - 1].C;
		e->why = s->e[i - 1].why;
		return;
	}
	if (p->serial)
		bind_max(&b, s->last_r, SCHED_SERIAL, 0, -1, 0);
	bind_regs(s, &p->addr, &b);
	if (p->t.flags & ME_LOAD) {
		take_port(s, false, (int)i, &b);
		e->S = b.t;
		b.t += (int)p->load_lat;
		bind_memdep(s, i, &b);
		bind_regs(s, &p->data, &b);
		take_groups(s, p, (int)i, &b);
		b.t += (int)(p->t.latency - p->load_lat);
	} else {
		bind_regs(s, &p->data, &b);
		take_groups(s, p, (int)i, &b);
		if (p->t.flags & ME_STORE)
			take_port(s, true, (int)i, &b);
		e->S = b.t;
		b.t += (int)p->t.latency;
	}
	e->C = b.t;
	e->why = b;
}

/* Register results, the store window, serialisation. */
static void writeback(struct sim *s, size_t i)
{
	const struct elem *e = &s->e[i];
	const struct proto *p = e->p;
	int ready = e->C, writer = (int)i;

	if (p->fused)
		return;
	if (p->t.eliminated && !(p->in->flags & (INSN_F_ZERO_IDIOM | INSN_F_NOP))) {
		struct bind src = { INT_MIN / 2, SCHED_NONE, 0, 0, -1 };

		bind_regs(s, &p->data, &src);  /* a renamed move: the source's timing */
		ready = src.t;
		writer = src.producer;
	}
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t bits = p->in->writes.w[w]; bits; bits &= bits - 1) {
			unsigned r = w * 64 + (unsigned)__builtin_ctzll(bits);

			if (r == DREG_PC || (r == DREG_RSP && p->stack_op))
				continue;
			s->reg_ready[r] = ready;
			s->reg_writer[r] = writer;
		}
	if ((p->t.flags & ME_STORE) && (p->mem[0] || (p->in->flags & INSN_F_RIP_REL)))
		s->stores[s->n_stores++ % STORE_WINDOW] = (int)i;
	if (p->serial && e->C > s->serial_until)
		s->serial_until = e->C;
}

static void retire(struct sim *s, size_t i)
{
	struct elem *e = &s->e[i];
	int r;

	if (e->p->fused && i) {
		e->R = s->e[i - 1].R;
		return;
	}
	r = e->C > s->last_r ? e->C : s->last_r;
	if (r == s->last_r && s->retired_last >= s->m->retire_width)
		r++;
	if (r != s->last_r)
		s->retired_last = 0;
	s->last_r = r;
	s->retired_last++;
	e->R = r;
	if (e->p->call && r > s->call_until)
		s->call_until = r;
}

static void sim_run(struct sim *s)
{
	for (unsigned r = 0; r < DREG__COUNT; r++)
		s->reg_ready[r] = INT_MIN / 2;
	for (size_t i = 0; i < s->n; i++) {
		dispatch(s, i);
		execute(s, i);
		writeback(s, i);
		retire(s, i);
		if (i % 64 == 63)
			for (unsigned u = 0; u < s->n_units; u++)
				unit_prune(&s->units[u], s->disp_cycle);
	}
}

/* ---- results -------------------------------------------------------------------- */

static struct sched_ref ref_of(const struct sim *s, size_t i, int j)
{
	struct sched_ref ref = { SREF_NONE, 0 };
	const struct elem *p;

	if (j < 0)
		return ref;
	p = &s->e[j];
	if (p->block_index < 0) {
		ref.kind = SREF_PRED;
		ref.index = (unsigned)p->pred_index;
	} else {
		ref.kind = p->iter == s->e[i].iter ? SREF_BLOCK : SREF_PREV_ITER;
		ref.index = (unsigned)p->block_index;
	}
	return ref;
}

/* Fills the reason fields of out from stream element i (an issue point). */
static void explain(const struct sim *s, size_t i, int r_prev, struct sched_insn *out)
{
	const struct elem *e = &s->e[i];

	out->reason = e->C <= r_prev ? SCHED_RETIRE : e->why.why;
	out->reg = 0;
	out->unit = 0;
	out->producer = (struct sched_ref){ SREF_NONE, 0 };
	if (out->reason == SCHED_DEP)
		out->reg = e->why.reg;
	if (out->reason == SCHED_UNIT)
		out->unit = e->why.unit;
	if (out->reason == SCHED_DEP || out->reason == SCHED_MEMDEP || out->reason == SCHED_UNIT)
		out->producer = ref_of(s, i, e->why.producer);
}

/* Records stream elements [first, first+n) as one pass over the block. */
static void record_pass(const struct sim *s, size_t first, struct block_schedule *out,
			bool last)
{
	int base = first ? s->e[first - 1].R : 0;

	for (size_t k = 0; k < out->n; k++) {
		size_t i = first + k;
		const struct elem *e = &s->e[i];
		int r_prev = i ? s->e[i - 1].R : 0;
		int m = e->R - r_prev;
		struct sched_insn *o = &out->insn[k];

		o->m += m;
		o->stall += m > 1 ? m - 1 : 0;
		if (m > 0)
			explain(s, i, r_prev, o);  /* the latest pass where it is an issue point */
		if (last) {
			o->dispatch = e->D - base;
			o->issue = e->S - base;
			o->complete = e->C - base;
			o->retire = e->R - base;
		}
	}
}

static void finish(struct block_schedule *out, unsigned passes)
{
	out->cycles = 0;
	out->issue_points = 0;
	out->uncertain = 0;
	for (size_t k = 0; k < out->n; k++) {
		struct sched_insn *o = &out->insn[k];

		o->m /= passes;
		o->stall /= passes;
		o->issue_point = o->m > 0;
		if (!o->issue_point)
			o->reason = SCHED_NONE;
		out->cycles += o->m;
		out->issue_points += o->issue_point;
		out->uncertain += !!(o->flags & SCHED_F_UNCERTAIN);
	}
	out->iterations = passes;
}

/* ---- API ---------------------------------------------------------------------------- */

void block_schedule_init(struct block_schedule *s)
{
	memset(s, 0, sizeof(*s));
}

void block_schedule_release(struct block_schedule *s)
{
	free(s->insn);
	block_schedule_init(s);
}

static struct proto *prepare_all(const struct cpu_model *m, const struct insn *insns, size_t n,
				 bool loop)
{
	struct proto *p = xcalloc(n ? n : 1, sizeof(*p));

	for (size_t i = 0; i < n; i++)
		prepare(m, &p[i], &insns[i], i ? &insns[i - 1] : NULL, loop);
	return p;
}

/* Iterations of a self-loop: enough to fill the ROB twice, then `measured`. */
static void loop_iterations(const struct cpu_model *m, size_t n, unsigned *warm,
			    unsigned *measured)
{
	size_t w = (2 * m->rob_size + n - 1) / n;

	*measured = 8;
	if (w < 2)
		w = 2;
	if (w * n > 8192)
		w = 8192 / n > 2 ? 8192 / n : 2;
	*warm = (unsigned)w;
}

int schedule_block(const struct cpu_model *m, const struct insn *insns, size_t n,
		   const struct sched_entry *entry, struct block_schedule *out)
{
	enum sched_entry_kind kind = entry ? entry->kind : SCHED_ENTRY_COLD;
	size_t n_pred = kind == SCHED_ENTRY_PRED ? entry->n_pred : 0;
	struct proto *block, *pred = NULL;
	unsigned warm = 0, measured = 1;
	struct sim s;

	if (!n)
		return errorf("cannot schedule an empty block");
	for (size_t i = 0; i < n; i++)
		if (m->arch == ARCH_X86_64 && insns[i].cs_id >= MODEL_X86_NIDS)
			return errorf("instruction at 0x%llx is not for model '%s'",
				      (unsigned long long)insns[i].addr, m->name);
	block_schedule_release(out);
	out->model = m;
	out->entry = kind;
	out->n = n;
	out->insn = xcalloc(n, sizeof(*out->insn));
	block = prepare_all(m, insns, n, kind == SCHED_ENTRY_LOOP);
	if (n_pred)
		pred = prepare_all(m, entry->pred, n_pred, false);
	if (n_pred && macro_fused(m, &entry->pred[n_pred - 1], &insns[0]))
		block[0].fused = true;
	if (kind == SCHED_ENTRY_LOOP)
		loop_iterations(m, n, &warm, &measured);

	sim_init(&s, m);
	for (size_t i = 0; i < n_pred; i++)
		sim_push(&s, &pred[i], -1, (int)i, 0);
	for (unsigned it = 0; it < warm + measured; it++)
		for (size_t i = 0; i < n; i++)
			sim_push(&s, &block[i], (int)i, -1, (int)it);
	sim_run(&s);
	for (unsigned it = 0; it < measured; it++)
		record_pass(&s, n_pred + (size_t)(warm + it) * n, out, it == measured - 1);
	for (size_t i = 0; i < n; i++) {
		out->insn[i].timing = block[i].t;
		bool after_call = i ? block[i - 1].call : n_pred && pred[n_pred - 1].call;

		out->insn[i].flags = (block[i].fused ? SCHED_F_FUSED : 0) |
				     (after_call ? SCHED_F_AFTER_CALL : 0) |
				     (block[i].t.eliminated ? SCHED_F_ELIMINATED : 0) |
				     (block[i].uncertain ? SCHED_F_UNCERTAIN : 0);
	}
	finish(out, measured);
	sim_release(&s);
	free(block);
	free(pred);
	return 0;
}

void block_schedule_min(struct block_schedule *acc, const struct block_schedule *other)
{
	if (!other || other->n != acc->n)
		BUG("block_schedule_min: schedules of different blocks");
	acc->cycles = 0;
	acc->issue_points = 0;
	for (size_t i = 0; i < acc->n; i++) {
		if (other->insn[i].m < acc->insn[i].m)
			acc->insn[i] = other->insn[i];
		acc->cycles += acc->insn[i].m;
		acc->issue_points += acc->insn[i].issue_point;
	}
}

const char *sched_reason_name(enum sched_reason r)
{
	static const char *const names[] = {
		[SCHED_NONE] = "none",
		[SCHED_LATENCY] = "latency",
		[SCHED_DEP] = "dependence",
		[SCHED_MEMDEP] = "memory dependence",
		[SCHED_UNIT] = "unit busy",
		[SCHED_DISPATCH] = "dispatch",
		[SCHED_RETIRE] = "retire width",
		[SCHED_SERIAL] = "serialising",
	};

	return (unsigned)r < ARRAY_SIZE(names) ? names[r] : "?";
}

static void describe_ref(const struct sched_ref *ref, struct strbuf *out)
{
	switch (ref->kind) {
	case SREF_BLOCK: strbuf_addf(out, " from #%u", ref->index); break;
	case SREF_PREV_ITER: strbuf_addf(out, " from #%u (previous iteration)", ref->index); break;
	case SREF_PRED: strbuf_addf(out, " from predecessor #%u", ref->index); break;
	default: break;
	}
}

void sched_describe(const struct block_schedule *s, size_t i, struct strbuf *out)
{
	const struct sched_insn *o = &s->insn[i];

	strbuf_addf(out, "M=%g", o->m);
	if (o->flags & SCHED_F_FUSED)
		strbuf_addstr(out, " fused");
	if (o->flags & SCHED_F_ELIMINATED)
		strbuf_addstr(out, " eliminated");
	if (o->issue_point) {
		strbuf_addf(out, " %s", sched_reason_name(o->reason));
		if (o->reason == SCHED_DEP)
			strbuf_addf(out, " on %s", sched_reg_name(o->reg));
		if (o->reason == SCHED_UNIT)
			strbuf_addf(out, " %s", o->unit == SCHED_UNIT_LOAD_PORT ? "load port" :
				    o->unit == SCHED_UNIT_STORE_PORT ? "store port" :
				    model_unit_name(s->model, o->unit));
		describe_ref(&o->producer, out);
		if (o->reason == SCHED_LATENCY)
			strbuf_addf(out, " (%s, %u cycles)", model_fu_name(o->timing.fu),
				    o->timing.latency);
	}
	if (o->flags & SCHED_F_UNCERTAIN)
		strbuf_addstr(out, " uncertain");
}
