// SPDX-License-Identifier: GPL-2.0
/*
 * Extended attributes (Lustre: llite/xattr.c, llite/acl.c): user.* and
 * trusted.* kept in a small list per inode (6.1 does not export libfs's
 * simple_xattr helpers to modules). No ACLs are stored.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/posix_acl.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xattr.h>

#include "standin.h"

struct les_xattr {
	struct list_head list;
	char *name;
	size_t size;
	char value[];
};

static struct les_xattr *les_xattr_find(struct ll_inode_info *lli, const char *name)
{
	struct les_xattr *x;

	list_for_each_entry(x, &lli->lli_xattrs, list) if (!strcmp(x->name, name)) return x;
	return NULL;
}

static void les_xattr_free(struct les_xattr *x)
{
	if (x) {
		kfree(x->name);
		kfree(x);
	}
}

void les_xattrs_free(struct ll_inode_info *lli)
{
	struct les_xattr *x, *next;

	list_for_each_entry_safe(x, next, &lli->lli_xattrs, list) les_xattr_free(x);
	INIT_LIST_HEAD(&lli->lli_xattrs);
}

static int les_xattr_get(struct ll_inode_info *lli, const char *name, void *buffer, size_t size)
{
	struct les_xattr *x;
	int rc;

	spin_lock(&lli->lli_xattr_lock);
	x = les_xattr_find(lli, name);
	if (!x)
		rc = -ENODATA;
	else if (!buffer)
		rc = x->size;
	else if (size < x->size)
		rc = -ERANGE;
	else
		rc = x->size;
	if (x && buffer && rc >= 0)
		memcpy(buffer, x->value, x->size);
	spin_unlock(&lli->lli_xattr_lock);
	return rc;
}

/* VALUE NULL removes NAME. FLAGS: XATTR_CREATE, XATTR_REPLACE. */
static int les_xattr_set(struct ll_inode_info *lli, const char *name, const void *value,
			 size_t size, int flags)
{
	struct les_xattr *new = NULL, *old;
	int rc = 0;

	if (value) {
		new = kmalloc(struct_size(new, value, size), GFP_KERNEL);
		if (!new)
			return -ENOMEM;
		new->name = kstrdup(name, GFP_KERNEL);
		if (!new->name) {
			kfree(new);
			return -ENOMEM;
		}
		new->size = size;
		memcpy(new->value, value, size);
	}
	spin_lock(&lli->lli_xattr_lock);
	old = les_xattr_find(lli, name);
	if (old && (flags & XATTR_CREATE))
		rc = -EEXIST;
	else if (!old && ((flags & XATTR_REPLACE) || !value))
		rc = -ENODATA;
	if (!rc) {
		if (old)
			list_del(&old->list);
		if (new)
			list_add_tail(&new->list, &lli->lli_xattrs);
	}
	spin_unlock(&lli->lli_xattr_lock);
	les_xattr_free(rc ? new : old);
	return rc;
}

/* Names NUL-separated; trusted.* only for CAP_SYS_ADMIN, as the VFS does. */
static ssize_t les_xattr_list(struct ll_inode_info *lli, char *buffer, size_t size)
{
	bool trusted = capable(CAP_SYS_ADMIN);
	struct les_xattr *x;
	ssize_t used = 0;
	size_t len;

	spin_lock(&lli->lli_xattr_lock);
	list_for_each_entry(x, &lli->lli_xattrs, list)
	{
		if (!trusted && !strncmp(x->name, XATTR_TRUSTED_PREFIX, XATTR_TRUSTED_PREFIX_LEN))
			continue;
		len = strlen(x->name) + 1;
		if (buffer) {
			if (used + len > size) {
				used = -ERANGE;
				break;
			}
			memcpy(buffer + used, x->name, len);
		}
		used += len;
	}
	spin_unlock(&lli->lli_xattr_lock);
	return used;
}

LES_PROBED int ll_xattr_get_common(const struct xattr_handler *handler, struct dentry *dentry,
				   struct inode *inode, const char *name, void *buffer, size_t size)
{
	int rc;

	rc = les_md_rpc(inode, MDS_GETXATTR, 0);
	if (rc)
		return rc;
	return les_xattr_get(ll_i2info(inode), xattr_full_name(handler, name), buffer, size);
}

LES_PROBED int ll_xattr_set_common(const struct xattr_handler *handler,
				   les_idmap_t *mnt_userns, struct dentry *dentry,
				   struct inode *inode, const char *name, const void *value,
				   size_t size, int flags)
{
	int rc;

	rc = les_md_rpc(inode, MDS_REINT, REINT_SETXATTR);
	if (rc)
		return rc;
	rc = les_xattr_set(ll_i2info(inode), xattr_full_name(handler, name), value, size, flags);
	if (!rc)
		les_touch_ctime(inode);
	return rc;
}

/* Lustre lists with MDS_GETXATTR too (OBD_MD_FLXATTRLS). */
LES_PROBED ssize_t ll_listxattr(struct dentry *dentry, char *buffer, size_t size)
{
	struct inode *inode = d_inode(dentry);
	int rc;

	rc = les_md_rpc(inode, MDS_GETXATTR, 0);
	if (rc)
		return rc;
	return les_xattr_list(ll_i2info(inode), buffer, size);
}

/* 6.1's get_acl (renamed get_inode_acl in 6.2). NULL: no ACL, mode bits. */
LES_PROBED struct posix_acl *ll_get_acl(struct inode *inode, int type, bool rcu)
{
	return NULL;
}

static const struct xattr_handler ll_user_xattr_handler = {
	.prefix = XATTR_USER_PREFIX,
	.get = ll_xattr_get_common,
	.set = ll_xattr_set_common,
};

static const struct xattr_handler ll_trusted_xattr_handler = {
	.prefix = XATTR_TRUSTED_PREFIX,
	.get = ll_xattr_get_common,
	.set = ll_xattr_set_common,
};

const struct xattr_handler *ll_xattr_handlers[] = {
	&ll_user_xattr_handler,
	&ll_trusted_xattr_handler,
	NULL,
};
