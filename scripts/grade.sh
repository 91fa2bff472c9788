#!/usr/bin/env bash
# grade.sh [-j N] NAME DIR — grade a class: every student's copy of exercise NAME's
# file in DIR, each built with ASan+UBSan and run through the exercise's tests, public
# and hidden (scripts/exercise.sh check --sanitize), bounded in time and memory.
#
#   DIR/alice.c, DIR/bob.c ...        one file per student (any name ending in .c, or
#                                     .lua for a Lua spider's exercise), or
#   DIR/alice/queue.c ...             one folder per student holding the file
#
# A copy that does not compile, hangs or crashes is a row like any other. Writes
#   grade.csv                         a row per copy: score, passed, sanitizer findings,
#                                     seconds, notes, then the points of each test case
#   results/SUB/results.json          Gradescope's autograder results for each copy
#   logs/SUB.log                      each copy's whole output
#   similarity.txt                    the pairs of copies that share much of their code
#                                     (scripts/similarity.sh), for the teacher only
# and prints a table of the copies and one of the tests (how many copies pass each);
# a copy that changed code outside the EXERCISE markers is flagged and its diff printed.
# Exit status 0 once every copy has its row (1 when the tree cannot be built, 2 on bad
# usage). A run first clears what an earlier one left in its folder (grade.csv, logs/,
# results/, jobs/): one class at a time, the prebuilt tree kept.
#
# The project is built once, in a prebuilt tree (GRADE_BUILD/tree); then N jobs (-j N,
# two a core by default) each take the next copy, compile only it against that tree and link
# the programs that hold it again in a small tree of the job's own (GRADE_BUILD/jobs/K:
# scripts/exercise.sh prebuild, check --prebuilt), so no row is ever graded with
# another copy's programs, and N copies are graded at once.
#
# A student's check-exercise (scripts/exercise.sh check) builds and runs the public
# tests this same way (prebuild, check --prebuilt, ASan+UBSan, the same limits), so a
# copy's public tests score the same there and here.
#
# Hidden tests: docs/exercises/NAME/hidden.conf (or GRADE_HIDDEN=FILE, a set the
# teacher keeps elsewhere; GRADE_HIDDEN=none for none). scripts/handout.sh leaves
# hidden.conf out of a handout; students' check-exercise never runs it.
#
# Environment: GRADE_BUILD (build-grade-NAME), GRADE_CSV (GRADE_BUILD/grade.csv),
# GRADE_JOBS (N when -j is not given; 2 x nproc), EXERCISE_TOTAL_LIMIT (seconds for the tests of
# one copy, 300: scripts/exercise.sh's for a graded copy), EXERCISE_MEMORY_MB (RSS of one test process, 1024) and the other
# limits of scripts/exercise.sh.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EX=$ROOT/scripts/exercise.sh

die() { echo "grade: $*" >&2; exit 2; }

# A copy's tests wait more than they compute (servers that drip, --timeout and
# --delay cases, the runs again of `repeat` cases): one copy of stage1-read_response
# keeps a core busy about 40 % of its time (grade_bench: 3.5 s of CPU in 9-10 s), so
# by default two jobs a core, which fills the cores without a copy waiting for one.
jobs=${GRADE_JOBS:-$((2 * $(nproc 2>/dev/null || echo 1)))}
while [ $# -gt 0 ]; do
    case $1 in
        -j) [ $# -ge 2 ] || die "-j needs a number"; jobs=$2; shift 2 ;;
        -j*) jobs=${1#-j}; shift ;;
        --) shift; break ;;
        -*) die "unknown option $1" ;;
        *) break ;;
    esac
done
name=${1:-}
dir=${2:-}
[ -n "$name" ] && [ -n "$dir" ] && [ $# -eq 2 ] ||
    die "usage: grade.sh [-j N] NAME DIR (make -f Makefile.tutorial grade EX=NAME SUBMISSIONS=DIR JOBS=N)"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "-j wants a number of jobs, 1 or more, not '$jobs'"
[ -f "$ROOT/docs/exercises/$name/stub.c" ] || [ -f "$ROOT/docs/exercises/$name/stub.lua" ] ||
    { bash "$EX" list >&2; die "no exercise '$name'"; }
[ -d "$dir" ] || die "$dir is not a directory"
dir=$(cd "$dir" && pwd)
rel=$(cd "$ROOT" && grep -rlF --include='*.c' --include='*.lua' "EXERCISE $name: BEGIN" common stage1_callbacks stage2_generators stage3_queue)
base=$(basename "$rel")
ext=${base##*.}     # c, or lua for a Lua spider

hidden=${GRADE_HIDDEN:-$ROOT/docs/exercises/$name/hidden.conf}
if [ "$hidden" = none ] || { [ -z "${GRADE_HIDDEN:-}" ] && [ ! -f "$hidden" ]; }; then
    hidden=""
elif [ ! -f "$hidden" ]; then
    die "GRADE_HIDDEN=$hidden does not exist"
else
    hidden=$(cd "$(dirname "$hidden")" && pwd)/$(basename "$hidden")
fi

build=${GRADE_BUILD:-$ROOT/build-grade-$name}
mkdir -p "$build"
build=$(cd "$build" && pwd)
csv=${GRADE_CSV:-$build/grade.csv}

# The submissions: NAME -> file.
subs=() files=()
for f in "$dir"/*."$ext"; do
    [ -f "$f" ] || continue
    subs+=("$(basename "$f" ".$ext")") files+=("$f")
done
for f in "$dir"/*/"$base"; do
    [ -f "$f" ] || continue
    subs+=("$(basename "$(dirname "$f")")") files+=("$f")
done
[ "${#subs[@]}" -gt 0 ] || die "$dir holds no submission (*.$ext, or */$base)"

# A class at a time: what an earlier run left in this folder (its rows, logs, records,
# job directories) goes first, so nothing of another class is read or shown with this
# one; the prebuilt tree stays (it holds no copy of a student's).
left=()
for f in logs results jobs claims tests.tsv grade.csv similarity.txt; do
    [ -e "$build/$f" ] && left+=("$f")
done
if [ "${#left[@]}" -gt 0 ]; then
    echo "grade: clearing what the previous run left in $build: ${left[*]}"
    for f in "${left[@]}"; do rm -rf "${build:?}/$f"; done
fi
rm -f "$csv"
mkdir -p "$build/logs" "$build/results" "$build/jobs"

csv_field() {
    local v=$1
    case $v in
        *[,\"]*) v=${v//\"/\"\"}; printf '"%s"' "$v" ;;
        *) printf '%s' "$v" ;;
    esac
}

# No more jobs than copies: a job with no copy to claim would only make its folder.
[ "$jobs" -le "${#subs[@]}" ] || jobs=${#subs[@]}
t_start=$(date +%s.%N)
echo "grade: $name, ${#subs[@]} submission(s) from $dir, $jobs job(s)${hidden:+, hidden tests of $hidden}; build tree $build"
bash "$EX" prebuild "$name" --build "$build/tree" --sanitize ${hidden:+--hidden "$hidden"} >"$build/prebuild.log" 2>&1 ||
    { tail -20 "$build/prebuild.log" >&2; echo "grade: the prebuilt tree could not be built ($build/prebuild.log)" >&2; exit 1; }

# One copy, graded by job W: its log, its records (results/SUB/), its seconds.
grade_one() {
    local i=$1 w=$2 sub=${subs[$1]} job=$build/jobs/$2 t0 secs out
    out=$build/results/$sub
    rm -rf "$out"
    mkdir -p "$out"
    t0=$(date +%s.%N)
    bash "$EX" check "$name" --source "${files[$i]}" --build "$job" --prebuilt "$build/tree" --sanitize \
        ${hidden:+--hidden "$hidden"} >"$build/logs/$sub.log" 2>&1
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "$secs" >"$out/seconds"
    if [ -d "$job/grade/out" ]; then
        cp -r "$job/grade/out" "$out/out"
        awk -F'\t' -v OFS='\t' -v to="$out/out/" '{ sub(/.*\//, to, $7); print }' "$job/grade/results.tsv" >"$out/results.tsv"
    else
        : >"$out/results.tsv"
    fi
    if ! bash "$EX" outside "$name" "${files[$i]}" >"$build/logs/$sub.outside.diff" 2>&1; then
        touch "$out/outside"
    else
        rm -f "$build/logs/$sub.outside.diff"
    fi
    printf '  %-24s %s  %s s\n' "$sub" "$(sed -nE "s/^$name: ([0-9]+\/[0-9]+) passed$/\1/p" "$build/logs/$sub.log" | tail -n1)" "$secs"
}

# N jobs; each claims the next copy (mkdir is atomic) until none is left.
rm -rf "$build/claims"
mkdir -p "$build/claims"
for ((w = 1; w <= jobs; w++)); do
    (
        for i in "${!subs[@]}"; do
            mkdir "$build/claims/$i" 2>/dev/null || continue
            grade_one "$i" "$w"
        done
    ) &
done
wait

# ---- the rows --------------------------------------------------------------------

# The tests: every case any copy ran, in the order they ran (visibility, test, case,
# points), one a line.
for sub in "${subs[@]}"; do cat "$build/results/$sub/results.tsv"; done |
    awk -F'\t' -v OFS='\t' '!seen[$1 FS $2 FS $3]++ { print $1, $2, $3, $5 }' >"$build/tests.tsv"
max_score=$(awk -F'\t' '{ s += $4 } END { print s + 0 }' "$build/tests.tsv")
ncases=$(wc -l <"$build/tests.tsv")

rows=()       # passed|total|score|findings|seconds|notes, per submission
flagged=()
for i in "${!subs[@]}"; do
    sub=${subs[$i]}
    log=$build/logs/$sub.log
    res=$build/results/$sub
    notes=()
    score=$(sed -nE "s/^$name: ([0-9]+)\/([0-9]+) passed$/\1 \2/p" "$log" | tail -n1)
    if [ -n "$score" ]; then
        read -r passed total <<<"$score"
    else
        passed=0 total=
        if grep -q ': the build failed' "$log"; then
            # The compiler's first error in the copy; else the linker's missing (or
            # doubly defined) symbol; else the build's first error line.
            err=$(grep -m1 -E "$base:[0-9]+:[0-9]+: error" "$log" | sed -E 's/^.*\/([^/]+:[0-9]+:[0-9]+: error)/\1/')
            sym=$(grep -m1 -oE "(undefined reference to|multiple definition of) [\`'‘][^'’]+['’]" "$log")
            if [ -n "$err" ]; then
                notes+=("does not compile: $err")
            elif [ -n "$sym" ]; then
                notes+=("does not link: $sym")
            else
                notes+=("does not build: $(grep -m1 -iE 'error' "$log" | sed -E 's/^[[:space:]]+//')")
            fi
        else
            notes+=("not graded: $(tail -n1 "$log")")
        fi
    fi
    hung=$(grep -oE 'hung: stopped after [0-9]+ s' "$log" | grep -oE '[0-9]+' | sort -n | tail -n1)
    [ -n "$hung" ] && notes+=("hung: stopped after $hung s")
    limit=$(sed -nE 's/^note: the tests ran into EXERCISE_TOTAL_LIMIT \(([0-9]+) s\)$/\1/p' "$log" | tail -n1)
    [ -n "$limit" ] && notes+=("stopped at the copy's limit, $limit s")
    sig=$(grep -oE '(exit status|did not finish: exit status) 1[3-5][0-9]' "$log" | grep -oE '[0-9]+$' |
          grep -vxE '137' | head -n1)
    [ -n "$sig" ] && notes+=("crashed: signal $((sig - 128))")
    # A case a `repeat` line marks that passed some runs and failed others (exercise.sh
    # check: FLAKY), with each run's outcome.
    flaky=$(awk -F'\t' '$8 ~ /PASS/ && $8 ~ /FAIL/ { gsub(/,/, " ", $8); printf "%s%s (%s)", sep, $3, $8; sep = ", " }' "$res/results.tsv")
    [ -n "$flaky" ] && notes+=("flaky: $flaky")
    findings=$(sed -n 's/^SANITIZER  //p' "$log" | paste -sd ';' | sed 's/;/; /g')
    if [ -f "$res/outside" ]; then
        notes+=("changed outside the markers: logs/$sub.outside.diff")
        flagged+=("$sub")
    fi
    note=$(printf '%s; ' "${notes[@]}")
    note=${note%; }
    points=$(awk -F'\t' '$4 == "PASS" { s += $5 } END { print s + 0 }' "$res/results.tsv")
    rows+=("$passed|$total|$points|$findings|$(cat "$res/seconds")|$note")
done

# A copy that did not build has no total of its own: the exercise's, from the others.
extotal=$ncases
for r in "${rows[@]}"; do
    t=$(cut -d'|' -f2 <<<"$r")
    [ -n "$t" ] && [ "$t" -gt "$extotal" ] && extotal=$t
done

# The CSV: a column per test case (its points in this copy; the header says its worth).
{
    printf 'submission,score,max score,passed,total,sanitizer findings,seconds,notes'
    while IFS=$'\t' read -r vis label case pts; do
        printf ',%s' "$(csv_field "$([ "$vis" = hidden ] && echo "hidden ")$label: $case ($pts)")"
    done <"$build/tests.tsv"
    echo
    for i in "${!subs[@]}"; do
        IFS='|' read -r passed total points findings secs note <<<"${rows[$i]}"
        printf '%s,%s,%s,%s,%s,%s,%s,%s' "$(csv_field "${subs[$i]}")" "$points" "$max_score" "$passed" \
            "${total:-$extotal}" "$(csv_field "$findings")" "$secs" "$(csv_field "$note")"
        awk -F'\t' -v mine="$build/results/${subs[$i]}/results.tsv" '
            BEGIN { while ((getline l < mine) > 0) { split(l, r, "\t"); if (r[4] == "PASS") got[r[1] FS r[2] FS r[3]] = r[5] } }
            { printf ",%s", ($1 FS $2 FS $3) in got ? got[$1 FS $2 FS $3] : 0 } END { print "" }' "$build/tests.tsv"
    done
} >"$csv"

# Gradescope's results.json (its autograder's format): a test per case, the hidden ones
# shown once the grades are published; the notes and findings as the overall output.
# With hidden tests, what a student sees before that holds no hidden point: the top
# level (its score, the total) is after_published too, each public test is visible with
# its points, and the overall output gives the public tests' score only.
for i in "${!subs[@]}"; do
    sub=${subs[$i]}
    IFS='|' read -r passed total points findings secs note <<<"${rows[$i]}"
    overall=""
    [ -n "$findings" ] && overall="$overall
Memory or undefined-behaviour bugs the sanitizers found: $findings."
    [ -n "$note" ] && overall="$overall
Notes: $note."
    [[ $note == *hung:* ]] && overall="$overall
A test hung (it was stopped): a loop that never ends, or a memory bug. check-exercise runs the public
tests as they were run here, with the same sanitizers and limits:
  make -f Makefile.tutorial check-exercise EX=$name"
    why="it did not run: the test program stopped before it (a crash, or its time limit)"
    if [[ $note =~ ^does\ not\ (compile|link|build):\  ]]; then
        how=${BASH_REMATCH[1]} what=${note#"${BASH_REMATCH[0]}"}
        why="it did not run: the copy does not $how (${what%%; changed outside the markers*})"
    fi
    awk -F'\t' -v overall="$overall" -v secs="$secs" -v why="$why" -v mine="$build/results/$sub/results.tsv" \
        -v name="$name" -v passed="$passed" -v total="${total:-$extotal}" -v points="$points" -v max="$max_score" '
        function esc(s) {
            gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/\t/, "\\t", s)
            gsub(/\r/, "\\r", s); gsub(/\n/, "\\n", s); gsub(/[\001-\037]/, " ", s); return s }
        function slurp(f,   l, s, n) {
            s = ""; n = 0
            while ((getline l < f) > 0) s = s (n++ ? "\n" : "") l
            close(f); return s }
        BEGIN { while ((getline l < mine) > 0) { split(l, r, "\t"); st[r[1] FS r[2] FS r[3]] = r[4]; out[r[1] FS r[2] FS r[3]] = r[7]; runs[r[1] FS r[2] FS r[3]] = r[8] } }
        {
            k = $1 FS $2 FS $3
            ran = k in st               # asked first: reading st[k] would add it
            ok = ran && st[k] == "PASS"
            text = ran ? (ok ? "" : slurp(out[k])) : why
            if (!ok && text == "") text = "failed"
            score += ok ? $4 : 0
            if ($1 == "hidden") nhid++
            else { pub_n++; pub_ok += ok; pub_score += ok ? $4 : 0; pub_max += $4 }
            # A repeated case: the outcome of each run (extra_data.runs; flaky when they differ).
            extra = ""
            if (ran && runs[k] != "") {
                m = split(runs[k], rr, ",")
                extra = ", \"extra_data\": {\"runs\": ["
                for (j = 1; j <= m; j++) extra = extra (j > 1 ? ", " : "") "\"" (rr[j] == "PASS" ? "passed" : "failed") "\""
                extra = extra "]}"
            }
            t[++n] = sprintf("    {\"name\": \"%s\", \"score\": %s, \"max_score\": %s, \"status\": \"%s\", \"output\": \"%s\", \"visibility\": \"%s\"%s}",
                esc($2 ": " $3), ok ? $4 : 0, $4, ok ? "passed" : "failed", esc(text),
                $1 == "hidden" ? "after_published" : "visible", extra)
        }
        END {
            if (nhid)
                head = sprintf("%s: the public tests: %d/%d passed, %d/%d points. The hidden tests, and the total score with them, are shown once the grades are published.",
                               name, pub_ok, pub_n, pub_score, pub_max)
            else
                head = sprintf("%s: %s/%s tests passed, %s/%s points.", name, passed, total, points, max)
            printf "{\n  \"score\": %s,\n  \"execution_time\": %d,\n  \"output\": \"%s\",\n", score + 0, secs + 0.5, esc(head overall)
            printf "  \"visibility\": \"%s\",\n  \"stdout_visibility\": \"hidden\",\n  \"tests\": [\n", nhid ? "after_published" : "visible"
            for (i = 1; i <= n; i++) printf "%s%s\n", t[i], i < n ? "," : ""
            printf "  ]\n}\n"
        }' "$build/tests.tsv" >"$build/results/$sub/results.json"
done

echo
printf '%-24s %9s %9s  %-44s %8s  %s\n' submission score passed "sanitizer findings" seconds notes
for i in "${!subs[@]}"; do
    IFS='|' read -r passed total points findings secs note <<<"${rows[$i]}"
    printf '%-24s %9s %9s  %-44s %8s  %s\n' "${subs[$i]}" "$points/$max_score" "$passed/${total:-$extotal}" \
        "${findings:--}" "$secs" "${note:--}"
done
echo
[ "$ncases" -gt 0 ] && echo "The tests: how many of the ${#subs[@]} copies pass each"
[ "$ncases" -gt 0 ] && for sub in "${subs[@]}"; do cat "$build/results/$sub/results.tsv"; done |
    awk -F'\t' -v n="${#subs[@]}" 'FNR == NR { order[++m] = $1 FS $2 FS $3; pts[$1 FS $2 FS $3] = $4; next }
        $4 == "PASS" { ok[$1 FS $2 FS $3]++ }
        END { for (i = 1; i <= m; i++) { split(order[i], p, FS)
                  printf "  %5s  %-60s %3d pt  %s\n", ok[order[i]] + 0 "/" n, (p[1] == "hidden" ? "hidden " : "") p[2] ": " p[3], pts[order[i]], "" } }' \
        "$build/tests.tsv" -
for sub in "${flagged[@]}"; do
    echo
    echo "== $sub changed code outside the EXERCISE markers:"
    cat "$build/logs/$sub.outside.diff"
done
# For the teacher only (no student's results hold it): the pairs of copies sharing much
# of their code (scripts/similarity.sh).
pairs=()
for i in "${!subs[@]}"; do pairs+=("${subs[$i]}=${files[$i]}"); done
bash "$ROOT/scripts/similarity.sh" "$name" "${pairs[@]}" >"$build/similarity.txt" 2>&1
echo
tail -n1 "$build/similarity.txt" | sed "s|\$| ($build/similarity.txt)|"
echo
echo "grade: ${#subs[@]} copies in $(awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s with $jobs job(s); CSV in $csv; Gradescope's results.json for each copy in $build/results/; each copy's whole output in $build/logs/"
