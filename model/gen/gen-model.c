/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/gen/gen-model.c - the offline generator of dcpi's processor model
 * tables (not part of libdcpi; run by model/gen/generate.sh).
 *
 *   gen-model variants
 *	Enumerates x86-64 encodings (legacy maps 1/0F/0F38/0F3A with and
 *	without 66/F2/F3 and REX.W, VEX 128/256, EVEX 128/256/512; ModRM
 *	register and [rbx] forms for every /digit), decodes each with
 *	capstone, and prints one line per distinct key (capstone id, operand
 *	signature, widest operand size) with up to MAXCAND encodings of it,
 *	the preferred first, '|'-separated:
 *	  id mnemonic opsig opsize nops vector hexes text   (TAB-separated)
 *
 *   gen-model classes
 *	Prints model/x86-class.c: the functional-unit class of every capstone
 *	x86 instruction id, from its mnemonic (used when a table has no entry).
 *
 *   gen-model emit NAME CPU MEMRES LLVM-VERSION < measured.tsv
 *	Reads the variants joined with llvm-mca's numbers (see generate.sh)
 *	and prints model/table-NAME.c; LLVM-VERSION ("19.1.7") is the
 *	llvm-mc and llvm-mca that made them.  MEMRES is a comma-separated list of
 *	resource name prefixes that are memory pipes (AGUs, load/store
 *	units): the scheduler models those with the model's load/store port
 *	counts, so they are left out of the per-instruction unit groups.
 *
 * The key must be computed exactly as disasm/ fills struct insn: operand
 * kinds of capstone's detail operands in Intel order (2 bits each, operand
 * 0 in bits 0-1, at most 4), opsize = the widest register or memory
 * operand in bytes.
 */
#include <capstone/capstone.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fu.h"

static csh cs;

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "gen-model: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void cs_setup(void)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		fail("cannot open capstone");
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
}

/* ---- keys ---------------------------------------------------------------- */

struct key {
	unsigned id;
	unsigned opsig, opsize, nops;
};

static struct key key_of(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	struct key k = { in->id, 0, 0, x->op_count };

	for (unsigned i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		unsigned kind = op->type == X86_OP_REG ? 1 : op->type == X86_OP_MEM ? 2 :
				op->type == X86_OP_IMM ? 3 : 0;

		if (i < 4)
			k.opsig |= kind << (2 * i);
		if ((kind == 1 || kind == 2) && op->size > k.opsize)
			k.opsize = op->size;
	}
	return k;
}

#define MAXKEYS 65536
#define MAXCAND 4   /* encodings kept per key: generate.sh uses the first LLVM times */
static struct {
	struct key k;
	char hex[MAXCAND][64];
	char head[MAXCAND][32];   /* prefixes and opcode of each encoding */
	unsigned ncand;
	char text[160];
	char mnem[32];
	bool vec;
} seen[MAXKEYS];
static size_t nseen;

/* True if an operand is a vector, MMX or mask register, or a 16+ byte memory operand. */
static bool is_vector(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	for (unsigned i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_REG &&
		    ((op->reg >= X86_REG_XMM0 && op->reg <= X86_REG_XMM31) ||
		     (op->reg >= X86_REG_YMM0 && op->reg <= X86_REG_YMM31) ||
		     (op->reg >= X86_REG_ZMM0 && op->reg <= X86_REG_ZMM31) ||
		     (op->reg >= X86_REG_MM0 && op->reg <= X86_REG_MM7) ||
		     (op->reg >= X86_REG_K0 && op->reg <= X86_REG_K7)))
			return true;
		if (op->type == X86_OP_MEM && op->size >= 16)
			return true;
	}
	return false;
}

/* The index of key k among the keys seen, or -1. */
static long key_seen(struct key k)
{
	for (size_t i = 0; i < nseen; i++)
		if (seen[i].k.id == k.id && seen[i].k.opsig == k.opsig &&
		    seen[i].k.opsize == k.opsize)
			return (long)i;
	return -1;
}

static void hex_of(const cs_insn *in, char *out)
{
	for (size_t i = 0, o = 0; i < in->size; i++)
		o += (size_t)sprintf(out + o, i ? " %02x" : "%02x", in->bytes[i]);
}

/* The prefixes and opcode of an encoding (what precedes ModRM or the immediate). */
static void head_of(const cs_insn *in, char *out)
{
	const cs_x86_encoding *enc = &in->detail->x86.encoding;
	size_t n = enc->modrm_offset ? enc->modrm_offset :
		   enc->imm_offset ? enc->imm_offset : in->size;

	for (size_t i = 0, o = 0; i < n && i < 10; i++)
		o += (size_t)sprintf(out + o, "%02x", in->bytes[i]);
}

/*
 * Keeps another encoding of a known key if its prefixes or opcode differ
 * from those kept (another ModRM, displacement or immediate would not help).
 */
static void add_candidate(size_t i, const cs_insn *in)
{
	char head[32] = "";

	if (seen[i].ncand == MAXCAND)
		return;
	head_of(in, head);
	for (unsigned c = 0; c < seen[i].ncand; c++)
		if (!strcmp(seen[i].head[c], head))
			return;
	hex_of(in, seen[i].hex[seen[i].ncand]);
	strcpy(seen[i].head[seen[i].ncand++], head);
}

static void try_bytes(const uint8_t *b, size_t n)
{
	cs_insn *in;
	size_t cnt = cs_disasm(cs, b, n, 0x1000, 1, &in);
	struct key k;

	if (!cnt)
		return;
	k = key_of(in);
	if (in->id != X86_INS_INVALID && key_seen(k) >= 0) {
		add_candidate((size_t)key_seen(k), in);
	} else if (in->id != X86_INS_INVALID && nseen < MAXKEYS) {
		seen[nseen].k = k;
		hex_of(in, seen[nseen].hex[0]);
		head_of(in, seen[nseen].head[0]);
		seen[nseen].ncand = 1;
		snprintf(seen[nseen].text, sizeof(seen[nseen].text), "%.31s %.120s", in->mnemonic,
			 in->op_str);
		snprintf(seen[nseen].mnem, sizeof(seen[nseen].mnem), "%s",
			 cs_insn_name(cs, in->id));
		seen[nseen].vec = is_vector(in);
		nseen++;
	}
	cs_free(in, cnt);
}

static void try_modrm(uint8_t *buf, size_t n, unsigned modrm)
{
	buf[n++] = (uint8_t)modrm;
	for (unsigned i = 0; i < 8; i++)
		buf[n++] = i ? 0 : 8;
	try_bytes(buf, n);
}

/*
 * Appends a ModRM byte and immediate padding to prefix[0..n): first [rbx]
 * and register forms with rm = 1 for every /digit (reg field 1 last: with
 * rm = 1 it would make xor ecx, ecx, a zero idiom that llvm-mca times as 0),
 * then every other ModRM value (0F 01 F9 rdtscp and the like).
 */
static void try_modrms(uint8_t *buf, size_t n)
{
	static const unsigned regs[] = { 0, 2, 3, 4, 5, 6, 7, 1 };

	for (unsigned m = 0; m < 2; m++)
		for (unsigned r = 0; r < 8; r++)
			try_modrm(buf, n, m ? 0xc0 | regs[r] << 3 | 1 : regs[r] << 3 | 3);
	for (unsigned modrm = 0; modrm < 256; modrm++)
		try_modrm(buf, n, modrm);
}

static bool legacy_prefix_byte(unsigned op)
{
	return op == 0x26 || op == 0x2e || op == 0x36 || op == 0x3e || (op >= 0x40 && op <= 0x4f) ||
	       (op >= 0x64 && op <= 0x67) || op == 0xf0 || op == 0xf2 || op == 0xf3 ||
	       op == 0x0f || op == 0xc4 || op == 0xc5 || op == 0x62;
}

/*
 * The short accumulator forms (add eax, imm32...) share their key with the
 * ModRM forms compilers mostly emit, and llvm-mca times some of them
 * differently: enumerate them last so the key gets the common form.
 */
static bool accumulator_form(unsigned op)
{
	return (op < 0x40 && (op & 7) >= 4 && (op & 7) <= 5) || op == 0xa8 || op == 0xa9;
}

static void enum_legacy(void)
{
	static const uint8_t pfx[] = { 0, 0x66, 0xf2, 0xf3 };
	uint8_t buf[32];

	for (unsigned pass = 0; pass < 2; pass++)
	for (unsigned map = 0; map < 4; map++)
		for (unsigned p = 0; p < 4; p++)
			for (unsigned w = 0; w < 2; w++)
				for (unsigned op = 0; op < 256; op++) {
					size_t n = 0;

					if ((map == 0 && accumulator_form(op)) != pass)
						continue;
					if (map == 0 && legacy_prefix_byte(op))
						continue;
					if (map == 1 && (op == 0x38 || op == 0x3a))
						continue;
					if (pfx[p])
						buf[n++] = pfx[p];
					if (w)
						buf[n++] = 0x48;
					if (map)
						buf[n++] = 0x0f;
					if (map == 2)
						buf[n++] = 0x38;
					if (map == 3)
						buf[n++] = 0x3a;
					buf[n++] = (uint8_t)op;
					try_modrms(buf, n);
				}
}

/*
 * VEX3: C4 [RXB.mmmmm] [W.vvvv.L.pp]; vvvv = 2 (distinct from rm = 1) for
 * three-operand forms, then none (1111b), which two-operand forms require.
 */
static void enum_vex(void)
{
	uint8_t buf[32];

	for (unsigned v = 0; v < 2; v++)
	for (unsigned map = 1; map <= 3; map++)
		for (unsigned pp = 0; pp < 4; pp++)
			for (unsigned l = 0; l < 2; l++)
				for (unsigned w = 0; w < 2; w++)
					for (unsigned op = 0; op < 256; op++) {
						buf[0] = 0xc4;
						buf[1] = (uint8_t)(0xe0 | map);
						buf[2] = (uint8_t)(w << 7 | (v ? 15 : ~2u & 15) << 3 |
								   l << 2 | pp);
						buf[3] = (uint8_t)op;
						try_modrms(buf, 4);
					}
}

/* EVEX: 62 [RXBR'00mm] [W.vvvv.1.pp] [z.L'L.b.V'.aaa]; no masking; vvvv as VEX. */
static void enum_evex(void)
{
	uint8_t buf[32];

	for (unsigned v = 0; v < 2; v++)
	for (unsigned map = 1; map <= 3; map++)
		for (unsigned pp = 0; pp < 4; pp++)
			for (unsigned ll = 0; ll < 3; ll++)
				for (unsigned w = 0; w < 2; w++)
					for (unsigned op = 0; op < 256; op++) {
						buf[0] = 0x62;
						buf[1] = (uint8_t)(0xf0 | map);
						buf[2] = (uint8_t)(w << 7 | (v ? 15 : ~2u & 15) << 3 | 4 |
								   pp);
						buf[3] = (uint8_t)(ll << 5 | 8);
						buf[4] = (uint8_t)op;
						try_modrms(buf, 5);
					}
}

static void enumerate(void)
{
	enum_legacy();
	enum_vex();
	enum_evex();
}

static int cmd_variants(void)
{
	enumerate();
	for (size_t i = 0; i < nseen; i++) {
		printf("%u\t%s\t%u\t%u\t%u\t%d\t", seen[i].k.id, seen[i].mnem, seen[i].k.opsig,
		       seen[i].k.opsize, seen[i].k.nops, seen[i].vec);
		for (unsigned c = 0; c < seen[i].ncand; c++)
			printf("%s%s", c ? "|" : "", seen[i].hex[c]);
		printf("\t%s\n", seen[i].text);
	}
	return 0;
}


/* ---- functional-unit classes ---------------------------------------------- */

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

static bool any_prefix(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (starts(s, *list))
			return true;
	return false;
}

/* m without a leading 'v' (AVX spelling of an SSE instruction). */
static const char *unv(const char *m)
{
	return m[0] == 'v' ? m + 1 : m;
}

static const char *const system_names[] = {
	"cpuid", "rdtsc", "rdtscp", "rdpmc", "rdmsr", "wrmsr", "xgetbv", "xsetbv", "lfence",
	"mfence", "sfence", "syscall", "sysenter", "sysexit", "sysret", "int", "int1", "int3",
	"into", "ud2", "ud0", "ud1", "hlt", "pause", "cli", "sti", "in", "out", "iret", "iretd",
	"iretq", "lgdt", "lidt", "lldt", "ltr", "sgdt", "sidt", "sldt", "str", "invlpg", "invd",
	"wbinvd", "swapgs", "rdrand", "rdseed", "enter", "clflush", "clflushopt", "clwb", "lar",
	"lsl", "verr", "verw", "smsw", "lmsw", "clts", "rsm", "monitor", "mwait", "rdpid",
	"rdfsbase", "rdgsbase", "wrfsbase", "wrgsbase", "xabort", "xbegin", "xend", "xtest",
	"wait", "emms", "femms", "ldmxcsr", "stmxcsr", "vldmxcsr", "vstmxcsr", "cpuid", "xlatb",
	"sahf", "lahf", "pushf", "pushfq", "popf", "popfq", "pushfd", "popfd", "cld", "std",
	"cmc", "clc", "stc", "bound", "aaa", "aad", "aam", "aas", "daa", "das", NULL
};

static const char *const string_prefixes[] = { "stos", "lods", "scas", "cmpsb", "cmpsw",
	"cmpsq", "movsb", "movsw", "movsq", "insb", "insw", "insd", "outs", NULL };

static const char *const fp_div_names[] = { "divss", "divsd", "divps", "divpd", "divsh",
	"divph", "sqrtss", "sqrtsd", "sqrtps", "sqrtpd", "sqrtsh", "sqrtph", NULL };

static const char *const fp_mul_prefixes[] = { "mulss", "mulsd", "mulps", "mulpd", "fmadd",
	"fmsub", "fnmadd", "fnmsub", "pmul", "pmadd", "psadbw", "dpp", "pclmul", "mpsadbw",
	"dpbusd", "dpwssd", "scalef", "rcp", "rsqrt", "gf2p8mul", NULL };

static const char *const fp_add_prefixes[] = { "addss", "addsd", "addps", "addpd", "subss",
	"subsd", "subps", "subpd", "addsub", "hadd", "hsub", "minss", "minsd", "minps", "minpd",
	"maxss", "maxsd", "maxps", "maxpd", "cmpss", "cmpsd", "cmpps", "cmppd", "comis", "ucomis",
	"round", "rndscale", "range", "getexp", "getmant", "reduce", "fixupimm", NULL };

static const char *const shuffle_prefixes[] = { "shuf", "perm", "unpck", "punpck", "pshuf",
	"palignr", "pack", "insert", "extract", "pinsr", "pextr", "broadcast", "pbroadcast",
	"movddup", "movshdup", "movsldup", "pmovzx", "pmovsx", "movlhps", "movhlps", "align",
	"expand", "compress", "pexpand", "pcompress", "pslldq", "psrldq", "pmovmskb", "movmsk",
	"pmov", "phadd", "phsub", "pperm", "pmultishift", NULL };

/* Shuffles that, from memory, are plain loads (broadcasts, duplicating loads). */
static const char *const load_like_prefixes[] = { "broadcast", "pbroadcast", "movddup",
	"movshdup", "movsldup", "pmovzx", "pmovsx", NULL };

static const char *const move_names[] = { "mov", "movzx", "movsx", "movsxd", "movabs",
	"movbe", "movaps", "movups", "movapd", "movupd", "movdqa", "movdqu", "movdqa32",
	"movdqa64", "movdqu8", "movdqu16", "movdqu32", "movdqu64", "movq", "movd", "movss",
	"movsd", "movhps", "movlps", "movhpd", "movlpd", "lddqu", "movntdq", "movntdqa", "movnti",
	"movntps", "movntpd", "movntq", "movntss", "movntsd", "maskmovdqu", "maskmovq", "maskmovps",
	"maskmovpd", "pmaskmovd", "pmaskmovq", NULL };

static enum model_fu classify_x87(const char *m)
{
	if (starts(m, "fdiv") || starts(m, "fidiv") || !strcmp(m, "fsqrt"))
		return FU_FP_DIV;
	if (starts(m, "fxsave") || starts(m, "fxrstor") || starts(m, "fnsave") ||
	    starts(m, "frstor") || starts(m, "fnstenv") || starts(m, "fldenv") ||
	    !strcmp(m, "fninit") || !strcmp(m, "fnclex"))
		return FU_SYSTEM;
	if (!strcmp(m, "fnop"))
		return FU_NONE;
	return FU_X87;
}

/*
 * The class of an instruction from its capstone mnemonic, whether it reads
 * or writes memory, and whether it works on vector registers.  The rules
 * are by name; the first that matches wins.
 */
static enum model_fu classify(const char *m, bool load, bool store, bool vec, unsigned opsig)
{
	const char *u = unv(m);

	if (!strcmp(m, "nop") || starts(m, "endbr") || starts(m, "prefetch"))
		return starts(m, "prefetch") ? FU_LOAD : FU_NONE;
	if (starts(m, "xsave") || starts(m, "xrstor") || one_of(m, system_names))
		return FU_SYSTEM;
	if (m[0] == 'f' && strcmp(m, "fxam") != 0)
		return classify_x87(m);
	if (!strcmp(m, "movsd") && opsig == (2 | 2 << 2))
		return FU_STRING;
	if (any_prefix(m, string_prefixes))
		return FU_STRING;
	if (m[0] == 'j' || starts(m, "call") || starts(m, "ret") || starts(m, "loop"))
		return FU_BRANCH;
	if (!strcmp(m, "div") || !strcmp(m, "idiv"))
		return FU_DIV;
	if (!strcmp(m, "mul") || !strcmp(m, "imul") || !strcmp(m, "mulx"))
		return FU_MUL;
	if (one_of(u, fp_div_names))
		return FU_FP_DIV;
	if (starts(u, "cvt"))
		return FU_CVT;
	if (any_prefix(u, fp_mul_prefixes))
		return FU_FP_MUL;
	if (any_prefix(u, fp_add_prefixes))
		return FU_FP_ADD;
	if (!strcmp(m, "push"))
		return FU_STORE;
	if (!strcmp(m, "pop") || !strcmp(m, "leave"))
		return FU_LOAD;
	if (load && !store && (any_prefix(u, load_like_prefixes) || starts(u, "gather")))
		return FU_LOAD;
	if (any_prefix(u, shuffle_prefixes))
		return FU_SHUFFLE;
	if (one_of(u, move_names) || starts(u, "scatter")) {
		if (load && !store)
			return FU_LOAD;
		if (store && !load)
			return FU_STORE;
	}
	return vec ? FU_VEC : FU_ALU;
}

static const char *const fu_names[] = {
#define MODEL_FU_STR(name, str) "FU_" #name,
	MODEL_FU_LIST(MODEL_FU_STR)
#undef MODEL_FU_STR
};

/*
 * The class of every capstone id in its register form, for instructions no
 * table has; MODEL_X86_MOVE marks data moves (mov, push, pop...), which are
 * loads or stores when they touch memory.
 */
static int cmd_classes(void)
{
	enumerate();
	printf("/* SPDX-License-Identifier: GPL-2.0-or-later */\n/*\n * model/x86-class.c - GENERATED by model/gen/gen-model classes (capstone %d.%d):\n"
	       " * the functional-unit class of every capstone x86 instruction id in its\n"
	       " * register form, by name (model/gen/gen-model.c, classify()).  Do not edit.\n */\n",
	       CS_API_MAJOR, CS_API_MINOR);
	printf("#include \"config.h\"\n\n#include \"model/model.h\"\n\n");
	printf("const unsigned char model_x86_class[MODEL_X86_NIDS] = {\n");
	for (unsigned id = 1; id < X86_INS_ENDING; id++) {
		const char *name = cs_insn_name(cs, id);
		bool vec = name && name[0] == 'v', move;
		enum model_fu fu;

		for (size_t i = 0; i < nseen; i++)
			if (seen[i].k.id == id) {
				vec = seen[i].vec;
				break;
			}
		if (!name)
			continue;
		move = one_of(unv(name), move_names) || !strcmp(name, "push") || !strcmp(name, "pop");
		fu = classify(name, false, false, vec, 0);
		printf("\t[%u] = %s%s, /* %s */\n", id, fu_names[fu], move ? " | MODEL_X86_MOVE" : "",
		       name);
	}
	printf("};\n");
	return 0;
}

/* ---- emit: measured variants -> C table ---------------------------------- */

#define MAXRES 64
#define MAXGROUPS 3

struct measured {
	struct key k;
	char mnem[32];
	bool vec;
	char asm_text[96];
	bool ok;
	double lat, uops, rt;
	bool load, store, unmodeled;
	double usage[MAXRES];
	enum model_fu fu;
	unsigned ngroups;
	struct { uint32_t mask; unsigned cycles; } group[MAXGROUPS];
};

static char *res_names[MAXRES];
static unsigned nres;
static bool res_mem[MAXRES];
static int res_unit[MAXRES];   /* index among non-memory units, or -1 */
static unsigned nunits;
static const char *unit_names[MAXRES];

static unsigned res_index(const char *name, const char *memres)
{
	unsigned i;

	for (i = 0; i < nres; i++)
		if (!strcmp(res_names[i], name))
			return i;
	if (nres == MAXRES)
		fail("too many resources");
	res_names[nres] = strdup(name);
	res_mem[nres] = false;
	for (const char *p = memres; *p;) {
		size_t n = strcspn(p, ",");

		if (n && !strncmp(name, p, n))
			res_mem[nres] = true;
		p += n + (p[n] == ',');
	}
	return nres++;
}

static char *field(char **s)
{
	char *f = *s, *t = strchr(f, '\t');

	if (t) {
		*t = 0;
		*s = t + 1;
	} else {
		f[strcspn(f, "\n")] = 0;
		*s = f + strlen(f);
	}
	return f;
}

static void parse_usage(struct measured *e, char *list, const char *memres)
{
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = 0;
		e->usage[res_index(tok, memres)] += atof(eq + 1);
	}
}

/*
 * Groups the non-memory units an instruction used into sets of equal
 * per-unit usage: llvm-mca spreads a micro-op evenly over the units that
 * can take it, so {ALU0..3: 0.25 each} is one op on any ALU, and
 * {FPP2: 0.5, FPP3: 0.5} one op on FPP2 or FPP3.  cycles = the sum.
 */
static void make_groups(struct measured *e)
{
	bool used[MAXRES] = { false };

	for (unsigned i = 0; i < nres; i++) {
		double u = e->usage[i], sum = 0;
		uint32_t mask = 0;

		if (res_mem[i] || used[i] || u < 0.005)
			continue;
		for (unsigned j = i; j < nres; j++)
			if (!res_mem[j] && !used[j] && e->usage[j] >= 0.005 &&
			    e->usage[j] > u - 0.02 && e->usage[j] < u + 0.02) {
				used[j] = true;
				mask |= 1u << res_unit[j];
				sum += e->usage[j];
			}
		if (sum >= 0.5 && e->ngroups < MAXGROUPS) {
			e->group[e->ngroups].mask = mask;
			e->group[e->ngroups].cycles = (unsigned)(sum + 0.5);
			e->ngroups++;
		}
	}
}

static bool read_measured(FILE *in, struct measured *e, const char *memres)
{
	char line[4096], *s = line, *f;

	if (!fgets(line, sizeof(line), in))
		return false;
	memset(e, 0, sizeof(*e));
	e->k.id = (unsigned)atoi(field(&s));
	snprintf(e->mnem, sizeof(e->mnem), "%s", field(&s));
	e->k.opsig = (unsigned)atoi(field(&s));
	e->k.opsize = (unsigned)atoi(field(&s));
	e->k.nops = (unsigned)atoi(field(&s));
	e->vec = atoi(field(&s));
	field(&s); /* encodings */
	field(&s); /* capstone text */
	field(&s); /* LLVM texts of the encodings */
	f = field(&s);  /* the one llvm-mca timed, or "-" */
	if (!*f || !strcmp(f, "-"))
		return true;
	snprintf(e->asm_text, sizeof(e->asm_text), "%s", f);
	f = field(&s);
	e->ok = true;
	e->lat = atof(f);
	e->uops = atof(field(&s));
	e->rt = atof(field(&s));
	e->load = atoi(field(&s));
	e->store = atoi(field(&s));
	e->unmodeled = atoi(field(&s));
	parse_usage(e, field(&s), memres);
	return true;
}

static int cmp_measured(const void *a, const void *b)
{
	const struct measured *x = a, *y = b;

	if (x->k.id != y->k.id)
		return x->k.id < y->k.id ? -1 : 1;
	if (x->k.opsig != y->k.opsig)
		return x->k.opsig < y->k.opsig ? -1 : 1;
	return x->k.opsize < y->k.opsize ? -1 : x->k.opsize > y->k.opsize;
}

static unsigned clamp(double v, unsigned max)
{
	return v < 0 ? 0 : v > max ? max : (unsigned)(v + 0.5);
}

static void emit_entry(const struct measured *e)
{
	printf("\t{ %u, %u, %u, %u, %u, %u, ", e->k.id, e->k.opsig, e->k.opsize,
	       clamp(e->lat, 255), clamp(e->uops, 255), clamp(e->rt * 100, 65535));
	printf("%s%s%s%s, %s, %u, {", e->load ? "ME_LOAD" : "", e->load && e->store ? " | " : "",
	       e->store ? "ME_STORE" : "",
	       e->unmodeled ? (e->load || e->store ? " | ME_UNMODELED" : "ME_UNMODELED") :
	       (e->load || e->store ? "" : "0"), fu_names[e->fu], e->ngroups);
	for (unsigned g = 0; g < e->ngroups; g++)
		printf("%s{ 0x%x, %u }", g ? ", " : " ", e->group[g].mask, e->group[g].cycles);
	printf(" } }, /* ");
	for (const char *p = e->asm_text; *p; p++)
		putchar(*p == '\t' ? ' ' : *p == '*' && p[1] == '/' ? '_' : *p);
	printf(" */\n");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* Per-class defaults: medians over the class's register forms (loads for LOAD). */
static void emit_defaults(const struct measured *e, size_t n)
{
	double *lat = calloc(n + 1, sizeof(double)), *uops = calloc(n + 1, sizeof(double));
	double *rt = calloc(n + 1, sizeof(double));

	printf("\t.defaults = {\n");
	for (unsigned fu = 0; fu < FU__COUNT; fu++) {
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (e[i].ok && e[i].fu == fu && (e[i].load == (fu == FU_LOAD) || fu == FU_STRING)) {
				lat[m] = e[i].lat;
				uops[m] = e[i].uops;
				rt[m++] = e[i].rt;
			}
		printf("\t\t[%s] = { %u, %u, %u }, /* median of %zu */\n", fu_names[fu],
		       clamp(median(lat, m), 255), clamp(median(uops, m), 255),
		       clamp(median(rt, m) * 100, 65535), m);
	}
	printf("\t},\n");
	free(lat);
	free(uops);
	free(rt);
}

static void emit_table(const char *name, const char *cpu, struct measured *e, size_t n,
		       const char *memres, const char *version)
{
	int major = atoi(version);
	size_t good = 0;

	for (size_t i = 0; i < n; i++)
		good += e[i].ok;
	printf("/* SPDX-License-Identifier: GPL-2.0-or-later */\n/*\n * model/table-%s.c - GENERATED by model/gen/generate.sh; do not edit.\n *\n", name);
	printf(" * Numbers: llvm-mca-%d -mtriple=x86_64 -mcpu=%s --json --instruction-info\n",
	       major, cpu);
	printf(" * -iterations=120, one run per instruction (LLVM %s, Apache-2.0 WITH\n"
	       " * LLVM-exception).  Instructions: every x86-64 encoding model/gen/gen-model.c\n"
	       " * enumerates, decoded with capstone %d.%d for the key (capstone id, operand\n"
	       " * signature, widest operand size) and with llvm-mc-%d --disassemble for the\n"
	       " * text given to llvm-mca.  %zu keys, %zu with numbers (the others are not\n"
	       " * supported by this CPU model or not understood by LLVM).\n",
	       version, CS_API_MAJOR, CS_API_MINOR, major, n, good);
	printf(" * Units: llvm-mca's resource pressure per iteration, memory pipes (%s)\n"
	       " * left out, the rest grouped by equal share (gen-model.c, make_groups()).\n"
	       " * Functional-unit classes: by mnemonic (gen-model.c, classify()).\n */\n", memres);
	printf("#include \"config.h\"\n\n#include \"core/xalloc.h\"\n#include \"model/model.h\"\n\n");
	printf("static const char *const units_%s[] = {", name);
	for (unsigned u = 0; u < nunits; u++)
		printf("%s\"%s\"", u ? ", " : " ", unit_names[u]);
	printf(" };\n\nstatic const struct model_entry entries_%s[] = {\n", name);
	for (size_t i = 0; i < n; i++)
		if (e[i].ok)
			emit_entry(&e[i]);
	printf("};\n\nconst struct model_table model_table_%s = {\n", name);
	printf("\t.name = \"%s\",\n\t.llvm_cpu = \"%s\",\n", name, cpu);
	printf("\t.entries = entries_%s,\n\t.n_entries = ARRAY_SIZE(entries_%s),\n", name, name);
	printf("\t.units = units_%s,\n\t.n_units = ARRAY_SIZE(units_%s),\n", name, name);
	emit_defaults(e, n);
	printf("};\n");
}

static int cmd_emit(const char *name, const char *cpu, const char *memres, const char *version)
{
	size_t n = 0, alloc = 4096;
	struct measured *e = malloc(alloc * sizeof(*e));

	while (read_measured(stdin, &e[n], memres))
		if (++n == alloc)
			e = realloc(e, (alloc *= 2) * sizeof(*e));
	for (unsigned i = 0; i < nres; i++) {
		res_unit[i] = res_mem[i] ? -1 : (int)nunits;
		if (!res_mem[i]) {
			if (nunits == 32)
				fail("more than 32 execution units");
			unit_names[nunits++] = res_names[i];
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!e[i].ok)
			continue;
		e[i].fu = classify(e[i].mnem, e[i].load, e[i].store, e[i].vec, e[i].k.opsig);
		make_groups(&e[i]);
	}
	qsort(e, n, sizeof(*e), cmp_measured);
	emit_table(name, cpu, e, n, memres, version);
	free(e);
	return 0;
}

int main(int argc, char **argv)
{
	cs_setup();
	if (argc == 2 && !strcmp(argv[1], "variants"))
		return cmd_variants();
	if (argc == 2 && !strcmp(argv[1], "classes"))
		return cmd_classes();
	if (argc == 6 && !strcmp(argv[1], "emit"))
		return cmd_emit(argv[2], argv[3], argv[4], argv[5]);
	fail("usage: gen-model variants | classes | emit NAME CPU MEMRES LLVM-VERSION < measured.tsv");
}
