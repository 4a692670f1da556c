#!/bin/sh
# The test command: install dependencies, build, run every test.
# Usage: build-aux/run-tests.sh   (from a fresh clone, as root or with sudo)
set -e
cd "$(dirname "$0")/.."
sh build-aux/install-deps.sh
autoreconf -fi
mkdir -p _build
cd _build
../configure --enable-werror
make -j"$(nproc)"
make -j"$(nproc)" check || { cat test-suite.log 2>/dev/null | tail -200; exit 1; }
make distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror TESTS= >/dev/null
echo "run-tests: all tests passed"
