#!/usr/bin/env bash
# exercise.sh — the course's graded exercises (docs/exercises.md).
#
#   scripts/exercise.sh list                          the exercises
#   scripts/exercise.sh start NAME [--force]          exercise-NAME/: your copy + README
#   scripts/exercise.sh check NAME [--source FILE] [--build DIR] [--sanitize]
#                                                     build with your copy, grade it
#   scripts/exercise.sh copy NAME FILE                FILE: the student's starting copy
#                                                     (our file, region replaced by stub)
#   scripts/exercise.sh outside NAME FILE             the diff of FILE against the stub
#                                                     copy, outside the markers (exit 1
#                                                     when there is one)
#   scripts/exercise.sh selftest NAME [--build DIR]   the grader fails the stub and
#                                                     passes our code (ctest -L exercise)
#   scripts/exercise.sh figures --build DIR           docs/exercises.md's table, from the
#                                                     figures the selftests in DIR measured
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
# timer, 1000), EXERCISE_UNIT_LIMIT and EXERCISE_SCENARIO_LIMIT (seconds for one unit
# test program, 120, and one scenarios run, 300), EXERCISE_TOTAL_LIMIT (seconds for all
# the tests of one check, 0 = no limit: a test started after it gets 1 s, enough to
# say how many cases it has), EXERCISE_MEMORY_MB (--sanitize: the RSS one test process
# may reach, 1024).
#
# --sanitize builds with ASan+UBSan and names each memory or undefined-behaviour bug
# the tests ran into (SANITIZER lines): scripts/grade.sh grades a class this way.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EXDIR=$ROOT/docs/exercises
SRC_DIRS=(common stage1_callbacks stage2_generators stage3_queue)
JOBS=${JOBS:-2}
CRAWL_LIMIT=${EXERCISE_CRAWL_LIMIT:-15}
GUARD_MS=${EXERCISE_GUARD_MS:-1000}
UNIT_TIMEOUT=${EXERCISE_UNIT_LIMIT:-120}          # one unit-test binary, all its cases
SCENARIO_TIMEOUT=${EXERCISE_SCENARIO_LIMIT:-300}  # one scenarios run, all its cases
TOTAL_LIMIT=${EXERCISE_TOTAL_LIMIT:-0}            # all the tests of one check
MEMORY_MB=${EXERCISE_MEMORY_MB:-1024}

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

# NAME's region of FILE (the lines between the markers), on stdout.
region_of() {
    awk -v b="EXERCISE $1: BEGIN" -v e="EXERCISE $1: END" '
        index($0, e) { inside = 0 } inside { print } index($0, b) { inside = 1 }' "$2"
}

# FILE without NAME's region (the markers kept); exit 1 when the markers are not one
# BEGIN then one END.
outside_of() {
    awk -v b="EXERCISE $1: BEGIN" -v e="EXERCISE $1: END" '
        index($0, b) { print; skip = 1; nb++; next }
        index($0, e) { print; skip = 0; ne++; next }
        !skip { print }
        END { if (nb != 1 || ne != 1 || skip) exit 1 }' "$2"
}

# The diff, outside NAME's markers, between the copy a student starts from and FILE.
# Prints nothing and returns 0 when FILE changed only the inside.
outside() {
    local name=$1 file=$2 tmp rc=0
    tmp=$(mktemp -d)
    make_copy "$name" "$tmp/start.c"
    outside_of "$name" "$tmp/start.c" > "$tmp/a"
    if ! outside_of "$name" "$file" > "$tmp/b"; then
        echo "$file: the EXERCISE $name markers are missing or out of order"
        rm -rf "$tmp"
        return 1
    fi
    diff -u --label "outside the markers, as handed out" --label "outside the markers, $(basename "$file")" \
        "$tmp/a" "$tmp/b" || rc=1
    rm -rf "$tmp"
    return $rc
}

# In a handout (scripts/handout.sh) our files hold the stubs. Grading NAME then also
# compiles the student's copy of each other exercise whose region in the tree is
# still the stub, when there is one (exercise-OTHER/): stage 3's Queue runs on the
# coroutines of stage 2's exercises. Prints "FILE COPY" pairs.
other_copies() {
    local name=$1 o rel copy
    for o in $(names); do
        [ "$o" = "$name" ] && continue
        rel=$(region_file "$o")
        [ "$rel" = "$(region_file "$name")" ] && continue
        region_of "$o" "$ROOT/$rel" | cmp -s - "$EXDIR/$o/stub.c" || continue
        copy=$ROOT/exercise-$o/$(basename "$rel")
        if [ -f "$copy" ]; then
            echo "$rel $copy"
        else
            echo "note: $rel holds the stub of $o, and there is no exercise-$o/ copy: what needs it fails" >&2
        fi
    done
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
    CASES=$((pass + fail))
}

# The time limit of a test: its own, cut to what is left of EXERCISE_TOTAL_LIMIT (at
# least 1 s, so a program started late still prints how many cases it has).
capped() {
    local limit=$1 left
    if [ "$DEADLINE" -gt 0 ]; then
        left=$((DEADLINE - SECONDS))
        [ "$left" -lt 1 ] && left=1
        [ "$left" -lt "$limit" ] && limit=$left
    fi
    echo "$limit"
}

# One line per distinct sanitizer finding in the reports under DIR (ASan's log_path
# files): "heap-use-after-free in queue_task_done queue.c:141 (2 reports)".
sanitizer_findings() {
    local dir=$1
    [ -d "$dir" ] || return 0
    find "$dir" -type f -print0 | xargs -0 -r awk '
        function base(p) { sub(/.*\//, "", p); return p }
        FNR == 1 { if (what != "") n[what]++; what = "" }
        /^SUMMARY: AddressSanitizer: [0-9]+ byte\(s\) leaked/ {
            what = "memory leak: " $3 " byte(s) in " $7 " allocation(s)"; next }
        /^SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer): / && what == "" {
            kind = $3; where = ""
            for (i = 4; i <= NF; i++) if ($i == "in" && i < NF) { where = " in " $(i + 1) }
            if ($4 ~ /:[0-9]+/) where = where " " base($4)
            what = kind where; next }
        / runtime error: / && what == "" {
            line = $0; sub(/^[^ ]*\//, "", line); what = "undefined behaviour: " line; next }
        /ERROR: AddressSanitizer: (hard rss limit|requested allocation size|out of memory|allocation-size-too-big)/ && what == "" {
            line = $0; sub(/.*ERROR: AddressSanitizer: /, "", line); what = line; next }
        END {
            if (what != "") n[what]++
            for (w in n) printf "%s (%d report%s)\n", w, n[w], (n[w] > 1 ? "s" : "")
        }' | sort
}

# Build the project in BUILD with SOURCE in place of NAME's file; run grade.conf.
# Prints one PASS/FAIL line per test and "NAME: P/T passed". 0 when all passed.
# SANITIZE=1: an ASan+UBSan build, each finding printed as a SANITIZER line.
check() {
    local name=$1 source=$2 build=$3 sanitize=${4:-0} rel conf targets kind a b c d logs
    local files sources f copy cache
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

    files=$rel sources=$source
    while read -r f copy; do
        echo "== $name: also compiling $copy for $f (the tree holds the stub)"
        files="$files;$f" sources="$sources;$copy"
    done < <(other_copies "$name")

    local san=OFF
    [ "$sanitize" = 1 ] && san=ON
    echo "== $name: building $rel from $source in $build$([ $san = ON ] && echo ' (ASan+UBSan)')"
    # Configure once: a tree already configured for the same copies is only rebuilt.
    cache=$build/CMakeCache.txt
    if ! { [ -f "$cache" ] && [ -f "$build/cmake_install.cmake" ] && grep -qxF "CRAWL_EXERCISE_SOURCE:FILEPATH=$sources" "$cache" &&
           grep -qxF "CRAWL_EXERCISE_FILE:STRING=$files" "$cache" &&
           grep -qxF "CRAWL_SANITIZE:BOOL=$san" "$cache"; } &&
       ! cmake -S "$ROOT" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCRAWL_SANITIZE=$san \
            -DCRAWL_EXERCISE_FILE="$files" -DCRAWL_EXERCISE_SOURCE="$sources" \
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
    if ! outside "$name" "$source" > "$logs/outside.diff"; then
        echo "note: $(basename "$source") changes code outside the EXERCISE markers ($logs/outside.diff)"
    fi

    echo "== $name: grading"
    ulimit -c 0 2>/dev/null || true     # a crashing solution leaves no core files about
    if [ "$sanitize" = 1 ]; then
        mkdir -p "$logs/san"
        # verify_asan_link_order=0: stdbuf preloads its library ahead of ASan.
        export ASAN_OPTIONS="log_path=$logs/san/asan:hard_rss_limit_mb=$MEMORY_MB:detect_leaks=1:verify_asan_link_order=0"
        export UBSAN_OPTIONS="log_path=$logs/san/ubsan:print_stacktrace=1:halt_on_error=1"
    fi
    PASSED=0
    TOTAL=0
    DEADLINE=0
    [ "$TOTAL_LIMIT" -gt 0 ] && DEADLINE=$((SECONDS + TOTAL_LIMIT))
    local i=0
    while read -r kind a b c d; do
        i=$((i + 1))
        case $kind in
            unit)
                CRAWL_TEST_GUARD_MS=$GUARD_MS run_cmocka "$a" "$logs/$i-$a.log" \
                    "$(capped "$UNIT_TIMEOUT")" "$build/bin/$a"
                echo "unit $a $CASES" >> "$logs/cases" ;;
            scenario)
                SCENARIO_FILTER=${d:-} SCENARIO_TIME_LIMIT=$(capped "$CRAWL_LIMIT") \
                    run_cmocka "scenario ${a#crawl-} $b $c" "$logs/$i-scenario-${a#crawl-}-$b-$c.log" \
                    "$(capped "$SCENARIO_TIMEOUT")" "$build/bin/scenarios" "$build/bin/$a" "$b" "$c"
                echo "scenario $a $b $CASES" >> "$logs/cases" ;;
            *) die "$conf: unknown line '$kind $a $b $c $d'" ;;
        esac
    done < <(grep -Ev '^[[:space:]]*(#|$)' "$conf")
    if [ "$DEADLINE" -gt 0 ] && [ "$SECONDS" -ge "$DEADLINE" ]; then
        echo "note: the tests ran into EXERCISE_TOTAL_LIMIT (${TOTAL_LIMIT} s)"
    fi
    if [ "$sanitize" = 1 ]; then
        unset ASAN_OPTIONS UBSAN_OPTIONS
        sanitizer_findings "$logs/san" | sed 's/^/SANITIZER  /'
    fi
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
    # The figures docs/exercises.md gives (exercise.sh figures): the cases of each
    # test, counted on our code, where every case runs; what the stub scores.
    { cat "$dir/build/grade/cases"; echo "stub ${stub_score#"$name: "}"; } > "$dir/figures"
    echo "selftest $name: ok — stub ${stub_score#"$name: "}, ours all passed ($((SECONDS - t0)) s)"
}

# The table of docs/exercises.md, from the figures the selftests of BUILD measured
# (BUILD/exercise-selftest/NAME/figures): the tests of each exercise and the stub's
# score. Fails when one is missing.
figures() {
    local build=$1 n f unit scen total stub
    echo "| exercise | unit tests (cases) | scenario cases | tests | the stub passes |"
    echo "|---|---|---|---|---|"
    for n in $(names); do
        f=$build/exercise-selftest/$n/figures
        [ -f "$f" ] || die "$f is missing: run the selftest first (ctest -R exercise.$n)"
        unit=$(awk '$1 == "unit" { printf "%s`%s` (%d)", sep, $2, $3; sep = ", " }' "$f")
        scen=$(awk '$1 == "scenario" { k = $2 " " $3; if (!(k in n)) order[++m] = k; n[k] += $4 }
            END { for (i = 1; i <= m; i++) { split(order[i], p, " ")
                  printf "%s%d on `%s` (%s)", (i > 1 ? ", " : ""), n[order[i]], p[1], p[2] } }' "$f")
        total=$(awk '$1 != "stub" { t += $NF } END { print t }' "$f")
        stub=$(sed -n 's/^stub //p' "$f")
        echo "| \`$n\` | ${unit:-—} | ${scen:-—} | $total | ${stub%% passed} |"
    done
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
        source="" build="" sanitize=0
        while [ $# -gt 0 ]; do
            case $1 in
                --source) [ $# -ge 2 ] || die "--source needs a FILE"; source=$2; shift 2 ;;
                --build) [ $# -ge 2 ] || die "--build needs a DIR"; build=$2; shift 2 ;;
                --sanitize) sanitize=1; shift ;;
                *) die "unknown argument $1" ;;
            esac
        done
        if [ "$cmd" = check ]; then
            rel=$(region_file "$name")
            check "$name" "${source:-$ROOT/exercise-$name/$(basename "$rel")}" \
                "${build:-$ROOT/build-exercise-$name}" "$sanitize"
        else
            selftest "$name" "${build:-$ROOT/build-exercise-selftest-$name}"
        fi ;;
    figures)
        [ "${1:-}" = --build ] && [ -n "${2:-}" ] || die "usage: exercise.sh figures --build DIR"
        figures "$2" ;;
    copy)
        name=${1:-}
        need_name "$name"
        [ -n "${2:-}" ] || die "usage: exercise.sh copy NAME FILE"
        make_copy "$name" "$2" ;;
    outside)
        name=${1:-}
        need_name "$name"
        [ -f "${2:-}" ] || die "usage: exercise.sh outside NAME FILE"
        outside "$name" "$2" ;;
    *) die "unknown command $cmd (list, start, check, selftest, figures, copy, outside)" ;;
esac
