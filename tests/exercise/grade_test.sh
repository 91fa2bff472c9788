#!/usr/bin/env bash
# grade_test.sh BUILDDIR — scripts/grade.sh on a folder of six copies of stage 3's
# queue.c, made here from ours: the reference itself, the stub, one that does not
# compile, one that loops forever in queue_task_done, one that reads freed memory
# there, and the reference with a line changed outside the EXERCISE markers. Each
# must get its own row, and the right one (ctest exercise.grade).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: grade_test.sh BUILDDIR}/grade-selftest
name=stage3-queue
src=$here/stage3_queue/queue.c
rm -rf "$out/class"
mkdir -p "$out/class"
class=$out/class

# ours, with LINES inserted at the top of queue_task_done's body.
into_task_done() {
    awk -v add="$1" '
        { print }
        /^void queue_task_done\(queue \*q\)$/ { want = 1; next }
        want && /^\{$/ { print add; want = 0; done = 1 }
        END { if (!done) exit 1 }' "$src"
}
cp "$src" "$class/reference.c"
awk -v b="EXERCISE $name: BEGIN" -v e="EXERCISE $name: END" \
    -v stub="$here/docs/exercises/$name/stub.c" '
    index($0, b) { print; while ((getline l < stub) > 0) print l; skip = 1; next }
    index($0, e) { print; skip = 0; next }
    !skip { print }' "$src" >"$class/stub.c"
into_task_done '    this is not C;' >"$class/no-compile.c" &&
into_task_done '    for (;;) {}' >"$class/infinite-loop.c" &&
into_task_done '    size_t *left = malloc(sizeof *left);
    if (!left)
        return;
    *left = q->unfinished_tasks;
    free(left);
    if (*left == 0)
        return;' >"$class/use-after-free.c" || { echo "grade_test: queue_task_done not found in $src"; exit 1; }
sed 's|^/\* queue.c — |/* queue.c (edited outside the markers) — |' "$src" >"$class/outside.c"
cmp -s "$src" "$class/outside.c" && { echo "grade_test: could not edit $src outside the markers"; exit 1; }

export EXERCISE_TOTAL_LIMIT=${EXERCISE_TOTAL_LIMIT:-20} EXERCISE_CRAWL_LIMIT=${EXERCISE_CRAWL_LIMIT:-5}
export EXERCISE_UNIT_LIMIT=${EXERCISE_UNIT_LIMIT:-20}
GRADE_BUILD=$out/build GRADE_CSV=$out/grade.csv bash "$here/scripts/grade.sh" "$name" "$class"
rc=$?
[ $rc -eq 0 ] || { echo "grade_test: grade.sh exited $rc"; exit 1; }

fail=0
# The CSV's fields (submission,passed,total,findings,seconds,notes) of one row, one a
# line; a quoted field may hold commas and doubled quotes.
fields() {
    grep "^$1," "$out/grade.csv" | awk '{
        s = $0; n = 0
        while (s != "") {
            if (substr(s, 1, 1) == "\"") {
                f = ""; s = substr(s, 2)
                while (1) {
                    i = index(s, "\""); f = f substr(s, 1, i - 1); s = substr(s, i + 1)
                    if (substr(s, 1, 1) == "\"") { f = f "\""; s = substr(s, 2) } else break
                }
                s = substr(s, 2)
            } else {
                i = index(s, ","); if (i == 0) i = length(s) + 1
                f = substr(s, 1, i - 1); s = substr(s, i + 1)
            }
            print f; n++
        }
        for (; n < 6; n++) print ""
    }'
}
expect() {   # SUBMISSION DESCRIPTION BASH-CONDITION (on $passed $total $findings $notes)
    local sub passed total findings secs notes
    { read -r sub; read -r passed; read -r total; read -r findings; read -r secs; read -r notes; } < <(fields "$1")
    if [ -z "$sub" ]; then
        echo "FAIL  $1: no row"; fail=1
    elif eval "$3"; then
        echo "ok    $1: $2 ($passed/$total${findings:+, $findings}${notes:+, $notes})"
    else
        echo "FAIL  $1: want $2; row: $(grep "^$1," "$out/grade.csv")"; fail=1
    fi
}
n=$(($(wc -l <"$out/grade.csv") - 1))
[ "$n" -eq 6 ] || { echo "FAIL  want 6 rows, got $n"; fail=1; }
expect reference "every test passed, no finding, not flagged" \
    '[ "$total" -gt 0 ] && [ "$passed" = "$total" ] && [ -z "$findings$notes" ]'
expect stub "graded, failed, no finding, not flagged" \
    '[ "$total" -gt 0 ] && [ "$passed" -lt "$total" ] && [ -z "$findings$notes" ]'
expect no-compile "0 passed of the exercise's total, the compiler's error named" \
    '[ "$passed" = 0 ] && [ "$total" -gt 0 ] && [[ $notes =~ ^"does not compile: queue.c:"[0-9]+:[0-9]+": error" ]]'
expect infinite-loop "not all passed, stopped by a time limit" \
    '[ "$passed" -lt "$total" ] && [[ $notes == *"hung: stopped by a time limit"* ]]'
expect use-after-free "not all passed, the heap-use-after-free named in queue_task_done" \
    '[ "$passed" -lt "$total" ] && [[ $findings =~ "heap-use-after-free in queue_task_done queue.c:"[0-9]+ ]]'
expect outside "every test passed, flagged" \
    '[ "$passed" = "$total" ] && [[ $notes == *"changed outside the markers"* ]]'
grep -q '^+/\* queue.c (edited outside the markers)' "$out/build/logs/outside.outside.diff" ||
    { echo "FAIL  outside: the diff does not show the edited line"; fail=1; }
exit $fail
