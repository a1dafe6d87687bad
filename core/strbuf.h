/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/strbuf.h - a growable, always NUL-terminated byte buffer (after git's
 * strbuf.h).
 *
 * Invariants: buf is never NULL (it points at a static "" until the first
 * growth), buf[len] == '\0', len < alloc once allocated.  The buffer may
 * contain NUL bytes; len is authoritative.
 */
#ifndef DCPI_CORE_STRBUF_H
#define DCPI_CORE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
/* Frees the memory and re-initialises the buffer. */
void strbuf_release(struct strbuf *sb);
/* Returns the buffer (caller frees) and re-initialises sb. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
/* Makes room for `extra` more bytes (plus the NUL). */
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
#define strbuf_reset(sb) strbuf_setlen((sb), 0)

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
/* Appends c n times. */
void strbuf_addchars(struct strbuf *sb, int c, size_t n);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Appends a size in bytes for people: "512 B", "12.3 KiB", "1.5 GiB" (powers of 1024). */
void strbuf_add_size(struct strbuf *sb, uint64_t bytes);
/* Removes trailing whitespace. */
void strbuf_rtrim(struct strbuf *sb);

/*
 * Appends what fd holds, up to its end (after git's strbuf_read): a read
 * that a signal interrupted is retried.  At most max bytes are appended.
 * Returns 0 at the end of the file; -1 with errno set if a read fails (EAGAIN
 * on a timed-out socket), and -1 with errno EFBIG if fd holds more than max
 * bytes.  On failure sb keeps what was read: at most max bytes, the first.
 * sb grows as it fills; a caller that knows the size (fstat) grows sb by
 * the size plus one first, so that the read meeting the end needs no more.
 */
int strbuf_read_fd(struct strbuf *sb, int fd, size_t max);

#endif
