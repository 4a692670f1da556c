# examples-lib.sh - what bench/examples.sh and bench/examples-run.sh
# share: Debian's systemtap-doc examples, the command line each .meta file
# gives, and marktap -p2 over it against the guest kernel's BTF.  Source
# it, then:
#
#   ex_setup BUILDDIR NAME    sets MT, EX, KVER, top; exports MARKTAP_BTF,
#                             MARKTAP_TAPSET_DIR, MARKTAP_MODULE_PATH
#                             (the kernel's modules, fetched once) and
#                             MARKTAP_KERNEL_SOURCES (marktap-ksrc's map,
#                             made once); exits if unusable
#   ex_each FUNCTION          calls FUNCTION once per example, with
#                             ex_dir, ex_name, ex_rel (DIR/NAME under EX)
#                             and ex_args (the .meta line's shell words
#                             after "stap") set
#   ex_p2 ERRFILE             marktap -p2 of the current example, its
#                             stderr in ERRFILE; its exit status
#   ex_why ERRFILE STATUS     the first error of ERRFILE, shortened so
#                             that the same reason groups together

ex_setup() {
	B=$1
	case $B in /*) ;; *) B=$(pwd)/$B ;; esac
	top=$(cd "$(dirname "$0")/.." && pwd)
	MT=$B/translator/marktap
	EX=/usr/share/systemtap/examples
	[ -x "$MT" ] || { echo "$2: no $MT (build first)" >&2; exit 1; }
	[ -d "$EX" ] || { echo "$2: no $EX (apt-get install systemtap-doc)" >&2; exit 1; }
	KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null | sed -E 's/^linux-headers-([^ ,]+).*/\1/')
	: "${MARKTAP_BTF:=/var/cache/marktap-kernel/vmlinux-$KVER}"
	MARKTAP_TAPSET_DIR="$top/tapsets:$B/tapsets"
	# the kernel's modules (module("ext4").function...: their BTF), from
	# its linux-image package, extracted once next to the kernel
	mods=/var/cache/marktap-kernel/modules-$KVER-all
	if [ -z "$MARKTAP_MODULE_PATH" ] && [ ! -d "$mods/lib" ]; then
		rm -rf "$mods.tmp" && mkdir -p "$mods.tmp" &&
		(cd "$mods.tmp" && apt-get download "linux-image-$KVER" >apt.log 2>&1) &&
		dpkg-deb --fsys-tarfile "$mods.tmp"/linux-image-"$KVER"_*.deb |
			tar -x -C "$mods.tmp" --wildcards "./lib/modules/$KVER/kernel/*.ko" &&
		rm -f "$mods.tmp"/*.deb && mv "$mods.tmp" "$mods" ||
		echo "$2: the modules of linux-image-$KVER could not be fetched: module() probes fail" >&2
	fi
	[ -d "$mods/lib" ] && : "${MARKTAP_MODULE_PATH:=$mods/lib/modules/$KVER/kernel}"
	# which file defines which function (kernel.function("*@fs/*.c")):
	# the map marktap-ksrc makes from Debian's linux-source, once
	srcmap=/var/cache/marktap-kernel/kernel-sources-$KVER
	if [ -z "$MARKTAP_KERNEL_SOURCES" ] && [ ! -s "$srcmap" ]; then
		"$B/translator/marktap-ksrc" -r "$KVER" -o "$srcmap" >/dev/null ||
			echo "$2: no map of the kernel's sources: FUNCTION@FILE probes fail" >&2
	fi
	[ -s "$srcmap" ] && : "${MARKTAP_KERNEL_SOURCES:=$srcmap}"
	export MARKTAP_BTF MARKTAP_TAPSET_DIR MARKTAP_MODULE_PATH MARKTAP_KERNEL_SOURCES
}

ex_each() {
	for meta in "$EX"/*/*.meta; do
		ex_dir=$(dirname "$meta")
		line=$(sed -n 's/^test_installcheck: *//p' "$meta" | head -1)
		[ -n "$line" ] || line=$(sed -n 's/^test_check: *//p' "$meta" | head -1)
		ex_name=$(sed -n 's/^name: *//p' "$meta" | head -1)
		# environment assignments before stap are the run's, not its words
		while w=${line%% *}; [ "$w" != "$line" ]; do
			case ${w%%=*} in "$w" | "" | *[!A-Za-z0-9_]*) break ;; esac
			line=${line#* }
		done
		# a line that is not stap's alone (a pipe into it) runs the script bare
		case $line in stap\ *) ;; *) line="stap $ex_name" ;; esac
		[ -f "$ex_dir/$ex_name" ] || continue
		ex_args=${line#stap }
		ex_rel=${ex_dir#"$EX"/}/$ex_name
		"$1"
	done
}

ex_p2() {
	# the .meta lines are shell words; -p2 after them wins over their -p4
	(cd "$ex_dir" && eval "set -- $ex_args" && timeout 60 "$MT" -r "$KVER" "$@" -p2) \
		>/dev/null 2>"$1" </dev/null
}

ex_why() {
	why=$(grep -m1 -E 'error|ERROR' "$1" | sed -E 's/ at [^ ]+:[0-9]+:[0-9]+.*//; s/"[^"]*"/"…"/g; s/'"'"'[^'"'"']*'"'"'/'"'"'…'"'"'/g' | cut -c1-110)
	[ -n "$why" ] || why="exit $2: $(head -1 "$1" | cut -c1-100)"
	printf '%s\n' "$why"
}
