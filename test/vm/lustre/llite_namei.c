// SPDX-License-Identifier: GPL-2.0
/*
 * Directory and symlink inode operations (Lustre: llite/namei.c,
 * llite/symlink.c). Names live in the dcache, pinned as ramfs pins them;
 * each operation first sends the metadata RPC a Lustre client sends.
 */
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/posix_acl.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "standin.h"

/* Lookup and getattr intents ask for these bits (llite: IT_LOOKUP). */
#define LES_LOOKUP_BITS (MDS_INODELOCK_LOOKUP | MDS_INODELOCK_UPDATE)

/* Make DENTRY a new inode of MODE; the server part is one REINT_CREATE. */
static int les_create(struct inode *dir, struct dentry *dentry, umode_t mode, dev_t rdev,
		      const char *symname)
{
	struct posix_acl *default_acl, *acl;
	struct inode *inode;
	int rc;

	rc = les_md_rpc(dir, MDS_REINT, REINT_CREATE);
	if (rc)
		return rc;
	/* With SB_POSIXACL the VFS leaves the umask to the filesystem. */
	rc = posix_acl_create(dir, &mode, &default_acl, &acl);
	if (rc)
		return rc;
	posix_acl_release(default_acl);
	posix_acl_release(acl);

	inode = les_new_inode(dir->i_sb, dir, mode, rdev);
	if (!inode)
		return -ENOSPC;
	if (symname) {
		ll_i2info(inode)->lli_symlink_name = kstrdup(symname, GFP_KERNEL);
		if (!ll_i2info(inode)->lli_symlink_name) {
			iput(inode);
			return -ENOMEM;
		}
		inode->i_size = strlen(symname);
	}
	if (S_ISDIR(mode))
		inc_nlink(dir);
	les_touch_times(dir, false);
	d_instantiate(dentry, inode);
	/* The dcache is the store: keep the dentry until unlink. */
	dget(dentry);
	return 0;
}

LES_PROBED struct dentry *ll_lookup_nd(struct inode *parent, struct dentry *dentry,
				       unsigned int flags)
{
	int rc;

	if (dentry->d_name.len > NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	rc = les_take_lock(parent, &ll_i2sbi(parent)->ll_md_exp, LDLM_IBITS, LCK_CR,
			   LES_LOOKUP_BITS);
	if (rc)
		return ERR_PTR(rc);
	/* Every existing name is in the dcache, so a miss is a negative. */
	return simple_lookup(parent, dentry, flags);
}

/*
 * open(2) of a name not in the dcache, and every O_CREAT, come here (as in
 * Lustre, which creates files through its open intent): look up, create
 * when asked, then finish_open() calls ll_file_open.
 */
LES_PROBED int ll_atomic_open(struct inode *dir, struct dentry *dentry, struct file *file,
			      unsigned int open_flags, umode_t mode)
{
	struct dentry *res = NULL;
	int rc;

	if (d_in_lookup(dentry)) {
		res = ll_lookup_nd(dir, dentry, 0);
		if (IS_ERR(res))
			return PTR_ERR(res);
		if (res)
			dentry = res;
	}
	if (!(open_flags & O_CREAT) || d_really_is_positive(dentry))
		return finish_no_open(file, res);

	rc = les_create(dir, dentry, (mode & ~S_IFMT) | S_IFREG, 0, NULL);
	if (!rc) {
		file->f_mode |= FMODE_CREATED;
		rc = finish_open(file, dentry, NULL);
	}
	dput(res);
	return rc;
}

LES_PROBED int ll_create_nd(les_idmap_t *mnt_userns, struct inode *dir,
			    struct dentry *dentry, umode_t mode, bool want_excl)
{
	return les_create(dir, dentry, mode, 0, NULL);
}

LES_PROBED int ll_mknod(les_idmap_t *mnt_userns, struct inode *dir, struct dentry *dchild,
			umode_t mode, dev_t rdev)
{
	return les_create(dir, dchild, mode, rdev, NULL);
}

LES_PROBED int ll_mkdir(les_idmap_t *mnt_userns, struct inode *dir, struct dentry *dchild,
			umode_t mode)
{
	return les_create(dir, dchild, mode | S_IFDIR, 0, NULL);
}

LES_PROBED int ll_symlink(les_idmap_t *mnt_userns, struct inode *dir,
			  struct dentry *dchild, const char *oldpath)
{
	return les_create(dir, dchild, S_IFLNK | 0777, 0, oldpath);
}

LES_PROBED int ll_link(struct dentry *old_dentry, struct inode *dir, struct dentry *new_dentry)
{
	int rc;

	rc = les_md_rpc(dir, MDS_REINT, REINT_LINK);
	if (rc)
		return rc;
	return simple_link(old_dentry, dir, new_dentry);
}

LES_PROBED int ll_unlink(struct inode *dir, struct dentry *dchild)
{
	int rc;

	rc = les_md_rpc(dir, MDS_REINT, REINT_UNLINK);
	if (rc)
		return rc;
	return simple_unlink(dir, dchild);
}

/* Lustre removes directories with REINT_UNLINK too. */
LES_PROBED int ll_rmdir(struct inode *dir, struct dentry *dchild)
{
	int rc;

	rc = les_md_rpc(dir, MDS_REINT, REINT_UNLINK);
	if (rc)
		return rc;
	return simple_rmdir(dir, dchild);
}

LES_PROBED int ll_rename(les_idmap_t *mnt_userns, struct inode *src,
			 struct dentry *src_dchild, struct inode *tgt, struct dentry *tgt_dchild,
			 unsigned int flags)
{
	int rc;

	rc = les_md_rpc(src, MDS_REINT, REINT_RENAME);
	if (rc)
		return rc;
	return simple_rename(mnt_userns, src, src_dchild, tgt, tgt_dchild, flags);
}

/* Lustre reads the target with MDS_GETATTR (OBD_MD_LINKNAME). */
LES_PROBED const char *ll_get_link(struct dentry *dentry, struct inode *inode,
				   struct delayed_call *done)
{
	int rc;

	/* RCU walk: an RPC sleeps, so ask for ref-walk. */
	if (!dentry)
		return ERR_PTR(-ECHILD);
	rc = les_md_rpc(inode, MDS_GETATTR, 0);
	if (rc)
		return ERR_PTR(rc);
	return ll_i2info(inode)->lli_symlink_name;
}

const struct inode_operations ll_dir_inode_operations = {
	.mknod = ll_mknod,
	.atomic_open = ll_atomic_open,
	.lookup = ll_lookup_nd,
	.create = ll_create_nd,
	.unlink = ll_unlink,
	.mkdir = ll_mkdir,
	.rmdir = ll_rmdir,
	.symlink = ll_symlink,
	.link = ll_link,
	.rename = ll_rename,
	.setattr = ll_setattr,
	.getattr = ll_getattr,
	.listxattr = ll_listxattr,
	.LES_GET_ACL_OP = ll_get_acl,
};

const struct inode_operations ll_fast_symlink_inode_operations = {
	.setattr = ll_setattr,
	.get_link = ll_get_link,
	.getattr = ll_getattr,
	.listxattr = ll_listxattr,
};

const struct inode_operations ll_special_inode_operations = {
	.setattr = ll_setattr,
	.getattr = ll_getattr,
	.listxattr = ll_listxattr,
	.LES_GET_ACL_OP = ll_get_acl,
};
