// SPDX-License-Identifier: GPL-2.0
/*
 * memverify: anonymous memory that must come back as written, for swap.
 *
 *   memverify MIB PASSES
 *
 * Fills MIB MiB of anonymous memory with a pattern (each 8-byte word its
 * own index, mixed with the pid), then reads all of it back PASSES times,
 * touching every page in order, so that under a memory limit smaller than
 * MIB the pages go out to swap and come back.  Prints "MIB MiB verified
 * PASSES times"; exit status 0 when every word matched, 1 on the first
 * mismatch (printed), 2 on a usage or allocation error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t memverify_word(uint64_t i, uint64_t seed)
{
	return (i * 0x9e3779b97f4a7c15ULL) ^ seed;
}

int main(int argc, char **argv)
{
	long mib = argc == 3 ? atol(argv[1]) : 0;
	long passes = argc == 3 ? atol(argv[2]) : 0;
	uint64_t seed = (uint64_t)getpid() << 32, n, i;
	uint64_t *mem;
	long p;

	if (mib <= 0 || passes <= 0) {
		fprintf(stderr, "usage: memverify MIB PASSES\n");
		return 2;
	}
	n = (uint64_t)mib << 17;	/* 8-byte words */
	mem = mmap(NULL, n * 8, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (i = 0; i < n; i++)
		mem[i] = memverify_word(i, seed);
	for (p = 0; p < passes; p++) {
		for (i = 0; i < n; i++) {
			if (mem[i] != memverify_word(i, seed)) {
				printf("pass %ld: word %llu is %#llx, want %#llx\n",
				       p + 1, (unsigned long long)i,
				       (unsigned long long)mem[i],
				       (unsigned long long)memverify_word(i, seed));
				return 1;
			}
		}
	}
	printf("%ld MiB verified %ld times\n", mib, passes);
	return 0;
}
