// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup: names against the running system.  Users and groups
 * through getpwnam/getpwuid and getgrnam/getgrgid; cgroups through the
 * cgroup2 mount (a cgroup's id is the inode number of its directory).
 */
#include <blkid/blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "ioband-setup.h"
#include "names.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static char *cg_root;
static bool cg_root_done;

const char *cgroup_root(void)
{
	FILE *f;
	char line[4096];

	if (cg_root_done)
		return cg_root;
	cg_root_done = true;
	f = fopen("/proc/self/mountinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			/* id parent maj:min root mountpoint opts... - fstype src opts */
			char *sep = strstr(line, " - ");
			char mnt[4096];

			if (!sep || strncmp(sep, " - cgroup2 ", 11))
				continue;
			if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
				cg_root = xstrdup(mnt);
				break;
			}
		}
		fclose(f);
	}
	return cg_root;
}

static int sys_user_by_name(const char *name, int64_t *id)
{
	struct passwd *pw = getpwnam(name);

	if (!pw)
		return -1;
	*id = pw->pw_uid;
	return 0;
}

static int sys_group_by_name(const char *name, int64_t *id)
{
	struct group *gr = getgrnam(name);

	if (!gr)
		return -1;
	*id = gr->gr_gid;
	return 0;
}

static int sys_cgroup_by_path(const char *rel, int64_t *id)
{
	const char *root = cgroup_root();
	struct statfs sfs;
	struct stat st;
	char *path;
	int r = -1;

	if (!root)
		return -1;
	path = *rel ? xasprintf("%s/%s", root, rel) : xstrdup(root);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	    statfs(path, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC) {
		*id = st.st_ino;
		r = 0;
	}
	free(path);
	return r;
}

int64_t cgroup_id_of(const char *path)
{
	int64_t id;

	return sys_cgroup_by_path(path + 1, &id) ? 0 : id;
}

char **devices_by_tag(const char *tag, size_t *n)
{
	blkid_cache cache;
	blkid_dev_iterate it;
	blkid_dev dev;
	char *name = NULL, *value = NULL, **v = NULL;

	*n = 0;
	if (blkid_parse_tag_string(tag, &name, &value))
		return NULL;
	/* no cache file: what is on the devices now */
	if (blkid_get_cache(&cache, "/dev/null") == 0) {
		blkid_probe_all(cache);
		it = blkid_dev_iterate_begin(cache);
		blkid_dev_set_search(it, name, value);
		while (blkid_dev_next(it, &dev) == 0) {
			dev = blkid_verify(cache, dev);
			if (!dev)
				continue;
			v = xrealloc(v, (*n + 1) * sizeof(*v));
			v[(*n)++] = xstrdup(blkid_dev_devname(dev));
		}
		blkid_dev_iterate_end(it);
		blkid_put_cache(cache);
	}
	free(name);
	free(value);
	return v;
}

void sys_resolver(struct resolver *r)
{
	r->user_by_name = sys_user_by_name;
	r->group_by_name = sys_group_by_name;
	r->cgroup_by_path = sys_cgroup_by_path;
	r->cgroup_root = cgroup_root();
}

/* ---- cgroup ids back to paths -------------------------------------------- */

struct cg_ent {
	uint64_t ino;
	char *path;	/* "/web/x"; "/" for the root */
};

static struct cg_ent *cg_map;
static size_t cg_n, cg_cap;
static bool cg_walked;

static void cg_add(uint64_t ino, const char *path)
{
	if (cg_n == cg_cap) {
		cg_cap = cg_cap ? cg_cap * 2 : 64;
		cg_map = xrealloc(cg_map, cg_cap * sizeof(*cg_map));
	}
	cg_map[cg_n].ino = ino;
	cg_map[cg_n].path = xstrdup(path);
	cg_n++;
}

static void cg_walk(int dfd, const char *rel, int depth)
{
	DIR *d;
	struct dirent *de;

	if (depth > 64)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		char *sub;
		int fd;

		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode))
			continue;
		sub = xasprintf("%s/%s", rel, de->d_name);
		cg_add(st.st_ino, sub);
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			cg_walk(fd, sub, depth + 1);
		free(sub);
	}
	closedir(d);
}

void names_refresh(void)
{
	size_t i;

	for (i = 0; i < cg_n; i++)
		free(cg_map[i].path);
	cg_n = 0;
	cg_walked = false;
}

static void cg_ensure(void)
{
	const char *root = cgroup_root();
	struct stat st;
	int fd;

	if (cg_walked || !root)
		return;
	cg_walked = true;
	if (stat(root, &st) == 0)
		cg_add(st.st_ino, "/");
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		cg_walk(fd, "", 0);
}

const char *cgroup_path_of(int64_t id, bool rewalk)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		cg_ensure();
		for (i = 0; i < cg_n; i++)
			if (cg_map[i].ino == (uint64_t)id)
				return cg_map[i].path;
		if (!rewalk)
			break;
		/* a cgroup made since the last walk */
		names_refresh();
		rewalk = false;
	}
	return NULL;
}

char *cgroup_of_unit(const char *unit)
{
	char *def = unit_default_path(unit), *found = NULL;
	size_t i, n = strlen(unit);

	if (!def)
		return NULL;
	names_refresh();
	cg_ensure();
	for (i = 0; i < cg_n; i++) {
		const char *p = cg_map[i].path;
		size_t l = strlen(p);

		if (!strcmp(p, def)) {
			found = cg_map[i].path;
			break;
		}
		if (!found && l > n && p[l - n - 1] == '/' && !strcmp(p + l - n, unit))
			found = cg_map[i].path;
	}
	if (found) {
		free(def);
		return xstrdup(found);
	}
	return def;
}

static char *comm_of(int64_t pid)
{
	char path[64], buf[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%lld/comm", (long long)pid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return xstrdup(buf);
}

char *group_display_name(enum gtype type, int64_t id, bool rewalk)
{
	if (id == DEFAULT_GROUP)
		return xstrdup("default");
	switch (type) {
	case GT_USER: {
		struct passwd *pw = getpwuid((uid_t)id);

		return pw ? xstrdup(pw->pw_name) : NULL;
	}
	case GT_GID: {
		struct group *gr = getgrgid((gid_t)id);

		return gr ? xstrdup(gr->gr_name) : NULL;
	}
	case GT_PID:
	case GT_PGRP:
		return comm_of(id);
	case GT_CGROUP:
	case GT_CGROUP_TREE: {
		const char *p = cgroup_path_of(id, rewalk);

		return p ? xstrdup(p) : NULL;
	}
	default:
		return NULL;
	}
}
