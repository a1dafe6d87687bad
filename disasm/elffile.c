/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/elffile.c - ELF headers, sections, segments and notes via libelf.
 */
#include "config.h"

#include "disasm/elffile.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/die.h"
#include "core/xalloc.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif
#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

const char *elffile_errmsg(void)
{
	const char *m = elf_errmsg(-1);

	return m ? m : "unknown libelf error";
}

static void libelf_init(void)
{
	static bool done;

	if (!done) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			die("libelf is too old: %s", elffile_errmsg());
		done = true;
	}
}

/* ---- notes ------------------------------------------------------------ */

static void scan_notes(struct elffile *ef, Elf_Data *data)
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	if (!data || !data->d_buf)
		return;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nh.n_descsz > 0 && nh.n_descsz <= ELF_BUILD_ID_MAX && !ef->build_id_len) {
			memcpy(ef->build_id, (const char *)data->d_buf + desc_off, nh.n_descsz);
			ef->build_id_len = nh.n_descsz;
		}
		off = next;
	}
}

static void read_notes(struct elffile *ef)
{
	Elf *elf = ef->elf;
	bool had_sections = false;

	for (size_t i = 0; i < ef->n_secs; i++) {
		Elf_Scn *scn;

		if (ef->secs[i].type != SHT_NOTE)
			continue;
		had_sections = true;
		if ((scn = elf_getscn(elf, ef->secs[i].index)))
			scan_notes(ef, elf_getdata(scn, NULL));
	}
	if (had_sections)
		return;
	size_t nph = 0;

	if (elf_getphdrnum(elf, &nph))
		return;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (ph.p_offset > ef->file_size || ph.p_filesz > ef->file_size - ph.p_offset)
			continue;
		scan_notes(ef, elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						    ELF_T_NHDR));
	}
}

static void read_debuglink(struct elffile *ef)
{
	const struct elf_section *sec = elffile_section(ef, ".gnu_debuglink");
	const uint8_t *p;
	size_t len, nlen, crc_off;

	if (!sec || !(p = elffile_section_bytes(ef, sec, &len)))
		return;
	nlen = strnlen((const char *)p, len);
	crc_off = (nlen + 4) & ~(size_t)3;
	if (!nlen || nlen == len || crc_off + 4 > len || nlen > 255)
		return;
	ef->debuglink = xstrndup((const char *)p, nlen);
	if (ef->little)
		ef->debuglink_crc = (uint32_t)p[crc_off] | (uint32_t)p[crc_off + 1] << 8 |
				    (uint32_t)p[crc_off + 2] << 16 | (uint32_t)p[crc_off + 3] << 24;
	else
		ef->debuglink_crc = (uint32_t)p[crc_off + 3] | (uint32_t)p[crc_off + 2] << 8 |
				    (uint32_t)p[crc_off + 1] << 16 | (uint32_t)p[crc_off] << 24;
	/* a debuglink must be a plain file name */
	if (strchr(ef->debuglink, '/') || ef->debuglink[0] == '.') {
		free(ef->debuglink);
		ef->debuglink = NULL;
	}
}

/* ---- headers ----------------------------------------------------------- */

static int read_segments(struct elffile *ef)
{
	size_t nph = 0, alloc = 0;

	if (elf_getphdrnum(ef->elf, &nph))
		return -1;
	if (nph > 65535)
		return -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		struct elf_segment *s;

		if (!gelf_getphdr(ef->elf, (int)i, &ph))
			return -1;
		if (ph.p_type != PT_LOAD)
			continue;
		ALLOC_GROW(ef->loads, ef->n_loads + 1, alloc);
		s = &ef->loads[ef->n_loads++];
		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->flags = ph.p_flags;
		/* clamp what the file cannot back */
		if (s->offset > ef->file_size)
			s->filesz = 0;
		else if (s->filesz > ef->file_size - s->offset)
			s->filesz = ef->file_size - s->offset;
		if (s->memsz < s->filesz)
			s->memsz = s->filesz;
		if (s->vaddr + s->memsz < s->vaddr)
			s->memsz = UINT64_MAX - s->vaddr;
	}
	return 0;
}

static int read_sections(struct elffile *ef, unsigned e_shnum)
{
	size_t shstrndx = 0, nsec = 0;
	Elf_Scn *scn = NULL;

	ef->secs = xcalloc(1, sizeof(*ef->secs));
	if (elf_getshdrnum(ef->elf, &nsec) || (e_shnum && nsec != e_shnum))
		return -1;
	if (nsec > 1000000)
		return -1;
	if (elf_getshdrstrndx(ef->elf, &shstrndx))
		shstrndx = 0;
	free(ef->secs);
	ef->secs = xcalloc(nsec ? nsec : 1, sizeof(*ef->secs));
	while ((scn = elf_nextscn(ef->elf, scn)) && ef->n_secs < nsec) {
		GElf_Shdr sh;
		struct elf_section *s;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -1;
		s = &ef->secs[ef->n_secs++];
		name = shstrndx ? elf_strptr(ef->elf, shstrndx, sh.sh_name) : NULL;
		s->name = name ? name : "";
		s->type = sh.sh_type;
		s->flags = sh.sh_flags;
		s->addr = sh.sh_addr;
		s->size = sh.sh_size;
		s->offset = sh.sh_offset;
		s->entsize = sh.sh_entsize;
		s->link = sh.sh_link;
		s->info = sh.sh_info;
		s->index = elf_ndxscn(scn);
	}
	return !nsec || ef->n_secs + 1 == nsec ? 0 : -1;  /* nextscn skips section 0 */
}

static struct elffile *finish_open(struct elffile *ef, char **whyp)
{
	GElf_Ehdr eh;
	size_t rawsize = 0;
	const char *why = NULL;

	if (elf_kind(ef->elf) != ELF_K_ELF)
		why = "not an ELF file";
	else if (!gelf_getehdr(ef->elf, &eh))
		why = elffile_errmsg();
	if (!why) {
		ef->raw = (const uint8_t *)elf_rawfile(ef->elf, &rawsize);
		if (!ef->raw)
			why = elffile_errmsg();
		ef->file_size = rawsize;
	}
	if (!why) {
		ef->is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
		ef->little = eh.e_ident[EI_DATA] == ELFDATA2LSB;
		ef->machine = eh.e_machine;
		ef->type = eh.e_type;
		ef->entry = eh.e_entry;
		ef->arch_known = ef->is64 && ef->little &&
				 (eh.e_machine == EM_X86_64 || eh.e_machine == EM_AARCH64);
		ef->arch = eh.e_machine == EM_AARCH64 ? ARCH_AARCH64 : ARCH_X86_64;
		if (read_segments(ef))
			why = "malformed program headers";
		else if (read_sections(ef, eh.e_shnum))
			ef->sections_bad = true;
	}
	if (why) {
		*whyp = xasprintf("cannot read '%s': %s", ef->path, why);
		elffile_close(ef);
		return NULL;
	}
	read_notes(ef);
	read_debuglink(ef);
	return ef;
}

struct elffile *elffile_open_why(const char *path, char **why)
{
	struct elffile *ef;
	int fd;

	libelf_init();
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		*why = xasprintf("cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	ef = XNEW(struct elffile);
	ef->path = xstrdup(path);
	ef->fd = fd;
	ef->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/*
	 * Mapped (or read whole if it cannot be), the file needs its descriptor
	 * no more: a diff of two epochs of 10,000 images holds 20,000 of them
	 * open, and would run out of descriptors.
	 */
	if (!ef->elf || elf_cntl(ef->elf, ELF_C_FDREAD)) {
		*why = xasprintf("cannot read '%s': %s", path, elffile_errmsg());
		elffile_close(ef);
		return NULL;
	}
	close(fd);
	ef->fd = -1;
	return finish_open(ef, why);
}

struct elffile *elffile_open(const char *path)
{
	char *why = NULL;
	struct elffile *ef = elffile_open_why(path, &why);

	if (!ef) {
		errorf("%s", why);
		free(why);
	}
	return ef;
}

struct elffile *elffile_open_mem(const void *buf, size_t len, const char *name, char **why)
{
	struct elffile *ef;

	libelf_init();
	ef = XNEW(struct elffile);
	ef->path = xstrdup(name);
	ef->fd = -1;
	ef->mem = xmemdup(buf, len ? len : 1);
	ef->elf = elf_memory(ef->mem, len);
	if (!ef->elf) {
		*why = xasprintf("cannot read '%s': %s", name, elffile_errmsg());
		elffile_close(ef);
		return NULL;
	}
	return finish_open(ef, why);
}

void elffile_close(struct elffile *ef)
{
	if (!ef)
		return;
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef->mem);
	free(ef->loads);
	free(ef->secs);
	free(ef->debuglink);
	free(ef->path);
	free(ef);
}

/* ---- lookups ----------------------------------------------------------- */

int elffile_off_to_vaddr(const struct elffile *ef, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < ef->n_loads; i++) {
		const struct elf_segment *s = &ef->loads[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	return -1;
}

int elffile_vaddr_to_off(const struct elffile *ef, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < ef->n_loads; i++) {
		const struct elf_segment *s = &ef->loads[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = s->offset + (vaddr - s->vaddr);
			return 0;
		}
	}
	return -1;
}

const struct elf_section *elffile_section(const struct elffile *ef, const char *name)
{
	for (size_t i = 0; i < ef->n_secs; i++)
		if (!strcmp(ef->secs[i].name, name))
			return &ef->secs[i];
	return NULL;
}

const struct elf_section *elffile_section_at(const struct elffile *ef, uint64_t vaddr)
{
	for (size_t i = 0; i < ef->n_secs; i++) {
		const struct elf_section *s = &ef->secs[i];

		if ((s->flags & SHF_ALLOC) && s->size && vaddr >= s->addr && vaddr - s->addr < s->size)
			return s;
	}
	return NULL;
}

bool elffile_is_code(const struct elffile *ef, uint64_t vaddr)
{
	const struct elf_section *s = elffile_section_at(ef, vaddr);

	if (s)
		return (s->flags & SHF_EXECINSTR) != 0;
	if (ef->n_secs > 1)
		return false;
	for (size_t i = 0; i < ef->n_loads; i++)
		if ((ef->loads[i].flags & PF_X) && vaddr >= ef->loads[i].vaddr &&
		    vaddr - ef->loads[i].vaddr < ef->loads[i].memsz)
			return true;
	return false;
}

const uint8_t *elffile_section_bytes(const struct elffile *ef, const struct elf_section *sec,
				     size_t *len)
{
	*len = 0;
	if (sec->type == SHT_NOBITS || sec->offset > ef->file_size ||
	    sec->size > ef->file_size - sec->offset)
		return NULL;
	*len = sec->size;
	return ef->raw + sec->offset;
}

const uint8_t *elffile_section_data(struct elffile *ef, const struct elf_section *sec,
				    size_t *len)
{
	Elf_Scn *scn;
	Elf_Data *d;
	size_t raw;

	*len = 0;
	if (!elffile_section_bytes(ef, sec, &raw) || !(scn = elf_getscn(ef->elf, sec->index)))
		return NULL;
	if ((sec->flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return NULL;
	if (!(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return NULL;
	*len = d->d_size;
	return d->d_buf;
}

const uint8_t *elffile_bytes_at(const struct elffile *ef, uint64_t vaddr, size_t *avail)
{
	const struct elf_section *sec = elffile_section_at(ef, vaddr);

	*avail = 0;
	if (sec && sec->type == SHT_NOBITS)
		return NULL;
	for (size_t i = 0; i < ef->n_loads; i++) {
		const struct elf_segment *s = &ef->loads[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*avail = s->filesz - (vaddr - s->vaddr);
			return ef->raw + s->offset + (vaddr - s->vaddr);
		}
	}
	return NULL;
}

bool elffile_has_code(const struct elffile *ef)
{
	bool any = false;

	for (size_t i = 0; i < ef->n_secs; i++) {
		const struct elf_section *s = &ef->secs[i];

		if ((s->flags & SHF_EXECINSTR) && (s->flags & SHF_ALLOC) && s->size) {
			if (s->type == SHT_NOBITS)
				return false;
			any = true;
		}
	}
	if (!any)
		for (size_t i = 0; i < ef->n_loads; i++)
			any |= (ef->loads[i].flags & PF_X) && ef->loads[i].filesz;
	return any;
}

void elffile_build_id_hex(const struct elffile *ef, char *buf)
{
	static const char hex[] = "0123456789abcdef";

	for (unsigned i = 0; i < ef->build_id_len; i++) {
		buf[2 * i] = hex[ef->build_id[i] >> 4];
		buf[2 * i + 1] = hex[ef->build_id[i] & 15];
	}
	buf[2 * ef->build_id_len] = '\0';
}

/* ---- symbols and relocations ------------------------------------------ */

static Elf_Data *section_data(const struct elffile *ef, const struct elf_section *sec)
{
	Elf_Scn *scn;
	size_t len;

	if (!elffile_section_bytes(ef, sec, &len))  /* bounds of the table itself */
		return NULL;
	if (!(scn = elf_getscn(ef->elf, sec->index)))
		return NULL;
	return elf_getdata(scn, NULL);
}

int elffile_symbols(const struct elffile *ef, const struct elf_section *sec,
		    void (*fn)(void *ctx, const struct elf_sym *sym), void *ctx)
{
	Elf_Data *data;
	size_t n, entsize = ef->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);

	if (sec->type != SHT_SYMTAB && sec->type != SHT_DYNSYM)
		return -1;
	if (!(data = section_data(ef, sec)))
		return sec->size ? -1 : 0;
	n = data->d_size / entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		struct elf_sym out;
		const char *name;

		if (!gelf_getsym(data, (int)i, &s))
			return -1;
		name = s.st_name ? elf_strptr(ef->elf, sec->link, s.st_name) : NULL;
		out.name = name ? name : "";
		out.value = s.st_value;
		out.size = s.st_size;
		out.type = GELF_ST_TYPE(s.st_info);
		out.bind = GELF_ST_BIND(s.st_info);
		out.shndx = s.st_shndx;
		out.index = i;
		fn(ctx, &out);
	}
	return 0;
}

const char *elffile_symbol_name(const struct elffile *ef, size_t symsec, size_t idx)
{
	const struct elf_section *sec = NULL;
	Elf_Data *data;
	GElf_Sym s;

	for (size_t i = 0; i < ef->n_secs; i++)
		if (ef->secs[i].index == symsec)
			sec = &ef->secs[i];
	if (!sec || (sec->type != SHT_SYMTAB && sec->type != SHT_DYNSYM) || !idx)
		return NULL;
	if (!(data = section_data(ef, sec)) || !gelf_getsym(data, (int)idx, &s) || !s.st_name)
		return NULL;
	return elf_strptr(ef->elf, sec->link, s.st_name);
}

int elffile_relocs(const struct elffile *ef, const struct elf_section *sec,
		   void (*fn)(void *ctx, const struct elf_rel *rel), void *ctx)
{
	Elf_Data *data;
	bool rela = sec->type == SHT_RELA;
	size_t n, entsize;

	if (sec->type != SHT_RELA && sec->type != SHT_REL)
		return -1;
	entsize = ef->is64 ? (rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel))
			   : (rela ? sizeof(Elf32_Rela) : sizeof(Elf32_Rel));
	if (!(data = section_data(ef, sec)))
		return sec->size ? -1 : 0;
	n = data->d_size / entsize;
	for (size_t i = 0; i < n; i++) {
		struct elf_rel out;

		if (rela) {
			GElf_Rela r;

			if (!gelf_getrela(data, (int)i, &r))
				return -1;
			out.offset = r.r_offset;
			out.type = (unsigned)(ef->is64 ? GELF_R_TYPE(r.r_info) : ELF32_R_TYPE(r.r_info));
			out.sym = ef->is64 ? GELF_R_SYM(r.r_info) : ELF32_R_SYM(r.r_info);
			out.addend = r.r_addend;
		} else {
			GElf_Rel r;

			if (!gelf_getrel(data, (int)i, &r))
				return -1;
			out.offset = r.r_offset;
			out.type = (unsigned)(ef->is64 ? GELF_R_TYPE(r.r_info) : ELF32_R_TYPE(r.r_info));
			out.sym = ef->is64 ? GELF_R_SYM(r.r_info) : ELF32_R_SYM(r.r_info);
			out.addend = 0;
		}
		fn(ctx, &out);
	}
	return 0;
}

/* ---- CRC-32 (IEEE 802.3, as gdb computes for .gnu_debuglink) ------------ */

static uint32_t crc32_ieee(uint32_t crc, const uint8_t *p, size_t n)
{
	static uint32_t table[256];

	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	crc = ~crc;
	while (n--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

int elffile_crc32_path(const char *path, uint32_t *crc)
{
	uint8_t buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	*crc = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		*crc = crc32_ieee(*crc, buf, (size_t)n);
	close(fd);
	return n < 0 ? -1 : 0;
}
