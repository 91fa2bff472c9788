#!/usr/bin/env bash
# grade_test.sh BUILDDIR — scripts/grade.sh on classes made here from our own code
# (ctest exercise.grade):
#
# 1. seven copies of stage 3's queue.c: the reference itself, the stub, one that does
#    not compile, one that does not link (it calls a function nothing defines), one
#    that loops forever in queue_task_done, one that reads freed memory there, and the
#    reference with a line changed outside the EXERCISE markers,
#    graded with two jobs and a hidden test. Each must get its own row, and the right
#    one (score, hung noted, the sanitizer's finding, the flag), a column per test case
#    in the CSV, and a results.json in Gradescope's shape (tests/exercise/results_json.py).
# 2. two copies of stage 3's robotstxt.c: ours, and one whose wait_body writes the
#    answer with decide() itself, forgetting the parked requests: it loses points, and
#    its failures carry the hint about the parked requests' answer.
# 3. six copies of stage3-spider's Lua spider: ours, ours without its markers (a whole
#    file), the stub, one that does not follow the next shelf, one that never
#    downloads the API's ratings and one that loops forever in parse: full marks for
#    ours, with or without the markers, neither flagged, some points for the others,
#    each failure with its hint; then a second class graded into the same folder leaves
#    nothing of the first.
# 4. two copies of stage 1's fetcher.c: ours, and one whose read_response reads the
#    Fetcher after fetcher_succeeded freed it. The use-after-free scores below full
#    marks, and the same in a student's check-exercise as in the grading's public tests;
#    before the grades are published, their results.json show no hidden point.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: grade_test.sh BUILDDIR}/grade-selftest
fail=0
bad() { echo "FAIL  $*"; fail=1; }

# ---- 1. stage3-queue: seven kinds of copy -----------------------------------------
name=stage3-queue
src=$here/stage3_queue/queue.c
rm -rf "$out/class" "$out/robots-class" "$out/student" "$out/spider-class"
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
bash "$here/scripts/exercise.sh" copy "$name" "$class/stub.c"
into_task_done '    this is not C;' >"$class/no-compile.c" &&
into_task_done '    for (;;) {}' >"$class/infinite-loop.c" &&
into_task_done '    size_t *left = malloc(sizeof *left);
    if (!left)
        return;
    *left = q->unfinished_tasks;
    free(left);
    if (*left == 0)
        return;' >"$class/use-after-free.c" || { echo "grade_test: queue_task_done not found in $src"; exit 1; }
# A function declared, called in queue_task_done, and defined nowhere: a link error.
into_task_done '    queue_never_defined(q);' |
    sed 's/^void queue_task_done(queue \*q)$/void queue_never_defined(queue *q);\n&/' >"$class/no-link.c"
grep -q '^void queue_never_defined(queue \*q);$' "$class/no-link.c" ||
    { echo "grade_test: could not make no-link.c from $src"; exit 1; }
sed 's|^/\* queue.c — |/* queue.c (edited outside the markers) — |' "$src" >"$class/outside.c"
cmp -s "$src" "$class/outside.c" && { echo "grade_test: could not edit $src outside the markers"; exit 1; }
# A hidden test of our own: the Queue's scenarios on the raw transport.
printf 'scenario crawl-queue raw epoll test_link_cycle,test_two_roots\npoints test_two_roots 3\n' >"$out/hidden.conf"

# Limits: the endless loop is stopped after 60 s in all; a crawl gets the grader's 15 s
# (our code under ASan, beside another copy and the rest of ctest -j2, takes a few).
export EXERCISE_TOTAL_LIMIT=${EXERCISE_TOTAL_LIMIT:-60} EXERCISE_CRAWL_LIMIT=${EXERCISE_CRAWL_LIMIT:-15}
export EXERCISE_UNIT_LIMIT=${EXERCISE_UNIT_LIMIT:-20}
GRADE_HIDDEN=$out/hidden.conf GRADE_BUILD=$out/build GRADE_CSV=$out/grade.csv \
    bash "$here/scripts/grade.sh" -j 2 "$name" "$class"
rc=$?
[ $rc -eq 0 ] || { echo "grade_test: grade.sh exited $rc"; exit 1; }

# The fields of a CSV row (or of the header: ROW "submission"), one a line; a quoted
# field may hold commas and doubled quotes.
fields() {
    grep "^$2," "$1" | head -n1 | awk '{
        s = $0
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
            print f
        }
    }'
}
# SUBMISSION DESCRIPTION BASH-CONDITION (on $score $max $passed $total $findings $notes
# $cols, the per-case columns); CSV is the file.
expect() {
    local sub score max passed total findings secs notes cols
    { read -r sub; read -r score; read -r max; read -r passed; read -r total; read -r findings
      read -r secs; read -r notes; cols=$(cat); } < <(fields "$CSV" "$1")
    if [ -z "$sub" ]; then
        bad "$1: no row"
    elif eval "$3"; then
        echo "ok    $1: $2 ($score/$max points, $passed/$total${findings:+, $findings}${notes:+, $notes})"
    else
        bad "$1: want $2; row: $(grep "^$1," "$CSV" | cut -c1-400)"
    fi
}
CSV=$out/grade.csv
n=$(($(wc -l <"$CSV") - 1))
[ "$n" -eq 7 ] || bad "want 7 rows, got $n"
ncols=$(fields "$CSV" submission | wc -l)
ncases=$(($(grep -c . "$out/build/tests.tsv") + 0))
[ "$ncols" -eq $((8 + ncases)) ] && [ "$ncases" -ge 17 ] && echo "ok    the CSV has a column for each of the $ncases test cases" ||
    bad "the CSV has $ncols columns for $ncases cases"
fields "$CSV" submission | grep -qx 'hidden scenario queue raw epoll: test_two_roots (3)' &&
    echo "ok    the hidden test has its column, worth its 3 points" || bad "no column for the hidden test_two_roots (3 points)"
expect reference "every test passed, full marks, no finding, not flagged" \
    '[ "$total" -gt 0 ] && [ "$passed" = "$total" ] && [ "$score" = "$max" ] && [ -z "$findings$notes" ] && [[ $cols != *0* ]]'
expect stub "graded, failed, no finding, not flagged" \
    '[ "$total" -gt 0 ] && [ "$passed" -lt "$total" ] && [ "$score" -lt "$max" ] && [ -z "$findings$notes" ]'
expect no-compile "0 points of the exercise's, the compiler's error named" \
    '[ "$passed" = 0 ] && [ "$score" = 0 ] && [ "$max" -gt 0 ] && [ "$total" -gt 0 ] && [[ $notes =~ ^"does not compile: queue.c:"[0-9]+:[0-9]+": error" ]]'
expect no-link "0 points, the linker's missing symbol named" \
    '[ "$passed" = 0 ] && [ "$score" = 0 ] && [ "$total" -gt 0 ] && [[ $notes =~ ^"does not link: undefined reference to ".+"queue_never_defined" ]]'
expect infinite-loop "not all passed, hung: stopped after N s" \
    '[ "$passed" -lt "$total" ] && [[ $notes =~ "hung: stopped after "[0-9]+" s" ]]'
expect use-after-free "not all passed, the heap-use-after-free named in queue_task_done" \
    '[ "$passed" -lt "$total" ] && [[ $findings =~ "heap-use-after-free in queue_task_done queue.c:"[0-9]+ ]]'
expect outside "every test passed, flagged" \
    '[ "$passed" = "$total" ] && [ "$score" = "$max" ] && [[ $notes == *"changed outside the markers"* ]]'
grep -q '^+/\* queue.c (edited outside the markers)' "$out/build/logs/outside.outside.diff" ||
    bad "outside: the diff does not show the edited line"

# Gradescope: a results.json per copy, in the documented shape, scored as the CSV.
python3 "$here/tests/exercise/results_json.py" "$out"/build/results/*/results.json || bad "a results.json is not in Gradescope's shape"
for sub in reference stub no-compile no-link infinite-loop use-after-free outside; do
    j=$out/build/results/$sub/results.json
    got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["score"], len(d["tests"]), sum(t["max_score"] for t in d["tests"]), sorted({t["visibility"] for t in d["tests"]}))' "$j" 2>&1)
    want="$(fields "$CSV" "$sub" | sed -n 2p) $ncases $(fields "$CSV" "$sub" | sed -n 3p) ['after_published', 'visible']"
    [ "$got" = "$want" ] && echo "ok    $sub: results.json scores as the CSV ($got)" || bad "$sub: results.json says '$got', the CSV '$want'"
done
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not all("does not compile" in t["output"] for t in d["tests"]))' \
    "$out/build/results/no-compile/results.json" &&
    echo "ok    no-compile: each test of its results.json says the copy does not compile" ||
    bad "no-compile: its results.json does not say why each test failed"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not all("does not link (undefined reference to" in t["output"] and "queue_never_defined" in t["output"] for t in d["tests"]))' \
    "$out/build/results/no-link/results.json" &&
    echo "ok    no-link: each test of its results.json names the missing symbol" ||
    bad "no-link: its results.json does not name the missing symbol"
grep -q 'same sanitizers and limits:\\n  make -f Makefile.tutorial check-exercise EX=stage3-queue"' \
    "$out/build/results/infinite-loop/results.json" &&
    echo "ok    infinite-loop: its results.json suggests check-exercise, run as graded" ||
    bad "infinite-loop: no check-exercise hint in its results.json"

# A student's plain check-exercise (--plain: no sanitizer) of the endless loop: the
# hung cases say so, the end suggests the graded run (the sanitizers), and it says
# the score may differ from grading's.
EXERCISE_TOTAL_LIMIT=15 bash "$here/scripts/exercise.sh" check "$name" --source "$class/infinite-loop.c" \
    --build "$out/student" --plain >"$out/student.log" 2>&1
if grep -qE '^        hung: stopped after [0-9]+ s$' "$out/student.log" &&
   grep -qxF '      build names it:  make -f Makefile.tutorial check-exercise EX=stage3-queue' "$out/student.log" &&
   [ "$(grep -c '^note: a plain build, without ASan+UBSan' "$out/student.log")" = 2 ]; then
    echo "ok    plain check-exercise on the endless loop: hung noted, the graded run suggested, the plain build said"
else
    bad "plain check-exercise on the endless loop: no hung note, no graded-run hint or no plain-build note ($out/student.log)"
fi

# ---- 2. stage3-robots: answering with decide() (parking forgotten) loses points ----
rob=$here/stage3_queue/downloadermw/robotstxt.c
mkdir -p "$out/robots-class"
cp "$rob" "$out/robots-class/reference.c"
awk '/^    answer\(f\);$/ && !found { print "    decide(f->o, f->path_query, f->out);"; found = 1; next }
     { print }
     END { if (!found) exit 1 }' "$rob" >"$out/robots-class/no-answer.c" ||
    { echo "grade_test: wait_body's answer(f) not found in $rob"; exit 1; }
GRADE_BUILD=$out/robots-build GRADE_CSV=$out/robots.csv \
    bash "$here/scripts/grade.sh" -j 2 stage3-robots "$out/robots-class" ||
    { echo "grade_test: grade.sh exited $? on stage3-robots"; exit 1; }
CSV=$out/robots.csv
expect reference "full marks" '[ "$score" = "$max" ] && [ "$passed" = "$total" ]'
expect no-answer "parked requests never answered: below full marks" '[ "$score" -lt "$max" ]'
grep -q 'hint: .*a parked request (f->req, its worker gone on) has no \*out to write' "$out/robots-build/logs/no-answer.log" &&
    echo "ok    no-answer: its failures carry the hint about the parked requests" || bad "no-answer: no hint about the parked requests"

# ---- 3. stage3-spider: a Lua spider, whole or missing a step ----------------------
spi=$here/stage3_queue/spiders/course/bookshop.lua
sc=$out/spider-class
mkdir -p "$sc"
cp "$spi" "$sc/reference.lua"
bash "$here/scripts/exercise.sh" copy stage3-spider "$sc/stub.lua"
sed 's/^    local next_shelf = .*/    local next_shelf = nil/' "$spi" >"$sc/no-pagination.lua"
sed 's/^    if not stars and api then$/    if false then/' "$spi" >"$sc/no-api.lua"
sed 's/^function parse(response)$/&\n    while true do end/' "$spi" >"$sc/endless.lua"
# Ours as a whole file of the student's: no header comment, no EXERCISE markers.
awk 'FNR == 1, /^-- EXERCISE stage3-spider: BEGIN/ { next } /^-- EXERCISE stage3-spider: END/ { next } { print }' \
    "$spi" >"$sc/no-markers.lua"
for f in no-pagination no-api endless no-markers; do
    cmp -s "$spi" "$sc/$f.lua" && { echo "grade_test: could not make $f.lua from $spi"; exit 1; }
done
GRADE_BUILD=$out/spider-build GRADE_CSV=$out/spider.csv \
    bash "$here/scripts/grade.sh" -j 2 stage3-spider "$sc" ||
    { echo "grade_test: grade.sh exited $? on stage3-spider"; exit 1; }
CSV=$out/spider.csv
expect reference "full marks" '[ "$score" = "$max" ] && [ "$passed" = "$total" ] && [ -z "$findings$notes" ]'
expect no-markers "a whole file, no markers: full marks, not flagged" \
    '[ "$score" = "$max" ] && [ "$passed" = "$total" ] && [ -z "$findings$notes" ]'
expect stub "a few points (its crawl ends well), far from full marks" '[ "$score" -gt 0 ] && [ $((score * 4)) -lt "$max" ]'
expect no-pagination "partial marks" '[ "$score" -gt 0 ] && [ "$score" -lt "$max" ] && [ "$passed" -lt "$total" ]'
expect no-api "partial marks" '[ "$score" -gt 0 ] && [ "$score" -lt "$max" ] && [ "$passed" -lt "$total" ]'
expect endless "no item: below the stub's marks" '[ "$score" -lt "$max" ] && [ "$passed" -lt "$total" ]'
grep -qF 'hint: Only the first shelf' "$out/spider-build/logs/no-pagination.log" &&
    echo "ok    no-pagination: the hint names the next-page link" || bad "no-pagination: no hint about the next-page link"
grep -qF 'hint: Some pages name their rating' "$out/spider-build/logs/no-api.log" &&
    echo "ok    no-api: the hint names download()" || bad "no-api: no hint about download()"
grep -qF 'spider error' "$out/spider-build/logs/endless.log" &&
    echo "ok    endless: its records say the spider was stopped" || bad "endless: no spider error in its log"
# A second class graded into the same folder: nothing of the first is left there.
nc=$out/spider-class-2
rm -rf "$nc"
mkdir -p "$nc"
cp "$spi" "$nc/next-year.lua"
GRADE_BUILD=$out/spider-build GRADE_CSV=$out/spider.csv \
    bash "$here/scripts/grade.sh" stage3-spider "$nc" >"$out/spider-class-2.log" 2>&1 ||
    { echo "grade_test: grade.sh exited $? on the second stage3-spider class"; exit 1; }
first=$( (cd "$out/spider-build" && find logs results jobs -mindepth 1 -maxdepth 1) |
    grep -vE '^(logs|results)/next-year(\.|/|$)|^jobs/1$' | paste -sd' ')
rows=$(cut -d, -f1 "$out/spider.csv" | tail -n +2 | paste -sd' ')
if [ -z "$first" ] && [ "$rows" = next-year ]; then
    echo "ok    a second class in the same folder: no file of the first left, one row"
else
    bad "a second class in the same folder: the first's files are left (${first:-none}), rows: $rows"
fi
# ---- 4. stage1-read_response: a use-after-free, at home and at grading --------------
s1=$out/stage1-class
rm -rf "$s1" "$out/stage1-home"
mkdir -p "$s1"
fet=$here/stage1_callbacks/fetcher.c
cp "$fet" "$s1/reference.c"
# After fetcher_succeeded (whose done callback frees the Fetcher), f is read.
awk '/^        fetcher_succeeded\(f, false\);$/ && !done {
         print "    {"; print; print "        if (f->sock >= 0)"; print "            return;"; print "    }"; done = 1; next }
     { print }
     END { if (!done) exit 1 }' "$fet" >"$s1/use-after-free.c" ||
    { echo "grade_test: read_response's fetcher_succeeded(f, false) not found in $fet"; exit 1; }
GRADE_BUILD=$out/stage1-build GRADE_CSV=$out/stage1.csv \
    bash "$here/scripts/grade.sh" -j 2 stage1-read_response "$s1" ||
    { echo "grade_test: grade.sh exited $? on stage1-read_response"; exit 1; }
CSV=$out/stage1.csv
expect reference "full marks" '[ "$score" = "$max" ] && [ "$passed" = "$total" ] && [ -z "$findings$notes" ]'
expect use-after-free "below full marks, the heap-use-after-free named in read_response" \
    '[ "$score" -lt "$max" ] && [[ $findings =~ "heap-use-after-free in read_response fetcher.c:"[0-9]+ ]]'
# The student's check-exercise of the same copy: its points are the grading's public ones.
bash "$here/scripts/exercise.sh" check stage1-read_response --source "$s1/use-after-free.c" \
    --build "$out/stage1-home" >"$out/stage1-home.log" 2>&1
home=$(sed -n 's/^points: //p' "$out/stage1-home.log" | tail -n1)
graded=$(awk -F'\t' '$1 == "public" { m += $5; if ($4 == "PASS") s += $5 } END { printf "%d/%d", s, m }' \
    "$out/stage1-build/results/use-after-free/results.tsv")
if [ -n "$home" ] && [ "$home" = "$graded" ] && [ "${home%/*}" -lt "${home#*/}" ]; then
    echo "ok    use-after-free: check-exercise scores it $home, as the grading's public tests do"
else
    bad "use-after-free: check-exercise scores it '$home', the grading's public tests $graded ($out/stage1-home.log)"
fi
grep -q '^SANITIZER  heap-use-after-free in read_response fetcher.c:[0-9]*' "$out/stage1-home.log" &&
    echo "ok    use-after-free: check-exercise names the heap-use-after-free" ||
    bad "use-after-free: check-exercise does not name the heap-use-after-free ($out/stage1-home.log)"
# Hidden points out of what a student sees before publication: the top level of each
# results.json (the total) is not visible at once (results_json.py), and its output
# gives the public tests' points only.
python3 "$here/tests/exercise/results_json.py" "$out"/stage1-build/results/*/results.json ||
    bad "a stage 1 results.json shows hidden points before publication, or is not in Gradescope's shape"
for sub in reference use-after-free; do
    got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["output"].split("\n")[0])' \
        "$out/stage1-build/results/$sub/results.json")
    pub=$(awk -F'\t' '$1 == "public" { n++; m += $5; if ($4 == "PASS") { k++; s += $5 } }
        END { printf "%d/%d passed, %d/%d points.", k, n, s, m }' "$out/stage1-build/results/$sub/results.tsv")
    [[ $got == "stage1-read_response: the public tests: $pub "* ]] &&
        echo "ok    $sub: results.json's output gives the public tests' score only: $pub" ||
        bad "$sub: results.json's output is '$got', not the public tests' $pub"
done
exit $fail
