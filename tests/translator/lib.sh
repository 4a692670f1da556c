# lib.sh - shared setup of the translator tests: source after tap.sh.
MT="$top_builddir/translator/marktap"
MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$top_builddir/tapsets"
MARKTAP_MARKERS="$top_srcdir/tapsets/markers.tsv"
export MARKTAP_TAPSET_DIR MARKTAP_MARKERS
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mt-tr.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
[ -x "$MT" ] || skip_all "marktap not built"
# The parse tree of a file without its "# file" line.
p1() { "$MT" -g -p1 "$@" 2>&1 | sed '/^# file /d'; }
