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
echo "A SystemTap-language script, run inside the demo program:"
D=$PWD/runtime/demo/marktap-demo
translator/marktap -c "$D 5" -e "global opens, reads
probe process(\"$D\").mark(\"fs_open\") { opens[\$filename]++ }
probe process(\"$D\").mark(\"fs_read\") { reads <<< \$count }
probe end { foreach (f in opens-) printf(\"%3d opens of %s\\n\", opens[f], f)
            printf(\"reads: %d, %d bytes\\n\", @count(reads), @sum(reads)) }"
