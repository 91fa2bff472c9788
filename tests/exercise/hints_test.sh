#!/usr/bin/env bash
# hints_test.sh BUILDDIR [EXERCISE...] — the exercises' hints fit the failure's cause,
# and a flaky solution is reported flaky (ctest exercise.hints):
#
# 1. for each exercise, wrong solutions made here from our own code, each wrong in
#    another way, graded as check-exercise grades them (a prebuilt ASan+UBSan tree,
#    the copy compiled against it; stage3-robots's no-answer also --plain, without
#    the sanitizers): under the case that catches each mistake, the hint
#    about that mistake, and not the hint about another's;
# 2. a queue.c that counts down on one path of two, chosen per run (each process
#    counts its runs in a file), graded by scripts/grade.sh: test_workers_and_join,
#    which grade.conf repeats, passes its first run and fails its second, and is
#    FLAKY: failed in the CSV, each run's outcome in its note and in results.json.
#
# The prebuilt trees are grade_test.sh's (BUILDDIR/grade-selftest/...), built here
# when it has not run (ctest runs the two one after the other: RESOURCE_LOCK).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: hints_test.sh BUILDDIR [EXERCISE...]}/grade-selftest
shift
only=" ${*:-} "
fail=0
bad() { echo "FAIL  $*"; fail=1; }
ex=$here/scripts/exercise.sh
plants=$out/hints
rm -rf "$plants"
mkdir -p "$plants"
# A plant that hangs costs its limits: 10 s a crawl, 20 s a unit test, 90 s a copy.
export EXERCISE_TOTAL_LIMIT=${EXERCISE_TOTAL_LIMIT:-90} EXERCISE_UNIT_LIMIT=${EXERCISE_UNIT_LIMIT:-20}
export EXERCISE_CRAWL_LIMIT=${EXERCISE_CRAWL_LIMIT:-10}

# The prebuilt tree of exercise NAME (grade_test.sh's when it has one).
tree_of() {
    case $1 in
        stage3-queue) echo "$out/build/tree" ;;
        stage3-robots) echo "$out/robots-build/tree" ;;
        stage3-spider) echo "$out/spider-build/tree" ;;
        stage1-read_response) echo "$out/stage1-build/tree" ;;
        *) echo "$out/$1-build/tree" ;;
    esac
}

# FILE with the first line that the regular expression RE matches whole replaced by
# NEW (NEW may hold \n); fails when there is none. (A pattern, not the line itself:
# the solution's own lines are what scripts/handout.sh looks for.)
swap() {
    awk -v re="^$2\$" -v new="$3" '$0 ~ re && !d { print new; d = 1; next } { print } END { if (!d) exit 1 }' "$1"
}

# Plant NAME PLANT: make $plants/NAME/PLANT.EXT from stdin; fail when it is empty or
# the same as ours.
plant() {
    local f=$plants/$1/$2 ours
    mkdir -p "$plants/$1"
    cat >"$f"
    ours=$(cd "$here" && grep -rlF --include="*.${2##*.}" "EXERCISE $1: BEGIN" common stage1_callbacks stage2_generators stage3_queue)
    [ -s "$f" ] && ! cmp -s "$f" "$here/$ours" || { echo "hints_test: could not make $1/$2"; exit 1; }
}

# Grade every plant of NAME as check-exercise does, against its prebuilt tree.
grade_plants() {
    local name=$1 tree f p
    tree=$(tree_of "$name")
    bash "$ex" prebuild "$name" --build "$tree" --sanitize >"$plants/$name.prebuild.log" 2>&1 ||
        { bad "$name: the prebuilt tree could not be built ($plants/$name.prebuild.log)"; return 1; }
    for f in "$plants/$name"/*; do
        p=$(basename "$f")
        bash "$ex" check "$name" --source "$f" --build "$plants/$name.jobs/${p%.*}" --prebuilt "$tree" \
            >"$plants/$name.${p%.*}.log" 2>&1
    done
}

# The lines of CASE's failure (its FAIL line and those indented under it) in LOG.
block() {
    awk -v c="$2" '/^(FAIL|PASS|FLAKY) / { on = $0 ~ ("^FAIL .*: " c "( |$)") } on' "$1"
}

# NAME PLANT CASE WANT [NOT]: CASE failed with a hint holding WANT (and none holding NOT).
expect_hint() {
    local name=$1 p=$2 c=$3 want=$4 not=${5:-} log b
    log=$plants/$name.$p.log
    b=$(block "$log" "$c")
    if [ -z "$b" ]; then
        bad "$name $p: $c did not fail ($log)"
    elif ! grep -F 'hint: ' <<<"$b" | grep -qF -- "$want"; then
        bad "$name $p: $c's hints do not say '$want': $(grep -F 'hint: ' <<<"$b" | head -3)"
    elif [ -n "$not" ] && grep -F 'hint: ' <<<"$b" | grep -qF -- "$not"; then
        bad "$name $p: $c's hints say '$not', another mistake's"
    else
        echo "ok    $name $p: $c's hint says '$want'"
    fi
}
want() { [[ $only == "  " || $only == *" $1 "* ]]; }

# ---- stage2-await ----------------------------------------------------------------
co=$here/stage2_generators/coro.c
if want stage2-await; then
    sed 's/^\(        \)if (!future_done(f)) {$/\1if (0) {/' "$co" | plant stage2-await no-wait.c
    swap "$co" '    case FUTURE_DONE: co->value = f->result; return CORO_FINISHED;' \
        '    case FUTURE_DONE: case FUTURE_FAILED: co->value = f->result; return CORO_FINISHED;' |
        swap /dev/stdin '    case FUTURE_FAILED: \\{' '    case 99: {' | plant stage2-await no-raise.c
    # Resumed with the future still pending (a cancel's throw): it waits on.
    swap "$co" '        /\\* Resumed: .*' '        /* Resumed early: wait on. */
        if (!future_done(f))
            return CORO_SUSPENDED;' | plant stage2-await rewait.c
    grade_plants stage2-await
    expect_hint stage2-await no-wait test_gen_fn_step_by_step "went straight on" "went on as if it had a result"
    expect_hint stage2-await no-raise test_failed_future_raises_at_await "went on as if it had a result" "went straight on"
    expect_hint stage2-await no-raise test_task_as_future_error "must hand that error on"
    expect_hint stage2-await rewait test_cancel_at_await_point "how can it tell a throw" "that resume was a throw"
    expect_hint stage2-await rewait test_cancel_while_reading "how can it tell a throw" "went straight on"
fi

# ---- stage2-task_step --------------------------------------------------------------
tk=$here/stage2_generators/task.c
if want stage2-task_step; then
    swap "$tk" '        future_add_done_callback\\(next_future, wakeup, t\\);' '        (void)wakeup;' |
        plant stage2-task_step no-wakeup.c
    swap "$tk" '    if \\(!e\\) \\{' '    if (1) {
        coro_error_free(e);' | plant stage2-task_step no-error.c
    # A detached task never freed when it ends.
    swap "$tk" '        task_free\\(t\\);' '        (void)0;' | plant stage2-task_step no-detach-free.c
    grade_plants stage2-task_step
    expect_hint stage2-task_step no-wakeup test_gen_fn_step_by_step "nobody subscribed" "resolved with that error"
    expect_hint stage2-task_step no-wakeup test_gen_fn_driven_by_task "stepped again" "resolved with that error"
    expect_hint stage2-task_step no-error test_task_as_future_error "resolved with that error" "nobody subscribed"
    expect_hint stage2-task_step no-detach-free test_free_pending_task_cancels_it "whose job is it to free it" "still points at"
fi

# ---- stage3-queue -------------------------------------------------------------------
q=$here/stage3_queue/queue.c
if want stage3-queue; then
    # The chapter's join without its re-arming: it awaits, once, a future that an
    # earlier round resolved.
    swap "$q" '            future_clear\\(&f->q->join_future\\); /\\* resolved before: wait anew \\*/' '            ;' |
        swap /dev/stdin '    while \\(f->q->unfinished_tasks > 0\\) \\{' '    if (f->q->unfinished_tasks > 0) {' |
        plant stage3-queue no-rearm.c
    # No guard: a task_done with nothing unfinished wraps the count round.
    awk '/^void queue_task_done\(queue \*q\)$/ { w = 1 } w && /^    if \(q->unfinished_tasks == 0\)$/ { getline; w = 0; d = 1; next }
         { print } END { if (!d) exit 1 }' "$q" | plant stage3-queue wraps.c
    # The joiners woken from inside task_done.
    swap "$q" '        q->join_wakeup = selector_call_soon\\(q->loop, wake_joiners, q\\);' \
        '        wake_joiners(q->loop, q);' | plant stage3-queue inline-wake.c
    grade_plants stage3-queue
    expect_hint stage3-queue no-rearm test_join_again_after_done "before it awaits that future again" "size_t"
    expect_hint stage3-queue wraps test_extra_task_done_is_ignored "size_t" "before it awaits that future again"
    expect_hint stage3-queue inline-wake test_wakeup_is_scheduled "from the loop" "size_t"
fi

# ---- stage1-read_response -------------------------------------------------------------
fe=$here/stage1_callbacks/fetcher.c
if want stage1-read_response; then
    # The peer's close taken for the response's end, whatever the parser says.
    swap "$fe" '    int r = n > 0 \\? http_parser_feed\\(f->parser, chunk, \\(size_t\\)n\\) : http_parser_eof\\(f->parser\\);' \
        '    int r = n > 0 ? http_parser_feed(f->parser, chunk, (size_t)n) : 1;' | plant stage1-read_response close-is-end.c
    # --max-size never asked.
    sed 's/^\(    \)if (crawl_fetch_full(f->response))$/\1if (0 \&\& crawl_fetch_full(f->response))/' "$fe" |
        plant stage1-read_response no-max-size.c
    grade_plants stage1-read_response
    expect_hint stage1-read_response close-is-end test_hostile_short_body "cut short" "--max-size"
    expect_hint stage1-read_response no-max-size test_hostile_max_size "--max-size" "cut short"
fi

# ---- stage3-robots ----------------------------------------------------------------------
rob=$here/stage3_queue/downloadermw/robotstxt.c
if want stage3-robots; then
    # Parked requests forgotten: the answer written with decide() itself.
    swap "$rob" '    answer\\(f\\);' '    decide(f->o, f->path_query, f->out);' | plant stage3-robots no-answer.c
    # A robots.txt download per request, not per origin.
    swap "$rob" '    origin \\*o = origin_find\\(mw, key\\);' "    origin *o = key[0] ? NULL : origin_find(mw, key);" |
        plant stage3-robots per-request.c
    grade_plants stage3-robots
    expect_hint stage3-robots no-answer test_robots_parked "has no *out to write" "one entry"
    expect_hint stage3-robots per-request test_robots_shared "one entry" "has no *out to write"
    # The same hint without the sanitizers (check --plain): it keys on the crawler's
    # own words, not on UBSan's.
    bash "$ex" check stage3-robots --source "$plants/stage3-robots/no-answer.c" --plain \
        --build "$plants/stage3-robots.jobs/no-answer-plain" >"$plants/stage3-robots.no-answer-plain.log" 2>&1
    expect_hint stage3-robots no-answer-plain test_robots_parked "has no *out to write" "one entry"
fi

# ---- stage3-spider -----------------------------------------------------------------------
spi=$here/stage3_queue/spiders/course/bookshop.lua
if want stage3-spider; then
    sed 's/^    local next_shelf = .*/    local next_shelf = nil/' "$spi" | plant stage3-spider no-pagination.lua
    sed 's/^    if not stars and api then$/    if false then/' "$spi" | plant stage3-spider no-api.lua
    grade_plants stage3-spider
    expect_hint stage3-spider no-pagination test_shop_pagination "next one" "data-api"
    expect_hint stage3-spider no-api test_shop_api_ratings "data-api" "next one"
    # The next step, never the answer: no hint of the spider's gives an XPath.
    grep -E '^hint ' "$here/docs/exercises/stage3-spider/grade.conf" | grep -qE "xpath\(|//a\[" &&
        bad "stage3-spider: a hint gives an XPath, the answer" ||
        echo "ok    stage3-spider: no hint gives an XPath"
fi

# ---- flaky: a queue.c right in one run of two ------------------------------------------------
if want flaky; then
    fc=$out/flaky-class
    rm -rf "$fc" "$out/flaky-runs"
    mkdir -p "$fc"
    # Each process counts itself in flaky-runs; the odd ones never count down.
    awk -v runs="$out/flaky-runs" '
        { print }
        /^void queue_task_done\(queue \*q\)$/ { w = 1; next }
        w && /^\{$/ {
            print "    static int run = -1;"
            print "    if (run < 0) {"
            print "        FILE *c = fopen(\"" runs "\", \"a+\");"
            print "        run = 0;"
            print "        if (c) {"
            print "            fseek(c, 0, SEEK_END);"
            print "            run = (int)ftell(c);"
            print "            fputc(1, c);"
            print "            fclose(c);"
            print "        }"
            print "    }"
            print "    if (run % 2 == 1)"
            print "        return;"
            w = 0; d = 1 }
        END { if (!d) exit 1 }' "$q" >"$fc/flaky.c" || { echo "hints_test: queue_task_done not found in $q"; exit 1; }
    GRADE_HIDDEN=none GRADE_BUILD=$out/build GRADE_CSV=$out/flaky.csv \
        bash "$here/scripts/grade.sh" stage3-queue "$fc" >"$out/flaky.log" 2>&1 ||
        bad "grade.sh exited $? on the flaky class ($out/flaky.log)"
    log=$out/build/logs/flaky.log
    if grep -qE '^FLAKY  ?test_queue: test_workers_and_join \(passed 2 of 3 runs: PASS, FAIL, PASS; scored as failed\)$' "$log"; then
        echo "ok    flaky: test_workers_and_join is FLAKY, its runs PASS, FAIL, PASS"
    else
        bad "flaky: no FLAKY line for test_workers_and_join ($log): $(grep -E '^(FLAKY|FAIL|PASS) .*test_workers_and_join' "$log")"
    fi
    grep -q 'flaky: test_workers_and_join (PASS FAIL PASS)' "$out/flaky.csv" &&
        echo "ok    flaky: the CSV's note names the flaky case and its runs" ||
        bad "flaky: the CSV has no flaky note ($(tail -n1 "$out/flaky.csv" | cut -c1-300))"
    j=$out/build/results/flaky/results.json
    python3 "$here/tests/exercise/results_json.py" "$j" || bad "flaky: its results.json is not in Gradescope's shape"
    got=$(python3 -c 'import json,sys
t=[t for t in json.load(open(sys.argv[1]))["tests"] if t["name"].endswith(": test_workers_and_join")][0]
print(t["status"], t["score"], t.get("extra_data", {}).get("runs"), "flaky" in t["output"])' "$j" 2>&1)
    [ "$got" = "failed 0 ['passed', 'failed', 'passed'] True" ] &&
        echo "ok    flaky: results.json scores it failed, with each run's outcome" ||
        bad "flaky: results.json says '$got'"
fi
exit $fail
