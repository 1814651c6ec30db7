/* SPDX-License-Identifier: GPL-2.0 */
/* ioband-setup: names against the running system (names.c). */
#ifndef IOBAND_SETUP_NAMES_H
#define IOBAND_SETUP_NAMES_H

#include "ioband-setup.h"

/* The cgroup2 mount point, or NULL when cgroup2 is not mounted. */
const char *cgroup_root(void);
/* The id of the cgroup at @path ("/a/b", from the cgroup2 root); 0 when there is none. */
int64_t cgroup_id_of(const char *path);
/*
 * The device nodes with UUID=, LABEL=, PARTUUID= or PARTLABEL= (libblkid,
 * probing every device), in @n; free each and the array.
 */
char **devices_by_tag(const char *tag, size_t *n);
/* Fill @r with lookups in the system's databases and cgroup tree. */
void sys_resolver(struct resolver *r);
/*
 * A readable name for group @id of a device of type @type: "default",
 * a user or group name, a process's command, a cgroup path relative to
 * the cgroup2 root ("/web").  NULL when there is none.  Malloc'ed.
 * @rewalk: look at the cgroup tree again when the id is not known yet.
 */
char *group_display_name(enum gtype type, int64_t id, bool rewalk);
const char *cgroup_path_of(int64_t id, bool rewalk);
/*
 * The cgroup path ("/system.slice/web.service") of systemd unit @unit:
 * the unit's default place if a cgroup is there, else the first cgroup of
 * that name in the tree, else the default place (the unit has not started
 * yet); malloc'ed.  NULL when @unit is not a unit name.
 */
char *cgroup_of_unit(const char *unit);
/* Forget the cgroup tree read so far. */
void names_refresh(void);

#endif
