#!/bin/sh
# How many of the functions SystemTap documents marktap knows: every
# function of the tapsets reference (Debian's systemtap-doc, one page per
# function, "function::NAME") is called in a begin probe with each of the
# forms its synopsis gives, at pass 2:
#
#   marktap -u -p2 -e 'probe begin { NAME(1, "s", ...) }'
#
# (-u: unoptimised, as stap's -u, so that a call whose value is unused
# is not elided)
#
# (a long argument is 1, a string "s"; stap's guru functions with -g).
# A function is known when every documented form elaborates, refused
# when marktap names a reason
# (a semantic error other than an unknown name or a wrong number of
# arguments), missing otherwise.
#
# Some functions cannot mean anything without the kernel's debug
# information: every definition of them in stap's own tapsets
# (/usr/share/systemtap/tapset, all architectures and runtimes) reads
# kernel types (@cast, @var, @container_of, a $target variable), or
# calls only functions that do.  Those marktap does not know are counted
# apart (marktap reads no DWARF for the ones it knows: its task_*
# functions take a thread id and read /proc, for instance): the second
# figure is over the others.
#
#   bench/tapset-coverage.sh [BUILDDIR] [-v]
#
# BUILDDIR defaults to _build.  Prints
#   N of M documented functions, P% of those that can mean something without DWARF
# then the missing functions, the refused ones with marktap's reason,
# and (-v) the ones that need DWARF with the state of each.
B=${1:-_build}
[ "$1" ] && shift
verbose=0; [ "$1" = -v ] && verbose=1
top=$(cd "$(dirname "$0")/.." && pwd)
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
MT=$B/translator/marktap
DOC=${STAP_TAPSET_DOC:-/usr/share/doc/systemtap-doc/tapsets}
SRC=${STAP_TAPSET_SRC:-/usr/share/systemtap/tapset}
[ -x "$MT" ] || { echo "tapset-coverage.sh: no $MT (build first)" >&2; exit 1; }
[ -d "$DOC" ] || { echo "tapset-coverage.sh: no $DOC (apt-get install systemtap-doc)" >&2; exit 1; }
[ -d "$SRC" ] || { echo "tapset-coverage.sh: no $SRC (apt-get install systemtap-common)" >&2; exit 1; }
export MARKTAP_TAPSET_DIR="$top/tapsets:$B/tapsets"
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT

# NAME<TAB>CALL, one line per documented form
perl -0777 -ne '
	next unless /<title>function::([^<]*)<\/title>/;
	my $name = $1;
	while (/<pre class="programlisting">(.*?)<\/pre>/sg) {
		(my $syn = $1) =~ s/<[^>]*>//g;
		$syn =~ s/\s+//g;
		$syn =~ s/^\d+\)//;
		next unless $syn =~ /^\Q$name\E(?::\w+)?\((.*)\)$/;
		my @args = map { /:string$/ ? "\"s\"" : "1" } grep { length } split /,/, $1;
		print "$name\t$name(" . join(", ", @args) . ")\n";
	}' "$DOC"/API-*.html | sort -u >"$TMP/forms"

# The functions whose every stap definition needs kernel types.
find "$SRC" \( -name '*.stp' -o -name '*.stpm' \) -exec cat {} + | perl -0777 -ne '
	s{/\*.*?\*/}{}sg;
	s{//[^\n]*}{}g;
	s{(?m)^\s*#[^\n]*}{}g;
	my $types = qr/\@cast\s*\(|\@var\s*\(|\@container_of|\@module_container_of|\$\w/;
	# macros (@define NAME %( ... %)) that expand to reads of types
	my %macro;
	while (/\@define\s+(\w+)[^%]*%\((.*?)%\)/sg) {
		$macro{$1} .= $2;
	}
	my %typed_macro = map { $_ => 1 } grep { $macro{$_} =~ $types } keys %macro;
	for my $round (1 .. 5) {
		for my $m (keys %macro) {
			$typed_macro{$m} = 1 if grep { $typed_macro{$_} } $macro{$m} =~ /\@(\w+)/g;
		}
	}
	my %defs;
	while (/\bfunction\s+(\w+)[^{%]*?(%\{.*?%\}|\{)/sg) {
		my ($name, $open) = ($1, $2);
		my $body;
		if ($open =~ /^%\{/) {
			$body = "";   # embedded C: the kernel, not its debuginfo
		} else {
			my ($depth, $start) = (1, pos);
			while ($depth && /\G(?:"(?:[^"\\]|\\.)*"|[^{}"]+|(\{)|(\}))/sg) {
				$depth++ if defined $1;
				$depth-- if defined $2;
			}
			$body = substr($_, $start, pos() - $start);
		}
		my $dwarf = ($body =~ $types || grep { $typed_macro{$_} } $body =~ /\@(\w+)/g) ? 1 : 0;
		my %c = map { $_ => 1 } $body =~ /\b(\w+)\s*\(/g;
		push @{$defs{$name}}, { dwarf => $dwarf, calls => [keys %c] };
	}
	# a definition needs DWARF when it reads types itself or calls a
	# function all of whose definitions do: to a fixed point
	my $changed = 1;
	my %needs;
	while ($changed) {
		$changed = 0;
		for my $f (keys %defs) {
			next if $needs{$f};
			my $all = 1;
			for my $d (@{$defs{$f}}) {
				my $n = $d->{dwarf} || grep { $needs{$_} } @{$d->{calls}};
				$all = 0 unless $n;
			}
			if ($all) { $needs{$f} = 1; $changed = 1 }
		}
	}
	print "$_\n" for sort keys %needs;' >"$TMP/dwarf"

: >"$TMP/results"
while IFS='	' read -r name call; do
	if out=$("$MT" -u -p2 -e "probe begin { $call }" 2>&1 >/dev/null); then
		echo "$name	ok" >>"$TMP/results"
	elif printf '%s\n' "$out" | grep -q '^semantic error: function may not be used unless -g' &&
	     out=$("$MT" -u -g -p2 -e "probe begin { $call }" 2>&1 >/dev/null); then
		echo "$name	ok" >>"$TMP/results"   # a guru function, as stap's
	else
		why=$(printf '%s\n' "$out" | grep -m1 '^semantic error\|^parse error' |
		      sed 's/: identifier .*//; s/^semantic error: //')
		case $why in
		'unresolved function'*|'arity mismatch'*|'') echo "$name	missing	$call" >>"$TMP/results" ;;
		*) echo "$name	refused	$call: $why" >>"$TMP/results" ;;
		esac
	fi
done <"$TMP/forms"

# one line per function: ok only when every form is
perl -F'\t' -lane '
	BEGIN { open my $d, "<", shift @ARGV or die; while (<$d>) { chomp; $dwarf{$_} = 1 } }
	$f = $F[0];
	push @order, $f unless exists $state{$f};
	my $s = $F[1];
	$state{$f} = $s if !$state{$f} || $state{$f} eq "ok" || ($state{$f} eq "refused" && $s eq "missing");
	$why{$f} = $F[2] if $s ne "ok" && !$why{$f};
	END {
		my ($m, $n, $k, $p) = (0, 0, 0, 0);
		for my $f (@order) {
			$m++;
			$n++ if $state{$f} eq "ok";
			next if $dwarf{$f} && $state{$f} ne "ok";
			$k++;
			$p++ if $state{$f} eq "ok";
		}
		printf "%d of %d documented functions, %.0f%% of those that can mean something without DWARF (%d of %d)\n",
			$n, $m, $k ? 100 * $p / $k : 0, $p, $k;
		for my $kind ("missing", "refused") {
			my @l = grep { $state{$_} eq $kind && !$dwarf{$_} } @order;
			print "$kind (" . scalar(@l) . "):" if @l;
			print "  $_" . ($kind eq "refused" ? "\t$why{$_}" : "") for @l;
		}
		my @d = grep { $dwarf{$_} && $state{$_} ne "ok" } @order;
		print "needing DWARF (" . scalar(@d) . ")" if @d;
		if ('"$verbose"') {
			print "  $_\t$state{$_}" for @d;
			my @k = grep { $dwarf{$_} && $state{$_} eq "ok" } @order;
			print "known without DWARF though stap reads kernel types for them (" . scalar(@k) . "):" if @k;
			print "  $_" for @k;
		}
	}' "$TMP/dwarf" "$TMP/results"
