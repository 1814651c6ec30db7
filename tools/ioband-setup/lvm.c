// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup: logical volumes wrapped in place (wrap, unwrap, wrap
 * --repair), and what keeps a wrap across LVM's own changes.
 *
 * wrap copies a volume's table to VG-LV-iobandorig and swaps the volume's
 * table for ioband over that copy; /dev/VG/LV stays the same device.  LVM
 * knows nothing of it.  A command that reloads the volume (lvextend,
 * lvreduce, lvchange --refresh) loads LVM's own table in place of ioband's,
 * and one that deactivates it (lvchange -an, vgchange -an, lvremove)
 * removes the volume and leaves the copy.  The copy is then stale: it
 * still maps the extents the volume had, which LVM may give to another
 * volume, so it must go.
 *
 * Every wrap is therefore recorded in /run/ioband/wraps: the volume's
 * uuid (which LVM keeps across those commands) and its ioband table, kept
 * current by the commands that change the table (set, attach, detach,
 * apply, and watch's own messages).  Repair (wrap --repair by hand, and
 * watch on every device-mapper uevent) removes a stale copy and, where the
 * volume is active with LVM's table, wraps it again from its record.
 * Repair, wrap and unwrap hold LVM's lock of the volume group, so that they
 * act after the LVM command that changed the volume, never inside it.
 * Between that command and the repair the volume's I/O is not controlled
 * (no bio is lost: LVM suspends the volume, which releases ioband's held
 * bios to the copy, before it swaps the table).
 *
 * Everything here runs under the state lock (watch.c), taken before the
 * volume group's lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <libdevmapper.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

#define WRAPS_FILE	IOBAND_RUN_DIR "/wraps"
#define LVM_LOCK_DIR	"/run/lock/lvm"	/* lvm.conf's default locking_dir */

/* ---- the wrap records ---------------------------------------------------- */

/* One line of WRAPS_FILE: "DM-NAME LV-UUID IOBAND-PARAMS". */
struct wrap_rec {
	char *dm, *uuid, *params;
};

struct wrap_recs {
	struct wrap_rec *r;
	size_t n;
};

static void recs_free(struct wrap_recs *w)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		free(w->r[i].dm);
		free(w->r[i].uuid);
		free(w->r[i].params);
	}
	free(w->r);
	memset(w, 0, sizeof(*w));
}

static int recs_load(struct wrap_recs *w)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	memset(w, 0, sizeof(*w));
	f = fopen(WRAPS_FILE, "r");
	if (!f)
		return errno == ENOENT ? EX_OK :
			errorf(EX_FAIL, "%s: %s", WRAPS_FILE, strerror(errno));
	while (getline(&line, &cap, f) >= 0) {
		char *dm, *uuid, *params, *save = NULL;

		line[strcspn(line, "\n")] = '\0';
		dm = strtok_r(line, " ", &save);
		uuid = strtok_r(NULL, " ", &save);
		params = strtok_r(NULL, "", &save);
		if (!dm || !uuid || !params)
			continue;	/* only this file's writer writes it */
		w->r = xrealloc(w->r, (w->n + 1) * sizeof(*w->r));
		w->r[w->n++] = (struct wrap_rec){ xstrdup(dm), xstrdup(uuid), xstrdup(params) };
	}
	free(line);
	fclose(f);
	return EX_OK;
}

static int recs_save(const struct wrap_recs *w)
{
	size_t i;
	FILE *f;
	int rc;

	rc = state_dir();
	if (rc)
		return rc;
	f = fopen(WRAPS_FILE ".new", "we");
	if (!f)
		return errorf(EX_FAIL, "%s.new: %s", WRAPS_FILE, strerror(errno));
	for (i = 0; i < w->n; i++)
		fprintf(f, "%s %s %s\n", w->r[i].dm, w->r[i].uuid, w->r[i].params);
	if (ferror(f) | fclose(f) || rename(WRAPS_FILE ".new", WRAPS_FILE)) {
		rc = errorf(EX_FAIL, "writing %s: %s", WRAPS_FILE, strerror(errno));
		unlink(WRAPS_FILE ".new");
	}
	return rc;
}

static struct wrap_rec *recs_find(const struct wrap_recs *w, const char *dm)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (!strcmp(w->r[i].dm, dm))
			return &w->r[i];
	return NULL;
}

/* Record (or with @params NULL forget) the wrap of volume @dm. */
static int record_set(const char *dm, const char *uuid, const char *params)
{
	struct wrap_recs w;
	struct wrap_rec *r;
	int rc;

	rc = recs_load(&w);
	if (rc)
		return rc;
	r = recs_find(&w, dm);
	if (!params && !r)
		goto out;
	if (!params) {
		free(r->dm);
		free(r->uuid);
		free(r->params);
		*r = w.r[--w.n];
	} else if (r) {
		if (!strcmp(r->uuid, uuid) && !strcmp(r->params, params))
			goto out;
		free(r->uuid);
		free(r->params);
		r->uuid = xstrdup(uuid);
		r->params = xstrdup(params);
	} else {
		w.r = xrealloc(w.r, (w.n + 1) * sizeof(*w.r));
		w.r[w.n++] = (struct wrap_rec){ xstrdup(dm), xstrdup(uuid), xstrdup(params) };
	}
	rc = recs_save(&w);
out:
	recs_free(&w);
	return rc;
}

void lvm_record_update(const char *dm)
{
	struct dev_state d;

	if (load_ioband(dm, &d, true))
		return;
	if (d.wraps)
		record_set(d.name, d.info.uuid, d.lines[0].params);
	dev_state_free(&d);
}

/* ---- LVM's lock of a volume group ---------------------------------------- */

struct vg_lock {
	int fd;
	char *path;
};

/*
 * Take LVM's lock of the volume group of @lv (file locking, as LVM does
 * without lvmlockd): while it is held no LVM command changes the group's
 * volumes.  As LVM does, a lock is only good if the file locked is still
 * the one at the path, and the file is unlinked on release, since LVM
 * unlinks a lock file it releases.  EX_OK or an exit code (printed).
 */
static int vg_lock(const struct lv_ref *lv, struct vg_lock *l)
{
	const char *slash = strchr(lv->vg_lv, '/');
	struct stat a, b;

	l->fd = -1;
	l->path = xasprintf("%s/V_%.*s", LVM_LOCK_DIR, (int)(slash - lv->vg_lv), lv->vg_lv);
	if (mkdir(LVM_LOCK_DIR, 0700) && errno != EEXIST)
		goto fail;
	for (;;) {
		l->fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (l->fd < 0)
			goto fail;
		while (flock(l->fd, LOCK_EX) && errno == EINTR)
			;
		if (!stat(l->path, &a) && !fstat(l->fd, &b) && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			return EX_OK;
		close(l->fd);
	}
fail:
	errorf(EX_FAIL, "taking LVM's lock %s: %s", l->path, strerror(errno));
	free(l->path);
	l->path = NULL;
	return EX_FAIL;
}

static void vg_unlock(struct vg_lock *l)
{
	if (!l->path)
		return;
	unlink(l->path);
	close(l->fd);
	free(l->path);
	l->path = NULL;
}

/* ---- looking a volume up ------------------------------------------------- */

/*
 * Look @arg (VG/LV) up into @lv.  Its names are filled in whenever @arg
 * is well formed, so that a volume that is not active can still be
 * cleaned up after; @quiet_absent: no message when it is not active.
 */
static int lv_find(const char *arg, struct lv_ref *lv, bool quiet_absent)
{
	char err[256];
	const char *s = arg;

	memset(lv, 0, sizeof(*lv));
	if (!strncmp(s, "/dev/", 5))
		s += 5;
	snprintf(lv->vg_lv, sizeof(lv->vg_lv), "%s", s);
	if (lv_dm_name(arg, lv->dm, sizeof(lv->dm), err, sizeof(err)))
		return errorf(EX_USAGE, "%s", err);
	if (strlen(lv->dm) + strlen(ORIG_SUFFIX) > DM_NAME_MAX)
		return errorf(EX_USAGE, "%s: name too long to wrap", arg);
	snprintf(lv->orig, sizeof(lv->orig), "%s%s", lv->dm, ORIG_SUFFIX);
	if (dmx_info(lv->dm, &lv->info))
		return errorf(EX_FAIL, "%s: %s", lv->dm, dmx_why());
	if (!lv->info.exists)
		return quiet_absent ? EX_NOTFOUND :
			errorf(EX_NOTFOUND, "no active logical volume %s (no device-mapper device %s)",
			       lv->vg_lv, lv->dm);
	if (strncmp(lv->info.uuid, "LVM-", 4))
		return errorf(EX_CONFLICT, "%s (device-mapper device %s) is not a logical volume",
			      lv->vg_lv, lv->dm);
	if (lv->info.suspended)
		return errorf(EX_CONFLICT, "%s is suspended", lv->vg_lv);
	return EX_OK;
}

int lv_lookup(const char *arg, struct lv_ref *lv)
{
	return lv_find(arg, lv, false);
}

/* Is @lv wrapped by us now (its table ioband over its copy)? */
static bool lv_is_wrapped(const struct lv_ref *lv)
{
	struct dev_state d;
	bool wrapped;

	if (load_ioband(lv->dm, &d, true))
		return false;
	wrapped = d.wraps != NULL;
	dev_state_free(&d);
	return wrapped;
}

/*
 * Look @arg up under LVM's lock of its volume group, taken into @vl:
 * EX_OK (active) or EX_NOTFOUND (not active) with the lock held; another
 * exit code (printed) without it.
 */
static int lv_find_locked(const char *arg, struct lv_ref *lv, struct vg_lock *vl)
{
	int found = lv_find(arg, lv, true);

	if (found && found != EX_NOTFOUND)
		return found;
	if (vg_lock(lv, vl))
		return EX_FAIL;
	/* again, under the lock: an LVM command may have been under way */
	found = lv_find(arg, lv, true);
	if (found && found != EX_NOTFOUND)
		vg_unlock(vl);
	return found;
}

uint64_t lines_len(const struct dm_target_line *l, size_t n)
{
	uint64_t len = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (l[i].start + l[i].len > len)
			len = l[i].start + l[i].len;
	return len;
}

static void copy_uuid(char *out, size_t len, const char *lv_uuid)
{
	snprintf(out, len, "%s%.116s", ORIG_UUID_PREFIX, lv_uuid);
}

/*
 * Remove @lv's copy if it is stale: ours (its uuid made from @lv_uuid) and
 * open by no one, as it is once the volume's table is no longer ioband
 * over it.  EX_OK when there is no copy any more; an exit code (printed)
 * when a device of its name is there and is not a stale copy.
 */
static int remove_stale_copy(const struct lv_ref *lv, const char *lv_uuid)
{
	struct dmx_info oi;
	char want[129];

	if (dmx_info(lv->orig, &oi))
		return errorf(EX_FAIL, "%s: %s", lv->orig, dmx_why());
	if (!oi.exists)
		return EX_OK;
	copy_uuid(want, sizeof(want), lv_uuid);
	if (strcmp(oi.uuid, want))
		return errorf(EX_CONFLICT, "a device named %s exists already and is not the copy of %s (its uuid is '%s'): if nothing uses it, remove it with 'dmsetup remove %s'",
			      lv->orig, lv->vg_lv, oi.uuid, lv->orig);
	if (oi.open_count)
		return errorf(EX_CONFLICT, "%s's former copy %s is open (%d): close what uses it, then repair with 'ioband-setup wrap --repair %s'",
			      lv->vg_lv, lv->orig, oi.open_count, lv->vg_lv);
	if (dmx_fault("stale-remove") || dmx_remove(lv->orig))
		return errorf(EX_FAIL, "%s: removing the stale copy %s failed: %s", lv->vg_lv,
			      lv->orig, dmx_why());
	note("%s: removed the stale copy %s (LVM had changed the volume since it was wrapped: lvextend, lvreduce, lvchange, vgchange)",
	     lv->vg_lv, lv->orig);
	return EX_OK;
}

/* ---- wrap ---------------------------------------------------------------- */

/*
 * The volume's own table, in @lines, if it can be wrapped: one or more
 * linear or striped targets.  EX_OK or an exit code (printed).
 */
static int wrap_check(const struct lv_ref *lv, struct dm_target_line **lines, size_t *n)
{
	size_t i;

	if (dmx_table(lv->dm, false, lines, n))
		return errorf(EX_FAIL, "%s: %s", lv->vg_lv, dmx_why());
	for (i = 0; i < *n; i++) {
		if (!strcmp((*lines)[i].type, "ioband"))
			return errorf(EX_CONFLICT, "%s is wrapped already (its table is ioband)",
				      lv->vg_lv);
		/*
		 * The copy opens what the volume's table opens, a second time:
		 * harmless for plain mappings, not for targets that own their
		 * data (thin, snapshot, cache, raid...).
		 */
		if (strcmp((*lines)[i].type, "linear") && strcmp((*lines)[i].type, "striped"))
			return errorf(EX_CONFLICT, "%s's table uses the %s target; only linear and striped volumes can be wrapped",
				      lv->vg_lv, (*lines)[i].type);
	}
	if (!*n)
		return errorf(EX_FAIL, "%s has no table", lv->vg_lv);
	return EX_OK;
}

/*
 * Wrap @lv, whose own table is @lines, with ioband table @t (its device
 * is filled in here), then send carryover @carryover unless negative.
 * @how is the verb of the note.  EX_OK or an exit code (printed).
 */
static int wrap_with(struct lv_ref *lv, const struct dm_target_line *lines, size_t n,
		     struct ioband_table *t, int64_t carryover, const char *how)
{
	struct dm_target_line ib;
	struct dmx_info oinfo;
	char uuid[129], why[1024], *params = NULL;
	int rc;

	rc = remove_stale_copy(lv, lv->info.uuid);
	if (rc)
		return rc;
	copy_uuid(uuid, sizeof(uuid), lv->info.uuid);
	/* The copy: no udev rules, so no one mistakes it for the volume. */
	if (dmx_fault("wrap-create") ||
	    dmx_create(lv->orig, uuid, lines, n, lv->info.read_only,
		       DM_UDEV_DISABLE_SUBSYSTEM_RULES_FLAG | DM_UDEV_DISABLE_DISK_RULES_FLAG |
		       DM_UDEV_DISABLE_OTHER_RULES_FLAG))
		return errorf(EX_FAIL, "wrap %s: making the copy %s of its table failed: %s; nothing changed",
			      lv->vg_lv, lv->orig, dmx_why());
	if (dmx_info(lv->orig, &oinfo) || !oinfo.exists) {
		snprintf(why, sizeof(why), "the copy %s vanished", lv->orig);
		rc = EX_FAIL;
		goto undo_orig;
	}
	snprintf(t->device, sizeof(t->device), "%u:%u", oinfo.major, oinfo.minor);
	params = table_format(t);
	ib = (struct dm_target_line){ 0, lines_len(lines, n), (char *)"ioband", params };
	if (verbose)
		fprintf(stderr, "ioband-setup: %s: 0 %llu ioband %s\n", lv->dm,
			(unsigned long long)ib.len, params);
	rc = swap_table(lv->dm, &ib, 1, lv->info.read_only, "wrap", why, sizeof(why));
	if (rc == EX_HALFDONE) {
		errorf(rc, "wrap %s: %s; the copy %s is left in place", lv->vg_lv, why, lv->orig);
		goto out;
	}
	if (rc)
		goto undo_orig;
	if (carryover >= 0) {
		char msg[32];

		snprintf(msg, sizeof(msg), "carryover %lld", (long long)carryover);
		if (dmx_fault("wrap-carryover") || send_message(lv->dm, msg)) {
			char w2[1024];

			snprintf(why, sizeof(why), "setting the carryover failed: %s", dmx_why());
			if (swap_table(lv->dm, lines, n, lv->info.read_only, "wrap-undo", w2,
				       sizeof(w2))) {
				rc = errorf(EX_HALFDONE, "wrap %s: %s, and putting the volume's own table back failed (%s): %s is left wrapped over %s (ioband-setup unwrap %s undoes it)",
					    lv->vg_lv, why, w2, lv->vg_lv, lv->orig, lv->vg_lv);
				goto out;
			}
			rc = EX_FAIL;
			goto undo_orig;
		}
	}
	note("%s %s: %s now goes through ioband (device group %s, type %s, policy %s, %zu group%s) over %s",
	     how, lv->vg_lv, lv->dm, t->dg, gtype_names[t->type], policy_names[t->policy],
	     t->ngroups, t->ngroups == 1 ? "" : "s", lv->orig);
	rc = record_set(lv->dm, lv->info.uuid, params);
	goto out;
undo_orig:
	if (dmx_remove(lv->orig)) {
		rc = errorf(EX_HALFDONE, "wrap %s: %s; the volume is unchanged but removing the copy %s failed (%s): remove it by hand",
			    lv->vg_lv, why, lv->orig, dmx_why());
		goto out;
	}
	rc = errorf(EX_FAIL, "wrap %s: %s; undone, %s is unchanged", lv->vg_lv, why, lv->vg_lv);
out:
	free(params);
	return rc;
}

int lvm_wrap(struct lv_ref *lv, const struct setup_opts *o)
{
	struct dm_target_line *lines = NULL;
	struct ioband_table t = { 0 };
	struct pg_state paths = { 0 };
	size_t n = 0;
	struct dev_state member = { 0 };
	struct vg_lock vl;
	char dg[DM_NAME_MAX + 1];
	int rc;

	if (vg_lock(lv, &vl))
		return EX_FAIL;
	rc = wrap_check(lv, &lines, &n);
	/*
	 * Everything checked before anything is made: the table over a dummy,
	 * with the settings of the device group when it has a device already.
	 */
	lv_default_dg(lv->vg_lv, lv->dm, dg, sizeof(dg));
	if (!rc)
		rc = dg_settings(o->dg ? o->dg : dg, &member);
	if (!rc)
		rc = build_table(o, "0:0", dg, member.name[0] ? &member.t : NULL, &t, &paths,
				 lv->vg_lv);
	dev_state_free(&member);
	if (!rc)
		rc = wrap_with(lv, lines, n, &t, o->carryover, "wrapped");
	if (!rc)
		rc = state_replace_dev(lv->dm, &paths);
	vg_unlock(&vl);
	pg_free(&paths);
	table_free(&t);
	dmx_lines_free(lines, n);
	return rc;
}

/* ---- unwrap -------------------------------------------------------------- */

int lvm_wrapped(struct lv_ref *lv, struct dev_state *d, struct dm_target_line **ol, size_t *on)
{
	struct dmx_info oinfo;
	char devstr[32];
	int rc;

	*ol = NULL;
	*on = 0;
	rc = load_ioband(lv->dm, d, true);
	if (rc == EX_CONFLICT)
		return errorf(EX_CONFLICT, "%s is not wrapped", lv->vg_lv);
	if (rc)
		return errorf(rc, "%s: cannot read its table", lv->vg_lv);
	if (dmx_info(lv->orig, &oinfo) || !oinfo.exists ||
	    strncmp(oinfo.uuid, ORIG_UUID_PREFIX, strlen(ORIG_UUID_PREFIX))) {
		dev_state_free(d);
		return errorf(EX_CONFLICT, "%s has an ioband table but no copy %s: it was not wrapped by ioband-setup",
			      lv->vg_lv, lv->orig);
	}
	snprintf(devstr, sizeof(devstr), "%u:%u", oinfo.major, oinfo.minor);
	if (strcmp(d->t.device, devstr)) {
		dev_state_free(d);
		return errorf(EX_CONFLICT, "%s's ioband table is over %s, not over its copy %s (%s)",
			      lv->vg_lv, d->t.device, lv->orig, devstr);
	}
	if (dmx_table(lv->orig, false, ol, on) || !*on) {
		dev_state_free(d);
		return errorf(EX_FAIL, "%s: cannot read its table: %s", lv->orig, dmx_why());
	}
	return EX_OK;
}

static int unwrap_live(struct lv_ref *lv)
{
	struct dev_state d;
	struct dm_target_line *ol;
	size_t on;
	char why[1024];
	int rc;

	rc = lvm_wrapped(lv, &d, &ol, &on);
	if (rc)
		return rc;
	rc = swap_table(lv->dm, ol, on, lv->info.read_only, "unwrap", why, sizeof(why));
	if (rc) {
		errorf(rc, "unwrap %s: %s%s", lv->vg_lv, why,
		       rc == EX_FAIL ? "; it is still wrapped" : "");
		goto out;
	}
	if (dmx_fault("unwrap-remove") || dmx_remove(lv->orig)) {
		rc = errorf(EX_HALFDONE, "unwrap %s: the volume is unwrapped, but removing its former copy %s failed (%s): remove it by hand",
			    lv->vg_lv, lv->orig, dmx_why());
		record_set(lv->dm, NULL, NULL);
		goto out;
	}
	note("unwrapped %s", lv->vg_lv);
	rc = record_set(lv->dm, NULL, NULL);
	if (!rc)
		rc = state_replace_dev(lv->dm, &(struct pg_state){ 0 });
out:
	dmx_lines_free(ol, on);
	dev_state_free(&d);
	return rc;
}

/*
 * Unwrap @arg.  A volume LVM has unwrapped already (or deactivated) is
 * only cleaned up: its stale copy removed, its record and paths dropped.
 */
int lvm_unwrap(const char *arg)
{
	struct wrap_recs w;
	struct wrap_rec *r;
	struct lv_ref lv;
	struct vg_lock vl;
	int found, rc;

	found = lv_find_locked(arg, &lv, &vl);
	if (found && found != EX_NOTFOUND)
		return found;
	if (!found && lv_is_wrapped(&lv)) {
		rc = unwrap_live(&lv);
		goto out;
	}
	rc = recs_load(&w);
	if (rc)
		goto out;
	r = recs_find(&w, lv.dm);
	if (!r) {
		rc = found ? errorf(EX_NOTFOUND, "no active logical volume %s, and no wrap of it recorded",
				    lv.vg_lv) :
			errorf(EX_CONFLICT, "%s is not wrapped", lv.vg_lv);
	} else {
		rc = remove_stale_copy(&lv, r->uuid);
		if (!rc)
			rc = record_set(lv.dm, NULL, NULL);
		if (!rc)
			rc = state_replace_dev(lv.dm, &(struct pg_state){ 0 });
		if (!rc)
			note("%s was not wrapped any more (LVM had changed or deactivated it): its wrap is forgotten",
			     lv.vg_lv);
	}
	recs_free(&w);
out:
	vg_unlock(&vl);
	return rc;
}

/* ---- repair -------------------------------------------------------------- */

/*
 * Bring the volume of record @r back to its wrap: with @lv looked up
 * (@found: EX_OK when active, EX_NOTFOUND when not).  @quiet: say nothing
 * when there is nothing to do.  EX_OK or an exit code (printed).
 */
static int repair_one(struct lv_ref *lv, int found, const struct wrap_rec *r, bool quiet)
{
	struct dm_target_line *lines = NULL;
	struct ioband_table t = { 0 };
	struct dev_state member;
	char err[512];
	size_t n = 0;
	int rc;

	if (found == EX_NOTFOUND) {
		struct dmx_info oi;

		/*
		 * Deactivated, the copy must not outlive it; renamed (lvrename)
		 * and still wrapped, the copy is open and stays.
		 */
		if (!dmx_info(lv->orig, &oi) && oi.exists && oi.open_count)
			return EX_OK;
		return remove_stale_copy(lv, r->uuid);
	}
	if (lv_is_wrapped(lv)) {
		if (!quiet)
			note("%s is wrapped: nothing to repair", lv->vg_lv);
		return EX_OK;
	}
	if (strcmp(lv->info.uuid, r->uuid)) {
		/* another volume of that name: its wrap is not this one's */
		note("%s is another volume than the one wrapped (uuid %s, was %s): its wrap is forgotten",
		     lv->vg_lv, lv->info.uuid, r->uuid);
		rc = remove_stale_copy(lv, r->uuid);
		return rc ? rc : record_set(lv->dm, NULL, NULL);
	}
	rc = wrap_check(lv, &lines, &n);
	if (rc == EX_CONFLICT) {
		/* converted (lvconvert): no longer linear or striped */
		note("%s cannot be wrapped again: its wrap is forgotten", lv->vg_lv);
		rc = remove_stale_copy(lv, r->uuid);
		if (!rc)
			rc = record_set(lv->dm, NULL, NULL);
		goto out;
	}
	if (!rc && table_parse(r->params, &t, err, sizeof(err)))
		rc = errorf(EX_FAIL, "%s: its recorded table does not parse (%s): %s", lv->vg_lv,
			    err, r->params);
	if (rc)
		goto out;
	/* settings of the device group changed since on another member */
	memset(&member, 0, sizeof(member));
	rc = dg_settings(t.dg, &member);
	if (rc)
		goto out;
	if (member.name[0]) {
		t.io_throttle = member.t.io_throttle;
		t.io_limit = member.t.io_limit;
		t.token_base = member.t.token_base;
		t.policy = member.t.policy;
		t.bandwidth = member.t.bandwidth;
		memcpy(t.model, member.t.model, sizeof(t.model));
		dev_state_free(&member);
	}
	rc = wrap_with(lv, lines, n, &t, -1, "wrapped again");
out:
	table_free(&t);
	dmx_lines_free(lines, n);
	return rc;
}

int lvm_repair(const char *arg)
{
	struct wrap_recs w;
	struct wrap_rec *r;
	struct lv_ref lv;
	struct vg_lock vl;
	int found, rc;

	found = lv_find_locked(arg, &lv, &vl);
	if (found && found != EX_NOTFOUND)
		return found;
	rc = recs_load(&w);
	if (rc)
		goto out;
	r = recs_find(&w, lv.dm);
	if (r)
		rc = repair_one(&lv, found, r, false);
	else if (!found && lv_is_wrapped(&lv))
		rc = errorf(EX_FAIL, "%s is wrapped but its wrap is not recorded (/run/ioband was cleared): unwrap and wrap it again",
			    lv.vg_lv);
	else
		rc = errorf(EX_NOTFOUND, "no wrap of %s is recorded: nothing to repair (wrap it)",
			    lv.vg_lv);
	recs_free(&w);
out:
	vg_unlock(&vl);
	return rc;
}

int lvm_repair_all(void)
{
	struct wrap_recs w;
	size_t i;
	int rc, worst = EX_OK;

	rc = recs_load(&w);
	if (rc)
		return rc;
	for (i = 0; i < w.n; i++) {
		char *vg_lv = dm_to_vg_lv(w.r[i].dm);
		struct lv_ref lv;
		struct vg_lock vl;
		int found;

		found = lv_find(vg_lv, &lv, true);
		/* wrapped as recorded, the common case: without LVM's lock */
		if (found == EX_USAGE || (!found && lv_is_wrapped(&lv))) {
			free(vg_lv);
			continue;
		}
		found = lv_find_locked(vg_lv, &lv, &vl);
		free(vg_lv);
		if (found && found != EX_NOTFOUND) {
			rc = found;
		} else {
			rc = repair_one(&lv, found, &w.r[i], true);
			vg_unlock(&vl);
		}
		if (rc && !worst)
			worst = rc;
	}
	recs_free(&w);
	return worst;
}

/* ---- the commands ------------------------------------------------ */

static const struct opt wrap_optv[] = {
	SETUP_OPTV, { "repair", 0, false, O_REPAIR }, { NULL, 0, false, 0 }
};

int cmd_wrap(int argc, char **argv)
{
	struct optstate st;
	struct setup_opts o;
	struct lv_ref lv;
	bool help, repair = false;
	int rc, nset;

	opt_begin(&st, argc, argv);
	setup_opts_init(&o);
	rc = parse_setup_opts(&st, wrap_optv, &o, &help, &repair, &nset);
	if (help)
		rc = help_exit();
	else if (!rc && st.npos != 1)
		rc = usage_error("expected one VG/LV");
	else if (!rc && repair && nset)
		rc = usage_error("--repair takes no settings: it wraps the volume again as it was");
	else if (!rc && !(rc = state_lock())) {
		if (repair)
			rc = lvm_repair(st.pos[0]);
		else if (!(rc = lv_lookup(st.pos[0], &lv)))
			rc = lvm_wrap(&lv, &o);
		state_unlock();
	}
	setup_opts_free(&o);
	free(st.pos);
	return rc;
}

int cmd_unwrap(int argc, char **argv)
{
	struct optstate st;
	bool help;
	int rc;

	opt_begin(&st, argc, argv);
	rc = flag_opts(&st, NULL, NULL, &help);
	if (rc || help)
		return flag_opts_exit(&st, rc, help);
	if (st.npos != 1)
		rc = usage_error("expected one VG/LV");
	else if (!(rc = state_lock())) {
		rc = lvm_unwrap(st.pos[0]);
		state_unlock();
	}
	free(st.pos);
	return rc;
}
