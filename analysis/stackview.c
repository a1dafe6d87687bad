/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/stackview.c - stacks resolved to procedures, and delayed ticks.
 */
#include "config.h"

#include "analysis/stackview.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/u64map.h"
#include "core/xalloc.h"

/*
 * Kernel procedures that enable interrupts: a pending timer interrupt is
 * delivered there.  Paravirtualised kernels (PVM, Xen, KVM guests with
 * pv ops) enable them through an out-of-line call, bare-metal ones in the
 * unlock helpers themselves.
 */
static const char *const irq_enablers[] = {
	"pvm_irq_enable", "__raw_callee_save_pvm_irq_enable", "pvm_restore_fl",
	"__raw_callee_save_pvm_restore_fl", "pv_native_irq_enable", "native_irq_enable",
	"arch_local_irq_enable", "arch_local_irq_restore", "native_restore_fl",
	"xen_irq_enable_direct", "xen_irq_enable", "__raw_callee_save_xen_irq_enable",
	"_raw_spin_unlock_irqrestore", "_raw_spin_unlock_irq", "_raw_read_unlock_irqrestore",
	"_raw_read_unlock_irq", "_raw_write_unlock_irqrestore", "_raw_write_unlock_irq",
	"raw_spin_rq_unlock_irq", "__raw_spin_unlock_irqrestore", "__raw_spin_unlock_irq",
};

bool stack_view_irq_enable(const char *name)
{
	/* Compiler clones keep their base name: "f.isra.0", "f.constprop.0". */
	size_t n = strcspn(name, ".");

	for (size_t i = 0; i < ARRAY_SIZE(irq_enablers); i++)
		if (strlen(irq_enablers[i]) == n && !strncmp(irq_enablers[i], name, n))
			return true;
	return false;
}

/* The view image of each table image (by key); SIZE_MAX if the index lacks it. */
static size_t *map_images(const struct stack_view *sv)
{
	const struct epoch_view *v = sv->view;
	size_t *m = xcalloc(sv->t.n_images + 1, sizeof(*m));

	for (size_t i = 0; i < sv->t.n_images; i++) {
		const struct db_image *rec = image_index_find(&v->index, sv->t.images[i]);

		m[i] = rec ? (size_t)(rec - v->index.v) : SIZE_MAX;
	}
	return m;
}

static size_t unknown_image(const struct epoch_view *v)
{
	for (size_t i = 0; i < v->n_images; i++)
		if (v->images[i].rec->kind == IMAGE_UNKNOWN)
			return i;
	return SIZE_MAX;
}

static uint32_t node_of(struct stack_view *sv, struct u64map *ix, size_t image,
			const struct proc *p, const char *name)
{
	uint64_t *slot = u64map_slot(ix, p ? (uint64_t)(uintptr_t)p : (uint64_t)image << 1 | 1);
	struct sv_node *n;
	enum image_kind kind;

	if (*slot)
		return (uint32_t)(*slot - 1);
	ALLOC_GROW(sv->nodes, sv->n_nodes + 1, sv->a_nodes);
	n = &sv->nodes[sv->n_nodes];
	n->image = image;
	n->proc = p;
	n->name = name;
	kind = image == SIZE_MAX ? IMAGE_UNKNOWN : sv->view->images[image].rec->kind;
	n->kernel = kind == IMAGE_KERNEL || kind == IMAGE_MODULE;
	n->irq_enable = n->kernel && p && stack_view_irq_enable(name);
	*slot = ++sv->n_nodes;
	return (uint32_t)(*slot - 1);
}

static void resolve_frames(struct stack_view *sv)
{
	struct epoch_view *v = sv->view;
	size_t *images = map_images(sv), unknown = unknown_image(v);
	struct u64map ix = U64MAP_INIT;

	sv->frame_node = xcalloc(sv->t.n_frames + 1, sizeof(*sv->frame_node));
	for (size_t f = 0; f < sv->t.n_frames; f++) {
		const struct stack_frame *fr = &sv->t.frames[f];
		size_t i = images[fr->image];
		const struct proc *p = NULL;
		struct image *img;
		uint64_t addr;

		if (i == SIZE_MAX) {
			sv->frame_node[f] = node_of(sv, &ix, unknown, NULL, "[unknown]");
			continue;
		}
		img = epoch_view_image(v, i);
		if (image_offset_to_addr(img, fr->offset, &addr))
			p = image_proc_at(img, addr);
		sv->frame_node[f] = node_of(sv, &ix, i, p, p ? p->name : image_unnamed(img));
	}
	u64map_release(&ix);
	free(images);
}

int stack_view_open(struct stack_view *sv, struct epoch_view *v)
{
	int r;

	memset(sv, 0, sizeof(*sv));
	sv->view = v;
	r = db_stacks_load(v->db, v->seq, &sv->t);
	if (r)
		return r;
	for (size_t i = 0; i < v->meta.n_events; i++)
		if (v->meta.events[i].period_in_ns)
			sv->time_events[v->meta.events[i].event] = true;
	resolve_frames(sv);
	return 0;
}

int stack_view_need(struct stack_view *sv, struct epoch_view *v)
{
	int r = stack_view_open(sv, v);

	if (r == 1)
		return errorf("epoch %" PRIu32 " has no stacks (record with dcpirun -g or dcpid -g)",
			      v->seq);
	return r ? -1 : 0;
}

void stack_view_release(struct stack_view *sv)
{
	stack_table_release(&sv->t);
	free(sv->nodes);
	free(sv->frame_node);
	memset(sv, 0, sizeof(*sv));
}

size_t stack_view_nodes(const struct stack_view *sv, uint32_t s, bool to_caller, uint32_t *out,
			bool *delayed)
{
	const struct stack_rec *st = &sv->t.stacks[s];
	const uint32_t *frames = stack_table_frames(&sv->t, s);
	size_t first = 0, n = 0;

	*delayed = sv->nodes[sv->frame_node[frames[0]]].irq_enable;
	if (*delayed && to_caller)
		while (first + 1 < st->depth && sv->nodes[sv->frame_node[frames[first]]].irq_enable)
			first++;
	for (size_t i = first; i < st->depth; i++)
		out[n++] = sv->frame_node[frames[i]];
	return n;
}

const char *stack_view_node_image(const struct stack_view *sv, uint32_t node)
{
	size_t i = sv->nodes[node].image;

	return i == SIZE_MAX ? "[unknown]" : sv->view->images[i].rec->path;
}

const char *stack_view_node_image_base(const struct stack_view *sv, uint32_t node)
{
	const char *path = stack_view_node_image(sv, node), *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

uint32_t stack_view_find(const struct stack_view *sv, size_t image, const struct proc *p)
{
	for (size_t i = 0; i < sv->n_nodes; i++)
		if (sv->nodes[i].image == image && sv->nodes[i].proc == p)
			return (uint32_t)i;
	return UINT32_MAX;
}
