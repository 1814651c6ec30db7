// SPDX-License-Identifier: GPL-2.0
/*
 * dmmsg: send many device-mapper target messages from one process.
 *
 *   dmmsg < LINES
 *
 * Each input line is "DEVICE MESSAGE...", sent to sector 0 of the named
 * device as `dmsetup message DEVICE 0 MESSAGE...` would, but without a
 * fork and exec of dmsetup per message: under TCG that costs ~100 ms,
 * this a fraction of a millisecond, so the VM tests can send thousands.
 * A refused line is printed on stderr with the error; the last line of
 * stdout is "N sent, N refused".  Exit status 0 when nothing was refused,
 * 1 otherwise, 2 on a usage or setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/dm-ioctl.h>

#define BUF_SIZE (1 << 20)

static int send_msg(int fd, char *buf, const char *dev, const char *msg)
{
	struct dm_ioctl *io = (struct dm_ioctl *)buf;
	struct dm_target_msg *tm;
	size_t len = strlen(msg);

	if (strlen(dev) >= DM_NAME_LEN ||
	    sizeof(*io) + sizeof(*tm) + len + 1 > BUF_SIZE) {
		errno = E2BIG;
		return -1;
	}
	memset(io, 0, sizeof(*io) + sizeof(*tm));
	io->version[0] = DM_VERSION_MAJOR;
	io->version[1] = 0;
	io->version[2] = 0;
	io->data_size = sizeof(*io) + sizeof(*tm) + len + 1;
	io->data_start = sizeof(*io);
	strcpy(io->name, dev);
	tm = (struct dm_target_msg *)(buf + io->data_start);
	tm->sector = 0;
	memcpy(tm->message, msg, len + 1);
	return ioctl(fd, DM_TARGET_MSG, io);
}

int main(int argc, char **argv)
{
	char *buf = malloc(BUF_SIZE);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long sent = 0, refused = 0;
	int fd;

	if (argc != 1) {
		fprintf(stderr, "usage: dmmsg < 'DEVICE MESSAGE...' lines\n");
		return 2;
	}
	fd = open("/dev/mapper/control", O_RDWR);
	if (fd < 0 || !buf) {
		perror("dmmsg: /dev/mapper/control");
		return 2;
	}
	while ((n = getline(&line, &cap, stdin)) > 0) {
		char *dev = line, *msg;

		if (line[n - 1] == '\n')
			line[n - 1] = 0;
		msg = strchr(line, ' ');
		if (!msg || !*dev)
			continue;
		*msg++ = 0;
		if (send_msg(fd, buf, dev, msg)) {
			fprintf(stderr, "dmmsg: %s %s: %s\n", dev, msg,
				strerror(errno));
			refused++;
		} else {
			sent++;
		}
	}
	printf("%lu sent, %lu refused\n", sent, refused);
	free(line);
	free(buf);
	close(fd);
	return refused ? 1 : 0;
}
