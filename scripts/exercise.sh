#!/usr/bin/env bash
# exercise.sh — the course's graded exercises (docs/exercises.md).
#
#   scripts/exercise.sh list                          the exercises
#   scripts/exercise.sh start NAME [--force]          exercise-NAME/: your copy + README
#   scripts/exercise.sh check NAME [--source FILE] [--build DIR] [--plain]
#                     [--hidden FILE] [--prebuilt TREE]
#                                                     grade your copy as grade.sh does:
#                                                     ASan+UBSan, a prebuilt tree in
#                                                     DIR/tree, your copy compiled in
#                                                     DIR (--plain: a plain build of
#                                                     the project in DIR instead; with
#                                                     --prebuilt TREE, made by prebuild:
#                                                     only the copy, against TREE; and
#                                                     the hidden tests of FILE)
#   scripts/exercise.sh prebuild NAME --build TREE [--sanitize] [--hidden FILE]
#                                                     a tree to grade many copies in
#   scripts/exercise.sh copy NAME FILE                FILE: the student's starting copy
#                                                     (our file, region replaced by stub)
#   scripts/exercise.sh outside NAME FILE             the diff of FILE against the stub
#                                                     copy, outside the markers (exit 1
#                                                     when there is one; none for a
#                                                     whole-file Lua spider)
#   scripts/exercise.sh selftest NAME [--build DIR]   the grader fails the stub and
#                                                     passes our code (ctest -L exercise)
#   scripts/exercise.sh todo                          the exercises still stubs in this
#                                                     tree (a handout), with their programs
#   scripts/exercise.sh graph                         their dependency graph (Markdown)
#   scripts/exercise.sh figures --build DIR           docs/exercises.md's table, from the
#                                                     figures the selftests in DIR measured
#
# An exercise is a region of one of our source files, between the lines
#   /* EXERCISE NAME: BEGIN ... */   and   /* EXERCISE NAME: END */
# (in a Lua spider, `-- EXERCISE NAME: BEGIN ...` and `-- EXERCISE NAME: END`)
# and a directory docs/exercises/NAME/ holding README.md (the task), stub.c or stub.lua
# (what replaces the region in the student's copy) and grade.conf (the tests that grade
# it). A Lua copy is not compiled: the unit tests get its path in env CRAWL_TEST_SPIDER.
# The student's copy is our file with the region replaced by the stub; `check` builds
# the project in build-exercise-NAME/tree/ with the stub copy compiled instead of ours
# (scripts/exercise.cmake), then the student's copy against it in build-exercise-NAME/,
# and runs the tests of grade.conf.
#
# Environment: JOBS (parallel compile jobs, 2), EXERCISE_CRAWL_LIMIT (seconds one
# crawler run may take in a scenario, 15), EXERCISE_GUARD_MS (a unit test's guard
# timer, 1000), EXERCISE_UNIT_LIMIT and EXERCISE_SCENARIO_LIMIT (seconds for one unit
# test program, 120, and one scenarios run, 300), EXERCISE_TOTAL_LIMIT (seconds for all
# the tests of one check: 300 for a graded copy, as at grading, none for --plain and
# selftest; a test started after it gets 1 s, enough to say how many cases it has),
# EXERCISE_MEMORY_MB (with the sanitizers: the RSS one test process
# may reach, 1024), EXERCISE_JITTER_MS (test_polite's slack on the delays it measures at
# the servers, 100: a graded copy runs beside others, under ASan).
#
# `check` grades a copy as scripts/grade.sh grades a class: the same prebuilt tree
# (prebuild, with ASan+UBSan: each memory or undefined-behaviour bug the tests ran into
# is a SANITIZER line), the copy compiled against it as a grading job compiles it
# (check --prebuilt), the same limits; so the public tests score the same at home and
# at grading. --plain builds the whole project without the sanitizers (what a student
# may want for a quick run or gdb) and says the score may then differ from grading's.
# (--sanitize, the default, is still accepted.)
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
GRADED_TOTAL_LIMIT=${EXERCISE_TOTAL_LIMIT:-300}   # ... of one graded copy (--prebuilt)
PLAIN=0                                           # check --plain: say it is not grading's
MEMORY_MB=${EXERCISE_MEMORY_MB:-1024}
JITTER_MS=${EXERCISE_JITTER_MS:-100}              # test_polite's slack on delays (ms)

die() { echo "exercise: $*" >&2; exit 2; }

names() {
    local d
    for d in "$EXDIR"/*/; do
        [ -f "$d/stub.c" ] || [ -f "$d/stub.lua" ] && basename "$d"
    done
}

# The stub of exercise NAME (stub.c, or stub.lua for a Lua spider).
stub_of() {
    if [ -f "$EXDIR/$1/stub.lua" ]; then echo "$EXDIR/$1/stub.lua"; else echo "$EXDIR/$1/stub.c"; fi
}

# Whether NAME's region is in a C file (compiled into the programs), not a Lua spider.
compiled() {
    [[ $(region_file "$1") == *.c ]]
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
    if [ -z "$n" ] || [ ! -f "$(stub_of "$n")" ]; then
        list >&2
        die "${n:+no exercise '$n'; }give one of the names above (EX=name)"
    fi
}

# The source file (relative to the tree) that holds NAME's region.
region_file() {
    local files
    files=$(cd "$ROOT" && { grep -rlF --include='*.c' --include='*.lua' "EXERCISE $1: BEGIN" "${SRC_DIRS[@]}" || true; })
    [ -n "$files" ] || die "no source file has the marker 'EXERCISE $1: BEGIN'"
    [ "$(echo "$files" | wc -l)" -eq 1 ] || die "several files have the marker of $1: $files"
    echo "$files"
}

# Write to OUT our file with NAME's region replaced by its stub (markers kept).
make_copy() {
    local name=$1 out=$2 rel
    rel=$(region_file "$name")
    awk -v b="EXERCISE $name: BEGIN" -v e="EXERCISE $name: END" -v stub="$(stub_of "$name")" '
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
# Prints nothing and returns 0 when FILE changed only the inside. A whole-file exercise
# (a Lua spider: the file runs alone, nothing of ours around it) has no outside: the
# student's file is all theirs, with the markers or without.
outside() {
    local name=$1 file=$2 tmp rc=0
    compiled "$name" || return 0
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
        region_of "$o" "$ROOT/$rel" | cmp -s - "$(stub_of "$o")" || continue
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

# The words of NAME's grade.conf directive KEY (programs, needs).
directive() {
    sed -n "s/^$2[[:space:]]\{1,\}//p" "$EXDIR/$1/grade.conf" | tr -s ' \t' '\n\n' | grep . || true
}

# The exercises whose region in this tree is still the stub (a handout): "NAME PROGRAM..."
# one a line, the programs that run its code.
todo() {
    local n rel
    for n in $(names); do
        rel=$(region_file "$n")
        if region_of "$n" "$ROOT/$rel" | cmp -s - "$(stub_of "$n")"; then
            echo "$n $(directive "$n" programs | paste -sd' ')"
        fi
    done
}

# The exercises' dependency graph (the grade.conf's `needs`), as Markdown: a list and a
# mermaid graph.
graph() {
    local n d needs progs
    echo "| exercise | write it after | its code runs in |"
    echo "|---|---|---|"
    for n in $(names); do
        needs=$(directive "$n" needs | sed 's/.*/`&`/' | paste -sd' ' | sed 's/ /, /g')
        progs=$(directive "$n" programs | sed 's/.*/`&`/' | paste -sd' ' | sed 's/ /, /g')
        echo "| \`$n\` | ${needs:-—} | ${progs:-— (a spider file, for \`crawl-queue --spider\`)} |"
    done
    echo
    echo '```mermaid'
    echo 'graph LR'
    for n in $(names); do
        needs=$(directive "$n" needs)
        [ -n "$needs" ] || echo "    $n"
        for d in $needs; do echo "    $d --> $n"; done
    done
    echo '```'
}

# ---- grading -----------------------------------------------------------------------

PASSED=0
TOTAL=0
HUNG=0

# The directives of a grade.conf (or of a hidden set, VIS=hidden): the tests go to
# LOGS/tests as "VIS KIND ARGS..." one a line; `points`, `hint` and `repeat` lines to
# LOGS/points, LOGS/hints (GLOB, TEXT, HINT, 1 for an `otherwise` hint) and
# LOGS/repeats (GLOB, N), tab-separated. grade.conf's header says what each line means.
read_conf() {
    local conf=$1 vis=$2 logs=$3 kind rest glob n cond other
    [ -f "$conf" ] || die "$conf does not exist"
    while read -r kind rest; do
        case $kind in
            unit|scenario) echo "$vis $kind $rest" >>"$logs/tests" ;;
            programs|needs) ;;     # for the handout (exercise.sh todo, graph)
            points)
                read -r glob n <<<"$rest"
                [[ ${n:-} =~ ^[0-9]+$ ]] || die "$conf: want 'points GLOB N', not 'points $rest'"
                printf '%s\t%s\n' "$glob" "$n" >>"$logs/points" ;;
            hint)
                glob=${rest%% *} cond="" other=0
                rest=${rest#"$glob"}
                rest=${rest# }
                if [[ $rest =~ ^if\ \"([^\"]+)\"\ +(.+)$ ]]; then
                    cond=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]}
                elif [[ $rest =~ ^otherwise\ +(.+)$ ]]; then
                    other=1 rest=${BASH_REMATCH[1]}
                fi
                [ -n "$rest" ] || die "$conf: want 'hint GLOB [if \"TEXT\" | otherwise] HINT', not 'hint $glob'"
                printf '%s\t%s\t%s\t%s\n' "$glob" "$cond" "$rest" "$other" >>"$logs/hints" ;;
            repeat)
                read -r glob n <<<"$rest"
                n=${n:-3}
                [ -n "$glob" ] && [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] ||
                    die "$conf: want 'repeat GLOB [N]' (N runs, 2 or more; 3 when not given), not 'repeat $rest'"
                printf '%s\t%s\n' "$glob" "$n" >>"$logs/repeats" ;;
            *) die "$conf: unknown line '$kind $rest'" ;;
        esac
    done < <(grep -Ev '^[[:space:]]*(#|$)' "$conf")
}

# awk: GLOB[,GLOB...] as a regular expression (* any text, ? one character), for the
# globs of `points`, `hint` and `repeat`.
GLOB_RE_AWK='
        function glob_re(g,   i, c, r) {
            r = "^("
            for (i = 1; i <= length(g); i++) {
                c = substr(g, i, 1)
                if (c == "*") r = r ".*"
                else if (c == "?") r = r "."
                else if (c == ",") r = r "|"
                else if (c ~ /[A-Za-z0-9_ -]/) r = r c
                else r = r "\\" c
            }
            return r ")$"
        }'

# Run a cmocka program (the rest of the arguments) with a time limit, print PASS or
# FAIL for each of its cases (with the first lines of a failure's message, the hints
# of grade.conf that fit it, and a note when it hung), and add them to PASSED and
# TOTAL. A case that never reported (a crash, the time limit) counts as failed.
# Each case is also a record of LOGS/results.tsv (visibility, test, case, PASS or
# FAIL, points, seconds it hung or 0, the file of its output), for scripts/grade.sh;
# RESULTS_TSV=FILE: of FILE instead (the runs again of a `repeat` case). The hints of
# a failed case: each `hint` whose glob and TEXT fit it, or else the first `otherwise`
# one whose glob fits; in a hint, {case} is the case's name and {run} RUN_ONE (how to
# run only that case) with its {case} replaced.
run_cmocka() {
    local vis=$1 label=$2 log=$3 limit=$4 rc=0 pass fail logs
    shift 4
    logs=$(dirname "$log")
    mkdir -p "$logs/out"
    touch "$logs/hints" "$logs/points"
    timeout -k 5 "$limit" stdbuf -oL -eL "$@" > "$log" 2>&1 || rc=$?
    awk -v label="$label" -v vis="$vis" -v rc="$rc" -v limit="$limit" -v counts="$log.counts" \
        -v hints="$logs/hints" -v points="$logs/points" -v results="${RESULTS_TSV:-$logs/results.tsv}" \
        -v outdir="$logs/out" -v tag="$(basename "$log" .log)" -v runone="${RUN_ONE:-}" "$GLOB_RE_AWK"'
        # Every A in S replaced by B.
        function repl(s, a, b,   i, out) {
            out = ""
            while ((i = index(s, a)) > 0) { out = out substr(s, 1, i - 1) b; s = substr(s, i + length(a)) }
            return out s
        }
        function hint(t, name, file) {
            t = repl(repl(t, "{run}", runone), "{case}", name)
            print "        hint: " t; print "hint: " t > file
        }
        BEGIN {
            FS = "\t"
            while ((getline l < hints) > 0) { split(l, p, "\t"); nh++; hg[nh] = glob_re(p[1]); hc[nh] = p[2]; ht[nh] = p[3]; ho[nh] = p[4] + 0 }
            while ((getline l < points) > 0) { split(l, p, "\t"); np++; pg[np] = glob_re(p[1]); pv[np] = p[2] + 0 }
            FS = " "
            shown = vis == "hidden" ? "hidden " label : label
        }
        function worth(name,   i) { for (i = 1; i <= np; i++) if (name ~ pg[i]) return pv[i]; return 1 }
        # Seconds after which a run was stopped, from a message line; 0 when none was.
        function hung_in(s,   m) {
            if (match(s, /ran past [0-9]+ s and was killed/)) {
                m = substr(s, RSTART + 9); return m + 0 }
            if (match(s, /TIMED OUT, killed\) after [0-9.]+s/)) {
                m = substr(s, RSTART + 25); return int(m + 0.5) }
            return 0
        }
        # The end of case `name`: its line, its message, its hints, its record.
        function finish(name, ok, why,   i, j, all, file, hung, h, shown_msg) {
            hung = 0
            for (i = 1; i <= nmsg; i++) if (!hung) hung = hung_in(msg[i])
            if (why == "the time limit") hung = limit
            file = outdir "/" tag "." (++ncase) ".txt"
            print (ok ? "PASS  " : "FAIL  ") shown ": " name (why != "" ? " (did not finish: " why ")" : "")
            if (!ok) {
                for (i = 1; i <= nmsg; i++) {
                    if (i <= 5) print "        " msg[i]
                    print msg[i] > file
                }
                all = why != "" ? "did not finish: " why : ""    # a hint may fit that too
                if (hung) all = all "\nhung: stopped after " hung " s"
                for (i = 1; i <= nmsg; i++) all = all "\n" msg[i]
                all = all full
                h = 0
                for (j = 1; j <= nh; j++)
                    if (!ho[j] && name ~ hg[j] && (hc[j] == "" || index(all, hc[j]))) { hint(ht[j], name, file); h++ }
                for (j = 1; j <= nh && !h; j++)
                    if (ho[j] && name ~ hg[j]) { hint(ht[j], name, file); h++ }
                if (hung) {
                    print "        hung: stopped after " hung " s"
                    print "hung: stopped after " hung " s" > file
                    hungs++
                }
            } else
                printf "" > file
            close(file)
            print vis "\t" label "\t" name "\t" (ok ? "PASS" : "FAIL") "\t" worth(name) "\t" hung "\t" file >> results
            if (ok) pass++; else fail++
            nmsg = 0; cur = ""; full = ""; nfull = 0
        }
        /^\[==========\] Running [0-9]+ test/ { planned = $3 + 0; next }
        /^\[ RUN      \] / { cur = substr($0, 14); nmsg = 0; full = ""; nfull = 0; next }
        # A hint looks for its TEXT in all the output of the case, not only the lines shown.
        cur != "" && nfull < 5000 && !/^\[ +(OK|FAILED|ERROR|SKIPPED) *\] / { full = full "\n" $0; nfull++ }
        /^\[[ A-Z]+\] --- / { if (cur != "" && nmsg < 40) { sub(/^\[[ A-Z]+\] --- /, ""); msg[++nmsg] = $0 }; next }
        /^\[       OK \] / && cur != "" { finish(cur, 1, ""); next }
        /^\[  (FAILED|ERROR|SKIPPED) *\] / && cur != "" { finish(cur, 0, ""); next }
        cur != "" && NF > 0 && !/^--- / && nmsg < 40 { msg[++nmsg] = $0 }
        END {
            why = rc == 124 || rc == 137 ? "the time limit" : "exit status " rc
            if (cur != "")
                finish(cur, 0, why)
            left = planned - pass - fail
            if (pass + fail == 0 && left <= 0)
                left = 1
            if (left > 0) {
                print "FAIL  " shown ": " left " case(s) never ran (" why ")"
                if (why == "the time limit" && cur == "") {
                    print "        hung: stopped after " limit " s"; hungs++ }
            }
            print pass + 0, fail + (left > 0 ? left : 0), hungs + 0 > counts
        }' "$log"
    local hung
    read -r pass fail hung < "$log.counts"
    PASSED=$((PASSED + pass))
    TOTAL=$((TOTAL + pass + fail))
    HUNG=$((HUNG + hung))
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

# ---- grading many copies: a prebuilt tree, and a small tree per job ------------------

# The build targets the tests of LOGS/tests need.
conf_targets() {
    local vis kind a rest targets=""
    while read -r vis kind a rest; do
        case $kind in
            unit) targets="$targets $a" ;;
            scenario) targets="$targets scenarios" ;;
        esac
    done <"$1"
    echo "$targets"
}

# Configure BUILD (once: a tree configured for the same copies is only rebuilt) with
# SOURCES (;-separated copies) in place of FILES, and build TARGETS. 1, with the
# compiler's or cmake's last words, when that fails.
tree_build() {
    local name=$1 sources=$2 files=$3 build=$4 san=$5 targets=$6 cache=$4/CMakeCache.txt
    if ! { [ -f "$cache" ] && [ -f "$build/cmake_install.cmake" ] && grep -qxF "CRAWL_EXERCISE_SOURCE:FILEPATH=$sources" "$cache" &&
           grep -qxF "CRAWL_EXERCISE_FILE:STRING=$files" "$cache" &&
           grep -qxF "CRAWL_SANITIZE:BOOL=$san" "$cache"; } &&
       ! cmake -S "$ROOT" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCRAWL_SANITIZE="$san" \
            -DCRAWL_EXERCISE_FILE="$files" -DCRAWL_EXERCISE_SOURCE="$sources" \
            > "$build/configure.log" 2>&1; then
        tail -20 "$build/configure.log"
        echo "$name: the configure step failed ($build/configure.log)"
        return 1
    fi
    # shellcheck disable=SC2086
    if ! cmake --build "$build" -j"$JOBS" --target $targets > "$build/build.log" 2>&1; then
        grep -E -A4 'error|warning|undefined reference|multiple definition' "$build/build.log" | head -60
        echo "$name: 0 passed: the build failed (the whole log: $build/build.log)"
        return 1
    fi
}

# A prebuilt tree for grading many copies of NAME (scripts/grade.sh): the project
# built in TREE (ASan+UBSan when SANITIZE=1) with TREE/submission/FILE, the stub copy,
# in place of NAME's file; `check --prebuilt TREE` then compiles only each copy.
prebuild() {
    local name=$1 tree=$2 sanitize=$3 hidden=$4 rel copy files sources f c
    rel=$(region_file "$name")
    mkdir -p "$tree/submission" "$tree/grade"
    tree=$(cd "$tree" && pwd)
    copy=$tree/submission/$(basename "$rel")
    make_copy "$name" "$copy.new"
    cmp -s "$copy.new" "$copy" && rm "$copy.new" || mv "$copy.new" "$copy"
    : >"$tree/grade/tests"
    read_conf "$EXDIR/$name/grade.conf" public "$tree/grade"
    [ -z "$hidden" ] || read_conf "$hidden" hidden "$tree/grade"
    files="" sources=""
    compiled "$name" && files=$rel sources=$copy
    while read -r f c; do
        files="${files:+$files;}$f" sources="${sources:+$sources;}$c"
    done < <(other_copies "$name")
    # The scenarios' drivers (the scenarios program, testsite) hold nothing of the
    # student's: under ASan they only slow each case down (twice as slow), so they come
    # from a plain tree of our own code, TREE/drivers, and TREE builds only the programs
    # the tests run the student's code in.
    local targets drivers=""
    targets=$(conf_targets "$tree/grade/tests")
    if [ "$sanitize" = 1 ] && grep -q '^[a-z]* scenario ' "$tree/grade/tests"; then
        # The ASan tree's own testsite only for its unit tests (they run the testsite
        # of their tree); the scenarios run the drivers' one.
        targets="$(awk '$2 == "unit" { print $3 } $2 == "scenario" { print $3 }' "$tree/grade/tests" |
                   sort -u | paste -sd' ')$(grep -q '^[a-z]* unit ' "$tree/grade/tests" && echo " testsite" || true)"
        echo "== $name: building the scenarios' drivers without ASan in $tree/drivers (beside the tree)"
        mkdir -p "$tree/drivers"
        # scenarios depends on the three crawlers, which the drivers do not need: its
        # libraries, then it alone (make's TARGET/fast; the whole target elsewhere).
        # Built while the tree is: each build's configure step is one process, and
        # the two together keep two cores busy (grade_bench: 49 s one after the other).
        (
            exec >"$tree/drivers.out" 2>&1
            tree_build "$name" "" "" "$tree/drivers" OFF "testsite crawltest" || exit 1
            cmake --build "$tree/drivers" -j"$JOBS" --target scenarios/fast >>"$tree/drivers/build.log" 2>&1 ||
                tree_build "$name" "" "" "$tree/drivers" OFF "scenarios testsite" || exit 1
        ) &
        drivers=$!
    fi
    echo "== $name: building the prebuilt tree $tree: $targets"
    local rc=0
    tree_build "$name" "$sources" "$files" "$tree" "$([ "$sanitize" = 1 ] && echo ON || echo OFF)" \
        "$targets" || rc=1
    if [ -n "$drivers" ]; then
        wait "$drivers" || { cat "$tree/drivers.out"; echo "$name: the scenarios' drivers could not be built ($tree/drivers/build.log)"; rc=1; }
    fi
    [ "$rc" = 0 ] || return 1
    echo "== $name: the prebuilt tree is ready"
}

# JOB/rebuild.sh: the commands that make, in JOB, the programs of TREE/bin with
# JOB/src/BASE in place of the tree's copy: its object compiled as the tree compiles
# it (compile_commands.json), each static library holding it archived again, and each
# program that links either linked again into JOB/bin (CMake's link.txt of each
# target, its paths swapped). The rest of JOB/bin are links to TREE/bin.
job_script() {
    local tree=$1 job=$2 base=$3 links
    links=$(find "$tree" -path '*/CMakeFiles/*.dir/link.txt' | sort)
    {
        echo "set -e"
        echo "rm -rf '$job/obj' '$job/lib' '$job/bin'; mkdir -p '$job/obj' '$job/lib' '$job/bin'"
        awk -v copy="$tree/submission/$base" -v src="$job/src/$base" -v job="$job" '
            function unjson(s) { gsub(/\\"/, "\"", s); gsub(/\\\\/, "\\", s); return s }
            function field(s) { sub(/^[^:]*: "/, "", s); sub(/",?$/, "", s); return unjson(s) }
            function repl(s, a, b,   i, out) {    # every a in s replaced by b
                out = ""
                while ((i = index(s, a)) > 0) { out = out substr(s, 1, i - 1) b; s = substr(s, i + length(a)) }
                return out s
            }
            /^  "directory": / { dir = field($0) }
            /^  "command": / { cmd = field($0) }
            /^  "file": / {
                if (field($0) != copy) next
                n = split(cmd, t, " ")
                obj = ""
                for (i = 1; i < n; i++) if (t[i] == "-o") obj = t[i + 1]
                if (obj == "") next
                o = obj; sub(/.*\//, "", o)
                mine = job "/obj/" (++k) "/" o    # the same name: an archive member is replaced
                c = repl(cmd, copy, src)
                c = repl(c, " -o " obj, " -o " mine)
                c = repl(c, " -MF " obj, " -MF " mine)
                c = repl(c, " -MT " obj, " -MT " mine)
                printf "mkdir -p %s/obj/%d && cd %s && %s\n", job, k, dir, c
                print dir "/" obj "\t" mine > (job "/swapped")
            }' "$tree/compile_commands.json"
        # shellcheck disable=SC2086
        link_script "$job" lib $links
        # shellcheck disable=SC2086
        link_script "$job" exe $links
        echo "for f in '$tree'/bin/*; do [ -e '$job'/bin/\"\${f##*/}\" ] || ln -s \"\$f\" '$job'/bin/; done"
    } >"$job/rebuild.sh"
}

# The link commands (KIND lib: `ar` rules; exe: the others) of the link.txt files
# given, for the targets holding a path of JOB/swapped; each such library is added
# to JOB/swapped (as JOB/lib/NAME), each program is linked into JOB/bin.
link_script() {
    local job=$1 kind=$2
    shift 2
    awk -v job="$job" -v kind="$kind" -v swapped="$job/swapped" '
        function norm(p,   n, i, a, out, m) {      # an absolute path without . and ..
            n = split(p, a, "/"); m = 0
            for (i = 1; i <= n; i++) {
                if (a[i] == "" || a[i] == ".") continue
                if (a[i] == "..") { if (m) m--; continue }
                s[++m] = a[i]
            }
            out = ""
            for (i = 1; i <= m; i++) out = out "/" s[i]
            return out
        }
        function abs(t, d) { gsub(/"/, "", t); return norm(t ~ /^\// ? t : d "/" t) }
        BEGIN { while ((getline l < swapped) > 0) { split(l, p, "\t"); to[norm(p[1])] = p[2] } }
        FNR == 1 {
            if (NR > 1) flush()
            d = FILENAME; sub(/\/CMakeFiles\/[^\/]*\/link.txt$/, "", d)
            nl = 0; hit = 0; isar = 0; out = ""
        }
        {
            n = split($0, t, " ")
            if (FNR == 1 && t[1] ~ /(^|\/)ar$/ && t[2] == "qc") { isar = 1; out = abs(t[3], d) }
            if (FNR == 1 && !isar) for (i = 1; i < n; i++) if (t[i] == "-o") out = abs(t[i + 1], d)
            line = ""
            for (i = 1; i <= n; i++) {
                a = abs(t[i], d)
                if (a in to) { t[i] = to[a]; hit = 1 }
                line = line (i > 1 ? " " : "") t[i]
            }
            lines[++nl] = line
        }
        function flush(   i, j, n, name, mine, line) {
            if (!hit || isar != (kind == "lib")) return
            name = out; sub(/.*\//, "", name)
            mine = job "/" (isar ? "lib" : "bin") "/" name
            if (!isar) printf "if [ -e %s ]; then\n", out
            for (i = 1; i <= nl; i++) {      # the output (ar qc OUT, ranlib OUT, -o OUT) swapped
                n = split(lines[i], t, " "); line = ""
                for (j = 1; j <= n; j++) {
                    if (abs(t[j], d) == out) t[j] = mine
                    line = line (j > 1 ? " " : "") t[j]
                }
                printf "%scd %s && %s\n", (isar ? "" : "  "), d, line
            }
            if (!isar) print "fi"
            if (isar) { print out "\t" mine >> swapped; close(swapped) }
        }
        END { if (NR > 0) flush() }' "$@"
}

# Build JOB's programs with SOURCE (JOB/rebuild.sh, made once per job and tree).
job_build() {
    local name=$1 source=$2 tree=$3 job=$4 base f
    base=$(basename "$(region_file "$name")")
    mkdir -p "$job/src"
    if ! compiled "$name"; then     # a Lua spider: the tree's programs run the copy
        mkdir -p "$job/bin"
        cp "$source" "$job/src/$base"
        : >"$job/build.log"
        for f in "$tree"/bin/*; do [ -e "$job/bin/${f##*/}" ] || ln -s "$f" "$job/bin/"; done
        return 0
    fi
    if [ ! -f "$job/rebuild.sh" ] || [ "$tree/compile_commands.json" -nt "$job/rebuild.sh" ]; then
        : >"$job/swapped"
        job_script "$tree" "$job" "$base"
    fi
    cp "$source" "$job/src/$base"
    echo "== $name: compiling $source against the prebuilt tree $tree, in $job"
    if ! bash "$job/rebuild.sh" >"$job/build.log" 2>&1; then
        grep -E -A4 'error|warning|undefined reference|multiple definition' "$job/build.log" | head -60
        echo "$name: 0 passed: the build failed (the whole log: $job/build.log)"
        return 1
    fi
}

# Build the project in BUILD with SOURCE in place of NAME's file; run grade.conf (and
# the tests of HIDDEN, a hidden set, when given). Prints one PASS/FAIL line per test
# case, the points, and "NAME: P/T passed" last; 0 when all passed.
# SANITIZE=1: an ASan+UBSan build, each finding printed as a SANITIZER line.
# PREBUILT: a tree `prebuild` made (with the same SANITIZE): only SOURCE is compiled,
# in BUILD, and the programs holding it linked again there (job_build).
check() {
    local name=$1 source=$2 build=$3 sanitize=${4:-0} hidden=${5:-} prebuilt=${6:-}
    local rel conf vis kind a b c d logs files sources f copy bin
    rel=$(region_file "$name")
    conf=$EXDIR/$name/grade.conf
    [ -f "$source" ] || die "$source does not exist: start the exercise first:
  make -f Makefile.tutorial exercise EX=$name"
    source=$(cd "$(dirname "$source")" && pwd)/$(basename "$source")
    # A job's directory (links into a prebuilt tree) and a tree of its own do not mix:
    # linking into the one would write through its links into the tree.
    if [ -n "$prebuilt" ] && [ -f "$build/CMakeCache.txt" ]; then
        die "$build is a build tree: a grading job needs a directory of its own (--build)"
    elif [ -z "$prebuilt" ] && [ -f "$build/rebuild.sh" ]; then
        die "$build is a grading job's directory (check --prebuilt): give another --build"
    fi
    mkdir -p "$build"
    build=$(cd "$build" && pwd)
    logs=$build/grade
    rm -rf "$logs"
    mkdir -p "$logs"
    : >"$logs/tests"
    : >"$logs/results.tsv"
    read_conf "$conf" public "$logs"
    [ -z "$hidden" ] || read_conf "$hidden" hidden "$logs"

    local san=OFF
    if [ -n "$prebuilt" ]; then
        prebuilt=$(cd "$prebuilt" && pwd)
        # The tree's programs are what they are: an ASan tree is graded as one.
        grep -qxF 'CRAWL_SANITIZE:BOOL=ON' "$prebuilt/CMakeCache.txt" && sanitize=1 || sanitize=0
    fi
    [ "$sanitize" = 1 ] && san=ON
    if [ -n "$prebuilt" ]; then
        TOTAL_LIMIT=$GRADED_TOTAL_LIMIT
        job_build "$name" "$source" "$prebuilt" "$build" || return 1
    else
        files="" sources=""
        compiled "$name" && files=$rel sources=$source
        while read -r f copy; do
            echo "== $name: also compiling $copy for $f (the tree holds the stub)"
            files="${files:+$files;}$f" sources="${sources:+$sources;}$copy"
        done < <(other_copies "$name")
        if compiled "$name"; then
            echo "== $name: building $rel from $source in $build$([ $san = ON ] && echo ' (ASan+UBSan)')"
        else
            echo "== $name: building the programs that run $source (a Lua spider) in $build"
        fi
        tree_build "$name" "$sources" "$files" "$build" "$san" "$(conf_targets "$logs/tests")" || return 1
    fi
    bin=$build/bin
    local drivers=$bin
    [ -n "$prebuilt" ] && [ -x "$prebuilt/drivers/bin/scenarios" ] && drivers=$prebuilt/drivers/bin
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
        # The tests' own plumbing (a unit test reading a crawler's pipes) is not the
        # student's: its leaks are not reported.
        export LSAN_OPTIONS="suppressions=$ROOT/scripts/exercise-lsan.supp"
    fi
    PASSED=0
    TOTAL=0
    HUNG=0
    DEADLINE=0
    [ "$TOTAL_LIMIT" -gt 0 ] && DEADLINE=$((SECONDS + TOTAL_LIMIT))
    local i=0 label from
    while read -r vis kind a b c d; do
        i=$((i + 1))
        from=$(wc -l <"$logs/results.tsv")
        run_test "$name" "$logs" "$i" "$bin" "$drivers" "$source" "" "$vis" "$kind" "$a" "$b" "$c" "$d"
        echo "$kind $a$([ "$kind" = scenario ] && echo " $b") $CASES" >> "$logs/cases"
        [ -s "$logs/repeats" ] && repeat_cases "$name" "$logs" "$i" "$bin" "$drivers" "$source" "$from" "$vis" "$kind" "$a" "$b" "$c" "$d"
    done <"$logs/tests"
    if [ "$DEADLINE" -gt 0 ] && [ "$SECONDS" -ge "$DEADLINE" ]; then
        echo "note: the tests ran into EXERCISE_TOTAL_LIMIT (${TOTAL_LIMIT} s)"
    fi
    if [ "$sanitize" = 1 ]; then
        unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
        sanitizer_findings "$logs/san" | sed 's/^/SANITIZER  /'
    else
        if [ "$HUNG" -gt 0 ] || grep -qE 'signal [1-9]|exit status 1[3-5][0-9]' "$logs"/*.log 2>/dev/null; then
            echo "note: $HUNG case(s) hung or a test crashed: a memory bug often does that. The sanitizer"
            echo "      build names it:  make -f Makefile.tutorial check-exercise EX=$name"
        fi
        [ "$PLAIN" = 1 ] && plain_note "$name"
    fi
    echo "(the tests' whole output: $logs/)"
    awk -F'\t' '{ m += $5; if ($4 == "PASS") s += $5 } END { printf "points: %d/%d\n", s, m }' "$logs/results.tsv"
    echo "$name: $PASSED/$TOTAL passed"
    [ "$TOTAL" -gt 0 ] && [ "$PASSED" -eq "$TOTAL" ]
}

# Run test number I of LOGS/tests (VIS KIND A B C D: a unit test A with glob B, or the
# scenarios of crawler A on transport B, selector C, cases D) of exercise NAME, with the
# programs of BIN and DRIVERS and the copy SOURCE; ONLY: only the case of that name,
# its log then LOGS/I-...-ONLY.K.log (K: the first number not taken).
run_test() {
    local name=$1 logs=$2 i=$3 bin=$4 drivers=$5 source=$6 only=$7 vis=$8 kind=$9 a=${10} b=${11} c=${12} d=${13}
    local tag k=1
    if [ "$kind" = unit ]; then tag=$i-$a; else tag=$i-scenario-${a#crawl-}-$b-$c; fi
    if [ -n "$only" ]; then
        while [ -e "$logs/$tag-$only.$k.log" ]; do k=$((k + 1)); done
        tag=$tag-$only.$k
    fi
    RUN_ONE=$(run_one "$name" "$source" "$kind" "$a" "$b" "$c")
    case $kind in
        unit)
            CRAWL_TEST_FILTER=${only:-${b:-}} CRAWL_TEST_GUARD_MS=$GUARD_MS CRAWL_QUEUE_BIN=$bin/crawl-queue \
                CRAWL_TEST_JITTER_MS=$JITTER_MS CRAWL_TEST_SPIDER=$source \
                run_cmocka "$vis" "$a${b:+ $b}" "$logs/$tag.log" "$(capped "$UNIT_TIMEOUT")" "$bin/$a" ;;
        scenario)
            SCENARIO_FILTER=${only:-${d:-}} SCENARIO_TIME_LIMIT=$(capped "$CRAWL_LIMIT") \
                run_cmocka "$vis" "scenario ${a#crawl-} $b $c" "$logs/$tag.log" \
                "$(capped "$SCENARIO_TIMEOUT")" "$drivers/scenarios" "$bin/$a" "$b" "$c" ;;
    esac
}

# How a student runs only case {case} of a test (KIND A B C, as in LOGS/tests) of NAME
# at home, after check-exercise built it in build-exercise-NAME/: {run} in a hint.
run_one() {
    local name=$1 source=$2 kind=$3 a=$4 b=$5 c=$6 home=build-exercise-$1 drivers=build-exercise-$1/tree/drivers
    [ "$PLAIN" = 1 ] && home=build-exercise-$1-plain drivers=build-exercise-$1-plain
    if [ "$kind" = unit ]; then
        local crawler=""     # the unit tests that run crawl-queue read env CRAWL_QUEUE_BIN
        grep -qs CRAWL_QUEUE_BIN "$ROOT/tests/unit/$a.c" "$ROOT/tests/integration/$a.c" &&
            crawler=" CRAWL_QUEUE_BIN=$home/bin/crawl-queue"
        echo "CRAWL_TEST_FILTER={case}$crawler$(compiled "$name" ||
            echo " CRAWL_TEST_SPIDER=exercise-$name/$(basename "$source")") $home/bin/$a"
    else
        echo "SCENARIO_FILTER={case} $drivers/bin/scenarios $home/bin/$a $b $c"
    fi
}

# The cases test I just recorded (LOGS/results.tsv past its line FROM) that a `repeat`
# line marks (the first that fits: N runs): each run alone N - 1 times more. A case
# that passed some runs and failed others is FLAKY: it scores as failed, its output
# says each run's outcome, then the first failed run's. Each record of a repeated case
# gets an 8th field, its runs' outcomes (PASS,FAIL,PASS).
repeat_cases() {
    local name=$1 logs=$2 i=$3 bin=$4 drivers=$5 source=$6 from=$7 vis=$8 kind=$9 a=${10} b=${11} c=${12} d=${13}
    local cname n r line st file runs failed k saved
    while IFS=$'\t' read -r line cname n; do
        st=$(sed -n "${line}p" "$logs/results.tsv" | cut -f4)
        runs=$st failed=""
        [ "$st" = FAIL ] && failed=$(sed -n "${line}p" "$logs/results.tsv" | cut -f7)
        for ((r = 2; r <= n; r++)); do
            saved="$PASSED $TOTAL $HUNG $CASES"
            : >"$logs/rerun.tsv"
            RESULTS_TSV=$logs/rerun.tsv run_test "$name" "$logs" "$i" "$bin" "$drivers" "$source" "$cname" \
                "$vis" "$kind" "$a" "$b" "$c" "$d" >>"$logs/reruns.txt" </dev/null
            read -r PASSED TOTAL HUNG CASES <<<"$saved"
            k=$(awk -F'\t' -v c="$cname" '$3 == c { s = $4 "\t" $7 } END { print s }' "$logs/rerun.tsv")
            [ -n "$k" ] || k="FAIL"$'\t'
            runs="$runs,${k%%$'\t'*}"
            [ -z "$failed" ] && [ "${k%%$'\t'*}" = FAIL ] && failed=${k#*$'\t'}
        done
        rm -f "$logs/rerun.tsv"
        file=$(sed -n "${line}p" "$logs/results.tsv" | cut -f7)
        if [[ $runs == *PASS* && $runs == *FAIL* ]]; then
            [ "$st" = PASS ] && PASSED=$((PASSED - 1))
            k=$(tr ',' '\n' <<<"$runs" | grep -c PASS)
            {
                echo "flaky: it passed $k of $n runs (${runs//,/, }): a case that passes only sometimes scores as failed."
                echo "hint: The outcome changes from run to run: it depends on timing, on the order things finish in, or on memory read after it is freed. Run it alone several times ($(run_one "$name" "$source" "$kind" "$a" "$b" "$c" | sed "s/{case}/$cname/")), and read any SANITIZER line."
                if [ -n "$failed" ] && [ -s "$failed" ] && [ "$failed" != "$file" ]; then
                    echo "a failed run's output:"; cat "$failed"
                elif [ -n "$failed" ] && [ -s "$failed" ]; then
                    echo "run 1's output:"; cat "$failed"
                fi
            } >"$file.flaky"
            mv "$file.flaky" "$file"
            echo "FLAKY $([ "$vis" = hidden ] && echo "hidden ")$(results_label "$kind" "$a" "$b" "$c"): $cname (passed $k of $n runs: ${runs//,/, }; scored as failed)"
            sed -n '3,8p' "$file" | sed 's/^/        /'
            st=FAIL
        fi
        awk -F'\t' -v OFS='\t' -v l="$line" -v st="$st" -v runs="$runs" \
            'NR == l { $4 = st; $8 = runs } { print }' "$logs/results.tsv" >"$logs/results.tsv.new"
        mv "$logs/results.tsv.new" "$logs/results.tsv"
    done < <(awk -F'\t' -v from="$from" -v repeats="$logs/repeats" "$GLOB_RE_AWK"'
        BEGIN { while ((getline l < repeats) > 0) { split(l, p, "\t"); nr++; rg[nr] = glob_re(p[1]); rn[nr] = p[2] } }
        NR > from { for (j = 1; j <= nr; j++) if ($3 ~ rg[j]) { print NR "\t" $3 "\t" rn[j]; break } }' "$logs/results.tsv")
}

# The label of a test in the report: test_coro, test_polite test_crawl_delay*,
# scenario callbacks raw epoll.
results_label() {
    if [ "$1" = unit ]; then echo "$2${3:+ $3}"; else echo "scenario ${2#crawl-} $3 $4"; fi
}

# What a plain check (--plain, SANITIZE=0) prints, at its start and before its score.
plain_note() {
    echo "note: a plain build, without ASan+UBSan, as asked (--plain, SANITIZE=0): the grading builds with"
    echo "      them, so the score there may differ. As graded:  make -f Makefile.tutorial check-exercise EX=$1"
}

# Grade SOURCE as scripts/grade.sh grades a copy of a class (its public tests, and
# those of HIDDEN when given): a prebuilt tree in BUILD/tree (prebuild, ASan+UBSan),
# SOURCE compiled against it with the programs that hold it linked again in BUILD
# (check --prebuilt), so BUILD/bin holds the programs that run it.
graded() {
    local name=$1 source=$2 build=$3 hidden=${4:-}
    [ -f "$source" ] || die "$source does not exist: start the exercise first:
  make -f Makefile.tutorial exercise EX=$name"
    mkdir -p "$build"
    build=$(cd "$build" && pwd)
    [ -f "$build/CMakeCache.txt" ] &&
        die "$build is a plain build tree (check --plain, or an older check-exercise): remove it, or give another --build"
    echo "== $name: graded as scripts/grade.sh grades it: ASan+UBSan, the prebuilt tree $build/tree (its log: $build/prebuild.log)"
    if ! prebuild "$name" "$build/tree" 1 "$hidden" >"$build/prebuild.log" 2>&1; then
        tail -20 "$build/prebuild.log"
        echo "$name: 0 passed: the prebuilt tree could not be built ($build/prebuild.log)"
        return 1
    fi
    check "$name" "$source" "$build" 1 "$hidden" "$build/tree"
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
    check|selftest|prebuild)
        name=${1:-}
        need_name "$name"
        shift
        source="" build="" sanitize=0 hidden="" prebuilt="" plain=0
        while [ $# -gt 0 ]; do
            case $1 in
                --source) [ $# -ge 2 ] || die "--source needs a FILE"; source=$2; shift 2 ;;
                --build) [ $# -ge 2 ] || die "--build needs a DIR"; build=$2; shift 2 ;;
                --sanitize) sanitize=1; shift ;;
                --plain) plain=1; shift ;;
                --hidden) [ -f "${2:-}" ] || die "--hidden needs a FILE (a hidden.conf)"; hidden=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
                --prebuilt) [ -d "${2:-}" ] || die "--prebuilt needs a DIR (exercise.sh prebuild)"; prebuilt=$2; shift 2 ;;
                *) die "unknown argument $1" ;;
            esac
        done
        [ "$plain" = 1 ] && { [ "$sanitize" = 1 ] || [ -n "$prebuilt" ]; } &&
            die "--plain builds without the sanitizers and its own tree: not with --sanitize or --prebuilt"
        if [ "$cmd" = check ]; then
            rel=$(region_file "$name")
            source=${source:-$ROOT/exercise-$name/$(basename "$rel")}
            if [ -n "$prebuilt" ]; then     # a grading job (scripts/grade.sh)
                check "$name" "$source" "${build:-$ROOT/build-exercise-$name}" "$sanitize" "$hidden" "$prebuilt"
            elif [ "$plain" = 1 ]; then
                PLAIN=1
                plain_note "$name"
                check "$name" "$source" "${build:-$ROOT/build-exercise-$name-plain}" 0 "$hidden" ""
            else
                graded "$name" "$source" "${build:-$ROOT/build-exercise-$name}" "$hidden"
            fi
        elif [ "$cmd" = prebuild ]; then
            [ -n "$build" ] || die "usage: exercise.sh prebuild NAME --build DIR [--sanitize] [--hidden FILE]"
            prebuild "$name" "$build" "$sanitize" "$hidden"
        else
            selftest "$name" "${build:-$ROOT/build-exercise-selftest-$name}"
        fi ;;
    todo) todo ;;
    graph) graph ;;
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
    *) die "unknown command $cmd (list, start, check, prebuild, selftest, figures, copy, outside, todo, graph)" ;;
esac
