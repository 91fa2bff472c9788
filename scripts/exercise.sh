#!/usr/bin/env bash
# exercise.sh — the course's graded exercises (docs/exercises.md).
#
#   scripts/exercise.sh list                          the exercises
#   scripts/exercise.sh start NAME [--force]          exercise-NAME/: your copy + README
#   scripts/exercise.sh check NAME [--source FILE] [--build DIR]
#                                                     build with your copy, grade it
#   scripts/exercise.sh selftest NAME [--build DIR]   the grader fails the stub and
#                                                     passes our code (ctest -L exercise)
#
# An exercise is a region of one of our source files, between the lines
#   /* EXERCISE NAME: BEGIN ... */   and   /* EXERCISE NAME: END */
# and a directory docs/exercises/NAME/ holding README.md (the task), stub.c (what
# replaces the region in the student's copy) and grade.conf (the tests that grade it).
# The student's copy is our file with the region replaced by the stub; `check` builds
# the whole project in build-exercise-NAME/ with that copy compiled instead of ours
# (scripts/exercise.cmake) and runs the tests of grade.conf.
#
# Environment: JOBS (parallel compile jobs, 2), EXERCISE_CRAWL_LIMIT (seconds one
# crawler run may take in a scenario, 15), EXERCISE_GUARD_MS (a unit test's guard
# timer, 1000).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EXDIR=$ROOT/docs/exercises
SRC_DIRS=(common stage1_callbacks stage2_generators stage3_queue)
JOBS=${JOBS:-2}
CRAWL_LIMIT=${EXERCISE_CRAWL_LIMIT:-15}
GUARD_MS=${EXERCISE_GUARD_MS:-1000}
UNIT_TIMEOUT=120        # seconds for one unit-test binary, all its cases
SCENARIO_TIMEOUT=300    # seconds for one scenarios run, all its cases

die() { echo "exercise: $*" >&2; exit 2; }

names() {
    local d
    for d in "$EXDIR"/*/; do
        [ -f "$d/stub.c" ] && basename "$d"
    done
}

list() {
    local n title
    echo "Exercises (docs/exercises.md):"
    for n in $(names); do
        title=$(sed -n '1s/^# *//p' "$EXDIR/$n/README.md")
        title=${title#"$n: "}
        printf '  %-22s %s\n' "$n" "$title"
    done
}

need_name() {
    local n=${1:-}
    if [ -z "$n" ] || [ ! -f "$EXDIR/$n/stub.c" ]; then
        list >&2
        die "${n:+no exercise '$n'; }give one of the names above (EX=name)"
    fi
}

# The source file (relative to the tree) that holds NAME's region.
region_file() {
    local files
    files=$(cd "$ROOT" && { grep -rlF --include='*.c' "EXERCISE $1: BEGIN" "${SRC_DIRS[@]}" || true; })
    [ -n "$files" ] || die "no source file has the marker 'EXERCISE $1: BEGIN'"
    [ "$(echo "$files" | wc -l)" -eq 1 ] || die "several files have the marker of $1: $files"
    echo "$files"
}

# Write to OUT our file with NAME's region replaced by its stub (markers kept).
make_copy() {
    local name=$1 out=$2 rel
    rel=$(region_file "$name")
    awk -v b="EXERCISE $name: BEGIN" -v e="EXERCISE $name: END" -v stub="$EXDIR/$name/stub.c" '
        index($0, b) { print; while ((getline l < stub) > 0) print l; skip = 1; nb++; next }
        index($0, e) { print; skip = 0; ne++; next }
        !skip { print }
        END { if (nb != 1 || ne != 1 || skip) exit 1 }
    ' "$ROOT/$rel" > "$out" || die "$rel: the markers of $name are not one BEGIN then one END"
}

start() {
    local name=$1 force=$2 rel dest
    rel=$(region_file "$name")
    dest=$ROOT/exercise-$name
    if [ -e "$dest" ] && [ "$force" != 1 ]; then
        die "$dest exists (your work?). To start again from the stub, losing it: FORCE=1"
    fi
    rm -rf "$dest"
    mkdir -p "$dest"
    make_copy "$name" "$dest/$(basename "$rel")"
    cp "$EXDIR/$name/README.md" "$dest/README.md"
    echo "exercise-$name/ is ready:"
    printf '  %-40s %s\n' "exercise-$name/README.md" "the task" \
        "exercise-$name/$(basename "$rel")" "your copy of $rel: write between the EXERCISE markers"
    echo "Check it with:  make -f Makefile.tutorial check-exercise EX=$name"
    echo "Start again:    make -f Makefile.tutorial exercise EX=$name FORCE=1"
}

# ---- grading -----------------------------------------------------------------------

PASSED=0
TOTAL=0

# Run a cmocka program (the rest of the arguments) with a time limit, print PASS or
# FAIL for each of its cases (with the first lines of a failure's message), and add
# them to PASSED and TOTAL. A case that never reported (a crash, the time limit)
# counts as failed.
run_cmocka() {
    local label=$1 log=$2 limit=$3 rc=0 pass fail
    shift 3
    timeout -k 5 "$limit" stdbuf -oL -eL "$@" > "$log" 2>&1 || rc=$?
    awk -v label="$label" -v rc="$rc" -v counts="$log.counts" '
        function flush_msg(   i) { for (i = 1; i <= nmsg; i++) print "        " msg[i]; nmsg = 0 }
        /^\[==========\] Running [0-9]+ test/ { planned = $3 + 0; next }
        /^\[ RUN      \] / { cur = substr($0, 14); nmsg = 0; next }
        /^\[[ A-Z]+\] --- / { if (cur != "" && nmsg < 5) { sub(/^\[[ A-Z]+\] --- /, ""); msg[++nmsg] = $0 }; next }
        /^\[       OK \] / && cur != "" { print "PASS  " label ": " cur; pass++; cur = ""; next }
        /^\[  (FAILED|ERROR|SKIPPED) *\] / && cur != "" {
            print "FAIL  " label ": " cur; flush_msg(); fail++; cur = ""; next }
        cur != "" && NF > 0 && !/^--- / && nmsg < 5 { msg[++nmsg] = $0 }
        END {
            why = rc == 124 || rc == 137 ? "the time limit" : "exit status " rc
            if (cur != "") {
                print "FAIL  " label ": " cur " (did not finish: " why ")"; flush_msg(); fail++
            }
            left = planned - pass - fail
            if (pass + fail == 0 && left <= 0)
                left = 1
            if (left > 0)
                print "FAIL  " label ": " left " case(s) never ran (" why ")"
            print pass + 0, fail + (left > 0 ? left : 0) > counts
        }' "$log"
    read -r pass fail < "$log.counts"
    PASSED=$((PASSED + pass))
    TOTAL=$((TOTAL + pass + fail))
}

# Build the project in BUILD with SOURCE in place of NAME's file; run grade.conf.
# Prints one PASS/FAIL line per test and "NAME: P/T passed". 0 when all passed.
check() {
    local name=$1 source=$2 build=$3 rel conf targets kind a b c d logs
    rel=$(region_file "$name")
    conf=$EXDIR/$name/grade.conf
    [ -f "$source" ] || die "$source does not exist: start the exercise first:
  make -f Makefile.tutorial exercise EX=$name"
    source=$(cd "$(dirname "$source")" && pwd)/$(basename "$source")
    mkdir -p "$build"
    build=$(cd "$build" && pwd)
    logs=$build/grade
    rm -rf "$logs"
    mkdir -p "$logs"

    targets=""
    while read -r kind a b c d; do
        case $kind in
            unit) targets="$targets $a" ;;
            scenario) targets="$targets scenarios" ;;
        esac
    done < <(grep -Ev '^[[:space:]]*(#|$)' "$conf")

    echo "== $name: building $rel from $source in $build"
    if ! cmake -S "$ROOT" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
            -DCRAWL_EXERCISE_FILE="$rel" -DCRAWL_EXERCISE_SOURCE="$source" \
            > "$build/configure.log" 2>&1; then
        tail -20 "$build/configure.log"
        echo "$name: the configure step failed ($build/configure.log)"
        return 1
    fi
    # shellcheck disable=SC2086
    if ! cmake --build "$build" -j"$JOBS" --target $targets > "$build/build.log" 2>&1; then
        grep -E -A4 'error|warning' "$build/build.log" | head -60
        echo "$name: 0 passed: the build failed (the whole log: $build/build.log)"
        return 1
    fi
    grep -F "$(basename "$source"):" "$build/build.log" | grep -E 'warning|error' || true

    echo "== $name: grading"
    ulimit -c 0 2>/dev/null || true     # a crashing solution leaves no core files about
    PASSED=0
    TOTAL=0
    local i=0
    while read -r kind a b c d; do
        i=$((i + 1))
        case $kind in
            unit)
                CRAWL_TEST_GUARD_MS=$GUARD_MS run_cmocka "$a" "$logs/$i-$a.log" \
                    "$UNIT_TIMEOUT" "$build/bin/$a" ;;
            scenario)
                SCENARIO_FILTER=${d:-} SCENARIO_TIME_LIMIT=$CRAWL_LIMIT \
                    run_cmocka "scenario ${a#crawl-} $b $c" "$logs/$i-scenario-${a#crawl-}-$b-$c.log" \
                    "$SCENARIO_TIMEOUT" "$build/bin/scenarios" "$build/bin/$a" "$b" "$c" ;;
            *) die "$conf: unknown line '$kind $a $b $c $d'" ;;
        esac
    done < <(grep -Ev '^[[:space:]]*(#|$)' "$conf")
    echo "(the tests' whole output: $logs/)"
    echo "$name: $PASSED/$TOTAL passed"
    [ "$TOTAL" -gt 0 ] && [ "$PASSED" -eq "$TOTAL" ]
}

# The grader fails the untouched stub and passes our own code, both built in DIR.
selftest() {
    local name=$1 dir=$2 rel src out rc t0 stub_score
    rel=$(region_file "$name")
    mkdir -p "$dir/src"
    dir=$(cd "$dir" && pwd)
    src=$dir/src/$(basename "$rel")
    t0=$SECONDS

    make_copy "$name" "$src"
    rc=0
    out=$(check "$name" "$src" "$dir/build" 2>&1) || rc=$?
    echo "$out"
    stub_score=$(echo "$out" | tail -1)
    if [ "$rc" -eq 0 ] || ! echo "$out" | grep -q '^FAIL '; then
        echo "selftest $name: FAILED: the grader passed the stub"
        return 1
    fi
    if ! echo "$out" | grep -q "passed$"; then
        echo "selftest $name: FAILED: the stub was not graded (did it compile?)"
        return 1
    fi
    if grep -F "$src:" "$dir/build/build.log" | grep -q 'warning'; then
        echo "selftest $name: FAILED: the stub compiles with warnings"
        return 1
    fi

    cp "$ROOT/$rel" "$src"
    if ! check "$name" "$src" "$dir/build"; then
        echo "selftest $name: FAILED: the grader failed our own $rel"
        return 1
    fi
    echo "selftest $name: ok — stub ${stub_score#"$name: "}, ours all passed ($((SECONDS - t0)) s)"
}

cmd=${1:-list}
shift || true
case $cmd in
    list) list ;;
    start)
        name=${1:-}
        need_name "$name"
        force=${FORCE:-0}
        [ "${2:-}" = --force ] && force=1
        start "$name" "$force" ;;
    check|selftest)
        name=${1:-}
        need_name "$name"
        shift
        source="" build=""
        while [ $# -gt 0 ]; do
            case $1 in
                --source) source=$2; shift 2 ;;
                --build) build=$2; shift 2 ;;
                *) die "unknown argument $1" ;;
            esac
        done
        if [ "$cmd" = check ]; then
            rel=$(region_file "$name")
            check "$name" "${source:-$ROOT/exercise-$name/$(basename "$rel")}" \
                "${build:-$ROOT/build-exercise-$name}"
        else
            selftest "$name" "${build:-$ROOT/build-exercise-selftest-$name}"
        fi ;;
    *) die "unknown command $cmd (list, start, check, selftest)" ;;
esac
