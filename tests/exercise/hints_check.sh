#!/usr/bin/env bash
# hints_check.sh — a static check of the exercises' hints (ctest exercise.hints-static):
# for every exercise (docs/exercises/*/grade.conf, and hidden.conf beside it), the cases
# its tests list — each `unit BINARY [GLOB]`'s cases (the cmocka_unit_test* / T(...)
# entries of tests/*/BINARY.c the glob keeps) and each `scenario`'s (the CASE(...)
# entries of tests/scenarios/scenarios.c whose name holds one of its substrings) — must
# each have a hint that is printed whatever the failure: a `hint GLOB otherwise ...` or
# an unconditional `hint GLOB ...` whose glob fits it. And each hint's glob must fit
# some case (a renamed case leaves no hint behind), and each `repeat` glob too.
# Prints one line per exercise; exit 1 on any problem.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
# --selftest SCRATCH: the check fails on a copy of the exercises with stage3-queue's
# catch-all hint taken out and a hint's glob misspelt, naming both.
if [ "${1:-}" = --selftest ]; then
    scratch=${2:?usage: hints_check.sh --selftest SCRATCH}/hints-check-selftest
    rm -rf "$scratch"
    mkdir -p "$scratch/docs"
    cp -r "$here/docs/exercises" "$scratch/docs/"
    mkdir -p "$scratch/tests/exercise"
    ln -s "$here/tests/unit" "$here/tests/integration" "$here/tests/scenarios" "$scratch/tests/"
    [ -d "$here/tests/hidden" ] && ln -s "$here/tests/hidden" "$scratch/tests/"
    cp "$0" "$scratch/tests/exercise/"
    c=$scratch/docs/exercises/stage3-queue/grade.conf
    sed -i -e '/^hint \* otherwise /d' -e 's/^hint test_task_done_counts_down /hint test_task_done_count_down /' "$c"
    got=$(bash "$scratch/tests/exercise/hints_check.sh" 2>&1) && { echo "FAIL  the check passed the broken copy"; exit 1; }
    grep -q '^FAIL  stage3-queue: no hint always applies to .*test_join_with_nothing_put' <<<"$got" &&
        grep -q "^FAIL  stage3-queue: the glob 'test_task_done_count_down' of a hint or repeat fits none" <<<"$got" &&
        [ "$(grep -c '^FAIL' <<<"$got")" = 2 ] ||
        { echo "FAIL  the check did not name the two problems:"; echo "$got"; exit 1; }
    echo "ok    the check fails a copy with a case left without hint and a misspelt glob"
    exit 0
fi
confs=("$here"/docs/exercises/*/grade.conf)
set -f      # from here on the globs are the hints' own: never file names
fail=0
bad() { echo "FAIL  $*"; fail=1; exfail=1; }

# The case names of a cmocka source file, one a line: cmocka_unit_test*(NAME, T(NAME),
# CASE(NAME), or a table row {"NAME", ...} (test_spider_exercise's); of several files,
# the source and the hidden cases tests/hidden/ adds to it (its README).
unit_cases() {
    grep -ohE '(cmocka_unit_test[a-z_]*\(|^ *T\(|CASE\(|\{")test_[A-Za-z0-9_]+' "$@" | sed -E 's/.*[("]//' | sort -u
}

# The header of tests/hidden/ that a test's source includes, if there is one.
hidden_of() {
    case $1 in
        scenarios) h=$here/tests/hidden/scenarios_hidden.h ;;
        test_spider_exercise) h=$here/tests/hidden/bookshop_hidden.h ;;
        *) h= ;;
    esac
    [ -n "$h" ] && [ -f "$h" ] && echo "$h"
    return 0
}

# Whether NAME fits GLOB[,GLOB...] (as exercise.sh reads them: * and ?).
fits() {
    local name=$1 g
    local IFS=,
    for g in $2; do
        # shellcheck disable=SC2053
        [[ $name == $g ]] && return 0
    done
    return 1
}

for conf in "${confs[@]}"; do
    dir=$(dirname "$conf")
    ex=$(basename "$dir")
    exfail=0
    cases=()
    for c in "$conf" "$dir/hidden.conf"; do
        [ -f "$c" ] || continue
        while read -r kind a b c2 d; do
            case $kind in
                unit)
                    src=$(find -L "$here/tests" -name "$a.c" | head -n1)
                    [ -n "$src" ] || { bad "$ex: no source for unit test $a"; continue; }
                    while read -r n; do
                        [ -z "${b:-}" ] || fits "$n" "$b" && cases+=("$n")
                    done < <(unit_cases "$src" $(hidden_of "$a")) ;;
                scenario)
                    all=$(unit_cases "$here/tests/scenarios/scenarios.c" $(hidden_of scenarios))
                    if [ -z "${d:-}" ]; then
                        while read -r n; do cases+=("$n"); done <<<"$all"
                    else
                        IFS=, read -ra subs <<<"$d"
                        for s in "${subs[@]}"; do
                            m=$(grep -F -- "$s" <<<"$all")
                            [ -n "$m" ] || bad "$ex: no scenario case holds '$s'"
                            while read -r n; do [ -n "$n" ] && cases+=("$n"); done <<<"$m"
                        done
                    fi ;;
            esac
        done < <(grep -Ev '^[[:space:]]*(#|$)' "$c")
    done
    mapfile -t cases < <(printf '%s\n' "${cases[@]}" | grep . | sort -u)
    # The hints: GLOB and whether it is always printed (otherwise, or no `if`).
    globs=() always=()
    while read -r _ glob rest; do
        globs+=("$glob")
        [[ $rest == if\ \"* ]] && always+=(0) || always+=(1)
    done < <(grep -E '^hint ' "$conf")
    repeats=$(sed -n 's/^repeat[[:space:]]\{1,\}\([^[:space:]]*\).*/\1/p' "$conf" "$dir/hidden.conf" 2>/dev/null)
    missing=()
    for n in "${cases[@]}"; do
        ok=0
        for i in "${!globs[@]}"; do
            [ "${always[$i]}" = 1 ] && fits "$n" "${globs[$i]}" && { ok=1; break; }
        done
        [ $ok = 1 ] || missing+=("$n")
    done
    [ "${#cases[@]}" -eq 0 ] || [ "${#missing[@]}" -eq 0 ] || bad "$ex: no hint always applies to ${missing[*]}"
    for g in "${globs[@]}" $repeats; do
        hit=0
        for n in "${cases[@]}"; do fits "$n" "$g" && { hit=1; break; }; done
        [ $hit = 1 ] || bad "$ex: the glob '$g' of a hint or repeat fits none of its cases"
    done
    [ "${#cases[@]}" -gt 0 ] || bad "$ex: no case found"
    [ "$exfail" = 0 ] &&
        echo "ok    $ex: ${#cases[@]} cases, ${#globs[@]} hints, each case with one that always applies"
done
exit $fail
