// SPDX-License-Identifier: GPL-2.0
/* ioband-setup: the group commands, set, attach and detach. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "names.h"

/* ---- set / attach / detach ----------------------------------------------- */

/*
 * The device, and its GROUP: its id, and for a cgroup given by path the
 * path ("/a/b", malloc'ed, else NULL), *gid being 0 when no cgroup has
 * that path now.  The state's lock is held on success.
 */
static int device_and_group(const char *namearg, const char *spec, struct dev_state *d,
			    int64_t *gid, char **path)
{
	char name[DM_NAME_MAX + 1];
	int rc;

	*path = NULL;
	rc = resolve_name(namearg, name, sizeof(name));
	if (rc)
		return rc;
	rc = state_lock();
	if (rc)
		return rc;
	rc = load_ioband(name, d, false);
	if (rc)
		goto fail;
	if (gtype_cgroup(d->t.type)) {
		*path = group_path(spec);
		if (*path) {
			*gid = cgroup_id_of(*path);
			return EX_OK;
		}
	}
	rc = resolve_group(d->t.type, spec, gid);
	if (!rc)
		return EX_OK;
	dev_state_free(d);
fail:
	state_unlock();
	return rc;
}

/*
 * Record the value of a set or attach of cgroup group @gid (given by
 * @path, or by id; 0 when @path has no cgroup now) in the state: a group
 * given by path gets an entry, one given by the id of a path's cgroup has
 * its entry changed.  @v as from set_value_parse, NULL for an attach with
 * no weight; the limits it gives replace those recorded, the others stay.
 */
static int record_value(const char *dev, const char *path, int64_t gid,
			const struct set_value *v)
{
	struct pg_state s;
	struct pg_entry *e;
	int k, rc;

	rc = state_load(&s);
	if (rc)
		return rc;
	e = path ? pg_add(&s, dev, path) : pg_find_id(&s, dev, gid);
	if (e) {
		if (v && v->has_range) {
			e->min_kbps = v->g.min_kbps;
			e->max_kbps = v->g.max_kbps;
		}
		if (v && v->has_weight)
			e->weight = v->g.weight;
		for (k = 0; v && k < LIM_NR; k++)
			if (v->limits_given & (1U << k))
				e->limit[k] = v->g.limit[k];
		e->id = gid;
		rc = state_save(&s);
	}
	pg_free(&s);
	return rc;
}

#define SET_MSG_LEN	256
/* One message of a set, and the one that puts back what it changed. */
struct set_step {
	char msg[SET_MSG_LEN], undo[SET_MSG_LEN];
};

/*
 * The messages that set @v on group @gid, whose settings are @cur (NULL
 * when it is attached for the set): weight, range, limits, each with its
 * undo.  Returns how many.
 */
static size_t set_steps(int64_t gid, const struct set_value *v, const struct group_conf *cur,
			struct set_step *st)
{
	char lim[LIMITS_TEXT_MAX];
	size_t n = 0;

	if (v->has_weight) {
		snprintf(st[n].msg, SET_MSG_LEN, "weight %lld:%u", (long long)gid, v->g.weight);
		snprintf(st[n++].undo, SET_MSG_LEN, "weight %lld:%u", (long long)gid,
			 cur ? cur->weight : 0);
	}
	if (v->has_range) {
		if (gid == DEFAULT_GROUP)
			snprintf(st[n].msg, SET_MSG_LEN, "range-bw %u:%u", v->g.min_kbps,
				 v->g.max_kbps);
		else
			snprintf(st[n].msg, SET_MSG_LEN, "range-bw %lld:%u:%u", (long long)gid,
				 v->g.min_kbps, v->g.max_kbps);
		if (gid == DEFAULT_GROUP)
			snprintf(st[n++].undo, SET_MSG_LEN, "range-bw %u:%u",
				 cur ? cur->min_kbps : 0, cur ? cur->max_kbps : 0);
		else
			snprintf(st[n++].undo, SET_MSG_LEN, "range-bw %lld:%u:%u", (long long)gid,
				 cur ? cur->min_kbps : 0, cur ? cur->max_kbps : 0);
	}
	if (v->limits_given) {
		limits_format(v->g.limit, v->limits_given, ',', lim, sizeof(lim));
		snprintf(st[n].msg, SET_MSG_LEN, "limit %lld/%s", (long long)gid, lim);
		if (cur)
			limits_format(cur->limit, v->limits_given, ',', lim, sizeof(lim));
		snprintf(st[n++].undo, SET_MSG_LEN, "limit %lld/%s", (long long)gid, lim);
	}
	return n;
}

/* "weight W, limits K=V,..." of what @v sets, into @buf. */
static const char *set_summary(const struct set_value *v, bool range_policy, char *buf,
			       size_t len)
{
	char lim[LIMITS_TEXT_MAX];
	size_t n = 0;

	buf[0] = '\0';
	if (v->has_weight)
		n += snprintf(buf + n, len - n, ", weight %u", v->g.weight);
	if (v->has_range && n < len)
		n += snprintf(buf + n, len - n, ", min %u KB/s, max %u KB/s%s", v->g.min_kbps,
			      v->g.max_kbps,
			      range_policy ? "" : " (ranges act while the policy is range-bw)");
	if (v->limits_given && n < len) {
		limits_format(v->g.limit, v->limits_given, ',', lim, sizeof(lim));
		snprintf(buf + n, len - n, ", limits %s", lim);
	}
	return buf;
}

/*
 * Send the steps in order; when one is refused, undo those sent (or detach
 * the group when @attached_now) and say so.  EX_OK or an exit code.
 */
static int set_send(const char *name, const char *label, int64_t gid, bool attached_now,
		    const struct set_step *st, size_t n)
{
	char why[600], undo[64];
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (!dmx_fault("set") && !send_message(name, st[i].msg))
			continue;
		snprintf(why, sizeof(why), "%s", dmx_why());
		if (attached_now) {
			snprintf(undo, sizeof(undo), "detach %lld", (long long)gid);
			if (send_message(name, undo))
				return errorf(EX_HALFDONE, "%s: the kernel refused '%s': %s; %s was attached for it and detaching it again failed (%s): detach it by hand",
					      name, st[i].msg, why, label, dmx_why());
			return errorf(EX_FAIL, "%s: the kernel refused '%s': %s (%s, attached for it, was detached again)",
				      name, st[i].msg, why, label);
		}
		for (j = i; j-- > 0;)
			if (send_message(name, st[j].undo))
				return errorf(EX_HALFDONE, "%s: the kernel refused '%s': %s; putting back what '%s' changed failed (%s): send '%s' by hand",
					      name, st[i].msg, why, st[j].msg, dmx_why(), st[j].undo);
		return errorf(EX_FAIL, "%s: the kernel refused '%s': %s%s", name, st[i].msg, why,
			      i ? " (what came before it was put back)" : "");
	}
	return EX_OK;
}

static int cmd_set_attach(int argc, char **argv, bool attach)
{
	struct optstate st;
	struct dev_state d;
	struct set_value v = { 0 };
	struct set_step steps[3];
	bool attached_now = false, has_value;
	char msg[64], err[512], sum[LIMITS_TEXT_MAX + 128], *label = NULL, *path;
	int64_t gid;
	bool help;
	int rc;

	opt_begin(&st, argc, argv);
	rc = flag_opts(&st, NULL, NULL, &help);
	if (rc || help)
		return flag_opts_exit(&st, rc, help);
	if (attach ? st.npos < 2 || st.npos > 3 : st.npos != 3) {
		free(st.pos);
		return usage_error(attach ? "expected NAME GROUP [weight=W]" :
					    "expected NAME GROUP and weight=W, min=MIN,max=MAX or limits (riops=500,wbps=20M)");
	}
	has_value = st.npos == 3;
	if (has_value && set_value_parse(st.pos[2], &v, err, sizeof(err))) {
		free(st.pos);
		return usage_error("%s", err);
	}
	if (attach && has_value && (v.has_range || v.limits_given)) {
		free(st.pos);
		return usage_error("attach takes weight=W; set a range or limits with 'set'");
	}
	if (attach && !has_value) {
		v.has_weight = true;
		v.g.weight = DEFAULT_WEIGHT;
	}
	rc = device_and_group(st.pos[0], st.pos[1], &d, &gid, &path);
	if (rc) {
		free(st.pos);
		return rc;
	}
	if (path && !gid) {
		struct pg_state s;

		/* no cgroup has the path now: the watcher attaches it when one does */
		rc = state_load(&s);
		if (!rc && attach && pg_find(&s, d.name, path))
			rc = errorf(EX_CONFLICT, "%s is already configured on %s", path, d.name);
		pg_free(&s);
		if (!rc)
			rc = record_value(d.name, path, 0, &v);
		if (!rc)
			note_absent(d.name, path);
		goto out;
	}
	label = group_label(st.pos[1], gid);
	if (attach && gid == DEFAULT_GROUP) {
		rc = errorf(EX_USAGE, "the default group is always there; set its weight with 'set %s default weight=W'",
			    st.pos[0]);
		goto out;
	}
	if (gid != DEFAULT_GROUP && !table_find(&d.t, gid)) {
		snprintf(msg, sizeof(msg), "attach %lld", (long long)gid);
		if (dmx_fault("attach") || send_message(d.name, msg)) {
			rc = errorf(EX_FAIL, "attaching %s to %s: the kernel refused '%s': %s", label,
				    d.name, msg, dmx_why());
			goto out;
		}
		attached_now = true;
	} else if (attach) {
		rc = errorf(EX_CONFLICT, "%s is already attached to %s", label, d.name);
		goto out;
	}
	if (has_value) {
		rc = set_send(d.name, label, gid, attached_now,
			      steps, set_steps(gid, &v, table_find(&d.t, gid), steps));
		if (rc)
			goto out;
	}
	note("%s: %s%s%s", d.name, label, attached_now ? " attached" : "",
	     set_summary(&v, d.t.policy == POL_RANGE_BW, sum, sizeof(sum)));
	rc = gid == DEFAULT_GROUP || !gtype_cgroup(d.t.type) ? EX_OK :
	     record_value(d.name, path, gid, has_value || attach ? &v : NULL);
out:
	if (d.wraps)
		lvm_record_update(d.name);
	state_unlock();
	free(path);
	free(label);
	dev_state_free(&d);
	free(st.pos);
	return rc;
}

int cmd_set(int argc, char **argv)
{
	return cmd_set_attach(argc, argv, false);
}

int cmd_attach(int argc, char **argv)
{
	return cmd_set_attach(argc, argv, true);
}

/*
 * Detach GROUP: its id, and for a group given by path (or by the id of a
 * path's cgroup) its entry in the state too, with the id it was last
 * attached under if that is another (a cgroup made again).
 */
int cmd_detach(int argc, char **argv)
{
	struct optstate st;
	struct dev_state d;
	struct pg_state s = { 0 };
	struct pg_entry *e = NULL;
	char msg[64], *label = NULL, *path;
	int64_t gid, ids[2];
	size_t n = 0, i;
	bool help;
	int rc;

	opt_begin(&st, argc, argv);
	rc = flag_opts(&st, NULL, NULL, &help);
	if (rc || help)
		return flag_opts_exit(&st, rc, help);
	if (st.npos != 2) {
		free(st.pos);
		return usage_error("expected NAME GROUP");
	}
	rc = device_and_group(st.pos[0], st.pos[1], &d, &gid, &path);
	if (rc) {
		free(st.pos);
		return rc;
	}
	label = path && !gid ? xstrdup(path) : group_label(st.pos[1], gid);
	if (gid == DEFAULT_GROUP) {
		rc = errorf(EX_USAGE, "the default group cannot be detached");
		goto out;
	}
	rc = state_load(&s);
	if (rc)
		goto out;
	e = path ? pg_find(&s, d.name, path) :
	    gtype_cgroup(d.t.type) ? pg_find_id(&s, d.name, gid) : NULL;
	if ((!path || gid) && table_find(&d.t, gid))
		ids[n++] = gid;
	if (e && e->id && e->id != gid && table_find(&d.t, e->id))
		ids[n++] = e->id;
	if (!n && !e) {
		rc = errorf(EX_CONFLICT, "%s is not attached to %s", label, d.name);
		goto out;
	}
	for (i = 0; i < n; i++) {
		snprintf(msg, sizeof(msg), "detach %lld", (long long)ids[i]);
		if (dmx_fault("detach") || send_message(d.name, msg)) {
			rc = errorf(EX_FAIL, "%s: the kernel refused '%s': %s", d.name, msg, dmx_why());
			goto out;
		}
	}
	if (e) {
		pg_drop(&s, e);
		rc = state_save(&s);
	}
	note("%s: %s detached", d.name, label);
out:
	if (d.wraps)
		lvm_record_update(d.name);
	state_unlock();
	pg_free(&s);
	free(path);
	free(label);
	dev_state_free(&d);
	free(st.pos);
	return rc;
}

