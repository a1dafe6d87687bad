/*
 * disasm/ehframe.c - .eh_frame CIE/FDE walking (the LSB "Exception Frame"
 * format: DWARF call frame information with pointer encodings).
 */
#include "config.h"

#include "disasm/ehframe.h"

#include <string.h>

#include "core/xalloc.h"

enum {
	PE_ABSPTR = 0x00, PE_ULEB128 = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03,
	PE_UDATA8 = 0x04, PE_SLEB128 = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b,
	PE_SDATA8 = 0x0c, PE_PCREL = 0x10, PE_ALIGNED = 0x50, PE_INDIRECT = 0x80,
	PE_OMIT = 0xff,
};

/* A bounded reader over the section. */
struct rd {
	const uint8_t *buf;
	size_t pos, end;        /* end: limit of the current record */
	bool little, is64, bad;
};

static uint64_t rd_uint(struct rd *r, unsigned size)
{
	uint64_t v = 0;

	if (r->bad || r->end - r->pos < size || r->pos > r->end) {
		r->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < size; i++) {
		unsigned shift = r->little ? 8 * i : 8 * (size - 1 - i);

		v |= (uint64_t)r->buf[r->pos + i] << shift;
	}
	r->pos += size;
	return v;
}

/* A LEB128 number's bits; *shift and *last say how many and its last byte (for the sign). */
static uint64_t rd_leb(struct rd *r, unsigned *shift, uint8_t *last)
{
	uint64_t v = 0;

	*shift = 0;
	*last = 0;
	while (!r->bad) {
		if (r->pos >= r->end) {
			r->bad = true;
			break;
		}
		*last = r->buf[r->pos++];
		if (*shift < 64)
			v |= (uint64_t)(*last & 0x7f) << *shift;
		*shift += 7;
		if (!(*last & 0x80))
			break;
		if (*shift > 70)
			r->bad = true;
	}
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	unsigned shift;
	uint8_t b;

	return rd_leb(r, &shift, &b);
}

static int64_t rd_sleb(struct rd *r)
{
	unsigned shift;
	uint8_t b;
	uint64_t v = rd_leb(r, &shift, &b);

	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

static uint64_t sext(uint64_t v, unsigned bytes)
{
	unsigned bits = 8 * bytes;

	return bits < 64 && (v >> (bits - 1)) & 1 ? v | (~0ull << bits) : v;
}

/*
 * Reads a pointer with encoding enc at the current position (whose address
 * is pos_addr).  *ok is cleared for encodings that cannot be resolved here.
 */
static uint64_t rd_encoded(struct rd *r, unsigned enc, uint64_t sec_addr, bool *ok)
{
	uint64_t base = 0, v;
	unsigned psize = r->is64 ? 8 : 4;

	if (enc == PE_OMIT)
		return 0;
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		base = sec_addr + r->pos;
		break;
	case PE_ALIGNED:
		r->pos = (r->pos + psize - 1) & ~(size_t)(psize - 1);
		break;
	default:
		*ok = false;  /* textrel, datarel, funcrel */
	}
	switch (enc & 0x0f) {
	case PE_ABSPTR: v = rd_uint(r, psize); break;
	case PE_ULEB128: v = rd_uleb(r); break;
	case PE_UDATA2: v = rd_uint(r, 2); break;
	case PE_UDATA4: v = rd_uint(r, 4); break;
	case PE_UDATA8: v = rd_uint(r, 8); break;
	case PE_SLEB128: v = (uint64_t)rd_sleb(r); break;
	case PE_SDATA2: v = sext(rd_uint(r, 2), 2); break;
	case PE_SDATA4: v = sext(rd_uint(r, 4), 4); break;
	case PE_SDATA8: v = rd_uint(r, 8); break;
	default:
		r->bad = true;
		return 0;
	}
	if (enc & PE_INDIRECT)
		*ok = false;
	if (!r->is64 && (enc & 0x0f) == PE_ABSPTR)
		base &= 0xffffffffu;
	return base + v;
}

/* What an FDE needs from its CIE. */
struct cie {
	size_t off;             /* offset of the CIE record, SIZE_MAX if none */
	unsigned fde_enc;
	bool has_aug_data;      /* 'z': FDEs carry an augmentation length */
	bool ok;
};

static int parse_cie(const uint8_t *buf, size_t len, size_t off, uint64_t sec_addr,
		     bool is64, bool little, struct cie *c)
{
	struct rd r = { buf, off, len, little, is64, false };
	uint64_t rlen = rd_uint(&r, 4);
	const char *aug;
	size_t auglen, aug_end;
	unsigned version, idsize = 4;
	bool ok = true;

	c->off = off;
	c->fde_enc = PE_ABSPTR;
	c->has_aug_data = false;
	c->ok = false;
	if (rlen == 0xffffffffu) {
		rlen = rd_uint(&r, 8);
		idsize = 8;
	}
	if (r.bad || rlen > len - r.pos)
		return -1;
	r.end = r.pos + rlen;
	if (rd_uint(&r, idsize) != 0)  /* CIE id */
		return -1;
	version = (unsigned)rd_uint(&r, 1);
	if (r.bad || (version != 1 && version != 3 && version != 4))
		return -1;
	aug = (const char *)buf + r.pos;
	auglen = strnlen(aug, r.end - r.pos);
	if (auglen == r.end - r.pos)
		return -1;
	r.pos += auglen + 1;
	if (strstr(aug, "eh"))
		rd_uint(&r, is64 ? 8 : 4);
	if (version == 4)
		rd_uint(&r, 2);  /* address size, segment size */
	rd_uleb(&r);             /* code alignment */
	rd_sleb(&r);             /* data alignment */
	if (version == 1)
		rd_uint(&r, 1);
	else
		rd_uleb(&r);     /* return address register */
	if (aug[0] != 'z') {
		c->ok = !r.bad;
		return r.bad ? -1 : 0;
	}
	c->has_aug_data = true;
	auglen = rd_uleb(&r);
	if (r.bad || auglen > r.end - r.pos)
		return -1;
	aug_end = r.pos + auglen;
	for (const char *a = aug + 1; *a && !r.bad && r.pos <= aug_end; a++) {
		if (*a == 'R') {
			c->fde_enc = (unsigned)rd_uint(&r, 1);
		} else if (*a == 'P') {
			unsigned enc = (unsigned)rd_uint(&r, 1);

			rd_encoded(&r, enc, sec_addr, &ok);
		} else if (*a == 'L') {
			rd_uint(&r, 1);
		} else if (*a != 'S' && *a != 'B' && *a != 'G') {
			break;  /* unknown: the length lets us skip the rest */
		}
	}
	if (r.bad)
		return -1;
	c->ok = true;
	return 0;
}

static void add_range(struct fde_range **v, size_t *n, size_t *alloc, uint64_t start,
		      uint64_t size)
{
	if (!size || start + size < start)
		return;
	ALLOC_GROW(*v, *n + 1, *alloc);
	(*v)[*n].start = start;
	(*v)[*n].end = start + size;
	(*n)++;
}

int ehframe_parse(const uint8_t *buf, size_t len, uint64_t sec_addr, bool is64, bool little,
		  struct fde_range **v, size_t *n, size_t *alloc)
{
	struct cie cie = { SIZE_MAX, PE_ABSPTR, false, false };
	size_t off = 0;

	while (off < len) {
		struct rd r = { buf, off, len, little, is64, false };
		uint64_t rlen = rd_uint(&r, 4), id;
		size_t id_pos, rec_end;
		unsigned idsize = 4;
		bool ok = true;
		uint64_t start, size;

		if (r.bad)
			return -1;
		if (rlen == 0)
			break;  /* terminator */
		if (rlen == 0xffffffffu) {
			rlen = rd_uint(&r, 8);
			idsize = 8;
			if (r.bad)
				return -1;
		}
		if (rlen > len - r.pos)
			return -1;
		rec_end = r.pos + rlen;
		r.end = rec_end;
		id_pos = r.pos;
		id = rd_uint(&r, idsize);
		if (r.bad)
			return -1;
		if (id != 0) {
			/* FDE: id is the distance back to its CIE */
			if (id > id_pos)
				return -1;
			if (cie.off != id_pos - id &&
			    parse_cie(buf, len, id_pos - id, sec_addr, is64, little, &cie))
				return -1;
			if (cie.ok) {
				start = rd_encoded(&r, cie.fde_enc, sec_addr, &ok);
				size = rd_encoded(&r, cie.fde_enc & 0x0f, sec_addr, &ok);
				if (r.bad)
					return -1;
				if (ok)
					add_range(v, n, alloc, start, size);
			}
		}
		off = rec_end;
	}
	return 0;
}
