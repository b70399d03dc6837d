// SPDX-License-Identifier: GPL-2.0
/*
 * File and directory file operations, getattr and setattr (Lustre:
 * llite/file.c, llite/dir.c, llite/llite_lib.c). Data lives in one buffer
 * per file; reads and writes take an extent lock on the data import the
 * first time (LDLM_ENQUEUE) and send one OST_READ/OST_WRITE per call that
 * moves bytes. With async_writes, the OST_WRITE goes to ptlrpcd, as
 * Lustre's writeback does, and fsync waits for it.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "standin.h"

static int les_reserve(struct ll_inode_info *lli, size_t size)
{
	size_t cap;
	char *data;

	if (size <= lli->lli_data_cap)
		return 0;
	cap = max_t(size_t, roundup_pow_of_two(size), PAGE_SIZE);
	data = les_kvrealloc(lli->lli_data, lli->lli_data_cap, cap, GFP_KERNEL);
	if (!data)
		return -ENOMEM;
	memset(data + lli->lli_data_cap, 0, cap - lli->lli_data_cap);
	lli->lli_data = data;
	lli->lli_data_cap = cap;
	return 0;
}

/* Truncate or extend to SIZE (bytes past the old end read as zeroes). */
static int les_set_size(struct inode *inode, loff_t size)
{
	struct ll_inode_info *lli = ll_i2info(inode);
	loff_t old = i_size_read(inode);
	int rc;

	rc = les_reserve(lli, size);
	if (rc)
		return rc;
	if (size < old)
		memset(lli->lli_data + size, 0, old - size);
	i_size_write(inode, size);
	inode->i_blocks = DIV_ROUND_UP(size, 512);
	return 0;
}

/* The extent lock for I/O, enqueued once per inode and mode (LRU-like). */
static int les_io_lock(struct inode *inode, enum ldlm_mode mode)
{
	struct ll_inode_info *lli = ll_i2info(inode);
	enum ldlm_mode held = READ_ONCE(lli->lli_extent_mode);
	int rc;

	if (held == LCK_PW || held == mode)
		return 0;
	rc = les_take_lock(inode, &ll_i2sbi(inode)->ll_dt_exp, LDLM_EXTENT, mode, 0);
	if (!rc)
		WRITE_ONCE(lli->lli_extent_mode, mode);
	return rc;
}

LES_PROBED ssize_t ll_file_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct ll_inode_info *lli = ll_i2info(inode);
	loff_t pos = iocb->ki_pos;
	size_t count = iov_iter_count(to);
	size_t done = 0;
	loff_t size;
	int rc;

	if (!count)
		return 0;
	rc = les_io_lock(inode, LCK_PR);
	if (rc)
		return rc;
	inode_lock_shared(inode);
	size = i_size_read(inode);
	if (pos < size) {
		done = min_t(size_t, count, size - pos);
		done = copy_to_iter(lli->lli_data + pos, done, to);
	}
	inode_unlock_shared(inode);
	if (!done)
		return 0;
	/* The bytes "came" in one bulk read. */
	rc = les_dt_bulk_rpc(inode, OST_READ, (int)done);
	if (rc)
		return rc;
	iocb->ki_pos = pos + done;
	file_accessed(iocb->ki_filp);
	return done;
}

/* Runs in ptlrpcd when an async OST_WRITE completes. */
static int les_write_interpret(const struct lu_env *env, struct ptlrpc_request *req, void *arg,
			       int rc)
{
	struct inode *inode = arg;
	struct ll_inode_info *lli = ll_i2info(inode);
	struct ll_sb_info *sbi = ll_i2sbi(inode);

	if (atomic_dec_and_test(&lli->lli_async_writes))
		wake_up_all(&lli->lli_async_waitq);
	iput(inode);
	if (atomic_dec_and_test(&sbi->ll_async_inflight))
		wake_up_all(&sbi->ll_async_waitq);
	return rc;
}

static int les_send_write(struct inode *inode, int bytes)
{
	struct ll_sb_info *sbi = ll_i2sbi(inode);
	struct ll_inode_info *lli = ll_i2info(inode);
	struct ptlrpc_request *req;

	if (!les_async_writes())
		return les_dt_bulk_rpc(inode, OST_WRITE, bytes);
	req = les_request_new(&sbi->ll_dt_imp, LUSTRE_OST_VERSION, OST_WRITE, 0);
	if (IS_ERR(req))
		return PTR_ERR(req);
	req->rq_bulk_nob = bytes;
	ihold(inode);
	atomic_inc(&lli->lli_async_writes);
	atomic_inc(&sbi->ll_async_inflight);
	req->rq_interpret_reply = les_write_interpret;
	req->rq_cb_data = inode;
	ptlrpcd_add_req(req);
	return 0;
}

LES_PROBED ssize_t ll_file_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct ll_inode_info *lli = ll_i2info(inode);
	ssize_t count;
	size_t done;
	loff_t pos;
	int rc;

	rc = les_io_lock(inode, LCK_PW);
	if (rc)
		return rc;
	inode_lock(inode);
	count = generic_write_checks(iocb, from);
	if (count <= 0) {
		inode_unlock(inode);
		return count;
	}
	pos = iocb->ki_pos;
	rc = les_reserve(lli, pos + count);
	if (rc) {
		inode_unlock(inode);
		return rc;
	}
	done = copy_from_iter(lli->lli_data + pos, count, from);
	if (pos + done > i_size_read(inode)) {
		i_size_write(inode, pos + done);
		inode->i_blocks = DIV_ROUND_UP(pos + done, 512);
	}
	les_touch_times(inode, false);
	inode_unlock(inode);
	if (!done)
		return -EFAULT;
	rc = les_send_write(inode, (int)done);
	if (rc)
		return rc;
	iocb->ki_pos = pos + done;
	return done;
}

LES_PROBED loff_t ll_file_seek(struct file *file, loff_t offset, int origin)
{
	return generic_file_llseek(file, offset, origin);
}

/* Dirty data first (the async writes), then the OST's own sync. */
LES_PROBED int ll_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct inode *inode = file_inode(file);
	struct ll_inode_info *lli = ll_i2info(inode);

	wait_event(lli->lli_async_waitq, !atomic_read(&lli->lli_async_writes));
	if (S_ISDIR(inode->i_mode))
		return les_md_rpc(inode, MDS_SYNC, 0);
	return les_dt_rpc(inode, OST_SYNC);
}

/* Lustre's open is an intent-only LDLM_ENQUEUE on the metadata target. */
LES_PROBED int ll_file_open(struct inode *inode, struct file *file)
{
	return les_take_lock(inode, &ll_i2sbi(inode)->ll_md_exp, LDLM_IBITS, LCK_CR, 0);
}

LES_PROBED int ll_file_release(struct inode *inode, struct file *file)
{
	/* close(2) cannot fail on a reply; the RPC's errors stay here. */
	les_md_rpc(inode, MDS_CLOSE, 0);
	return 0;
}

LES_PROBED int ll_dir_open(struct inode *inode, struct file *file)
{
	int rc;

	rc = ll_file_open(inode, file);
	if (rc)
		return rc;
	return dcache_dir_open(inode, file);
}

LES_PROBED int ll_dir_release(struct inode *inode, struct file *file)
{
	dcache_dir_close(inode, file);
	return ll_file_release(inode, file);
}

static loff_t ll_dir_seek(struct file *file, loff_t offset, int origin)
{
	return dcache_dir_lseek(file, offset, origin);
}

/* One MDS_READPAGE for each listing from the start. */
LES_PROBED int ll_iterate(struct file *filp, struct dir_context *ctx)
{
	int rc;

	if (ctx->pos == 0) {
		rc = les_md_rpc(file_inode(filp), MDS_READPAGE, 0);
		if (rc)
			return rc;
	}
	return dcache_readdir(filp, ctx);
}

LES_PROBED int ll_getattr(les_idmap_t *mnt_userns, const struct path *path,
			  struct kstat *stat, u32 request_mask, unsigned int flags)
{
	struct inode *inode = d_inode(path->dentry);
	int rc;

	rc = les_md_rpc(inode, MDS_GETATTR, 0);
	if (rc)
		return rc;
	les_fillattr(mnt_userns, request_mask, inode, stat);
	return 0;
}

LES_PROBED int ll_setattr(les_idmap_t *mnt_userns, struct dentry *de, struct iattr *attr)
{
	struct inode *inode = d_inode(de);
	int rc;

	rc = setattr_prepare(mnt_userns, de, attr);
	if (rc)
		return rc;
	rc = les_md_rpc(inode, MDS_REINT, REINT_SETATTR);
	if (rc)
		return rc;
	if ((attr->ia_valid & ATTR_SIZE) && S_ISREG(inode->i_mode)) {
		rc = les_dt_rpc(inode, OST_PUNCH);
		if (rc)
			return rc;
		rc = les_set_size(inode, attr->ia_size);
		if (rc)
			return rc;
	}
	setattr_copy(mnt_userns, inode, attr);
	return 0;
}

const struct file_operations ll_file_operations = {
	.read_iter = ll_file_read_iter,
	.write_iter = ll_file_write_iter,
	.open = ll_file_open,
	.release = ll_file_release,
	.llseek = ll_file_seek,
	.fsync = ll_fsync,
};

const struct file_operations ll_dir_operations = {
	.llseek = ll_dir_seek,
	.open = ll_dir_open,
	.release = ll_dir_release,
	.read = generic_read_dir,
	.iterate_shared = ll_iterate,
	.fsync = ll_fsync,
};

const struct inode_operations ll_file_inode_operations = {
	.setattr = ll_setattr,
	.getattr = ll_getattr,
	.listxattr = ll_listxattr,
	.LES_GET_ACL_OP = ll_get_acl,
};
