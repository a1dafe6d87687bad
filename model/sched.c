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
#include "core/hash.h"
#include "core/idmap.h"
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
	static const char *const vec[32] = {
		"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
		"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
		"xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",
		"xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31",
	};
	static const char *const mask[8] = { "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7" };

	if (reg < 16)
		return gpr_names[reg][0];
	switch (reg) {
	case DREG_PC: return "rip";
	case DREG_FLAGS: return "flags";
	case DREG_X87: return "st";
	case DREG_MXCSR: return "mxcsr";
	case DREG_SEG: return "seg";
	}
	if (reg >= DREG_V0 && reg < DREG_V0 + 32)
		return vec[reg - DREG_V0];
	if (reg >= DREG_K0 && reg < DREG_K0 + 8)
		return mask[reg - DREG_K0];
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
			if (gpr_names[r][k] && gpr_names[r][k][0] == name[0] &&
			    !strcmp(gpr_names[r][k], name))
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

/* What the scheduler needs of one instruction, computed once per procedure. */
struct proto {
	const struct insn *in;
	struct model_timing t;      /* outside a loop's steady state */
	struct regset addr, data;   /* registers needed for the address / the rest */
	uint32_t mem;               /* memory operand text, interned (0: none) */
	unsigned load_lat;          /* the load part of the latency (0 if no load) */
	unsigned loop_extra;        /* added to the latency and its load part in a loop */
	bool stack_op;              /* push/pop/call/ret: rsp from the stack engine */
	bool serial;                /* waits for all older instructions */
	bool call;                  /* the callee runs after it: what follows starts afresh */
	bool uncertain;
	bool bad;                   /* an id out of the model's range: cannot be scheduled */
	bool renamed;               /* an eliminated move: its result is its source's */
	bool store;                 /* a store to an address loads can be told to read */
	struct regset writes;       /* registers whose timing it sets (not rip, nor rsp
				       through the stack engine) */
};

static bool is_stack_op(unsigned id)
{
	return id == X86_INS_PUSH || id == X86_INS_POP || id == X86_INS_CALL || id == X86_INS_RET;
}

static void prepare_regs(const struct cpu_model *m, struct proto *p, char *mem, size_t memsz)
{
	const struct insn *in = p->in;

	mem[0] = 0;
	if (sig_has(in->opsig, OPK_MEM) || (p->t.flags & (ME_LOAD | ME_STORE)))
		parse_mem(in->text, mem, memsz, &p->addr);
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
 * What the table's key (no addressing mode) cannot say: a load through a
 * scaled index takes m->scaled_index_latency more.  Added in a loop's
 * steady state only, where a recurrence through the load shows its whole
 * latency; a block scheduled cold already overstates the latency of its
 * loads (the core ran them ahead of entry), and adding to it made those
 * estimates worse (docs/analysis.md, "Accuracy").
 */
static unsigned address_latency(const struct cpu_model *m, const struct proto *p, const char *mem)
{
	if (p->load_lat && m->scaled_index_latency &&
	    (strchr(mem, '*') || (m->index3_latency && mem_terms(mem) >= 3)))
		return m->scaled_index_latency;
	return 0;
}

/*
 * A lea computes on an ALU, which llvm-mca's znver3 table does not say
 * (m->lea_units); with three components (base, index, displacement) it is
 * slower and, on Zen, two ops (m->lea3_latency, m->lea3_units).
 */
static void lea_timing(const struct cpu_model *m, struct proto *p, const char *mem)
{
	struct model_timing *t = &p->t;

	if (p->in->cs_id != X86_INS_LEA || (t->flags & (ME_LOAD | ME_STORE)))
		return;
	if (m->lea_units && !t->n_groups) {
		t->groups[0] = (struct model_unit_group){ m->lea_units, 1 };
		t->n_groups = 1;
	}
	if (!m->lea3_latency || mem_terms(mem) < 3)
		return;
	if (t->latency < m->lea3_latency)
		t->latency = m->lea3_latency;
	if (m->lea3_units && t->n_groups < MODEL_MAX_GROUPS) {
		t->groups[t->n_groups++] = (struct model_unit_group){
			m->lea3_units, (uint8_t)(m->lea3_cycles ? m->lea3_cycles : 1) };
		t->uops++;
	}
}

/* ---- prepared instructions ------------------------------------------------------ */

#define MEM_TEXT 64                 /* memory operand texts are compared up to this */

/* A machine's state as numbers (the steady state of a loop, below). */
struct state_vec {
	int *v;
	size_t n, alloc;
};

/*
 * Element sizes of the stream and the results are known before a
 * schedule runs, so its buffers are kept here from one schedule to the
 * next (a prepared procedure is used by one thread at a time).
 */
struct sim_buffers {
	struct elem *e;
	size_t e_alloc;
	const struct proto **seq;
	size_t seq_alloc;
	struct slot *slots;
	size_t slots_alloc;
	uint64_t *busy;             /* the units' ring: a bit per unit busy in a cycle */
	int *holder;                /* ... and the stream element holding it */
	size_t cap;                 /* cycles in the ring (a power of two) */
	unsigned stride;            /* holders per cycle: the model's units and ports */
	struct state_vec snap, now; /* a loop's states (sim_run_loop) */
	uint64_t *dig;              /* ... and its passes' digests */
	size_t dig_alloc;
	struct ctx_snap *ctx[2];    /* the machine after recent contexts (ctx_find) */
	unsigned ctx_next;          /* the entry to replace next */
};

struct ctx_snap;
static void ctx_free(struct ctx_snap *c);

struct sched_prep {
	const struct cpu_model *m;
	struct proto *p;
	size_t n, alloc;
	struct idmap mems;          /* memory operand texts: id - 1 indexes mem_text */
	char (*mem_text)[MEM_TEXT];
	size_t n_mem, mem_alloc;
	struct sim_buffers buf;
	bool full_runs;             /* no shortcut (tests) */
};

static uint32_t intern_mem(struct sched_prep *sp, const char *mem)
{
	uint64_t h;

	if (!mem[0])
		return 0;
	h = hash_bytes(HASH_FNV_INIT, mem, strlen(mem));
	for (uint32_t id = idmap_first(&sp->mems, h); id != IDMAP_NONE; id = idmap_next(&sp->mems, id))
		if (!strcmp(sp->mem_text[id], mem))
			return id + 1;
	ALLOC_GROW(sp->mem_text, sp->n_mem + 1, sp->mem_alloc);
	memcpy(sp->mem_text[sp->n_mem], mem, MEM_TEXT);
	idmap_add(&sp->mems, h, (uint32_t)sp->n_mem);
	return (uint32_t)++sp->n_mem;
}

static void prepare(struct sched_prep *sp, struct proto *p, const struct insn *in)
{
	const struct cpu_model *m = sp->m;
	char mem[MEM_TEXT];

	memset(p, 0, sizeof(*p));
	p->in = in;
	if (m->arch == ARCH_X86_64 && in->cs_id >= MODEL_X86_NIDS) {
		p->bad = true;
		return;
	}
	model_lookup(m, in, &p->t);
	if (p->t.fu == FU_BRANCH && !(p->t.flags & ME_LOAD))
		p->t.latency = 1;  /* resolves in a cycle; llvm-mca's 100 for calls is a placeholder */
	memset(mem, 0, sizeof(mem));
	prepare_regs(m, p, mem, sizeof(mem));
	p->mem = intern_mem(sp, mem);
	p->serial = p->t.fu == FU_SYSTEM;
	p->call = in->kind == INSN_CALL || in->kind == INSN_ICALL;
	p->uncertain = p->t.match == MODEL_DEFAULT || p->t.fu == FU_STRING ||
		       p->t.fu == FU_SYSTEM || (in->flags & INSN_F_REP) ||
		       ((p->t.flags & ME_UNMODELED) && p->t.latency >= 100);
	/* a locked op needs all its operands before it starts (no early load) */
	p->load_lat = (in->flags & INSN_F_LOCK) ? 0 : load_part(m, p);
	p->loop_extra = address_latency(m, p, mem);
	lea_timing(m, p, mem);
	p->renamed = p->t.eliminated && !(in->flags & (INSN_F_ZERO_IDIOM | INSN_F_NOP));
	p->store = (p->t.flags & ME_STORE) && (p->mem || (in->flags & INSN_F_RIP_REL));
	p->writes = in->writes;
	p->writes.w[DREG_PC >> 6] &= ~(1ull << (DREG_PC & 63));
	if (p->stack_op)
		p->writes.w[DREG_RSP >> 6] &= ~(1ull << (DREG_RSP & 63));
}

/* Prepares insns[0..n) after the instructions sp has. */
static void prep_add(struct sched_prep *sp, const struct insn *insns, size_t n)
{
	ALLOC_GROW(sp->p, sp->n + n + 1, sp->alloc);
	for (size_t i = 0; i < n; i++)
		prepare(sp, &sp->p[sp->n++], &insns[i]);
}

struct sched_prep *sched_prep_new(const struct cpu_model *m, const struct insn *insns, size_t n)
{
	struct sched_prep *sp = xcalloc(1, sizeof(*sp));

	sp->m = m;
	sp->mems = (struct idmap)IDMAP_INIT;
	prep_add(sp, insns, n);
	return sp;
}

void sched_prep_timing(const struct sched_prep *sp, size_t i, struct model_timing *t,
		       unsigned *loop_extra)
{
	if (i >= sp->n)
		BUG("sched_prep_timing: instruction %zu of %zu", i, sp->n);
	*t = sp->p[i].t;
	*loop_extra = sp->p[i].loop_extra;
}

void sched_prep_full_runs(struct sched_prep *sp, bool full)
{
	sp->full_runs = full;
}

void sched_prep_free(struct sched_prep *sp)
{
	if (!sp)
		return;
	free(sp->p);
	idmap_release(&sp->mems);
	free(sp->mem_text);
	free(sp->buf.e);
	free(sp->buf.seq);
	free(sp->buf.slots);
	free(sp->buf.busy);
	free(sp->buf.holder);
	free(sp->buf.dig);
	free(sp->buf.snap.v);
	free(sp->buf.now.v);
	for (unsigned k = 0; k < ARRAY_SIZE(sp->buf.ctx); k++)
		ctx_free(sp->buf.ctx[k]);
	free(sp);
}

/* ---- the machine -------------------------------------------------------------- */

/* A constraint on when something can happen, and what imposed it. */
struct bind {
	int t;
	enum sched_reason why;
	unsigned reg, unit;
	int producer;     /* stream index, -1 */
};

/*
 * What an instruction is at one place of the stream: the context's, the
 * body's first pass, the body's later passes (whose first instruction
 * follows the body's last, not the context's).
 */
struct slot {
	const struct proto *p;
	unsigned latency, load_lat; /* the proto's, in a loop with its loop_extra */
	bool fused;       /* one macro-op with the element before it */
	bool taken;       /* a control transfer not followed by its fall-through */
};

/* One instruction of the stream, as it ran. */
struct elem {
	const struct proto *p;
	int D, S, C, R;
	bool d_limited;   /* D was pushed by width, a taken branch or the ROB */
	bool d_serial;    /* D was pushed by a serialising instruction */
	struct bind why;
};

#define STORE_WINDOW 32
#define MAX_UNITS 64

/*
 * The execution units and ports are a ring of cycles, from the dispatch
 * cycle of the instruction being executed (nothing is reserved before it
 * any more) on: per cycle, a bit for each unit busy, and which stream
 * element holds it.  Cycles at or past `hi` are free.
 */
struct sim {
	const struct cpu_model *m;
	int reg_ready[DREG__COUNT];
	int reg_writer[DREG__COUNT];
	int disp_cycle;               /* the rest is cleared at the start */
	unsigned disp_used;
	int taken_cycle;              /* the cycle the last taken branch dispatched in */
	unsigned taken_used;          /* taken branches dispatched in it */
	int last_r;
	unsigned retired_last;
	int serial_until;
	int call_until;               /* after a call: dispatch resumes when it retired */
	unsigned n_exec, n_units;     /* table units, then load ports, then store ports */
	int stores[STORE_WINDOW];     /* recent store stream indices, ring */
	unsigned n_stores;
	struct elem *e;               /* the context's n_ctx, then passes of n_body */
	size_t n, n_ctx, n_body;
	const struct slot *slots;     /* n_ctx, n_body of the first pass, n_body of the others */
	struct sim_buffers *buf;      /* the ring's storage */
	int floor, hi;                /* the ring holds cycles [floor, hi) */
};

static void sim_init(struct sim *s, const struct cpu_model *m, struct sim_buffers *buf)
{
	/* reg_ready[r] is read only once reg_writer[r] says who wrote it */
	memset(&s->disp_cycle, 0, sizeof(*s) - offsetof(struct sim, disp_cycle));
	s->m = m;
	memset(s->reg_writer, 0xff, sizeof(s->reg_writer));  /* -1: none */
	s->n_exec = model_n_units(m);
	s->n_units = s->n_exec + m->loads_per_cycle + m->stores_per_cycle;
	if (s->n_units > MAX_UNITS)
		BUG("model '%s' has %u units and ports, more than %d", m->name, s->n_units, MAX_UNITS);
	s->buf = buf;
	if (!buf->cap) {
		buf->cap = 64;
		buf->stride = s->n_units ? s->n_units : 1;
		buf->busy = xcalloc(buf->cap, sizeof(*buf->busy));
		buf->holder = xmalloc(buf->cap * buf->stride * sizeof(*buf->holder));
	}
}

/* Clears the ring's cycles for the next schedule. */
static void sim_finish(struct sim *s)
{
	struct sim_buffers *b = s->buf;

	for (int c = s->floor; c < s->hi && c < s->floor + (int)b->cap; c++)
		b->busy[(size_t)c & (b->cap - 1)] = 0;
}

/* Nothing will be reserved before cycle f any more: its slots are reused. */
static void ring_advance(struct sim *s, int f)
{
	struct sim_buffers *b = s->buf;

	if (f <= s->floor)
		return;
	for (int c = s->floor; c < f && c < s->hi; c++)
		b->busy[(size_t)c & (b->cap - 1)] = 0;
	s->floor = f;
	if (s->hi < f)
		s->hi = f;
}

/* Makes room in the ring up to cycle c (exclusive). */
static void ring_reach(struct sim *s, int c)
{
	struct sim_buffers *b = s->buf;
	size_t cap = b->cap;
	uint64_t *busy;
	int *holder;

	if (c <= s->floor + (int)cap) {
		if (c > s->hi)
			s->hi = c;
		return;
	}
	while ((size_t)(c - s->floor) > cap)
		cap *= 2;
	busy = xcalloc(cap, sizeof(*busy));
	holder = xmalloc(cap * b->stride * sizeof(*holder));
	for (int k = s->floor; k < s->hi; k++) {
		size_t from = (size_t)k & (b->cap - 1), to = (size_t)k & (cap - 1);

		busy[to] = b->busy[from];
		memcpy(&holder[to * b->stride], &b->holder[from * b->stride],
		       b->stride * sizeof(*holder));
	}
	free(b->busy);
	free(b->holder);
	b->busy = busy;
	b->holder = holder;
	b->cap = cap;
	s->hi = c;
}

static inline uint64_t ring_busy(const struct sim *s, int c)
{
	if (c >= s->hi)
		return 0;
	return s->buf->busy[(size_t)c & (s->buf->cap - 1)];
}

static inline int ring_holder(const struct sim *s, int c, unsigned u)
{
	return s->buf->holder[((size_t)c & (s->buf->cap - 1)) * s->buf->stride + u];
}

static void ring_take(struct sim *s, int start, int len, unsigned u, int holder)
{
	struct sim_buffers *b = s->buf;

	if (start + len > s->hi)
		ring_reach(s, start + len);
	for (int c = start; c < start + len; c++) {
		size_t k = (size_t)c & (b->cap - 1);

		b->busy[k] |= 1ull << u;
		b->holder[k * b->stride + u] = holder;
	}
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
 * Reserves `len` cycles on one of the units [first, first+count) whose bit
 * is set in mask (all if mask is 0), from `from` on: on a single unit one
 * busy stretch (a divider), on several `len` single cycles wherever free
 * (the earliest; the lowest unit of those free then).  Binds b with every
 * slot that had to wait, and with the element that held the unit up to
 * it.  Returns the latest slot.
 */
static int take_units(struct sim *s, unsigned first, unsigned count, uint32_t mask,
		      unsigned len, int from, int self, struct bind *b, unsigned report_unit)
{
	uint64_t units = count >= 64 ? ~0ull : (1ull << count) - 1;
	int last = from;

	if (mask)
		units &= mask;
	if (!units || !len)
		return from;
	units <<= first;
	if (!(units & (units - 1))) {  /* one unit: a stretch of len cycles */
		unsigned u = (unsigned)__builtin_ctzll(units);
		int t = from;

		for (int c = t; c < t + (int)len; c++)
			if (ring_busy(s, c) & units)
				t = c + 1;
		ring_take(s, t, (int)len, u, self);
		if (t > from)
			bind_max(b, t, SCHED_UNIT, 0, ring_holder(s, t - 1, u),
				 report_unit == ~0u ? u : report_unit);
		return t;
	}
	for (unsigned k = 0; k < len; k++) {
		int t = from;
		uint64_t free_now;
		unsigned u;

		while (!(free_now = units & ~ring_busy(s, t)))
			t++;
		u = (unsigned)__builtin_ctzll(free_now);
		if (t > from)
			bind_max(b, t, SCHED_UNIT, 0, ring_holder(s, t - 1, u),
				 report_unit == ~0u ? u : report_unit);
		ring_take(s, t, 1, u, self);
		if (t > last)
			last = t;
	}
	return last;
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
	if (ld->mem != st->mem)
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

	if (!p->mem && !(p->in->flags & INSN_F_RIP_REL))
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

/* Where stream element i's instruction is (struct slot). */
static inline const struct slot *slot_of(const struct sim *s, size_t i)
{
	size_t k;

	if (i < s->n_ctx + s->n_body)
		return &s->slots[i];
	k = i - s->n_ctx;
	return &s->slots[s->n_ctx + s->n_body + k % s->n_body];
}

/* Taken branches dispatched in the cycle of the last one (taken_per_cycle). */
static void count_taken(struct sim *s, const struct slot *sl, const struct elem *e)
{
	if (!sl->taken)
		return;
	if (s->taken_used && s->taken_cycle == e->D) {
		s->taken_used++;
	} else {
		s->taken_cycle = e->D;
		s->taken_used = 1;
	}
}

static void dispatch(struct sim *s, size_t i, const struct slot *sl, const struct slot *prev_sl)
{
	const struct cpu_model *m = s->m;
	struct elem *e = &s->e[i], *prev = i ? &s->e[i - 1] : NULL;
	unsigned uops = sl->p->t.uops;
	int d = s->disp_cycle;

	e->p = sl->p;
	e->d_serial = false;
	if (sl->fused) {
		e->D = prev->D;
		e->d_limited = false;
		count_taken(s, sl, e);
		return;
	}
	if (prev && prev_sl->taken && s->taken_used >= m->taken_per_cycle && d < prev->D + 1)
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
	count_taken(s, sl, e);
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

static void execute(struct sim *s, size_t i, const struct slot *sl)
{
	struct elem *e = &s->e[i];
	const struct proto *p = sl->p;
	struct bind b = { e->D, e->d_serial ? SCHED_SERIAL : e->d_limited ? SCHED_DISPATCH :
			  SCHED_LATENCY, 0, 0, -1 };

	if (sl->fused) {
		e->S = s->e[i - 1].S;
		e->C = s->e[i - 1].C;
		e->why = s->e[i - 1].why;
		return;
	}
	ring_advance(s, e->D);
	if (p->serial)
		bind_max(&b, s->last_r, SCHED_SERIAL, 0, -1, 0);
	bind_regs(s, &p->addr, &b);
	if (p->t.flags & ME_LOAD) {
		take_port(s, false, (int)i, &b);
		e->S = b.t;
		b.t += (int)sl->load_lat;
		bind_memdep(s, i, &b);
		bind_regs(s, &p->data, &b);
		take_groups(s, p, (int)i, &b);
		b.t += (int)(sl->latency - sl->load_lat);
	} else {
		bind_regs(s, &p->data, &b);
		take_groups(s, p, (int)i, &b);
		if (p->t.flags & ME_STORE)
			take_port(s, true, (int)i, &b);
		e->S = b.t;
		b.t += (int)sl->latency;
	}
	e->C = b.t;
	e->why = b;
}

/* Register results, the store window, serialisation. */
static void writeback(struct sim *s, size_t i, const struct slot *sl)
{
	const struct elem *e = &s->e[i];
	const struct proto *p = sl->p;
	int ready = e->C, writer = (int)i;

	if (sl->fused)
		return;
	if (p->renamed) {
		struct bind src = { INT_MIN / 2, SCHED_NONE, 0, 0, -1 };

		bind_regs(s, &p->data, &src);  /* a renamed move: the source's timing */
		ready = src.t;
		writer = src.producer;
	}
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t bits = p->writes.w[w]; bits; bits &= bits - 1) {
			unsigned r = w * 64 + (unsigned)__builtin_ctzll(bits);

			s->reg_ready[r] = ready;
			s->reg_writer[r] = writer;
		}
	if (p->store)
		s->stores[s->n_stores++ % STORE_WINDOW] = (int)i;
	if (p->serial && e->C > s->serial_until)
		s->serial_until = e->C;
}

static void retire(struct sim *s, size_t i, const struct slot *sl)
{
	struct elem *e = &s->e[i];
	int r;

	if (sl->fused) {
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
	if (sl->p->call && r > s->call_until)
		s->call_until = r;
}

static void sim_step(struct sim *s, size_t i)
{
	const struct slot *sl = slot_of(s, i), *prev = i ? slot_of(s, i - 1) : NULL;

	dispatch(s, i, sl, prev);
	execute(s, i, sl);
	writeback(s, i, sl);
	retire(s, i, sl);
}

/* ---- the steady state of a loop ---------------------------------------------------- */

/*
 * A loop's body is repeated until the reorder buffer has filled twice
 * (loop_iterations), but the machine is deterministic: once its state at
 * the start of a pass is the state of P passes before, shifted by T
 * cycles, every later pass is the one P passes before, T cycles later.
 * The rest of the stream is then written from the passes run, not run.
 *
 * The state is everything a later element's timing reads, relative to
 * the dispatch cycle and the first element of the pass (indices of
 * producers and holders), with what can no longer matter set aside: a
 * reorder buffer entry retired by the dispatch cycle, a serialisation or
 * a call over by then, a taken branch of an earlier cycle.  A repeat is
 * looked for cheaply first, by a digest of each pass's own timing; a
 * candidate period is then checked on the whole state.
 */

#define STEADY_MAX_PERIOD 16        /* passes */

static void sv_add(struct state_vec *sv, int x)
{
	ALLOC_GROW(sv->v, sv->n + 1, sv->alloc);
	sv->v[sv->n++] = x;
}

/* The state at the start of stream element i0 (a pass's first), relative. */
static void state_of(const struct sim *s, size_t i0, struct state_vec *sv)
{
	int base = s->disp_cycle, rel = (int)i0;
	size_t rob = s->m->rob_size, from = i0 > rob ? i0 - rob : 0, k;
	const struct elem *prev = &s->e[i0 - 1];

	sv->n = 0;
	sv_add(sv, (int)s->disp_used);
	if (s->taken_used && s->taken_cycle >= base) {
		sv_add(sv, s->taken_cycle - base);
		sv_add(sv, (int)s->taken_used);
	} else {
		sv_add(sv, -1);
	}
	sv_add(sv, s->last_r - base);
	sv_add(sv, (int)s->retired_last);
	sv_add(sv, (s->serial_until > base ? s->serial_until : base) - base);
	sv_add(sv, (s->call_until > base ? s->call_until : base) - base);
	for (unsigned r = 0; r < DREG__COUNT; r++) {
		if (s->reg_writer[r] < 0) {
			sv_add(sv, INT_MIN);
			continue;
		}
		sv_add(sv, s->reg_writer[r] - rel);
		sv_add(sv, s->reg_ready[r] - base);
	}
	k = s->n_stores < STORE_WINDOW ? s->n_stores : STORE_WINDOW;
	sv_add(sv, (int)k);
	for (unsigned j = 1; j <= k; j++) {
		int st = s->stores[(s->n_stores - j) % STORE_WINDOW];

		sv_add(sv, st - rel);
		sv_add(sv, s->e[st].C - base);
	}
	/* the reorder buffer: entries retiring after the dispatch cycle (a suffix) */
	for (k = i0; k > from && s->e[k - 1].R > base; k--)
		;
	sv_add(sv, (int)(i0 - k));
	for (; k < i0; k++)
		sv_add(sv, s->e[k].R - base);
	sv_add(sv, prev->D - base);
	sv_add(sv, prev->S - base);
	sv_add(sv, prev->C - base);
	sv_add(sv, prev->R - base);
	sv_add(sv, prev->why.t - base);
	sv_add(sv, (int)prev->why.why);
	sv_add(sv, (int)prev->why.reg);
	sv_add(sv, (int)prev->why.unit);
	sv_add(sv, prev->why.producer < 0 ? INT_MIN : prev->why.producer - rel);
	/* the units from the dispatch cycle on */
	for (int c = base; c < s->hi; c++) {
		uint64_t busy = ring_busy(s, c);

		if (!busy)
			continue;
		sv_add(sv, c - base);
		sv_add(sv, (int)(busy & 0xffffffffu));
		sv_add(sv, (int)(busy >> 32));
		for (uint64_t bits = busy; bits; bits &= bits - 1)
			sv_add(sv, ring_holder(s, c, (unsigned)__builtin_ctzll(bits)) - rel);
	}
}

/* A digest of pass it's own timing (relative to its first dispatch). */
static uint64_t pass_digest(const struct sim *s, size_t first, size_t n, int prev_base)
{
	int base = s->e[first].D;
	uint64_t h = (uint64_t)(uint32_t)(base - prev_base);

	for (size_t j = first; j < first + n; j++) {
		const struct elem *e = &s->e[j];
		uint64_t a = (uint64_t)(uint32_t)(e->D - base) << 32 | (uint32_t)(e->S - base);
		uint64_t b = (uint64_t)(uint32_t)(e->C - base) << 32 | (uint32_t)(e->R - base);
		uint64_t c = (uint64_t)(uint32_t)(e->why.t - base) << 32 |
			     (uint32_t)(e->why.producer < 0 ? INT_MIN : e->why.producer - (int)j);
		uint64_t d = (uint64_t)e->why.why << 48 ^ (uint64_t)e->why.reg << 32 ^
			     (uint64_t)e->why.unit << 8 ^ (uint64_t)(e->d_limited | e->d_serial << 1);

		h = hash_u64(h ^ a) + hash_u64(b ^ c) + d;
	}
	return h;
}

/* The smallest period the last digests repeat with (twice), or 0. */
static unsigned digest_period(const uint64_t *d, size_t n)
{
	for (unsigned p = 1; p <= STEADY_MAX_PERIOD && 2 * (size_t)p <= n; p++) {
		unsigned k;

		for (k = 0; k < p && d[n - 1 - k] == d[n - 1 - k - p]; k++)
			;
		if (k == p)
			return p;
	}
	return 0;
}

/*
 * Writes elements [to, s->n) from the passes before element `to`, which
 * repeat with a period of `period` elements and `shift` cycles.
 */
static void repeat_passes(struct sim *s, size_t to, size_t period, int shift)
{
	for (size_t j = to; j < s->n; j++) {
		size_t q = (j - to) / period + 1;
		const struct elem *src = &s->e[j - q * period];
		struct elem *e = &s->e[j];
		int dt = (int)q * shift;

		*e = *src;
		e->D += dt;
		e->S += dt;
		e->C += dt;
		e->R += dt;
		e->why.t += dt;
		if (e->why.producer >= 0)
			e->why.producer += (int)(q * period);
	}
}

/*
 * Runs the stream of a loop, passes of n elements: like sim_run(), but
 * once the state repeats, the rest is written from the passes before.
 * `needed`: the first element whose timing is read.
 */
static void sim_run_loop(struct sim *s, size_t needed, struct sched_prep *sp)
{
	size_t n = s->n_body, passes = (s->n - s->n_ctx) / n;
	uint64_t *dig;
	struct state_vec *snap = &sp->buf.snap, *now = &sp->buf.now;
	size_t snap_at = 0, next_try = 0, backoff = 4;
	unsigned snap_period = 0;
	int snap_base = 0, prev_base = 0;

	ALLOC_GROW(sp->buf.dig, passes + 1, sp->buf.dig_alloc);
	dig = sp->buf.dig;
	for (size_t it = 0; it < passes; it++) {
		size_t first = s->n_ctx + it * n;

		if (snap_period && it == snap_at + snap_period) {
			state_of(s, first, now);
			if (now->n == snap->n && !memcmp(now->v, snap->v, now->n * sizeof(*now->v))) {
				repeat_passes(s, first, snap_period * n, s->disp_cycle - snap_base);
				return;
			}
			snap_period = 0;
			next_try = it + backoff;
			backoff *= 2;
		}
		if (!snap_period && it >= next_try && it >= 2) {
			unsigned p = digest_period(dig, it);

			if (p && first + p * n < needed) {
				state_of(s, first, snap);
				snap_at = it;
				snap_period = p;
				snap_base = s->disp_cycle;
			}
		}
		for (size_t j = first; j < first + n; j++)
			sim_step(s, j);
		dig[it] = pass_digest(s, first, n, it ? prev_base : s->e[first].D);
		prev_base = s->e[first].D;
	}
}

static void sim_run_to(struct sim *s, size_t to)
{
	for (size_t i = 0; i < to; i++)
		sim_step(s, i);
}

static void sim_run(struct sim *s, size_t from)
{
	for (size_t i = from; i < s->n; i++)
		sim_step(s, i);
}

/* ---- contexts: the machine after one, for each block it precedes ---------------- */

/*
 * A block scheduled after a predecessor's code (PRED) runs that code
 * first, and so does every other block the predecessor leads to.  The
 * machine after the context's instructions but its last (whether that
 * one is a taken branch depends on the block) is kept for the last two
 * contexts, and a block after one of them starts from it.
 */
#define CTX_SNAP_MAX 64

struct ctx_snap {
	uint32_t idx[CTX_SNAP_MAX];
	size_t n;                   /* the context idx[0..n) */
	struct sim sim;             /* the machine after its first n - 1 (pointers unused) */
	struct elem e[CTX_SNAP_MAX];/* those elements */
	uint64_t *busy;             /* the ring's cycles [sim.floor, sim.hi) */
	int *holder;
	size_t cycles_alloc;
};

static struct ctx_snap *ctx_find(const struct sim_buffers *b, const uint32_t *idx, size_t n)
{
	for (unsigned k = 0; k < ARRAY_SIZE(b->ctx); k++) {
		struct ctx_snap *c = b->ctx[k];

		if (c && c->n == n && !memcmp(c->idx, idx, n * sizeof(*idx)))
			return c;
	}
	return NULL;
}

static void ctx_save(struct sim_buffers *b, const struct sim *s, const uint32_t *idx, size_t n)
{
	struct ctx_snap *c;
	size_t cycles = (size_t)(s->hi - s->floor);

	if (!b->ctx[b->ctx_next])
		b->ctx[b->ctx_next] = xcalloc(1, sizeof(*c));
	c = b->ctx[b->ctx_next];
	b->ctx_next = (b->ctx_next + 1) % ARRAY_SIZE(b->ctx);
	memcpy(c->idx, idx, n * sizeof(*idx));
	c->n = n;
	c->sim = *s;
	memcpy(c->e, s->e, (n - 1) * sizeof(*c->e));
	if (cycles > c->cycles_alloc) {
		c->cycles_alloc = cycles;
		c->busy = xreallocarray(c->busy, cycles, sizeof(*c->busy));
		c->holder = xreallocarray(c->holder, cycles * b->stride, sizeof(*c->holder));
	}
	for (size_t k = 0; k < cycles; k++) {
		size_t slot = (size_t)(s->floor + (int)k) & (b->cap - 1);

		c->busy[k] = b->busy[slot];
		memcpy(&c->holder[k * b->stride], &b->holder[slot * b->stride],
		       b->stride * sizeof(*c->holder));
	}
}

/* Puts the machine (a new stream's, ring clear) in the state c kept. */
static void ctx_restore(struct sim *s, const struct ctx_snap *c)
{
	struct sim_buffers *b = s->buf;
	struct elem *e = s->e;
	const struct slot *slots = s->slots;
	size_t n = s->n, n_ctx = s->n_ctx, n_body = s->n_body;
	size_t cycles = (size_t)(c->sim.hi - c->sim.floor);

	*s = c->sim;
	s->buf = b;
	s->e = e;
	s->slots = slots;
	s->n = n;
	s->n_ctx = n_ctx;
	s->n_body = n_body;
	memcpy(e, c->e, (c->n - 1) * sizeof(*e));
	s->hi = s->floor;
	ring_reach(s, c->sim.hi);
	for (size_t k = 0; k < cycles; k++) {
		size_t slot = (size_t)(s->floor + (int)k) & (b->cap - 1);

		b->busy[slot] = c->busy[k];
		memcpy(&b->holder[slot * b->stride], &c->holder[k * b->stride],
		       b->stride * sizeof(*c->holder));
	}
}

static void ctx_free(struct ctx_snap *c)
{
	if (!c)
		return;
	free(c->busy);
	free(c->holder);
	free(c);
}

/* ---- results -------------------------------------------------------------------- */

/* Stream element j as the reason of element i (a body element) names it. */
static struct sched_ref ref_of(const struct sim *s, size_t i, int j)
{
	struct sched_ref ref = { SREF_NONE, 0 };

	if (j < 0)
		return ref;
	if ((size_t)j < s->n_ctx) {
		ref.kind = SREF_PRED;
		ref.index = (unsigned)j;
	} else {
		size_t b = (size_t)j - s->n_ctx;

		ref.kind = b / s->n_body == (i - s->n_ctx) / s->n_body ? SREF_BLOCK : SREF_PREV_ITER;
		ref.index = (unsigned)(b % s->n_body);
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

/* Instruction p at a place of the stream, after prev there (NULL: none). */
static void set_slot(struct slot *sl, const struct cpu_model *m, const struct proto *p,
		     const struct proto *prev, bool loop)
{
	sl->p = p;
	sl->latency = p->t.latency + (loop ? p->loop_extra : 0);
	sl->load_lat = p->load_lat + (loop ? p->loop_extra : 0);
	sl->fused = prev && p->in->kind == INSN_CJUMP && macro_fused(m, prev->in, p->in);
	sl->taken = false;
}

/* True if control goes from a to b other than by falling through. */
static bool taken_to(const struct proto *a, const struct proto *b)
{
	return insn_is_control(a->in) && a->in->addr + a->in->len != b->in->addr;
}

/*
 * The schedule of body[0..n) after ctx[0..n_ctx) (PRED), repeated (LOOP)
 * or alone (COLD).  The instructions before each one (for fusion) are
 * those of its array: none before the first of the context, nor before
 * the first of each pass over the body but the context's last.
 */
static int run_schedule(struct sched_prep *sp, const struct proto *const *body, size_t n,
			enum sched_entry_kind kind, const struct proto *const *ctx, size_t n_ctx,
			const uint32_t *ctx_idx, struct block_schedule *out)
{
	const struct cpu_model *m = sp->m;
	bool loop = kind == SCHED_ENTRY_LOOP;
	unsigned warm = 0, measured = 1;
	size_t total;
	struct slot *sl;
	struct sim s;

	if (!n)
		return errorf("cannot schedule an empty block");
	for (size_t i = 0; i < n; i++)
		if (body[i]->bad)
			return errorf("instruction at 0x%llx is not for model '%s'",
				      (unsigned long long)body[i]->in->addr, m->name);
	if (kind != SCHED_ENTRY_PRED)
		n_ctx = 0;
	block_schedule_release(out);
	out->model = m;
	out->entry = kind;
	out->n = n;
	out->insn = xcalloc(n, sizeof(*out->insn));
	if (loop)
		loop_iterations(m, n, &warm, &measured);
	total = n_ctx + (size_t)(warm + measured) * n;

	sim_init(&s, m, &sp->buf);
	ALLOC_GROW(sp->buf.e, total, sp->buf.e_alloc);
	ALLOC_GROW(sp->buf.slots, n_ctx + 2 * n, sp->buf.slots_alloc);
	sl = sp->buf.slots;
	s.e = sp->buf.e;
	s.n = total;
	s.n_ctx = n_ctx;
	s.n_body = n;
	s.slots = sl;
	/* the context, the first pass, the passes after it (after the body, not the context) */
	for (size_t i = 0; i < n_ctx; i++)
		set_slot(&sl[i], m, ctx[i], i ? ctx[i - 1] : NULL, false);
	for (size_t i = 0; i < n; i++) {
		set_slot(&sl[n_ctx + i], m, body[i], i ? body[i - 1] : n_ctx ? ctx[n_ctx - 1] : NULL,
			 loop);
		sl[n_ctx + n + i] = sl[n_ctx + i];
	}
	sl[n_ctx + n].fused = false;
	for (size_t i = 1; i < n_ctx; i++)
		sl[i - 1].taken = taken_to(ctx[i - 1], ctx[i]);
	if (n_ctx)
		sl[n_ctx - 1].taken = taken_to(ctx[n_ctx - 1], body[0]);
	for (size_t i = 1; i < n; i++)
		sl[n_ctx + i - 1].taken = sl[n_ctx + n + i - 1].taken = taken_to(body[i - 1], body[i]);
	if (warm + measured > 1)
		sl[n_ctx + n - 1].taken = sl[n_ctx + 2 * n - 1].taken = taken_to(body[n - 1], body[0]);
	if (loop && warm > STEADY_MAX_PERIOD && !sp->full_runs) {
		sim_run_loop(&s, n_ctx + (size_t)warm * n - 1, sp);
	} else if (ctx_idx && n_ctx >= 2 && n_ctx <= CTX_SNAP_MAX && !sp->full_runs) {
		const struct ctx_snap *c = ctx_find(&sp->buf, ctx_idx, n_ctx);

		if (c) {
			ctx_restore(&s, c);
		} else {
			sim_run_to(&s, n_ctx - 1);
			ctx_save(&sp->buf, &s, ctx_idx, n_ctx);
		}
		sim_run(&s, n_ctx - 1);
	} else {
		sim_run(&s, 0);
	}
	for (unsigned it = 0; it < measured; it++)
		record_pass(&s, n_ctx + (size_t)(warm + it) * n, out, it == measured - 1);
	for (size_t i = 0; i < n; i++) {
		const struct proto *p = body[i];
		bool after_call = i ? body[i - 1]->call : n_ctx && ctx[n_ctx - 1]->call;

		out->insn[i].timing = p->t;
		out->insn[i].timing.latency = sl[n_ctx + i].latency;
		out->insn[i].flags = (sl[n_ctx + i].fused ? SCHED_F_FUSED : 0) |
				     (after_call ? SCHED_F_AFTER_CALL : 0) |
				     (p->t.eliminated ? SCHED_F_ELIMINATED : 0) |
				     (p->uncertain ? SCHED_F_UNCERTAIN : 0);
	}
	finish(out, measured);
	sim_finish(&s);
	return 0;
}

/* The prepared instructions idx[0..n) as an array of pointers, at seq[at]. */
static void protos_of(const struct sched_prep *sp, const struct proto **seq, const uint32_t *idx,
		      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (idx[i] >= sp->n)
			BUG("schedule_prepared: instruction %u of %zu", idx[i], sp->n);
		seq[i] = &sp->p[idx[i]];
	}
}

int schedule_prepared(struct sched_prep *sp, const uint32_t *body, size_t n,
		      enum sched_entry_kind kind, const uint32_t *ctx, size_t n_ctx,
		      struct block_schedule *out)
{
	if (kind != SCHED_ENTRY_PRED)
		n_ctx = 0;
	ALLOC_GROW(sp->buf.seq, n_ctx + n + 1, sp->buf.seq_alloc);
	protos_of(sp, sp->buf.seq, ctx, n_ctx);
	protos_of(sp, sp->buf.seq + n_ctx, body, n);
	return run_schedule(sp, sp->buf.seq + n_ctx, n, kind, sp->buf.seq, n_ctx, ctx, out);
}

int schedule_block(const struct cpu_model *m, const struct insn *insns, size_t n,
		   const struct sched_entry *entry, struct block_schedule *out)
{
	enum sched_entry_kind kind = entry ? entry->kind : SCHED_ENTRY_COLD;
	size_t n_pred = kind == SCHED_ENTRY_PRED ? entry->n_pred : 0;
	struct sched_prep *sp;
	const struct proto **seq;
	int r;

	if (!n)
		return errorf("cannot schedule an empty block");
	sp = sched_prep_new(m, n_pred ? entry->pred : NULL, n_pred);
	prep_add(sp, insns, n);
	seq = xmalloc((n_pred + n + 1) * sizeof(*seq));
	for (size_t i = 0; i < n_pred + n; i++)
		seq[i] = &sp->p[i];
	r = run_schedule(sp, seq + n_pred, n, kind, seq, n_pred, NULL, out);
	free(seq);
	sched_prep_free(sp);
	return r;
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
