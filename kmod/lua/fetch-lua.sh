#!/bin/sh
# fetch-lua.sh DESTDIR - put Debian's lua5.4 source in DESTDIR.
#
# Leaves Lua's unpacked upstream source in DESTDIR/lua5.4-VERSION/ (src/
# holds lua.h, lapi.c, ...) and prints that folder's path on stdout.  A
# folder already there is reused (the cache: nothing is fetched twice).
# Exit status 1, with the reason on stderr, when the source cannot be had
# (no network, no apt): callers then build without Lua.
#
# The source package is fetched with apt-get without touching the
# system's apt configuration: a deb-src list of our own in a temporary
# folder (the same mirror and suite as the system's "deb" entries), its
# own package lists, --download-only, then dpkg-source -x.  No copy of
# Lua's sources lives in our tree.  Debian's patches are applied by
# dpkg-source; its luaconf.h is replaced at build time by ours (Makefile).
#
# LUA_MIRROR and LUA_SUITE override the mirror and suite.
set -e
dest=${1:?usage: fetch-lua.sh DESTDIR}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
found=$(ls -d "$dest"/lua5.4-*/src 2>/dev/null | head -1)
if [ -n "$found" ] && [ -f "$found/lvm.c" ]; then
	dirname "$found"
	exit 0
fi
die() { echo "fetch-lua.sh: $*" >&2; exit 1; }
command -v apt-get >/dev/null || die "apt-get missing: no Debian source package"
command -v dpkg-source >/dev/null || die "dpkg-source missing (dpkg-dev)"
mirror=${LUA_MIRROR:-}
suite=${LUA_SUITE:-}
if [ -z "$mirror" ] || [ -z "$suite" ]; then
	# the system's first Debian entry, deb822 or one-line format
	for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		case $f in
		*.sources)
			m=$(awk '/^URIs:/ && /debian\/?$/ && !/security/ { print $2; exit }' "$f")
			s=$(awk '/^Suites:/ { print $2; exit }' "$f") ;;
		*)
			m=$(awk '$1 == "deb" && $2 ~ /debian\/?$/ { print $2; exit }' "$f")
			s=$(awk '$1 == "deb" && $2 ~ /debian\/?$/ { print $3; exit }' "$f") ;;
		esac
		[ -n "$m" ] && [ -n "$s" ] && break
	done
	mirror=${mirror:-${m:-http://deb.debian.org/debian}}
	suite=${suite:-${s:-bookworm}}
fi
tmp=$(mktemp -d "$dest/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/archives/partial"
printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n' "$mirror" "$suite" >"$tmp/src.sources"
opts="-o Dir::Etc::sourcelist=$tmp/src.sources -o Dir::Etc::sourceparts=/nonexistent
 -o Dir::State::Lists=$tmp/lists -o Dir::Cache::archives=$tmp/archives -o APT::Sandbox::User=root
 -o Debug::NoLocking=1"
# shellcheck disable=SC2086
apt-get -q $opts update >"$tmp/apt.log" 2>&1 || die "apt-get update of $mirror $suite (deb-src) failed: $(tail -1 "$tmp/apt.log")"
# shellcheck disable=SC2086
(cd "$tmp" && apt-get -q $opts source --download-only lua5.4 >>"$tmp/apt.log" 2>&1) ||
	die "apt-get source lua5.4 failed: $(tail -1 "$tmp/apt.log")"
dsc=$(ls "$tmp"/lua5.4_*.dsc 2>/dev/null | head -1)
[ -n "$dsc" ] || die "no lua5.4 .dsc downloaded"
(cd "$tmp" && dpkg-source --no-check -x "$dsc" unpacked >>"$tmp/apt.log" 2>&1) || die "dpkg-source -x $dsc failed"
ver=$(basename "$dsc" .dsc | sed -E 's/^lua5\.4_//; s/-[^-]*$//')
[ -f "$tmp/unpacked/src/lvm.c" ] || die "unexpected layout of $dsc"
rm -rf "$dest/lua5.4-$ver"
mv "$tmp/unpacked" "$dest/lua5.4-$ver"
echo "$dest/lua5.4-$ver"
