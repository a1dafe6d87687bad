/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/choose.c - which processor model an epoch's schedules use: the
 * CPU's identification, its flags and the core's measured signatures
 * combined, and the reason (model/model.h, docs/model.md "How the model is
 * chosen").  The model ranges are Linux's (arch/x86/include/asm/intel-family.h,
 * arch/x86/kernel/cpu/amd.c).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/xalloc.h"
#include "db/meta.h"
#include "model/model.h"

/* Above this many dependent add-immediates a cycle the renamer folds them. */
#define FOLDED_ADDIMM 1.5
/* A 64-bit divide this slow (cycles, small operands) is Skylake's or older. */
#define SLOW_DIVIDE 25.0
/* At or above this load-to-use latency (cycles) an Intel core is Sunny Cove or later. */
#define LONG_LOAD 4.5

/* What the identification says. */
struct ident {
	const struct cpu_model *m;  /* NULL: no core dcpi has a model for */
	bool exact;
	const char *core;           /* "Zen 4", "Rocket Lake (Cypress Cove)"...; NULL: unknown */
};

/* AMD family 19h model ranges of Zen 4 (Genoa, Raphael, Phoenix, Bergamo/Siena). */
static bool amd_zen4(int model)
{
	return (model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0x7f) ||
	       (model >= 0xa0 && model <= 0xaf);
}

/*
 * AMD family 1Ah model ranges of Zen 5 (Linux's): Turin, Granite Ridge and
 * Strix Halo have 512-bit vector pipes, Strix and Krackan Point 256-bit ones.
 */
static const char *amd_zen5(int model)
{
	if ((model >= 0x20 && model <= 0x2f) || (model >= 0x60 && model <= 0x6f))
		return "znver5-256";
	if ((model >= 0x00 && model <= 0x1f) || (model >= 0x40 && model <= 0x4f) ||
	    (model >= 0x70 && model <= 0x7f))
		return "znver5";
	return NULL;
}

static struct ident amd_ident(int family, int model)
{
	const char *zen5;

	if (family == 0x19)
		return amd_zen4(model) ? (struct ident){ cpu_model_by_name("znver4"), true, "Zen 4" }
				       : (struct ident){ cpu_model_by_name("znver3"), true, "Zen 3" };
	if (family == 0x1a) {
		zen5 = amd_zen5(model);
		if (!zen5)  /* a later family 1Ah core: the closest known */
			return (struct ident){ cpu_model_by_name("znver5"), false, NULL };
		return (struct ident){ cpu_model_by_name(zen5), true,
				       !strcmp(zen5, "znver5") ? "Zen 5" : "Zen 5 (256-bit pipes)" };
	}
	return (struct ident){ NULL, false, NULL };
}

/* Intel family 6 models by core. */
static const struct intel_core {
	int model;
	const char *name;   /* the model for it */
	bool exact;
	const char *core;
} intel_cores[] = {
	/* Skylake and its refreshes (client, server) */
	{ 0x4e, "skylake", true, "Skylake" }, { 0x5e, "skylake", true, "Skylake" },
	{ 0x55, "skylake", true, "Skylake-SP" }, { 0x8e, "skylake", true, "Kaby Lake" },
	{ 0x9e, "skylake", true, "Kaby/Coffee Lake" }, { 0xa5, "skylake", true, "Comet Lake" },
	{ 0xa6, "skylake", true, "Comet Lake" },
	/* Sunny Cove and its derivatives: no model of their own, Skylake is the closest */
	{ 0x66, "skylake", false, "Cannon Lake" }, { 0x6a, "skylake", false, "Ice Lake-SP" },
	{ 0x6c, "skylake", false, "Ice Lake-D" }, { 0x7d, "skylake", false, "Ice Lake" },
	{ 0x7e, "skylake", false, "Ice Lake" }, { 0x8c, "skylake", false, "Tiger Lake" },
	{ 0x8d, "skylake", false, "Tiger Lake" }, { 0xa7, "skylake", false, "Rocket Lake" },
	/* Golden Cove and Raptor Cove */
	{ 0x97, "goldencove", true, "Alder Lake" }, { 0x9a, "goldencove", true, "Alder Lake" },
	{ 0xb7, "goldencove", true, "Raptor Lake" }, { 0xba, "goldencove", true, "Raptor Lake" },
	{ 0xbf, "goldencove", true, "Raptor Lake" }, { 0x8f, "goldencove", true, "Sapphire Rapids" },
	{ 0xcf, "goldencove", true, "Emerald Rapids" },
	/* later P-cores: Golden Cove is the closest */
	{ 0xaa, "goldencove", false, "Meteor Lake" }, { 0xac, "goldencove", false, "Meteor Lake" },
	{ 0xad, "goldencove", false, "Granite Rapids" }, { 0xae, "goldencove", false, "Granite Rapids" },
	{ 0xb5, "goldencove", false, "Arrow Lake" }, { 0xc5, "goldencove", false, "Arrow Lake" },
	{ 0xc6, "goldencove", false, "Arrow Lake" }, { 0xbd, "goldencove", false, "Lunar Lake" },
	{ 0xcc, "goldencove", false, "Panther Lake" },
};

static struct ident intel_ident(int family, int model)
{
	if (family == 6)
		for (size_t i = 0; i < ARRAY_SIZE(intel_cores); i++)
			if (intel_cores[i].model == model)
				return (struct ident){ cpu_model_by_name(intel_cores[i].name),
						       intel_cores[i].exact, intel_cores[i].core };
	return (struct ident){ NULL, false, NULL };
}

static bool is_amd(const char *vendor)
{
	return vendor && !strcmp(vendor, "AuthenticAMD");
}

static bool is_intel(const char *vendor)
{
	return vendor && !strcmp(vendor, "GenuineIntel");
}

static struct ident identify(const char *vendor, int family, int model)
{
	if (is_amd(vendor))
		return amd_ident(family, model);
	if (is_intel(vendor))
		return intel_ident(family, model);
	return (struct ident){ NULL, false, NULL };
}

const struct cpu_model *cpu_model_for_cpu(const char *vendor, int family, int model,
					  bool *exact)
{
	struct ident id = identify(vendor, family, model);

	if (exact)
		*exact = id.m && id.exact;
	return id.m ? id.m : cpu_model_generic();
}

/* ---- the evidence ----------------------------------------------------------- */

/* A core class the flags name, with the flag that names it. */
struct flag_class {
	const char *model;   /* NULL: none */
	const char *what;    /* "Sapphire Rapids class" */
	const char *flag;    /* "avx512fp16" */
};

static const char *first_flag(const struct epoch_meta *m, const char *const *flags, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (epoch_meta_cpu_flag(m, flags[i]))
			return flags[i];
	return NULL;
}

/*
 * The class the flags name, if they name one: Intel's Sapphire Rapids
 * (AVX512-FP16 and AMX are Golden Cove's and later), Alder Lake (AVX-VNNI
 * without AVX-512: the client P-cores); AMD's Zen 5 (AVX-VNNI and
 * VP2INTERSECT are new in it) and Zen 4 (AVX-512).  A virtual machine may
 * hide flags, never add ones the core lacks: only a flag's presence counts.
 */
static struct flag_class flag_class(const struct epoch_meta *m)
{
	static const char *const spr[] = { "avx512fp16", "amx_tile", "amx_bf16", "amx_int8" };
	static const char *const zen5[] = { "avx_vnni", "avx512_vp2intersect" };
	const char *f;

	if (!m->cpu_flags)
		return (struct flag_class){ NULL, NULL, NULL };
	if (is_amd(m->cpu_vendor)) {
		if ((f = first_flag(m, zen5, ARRAY_SIZE(zen5))))
			return (struct flag_class){ "znver5", "Zen 5 class", f };
		if (epoch_meta_cpu_flag(m, "avx512f"))
			return (struct flag_class){ "znver4", "Zen 4 class or later", "avx512f" };
		return (struct flag_class){ NULL, NULL, NULL };
	}
	if ((f = first_flag(m, spr, ARRAY_SIZE(spr))))
		return (struct flag_class){ "goldencove", "Sapphire Rapids class", f };
	if (epoch_meta_cpu_flag(m, "avx_vnni") && !epoch_meta_cpu_flag(m, "avx512f"))
		return (struct flag_class){ "goldencove", "Alder Lake class",
					    "avx_vnni without avx512f" };
	return (struct flag_class){ NULL, NULL, NULL };
}

/* ---- the choice --------------------------------------------------------------- */

struct chooser {
	const struct epoch_meta *meta;
	struct model_choice *out;
	size_t len;
};

static void say(struct chooser *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct chooser *c, const char *fmt, ...)
{
	size_t size = sizeof(c->out->reason);
	va_list ap;
	int n;

	if (c->len >= size - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(c->out->reason + c->len, size - c->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->len += (size_t)n < size - c->len ? (size_t)n : size - 1 - c->len;
}

/* The model by name, not exact (the evidence chose it, not the identification). */
static void pick(struct chooser *c, const char *name)
{
	const struct cpu_model *m = cpu_model_by_name(name);

	if (m != c->out->model)
		c->out->exact = false;
	c->out->model = m;
}

/* The signatures of a core that does not fold: an Intel core's class by its latencies. */
static void intel_by_signatures(struct chooser *c, const struct epoch_core_sig *g)
{
	if (g->div_lat > SLOW_DIVIDE)
		say(c, "; a %.0f-cycle divide: Skylake class", g->div_lat);
	else if (g->load_lat >= LONG_LOAD)
		say(c, "; a %.1f-cycle load and a %.0f-cycle divide without folding: Sunny Cove "
		    "class, skylake the closest", g->load_lat, g->div_lat);
	else
		say(c, "; load %.1f, divide %.0f cycles: skylake the closest", g->load_lat,
		    g->div_lat);
	pick(c, "skylake");
}

/* Do the signatures fit the model chosen by the identification? */
static void check_signatures(struct chooser *c, const struct epoch_core_sig *g)
{
	const struct cpu_model *m = c->out->model;

	if (g->load_lat > m->load_latency - 0.75 && g->load_lat < m->load_latency + 0.75)
		say(c, "; the core's signatures agree (load %.1f, divide %.1f cycles)", g->load_lat,
		    g->div_lat);
	else
		say(c, "; but the core's loads take %.1f cycles (the model's %u)", g->load_lat,
		    m->load_latency);
}

/* Is Zen model z later than the one the identification named (NULL: none)? */
static bool later_zen(const struct cpu_model *id, const struct cpu_model *z)
{
	static const char *const order[] = { "znver3", "znver4", "znver5" };
	int a = -1, b = -1;

	for (int i = 0; i < (int)ARRAY_SIZE(order); i++) {
		if (id && !strncmp(id->name, order[i], strlen(order[i])))
			a = i;
		if (!strcmp(z->name, order[i]))
			b = i;
	}
	return b > a;
}

static void choose(struct chooser *c)
{
	const struct epoch_meta *meta = c->meta;
	const struct epoch_core_sig *g = &meta->core_sig;
	struct ident id = identify(meta->cpu_vendor, meta->cpu_family, meta->cpu_model_id);
	struct flag_class fc = flag_class(meta);
	bool folds = g->have && g->addimm_per_cycle > FOLDED_ADDIMM;
	bool amd = is_amd(meta->cpu_vendor), intel = is_intel(meta->cpu_vendor);

	c->out->model = id.m ? id.m : cpu_model_generic();
	c->out->exact = id.m && id.exact;
	if (!meta->cpu_vendor)
		say(c, "no CPU identification");
	else if (id.core)
		say(c, "%s family %d model %d is %s", meta->cpu_vendor, meta->cpu_family,
		    meta->cpu_model_id, id.core);
	else
		say(c, "%s family %d model %d names no core dcpi has a model for",
		    meta->cpu_vendor, meta->cpu_family, meta->cpu_model_id);

	if (folds) {
		/* what the core does first: no AMD core and no Intel core before Golden Cove folds */
		if (c->out->model->fold_add_imm) {
			say(c, "; add-immediates fold (%.1f a cycle)", g->addimm_per_cycle);
		} else {
			say(c, "%s add-immediates fold (%.1f a cycle)%s%s: a Golden Cove-class core",
			    id.m ? ", but" : ";", g->addimm_per_cycle, fc.flag ? ", " : "",
			    fc.flag ? fc.flag : "");
			pick(c, "goldencove");
		}
		return;
	}
	if (fc.model && !amd) {
		if (g->have) {
			/* the flags name a Golden Cove class, the core does not fold: an E-core? */
			say(c, "; %s would make it %s, but add-immediates do not fold (%.1f a cycle)",
			    fc.flag, fc.what, g->addimm_per_cycle);
			if (!id.exact)
				intel_by_signatures(c, g);
		} else if (c->out->model != cpu_model_by_name(fc.model)) {
			say(c, "%s %s: %s", id.m ? ", but" : ";", fc.flag, fc.what);
			pick(c, fc.model);
		}
	} else if (amd && fc.model && later_zen(id.m, cpu_model_by_name(fc.model))) {
		say(c, "%s %s: %s", id.m ? ", but" : ";", fc.flag, fc.what);
		pick(c, fc.model);
	} else if (intel && !id.exact && g->have) {
		intel_by_signatures(c, g);
	} else if (amd && !id.m && g->have && g->div_lat < 13 && g->load_lat < LONG_LOAD) {
		say(c, "; load %.1f and divide %.1f cycles: a Zen 3 or later core, znver4 the "
		    "middle one", g->load_lat, g->div_lat);
		pick(c, "znver4");
	} else if (id.exact && g->have) {
		check_signatures(c, g);
	}
	if (!g->have)
		say(c, "; the epoch has no core signatures%s",
		    meta->cpu_flags ? "" : " or CPU flags (recorded before they were): "
		    "identification only");
}

const struct cpu_model *cpu_model_choose(const struct epoch_meta *meta, struct model_choice *out)
{
	struct model_choice dummy;
	struct chooser c = { meta, out ? out : &dummy, 0 };

	memset(c.out, 0, sizeof(*c.out));
	if (!meta) {
		c.out->model = cpu_model_generic();
		say(&c, "no epoch metadata: the generic model");
		return c.out->model;
	}
	choose(&c);
	if (c.out->model == cpu_model_generic())
		say(&c, "; the generic model");
	return c.out->model;
}

const struct cpu_model *cpu_model_for(const struct epoch_meta *meta, bool *exact)
{
	struct model_choice ch;
	const struct cpu_model *m = cpu_model_choose(meta, &ch);

	if (exact)
		*exact = ch.exact;
	return m;
}

const struct cpu_model *cpu_model_by_name(const char *name)
{
	for (size_t i = 0; name && cpu_models[i]; i++)
		if (!strcmp(cpu_models[i]->name, name))
			return cpu_models[i];
	return NULL;
}

const struct cpu_model *cpu_model_generic(void)
{
	return cpu_model_by_name("generic-x86-64");
}
