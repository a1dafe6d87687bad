/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/insntext.h - the parts of a decoded instruction's text, for
 * showing it in colour: what the decoder knows (the mnemonic with its
 * prefixes, each operand's kind, a direct branch's target) laid over the
 * text it wrote (capstone's Intel syntax, insn.h: "mov rax, qword ptr
 * [rbx + 8]", "rep stosq qword ptr [rdi], rax", "jne 0x401136").
 *
 * The parts cover the text exactly, in order: the mnemonic, then each
 * operand (a register operand is a register, an immediate an immediate or
 * the branch target; inside a memory operand its registers, numbers and
 * size keywords, "qword ptr") and what separates them (spaces, commas,
 * brackets, operators: INSN_PART_OTHER).
 */
#ifndef DCPI_DISASM_INSNTEXT_H
#define DCPI_DISASM_INSNTEXT_H

#include <stddef.h>

#include "disasm/insn.h"

enum insn_part_kind {
	INSN_PART_MNEMONIC,
	INSN_PART_REGISTER,
	INSN_PART_IMMEDIATE,
	INSN_PART_SIZE,       /* byte, word, dword, qword, xmmword, ..., ptr */
	INSN_PART_TARGET,     /* a direct branch's or call's target */
	INSN_PART_OTHER,
};

struct insn_part {
	size_t off, len;
	enum insn_part_kind kind;
};

#define INSN_PARTS_MAX 48

/*
 * Splits in->text into at most max parts (the last one takes what is
 * left).  Returns the number of parts.
 */
size_t insn_parts(const struct insn *in, struct insn_part *out, size_t max);

#endif
