/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/insntext.c - the parts of a decoded instruction's text
 * (insntext.h): the decoder's mnemonic length and operand kinds, laid
 * over its text operand by operand.
 */
#include "config.h"

#include "disasm/insntext.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const size_words[] = {
	"byte", "word", "dword", "qword", "tbyte", "xmmword", "ymmword", "zmmword", "ptr",
	"fword", "oword",
};

static bool size_word(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(size_words) / sizeof(*size_words); i++)
		if (strlen(size_words[i]) == len && !strncmp(s, size_words[i], len))
			return true;
	return false;
}

static bool ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || c == '.' || c == '%';
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '%';
}

static size_t add(struct insn_part *out, size_t n, size_t max, size_t off, size_t len,
		  enum insn_part_kind kind)
{
	if (!len)
		return n;
	if (n && out[n - 1].kind == kind && out[n - 1].off + out[n - 1].len == off) {
		out[n - 1].len += len;
		return n;
	}
	if (n == max) {
		out[n - 1].len = off + len - out[n - 1].off;
		out[n - 1].kind = INSN_PART_OTHER;
		return n;
	}
	out[n] = (struct insn_part){ off, len, kind };
	return n + 1;
}

/* The end of the operand starting at off: the next ',' outside brackets and braces. */
static size_t operand_end(const char *t, size_t off, size_t len)
{
	int depth = 0;

	for (; off < len; off++) {
		if (t[off] == '[' || t[off] == '{' || t[off] == '(')
			depth++;
		else if ((t[off] == ']' || t[off] == '}' || t[off] == ')') && depth > 0)
			depth--;
		else if (t[off] == ',' && !depth)
			break;
	}
	return off;
}

/* Kind and length of the token at s, inside an operand whose kind says nothing more. */
static enum insn_part_kind token(const char *s, size_t left, size_t *len)
{
	size_t n = 0;

	if (ident_start(*s)) {
		while (n < left && ident_char(s[n]))
			n++;
		*len = n;
		return size_word(s, n) ? INSN_PART_SIZE : INSN_PART_REGISTER;
	}
	if (isdigit((unsigned char)*s)) {
		while (n < left && isalnum((unsigned char)s[n]))
			n++;
		*len = n;
		return INSN_PART_IMMEDIATE;
	}
	while (n < left && !ident_start(s[n]) && !isdigit((unsigned char)s[n]))
		n++;
	*len = n ? n : 1;
	return INSN_PART_OTHER;
}

static size_t tokens(const char *t, size_t off, size_t end, struct insn_part *out, size_t n,
		     size_t max)
{
	while (off < end) {
		size_t tl;
		enum insn_part_kind k = token(t + off, end - off, &tl);

		n = add(out, n, max, off, tl, k);
		off += tl;
	}
	return n;
}

static bool all_ident(const char *s, size_t len)
{
	if (!len || !ident_start(*s))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!ident_char(s[i]))
			return false;
	return true;
}

/* An immediate operand: '#' (aarch64) and the number, the target if it is the branch's. */
static size_t immediate(const struct insn *in, size_t off, size_t end, struct insn_part *out,
			size_t n, size_t max)
{
	const char *t = in->text;
	bool direct = in->target && (in->kind == INSN_JUMP || in->kind == INSN_CJUMP ||
				     in->kind == INSN_CALL);
	size_t start = off;
	char *stop;

	if (t[off] == '#')
		n = add(out, n, max, off++, 1, INSN_PART_OTHER);
	if (off == end || !(isdigit((unsigned char)t[off]) || t[off] == '-'))
		return tokens(t, start, end, out, n, max);
	if (direct && strtoull(t + off, &stop, 0) == in->target && (size_t)(stop - t) == end)
		return add(out, n, max, off, end - off, INSN_PART_TARGET);
	return add(out, n, max, off, end - off, INSN_PART_IMMEDIATE);
}

size_t insn_parts(const struct insn *in, struct insn_part *out, size_t max)
{
	const char *t = in->text;
	size_t len = strlen(t), off = in->mnem_len < len ? in->mnem_len : len, n;

	if (!max)
		return 0;
	if (!off)
		off = strcspn(t, " ");
	n = add(out, 0, max, 0, off, INSN_PART_MNEMONIC);
	if (in->kind == INSN_INVALID)
		return add(out, n, max, off, len - off, INSN_PART_OTHER);
	for (unsigned k = 0; off < len; k++) {
		size_t sep = off, end;
		enum insn_opkind kind = k < 4 && k < in->nops ? insn_opkind(in, k) : OPK_NONE;

		while (off < len && (t[off] == ' ' || (t[off] == ',' && off == sep)))
			off++;
		n = add(out, n, max, sep, off - sep, INSN_PART_OTHER);
		end = operand_end(t, off, len);
		if (kind == OPK_REG && all_ident(t + off, end - off))
			n = add(out, n, max, off, end - off, INSN_PART_REGISTER);
		else if (kind == OPK_IMM)
			n = immediate(in, off, end, out, n, max);
		else
			n = tokens(t, off, end, out, n, max);
		off = end;
	}
	return n;
}
