/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/epochview-open.c - an epoch view's images opened on the
 * engine's threads (epochview-open.h).  Images are apart: each is opened
 * by one thread, and epoch_view_image() touches only its own entry.
 */
#include "config.h"

#include "analysis/epochview-open.h"

#include <stdatomic.h>

#include "core/workpool.h"

struct opening {
	struct epoch_view *v;
	const char *image;
	atomic_size_t looked;        /* images looked at */
};

bool epoch_view_image_sampled(const struct epoch_view *v, size_t i, const char *image)
{
	bool any = false;

	for (int e = 0; e < EVENT__COUNT; e++)
		any |= v->images[i].samples[e] != 0;
	return any && (!image || epoch_view_image_matches(v, i, image));
}

static void open_one(void *ctx, size_t i)
{
	struct opening *o = ctx;

	if (epoch_view_image_sampled(o->v, i, o->image))
		image_procs(epoch_view_image(o->v, i));
	workpool_progress(atomic_fetch_add(&o->looked, 1) + 1, o->v->n_images);
}

int epoch_view_open_images(struct epoch_view *v, const char *image)
{
	struct opening o = { .v = v, .image = image };
	/* a few images in work at once: opening is mostly reading files */
	struct workpool_batch b = { .n = v->n_images, .work = open_one, .ctx = &o, .window = 64 };

	atomic_init(&o.looked, 0);
	return workpool_run(&b);
}
