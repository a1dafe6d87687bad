/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/unit/own-image.h - the running test's own executable as an image
 * (disasm/image.h): real code, compiled here, for tests that go through
 * every procedure of a binary.  Fails the test if it cannot be opened.
 * Release with image_free().
 */
#ifndef DCPI_TESTS_UNIT_OWN_IMAGE_H
#define DCPI_TESTS_UNIT_OWN_IMAGE_H

#include <string.h>
#include <unistd.h>

#include "disasm/image.h"

static inline struct image *own_image(void)
{
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct db_image rec;
	struct image *img;

	assert_true(len > 0);
	exe[len] = 0;
	memset(&rec, 0, sizeof(rec));
	rec.kind = IMAGE_FILE;
	rec.path = exe;
	img = image_open(&rec, NULL);
	assert_int_equal(img->state, IMAGE_OK);
	return img;
}

#endif
