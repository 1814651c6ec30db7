// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup: the state file of the cgroup groups given by path, and
 * 'ioband-setup watch', which keeps each such group attached under the id
 * its path has now.
 *
 * The commands (create, apply, set, attach, detach, remove, wrap, unwrap)
 * record a group given by a cgroup path in /run/ioband/groups, whether the
 * cgroup exists or not.  The watcher reconciles every entry with the tree
 * (pg_plan) when it starts, whenever the state file is replaced, and
 * whenever a directory is made or removed in a directory on the way to an
 * entry's path: inotify sees mkdir and rmdir in cgroupfs, which go through
 * the VFS (systemd's included).  A stale id is detached (the kernel moves
 * its held bios to the default group, none is lost), the new one attached.
 * Each reconcile first repairs the wrapped volumes LVM has changed
 * (lvm.c); the kernel's uevents wake the watcher for that, since device-
 * mapper sends one on each table swap, creation and removal.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "names.h"

#define RUN_DIR		IOBAND_RUN_DIR
#define STATE_FILE	RUN_DIR "/groups"
#define LOCK_FILE	RUN_DIR "/lock"
#define PID_FILE	RUN_DIR "/watch.pid"

/* ---- the state file ------------------------------------------------------ */

static int lock_fd = -1, lock_depth;

int state_dir(void)
{
	if (mkdir(RUN_DIR, 0755) && errno != EEXIST)
		return errorf(EX_FAIL, "%s: %s", RUN_DIR, strerror(errno));
	return EX_OK;
}

int state_lock(void)
{
	int rc;

	if (lock_depth++)
		return EX_OK;
	rc = state_dir();
	if (rc)
		goto fail;
	/* read-only: a close after writing would wake the watcher */
	if (lock_fd < 0)
		lock_fd = open(LOCK_FILE, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
	if (lock_fd < 0) {
		rc = errorf(EX_FAIL, "%s: %s", LOCK_FILE, strerror(errno));
		goto fail;
	}
	while (flock(lock_fd, LOCK_EX)) {
		if (errno != EINTR) {
			rc = errorf(EX_FAIL, "locking %s: %s", LOCK_FILE, strerror(errno));
			goto fail;
		}
	}
	return EX_OK;
fail:
	lock_depth = 0;
	return rc;
}

void state_unlock(void)
{
	if (lock_depth && !--lock_depth)
		flock(lock_fd, LOCK_UN);
}

int state_load(struct pg_state *s)
{
	char *line = NULL, err[256];
	size_t cap = 0;
	int lineno = 0, rc = EX_OK;
	FILE *f;

	memset(s, 0, sizeof(*s));
	f = fopen(STATE_FILE, "r");
	if (!f)
		return errno == ENOENT ? EX_OK :
			errorf(EX_FAIL, "%s: %s", STATE_FILE, strerror(errno));
	while (getline(&line, &cap, f) >= 0) {
		if (pg_parse_line(s, line, ++lineno, err, sizeof(err)) < 0) {
			rc = errorf(EX_FAIL, "%s: %s", STATE_FILE, err);
			break;
		}
	}
	free(line);
	fclose(f);
	if (rc)
		pg_free(s);
	return rc;
}

static char *file_text(const char *path)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = xrealloc(buf, cap);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

int state_save(const struct pg_state *s)
{
	char *text = NULL, *old;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc = EX_OK, fd;

	pg_write(f, s);
	fclose(f);
	old = file_text(STATE_FILE);
	if (old && !strcmp(old, text))
		goto out;
	rc = state_dir();
	if (rc)
		goto out;
	/* replaced in one rename: the watcher reads the old file or the new */
	fd = open(STATE_FILE ".new", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) ||
	    rename(STATE_FILE ".new", STATE_FILE)) {
		rc = errorf(EX_FAIL, "writing %s: %s", STATE_FILE, strerror(errno));
		unlink(STATE_FILE ".new");
	}
out:
	free(old);
	free(text);
	return rc;
}

int state_replace_dev(const char *dev, const struct pg_state *paths)
{
	struct pg_state s;
	size_t i;
	int rc;

	rc = state_lock();
	if (rc)
		return rc;
	rc = state_load(&s);
	if (!rc) {
		/* in place, so that the file changes only when an entry does */
		i = 0;
		while (i < s.n) {
			if (!strcmp(s.e[i].dev, dev) && !pg_find(paths, "", s.e[i].path))
				pg_drop(&s, &s.e[i]);
			else
				i++;
		}
		for (i = 0; i < paths->n; i++) {
			struct pg_entry *e = pg_add(&s, dev, paths->e[i].path);

			e->weight = paths->e[i].weight;
			e->min_kbps = paths->e[i].min_kbps;
			e->max_kbps = paths->e[i].max_kbps;
			memcpy(e->limit, paths->e[i].limit, sizeof(e->limit));
			e->id = paths->e[i].id;
		}
		rc = state_save(&s);
		pg_free(&s);
	}
	state_unlock();
	return rc;
}

bool watch_running(void)
{
	int fd = open(PID_FILE, O_RDONLY | O_CLOEXEC);
	bool held;

	if (fd < 0)
		return false;
	held = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

/* ---- reconciling --------------------------------------------------------- */

/*
 * Follow the io.weight of @e's cgroup (id @cur, 0: none) for device
 * @devt, under the weight policies (systemd's IOWeight= and
 * IODeviceWeight= write it).
 */
static void follow_ioweight(const struct dev_state *d, struct pg_entry *e, int64_t cur)
{
	char *path, *text, devt[32];
	uint32_t w;

	if (!cur || d->t.policy == POL_RANGE_BW)
		return;
	path = xasprintf("%s%s/io.weight", cgroup_root(), e->path);
	text = file_text(path);
	free(path);
	if (!text)
		return;
	snprintf(devt, sizeof(devt), "%u:%u", d->info.major, d->info.minor);
	w = ioweight_parse(text, devt);
	free(text);
	if (pg_follow_ioweight(e, w))
		note("%s: %s: io.weight %u followed", d->name, e->path, w);
}

/*
 * Watch each directory on the way to each entry's path, the root
 * included (where its next part may appear or go), and the state file's
 * directory (for a new state file).  Watching a directory twice is one
 * watch; a removed directory's watch ends by itself.
 */
static void add_watches(int ifd, const struct pg_state *s)
{
	const uint32_t tree = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR;
	const char *root = cgroup_root();
	size_t i;

	inotify_add_watch(ifd, RUN_DIR, IN_MOVED_TO | IN_ONLYDIR);
	for (i = 0; i < s->n; i++) {
		char *p = xasprintf("%s%s", root, s->e[i].path);
		char *q = p + strlen(root);

		inotify_add_watch(ifd, root, tree);
		while ((q = strchr(q + 1, '/'))) {
			*q = '\0';
			if (inotify_add_watch(ifd, p, tree) < 0) {
				*q = '/';
				break;	/* not made yet: its parent's watch sees it come */
			}
			*q = '/';
		}
		/* the cgroup itself: writes to its io.weight */
		if (!q)
			inotify_add_watch(ifd, p, IN_MODIFY | IN_ONLYDIR);
		free(p);
	}
}


/*
 * Reconcile every entry with its device and the cgroup tree, under the
 * lock (after adding the watches for them to @ifd, unless it is -1).  Devices that do not exist (yet) or are not of type cgroup are
 * passed over; a message the kernel refuses is reported and tried again at
 * the next reconcile.  EX_OK or an exit code (printed).
 */
static double now_sec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * A failed repair is tried again REPAIR_RETRY_S later, not at once: its
 * own undo raises uevents, which would make a loop of it.
 */
#define REPAIR_RETRY_S	5
static double repair_after;

static int reconcile(struct pg_state *s, int ifd)
{
	size_t i, j, k;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = state_lock();
	if (rc)
		return rc;
	if (now_sec() >= repair_after && lvm_repair_all())
		repair_after = now_sec() + REPAIR_RETRY_S;
	rc = state_load(s);
	if (rc)
		goto out;
	/*
	 * Watches first, then the tree: a directory made after its parent's
	 * watch raises an event, one made before is seen here.
	 */
	if (ifd >= 0)
		add_watches(ifd, s);
	for (i = 0; i < s->n; i++) {
		struct dev_state d;
		bool first = true;

		for (j = 0; j < i; j++)
			if (!strcmp(s->e[j].dev, s->e[i].dev))
				first = false;
		if (!first)
			continue;
		if (load_ioband(s->e[i].dev, &d, true))
			continue;
		if (!gtype_cgroup(d.t.type)) {
			dev_state_free(&d);
			continue;
		}
		for (j = i; j < s->n; j++) {
			struct pg_entry *e = &s->e[j];
			char msgs[PG_MAX_MSGS][PG_MSG_LEN], done[PG_MAX_MSGS * (PG_MSG_LEN + 2)];
			int64_t old = e->id, cur;
			size_t n, len = 0;

			if (strcmp(e->dev, d.name))
				continue;
			cur = cgroup_id_of(e->path);
			follow_ioweight(&d, e, cur);
			n = pg_plan(e, &d.t, cur, msgs);
			for (k = 0; k < n; k++) {
				if (send_message(d.name, msgs[k])) {
					errorf(EX_FAIL, "%s: %s: the kernel refused '%s': %s", d.name,
					       e->path, msgs[k], dmx_why());
					e->id = old;
					break;
				}
				len += snprintf(done + len, sizeof(done) - len, "%s%s",
						k ? ", " : "", msgs[k]);
			}
			if (k)
				note("%s: %s: %s", d.name, e->path, done);
		}
		if (d.wraps)
			lvm_record_update(d.name);
		dev_state_free(&d);
	}
	rc = state_save(s);
out:
	state_unlock();
	return rc;
}

/* ---- the watcher --------------------------------------------------------- */

static volatile sig_atomic_t got_stop, got_hup;

static void on_watch_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		got_stop = 1;
}

/* Tell systemd (Type=notify) that the watches are in place. */
static void sd_ready(void)
{
	const char *sock = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!sock || (sock[0] != '/' && sock[0] != '@') || strlen(sock) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, sock);
	if (sock[0] == '@')
		sa.sun_path[0] = '\0';
	len = offsetof(struct sockaddr_un, sun_path) + strlen(sock);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, "READY=1", 7, 0, (struct sockaddr *)&sa, len);
	close(fd);
}

/*
 * The kernel's uevents, nonblocking; -1 when they cannot be had (a kernel
 * without networking has no netlink), and then the wrapped volumes are
 * checked every UEVENTLESS_POLL_MS instead.
 */
#define UEVENTLESS_POLL_MS	1000
static int uevent_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		errorf(EX_FAIL, "no kernel uevents (%s): wrapped volumes are checked every %d ms instead",
		       strerror(errno), UEVENTLESS_POLL_MS);
	return fd;
}


int cmd_watch(int argc, char **argv)
{
	struct pg_state s;
	struct sigaction sa = { .sa_handler = on_watch_signal };
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool once = false;
	int i, ifd, ufd, pfd, rc, timeout;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return help_exit();
		if (!strcmp(argv[i], "--once"))
			once = true;
		else
			return usage_error("unknown argument '%s'", argv[i]);
	}
	if (!cgroup_root())
		return errorf(EX_FAIL, "cgroup2 is not mounted");
	if (once) {
		rc = reconcile(&s, -1);
		pg_free(&s);
		return rc;
	}
	rc = state_dir();
	if (rc)
		return rc;
	pfd = open(PID_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (pfd < 0)
		return errorf(EX_FAIL, "%s: %s", PID_FILE, strerror(errno));
	if (flock(pfd, LOCK_EX | LOCK_NB)) {
		close(pfd);
		return errorf(EX_CONFLICT, "another ioband-setup watch is running");
	}
	if (ftruncate(pfd, 0) == 0)
		dprintf(pfd, "%d\n", (int)getpid());
	ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ifd < 0) {
		close(pfd);
		return errorf(EX_FAIL, "inotify: %s", strerror(errno));
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ufd = uevent_open();
	for (i = 0; !got_stop; i++) {
		struct pollfd p[2] = { { .fd = ifd, .events = POLLIN },
				       { .fd = ufd, .events = POLLIN } };
		double wait;

		reconcile(&s, ifd);
		if (!i) {
			note("watching %zu cgroup group%s", s.n, s.n == 1 ? "" : "s");
			sd_ready();
		}
		pg_free(&s);
		got_hup = 0;
		wait = repair_after - now_sec();
		timeout = wait > 0 ? (int)(wait * 1000) + 1 : ufd < 0 ? UEVENTLESS_POLL_MS : -1;
		while (!got_stop && !got_hup && poll(p, 2, timeout) < 0 && errno == EINTR)
			;
		/* one reconcile for the whole burst (a service's restart is several) */
		while (read(ifd, buf, sizeof(buf)) > 0)
			;
		while (ufd >= 0 && recv(ufd, buf, sizeof(buf), 0) > 0)
			;
	}
	if (ufd >= 0)
		close(ufd);
	close(ifd);
	close(pfd);
	return EX_OK;
}
