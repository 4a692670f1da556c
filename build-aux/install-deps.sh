#!/bin/sh
# Install everything Marktap builds, tests and benchmarks with (Debian 12).
set -e
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
PKGS="build-essential autoconf automake libtool pkg-config
      liblua5.4-dev lua5.4 libelf-dev libdw-dev libbpf-dev
      babeltrace2 systemtap-sdt-dev systemtap
      lttng-tools liblttng-ust-dev bpftrace
      qemu-system-x86 busybox-static cpio linux-headers-amd64
      clang libclang-rt-14-dev python3 kmod chromium systemtap-doc"
missing=
for p in $PKGS; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	$SUDO apt-get update -q || true
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -q --no-install-recommends $missing
fi
