/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "analysis/measure.h"
#include "analysis/valprof.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "disasm/decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Pairs where the register went the wrong way or did not move: at most this share. */
#define MAX_BAD_SHARE 0.15
/*
 * The largest change of one pair, at most this share of all: a pair whose
 * change was another quantity (it began outside the loop, in code that
 * holds a pointer or another count in the register) would dominate the
 * sum.  (Not a multiple of the mean: legitimate pairs span several
 * periods when the thread migrates between CPUs or, system-wide, shares
 * its CPU; measured 4.1 times the mean on wl-chase under load.)
 */
#define MAX_SHARE 0.05
/* An invariant step register: its most common value at least this share. */
#define STEP_SHARE 0.99

struct scan {
	const struct listing *l;
	const struct cfg *cfg;
	const struct values_profile *prof;
	double cycles_per_sample;
	unsigned width;
	unsigned char *fwd, *bwd;       /* per block */
	uint32_t *stack;
	struct decoder *dec;            /* its own: the image's is another thread's to use */
};

/* Marks the blocks reachable from b (forward) or reaching b (backward), EXIT left out. */
static void reach(struct scan *s, size_t b, bool forward, unsigned char *mark)
{
	const struct cfg *cfg = s->cfg;
	size_t n = 0;

	memset(mark, 0, cfg->n_blocks);
	s->stack[n++] = (uint32_t)b;
	while (n) {
		const struct cfg_block *blk = &cfg->blocks[s->stack[--n]];
		uint32_t first = forward ? blk->succ : blk->pred, cnt = forward ? blk->n_succ : blk->n_pred;

		for (uint32_t k = 0; k < cnt; k++) {
			const struct cfg_edge *e = &cfg->edges[forward ? cfg->succ[first + k]
								      : cfg->pred[first + k]];
			uint32_t x = forward ? e->to : e->from;

			if (x == cfg->exit || mark[x])
				continue;
			mark[x] = 1;
			s->stack[n++] = x;
		}
	}
}

/* The mnemonic of an instruction's text ("add" of "add rcx, 1"). */
static bool mnemonic_is(const struct insn *in, const char *m)
{
	size_t n = strlen(m);

	return !strncmp(in->text, m, n) && (in->text[n] == ' ' || !in->text[n]);
}

/* The stack pointer is never a loop's counter. */
static int vreg_of(unsigned dreg)
{
	return dreg == DREG_RSP ? -1 : valprof_vreg(dreg);
}

/* True if block blk (listing index range) writes dreg other than at instruction skip. */
static bool loop_writes(const struct scan *s, const unsigned char *in_loop, unsigned dreg,
			size_t skip)
{
	for (size_t i = 0; i < s->l->n_insns; i++) {
		long b = s->l->insns[i].block;

		if (b < 0 || !in_loop[b] || i == skip)
			continue;
		if (regset_has(&s->l->insns[i].insn->writes, dreg))
			return true;
	}
	return false;
}

/*
 * The most common value of register r over the loop's samples, if it has
 * at least STEP_SHARE of them (a step held in a register the loop never
 * writes).
 */
static bool invariant_value(const struct scan *s, const unsigned char *in_loop, int r,
			    uint64_t *value)
{
	struct hotlist_entry room[HOTLIST_MAX];
	struct hotlist h;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(17);
	uint64_t samples = 0;
	size_t best = 0;

	hotlist_init(&h, room, HOTLIST_MAX);
	for (size_t i = 0; i < s->l->n_insns; i++) {
		long b = s->l->insns[i].block;
		const struct values_rec *rec;

		if (b < 0 || !in_loop[b] ||
		    !(rec = valprof_rec_at(s->l, s->prof, s->l->insns[i].insn->addr)) ||
		    !(rec->mask & (1u << r)))
			continue;
		hotlist_merge(&h, &rec->h[r], &rng);
		samples += rec->samples;
	}
	if (!h.n || samples < VALPROF_MIN_SAMPLES)
		return false;
	for (size_t k = 1; k < h.n; k++)
		if (h.e[k].count > h.e[best].count)
			best = k;
	if (hotlist_estimate(&h, best) < STEP_SHARE * (double)samples)
		return false;
	*value = h.e[best].value;
	return true;
}

/* Decodes listing instruction i with its operands. */
static bool ops_of(const struct scan *s, size_t i, struct insn_ops *ops)
{
	const struct insn *in = s->l->insns[i].insn;
	struct decoder *dec = s->dec;
	struct insn tmp;
	uint8_t code[16];

	return dec && in->len <= sizeof(code) && !image_read(s->l->img, in->addr, code, in->len) &&
	       decode_ops(dec, code, in->len, in->addr, &tmp, ops) && ops->n;
}

/*
 * If listing instruction i adds a constant to a 64- or 32-bit register
 * (inc, dec, add or sub of an immediate, lea r, [r + c], add or sub of a
 * register the loop never writes and the value profile shows invariant),
 * sets *dreg and *step.
 */
static bool step_of(const struct scan *s, size_t i, const unsigned char *in_loop, unsigned *dreg,
		    int64_t *step)
{
	const struct insn *in = s->l->insns[i].insn;
	const struct insn_operand *o0, *o1;
	struct insn_ops ops;
	uint64_t v;

	memset(&ops, 0, sizeof(ops));
	if (!ops_of(s, i, &ops) || ops.op[0].kind != OPK_REG || vreg_of(ops.op[0].reg) < 0)
		return false;
	o0 = &ops.op[0];
	o1 = ops.n > 1 ? &ops.op[1] : NULL;
	if (o0->size != 8 && o0->size != 4)
		return false;
	if ((mnemonic_is(in, "inc") || mnemonic_is(in, "dec")) && ops.n == 1)
		*step = mnemonic_is(in, "inc") ? 1 : -1;
	else if ((mnemonic_is(in, "add") || mnemonic_is(in, "sub")) && o1 && o1->kind == OPK_IMM)
		*step = mnemonic_is(in, "add") ? o1->imm : -o1->imm;
	else if (mnemonic_is(in, "lea") && o1 && o1->kind == OPK_MEM && o1->base == o0->reg &&
		 o1->index == DREG_NONE)
		*step = o1->disp;
	else if ((mnemonic_is(in, "add") || mnemonic_is(in, "sub")) && o1 && o1->kind == OPK_REG &&
		 o1->reg != o0->reg && vreg_of(o1->reg) >= 0 &&
		 !loop_writes(s, in_loop, o1->reg, (size_t)-1) &&
		 invariant_value(s, in_loop, vreg_of(o1->reg), &v))
		*step = mnemonic_is(in, "add") ? (int64_t)v : -(int64_t)v;
	else
		return false;
	/* A 32-bit counter wraps at 2^32: only small steps are safe to sum. */
	if (!*step || *step > INT32_MAX || *step < -INT32_MAX)
		return false;
	*dreg = o0->reg;
	return true;
}

/*
 * The block whose executions the register's changes count, for counting
 * instruction i: its own, when it is the register's only writer in the
 * loop; when several instructions add the same step (a loop whose
 * branches each increment, as compilers duplicate `i++` into the arms),
 * the block they all lead back to, if it is entered from within the loop
 * only through them (each iteration passes exactly one); else -1.  Only
 * the first writer reports, so a loop is measured once.
 */
static long counted_block(const struct scan *s, size_t i, const unsigned char *in_loop,
			  unsigned dreg, int64_t step)
{
	const struct cfg *cfg = s->cfg;
	unsigned char *writer = xcalloc(cfg->n_blocks, 1);
	long head = -1, ret = -1;
	size_t n = 0;

	for (size_t k = 0; k < s->l->n_insns; k++) {
		long b = s->l->insns[k].block;
		unsigned d2;
		int64_t st2;

		if (b < 0 || !in_loop[b] || !regset_has(&s->l->insns[k].insn->writes, dreg))
			continue;
		if (k < i || !step_of(s, k, in_loop, &d2, &st2) || d2 != dreg || st2 != step ||
		    writer[b])
			goto out;
		writer[b] = 1;
		n++;
	}
	if (n == 1) {
		ret = s->l->insns[i].block;
		goto out;
	}
	for (size_t b = 0; b < cfg->n_blocks; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		if (!writer[b])
			continue;
		for (uint32_t k = 0; k < blk->n_succ; k++) {
			uint32_t to = cfg->edges[cfg->succ[blk->succ + k]].to;

			if (to == cfg->exit || !in_loop[to])
				continue;
			if (head >= 0 && head != (long)to)
				goto out;
			head = to;
		}
	}
	if (head < 0)
		goto out;
	for (uint32_t k = 0; k < cfg->blocks[head].n_pred; k++) {
		uint32_t from = cfg->edges[cfg->pred[cfg->blocks[head].pred + k]].from;

		if (from != cfg->exit && in_loop[from] && !writer[from])
			goto out;
	}
	ret = head;
out:
	free(writer);
	return ret;
}

/* The value an immediate or invariant register operand holds in the loop. */
static bool operand_value(const struct scan *s, const unsigned char *in_loop,
			  const struct insn_operand *o, uint64_t *v)
{
	if (o->kind == OPK_IMM) {
		*v = (uint64_t)o->imm;
		return true;
	}
	return o->kind == OPK_REG && vreg_of(o->reg) >= 0 &&
	       !loop_writes(s, in_loop, o->reg, (size_t)-1) &&
	       invariant_value(s, in_loop, vreg_of(o->reg), v);
}

/* The loop's bound for dreg: what a cmp in the loop compares it with. */
static bool find_bound(const struct scan *s, const unsigned char *in_loop, unsigned dreg,
		       uint64_t *bound)
{
	for (size_t i = 0; i < s->l->n_insns; i++) {
		long b = s->l->insns[i].block;
		struct insn_ops ops;

		if (b < 0 || !in_loop[b] || !mnemonic_is(s->l->insns[i].insn, "cmp"))
			continue;
		memset(&ops, 0, sizeof(ops));
		if (!ops_of(s, i, &ops) || ops.n != 2)
			continue;
		for (unsigned k = 0; k < 2; k++)
			if (ops.op[k].kind == OPK_REG && ops.op[k].reg == dreg &&
			    operand_value(s, in_loop, &ops.op[1 - k], bound))
				return true;
	}
	return false;
}

/*
 * The value dreg has when the loop is entered: set by the last writer in
 * every block that enters it (xor r, r or mov r, imm), all the same.
 */
static bool find_start(const struct scan *s, const unsigned char *in_loop, unsigned dreg,
		       uint64_t *start)
{
	const struct cfg *cfg = s->cfg;
	bool found = false;

	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];
		const struct cfg_block *blk;
		uint64_t v = 0;
		bool set = false;

		if (ed->to == cfg->exit || !in_loop[ed->to] || ed->from == cfg->exit ||
		    in_loop[ed->from])
			continue;
		blk = &cfg->blocks[ed->from];
		for (uint32_t k = blk->n_insns; k-- > 0 && !set;) {
			size_t i = blk->first + k;
			const struct insn *in = &cfg->insns[i];
			struct insn_ops ops;

			if (!regset_has(&in->writes, dreg))
				continue;
			memset(&ops, 0, sizeof(ops));
			if ((in->flags & INSN_F_ZERO_IDIOM) && mnemonic_is(in, "xor")) {
				v = 0;
			} else if (!mnemonic_is(in, "mov") || !ops_of(s, i, &ops) || ops.n != 2 ||
				   ops.op[1].kind != OPK_IMM) {
				return false;
			} else {
				v = (uint64_t)ops.op[1].imm;
			}
			set = true;
		}
		if (!set || (found && v != *start))
			return false;
		*start = v;
		found = true;
	}
	return found;
}

/* The loop around block b: blocks both reachable from b and reaching b. */
static bool loop_of(struct scan *s, size_t b, unsigned char *in_loop, size_t *n_blocks)
{
	const struct cfg *cfg = s->cfg;

	reach(s, b, true, s->fwd);
	if (!s->fwd[b])
		return false;  /* b is on no cycle */
	reach(s, b, false, s->bwd);
	*n_blocks = 0;
	for (size_t x = 0; x < cfg->n_blocks; x++) {
		in_loop[x] = s->fwd[x] && s->bwd[x];
		*n_blocks += in_loop[x];
	}
	/* A call in the loop: its callee's time is in the pairs, not in the loop's samples. */
	for (size_t i = 0; i < s->l->n_insns; i++) {
		long blk = s->l->insns[i].block;
		enum insn_kind k = s->l->insns[i].insn->kind;

		if (blk >= 0 && in_loop[blk] && (k == INSN_CALL || k == INSN_ICALL || k == INSN_SYSCALL))
			return false;
	}
	return true;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Sums the pairs and samples of the loop for register r. */
static void sum_loop(const struct scan *s, const unsigned char *in_loop, int r,
		     enum dcpi_event ev, struct measure *m, struct values_delta *d)
{
	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < s->l->n_insns; i++) {
		long b = s->l->insns[i].block;
		const struct values_rec *rec;

		if (b < 0 || !in_loop[b])
			continue;
		m->loop_samples += (double)s->l->insns[i].samples[ev];
		rec = valprof_rec_at(s->l, s->prof, s->l->insns[i].insn->addr);
		if (!rec || !rec->pairs)
			continue;
		m->pairs += rec->pairs->n;
		d->spos = sat_add(d->spos, rec->pairs->d[r].spos);
		d->sneg = sat_add(d->sneg, rec->pairs->d[r].sneg);
		d->npos += rec->pairs->d[r].npos;
		d->nneg += rec->pairs->d[r].nneg;
		values_top2(&d->mpos, &d->mpos2, rec->pairs->d[r].mpos);
		values_top2(&d->mpos, &d->mpos2, rec->pairs->d[r].mpos2);
		values_top2(&d->mneg, &d->mneg2, rec->pairs->d[r].mneg);
		values_top2(&d->mneg, &d->mneg2, rec->pairs->d[r].mneg2);
	}
}

/*
 * Runs of the loop a few periods long: most pairs lie in one run, the
 * others cross into the next, where the register starts again.  With the
 * bound it counts to and the start it is set to before the loop (trip T =
 * (bound - start) / step), and when a period is less than half a run, a
 * pair that went the wrong way crossed exactly one start: it did T steps
 * more than its change.  So the changes still telescope, modulo the trip.
 */
static bool wrapped(const struct scan *s, const unsigned char *in_loop, unsigned dreg,
		    const struct values_delta *d, struct measure *m, double *moved)
{
	uint64_t bound = 0, start = 0, span;
	double fwd, back, nfwd, nback, per;
	int64_t c = m->step;

	if (!find_bound(s, in_loop, dreg, &bound) || !find_start(s, in_loop, dreg, &start))
		return false;
	span = c > 0 ? bound - start : start - bound;
	if ((int64_t)span <= 0 || span % (uint64_t)(c > 0 ? c : -c))
		return false;
	m->trip = span / (uint64_t)(c > 0 ? c : -c);
	fwd = (double)(c > 0 ? d->spos : d->sneg);
	back = (double)(c > 0 ? d->sneg : d->spos);
	nfwd = (double)(c > 0 ? d->npos : d->nneg);
	nback = (double)(c > 0 ? d->nneg : d->npos);
	per = nfwd > 0 ? fwd / nfwd / (double)(c > 0 ? c : -c) : 0;
	if (m->trip < 2 || !(per > 0) || per > (double)m->trip / 2 ||
	    (double)(c > 0 ? d->mneg : d->mpos) >= (double)span)
		return false;
	m->wraps = (uint64_t)nback;
	*moved = fwd - back + nback * (double)span;
	return true;
}

static bool measure_one(struct scan *s, size_t i, unsigned char *in_loop, enum dcpi_event ev,
			struct measure *m)
{
	struct values_delta d;
	uint64_t most, next;
	double moved;
	unsigned dreg;
	long block;
	int r;

	memset(m, 0, sizeof(*m));
	if (!step_of(s, i, in_loop, &dreg, &m->step) ||
	    (block = counted_block(s, i, in_loop, dreg, m->step)) < 0)
		return false;
	r = vreg_of(dreg);
	sum_loop(s, in_loop, r, ev, m, &d);
	moved = (double)(m->step > 0 ? d.spos : d.sneg);
	most = m->step > 0 ? d.mpos : d.mneg;
	next = m->step > 0 ? d.mpos2 : d.mneg2;
	m->good = m->step > 0 ? d.npos : d.nneg;
	m->bad = m->pairs - m->good;
	m->against = m->step > 0 ? d.nneg : d.npos;
	if (!(m->loop_samples > 0) || m->good < MEASURE_MIN_PAIRS || d.spos == UINT64_MAX ||
	    d.sneg == UINT64_MAX)
		return false;
	/*
	 * One pair that brought another quantity in (the loop's first sample,
	 * paired with one in code that held a pointer in the register) is
	 * taken out when the second largest change is an ordinary one.
	 */
	if ((double)most > MAX_SHARE * moved) {
		if ((double)next > MAX_SHARE * (moved - (double)most) || m->good <= MEASURE_MIN_PAIRS)
			return false;
		moved -= (double)most;
		m->good--;
		m->pairs--;
		m->outliers = 1;
	}
	if ((double)m->bad > MAX_BAD_SHARE * (double)m->pairs &&
	    !wrapped(s, in_loop, dreg, &d, m, &moved))
		return false;
	m->block = block;
	m->insn = i;
	m->reg = (unsigned)r;
	/*
	 * Every pair's change counts, over every pair: in one run the changes
	 * telescope to the iterations between its first and last sample.  A
	 * pair that did not move (two samples of one state: the VM delivered a
	 * late timer interrupt and the next at once) is an interval without
	 * iterations: averaging over the moving pairs alone counted wl-chase
	 * 2.4% high.
	 */
	m->per_period = moved / (double)m->pairs / (double)(m->step > 0 ? m->step : -m->step);
	m->execs = m->per_period * m->loop_samples;
	/* At least the counted block's instructions an execution, at most width a cycle. */
	if (s->cycles_per_sample > 0 && s->width &&
	    m->per_period * s->cfg->blocks[block].n_insns > s->cycles_per_sample * s->width)
		return false;
	return true;
}

size_t measure_loops(const struct listing *l, const struct values_profile *prof,
		     enum dcpi_event ev, double cycles_per_sample, unsigned width,
		     struct measure **out)
{
	const struct cfg *cfg = &l->cfg;
	struct scan s = { l, cfg, prof, cycles_per_sample, width, NULL, NULL, NULL, NULL };
	unsigned char *in_loop;
	size_t n = 0, alloc = 0, n_blocks = 0;
	long last_block = -1;
	bool looped = false;

	*out = NULL;
	if (!prof || !prof->n || !cfg->n_blocks || !l->img)
		return 0;
	/* calc_each() analyses on several threads, and decodes the next procedures' meanwhile */
	s.dec = decoder_new(l->img->arch);
	s.fwd = xcalloc(cfg->n_blocks, 1);
	s.bwd = xcalloc(cfg->n_blocks, 1);
	s.stack = xcalloc(cfg->n_blocks + cfg->n_edges + 1, sizeof(*s.stack));
	in_loop = xcalloc(cfg->n_blocks, 1);
	for (size_t i = 0; i < l->n_insns; i++) {
		long b = l->insns[i].block;
		struct measure m;
		size_t k;

		if (b < 0 || (size_t)b == cfg->exit)
			continue;
		if (b != last_block) {
			last_block = b;
			looped = loop_of(&s, (size_t)b, in_loop, &n_blocks);
		}
		if (!looped || !measure_one(&s, i, in_loop, ev, &m))
			continue;
		m.loop_blocks = n_blocks;
		/* One count per block: the one resting on the most pairs. */
		for (k = 0; k < n && (*out)[k].block != m.block; k++)
			;
		if (k < n) {
			if (m.good > (*out)[k].good)
				(*out)[k] = m;
			continue;
		}
		ALLOC_GROW(*out, n + 1, alloc);
		(*out)[n++] = m;
	}
	free(in_loop);
	free(s.stack);
	free(s.fwd);
	free(s.bwd);
	decoder_free(s.dec);
	return n;
}

double measure_rel_error(const struct measure *m)
{
	double good = (double)m->good, e;

	if (!(good > 0) || !(m->loop_samples > 0) || !m->pairs)
		return -1;
	e = MEASURE_PAIR_CV / sqrt(good) + 1 / m->loop_samples;
	if (!m->trip)
		e += (double)m->against / (double)m->pairs;
	if (m->lost)
		e += (double)m->lost / (m->loop_samples + (double)m->lost);
	return e;
}

void measure_describe(const struct measure *m, const struct listing *l, struct strbuf *sb)
{
	strbuf_addf(sb, "measured: block %ld ran %.3g times (%s %+lld at 0x%llx; %llu pairs of "
		    "samples in the loop, %llu against", m->block, m->execs, values_reg_name(m->reg),
		    (long long)m->step, (unsigned long long)l->insns[m->insn].insn->addr,
		    (unsigned long long)m->good, (unsigned long long)m->against);
	if (m->trip)
		strbuf_addf(sb, ", %llu of them a new run of %llu", (unsigned long long)m->wraps,
			    (unsigned long long)m->trip);
	if (m->lost)
		strbuf_addf(sb, "; low: the collector lost %llu samples of the epoch",
			    (unsigned long long)m->lost);
	strbuf_addch(sb, ')');
}

void measure_json(const struct measure *m, struct json_writer *w, const struct listing *l)
{
	json_object_begin(w);
	json_key(w, "block"), json_i64(w, m->block);
	json_key(w, "addr"), json_hex(w, l->insns[m->insn].insn->addr);
	json_key(w, "reg"), json_string(w, values_reg_name(m->reg));
	json_key(w, "step"), json_i64(w, m->step);
	json_key(w, "execs"), json_double(w, m->execs, 6);
	json_key(w, "per_period"), json_double(w, m->per_period, 6);
	json_key(w, "loop_samples"), json_double(w, m->loop_samples, 6);
	json_key(w, "pairs"), json_u64(w, m->pairs);
	json_key(w, "good"), json_u64(w, m->good);
	json_key(w, "bad"), json_u64(w, m->bad);
	json_key(w, "against"), json_u64(w, m->against);
	if (m->trip) {
		json_key(w, "trip"), json_u64(w, m->trip);
		json_key(w, "wraps"), json_u64(w, m->wraps);
	}
	json_key(w, "lost"), json_u64(w, m->lost);
	json_object_end(w);
}
