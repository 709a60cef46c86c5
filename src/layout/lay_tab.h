/* lay_tab.h — the readings of a disk's layout: lay.c's inputs.
 *
 * A disk can carry more than one layout: a partition table written beside
 * an old filesystem's boot sector, a GPT's backup header left at the end
 * of a disk repartitioned as MBR, a filesystem made on the whole disk over
 * an old table.  Each program reads the disk its own way (the kernel's
 * msdos and efi parsers, libblkid, fdisk), so a block is free only when
 * every plausible reading calls it free (doc/DESIGN.md §12).
 *
 * A reading is one way to see the input: the regions a partition table
 * defines, read by one set of rules (lay_mbr.c: the kernel's MBR rules,
 * lay_gpt.c: each valid GPT header, lay_table.c: libblkid's verdict), or
 * the whole input as one filesystem (lay.c, when a filesystem signature
 * lies at the input's start or no table is found).  Every byte a table
 * reader parsed as a table structure (the MBR sector, each extended boot
 * record, each GPT header and entry array) goes into rs->structs: such
 * bytes are always data, whatever any filesystem calls them.
 *
 * Contract: readers run on the calling thread, read only through
 * lay_dev_read() (bounded to the input, counted; libblkid, lay_table.c,
 * reads the descriptor itself), neither print nor exit,
 * and return 0, or -1 out of memory.  A table that is not valid by the
 * reader's rules adds no reading.  Memory is owned by rs (lay_readings_free).
 */
#ifndef SPIGZ_LAY_TAB_H
#define SPIGZ_LAY_TAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lay.h"
#include "lay_fs.h"

struct lay_reading {
    char name[240];         /* for messages: "an MBR", "a GPT (backup header)" */
    char table[8];          /* "dos", "gpt", or "" for the whole input */
    struct lay_part *parts; /* in table order */
    size_t nparts, cap;
    struct sp_range *structs; /* this reading's own table structures */
    size_t nstructs, scap;
    bool too_many;          /* it defined more than LAY_MAX_PARTS regions */
};

/* The kernel's limit on a disk's partitions: a reading with more is not
 * believed (lay.c reads the whole input for it). */
#define LAY_MAX_PARTS 256

struct lay_readings {
    struct lay_reading *r;
    size_t n, cap;
    struct lay_used structs; /* every table structure found, of every reading */
    bool protective;         /* sector 0 holds a GPT protective entry (0xEE) */
};

/* A new, empty reading named name, appended to rs; NULL out of memory. */
struct lay_reading *lay_reading_new(struct lay_readings *rs, const char *table,
                                    const char *name);

/* A region [off, off + len) of the input; NULL out of memory, or past
 * LAY_MAX_PARTS (r->too_many set: the reader stops adding, no error). */
struct lay_part *lay_reading_part(struct lay_reading *r, uint64_t off, uint64_t len,
                                  unsigned number);

/* Bytes [off, off + len) of the input hold r's table: always data (added
 * to rs->structs too, unless rs is NULL).  0, or -1 out of memory. */
int lay_reading_struct(struct lay_readings *rs, struct lay_reading *r, uint64_t off,
                       uint64_t len);

void lay_readings_free(struct lay_readings *rs);

/* Mark region p read whole, saying why; doubt as struct lay_part says. */
void lay_whole(struct lay_part *p, bool doubt, const char *why);

/* Partitions of reading r that overlap each other or r's own table
 * structures are read whole. */
void lay_table_check(struct lay_reading *r);

/* lay_mbr.c: sector 0 as the kernel's msdos parser reads it, with sector
 * size ss: the primaries and the logical partitions along the extended
 * chain.  Adds one reading when the table holds at least one partition;
 * none for a protective MBR (rs->protective), a FAT boot sector, or no
 * table. */
int lay_mbr_read(struct lay_dev *d, unsigned ss, struct lay_readings *rs);

/* lay_gpt.c: every valid GPT header (signature, header and entry CRCs,
 * its own LBA) at LBA 1, at the primary's alternate LBA and at the last
 * LBA, for 512- and 4096-byte sectors (and ss): one reading each. */
int lay_gpt_read(struct lay_dev *d, unsigned ss, struct lay_readings *rs);

/* lay_table.c: libblkid's partition table, if any, as one reading; and
 * into sigs (up to nsig, NUL-terminated names; sig_at: where each magic
 * lies) the filesystem signatures libblkid finds on the whole input, each
 * type once.  *sector: its sector size (the device's; 512 for a file). */
int lay_blkid_read(int fd, uint64_t base, uint64_t size, struct lay_readings *rs,
                   char sigs[][16], uint64_t *sig_at, size_t nsig, size_t *found,
                   unsigned *sector);

#endif
