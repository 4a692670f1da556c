#!/bin/sh
# Quick start: install dependencies, build, record the demo program, show it.
set -e
cd "$(dirname "$0")/.."
sh build-aux/install-deps.sh
[ -f configure ] || autoreconf -fi
mkdir -p _build
cd _build
[ -f Makefile ] || ../configure
make -j"$(nproc)"
rm -rf /tmp/marktap-quickstart
runtime/marktrace/marktrace record -o /tmp/marktap-quickstart -- runtime/demo/marktap-demo 5
runtime/marktrace/marktrace view /tmp/marktap-quickstart | head -20
runtime/marktrace/marktrace stats /tmp/marktap-quickstart
echo "babeltrace2 reads the same trace:"
babeltrace2 /tmp/marktap-quickstart | head -5
