#!/usr/bin/env bash
# handout_test.sh BUILDDIR — scripts/handout.sh makes a copy for students (ctest
# exercise.handout): a git repository of one commit and nothing else, each exercise's
# file exactly the student's starting copy, no line of a solution in what is committed,
# the docs' excerpts and side-by-side listings still true, the listing example withheld
# with stage3-spider (and kept without it), (those of the exercises left
# out), no hidden test nor teacher-only text, other code that
# shows a solution stubbed (and the six-line shape check catching it when put back),
# HANDOUT.md's graph, no selftest of a handed-out exercise, each exercise handed out
# alone passing its leak check, the grader working there (it passes our stage 1
# solution, built in the handout), docs/teaching.md's plan (its weeks counted, its
# shorter course's handout command working), and `demo` naming the exercises to do,
# each with the program it runs in.
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
    rel=$(cd "$here" && grep -rlF --include='*.c' --include='*.lua' "EXERCISE $n: BEGIN" common stage1_callbacks stage2_generators stage3_queue)
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

# docs/side-by-side.md: its listings are the copy's code, and those of the exercises'
# functions are left out, with the comment that pairs their lines (solution text).
(cd "$copy" && bash scripts/regen-docs.sh --check listings >"$out/listings.log" 2>&1) &&
    ok "the side-by-side listings hold in the handout" ||
    bad "the side-by-side listings are stale in the handout: $(tail -n 3 "$out/listings.log")"
for fn in read_response task_step queue_task_done join_body; do
    grep -q "listing of \`$fn\` is left out of the handout" "$copy/docs/side-by-side.md" &&
        ! grep -q "^<!-- side-by-side: [^ ]* $fn\$" "$copy/docs/side-by-side.md" &&
        ok "side-by-side.md: the listing of $fn is left out" ||
        bad "side-by-side.md: the listing of $fn (an exercise) is in the handout"
done

# What only the teacher has is not there: hidden tests, the teacher's part of the docs.
hidden=$(cd "$copy" && ls docs/exercises/*/hidden.conf 2>/dev/null)
[ -z "$hidden" ] && ok "no hidden test set in the handout" || bad "hidden tests in the handout: $hidden"
for md in $(cd "$here" && git grep -l '<!-- teacher-only: BEGIN' -- '*.md'); do
    ! grep -q 'teacher-only' "$copy/$md" && grep -q "teacher's part of this page is not in the handout" "$copy/$md" &&
        ok "$md: its teacher-only part is left out" || bad "$md: the teacher-only part is in the handout"
done

# Other code showing a solution's pattern is stubbed (handout.conf), and the check of
# six-line shapes catches it when it is not: our own rjoin_body (a join re-arming its
# Future as queue.c's does, under another name) put back into the copy.
grep -q 'AWAIT(co, sock_sleep(10));' "$copy/stage3_queue/frontier/redisqueue.c" &&
    ok "redisqueue.c's rjoin_body is stubbed" || bad "redisqueue.c's rjoin_body is not stubbed"
bash "$here/scripts/handout.sh" --check "$copy" >"$out/check.log" 2>&1 &&
    ok "handout.sh --check passes on the handout" || bad "handout.sh --check fails on the handout: $(cat "$out/check.log")"
awk '/^static int rjoin_body\(coro \*co\)$/ { p = 1 } p { print } p && /^}$/ { exit }' \
    "$here/stage3_queue/frontier/redisqueue.c" >"$copy/stage3_queue/leak.c"
[ -s "$copy/stage3_queue/leak.c" ] || bad "rjoin_body not found in redisqueue.c"
if bash "$here/scripts/handout.sh" --check "$copy" stage3-queue >"$out/leak.log" 2>&1; then
    bad "the shape check missed our rjoin_body in the copy"
else
    grep -q 'stage3-queue: stage3_queue/leak.c:[0-9]*: ' "$out/leak.log" &&
        ok "the shape check finds rjoin_body put back: $(grep -m1 leak.c "$out/leak.log" | sed 's/^ *//')" ||
        bad "the shape check failed without naming leak.c: $(cat "$out/leak.log")"
fi
rm -f "$copy/stage3_queue/leak.c"
# ... and the task_done half of the Redis frontier's join, its wake-up, is stubbed too.
! grep -q 'selector_call_soon(q->loop, rwake_joiners' "$copy/stage3_queue/frontier/redisqueue.c" &&
    ok "redisqueue.c's scheduled wake-up is stubbed" || bad "redisqueue.c's scheduled wake-up is in the handout"

# A renamed copy is caught as well: our read_response with every local renamed, planted
# in a file of the handout, fails the check (names do not hide a shape).
awk '/^static void read_response\(.*\)$/ { p = 1 } p { print } p && /^}$/ { exit }' \
    "$here/stage1_callbacks/fetcher.c" |
    sed 's/read_response/on_readable/; s/\bf\b/ftch/g; s/\bn\b/got/g; s/\bchunk\b/buffer/g; s/\br\b/rc/g; s/\berr\b/why/g' \
        >"$copy/stage1_callbacks/notes.c"
if ! grep -q 'ftch->parser' "$copy/stage1_callbacks/notes.c"; then
    bad "read_response not found or not renamed"
elif bash "$here/scripts/handout.sh" --check "$copy" stage1-read_response >"$out/renamed.log" 2>&1; then
    bad "the shape check missed a renamed read_response"
else
    grep -q 'stage1-read_response: stage1_callbacks/notes.c:[0-9]*: ' "$out/renamed.log" &&
        ok "the shape check finds a renamed read_response" ||
        bad "the shape check failed without naming notes.c: $(cat "$out/renamed.log")"
fi
rm -f "$copy/stage1_callbacks/notes.c"
# ... and so is every exercise's solution with all its names changed, wherever it is put:
# beside other code, among the tests, in the docs (renamed_copy.py).
places=(stage3_queue/notes tests/unit/notes docs/notes)
i=0
for n in $names; do
    rel=$(cd "$here" && grep -rlF --include='*.c' --include='*.lua' "EXERCISE $n: BEGIN" common stage1_callbacks stage2_generators stage3_queue)
    plant=${places[i % ${#places[@]}]}.${rel##*.}
    i=$((i + 1))
    if ! python3 "$here/tests/exercise/renamed_copy.py" "$n" "$here/$rel" >"$copy/$plant"; then
        bad "$n: no renamed copy of its region in $rel"
    elif bash "$here/scripts/handout.sh" --check "$copy" "$n" >"$out/renamed-$n.log" 2>&1; then
        bad "$n: the shape check missed its solution renamed in $plant"
    else
        grep -q "$n: $plant:[0-9]*: " "$out/renamed-$n.log" && ok "$n: its solution renamed in $plant is caught" ||
            bad "$n: the check failed without naming $plant: $(cat "$out/renamed-$n.log")"
    fi
    rm -f "$copy/$plant"
done

# Nothing hidden: no tests/hidden/, and a hidden case's data or name planted in the copy
# fails the check.
[ ! -e "$copy/tests/hidden" ] && ok "no tests/hidden/ in the handout" || bad "tests/hidden/ is in the handout"
[ ! -e "$copy/tests/exercise/grade_test.sh" ] && [ ! -e "$copy/tests/exercise/hints_test.sh" ] &&
    ok "the graders' own tests (edited solutions) are not in the handout" ||
    bad "grade_test.sh or hints_test.sh is in the handout"
if [ -d "$here/tests/hidden" ]; then
    line=$(grep -m1 -F '"/book/' "$here/tests/hidden/bookshop_hidden.h")
    printf '/* planted */\nstatic const char *x[] = {%s};\n' "$line" >"$copy/tests/unit/planted.c"
    if bash "$here/scripts/handout.sh" --check "$copy" >"$out/hidden.log" 2>&1; then
        bad "the check missed a hidden expected value planted in the copy"
    else
        grep -q 'tests/unit/planted.c:' "$out/hidden.log" && ok "a hidden expected value in the copy is caught" ||
            bad "the check failed without naming planted.c: $(cat "$out/hidden.log")"
    fi
    rm -f "$copy/tests/unit/planted.c"
    case=$(sed -n 's/^scenario [^ ]* [^ ]* [^ ]* \([^,]*\).*/\1/p' "$here/docs/exercises/stage1-read_response/hidden.conf")
    echo "Try $case too." >>"$copy/docs/exercises/stage1-read_response/README.md"
    if bash "$here/scripts/handout.sh" --check "$copy" >"$out/hidden.log" 2>&1; then
        bad "the check missed a hidden case's name ($case) in the copy"
    else
        grep -q 'README.md:' "$out/hidden.log" && ok "a hidden case's name in the copy is caught" ||
            bad "the check failed without naming README.md: $(cat "$out/hidden.log")"
    fi
    sed -i '$d' "$copy/docs/exercises/stage1-read_response/README.md"
fi

# HANDOUT.md has the exercises' dependency graph; the tree says which are to do.
grep -q 'stage3-queue --> stage3-robots' "$copy/HANDOUT.md" && grep -q '^| `stage3-queue` | `stage2-task_step`, `stage2-await` |' "$copy/HANDOUT.md" &&
    ok "HANDOUT.md has the dependency graph" || bad "HANDOUT.md has no dependency graph"
todo=$(cd "$copy" && bash scripts/exercise.sh todo | cut -d' ' -f1 | paste -sd' ')
[ "$todo" = "$(echo $names)" ] && ok "exercise.sh todo in the handout: $todo" || bad "exercise.sh todo says '$todo', not '$(echo $names)'"

# A plain configure: no selftest of an exercise that is handed out.
cmake -S "$copy" -B "$out/configured" -DCMAKE_BUILD_TYPE=Debug >"$out/configure.log" 2>&1 ||
    bad "the handout does not configure ($out/configure.log)"
left=$(ctest --test-dir "$out/configured" -N -L exercise 2>/dev/null | sed -n 's/^Total Tests: //p')
[ "$left" = 0 ] && ok "no exercise test registered in the handout" || bad "exercise tests in the handout: $left"

# The grader, in the handout, on our stage 1 solution.
if (cd "$copy" && EXERCISE_CRAWL_LIMIT=10 bash scripts/exercise.sh check stage1-read_response --plain \
        --source "$here/stage1_callbacks/fetcher.c" --build "$out/grade") >"$out/grade.log" 2>&1; then
    ok "the grader in the handout: $(tail -n1 "$out/grade.log")"
else
    bad "the grader in the handout failed our solution: $(tail -n1 "$out/grade.log") ($out/grade.log)"
fi
# Each exercise handed out alone passes its own leak check (and makes its handout).
for n in $names; do
    if bash "$here/scripts/handout.sh" "$out/one-$n" "$n" >"$out/one-$n.log" 2>&1; then
        ok "a handout of $n alone passes its leak check"
        # The listing example is nearly the spider's solution: withheld with it, kept
        # with the others (docs/exercises/stage3-spider/handout.conf).
        l=stage3_queue/spiders/examples/listing.lua
        if [ "$n" = stage3-spider ]; then
            [ ! -e "$out/one-$n/$l" ] && grep -qF "\`$l\` (\`stage3-spider\`)" "$out/one-$n/HANDOUT.md" &&
                ok "$n: $l withheld, and HANDOUT.md says so" || bad "$n: $l is in its handout (or HANDOUT.md does not say it is withheld)"
        elif [ ! -f "$out/one-$n/$l" ]; then
            bad "$n: a handout without stage3-spider lacks $l"
        fi
    else
        bad "a handout of $n alone fails: $(tail -n3 "$out/one-$n.log")"
    fi
    rm -rf "$out/one-$n"
done

# docs/teaching.md: its plan's heading counts the weeks of its table, and the shorter
# course's handout command (EXERCISES=...) makes a handout with those exercises to do.
t=$here/docs/teaching.md
weeks=$(sed -n 's/^## A lab plan: \([a-z]*\) weeks$/\1/p' "$t")
rows=$(awk '/^## A lab plan: / { p = 1; next } p && /^## / { exit } p && /^\| [0-9]+ \|/ { n++ } END { print n + 0 }' "$t")
words=(zero one two three four five six seven eight nine ten)
[ -n "$weeks" ] && [ "$weeks" = "${words[$rows]:-}" ] && ok "teaching.md: a plan of $weeks weeks, $rows rows" ||
    bad "teaching.md: the plan's heading says '${weeks:-nothing}' weeks over $rows rows"
short=$(sed -n 's/^ *make -f Makefile.tutorial handout .*EXERCISES="\([^"]*\)".*$/\1/p' "$t" | head -n1)
if [ -z "$short" ]; then
    bad "teaching.md: the shorter course has no handout command with EXERCISES=..."
elif bash "$here/scripts/handout.sh" "$out/short" $short >"$out/short.log" 2>&1 &&
     [ "$(cd "$out/short" && bash scripts/exercise.sh todo | cut -d' ' -f1 | paste -sd' ')" = "$(echo $short)" ]; then
    ok "teaching.md's shorter course: its handout command makes a handout of $short"
else
    bad "teaching.md's shorter course: EXERCISES=\"$short\" makes no handout of those ($out/short.log)"
fi
rm -rf "$out/short"

# make demo in the handout: the exercises still to do, by name, and no error.
if (cd "$copy" && bash scripts/demo.sh "$out/grade/bin") >"$out/demo.log" 2>&1; then
    missing=""
    for n in $names; do grep -q "^  $n " "$out/demo.log" || missing="$missing $n"; done
    [ -z "$missing" ] && ok "demo in the handout names the exercises to do, and exits 0" ||
        bad "demo in the handout does not name:$missing ($out/demo.log)"
    # Each of those lines names the program its exercise's code runs in.
    unnamed=$(grep -E '^  [a-z0-9_-]+ +\(' "$out/demo.log" | grep -vE 'crawl-(callbacks|generators|queue)' || true)
    [ -z "$unnamed" ] && ! grep -q 'by )' "$out/demo.log" &&
        ok "demo in the handout names, for each exercise to do, the program that runs it" ||
        bad "demo in the handout has an exercise without its program: $unnamed"
else
    bad "demo in the handout failed: $(tail -n3 "$out/demo.log")"
fi
exit $fail
