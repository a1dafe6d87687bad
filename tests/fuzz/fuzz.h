/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/fuzz/fuzz.h - the libFuzzer entry point every fuzz target defines.
 *
 * Targets must return 0, never exit, and keep no state between calls.  With
 * --enable-libfuzzer they link with clang's libFuzzer; otherwise with
 * tests/fuzz/replay.c, which `make check` uses to replay the saved corpus in
 * tests/fuzz/corpus/TARGET/ (seeds and every input that ever crashed).
 */
#ifndef DCPI_TESTS_FUZZ_H
#define DCPI_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
