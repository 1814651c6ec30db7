// SPDX-License-Identifier: GPL-2.0
/*
 * mmapdio: O_DIRECT writes whose data pages belong to another file.
 *
 *   mmapdio FILE DEVICE COUNT
 *
 * Maps FILE (MAP_SHARED, read-only) and writes its first COUNT 4 KiB pages,
 * one pwrite() each, to the same offsets of DEVICE opened with O_DIRECT:
 * each write's bio carries page cache pages of FILE, which may be charged
 * to another cgroup than the writer's.  Prints "N written"; exit status 0
 * when all COUNT were, 1 on an I/O error, 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PG 4096

int main(int argc, char **argv)
{
	long count, i;
	struct stat st;
	char *map;
	int f, d;

	count = argc == 4 ? atol(argv[3]) : 0;
	if (count <= 0) {
		fprintf(stderr, "usage: mmapdio FILE DEVICE COUNT\n");
		return 2;
	}
	f = open(argv[1], O_RDONLY);
	d = open(argv[2], O_WRONLY | O_DIRECT);
	if (f < 0 || d < 0 || fstat(f, &st)) {
		perror("mmapdio: open");
		return 2;
	}
	if (st.st_size < count * PG) {
		fprintf(stderr, "mmapdio: %s is shorter than %ld pages\n",
			argv[1], count);
		return 2;
	}
	map = mmap(NULL, count * PG, PROT_READ, MAP_SHARED, f, 0);
	if (map == MAP_FAILED) {
		perror("mmapdio: mmap");
		return 2;
	}
	for (i = 0; i < count; i++) {
		if (pwrite(d, map + i * PG, PG, i * PG) != PG) {
			perror("mmapdio: pwrite");
			printf("%ld written\n", i);
			return 1;
		}
	}
	printf("%ld written\n", count);
	return 0;
}
