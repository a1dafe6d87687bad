/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "analysis/valinsn.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "db/values.h"
#include "disasm/decode.h"
#include "present/draw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void valprof_release(struct valprof *vp)
{
	free(vp->insns);
	memset(vp, 0, sizeof(*vp));
}

const struct valprof_insn *valprof_insn_at(const struct valprof *vp, size_t i)
{
	static const struct valprof_insn none;

	return i < vp->n ? &vp->insns[i] : &none;
}

void valprof_draw(const struct valprof_insn *vi, struct draw *d)
{
	for (unsigned k = 0; k < vi->n; k++) {
		const struct valprof_item *it = &vi->it[k];

		if (k)
			draw_space(d, STYLE_NORMAL, 2);
		draw_text(d, it->address ? STYLE_LABEL : STYLE_REGISTER, it->name);
		draw_text(d, STYLE_NORMAL, ":");
		for (unsigned j = 0; j < it->n; j++) {
			if (j)
				draw_space(d, STYLE_NORMAL, 1);
			draw_printf(d, it->v[j].share >= VALPROF_INVARIANT ? STYLE_HOT : STYLE_NORMAL,
				    "(%s%.1f%%", it->lower_bound ? ">=" : "", 100 * it->v[j].share);
			draw_printf(d, STYLE_IMMEDIATE, " 0x%llx", (unsigned long long)it->v[j].value);
			draw_text(d, STYLE_NORMAL, ")");
		}
	}
}

void valprof_format(const struct valprof_insn *vi, struct strbuf *sb)
{
	struct draw d;

	draw_init_text(&d, sb, DRAW_UNBOUNDED, DRAW_UTF8);
	valprof_draw(vi, &d);
}

void valprof_json(const struct valprof_insn *vi, struct json_writer *w)
{
	json_array_begin(w);
	for (unsigned k = 0; k < vi->n; k++) {
		const struct valprof_item *it = &vi->it[k];

		for (unsigned j = 0; j < it->n; j++) {
			char hex[24];

			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)it->v[j].value);
			json_object_begin(w);
			json_key(w, "reg"), json_string(w, it->name);
			json_key(w, "value"), json_string(w, hex);
			json_key(w, "share"), json_double(w, it->v[j].share, 4);
			json_key(w, "samples"), json_u64(w, it->samples);
			json_key(w, "source"), json_string(w, it->exact ? "paths" : "samples");
			if (it->lower_bound)
				json_key(w, "lower_bound"), json_bool(w, true);
			json_object_end(w);
		}
	}
	json_array_end(w);
}

const struct valprof_item *valprof_invariant(const struct valprof_insn *vi, double min_share)
{
	const struct valprof_item *best = NULL;

	for (unsigned k = 0; k < vi->n; k++)
		if (vi->it[k].n && vi->it[k].v[0].share >= min_share &&
		    (!best || vi->it[k].v[0].share > best->v[0].share))
			best = &vi->it[k];
	return best;
}

/* x86-64 GPRs in disasm's numbering (hardware order) -> the value profile's. */
static const int vreg_of_dreg[16] = {
	[DREG_RAX] = VREG_RAX, [DREG_RCX] = VREG_RCX, [DREG_RDX] = VREG_RDX,
	[DREG_RBX] = VREG_RBX, [DREG_RSP] = VREG_RSP, [DREG_RBP] = VREG_RBP,
	[DREG_RSI] = VREG_RSI, [DREG_RDI] = VREG_RDI, [DREG_R8] = VREG_R8,
	[DREG_R9] = VREG_R9, [DREG_R10] = VREG_R10, [DREG_R11] = VREG_R11,
	[DREG_R12] = VREG_R12, [DREG_R13] = VREG_R13, [DREG_R14] = VREG_R14,
	[DREG_R15] = VREG_R15,
};

int valprof_vreg(unsigned dreg)
{
	return dreg < 16 ? vreg_of_dreg[dreg] : -1;
}
