#!/usr/bin/env bash
# handout_test.sh BUILDDIR — scripts/handout.sh makes a copy for students (ctest
# exercise.handout): a git repository of one commit and nothing else, each exercise's
# file exactly the student's starting copy, no line of a solution in what is committed,
# the docs' excerpts still true, no selftest of a handed-out exercise, and the grader
# working there: it passes our stage 1 solution, built in the handout.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: handout_test.sh BUILDDIR}/handout-selftest
copy=$out/copy
rm -rf "$out"
mkdir -p "$out"
fail=0
ok() { echo "ok    $*"; }
bad() { echo "FAIL  $*"; fail=1; }

bash "$here/scripts/handout.sh" "$copy" || { echo "FAIL  handout.sh exited $?"; exit 1; }

# History: one commit, a clean tree, no object outside it.
[ "$(git -C "$copy" rev-list --all | wc -l)" = 1 ] && ok "one commit" || bad "more than one commit"
[ -z "$(git -C "$copy" status --porcelain)" ] && ok "the commit holds every file" || bad "files left out of the commit"
[ -z "$(git -C "$copy" fsck --unreachable --no-reflogs 2>&1)" ] && ok "no unreachable object" ||
    bad "objects outside the commit"

names=$(bash "$here/scripts/exercise.sh" list | sed -n 's/^  \([^ ]*\) .*/\1/p')
for n in $names; do
    rel=$(cd "$here" && grep -rlF --include='*.c' "EXERCISE $n: BEGIN" common stage1_callbacks stage2_generators stage3_queue)
    bash "$here/scripts/exercise.sh" copy "$n" "$out/start.c"
    git -C "$copy" show "HEAD:$rel" | cmp -s - "$out/start.c" && ok "$n: $rel is the stub copy" ||
        bad "$n: $rel differs from the student's starting copy"
    # Our solution's lines (trimmed, 16 characters or more) that neither the starting
    # copy nor any other file of the course's code has: none may be in the commit.
    (cd "$here" && git ls-files -z -- ':!*.md' ":!$rel") | (cd "$here" && xargs -0 cat) |
        cat - "$out/start.c" >"$out/elsewhere"
    awk -v b="EXERCISE $n: BEGIN" -v e="EXERCISE $n: END" '
        function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
        FNR == NR { have[trim($0)] = 1; next }
        index($0, e) { inside = 0 }
        inside && length(trim($0)) >= 16 && !(trim($0) in have) { print trim($0) }
        index($0, b) { inside = 1 }' "$out/elsewhere" "$here/$rel" | sort -u >"$out/solution.$n"
    [ -s "$out/solution.$n" ] || bad "$n: no line of the solution to look for"
    found=$(git -C "$copy" archive HEAD | tar -xOf - | awk '
        function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
        FNR == NR { sol[$0] = 1; next }
        trim($0) in sol { print trim($0) }' "$out/solution.$n" - | sort -u)
    [ -z "$found" ] && ok "$n: none of its $(wc -l <"$out/solution.$n") solution lines is committed" ||
        bad "$n: solution lines in the commit: $(echo "$found" | head -3)"
done

(cd "$copy" && bash scripts/check-docs.sh) && ok "check-docs passes in the handout" || bad "check-docs fails in the handout"

# A plain configure: no selftest of an exercise that is handed out.
cmake -S "$copy" -B "$out/configured" -DCMAKE_BUILD_TYPE=Debug >"$out/configure.log" 2>&1 ||
    bad "the handout does not configure ($out/configure.log)"
left=$(ctest --test-dir "$out/configured" -N -L exercise 2>/dev/null | sed -n 's/^Total Tests: //p')
[ "$left" = 0 ] && ok "no exercise test registered in the handout" || bad "exercise tests in the handout: $left"

# The grader, in the handout, on our stage 1 solution.
if (cd "$copy" && EXERCISE_CRAWL_LIMIT=10 bash scripts/exercise.sh check stage1-read_response \
        --source "$here/stage1_callbacks/fetcher.c" --build "$out/grade") >"$out/grade.log" 2>&1; then
    ok "the grader in the handout: $(tail -n1 "$out/grade.log")"
else
    bad "the grader in the handout failed our solution: $(tail -n1 "$out/grade.log") ($out/grade.log)"
fi
exit $fail
