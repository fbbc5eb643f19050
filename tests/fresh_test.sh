#!/usr/bin/env bash
# make fresh-test: the README's two commands as a newcomer runs them. Builds a fresh
# Debian 12 root with debootstrap (minbase, from the mirror this machine's apt uses, plus
# only git and make), clones this repository and ../shared into it, and runs `make demo`
# then `make test` there as root with standard input closed, in a mount namespace of its
# own: a private /dev (the device nodes a Debian system has), /tmp, /proc and /sys. After
# the tests, the root's /dev/null must still be a character device and its /tmp must
# hold nothing the tests left. Needs root, debootstrap and unshare.
#
# FRESH_TIMEOUT (seconds, default 3000) bounds the whole run; FRESH_KEEP=1 keeps the root.
set -euo pipefail
top=$(git rev-parse --show-toplevel)
shared=$(cd "$top/../shared" && pwd)
timeout=${FRESH_TIMEOUT:-3000}

[ "$(id -u)" = 0 ] || { echo "fresh-test: needs root (debootstrap, mount namespaces)"; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-test: no debootstrap (make deps installs it)"; exit 2; }

# The first Debian archive this machine's apt reads (deb822 .sources or one-line .list).
mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
	awk '/^URIs:/ {u = $2} /^Suites:/ && u && $0 ~ /bookworm( |$)/ {print u; exit}')
[ -n "$mirror" ] || mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
	awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}')
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

root=$(mktemp -d /var/tmp/pmusim-fresh.XXXXXX)
chmod 755 "$root" # it is /: every user of the root (apt's _apt) walks through it
cleanup() {
	# the namespace's mounts went with it; nothing of the root is mounted here
	[ "${FRESH_KEEP:-0}" = 1 ] && { echo "fresh-test: root kept in $root"; return; }
	rm -rf --one-file-system "$root"
}
trap cleanup EXIT

echo "fresh-test: debootstrap bookworm from $mirror into $root"
start=$SECONDS
debootstrap --variant=minbase --include=git,make bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
	{ tail -n 20 "$root.log"; rm -f "$root.log"; echo "fresh-test: debootstrap failed"; exit 1; }
rm -f "$root.log"
echo "fresh-test: root made in $((SECONDS - start)) s"

# apt in the root reaches the archive as this machine's does: the same sources and
# settings (a mirror may need e.g. Check-Valid-Until off), and name resolution
rm -f "$root/etc/apt/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && cp "$f" "$root$f"
done
for f in /etc/apt/apt.conf.d/*; do
	[ -e "$root$f" ] || cp "$f" "$root$f"
done
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# and HTTPS (the npm registry, make e2e's speedscope) with this machine's trust: its
# certificate authorities, those it added (a proxy's) among them, for node's clients
[ -f /etc/ssl/certs/ca-certificates.crt ] && cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/host-ca.crt"

git clone -q "$top" "$root/root/pmusim"
mkdir "$root/root/shared"
cp -RL "$shared/." "$root/root/shared/" # a link to shared/ becomes its contents

# What runs inside the namespace: the private mounts, then the two commands in the root.
cat >"$root/fresh-inner.sh" <<'INNER'
set -eu
r=$1
mount --make-rprivate /
mount -t tmpfs -o mode=755,size=64m dev "$r/dev"
for n in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do
	set -- $n
	mknod -m 666 "$r/dev/$1" c "$2" "$3"
done
ln -s /proc/self/fd "$r/dev/fd"
ln -s /proc/self/fd/0 "$r/dev/stdin"
ln -s /proc/self/fd/1 "$r/dev/stdout"
ln -s /proc/self/fd/2 "$r/dev/stderr"
mkdir "$r/dev/pts" "$r/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$r/dev/pts"
ln -s pts/ptmx "$r/dev/ptmx"
mount -t tmpfs -o mode=1777 shm "$r/dev/shm"
mount -t tmpfs -o mode=1777,size=8g tmp "$r/tmp"
mount -t proc proc "$r/proc"
mount -t sysfs -o ro sysfs "$r/sys"
exec chroot "$r" /usr/bin/env -i HOME=/root TERM=dumb \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c '
		set -u
		[ -f /etc/host-ca.crt ] && export NODE_EXTRA_CA_CERTS=/etc/host-ca.crt
		cd /root/pmusim
		echo "fresh-test: make demo"
		make demo </dev/null || { echo "fresh-test: make demo failed"; exit 1; }
		ls -A /tmp >/tmp/.before
		echo "fresh-test: make test"
		make test </dev/null; st=$?
		[ -c /dev/null ] || { echo "fresh-test: /dev/null is no longer a character device"; st=1; }
		left=$(ls -A /tmp | grep -vxF -f /tmp/.before | grep -vx .before)
		[ -z "$left" ] || { echo "fresh-test: make test left in /tmp:"; echo "$left" | head -20; st=1; }
		exit $st'
INNER
start=$SECONDS
status=0
timeout --kill-after=30 "$timeout" unshare --mount --pid --fork sh "$root/fresh-inner.sh" "$root" </dev/null ||
	status=$?
echo "fresh-test: demo and tests in the fresh root took $((SECONDS - start)) s (exit $status)"
[ "$status" = 124 ] && echo "fresh-test: stopped after ${timeout} s"
exit "$status"
