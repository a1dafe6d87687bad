/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the model chooser (model/choose.c): the identification
 * alone, then synthetic epoch metas that combine it with the CPU's flags
 * and the core's signatures, as a virtual machine may present them (a
 * Sapphire Rapids masked as family 6 model 167, with and without its
 * signatures), and the reason said.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/xalloc.h"
#include "db/meta.h"
#include "model/model.h"

static void chooser_by_cpu(void **state)
{
	static const struct {
		const char *vendor;
		int family, model;
		const char *name;
		bool exact;
	} cases[] = {
		{ "AuthenticAMD", 25, 17, "znver4", true },
		{ "AuthenticAMD", 25, 0x61, "znver4", true },
		{ "AuthenticAMD", 25, 1, "znver3", true },
		{ "AuthenticAMD", 25, 0x21, "znver3", true },
		/* Zen 5 (family 1Ah): this project's EPYC (model 2), Granite Ridge
		 * (44h); Strix Point (24h) runs 512-bit operations on 256-bit pipes;
		 * a later family 1Ah core: the closest model, not an exact one */
		{ "AuthenticAMD", 26, 2, "znver5", true },
		{ "AuthenticAMD", 26, 0x44, "znver5", true },
		{ "AuthenticAMD", 26, 0x24, "znver5-256", true },
		{ "AuthenticAMD", 26, 0x50, "znver5", false },
		{ "AuthenticAMD", 23, 0x31, "generic-x86-64", false },  /* Zen 2: no model */
		{ "GenuineIntel", 6, 0x55, "skylake", true },
		/* Golden Cove: Sapphire Rapids, Alder Lake, Raptor Lake; later P-cores
		 * the closest */
		{ "GenuineIntel", 6, 0x8f, "goldencove", true },
		{ "GenuineIntel", 6, 0x97, "goldencove", true },
		{ "GenuineIntel", 6, 0xb7, "goldencove", true },
		{ "GenuineIntel", 6, 0xad, "goldencove", false },
		/* Sunny Cove's family (Ice Lake; Rocket Lake = model 167): Skylake the closest */
		{ "GenuineIntel", 6, 0x6a, "skylake", false },
		{ "GenuineIntel", 6, 167, "skylake", false },
		{ "GenuineIntel", 15, 4, "generic-x86-64", false },
		{ "HygonGenuine", 24, 0, "generic-x86-64", false },
		{ NULL, 0, 0, "generic-x86-64", false },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool exact = !cases[i].exact;

		assert_string_equal(cpu_model_for_cpu(cases[i].vendor, cases[i].family,
						      cases[i].model, &exact)->name, cases[i].name);
		assert_int_equal(exact, cases[i].exact);
		assert_string_equal(cpu_model_for_cpu(cases[i].vendor, cases[i].family,
						      cases[i].model, NULL)->name, cases[i].name);
	}
}

/* ---- synthetic metas ------------------------------------------------------------ */

static char **words(const char *const *w)
{
	size_t n = 0;
	char **v;

	while (w[n])
		n++;
	v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(w[i]);
	return v;
}

#define FLAGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NO_FLAGS NULL
/* add-immediates a cycle, register adds a cycle, load and divide latency */
#define SIG(a, w, l, d) ((struct epoch_core_sig){ true, a, w, l, d })
#define NO_SIG ((struct epoch_core_sig){ false, 0, 0, 0, 0 })

/* Chooses for a meta; returns the choice, checks what every reason must be. */
static struct model_choice choose(const char *vendor, int family, int model,
				  const char *const *flags, struct epoch_core_sig sig)
{
	struct epoch_meta m;
	struct model_choice ch;
	const struct cpu_model *got;

	epoch_meta_init(&m);
	m.cpu_vendor = vendor ? xstrdup(vendor) : NULL;
	m.cpu_family = family;
	m.cpu_model_id = model;
	m.cpu_flags = flags ? words(flags) : NULL;
	m.core_sig = sig;
	got = cpu_model_choose(&m, &ch);
	assert_ptr_equal(got, ch.model);
	assert_non_null(ch.model);
	print_message("%-14s %-5s %s\n", ch.model->name, ch.exact ? "exact" : "", ch.reason);
	/* one line, not cut short, and cpu_model_for() says the same */
	assert_null(strchr(ch.reason, '\n'));
	assert_true(strlen(ch.reason) > 10 && strlen(ch.reason) < sizeof(ch.reason) - 1);
	{
		bool exact = !ch.exact;

		assert_ptr_equal(cpu_model_for(&m, &exact), ch.model);
		assert_int_equal(exact, ch.exact);
	}
	epoch_meta_release(&m);
	return ch;
}

static void expect(struct model_choice ch, const char *model, bool exact, const char *says,
		   const char *says_too)
{
	assert_string_equal(ch.model->name, model);
	assert_int_equal(ch.exact, exact);
	if (says && !strstr(ch.reason, says))
		fail_msg("reason '%s' lacks '%s'", ch.reason, says);
	if (says_too && !strstr(ch.reason, says_too))
		fail_msg("reason '%s' lacks '%s'", ch.reason, says_too);
}

/* Sapphire Rapids' flags, as the Intel host showed them (some of them). */
#define SPR_FLAGS FLAGS("avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512fp16", "amx_tile", \
			"amx_bf16", "amx_int8")
/* Measured there: add-immediates fold, the rest as a Golden Cove's. */
#define SPR_SIG SIG(3.85, 4.0, 5.0, 14.0)

static void chooser_masked_sapphire_rapids(void **state)
{
	(void)state;

	/* KVM's family 6 model 167 (Rocket Lake's number): the flags and the
	 * signatures say what the core is */
	expect(choose("GenuineIntel", 6, 167, SPR_FLAGS, SPR_SIG), "goldencove", false,
	       "add-immediates fold (3.9 a cycle)", "Rocket Lake");
	/* an older epoch: no signatures, the flags alone */
	expect(choose("GenuineIntel", 6, 167, SPR_FLAGS, NO_SIG), "goldencove", false,
	       "avx512fp16: Sapphire Rapids class", "no core signatures");
	/* older still: the identification alone, and said */
	expect(choose("GenuineIntel", 6, 167, NO_FLAGS, NO_SIG), "skylake", false,
	       "identification only", NULL);
	/* signatures without flags: folding is enough */
	expect(choose("GenuineIntel", 6, 167, NO_FLAGS, SPR_SIG), "goldencove", false,
	       "add-immediates fold", NULL);
	/* a Sapphire Rapids that says so: exact, and the signatures agree */
	expect(choose("GenuineIntel", 6, 0x8f, SPR_FLAGS, SPR_SIG), "goldencove", true,
	       "is Sapphire Rapids", "add-immediates fold");
	/* the vendor and family masked too */
	expect(choose("GenuineIntel", 15, 6, SPR_FLAGS, NO_SIG), "goldencove", false,
	       "names no core", "Sapphire Rapids class");
	expect(choose(NULL, 0, 0, NO_FLAGS, SPR_SIG), "goldencove", false,
	       "no CPU identification", "add-immediates fold");
}

static void chooser_intel(void **state)
{
	(void)state;

	/* Alder Lake's flags: AVX-VNNI without AVX-512 */
	expect(choose("GenuineIntel", 6, 167, FLAGS("avx2", "avx_vnni"), NO_SIG), "goldencove",
	       false, "Alder Lake class", NULL);
	/* ... on a core that does not fold (an E-core): not Golden Cove */
	expect(choose("GenuineIntel", 6, 167, FLAGS("avx2", "avx_vnni"), SIG(1.0, 4.0, 4.0, 15)),
	       "skylake", false, "do not fold", NULL);
	/* Skylake, said and measured */
	expect(choose("GenuineIntel", 6, 0x55, FLAGS("avx512f"), SIG(1.0, 4.0, 4.0, 42)), "skylake",
	       true, "is Skylake-SP", "signatures agree");
	/* an unknown family: the signatures name the class */
	expect(choose("GenuineIntel", 15, 4, NO_FLAGS, SIG(1.0, 4.0, 4.0, 42)), "skylake", false,
	       "Skylake class", NULL);
	expect(choose("GenuineIntel", 6, 0x6a, FLAGS("avx512f", "avx512_vnni"),
		      SIG(1.0, 4.0, 5.0, 15)), "skylake", false, "Sunny Cove class", NULL);
	expect(choose("GenuineIntel", 15, 4, NO_FLAGS, NO_SIG), "generic-x86-64", false,
	       "names no core", "generic");
}

static void chooser_amd(void **state)
{
	const struct epoch_core_sig zen5_sig = SIG(1.00, 4.0, 4.0, 10.3);
	(void)state;

	/* this machine: family 26 model 2, measured 1.00 add-immediates a
	 * cycle, 4.0 adds, load 4.0, divide 10.3 */
	expect(choose("AuthenticAMD", 26, 2, FLAGS("avx512f", "avx_vnni", "avx512_vp2intersect"),
		      zen5_sig), "znver5", true, "is Zen 5", "signatures agree");
	expect(choose("AuthenticAMD", 26, 2, NO_FLAGS, NO_SIG), "znver5", true, "is Zen 5",
	       "identification only");
	/* Zen 4 (EPYC family 25 model 17) */
	expect(choose("AuthenticAMD", 25, 17, FLAGS("avx512f"), SIG(1.0, 4.0, 4.0, 9.9)), "znver4",
	       true, "is Zen 4", "signatures agree");
	/* a family 25 model outside Zen 4's ranges, with AVX-512: Zen 4 */
	expect(choose("AuthenticAMD", 25, 1, FLAGS("avx2", "avx512f"), NO_SIG), "znver4", false,
	       "avx512f: Zen 4 class", NULL);
	/* ... without it: Zen 3 (a VM may hide flags; only their presence counts) */
	expect(choose("AuthenticAMD", 25, 1, FLAGS("avx2"), NO_SIG), "znver3", true, "is Zen 3",
	       NULL);
	expect(choose("AuthenticAMD", 25, 17, FLAGS("avx2"), NO_SIG), "znver4", true, "is Zen 4",
	       NULL);
	/* Zen 5's flags on a masked family */
	expect(choose("AuthenticAMD", 25, 1, FLAGS("avx512f", "avx_vnni"), NO_SIG), "znver5",
	       false, "avx_vnni: Zen 5 class", NULL);
	expect(choose("AuthenticAMD", 15, 1, NO_FLAGS, zen5_sig), "znver4", false,
	       "Zen 3 or later", NULL);
	/* a core that folds add-immediates is no AMD core, whatever it says */
	expect(choose("AuthenticAMD", 26, 2, NO_FLAGS, SPR_SIG), "goldencove", false,
	       "but add-immediates fold", NULL);
	/* Zen 2: no model */
	expect(choose("AuthenticAMD", 23, 0x31, FLAGS("avx2"), SIG(1.0, 4.0, 4.0, 14)),
	       "generic-x86-64", false, "names no core", NULL);
}

static void chooser_other(void **state)
{
	(void)state;

	expect(choose("HygonGenuine", 24, 0, FLAGS("avx2"), NO_SIG), "generic-x86-64", false,
	       "HygonGenuine family 24 model 0 names no core", "generic");
	expect(choose("CentaurHauls", 7, 59, NO_FLAGS, SIG(1.0, 3.0, 4.0, 30)), "generic-x86-64",
	       false, "CentaurHauls", NULL);
	{
		struct model_choice ch;
		bool exact = true;

		assert_ptr_equal(cpu_model_choose(NULL, &ch), cpu_model_generic());
		assert_false(ch.exact);
		assert_non_null(strstr(ch.reason, "no epoch metadata"));
		assert_ptr_equal(cpu_model_choose(NULL, NULL), cpu_model_generic());
		assert_ptr_equal(cpu_model_for(NULL, &exact), cpu_model_generic());
		assert_false(exact);
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(chooser_by_cpu),
		cmocka_unit_test(chooser_masked_sapphire_rapids),
		cmocka_unit_test(chooser_intel),
		cmocka_unit_test(chooser_amd),
		cmocka_unit_test(chooser_other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
