/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/pbwrite.h - writing Protocol Buffers by hand: the wire format's
 * varints and length-delimited fields, enough for a message such as
 * pprof's profile.proto without a protobuf library.
 *
 *   struct strbuf msg = STRBUF_INIT, sub = STRBUF_INIT;
 *   pb_uint(&sub, 1, 42);                    // field 1: varint
 *   pb_bytes(&msg, 2, sub.buf, sub.len);     // field 2: an embedded message
 *   pb_packed(&msg, 3, values, n);           // field 3: packed repeated varints
 *
 * Fields are written in the order called (any order is valid protobuf).
 */
#ifndef DCPI_CORE_PBWRITE_H
#define DCPI_CORE_PBWRITE_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* A varint field (wire type 0); int64 values go as their two's complement. */
void pb_uint(struct strbuf *out, unsigned field, uint64_t v);
/* A length-delimited field (wire type 2): bytes, a string, an embedded message. */
void pb_bytes(struct strbuf *out, unsigned field, const void *data, size_t len);
void pb_string(struct strbuf *out, unsigned field, const char *s);
/* A packed repeated varint field. */
void pb_packed(struct strbuf *out, unsigned field, const uint64_t *v, size_t n);

#endif
