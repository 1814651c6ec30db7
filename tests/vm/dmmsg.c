// SPDX-License-Identifier: GPL-2.0
/*
 * dmmsg: send many device-mapper target messages from one process.
 *
 *   dmmsg < LINES
 *   dmmsg --load < LINES
 *   dmmsg --ops < LINES
 *
 * Each input line is "DEVICE MESSAGE...", sent to sector 0 of the named
 * device as `dmsetup message DEVICE 0 MESSAGE...` would, but without a
 * fork and exec of dmsetup per message: under TCG that costs ~100 ms (more
 * on the debug kernel), this a fraction of a millisecond, so the VM tests
 * can send thousands.  With --load each line is "DEVICE START LENGTH
 * TARGET PARAMS...", a one-target table loaded into DEVICE's inactive slot
 * as `dmsetup load` would.  With --ops each line is "OP DEVICE ARGS...":
 * "msg DEVICE MESSAGE...", "load DEVICE START LENGTH TARGET PARAMS...",
 * "suspend DEVICE", "resume DEVICE" (as `dmsetup suspend|resume`), or
 * "held DEVICE N [GROUP]": wait until GROUP (every group if none) of the
 * ioband device has had N more bios held than when the line began (the
 * delayed reads and writes of its status), polling every 2 ms for at
 * most 5 s; never refused, a pace and not a check (a test checks what
 * was held from the trace).  With DMMSG_TRACE set, "dmmsg op N: LINE" goes to
 * the trace (trace_marker) before line N and "dmmsg done N" after it, so
 * that trace events can be told apart by the line that caused them.
 * A refused line is printed on stderr with the
 * error; the last line of stdout is "N sent, N refused".  With
 * DMMSG_MARK set in the environment, "dmmsg: line N" goes to the kernel
 * log before line N is sent, so that a test can tell which kernel
 * messages each line caused.  Exit status 0 when nothing was refused,
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
#include <time.h>

#define BUF_SIZE (1 << 20)

/*
 * The ioctl header for DEVICE with @payload bytes after it (zeroed up to
 * @zero); NULL, with errno set, when they do not fit.
 */
static struct dm_ioctl *dm_header(char *buf, const char *dev, size_t payload,
				  size_t zero)
{
	struct dm_ioctl *io = (struct dm_ioctl *)buf;

	if (strlen(dev) >= DM_NAME_LEN || sizeof(*io) + payload > BUF_SIZE) {
		errno = E2BIG;
		return NULL;
	}
	memset(io, 0, sizeof(*io) + zero);
	io->version[0] = DM_VERSION_MAJOR;
	io->data_start = sizeof(*io);
	io->data_size = sizeof(*io) + payload;
	strcpy(io->name, dev);
	return io;
}

static int send_msg(int fd, char *buf, const char *dev, const char *msg)
{
	struct dm_ioctl *io;
	struct dm_target_msg *tm;
	size_t len = strlen(msg);

	io = dm_header(buf, dev, sizeof(*tm) + len + 1, sizeof(*tm));
	if (!io)
		return -1;
	tm = (struct dm_target_msg *)(buf + io->data_start);
	tm->sector = 0;
	memcpy(tm->message, msg, len + 1);
	return ioctl(fd, DM_TARGET_MSG, io);
}

/* "START LENGTH TARGET PARAMS..." as the one target of DEVICE's new table */
static int load_table(int fd, char *buf, const char *dev, const char *line)
{
	struct dm_ioctl *io;
	struct dm_target_spec *spec;
	unsigned long long start, len;
	const char *type, *params;
	char *end;
	size_t tlen, plen;

	start = strtoull(line, &end, 10);
	if (end == line || *end != ' ')
		goto bad;
	line = end + 1;
	len = strtoull(line, &end, 10);
	if (end == line || *end != ' ')
		goto bad;
	type = end + 1;
	params = strchr(type, ' ');
	tlen = params ? (size_t)(params - type) : strlen(type);
	params = params ? params + 1 : "";
	plen = strlen(params);
	if (!tlen || tlen >= DM_MAX_TYPE_NAME)
		goto bad;
	/* a next spec would start 8-byte aligned after the parameters */
	io = dm_header(buf, dev, (sizeof(*spec) + plen + 1 + 7) & ~7UL,
		       sizeof(*spec));
	if (!io)
		return -1;
	io->target_count = 1;
	spec = (struct dm_target_spec *)(buf + io->data_start);
	spec->sector_start = start;
	spec->length = len;
	memcpy(spec->target_type, type, tlen);
	memcpy((char *)(spec + 1), params, plen + 1);
	spec->next = io->data_size - io->data_start;
	return ioctl(fd, DM_TABLE_LOAD, io);
bad:
	errno = EINVAL;
	return -1;
}

/* DM_DEV_SUSPEND without or with DM_SUSPEND_FLAG, as dmsetup resume|suspend */
static int suspend_dev(int fd, char *buf, const char *dev, int suspend)
{
	struct dm_ioctl *io = dm_header(buf, dev, 0, 0);

	if (!io)
		return -1;
	if (suspend)
		io->flags = DM_SUSPEND_FLAG;
	return ioctl(fd, DM_DEV_SUSPEND, io);
}

/*
 * Bios held so far by group @group of ioband device @dev (every group if
 * @group is NULL): the delayed reads and writes of its status, which is
 * "DG" then "ID READS DELAYED_READS SECTORS WRITES DELAYED_WRITES SECTORS"
 * per group.  -1 with errno set on failure.
 */
static long long held_so_far(int fd, char *buf, const char *dev,
			     const char *group)
{
	struct dm_ioctl *io = dm_header(buf, dev, BUF_SIZE - sizeof(*io), 0);
	struct dm_target_spec *spec;
	long long sum = 0, v[7];
	char *p, *end;
	int i;

	if (!io)
		return -1;
	if (ioctl(fd, DM_TABLE_STATUS, io))
		return -1;
	if (io->target_count != 1 || (io->flags & DM_BUFFER_FULL_FLAG)) {
		errno = EINVAL;
		return -1;
	}
	spec = (struct dm_target_spec *)(buf + io->data_start);
	p = strchr((char *)(spec + 1), ' ');
	while (p && *p) {
		char *id = p + 1;

		for (i = 0; i < 7; i++) {
			v[i] = strtoll(p, &end, 10);
			if (end == p) {
				errno = EINVAL;
				return -1;
			}
			p = end;
		}
		if (!group || (strncmp(id, group, strlen(group)) == 0 &&
			       id[strlen(group)] == ' '))
			sum += v[2] + v[5];
	}
	return sum;
}

/* "held DEVICE N [GROUP]": see the top */
static int wait_held(int fd, char *buf, const char *dev, const char *args)
{
	char group[64] = "";
	long long n, h0, h;
	int i;

	if (sscanf(args, "%lld %63s", &n, group) < 1) {
		errno = EINVAL;
		return -1;
	}
	h0 = held_so_far(fd, buf, dev, *group ? group : NULL);
	if (h0 < 0)
		return -1;
	for (i = 0; i < 2500; i++) {
		struct timespec ms = { 0, 2000000 };

		h = held_so_far(fd, buf, dev, *group ? group : NULL);
		if (h < 0)
			return -1;
		if (h >= h0 + n)
			break;
		nanosleep(&ms, NULL);
	}
	return 0;
}

/* One --ops line, "OP DEVICE ARGS..."; the line is changed. */
static int do_op(int fd, char *buf, char *line)
{
	char *dev, *args;

	dev = strchr(line, ' ');
	if (!dev)
		goto bad;
	*dev++ = 0;
	args = strchr(dev, ' ');
	if (args)
		*args++ = 0;
	else
		args = "";
	if (!strcmp(line, "msg"))
		return send_msg(fd, buf, dev, args);
	if (!strcmp(line, "load"))
		return load_table(fd, buf, dev, args);
	if (!strcmp(line, "suspend") || !strcmp(line, "resume"))
		return suspend_dev(fd, buf, dev, line[0] == 's');
	if (!strcmp(line, "held"))
		return wait_held(fd, buf, dev, args);
bad:
	errno = EINVAL;
	return -1;
}

int main(int argc, char **argv)
{
	char *buf = malloc(BUF_SIZE);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long sent = 0, refused = 0;
	int load = argc == 2 && !strcmp(argv[1], "--load");
	int ops = argc == 2 && !strcmp(argv[1], "--ops");
	FILE *kmsg = getenv("DMMSG_MARK") ? fopen("/dev/kmsg", "w") : NULL;
	FILE *trace = getenv("DMMSG_TRACE") ?
		fopen("/sys/kernel/tracing/trace_marker", "w") : NULL;
	unsigned long nr = 0;
	int fd, r;

	if (argc != 1 && !load && !ops) {
		fprintf(stderr, "usage: dmmsg [--load|--ops] < 'DEVICE MESSAGE...' lines\n");
		return 2;
	}
	if (getenv("DMMSG_TRACE") && !trace) {
		perror("dmmsg: trace_marker");
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
		++nr;
		if (trace) {
			fprintf(trace, "dmmsg op %lu: %s\n", nr, line);
			fflush(trace);
		}
		*msg++ = 0;
		if (kmsg) {
			fprintf(kmsg, "dmmsg: line %lu\n", nr);
			fflush(kmsg);
		}
		if (ops) {
			/* the whole line, for the error: do_op() cuts it up */
			msg[-1] = ' ';
			dev = strdup(line);
			msg = "";
			r = dev ? do_op(fd, buf, line) : -1;
		} else {
			r = load ? load_table(fd, buf, dev, msg) :
				   send_msg(fd, buf, dev, msg);
		}
		if (trace) {
			fprintf(trace, "dmmsg done %lu\n", nr);
			fflush(trace);
		}
		if (r) {
			fprintf(stderr, "dmmsg: %s %s: %s\n", dev ? dev : "", msg,
				strerror(errno));
			refused++;
		} else {
			sent++;
		}
		if (ops)
			free(dev);
	}
	printf("%lu sent, %lu refused\n", sent, refused);
	if (kmsg)
		fclose(kmsg);
	if (trace)
		fclose(trace);
	free(line);
	free(buf);
	close(fd);
	return refused ? 1 : 0;
}
