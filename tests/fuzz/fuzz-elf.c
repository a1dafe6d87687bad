/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the ELF/DWARF loading glue.  The input is an ELF file
 * (written to a temp file, as readers get them): open it as an image,
 * read its procedures (symbol tables, PLT relocations, .eh_frame), decode
 * and build the CFG and classes of the first procedures, and ask DWARF for
 * their lines and inlined subroutines.  The same bytes are also opened as
 * an in-memory ELF (the vdso path).  Nothing may crash; problems must come
 * back as errors ("cannot read symbols").
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/die.h"
#include "disasm/elffile.h"
#include "disasm/image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PROCS 24

static void quiet(enum report_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

static void exercise(struct image *img)
{
	struct proctab *t = image_procs(img);
	struct dwarf_info *dw = image_dwarf(img, NULL);

	for (size_t i = 0; i < t->n && i < MAX_PROCS; i++) {
		const struct proc *p = &t->v[i];
		struct cfg cfg;

		if (image_has_code(img, NULL) && !image_cfg(img, p, &cfg)) {
			cfg_classify(&cfg);
			for (size_t b = 0; b < cfg.n_blocks; b++)
				if (cfg.blocks[b].cls < 0 || (size_t)cfg.blocks[b].cls >= cfg.n_classes)
					abort();
			cfg_release(&cfg);
		}
		if (dw && i < 4) {
			struct src_line *lines;
			struct src_inline *inl;
			size_t n;

			dwarf_info_lines(dw, p->start, p->end, &lines, &n);
			free(lines);
			dwarf_info_inlines(dw, p->start, p->end, &inl, &n);
			free(inl);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/dcpi-fuzz-elf-XXXXXX", *why = NULL;
	struct db_image rec;
	struct image_opts o;
	struct image *img;
	struct elffile *ef;
	int fd;

	set_report_routine(quiet);
	if ((fd = mkstemp(path)) < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	memset(&rec, 0, sizeof(rec));
	memset(&o, 0, sizeof(o));
	rec.kind = IMAGE_FILE;
	rec.path = path;
	o.debug_dir = "/nonexistent";
	img = image_open(&rec, &o);
	exercise(img);
	image_free(img);
	unlink(path);
	if ((ef = elffile_open_mem(data, size, "fuzz", &why)))
		elffile_close(ef);
	free(why);
	set_report_routine(NULL);
	return 0;
}
