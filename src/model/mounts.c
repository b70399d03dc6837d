// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The mount table. A mountinfo line (proc(5)) reads
 *
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
 *   id par dev root mnt-point mnt-opts [optional...] - fstype source super-opts
 *
 * with zero or more optional fields ended by a lone "-", and space, tab,
 * newline and backslash written as octal escapes (\040 \011 \012 \134).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "model/mounts.h"

#define KDEV_MINOR_BITS 20
#define KDEV_MINOR_MASK ((1U << KDEV_MINOR_BITS) - 1)
#define KDEV_MAJOR_MAX	0xfffU

static const char *const family_names[LES_FS_FAMILY_MAX] = {
	[LES_FS_OTHER] = "other",
	[LES_FS_LUSTRE] = "lustre",
	[LES_FS_NFS] = "nfs",
	[LES_FS_FUSE] = "fuse",
};

uint32_t les_kdev_from_user(dev_t st_dev)
{
	return (uint32_t)major(st_dev) << KDEV_MINOR_BITS | (minor(st_dev) & KDEV_MINOR_MASK);
}

dev_t les_kdev_to_user(uint32_t kdev)
{
	return makedev(kdev >> KDEV_MINOR_BITS, kdev & KDEV_MINOR_MASK);
}

enum les_fs_family les_fs_family_of(const char *fs_type)
{
	if (!fs_type)
		return LES_FS_OTHER;
	if (!strcmp(fs_type, "lustre"))
		return LES_FS_LUSTRE;
	if (!strcmp(fs_type, "nfs") || !strcmp(fs_type, "nfs4"))
		return LES_FS_NFS;
	/* "fuse.<subtype>" names the daemon; "fuseblk" is a local block fs. */
	if (!strcmp(fs_type, "fuse") || !strncmp(fs_type, "fuse.", 5))
		return LES_FS_FUSE;
	return LES_FS_OTHER;
}

const char *les_fs_family_name(enum les_fs_family family)
{
	return (unsigned)family < LES_FS_FAMILY_MAX ? family_names[family] : "other";
}

/* --- parsing ---------------------------------------------------------- */

/* Next space-separated field, NUL-terminated in place; NULL past the end. */
static char *next_field(char **cursor)
{
	char *start = *cursor;
	char *space;

	if (!start)
		return NULL;
	space = strchr(start, ' ');
	if (space) {
		*space = '\0';
		*cursor = space + 1;
	} else {
		*cursor = NULL;
	}
	return start;
}

/* Decimal digits only, no sign, within unsigned int. */
static int parse_uint(const char *s, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT_MAX)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

static int parse_dev(char *s, struct les_mount *m)
{
	char *colon = s ? strchr(s, ':') : NULL;

	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (parse_uint(s, &m->major) || parse_uint(colon + 1, &m->minor))
		return -EINVAL;
	if (m->major > KDEV_MAJOR_MAX || m->minor > KDEV_MINOR_MASK)
		return -EINVAL;
	m->kdev = m->major << KDEV_MINOR_BITS | m->minor;
	return 0;
}

static int is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* Undo the kernel's \ooo escapes in place; anything else is kept as is. */
static void unescape_octal(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && is_octal(s[1]) && is_octal(s[2]) && is_octal(s[3])) {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/*
 * Lustre's source is "nid[:nid...]:/fsname[/subdir]": the fsname follows
 * the last ":/" and ends at the next '/'. NULL if the source has no ":/".
 */
static char *lustre_fsname(const char *source)
{
	const char *p, *name = NULL;

	for (p = strstr(source, ":/"); p; p = strstr(p + 1, ":/"))
		name = p + 2;
	if (!name || !*name || *name == '/')
		return NULL;
	return strndup(name, strcspn(name, "/"));
}

static int fill_names(struct les_mount *m)
{
	m->family = les_fs_family_of(m->fs_type);
	if (m->family == LES_FS_LUSTRE)
		m->fs_name = lustre_fsname(m->source);
	if (!m->fs_name)
		m->fs_name = strdup(m->source);
	return m->fs_name ? 0 : -ENOMEM;
}

static int dup_field(char **dst, char *field, bool unescape)
{
	if (unescape)
		unescape_octal(field);
	*dst = strdup(field);
	return *dst ? 0 : -ENOMEM;
}

/* Fields of the line held in buf (modified in place). */
static int parse_fields(char *buf, struct les_mount *m)
{
	char *cursor = buf;
	char *root, *mount_point, *fs_type, *source, *super_opts, *f;
	char no_opts[] = "";

	if (parse_uint(next_field(&cursor), &m->mount_id) ||
	    parse_uint(next_field(&cursor), &m->parent_id) || parse_dev(next_field(&cursor), m))
		return -EINVAL;
	root = next_field(&cursor);
	mount_point = next_field(&cursor);
	if (!next_field(&cursor)) /* per-mount options: not kept */
		return -EINVAL;
	do { /* optional fields up to the lone "-" */
		f = next_field(&cursor);
		if (!f)
			return -EINVAL;
	} while (strcmp(f, "-"));
	fs_type = next_field(&cursor);
	source = next_field(&cursor);
	super_opts = next_field(&cursor);
	if (!super_opts)
		super_opts = no_opts;
	if (!root || !*root || !mount_point || mount_point[0] != '/' || !fs_type || !*fs_type ||
	    !source)
		return -EINVAL;
	if (dup_field(&m->root, root, true) || dup_field(&m->mount_point, mount_point, true) ||
	    dup_field(&m->fs_type, fs_type, false) || dup_field(&m->source, source, true) ||
	    dup_field(&m->super_opts, super_opts, false))
		return -ENOMEM;
	return fill_names(m);
}

int les_mount_parse_line(const char *line, struct les_mount *out)
{
	char *buf;
	size_t len;
	int err;

	memset(out, 0, sizeof(*out));
	if (!line)
		return -EINVAL;
	buf = strdup(line);
	if (!buf)
		return -ENOMEM;
	len = strlen(buf);
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	err = parse_fields(buf, out);
	free(buf);
	if (err)
		les_mount_free(out);
	return err;
}

void les_mount_free(struct les_mount *m)
{
	if (!m)
		return;
	free(m->root);
	free(m->mount_point);
	free(m->fs_type);
	free(m->source);
	free(m->super_opts);
	free(m->fs_name);
	memset(m, 0, sizeof(*m));
}

/* --- the table -------------------------------------------------------- */

static int table_append(struct les_mount_table *t, struct les_mount *m)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		struct les_mount *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = *m;
	return 0;
}

int les_mount_table_load(struct les_mount_table *t, const char *path)
{
	struct les_mount m;
	char *line = NULL;
	size_t line_cap = 0;
	FILE *f;
	int err = 0;

	memset(t, 0, sizeof(*t));
	f = fopen(path ? path : "/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (getline(&line, &line_cap, f) >= 0) {
		err = les_mount_parse_line(line, &m);
		if (err == -EINVAL) {
			err = 0; /* not a mount we can describe: skip it */
			continue;
		}
		if (!err)
			err = table_append(t, &m);
		if (err) {
			les_mount_free(&m);
			break;
		}
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	if (err)
		les_mount_table_free(t);
	return err;
}

void les_mount_table_free(struct les_mount_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		les_mount_free(&t->v[i]);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

const struct les_mount *les_mount_table_find_dev(const struct les_mount_table *t, uint32_t kdev)
{
	const struct les_mount *any = NULL, *whole = NULL;

	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].kdev != kdev)
			continue;
		any = &t->v[i];
		if (!strcmp(t->v[i].root, "/"))
			whole = &t->v[i];
	}
	return whole ? whole : any;
}

static bool only_slashes(const char *s)
{
	return s[strspn(s, "/")] == '\0';
}

/*
 * Whether path lies at or under mount point mp, component-wise. Returns
 * the length of mp that matched (the prefix's weight), 0 if not under.
 */
static size_t mount_prefix_len(const char *path, const char *mp, bool *exact)
{
	size_t len = strlen(mp);

	while (len > 1 && mp[len - 1] == '/') /* the kernel prints none, but be safe */
		len--;
	if (len == 1 && mp[0] == '/') {
		if (path[0] != '/')
			return 0;
		*exact = only_slashes(path);
		return 1;
	}
	if (strncmp(path, mp, len) || (path[len] != '\0' && path[len] != '/'))
		return 0;
	*exact = only_slashes(path + len);
	return len;
}

const struct les_mount *les_mount_table_find_path(const struct les_mount_table *t,
						  const char *abs_path, bool *exact)
{
	const struct les_mount *best = NULL;
	size_t best_len = 0;
	bool best_exact = false;

	for (size_t i = 0; i < t->n; i++) {
		bool is_exact = false;
		size_t len = mount_prefix_len(abs_path, t->v[i].mount_point, &is_exact);

		/* ">=": of mounts on the same point, the later one is on top. */
		if (len && len >= best_len) {
			best = &t->v[i];
			best_len = len;
			best_exact = is_exact;
		}
	}
	if (exact)
		*exact = best && best_exact;
	return best;
}

const struct les_mount *les_mount_table_resolve(const struct les_mount_table *t,
						const char *user_path, bool *exact)
{
	char *real = realpath(user_path, NULL);
	const struct les_mount *m;

	if (exact)
		*exact = false;
	if (!real)
		return NULL;
	m = les_mount_table_find_path(t, real, exact);
	free(real);
	if (!m)
		errno = ENOENT;
	return m;
}

static bool hidden_by_later_mount(const struct les_mount_table *t, size_t i)
{
	for (size_t j = i + 1; j < t->n; j++)
		if (!strcmp(t->v[j].mount_point, t->v[i].mount_point))
			return true;
	return false;
}

int les_mount_table_network(const struct les_mount_table *t, const struct les_mount **out,
			    size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n && n < max; i++) {
		if (t->v[i].family == LES_FS_OTHER || hidden_by_later_mount(t, i))
			continue;
		out[n++] = &t->v[i];
	}
	return (int)n;
}
