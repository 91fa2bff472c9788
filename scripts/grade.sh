#!/usr/bin/env bash
# grade.sh NAME DIR — grade a class: every student's copy of exercise NAME's file in
# DIR, one after the other, each built with ASan+UBSan and run through the
# exercise's tests (scripts/exercise.sh check --sanitize), bounded in time and memory.
#
#   DIR/alice.c, DIR/bob.c ...        one file per student (any name ending in .c), or
#   DIR/alice/queue.c ...             one folder per student holding the file
#
# A copy that does not compile, hangs or crashes is a row like any other. Writes a
# CSV (submission, passed, total, sanitizer findings, seconds, notes) and prints a
# table; a copy that changed code outside the EXERCISE markers is flagged and its
# diff printed. Exit status 0 once every copy has its row (2 on bad usage).
#
# One build tree serves the whole batch (configured once): each copy is put at the
# same path and only it is recompiled; its tests run only when its own build
# succeeded, so no row is ever graded with another copy's programs.
#
# Environment: GRADE_BUILD (the build tree, build-grade-NAME), GRADE_CSV (the CSV,
# GRADE_BUILD/grade.csv), EXERCISE_TOTAL_LIMIT (seconds for the tests of one copy,
# 300), EXERCISE_MEMORY_MB (RSS of one test process, 1024) and the other limits of
# scripts/exercise.sh.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EX=$ROOT/scripts/exercise.sh

die() { echo "grade: $*" >&2; exit 2; }

name=${1:-}
dir=${2:-}
[ -n "$name" ] && [ -n "$dir" ] || die "usage: grade.sh NAME DIR (make -f Makefile.tutorial grade EX=NAME SUBMISSIONS=DIR)"
[ -f "$ROOT/docs/exercises/$name/stub.c" ] || { bash "$EX" list >&2; die "no exercise '$name'"; }
[ -d "$dir" ] || die "$dir is not a directory"
dir=$(cd "$dir" && pwd)
rel=$(cd "$ROOT" && grep -rlF --include='*.c' "EXERCISE $name: BEGIN" common stage1_callbacks stage2_generators stage3_queue)
base=$(basename "$rel")

build=${GRADE_BUILD:-$ROOT/build-grade-$name}
mkdir -p "$build/submission" "$build/logs"
build=$(cd "$build" && pwd)
csv=${GRADE_CSV:-$build/grade.csv}
export EXERCISE_TOTAL_LIMIT=${EXERCISE_TOTAL_LIMIT:-300}

# The submissions: NAME -> file.
subs=() files=()
for f in "$dir"/*.c; do
    [ -f "$f" ] || continue
    subs+=("$(basename "$f" .c)") files+=("$f")
done
for f in "$dir"/*/"$base"; do
    [ -f "$f" ] || continue
    subs+=("$(basename "$(dirname "$f")")") files+=("$f")
done
[ "${#subs[@]}" -gt 0 ] || die "$dir holds no submission (*.c, or */$base)"

csv_field() {
    local v=$1
    case $v in
        *[,\"]*) v=${v//\"/\"\"}; printf '"%s"' "$v" ;;
        *) printf '%s' "$v" ;;
    esac
}

echo "grade: $name, ${#subs[@]} submission(s) from $dir; build tree $build"
rows=()       # passed|total|findings|seconds|notes, per submission
flagged=()
copy=$build/submission/$base
for i in "${!subs[@]}"; do
    sub=${subs[$i]}
    log=$build/logs/$sub.log
    cp "${files[$i]}" "$copy"
    touch "$copy"
    t0=$(date +%s.%N)
    printf '  %-24s ' "$sub"
    bash "$EX" check "$name" --source "$copy" --build "$build/tree" --sanitize >"$log" 2>&1
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

    notes=()
    score=$(sed -nE "s/^$name: ([0-9]+)\/([0-9]+) passed$/\1 \2/p" "$log" | tail -n1)
    if [ -n "$score" ]; then
        read -r passed total <<<"$score"
    else
        passed=0 total=
        if grep -q ': the build failed' "$log"; then
            notes+=("does not compile: $(grep -m1 -E "$base:[0-9]+:[0-9]+: error" "$log" | sed -E 's/^.*\/([^/]+:[0-9]+:[0-9]+: error)/\1/')")
        else
            notes+=("not graded: $(tail -n1 "$log")")
        fi
    fi
    grep -qE 'the time limit|EXERCISE_TOTAL_LIMIT' "$log" && notes+=("hung: stopped by a time limit")
    sig=$(grep -oE '(exit status|did not finish: exit status) 1[3-5][0-9]' "$log" | grep -oE '[0-9]+$' |
          grep -vxE '137' | head -n1)
    [ -n "$sig" ] && notes+=("crashed: signal $((sig - 128))")
    findings=$(sed -n 's/^SANITIZER  //p' "$log" | paste -sd ';' | sed 's/;/; /g')
    if ! bash "$EX" outside "$name" "${files[$i]}" >"$build/logs/$sub.outside.diff" 2>&1; then
        notes+=("changed outside the markers: logs/$sub.outside.diff")
        flagged+=("$sub")
    else
        rm -f "$build/logs/$sub.outside.diff"
    fi
    note=$(IFS=';'; echo "${notes[*]:-}" | sed 's/;/; /g')
    rows+=("$passed|$total|$findings|$secs|$note")
    echo "${passed}/${total:-?}  ${secs} s${findings:+  [$findings]}${note:+  ($note)}"
done

# A copy that did not build has no total of its own: the exercise's, from the others.
extotal=
for r in "${rows[@]}"; do
    t=$(cut -d'|' -f2 <<<"$r")
    [ -n "$t" ] && { [ -z "$extotal" ] || [ "$t" -gt "$extotal" ]; } && extotal=$t
done

{
    echo "submission,passed,total,sanitizer findings,seconds,notes"
    for i in "${!subs[@]}"; do
        IFS='|' read -r passed total findings secs note <<<"${rows[$i]}"
        printf '%s,%s,%s,%s,%s,%s\n' "$(csv_field "${subs[$i]}")" "$passed" "${total:-$extotal}" \
            "$(csv_field "$findings")" "$secs" "$(csv_field "$note")"
    done
} >"$csv"

echo
printf '%-24s %9s  %-44s %8s  %s\n' submission passed "sanitizer findings" seconds notes
for i in "${!subs[@]}"; do
    IFS='|' read -r passed total findings secs note <<<"${rows[$i]}"
    printf '%-24s %9s  %-44s %8s  %s\n' "${subs[$i]}" "$passed/${total:-$extotal}" "${findings:--}" "$secs" "${note:--}"
done
for sub in "${flagged[@]}"; do
    echo
    echo "== $sub changed code outside the EXERCISE markers:"
    cat "$build/logs/$sub.outside.diff"
done
echo
echo "grade: CSV in $csv; each submission's whole output in $build/logs/"
