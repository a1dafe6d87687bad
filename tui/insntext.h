/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/insntext.h - the parts of an instruction's text, for colouring it:
 * capstone's Intel syntax as disasm/insn.h keeps it ("mov rax, qword ptr
 * [rbx + 8]", "rep stosq qword ptr [rdi], rax", "jne 0x401136").
 *
 * The text is split into spans that cover it exactly, in order: the
 * mnemonic (with its prefixes: rep, lock, ...), registers, immediates,
 * size keywords ("qword ptr"), the branch target (the immediate of a
 * direct jump or call) and everything else (spaces, brackets, operators).
 */
#ifndef DCPI_TUI_INSNTEXT_H
#define DCPI_TUI_INSNTEXT_H

#include <stdbool.h>
#include <stddef.h>

enum insn_span_kind {
	SPAN_MNEMONIC,
	SPAN_REGISTER,
	SPAN_IMMEDIATE,
	SPAN_SIZE,       /* byte, word, dword, qword, xmmword, ..., ptr */
	SPAN_TARGET,     /* a direct branch or call target */
	SPAN_OTHER,
};

struct insn_span {
	size_t off, len;
	enum insn_span_kind kind;
};

#define INSN_SPANS_MAX 48

/*
 * Splits text into at most max spans (the last one takes what is left);
 * branch says the instruction is a direct branch or call, so that its
 * immediate operand is its target.  Returns the number of spans.
 */
size_t insn_text_spans(const char *text, bool branch, struct insn_span *out, size_t max);

/* The length of the mnemonic, prefixes included ("rep stosq" in "rep stosq ..."). */
size_t insn_text_mnemonic_len(const char *text);

#endif
