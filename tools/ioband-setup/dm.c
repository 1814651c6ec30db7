// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup: device-mapper through libdevmapper's dm_task API.
 *
 * The kernel explains a refused table or message only in its log, so
 * each operation that can be refused notes where /dev/kmsg ends before it
 * runs and, when it fails, reads back the device-mapper record it left
 * (dmx_why()).  libdevmapper's own messages are kept, not printed, unless
 * --verbose asks for them.
 */
#include <errno.h>
#include <fcntl.h>
#include <libdevmapper.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ioband-setup.h"
#include "dm.h"

/* libdevmapper's log levels (lvm2's lib/log/log.h). */
#define LOG_LEVEL_MASK	0x7f
#define DMLOG_ERR	3
#define DMLOG_WARN	4

int dmx_errno;
static int verbosity;
static char lib_err[512];	/* libdevmapper's last error */
static char kernel_why[512];	/* the kernel's reason, from /dev/kmsg */
static char why_buf[600];
static int kmsg_fd = -1;

__attribute__((format(printf, 5, 6)))
static void dm_logger(int level, const char *file, int line, int dm_errno_or_class,
		      const char *f, ...)
{
	va_list ap;
	char msg[512];

	(void)file;
	(void)line;
	(void)dm_errno_or_class;
	level &= LOG_LEVEL_MASK;
	va_start(ap, f);
	vsnprintf(msg, sizeof(msg), f, ap);
	va_end(ap);
	if (level <= DMLOG_ERR)
		snprintf(lib_err, sizeof(lib_err), "%s", msg);
	if (verbosity >= 2 || (verbosity >= 1 && level <= DMLOG_WARN))
		fprintf(stderr, "ioband-setup: libdevmapper: %s\n", msg);
}

void dmx_init(int verbose)
{
	verbosity = verbose;
	dm_log_with_errno_init(dm_logger);
}

void dmx_exit(void)
{
	dm_lib_release();
	if (kmsg_fd >= 0)
		close(kmsg_fd);
	kmsg_fd = -1;
}

static const char *fault_steps;

bool dmx_fault(const char *step)
{
	const char *p;
	size_t n = strlen(step);

	if (!fault_steps)
		fault_steps = getenv("IOBAND_SETUP_FAULT");
	if (!fault_steps)
		fault_steps = "";
	for (p = fault_steps; (p = strstr(p, step)); p += n) {
		if ((p == fault_steps || p[-1] == ',') && (p[n] == ',' || !p[n])) {
			dmx_errno = EIO;
			snprintf(kernel_why, sizeof(kernel_why), "injected fault at %s", step);
			lib_err[0] = '\0';
			return true;
		}
	}
	return false;
}

/* ---- the kernel's reasons ------------------------------------------------ */

static void kmsg_mark(void)
{
	kernel_why[0] = '\0';
	lib_err[0] = '\0';
	dmx_errno = 0;
	if (kmsg_fd < 0)
		kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
}

/* "... ioband: io_throttle must not exceed io_limit (-EINVAL)" -> the reason */
static void take_reason(const char *msg)
{
	const char *p, *q;
	size_t n;

	if ((p = strstr(msg, " refused: ")))
		p += 10;
	else if ((p = strstr(msg, ": ioband: ")))
		p += 10;
	else if (!strncmp(msg, "device-mapper: ", 15))
		p = msg + 15;
	else
		p = msg;
	n = strlen(p);
	/* drop dm core's " (-EINVAL)" / " (-22)" */
	q = strrchr(p, '(');
	if (q && q > p && q[-1] == ' ' && q[1] == '-' && p[n - 1] == ')')
		n = q - 1 - p;
	snprintf(kernel_why, sizeof(kernel_why), "%.*s", (int)n, p);
}

static void kmsg_collect(void)
{
	char rec[2048];
	bool have_ioband = false;
	ssize_t n;

	if (kmsg_fd < 0)
		return;
	for (;;) {
		char *msg, *nl;
		int prio;

		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records overwritten: go on reading */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg || sscanf(rec, "%d", &prio) != 1)
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		/* errors and warnings of the kernel (facility 0) from device-mapper */
		if (prio > 4 || strncmp(msg, "device-mapper: ", 15))
			continue;
		/*
		 * The first record naming ioband is the reason; dm core's
		 * "error adding target to table" that follows says less.
		 */
		if (strstr(msg, "ioband")) {
			if (!have_ioband)
				take_reason(msg);
			have_ioband = true;
		} else if (!kernel_why[0]) {
			take_reason(msg);
		}
	}
}

const char *dmx_why(void)
{
	if (kernel_why[0])
		return kernel_why;
	if (lib_err[0] && dmx_errno)
		snprintf(why_buf, sizeof(why_buf), "%s (%s)", strerror(dmx_errno), lib_err);
	else if (lib_err[0])
		snprintf(why_buf, sizeof(why_buf), "%s", lib_err);
	else
		snprintf(why_buf, sizeof(why_buf), "%s", strerror(dmx_errno ? dmx_errno : EIO));
	return why_buf;
}

/* ---- tasks --------------------------------------------------------------- */

/* libdevmapper could not reach the kernel's driver: why, and what to do */
static void dm_unreachable(void)
{
	dmx_errno = ENODEV;
	snprintf(kernel_why, sizeof(kernel_why), "device-mapper is not available%s%.400s%s%s",
		 lib_err[0] ? " (" : "", lib_err, lib_err[0] ? ")" : "",
		 geteuid() ? "; ioband-setup must run as root" :
		 "; is its module loaded? modprobe dm_mod");
}

static struct dm_task *task(int type, const char *name)
{
	struct dm_task *dmt;

	lib_err[0] = '\0';
	kernel_why[0] = '\0';
	dmt = dm_task_create(type);
	if (!dmt) {
		dm_unreachable();
		return NULL;
	}
	if (name && !dm_task_set_name(dmt, name)) {
		dm_task_destroy(dmt);
		dmx_errno = EINVAL;
		return NULL;
	}
	return dmt;
}

/* Run @dmt; with @cookie, wait for udev (or make the nodes without it). */
static int run(struct dm_task *dmt, bool cookie, uint16_t udev_flags)
{
	uint32_t c = 0;
	int ok;

	kmsg_mark();
	if (cookie && !dm_task_set_cookie(dmt, &c, udev_flags)) {
		dmx_errno = EIO;
		return -1;
	}
	ok = dm_task_run(dmt);
	if (!ok && access("/dev/mapper/control", F_OK)) {
		dm_unreachable();
	} else if (!ok) {
		dmx_errno = dm_task_get_errno(dmt);
		if (!dmx_errno)
			dmx_errno = EIO;
		kmsg_collect();
	}
	if (cookie)
		dm_udev_wait(c);
	return ok ? 0 : -1;
}

static void fill_info(struct dm_task *dmt, const struct dm_info *di, struct dmx_info *info)
{
	const char *s;

	memset(info, 0, sizeof(*info));
	info->exists = di->exists;
	if (!di->exists)
		return;
	info->major = di->major;
	info->minor = di->minor;
	info->open_count = di->open_count;
	info->suspended = di->suspended;
	info->read_only = di->read_only;
	info->live_table = di->live_table;
	info->inactive_table = di->inactive_table;
	s = dm_task_get_name(dmt);
	snprintf(info->name, sizeof(info->name), "%s", s ? s : "");
	s = dm_task_get_uuid(dmt);
	snprintf(info->uuid, sizeof(info->uuid), "%s", s ? s : "");
}

static int info_task(struct dm_task *dmt, struct dmx_info *info)
{
	struct dm_info di;
	int r = -1;

	if (run(dmt, false, 0))
		goto out;
	if (!dm_task_get_info(dmt, &di)) {
		dmx_errno = EIO;
		goto out;
	}
	fill_info(dmt, &di, info);
	r = 0;
out:
	dm_task_destroy(dmt);
	return r;
}

int dmx_info(const char *name, struct dmx_info *info)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO, name);

	memset(info, 0, sizeof(*info));
	return dmt ? info_task(dmt, info) : -1;
}

int dmx_info_devt(uint32_t major, uint32_t minor, struct dmx_info *info)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO, NULL);

	memset(info, 0, sizeof(*info));
	if (!dmt)
		return -1;
	if (!dm_task_set_major_minor(dmt, major, minor, 0)) {
		dm_task_destroy(dmt);
		dmx_errno = EINVAL;
		return -1;
	}
	return info_task(dmt, info);
}

void dmx_lines_free(struct dm_target_line *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(t[i].type);
		free(t[i].params);
	}
	free(t);
}

int dmx_table(const char *name, bool status, struct dm_target_line **tp, size_t *np)
{
	struct dm_task *dmt = task(status ? DM_DEVICE_STATUS : DM_DEVICE_TABLE, name);
	struct dm_target_line *t = NULL;
	size_t n = 0;
	void *next = NULL;

	*tp = NULL;
	*np = 0;
	if (!dmt)
		return -1;
	if (run(dmt, false, 0)) {
		dm_task_destroy(dmt);
		return -1;
	}
	do {
		uint64_t start, len;
		char *type = NULL, *params = NULL;

		next = dm_get_next_target(dmt, next, &start, &len, &type, &params);
		if (!type)
			break;
		t = xrealloc(t, (n + 1) * sizeof(*t));
		t[n].start = start;
		t[n].len = len;
		t[n].type = xstrdup(type);
		t[n].params = xstrdup(params ? params : "");
		n++;
	} while (next);
	dm_task_destroy(dmt);
	*tp = t;
	*np = n;
	return 0;
}

static int add_targets(struct dm_task *dmt, const struct dm_target_line *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!dm_task_add_target(dmt, t[i].start, t[i].len, t[i].type, t[i].params)) {
			dmx_errno = ENOMEM;
			return -1;
		}
	}
	return 0;
}

int dmx_create(const char *name, const char *uuid, const struct dm_target_line *t, size_t n,
	       bool read_only, uint16_t udev_flags)
{
	struct dm_task *dmt = task(DM_DEVICE_CREATE, name);
	int r = -1;

	if (!dmt)
		return -1;
	if (uuid && !dm_task_set_uuid(dmt, uuid)) {
		dmx_errno = EINVAL;
		goto out;
	}
	if (read_only && !dm_task_set_ro(dmt))
		goto out;
	if (add_targets(dmt, t, n))
		goto out;
	r = run(dmt, true, udev_flags);
out:
	dm_task_destroy(dmt);
	return r;
}

int dmx_reload(const char *name, const struct dm_target_line *t, size_t n, bool read_only)
{
	struct dm_task *dmt = task(DM_DEVICE_RELOAD, name);
	int r = -1;

	if (!dmt)
		return -1;
	if (read_only && !dm_task_set_ro(dmt))
		goto out;
	if (add_targets(dmt, t, n))
		goto out;
	r = run(dmt, false, 0);
out:
	dm_task_destroy(dmt);
	return r;
}

static int simple(int type, const char *name, bool cookie)
{
	struct dm_task *dmt = task(type, name);
	int r;

	if (!dmt)
		return -1;
	if (type == DM_DEVICE_REMOVE)
		dm_task_retry_remove(dmt);
	r = run(dmt, cookie, 0);
	dm_task_destroy(dmt);
	return r;
}

int dmx_suspend(const char *name)
{
	return simple(DM_DEVICE_SUSPEND, name, false);
}

int dmx_resume(const char *name)
{
	return simple(DM_DEVICE_RESUME, name, true);
}

int dmx_clear(const char *name)
{
	return simple(DM_DEVICE_CLEAR, name, false);
}

int dmx_remove(const char *name)
{
	return simple(DM_DEVICE_REMOVE, name, true);
}

int dmx_message(const char *name, const char *msg, char **response)
{
	struct dm_task *dmt = task(DM_DEVICE_TARGET_MSG, name);
	int r = -1;

	if (response)
		*response = NULL;
	if (!dmt)
		return -1;
	if (!dm_task_set_sector(dmt, 0) || !dm_task_set_message(dmt, msg)) {
		dmx_errno = ENOMEM;
		goto out;
	}
	r = run(dmt, false, 0);
	if (!r && response) {
		const char *answer = dm_task_get_message_response(dmt);

		*response = xstrdup(answer ? answer : "");
	}
out:
	dm_task_destroy(dmt);
	return r;
}

int dmx_list(char ***namesp, size_t *np)
{
	struct dm_task *dmt = task(DM_DEVICE_LIST, NULL);
	struct dm_names *names;
	char **out = NULL;
	size_t n = 0;
	unsigned int next = 0;

	*namesp = NULL;
	*np = 0;
	if (!dmt)
		return -1;
	if (run(dmt, false, 0)) {
		dm_task_destroy(dmt);
		return -1;
	}
	names = dm_task_get_names(dmt);
	if (names && names->dev) {
		do {
			names = (struct dm_names *)((char *)names + next);
			out = xrealloc(out, (n + 1) * sizeof(*out));
			out[n++] = xstrdup(names->name);
			next = names->next;
		} while (next);
	}
	dm_task_destroy(dmt);
	*namesp = out;
	*np = n;
	return 0;
}
