/* Sockets of the local kind: socket(AF_UNIX) and socketpair as host sockets behind the
 * guest's descriptors (a local rsync talks to itself over a socketpair; glibc asks nscd
 * through an AF_UNIX socket and falls back to the files when nobody answers). Other
 * families answer EAFNOSUPPORT: the simulated machine has no network. Calls that
 * would block wait in the scheduler (io_must_wait); sends take what fits, as writes
 * to pipes do. Passing descriptors (SCM_RIGHTS) is not supported: EOPNOTSUPP.
 * Layouts: struct msghdr and struct iovec of the x86-64 ABI. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "sim/linux/syscall_internal.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

#define ADDR_MAX 128     /* sizeof(struct sockaddr_storage) */
#define OPT_MAX 256
#define IO_MAX (1u << 20)
#define IOV_MAX_G 1024

static int64_t do_socket(struct sim *s, uint64_t domain, uint64_t type, uint64_t proto)
{
	if (domain != AF_UNIX)
		return -EAFNOSUPPORT;
	int h = socket((int)domain, (int)type, (int)proto);
	return h < 0 ? -errno : fd_install(s, h, 0);
}

static int64_t do_socketpair(struct sim *s, const uint64_t *a)
{
	if (a[0] != AF_UNIX)
		return -EAFNOSUPPORT;
	int h[2];
	if (socketpair((int)a[0], (int)a[1], (int)a[2], h) < 0)
		return -errno;
	int64_t g0 = fd_install(s, h[0], 0);
	int64_t g1 = g0 < 0 ? (close(h[1]), -EMFILE) : fd_install(s, h[1], 0);
	if (g1 < 0) {
		if (g0 >= 0) {
			close(h[0]);
			s->p->fds[g0] = -1;
		}
		return -EMFILE;
	}
	int32_t g[2] = {(int32_t)g0, (int32_t)g1};
	return mem_write(s, a[3], g, sizeof(g)) < 0 ? -EFAULT : 0;
}

/* An address argument (addr, len) read from the guest. */
static int64_t read_addr(struct sim *s, uint64_t addr, uint64_t len, unsigned char *buf)
{
	if (len > ADDR_MAX)
		return -EINVAL;
	return len && mem_read(s, addr, buf, len) < 0 ? -EFAULT : 0;
}

/* An address result: at most *lenp bytes to addr, the real length to lenp. */
static int64_t write_addr(struct sim *s, uint64_t addr, uint64_t lenp, const unsigned char *buf, socklen_t len)
{
	if (!addr || !lenp)
		return 0;
	uint32_t room;
	if (mem_read(s, lenp, &room, 4) < 0)
		return -EFAULT;
	if (mem_write(s, addr, buf, len < room ? len : room) < 0 || mem_write(s, lenp, &len, 4) < 0)
		return -EFAULT;
	return 0;
}

/* send/recv through the host with the guest's buffer (at most IO_MAX bytes a call). */
static int64_t do_sendto(struct sim *s, int h, const uint64_t *a)
{
	unsigned char addr[ADDR_MAX];
	int64_t r = read_addr(s, a[4], a[5], addr);
	if (r < 0)
		return r;
	if (io_must_wait(s, h, POLLOUT))
		return 0;
	size_t n = a[2] > IO_MAX ? IO_MAX : (size_t)a[2];
	char *buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	if (n && mem_read(s, a[1], buf, n) < 0) {
		free(buf);
		return -EFAULT;
	}
	ssize_t w = sendto(h, buf, n, (int)a[3] | MSG_DONTWAIT | MSG_NOSIGNAL, a[4] ? (struct sockaddr *)addr : NULL,
			   (socklen_t)a[5]);
	r = w < 0 ? -errno : w;
	free(buf);
	if (r == -EPIPE && !(a[3] & MSG_NOSIGNAL))
		sys_raise(s, SIGPIPE);
	return r;
}

static int64_t do_recvfrom(struct sim *s, int h, const uint64_t *a)
{
	if (!(a[3] & MSG_DONTWAIT) && io_must_wait(s, h, POLLIN))
		return 0;
	size_t n = a[2] > IO_MAX ? IO_MAX : (size_t)a[2];
	char *buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	unsigned char addr[ADDR_MAX];
	socklen_t alen = sizeof(addr);
	ssize_t got = recvfrom(h, buf, n, (int)a[3] | MSG_DONTWAIT, (struct sockaddr *)addr, &alen);
	int64_t r = got < 0 ? -errno : got;
	if (got > 0 && mem_write(s, a[1], buf, (size_t)got) < 0)
		r = -EFAULT;
	if (r >= 0 && write_addr(s, a[4], a[5], addr, alen) < 0)
		r = -EFAULT;
	free(buf);
	return r;
}

/* sendmsg/recvmsg: the guest's iovec gathered into (or scattered from) one buffer. */
struct guest_msg {
	uint64_t name, namelen, iov, iovlen, control, controllen, flags;
};

static int64_t do_msg(struct sim *s, int h, uint64_t msgp, uint64_t flags, int sending)
{
	uint64_t m[7];
	if (mem_read(s, msgp, m, sizeof(m)) < 0)
		return -EFAULT;
	struct guest_msg g = {m[0], m[1] & 0xffffffffu, m[2], m[3], m[4], m[5], m[6] & 0xffffffffu};
	if (g.iovlen > IOV_MAX_G)
		return -EMSGSIZE;
	if (sending && g.controllen)
		return -EOPNOTSUPP; /* SCM_RIGHTS would carry pmusim's descriptors */
	if (sending ? io_must_wait(s, h, POLLOUT) : (!(flags & MSG_DONTWAIT) && io_must_wait(s, h, POLLIN)))
		return 0;
	uint64_t (*iov)[2] = calloc(g.iovlen ? g.iovlen : 1, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	if (g.iovlen && mem_read(s, g.iov, iov, g.iovlen * 16) < 0) {
		free(iov);
		return -EFAULT;
	}
	size_t total = 0;
	for (uint64_t i = 0; i < g.iovlen && total < IO_MAX; i++)
		total += iov[i][1] > IO_MAX - total ? IO_MAX - total : iov[i][1];
	char *buf = malloc(total ? total : 1);
	unsigned char addr[ADDR_MAX];
	int64_t r = buf ? 0 : -ENOMEM;
	if (sending && !r)
		r = read_addr(s, g.name, g.namelen, addr);
	size_t at = 0;
	for (uint64_t i = 0; sending && !r && i < g.iovlen && at < total; i++) {
		size_t k = iov[i][1] > total - at ? total - at : iov[i][1];
		if (k && mem_read(s, iov[i][0], buf + at, k) < 0)
			r = -EFAULT;
		at += k;
	}
	if (!r) {
		struct iovec one = {buf, total};
		socklen_t alen = sending ? (socklen_t)g.namelen : sizeof(addr);
		struct msghdr hm = {g.name ? addr : NULL, g.name ? alen : 0, &one, 1, NULL, 0, 0};
		ssize_t n = sending ? sendmsg(h, &hm, (int)flags | MSG_DONTWAIT | MSG_NOSIGNAL)
				    : recvmsg(h, &hm, (int)flags | MSG_DONTWAIT);
		r = n < 0 ? -errno : n;
		if (r == -EPIPE && sending && !(flags & MSG_NOSIGNAL))
			sys_raise(s, SIGPIPE);
		for (uint64_t i = 0; !sending && r > 0 && i < g.iovlen && at < (size_t)r; i++) {
			size_t k = iov[i][1] > (size_t)r - at ? (size_t)r - at : iov[i][1];
			if (k && mem_write(s, iov[i][0], buf + at, k) < 0)
				r = -EFAULT;
			at += k;
		}
		if (!sending && r >= 0) { /* no control data comes back; the flags and name do */
			uint32_t fl = (uint32_t)hm.msg_flags, nl = hm.msg_namelen;
			uint64_t no_control = 0;
			if ((g.name && write_addr(s, g.name, msgp + 8, addr, nl) < 0) ||
			    mem_write(s, msgp + 40, &no_control, 8) < 0 || mem_write(s, msgp + 48, &fl, 4) < 0)
				r = -EFAULT;
		}
	}
	free(buf);
	free(iov);
	return r;
}

static int64_t do_sockopt(struct sim *s, int h, const uint64_t *a, int set)
{
	unsigned char v[OPT_MAX];
	if (set) {
		if (a[4] > OPT_MAX)
			return -EINVAL;
		if (a[4] && mem_read(s, a[3], v, a[4]) < 0)
			return -EFAULT;
		return setsockopt(h, (int)a[1], (int)a[2], v, (socklen_t)a[4]) < 0 ? -errno : 0;
	}
	uint32_t room;
	if (mem_read(s, a[4], &room, 4) < 0)
		return -EFAULT;
	socklen_t len = room > OPT_MAX ? OPT_MAX : room;
	if (getsockopt(h, (int)a[1], (int)a[2], v, &len) < 0)
		return -errno;
	return mem_write(s, a[3], v, len) < 0 || mem_write(s, a[4], &len, 4) < 0 ? -EFAULT : 0;
}

int sys_net(struct sim *s, const struct sysargs *x, int64_t *ret)
{
	const uint64_t *a = x->a;
	unsigned char addr[ADDR_MAX];
	socklen_t alen = sizeof(addr);
	int h = -1;
	switch (x->nr) {
	case SYS_socket: *ret = do_socket(s, a[0], a[1], a[2]); return 1;
	case SYS_socketpair: *ret = do_socketpair(s, a); return 1;
	case SYS_connect: case SYS_bind: case SYS_listen: case SYS_accept: case SYS_accept4:
	case SYS_sendto: case SYS_recvfrom: case SYS_sendmsg: case SYS_recvmsg: case SYS_shutdown:
	case SYS_getsockname: case SYS_getpeername: case SYS_setsockopt: case SYS_getsockopt:
		if ((h = fd_host(s, a[0])) < 0)
			return *ret = -EBADF, 1;
		break;
	default:
		return 0;
	}
	int64_t r;
	switch (x->nr) {
	case SYS_connect: case SYS_bind:
		if ((r = read_addr(s, a[1], a[2], addr)) == 0)
			r = (x->nr == SYS_connect ? connect(h, (struct sockaddr *)addr, (socklen_t)a[2])
						  : bind(h, (struct sockaddr *)addr, (socklen_t)a[2])) < 0 ? -errno : 0;
		break;
	case SYS_listen: r = listen(h, (int)a[1]) < 0 ? -errno : 0; break;
	case SYS_accept: case SYS_accept4: {
		if (io_must_wait(s, h, POLLIN)) {
			r = 0;
			break;
		}
		int c = accept4(h, (struct sockaddr *)addr, &alen, x->nr == SYS_accept4 ? (int)a[3] : 0);
		r = c < 0 ? -errno : fd_install(s, c, 0);
		if (r >= 0 && write_addr(s, a[1], a[2], addr, alen) < 0)
			r = -EFAULT;
		break;
	}
	case SYS_sendto: r = do_sendto(s, h, a); break;
	case SYS_recvfrom: r = do_recvfrom(s, h, a); break;
	case SYS_sendmsg: r = do_msg(s, h, a[1], a[2], 1); break;
	case SYS_recvmsg: r = do_msg(s, h, a[1], a[2], 0); break;
	case SYS_shutdown: r = shutdown(h, (int)a[1]) < 0 ? -errno : 0; break;
	case SYS_getsockname: case SYS_getpeername:
		if ((x->nr == SYS_getsockname ? getsockname(h, (struct sockaddr *)addr, &alen)
					      : getpeername(h, (struct sockaddr *)addr, &alen)) < 0)
			r = -errno;
		else
			r = write_addr(s, a[1], a[2], addr, alen);
		break;
	case SYS_setsockopt: r = do_sockopt(s, h, a, 1); break;
	default: r = do_sockopt(s, h, a, 0); break;
	}
	*ret = r;
	return 1;
}
