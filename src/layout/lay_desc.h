/* lay_desc.h — what a disk holds, as a person reads it, for a backup's
 * manifest: the partition table as libblkid reads it (its type and id),
 * each partition's number, place, type (named by libfdisk: "EFI System"),
 * name and UUID, and the filesystem found in each (type, label, UUID).
 *
 * Descriptive only: nothing here decides what is free (lay.h does, from
 * every reading of the disk).  Untrusted bytes: every string is made
 * printable (txt_clean) and bounded; at most LAY_DESC_MAX partitions.
 *
 * Contract: lay_describe() reads fd with libblkid (lseek and read; the
 * offset is put back) and fills *d, which the caller owns (lay_desc_free).
 * Any thread, on its own descriptor.  Nothing prints or exits.
 */
#ifndef SPIGZ_LAY_DESC_H
#define SPIGZ_LAY_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LAY_DESC_MAX 256

struct lay_dpart {
    unsigned number;     /* libblkid's partno, the kernel's numbering; 0 for
                            a filesystem on the whole input (no table) */
    uint64_t off, len;   /* in the input */
    char type[48];       /* GPT type GUID, or MBR "0x83"; "" for number 0 */
    char type_name[64];  /* "EFI System" (libfdisk), or "" */
    char name[80];       /* GPT partition name, or "" */
    char uuid[40];       /* the partition's UUID (GPT; "id-NN" for MBR), or "" */
    char fs[16];         /* filesystem type as libblkid names it, or "" */
    char label[80];      /* filesystem label, or "" */
    char fs_uuid[48];    /* filesystem UUID, or "" */
    bool encrypted;      /* libblkid's USAGE is "crypto" (LUKS, BitLocker) */
};

struct lay_desc {
    char table[8];       /* "gpt", "dos", or "" (none found) */
    char id[40];         /* the table's id: disk GUID, MBR signature */
    struct lay_dpart *p; /* malloc'd, n of them, in table order */
    size_t n;
};

/* Describe the size bytes of fd from base.  0 (with nothing found, d is
 * empty), or -1 out of memory.  Without libblkid: 0, empty. */
int lay_describe(int fd, uint64_t base, uint64_t size, struct lay_desc *d);

void lay_desc_free(struct lay_desc *d);

#endif
