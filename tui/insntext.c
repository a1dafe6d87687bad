/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "tui/insntext.h"

#include <ctype.h>
#include <string.h>

static const char *const prefixes[] = {
	"rep", "repe", "repz", "repne", "repnz", "lock", "bnd", "notrack", "xacquire",
	"xrelease", "data16", "addr32",
};

static const char *const size_words[] = {
	"byte", "word", "dword", "qword", "tbyte", "xmmword", "ymmword", "zmmword", "ptr",
	"fword", "oword",
};

static bool word_in(const char *s, size_t len, const char *const *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(words[i]) == len && !strncmp(s, words[i], len))
			return true;
	return false;
}

static size_t word_len(const char *s)
{
	size_t n = 0;

	while (s[n] && s[n] != ' ')
		n++;
	return n;
}

size_t insn_text_mnemonic_len(const char *text)
{
	size_t n = word_len(text);

	while (text[n] == ' ' && word_in(text, n, prefixes, sizeof(prefixes) / sizeof(*prefixes)) &&
	       text[n + 1])
		n += 1 + word_len(text + n + 1);
	return n;
}

static bool ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || c == '.' || c == '%';
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '%';
}

/* Kind and length of the token at s (not at the mnemonic). */
static enum insn_span_kind token(const char *s, bool branch, size_t *len)
{
	size_t n = 0;

	if (ident_start(*s)) {
		while (ident_char(s[n]))
			n++;
		*len = n;
		if (word_in(s, n, size_words, sizeof(size_words) / sizeof(*size_words)))
			return SPAN_SIZE;
		return SPAN_REGISTER;
	}
	if (isdigit((unsigned char)*s)) {
		while (isalnum((unsigned char)s[n]))
			n++;
		*len = n;
		return branch ? SPAN_TARGET : SPAN_IMMEDIATE;
	}
	while (s[n] && !ident_start(s[n]) && !isdigit((unsigned char)s[n]))
		n++;
	*len = n ? n : 1;
	return SPAN_OTHER;
}

static size_t add(struct insn_span *out, size_t n, size_t max, size_t off, size_t len,
		  enum insn_span_kind kind)
{
	if (!len)
		return n;
	if (n && out[n - 1].kind == kind && out[n - 1].off + out[n - 1].len == off) {
		out[n - 1].len += len;
		return n;
	}
	if (n == max) {
		out[n - 1].len = off + len - out[n - 1].off;
		out[n - 1].kind = SPAN_OTHER;
		return n;
	}
	out[n] = (struct insn_span){ off, len, kind };
	return n + 1;
}

size_t insn_text_spans(const char *text, bool branch, struct insn_span *out, size_t max)
{
	size_t n = 0, off = insn_text_mnemonic_len(text), len = strlen(text);

	if (!max)
		return 0;
	n = add(out, n, max, 0, off, SPAN_MNEMONIC);
	while (off < len) {
		size_t tl;
		enum insn_span_kind k = token(text + off, branch, &tl);

		n = add(out, n, max, off, tl, k);
		off += tl;
	}
	return n;
}
