// SPDX-License-Identifier: GPL-2.0
/*
 * The stand-in's filesystem type "lustre": mount, superblock, inodes,
 * statfs and xattr handlers. The store is the dcache and inode cache
 * themselves (as in ramfs) plus a buffer per regular file; every operation
 * first performs the RPCs a Lustre client would.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/statfs.h>
#include <linux/string.h>

#include "standin.h"

/* Default fsname when the mount source has no ":/fsname". */
#define LES_DEFAULT_FSNAME "standin"

static struct kmem_cache *ll_inode_cachep;

int les_md_rpc(struct inode *inode, int opcode, __u32 reint_op)
{
	struct ptlrpc_request *req;
	int rc;

	req = les_request_new(&ll_i2sbi(inode)->ll_md_imp, LUSTRE_MDS_VERSION, opcode, reint_op);
	if (IS_ERR(req))
		return PTR_ERR(req);
	rc = ptlrpc_queue_wait(req);
	ptlrpc_req_put(req);
	return rc;
}

int les_dt_bulk_rpc(struct inode *inode, int opcode, int bytes)
{
	struct ptlrpc_request *req;
	int rc;

	req = les_request_new(&ll_i2sbi(inode)->ll_dt_imp, LUSTRE_OST_VERSION, opcode, 0);
	if (IS_ERR(req))
		return PTR_ERR(req);
	req->rq_bulk_nob = bytes;
	rc = ptlrpc_queue_wait(req);
	ptlrpc_req_put(req);
	return rc;
}

int les_dt_rpc(struct inode *inode, int opcode)
{
	return les_dt_bulk_rpc(inode, opcode, 0);
}

static struct inode *ll_alloc_inode(struct super_block *sb)
{
	struct ll_inode_info *lli;

	lli = alloc_inode_sb(sb, ll_inode_cachep, GFP_KERNEL);
	if (!lli)
		return NULL;
	lli->lli_data = NULL;
	lli->lli_data_cap = 0;
	lli->lli_symlink_name = NULL;
	lli->lli_extent_mode = LCK_MINMODE;
	INIT_LIST_HEAD(&lli->lli_xattrs);
	spin_lock_init(&lli->lli_xattr_lock);
	atomic_set(&lli->lli_async_writes, 0);
	init_waitqueue_head(&lli->lli_async_waitq);
	return &lli->lli_vfs_inode;
}

static void ll_free_inode(struct inode *inode)
{
	kmem_cache_free(ll_inode_cachep, ll_i2info(inode));
}

/* Last iput: async writes hold a reference, so none is in flight. */
static void ll_delete_inode(struct inode *inode)
{
	struct ll_inode_info *lli = ll_i2info(inode);

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	kvfree(lli->lli_data);
	lli->lli_data = NULL;
	kfree(lli->lli_symlink_name);
	lli->lli_symlink_name = NULL;
	les_xattrs_free(lli);
}

LES_PROBED int ll_statfs(struct dentry *de, struct kstatfs *sfs)
{
	struct inode *inode = d_inode(de);
	int rc;

	rc = les_md_rpc(inode, MDS_STATFS, 0);
	if (rc)
		return rc;
	rc = les_dt_rpc(inode, OST_STATFS);
	if (rc)
		return rc;
	sfs->f_type = LL_SUPER_MAGIC;
	sfs->f_bsize = PAGE_SIZE;
	sfs->f_blocks = totalram_pages() / 2;
	sfs->f_bfree = sfs->f_blocks;
	sfs->f_bavail = sfs->f_blocks;
	sfs->f_files = 1 << 20;
	sfs->f_ffree = sfs->f_files;
	sfs->f_namelen = NAME_MAX;
	return 0;
}

static const struct super_operations lustre_super_operations = {
	.alloc_inode = ll_alloc_inode,
	.free_inode = ll_free_inode,
	.evict_inode = ll_delete_inode,
	.drop_inode = generic_delete_inode,
	.statfs = ll_statfs,
};

struct inode *les_new_inode(struct super_block *sb, const struct inode *dir, umode_t mode,
			    dev_t rdev)
{
	struct inode *inode = new_inode(sb);

	if (!inode)
		return NULL;
	inode->i_ino = get_next_ino();
	inode_init_owner(LES_NOP_IDMAP, inode, dir, mode);
	les_touch_times(inode, true);
	switch (mode & S_IFMT) {
	case S_IFREG:
		inode->i_op = &ll_file_inode_operations;
		inode->i_fop = &ll_file_operations;
		break;
	case S_IFDIR:
		inode->i_op = &ll_dir_inode_operations;
		inode->i_fop = &ll_dir_operations;
		/* "." */
		inc_nlink(inode);
		break;
	case S_IFLNK:
		inode->i_op = &ll_fast_symlink_inode_operations;
		break;
	default:
		inode->i_op = &ll_special_inode_operations;
		init_special_inode(inode, mode, rdev);
		break;
	}
	return inode;
}

/* ---- Mount ---- */

struct les_mount_data {
	const char *source;
	void *options;
};

/* "10.0.0.1@tcp:/fsname[/subdir]" -> "fsname", as Lustre's mount does. */
static void les_parse_fsname(const char *source, char *fsname, size_t len)
{
	const char *start = source ? strstr(source, ":/") : NULL;
	size_t n;

	if (!start || !start[2]) {
		strscpy(fsname, LES_DEFAULT_FSNAME, len);
		return;
	}
	start += 2;
	n = strcspn(start, "/");
	strscpy(fsname, start, min(n + 1, len));
}

static void les_init_import(struct obd_import *imp, struct obd_export *exp, const char *fsname,
			    const char *target, const char *type, struct super_block *sb)
{
	snprintf(imp->imp_obd_name, sizeof(imp->imp_obd_name), "%s-%s-%s-%px", fsname, target, type,
		 sb);
	imp->imp_state = LUSTRE_IMP_FULL;
	atomic_set(&imp->imp_inflight, 0);
	atomic_set(&imp->imp_conn_cnt, 1);
	exp->exp_imp = imp;
}

static int les_connect(struct super_block *sb)
{
	struct ll_sb_info *sbi = ll_s2sbi(sb);
	struct ptlrpc_request *req;
	int rc;

	req = les_request_new(&sbi->ll_md_imp, LUSTRE_OBD_VERSION, MDS_CONNECT, 0);
	if (IS_ERR(req))
		return PTR_ERR(req);
	rc = ptlrpc_queue_wait(req);
	ptlrpc_req_put(req);
	if (rc)
		return rc;
	req = les_request_new(&sbi->ll_dt_imp, LUSTRE_OBD_VERSION, OST_CONNECT, 0);
	if (IS_ERR(req))
		return PTR_ERR(req);
	rc = ptlrpc_queue_wait(req);
	ptlrpc_req_put(req);
	return rc;
}

static int les_fill_super(struct super_block *sb, const char *source)
{
	struct ll_sb_info *sbi;
	struct inode *root;
	int rc;

	sbi = kzalloc(sizeof(*sbi), GFP_KERNEL);
	if (!sbi)
		return -ENOMEM;
	les_parse_fsname(source, sbi->ll_fsname, sizeof(sbi->ll_fsname));
	les_init_import(&sbi->ll_md_imp, &sbi->ll_md_exp, sbi->ll_fsname, "MDT0000", "mdc", sb);
	les_init_import(&sbi->ll_dt_imp, &sbi->ll_dt_exp, sbi->ll_fsname, "OST0000", "osc", sb);
	atomic_set(&sbi->ll_async_inflight, 0);
	init_waitqueue_head(&sbi->ll_async_waitq);
	sb->s_fs_info = sbi;

	sb->s_maxbytes = 64 << 20;
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_magic = LL_SUPER_MAGIC;
	sb->s_op = &lustre_super_operations;
	sb->s_xattr = ll_xattr_handlers;
	sb->s_time_gran = 1;
	sb->s_flags |= SB_POSIXACL;

	rc = les_connect(sb);
	if (rc)
		return rc;
	root = les_new_inode(sb, NULL, S_IFDIR | 0755, 0);
	if (!root)
		return -ENOMEM;
	sb->s_root = d_make_root(root);
	return sb->s_root ? 0 : -ENOMEM;
}

static int lustre_fill_super(struct super_block *sb, void *data, int silent)
{
	struct les_mount_data *md = data;

	return les_fill_super(sb, md->source);
}

static struct dentry *lustre_mount(struct file_system_type *fs_type, int flags, const char *devname,
				   void *data)
{
	struct les_mount_data md = {.source = devname, .options = data};

	/* Options (flock, user_xattr, ...) are accepted and ignored. */
	return mount_nodev(fs_type, flags, &md, lustre_fill_super);
}

static void lustre_kill_super(struct super_block *sb)
{
	struct ll_sb_info *sbi = ll_s2sbi(sb);

	/* Requests still with ptlrpcd hold inodes of this superblock. */
	if (sbi)
		wait_event(sbi->ll_async_waitq, !atomic_read(&sbi->ll_async_inflight));
	kill_litter_super(sb);
	kfree(sbi);
}

struct file_system_type lustre_fs_type = {
	.owner = THIS_MODULE, .name = "lustre", .mount = lustre_mount, .kill_sb = lustre_kill_super,
	/* Not FS_RENAME_DOES_D_MOVE as Lustre: simple_rename leaves d_move to the VFS. */
};
MODULE_ALIAS_FS("lustre");

static void ll_inode_init_once(void *p)
{
	struct ll_inode_info *lli = p;

	inode_init_once(&lli->lli_vfs_inode);
}

int les_llite_init(void)
{
	int rc;

	ll_inode_cachep =
		kmem_cache_create("les_ll_inode_cache", sizeof(struct ll_inode_info), 0,
				  SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT, ll_inode_init_once);
	if (!ll_inode_cachep)
		return -ENOMEM;
	rc = register_filesystem(&lustre_fs_type);
	if (rc)
		kmem_cache_destroy(ll_inode_cachep);
	return rc;
}

void les_llite_fini(void)
{
	unregister_filesystem(&lustre_fs_type);
	/* Inodes are freed after an RCU grace period. */
	rcu_barrier();
	kmem_cache_destroy(ll_inode_cachep);
}
