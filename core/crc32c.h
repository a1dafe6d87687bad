/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/crc32c.h - CRC-32C (Castagnoli), the checksum of every dcpi file.
 *
 * crc32c(0, buf, len) computes the standard CRC-32C of buf (as in iSCSI,
 * ext4 and RFC 3720: crc32c("123456789") == 0xe3069283); pass the previous
 * result to continue over more data.  Uses the SSE4.2 instruction when the
 * CPU has it, else a slicing-by-8 table.
 */
#ifndef DCPI_CORE_CRC32C_H
#define DCPI_CORE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

/* The portable implementation, exposed for tests. */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len);

#endif
