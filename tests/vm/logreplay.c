// SPDX-License-Identifier: GPL-2.0
/*
 * logreplay: replay a dm-log-writes log onto a device, checking it at the
 * points where the log says what a power cut would leave on disk.
 *
 *   logreplay LOG DEV [CHECK [MAX_CHECKS]]
 *
 * Writes every logged write of LOG to DEV in log order (discards as
 * zeroes).  With CHECK, after each entry that is a flush or a FUA write
 * runs `sh -c CHECK` with LOGREPLAY_ENTRY set to the entry's number (from
 * 1); with MAX_CHECKS, at most that many such points are checked, spread
 * evenly over the log, the last always among them.  The log must end with
 * dm-log-writes' closing mark "dm-log-writes-end" (a log without it ran
 * out of space and is incomplete).  The last line of stdout is
 * "N entries, N writes, N flushes, N fua, N discards, N marks, N checks".
 * Exit status 0, 1 when a check failed (the entry is named on stderr), 2 on
 * a usage, I/O or log format error.
 *
 * The log format (dm-log-writes, version 1), all integers little endian,
 * "sector" meaning the logged device's logical block size S:
 *  - byte 0: the super block: u64 magic 0x6a736677736872, u64 version 1,
 *    u64 number of entries, u32 S;
 *  - from byte S on, each entry: one S-byte header (u64 sector, u64
 *    nr_sectors, u64 flags, u64 data_len, and for a mark its text of
 *    data_len bytes), then, unless it is a discard, nr_sectors * S bytes
 *    of the data written at that sector of the device.
 *  - flags: 1 flush, 2 FUA, 4 discard, 8 mark, 16 metadata.
 * Writes appear in the order they reached the disk past its cache: a plain
 * write only at the flush that followed its completion, a FUA write as it
 * completed.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LR_MAGIC	0x6a736677736872ULL
#define LR_VERSION	1
#define LR_FLUSH	1
#define LR_FUA		2
#define LR_DISCARD	4
#define LR_MARK		8
#define LR_END_MARK	"dm-log-writes-end"

struct lr_super {
	uint64_t magic;
	uint64_t version;
	uint64_t nr_entries;
	uint32_t sectorsize;
} __attribute__((packed));

struct lr_entry {
	uint64_t sector;
	uint64_t nr_sectors;
	uint64_t flags;
	uint64_t data_len;
} __attribute__((packed));

struct lr_counts {
	uint64_t entries, writes, flushes, fua, discards, marks, points, checks;
};

static void lr_die(const char *what)
{
	fprintf(stderr, "logreplay: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void lr_bad(const char *what, uint64_t entry)
{
	fprintf(stderr, "logreplay: entry %llu: %s\n",
		(unsigned long long)entry, what);
	exit(2);
}

static void lr_pread(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n < 0)
		lr_die("reading the log");
	if ((size_t)n != len) {
		errno = EIO;
		lr_die("the log ends early");
	}
}

static void lr_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	ssize_t n = pwrite(fd, buf, len, off);

	if (n < 0 || (size_t)n != len) {
		if (n >= 0)
			errno = ENOSPC;
		lr_die("writing the device");
	}
}

/*
 * One pass over the log: counts entries and, when @dev >= 0, replays
 * them and runs @check at every @every-th check point and at the last
 * (@last, counted by a pass without @dev).  Returns the entry number a
 * check failed at, 0 if none.
 */
static uint64_t lr_pass(int log, int dev, const char *check, uint64_t every,
			uint64_t last, struct lr_counts *c)
{
	struct lr_super sb;
	struct lr_entry e;
	uint64_t i, off, len, ss;
	char *buf, *hdr;
	char env[32];
	int end_mark = 0;

	memset(c, 0, sizeof(*c));
	lr_pread(log, &sb, sizeof(sb), 0);
	if (le64toh(sb.magic) != LR_MAGIC || le64toh(sb.version) != LR_VERSION) {
		errno = EINVAL;
		lr_die("not a dm-log-writes log (version 1)");
	}
	ss = le32toh(sb.sectorsize);
	if (ss < sizeof(e) || ss > 65536 || (ss & (ss - 1))) {
		errno = EINVAL;
		lr_die("bad sector size in the super block");
	}
	hdr = malloc(ss);
	buf = NULL;
	if (!hdr)
		lr_die("malloc");
	off = ss;
	for (i = 1; i <= le64toh(sb.nr_entries); i++) {
		c->entries++;
		lr_pread(log, hdr, ss, off);
		memcpy(&e, hdr, sizeof(e));
		off += ss;
		e.sector = le64toh(e.sector);
		e.nr_sectors = le64toh(e.nr_sectors);
		e.flags = le64toh(e.flags);
		e.data_len = le64toh(e.data_len);
		if (e.flags & LR_MARK) {
			c->marks++;
			if (e.data_len > ss - sizeof(e))
				lr_bad("mark longer than its sector", i);
			end_mark = e.data_len == strlen(LR_END_MARK) &&
				   !memcmp(hdr + sizeof(e), LR_END_MARK,
					   e.data_len);
			continue;
		}
		end_mark = 0;
		if (e.data_len)
			lr_bad("inline data (not written by a block device)", i);
		if (e.nr_sectors > (1ULL << 32) / ss)
			lr_bad("write too large", i);
		len = e.nr_sectors * ss;
		if (len) {
			free(buf);
			buf = calloc(1, len);
			if (!buf)
				lr_die("malloc");
		}
		if (e.flags & LR_DISCARD) {
			c->discards++;
		} else if (len) {
			c->writes++;
			lr_pread(log, buf, len, off);
			off += len;
		}
		if (len && dev >= 0)
			lr_pwrite(dev, buf, len, e.sector * ss);
		c->flushes += !!(e.flags & LR_FLUSH);
		c->fua += !!(e.flags & LR_FUA);
		if (!(e.flags & (LR_FLUSH | LR_FUA)))
			continue;
		c->points++;
		if (dev < 0 || !check ||
		    (c->points % every && c->points != last))
			continue;
		if (fsync(dev))
			lr_die("fsync of the device");
		snprintf(env, sizeof(env), "%llu", (unsigned long long)i);
		setenv("LOGREPLAY_ENTRY", env, 1);
		c->checks++;
		if (system(check)) {
			fprintf(stderr,
				"logreplay: check failed after entry %llu (%s%s, %llu sectors at %llu)\n",
				(unsigned long long)i,
				e.flags & LR_FLUSH ? "flush" : "",
				e.flags & LR_FUA ? " fua" : "",
				(unsigned long long)e.nr_sectors,
				(unsigned long long)e.sector);
			free(buf);
			free(hdr);
			return i;
		}
	}
	free(buf);
	free(hdr);
	if (!end_mark) {
		errno = EINVAL;
		lr_die("the log does not end with the mark " LR_END_MARK
		       " (out of space, or not closed)");
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *check = argc > 3 ? argv[3] : NULL;
	uint64_t max = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
	uint64_t every = 1, failed;
	struct lr_counts c;
	int log, dev;

	if (argc < 3 || argc > 5 || (argc > 4 && !max)) {
		fprintf(stderr, "usage: logreplay LOG DEV [CHECK [MAX_CHECKS]]\n");
		return 2;
	}
	log = open(argv[1], O_RDONLY);
	if (log < 0)
		lr_die(argv[1]);
	dev = open(argv[2], O_WRONLY);
	if (dev < 0)
		lr_die(argv[2]);
	lr_pass(log, -1, NULL, 1, 0, &c);
	if (max && c.points > max)
		every = (c.points + max - 1) / max;
	failed = lr_pass(log, dev, check, every, c.points, &c);
	if (fsync(dev))
		lr_die("fsync of the device");
	printf("%llu entries, %llu writes, %llu flushes, %llu fua, %llu discards, %llu marks, %llu checks\n",
	       (unsigned long long)c.entries,
	       (unsigned long long)c.writes, (unsigned long long)c.flushes,
	       (unsigned long long)c.fua, (unsigned long long)c.discards,
	       (unsigned long long)c.marks, (unsigned long long)c.checks);
	return failed ? 1 : 0;
}
