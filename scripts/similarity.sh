#!/usr/bin/env bash
# similarity.sh NAME LABEL=FILE... — for the teacher: which copies of exercise NAME
# share much of their code, as CS:APP's labs and MOSS show a class's pairs. Each copy's
# exercise region (between its EXERCISE markers, or the whole file when it has none) is
# cut to its lines' shapes (scripts/shapes.awk, as handout.sh's leak check: comments
# out, names, strings and numbers made one each, spaces collapsed), and a shape counts when it is 12 characters
# or more, not in the exercise's stub, and in at most a third of the copies (what most
# of a class writes is the exercise's shape, not a copy). A pair sharing at least
# SIM_MIN_SHARED (5) such shapes, SIM_MIN_RATIO (0.6) or more of the smaller copy's, is
# a row, most similar first:
#     RATIO  SHARED/OF  LABEL1  LABEL2
# then one line: "similarity: K pair(s) of N copies to look at". Exit 0 (2: bad usage).
# A row is a reason to read two copies side by side, never a verdict.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "similarity: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: similarity.sh NAME LABEL=FILE..."
name=$1
shift
stub=$ROOT/docs/exercises/$name/stub.c
[ -f "$stub" ] || stub=$ROOT/docs/exercises/$name/stub.lua
[ -f "$stub" ] || die "no exercise '$name'"
for a in "$@"; do
    case $a in *=*) [ -f "${a#*=}" ] || die "${a#*=}: no such file" ;; *) die "not LABEL=FILE: $a" ;; esac
done

# Every copy's distinct shapes, one "LABEL<TAB>SHAPE" a line; the stub's as label "".
shapes() { # LABEL FILE
    awk -v label="$1" -v b="EXERCISE $name: BEGIN" -v e="EXERCISE $name: END" -f "$ROOT/scripts/shapes.awk" -f <(printf '%s\n' '
        { line[NR] = $0 }
        index($0, b) && !from { from = NR }
        index($0, e) { to = NR }
        END {
            if (!from || to <= from) { from = 0; to = NR + 1 }
            for (n = from + 1; n < to; n++) {
                t = norm(line[n])
                if (length(t) >= 12 && !(t in seen)) { seen[t] = 1; print label "\t" t }
            }
        }') "$2"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shapes "" "$stub" >"$work/all"
for a in "$@"; do shapes "${a%%=*}" "${a#*=}" >>"$work/all"; done

awk -F'\t' -v ncopies=$# -v minshared="${SIM_MIN_SHARED:-5}" -v minratio="${SIM_MIN_RATIO:-0.6}" '
    $1 == "" { given[$2] = 1; next }
    { if (!(($1, $2) in has)) { has[$1, $2] = 1; holders[$2] = holders[$2] "\t" $1; count[$2]++ } }
    !($1 in known) { known[$1] = 1; order[++nl] = $1 }
    END {
        cap = int(ncopies / 3); if (cap < 2) cap = 2
        for (t in count) {
            if ((t in given) || count[t] > cap) continue
            n = split(substr(holders[t], 2), h, "\t")
            for (i = 1; i <= n; i++) {
                size[h[i]]++
                for (j = 1; j <= n; j++) if (h[i] < h[j]) shared[h[i], h[j]]++
            }
        }
        for (k in shared) {
            split(k, p, SUBSEP)
            small = size[p[1]] < size[p[2]] ? size[p[1]] : size[p[2]]
            ratio = small ? shared[k] / small : 0
            if (shared[k] >= minshared && ratio >= minratio)
                printf "%.2f\t%d/%d\t%s\t%s\n", ratio, shared[k], small, p[1], p[2]
        }
    }' "$work/all" | sort -t"$(printf '\t')" -k1,1nr -k3,3 >"$work/pairs"
if [ -s "$work/pairs" ]; then
    echo "RATIO  SHARED/OF  COPY  COPY"
    awk -F'\t' '{ printf "%5s  %9s  %s  %s\n", $1, $2, $3, $4 }' "$work/pairs"
fi
echo "similarity: $(wc -l <"$work/pairs") pair(s) of $# copies to look at"
