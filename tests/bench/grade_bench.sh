#!/usr/bin/env bash
# grade_bench.sh [N] [JOBS] — how long scripts/grade.sh takes on a class of N copies
# (100) of stage1-read_response with JOBS jobs (grade.sh's default, two a core), from a fresh build directory
# (the prebuilt tree included). The class is made here from our own fetcher.c, a mix
# a teacher meets (in 100: 70 correct, 10 with the recv()==0 mistake, 8 untouched
# stubs, 6 that do not compile, 4 that read freed memory, 2 endless loops), every
# copy a different file. Prints the figure, the load of the machine, and each kind's
# seconds; exit 1 when a copy did not get the row its kind should.
#
# Limits (each is printed): a crawler run 15 s (EXERCISE_CRAWL_LIMIT, the grader's
# own), all the tests of one copy 60 s (EXERCISE_TOTAL_LIMIT, where a class of 100
# would lower the default 300): an endless loop costs those 60 s, a correct copy its
# tests' own few seconds.
# Environment: GRADE_BENCH_DIR (where the class and the build go, a temporary
# directory removed afterwards).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-100}
jobs=${2:-$((2 * $(nproc)))}
[[ $n =~ ^[1-9][0-9]*$ && $jobs =~ ^[1-9][0-9]*$ ]] || { echo "usage: grade_bench.sh [N] [JOBS]" >&2; exit 2; }
work=${GRADE_BENCH_DIR:-$(mktemp -d)}
[ -n "${GRADE_BENCH_DIR:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/class"
src=$here/stage1_callbacks/fetcher.c
name=stage1-read_response

# Our fetcher.c with line OLD of the region replaced by NEW (exit 1 if OLD is not there).
variant() {
    awk -v old="$1" -v new="$2" -v tag="$3" '
        index($0, "EXERCISE stage1-read_response: BEGIN") { print; print "/* " tag " */"; next }
        !done && index($0, old) { print new; done = 1; next }
        { print }
        END { if (!done) exit 1 }' "$src"
}
feed='    int r = n > 0 ? http_parser_feed(f->parser, chunk, (size_t)n) : http_parser_eof(f->parser);'
ok_end='        fetcher_succeeded(f, false);'
kinds=()
for ((i = 1; i <= n; i++)); do
    # The kinds spread through the class (as names in a folder fall), not the slow
    # ones last: copy i gets the kind of position (37 i mod n) + 1 of the mix.
    k=$((((37 * i) % n + 1) * 100 / n))
    f=$work/class/s$(printf %03d "$i").c
    if [ "$k" -le 70 ]; then kind=correct; variant "$feed" "$feed" "copy $i" >"$f"
    elif [ "$k" -le 80 ]; then kind=recv0
        variant "$feed" "    if (n == 0) { fetcher_succeeded(f, false); return; }
    int r = http_parser_feed(f->parser, chunk, (size_t)n);" "copy $i" >"$f"
    elif [ "$k" -le 88 ]; then kind=stub; bash "$here/scripts/exercise.sh" copy "$name" "$f"; echo "/* copy $i */" >>"$f"
    elif [ "$k" -le 94 ]; then kind=no-compile; variant "$feed" "    int r = this is not C;" "copy $i" >"$f"
    elif [ "$k" -le 98 ]; then kind=use-after-free
        variant "$ok_end" "        { fetcher_succeeded(f, false); if (f->sock > 0) return; }" "copy $i" >"$f"
    else kind=endless-loop; variant "$feed" "    for (;;) {}
$feed" "copy $i" >"$f"
    fi || { echo "grade_bench: $src does not have the lines the variants change"; exit 1; }
    kinds+=("$kind")
done

export EXERCISE_CRAWL_LIMIT=${EXERCISE_CRAWL_LIMIT:-15} EXERCISE_TOTAL_LIMIT=${EXERCISE_TOTAL_LIMIT:-60}
echo "grade_bench: $n copies of $name, $jobs job(s), EXERCISE_CRAWL_LIMIT=$EXERCISE_CRAWL_LIMIT EXERCISE_TOTAL_LIMIT=$EXERCISE_TOTAL_LIMIT"
echo "  load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
# The CPU time of the grading (every process it waited for) beside the wall time: on
# a machine others share, the wall time says how loaded it was as much as how fast the
# grading is; CPU / cores is the least it can take on this machine alone.
t0=$(date +%s.%N)
TIMEFORMAT='%U %S'
{ time GRADE_BUILD=$work/build bash "$here/scripts/grade.sh" -j "$jobs" "$name" "$work/class" \
    >"$work/grade.log" 2>&1; } 2>"$work/cpu"
rc=$?
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$work/cpu")
echo "  load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
[ $rc -eq 0 ] || { tail -20 "$work/grade.log"; echo "grade_bench: grade.sh exited $rc"; exit 1; }

# Each kind: its copies' seconds, and whether each got its row.
fail=0
for kind in correct recv0 stub no-compile use-after-free endless-loop; do
    cnt=0 sum=0 wrong=""
    for ((i = 1; i <= n; i++)); do
        [ "${kinds[$((i - 1))]}" = "$kind" ] || continue
        s=s$(printf %03d "$i")
        row=$(grep "^$s," "$work/build/grade.csv")
        IFS=, read -r _ score max passed total _ <<<"$row"
        sec=$(cat "$work/build/results/$s/seconds")
        cnt=$((cnt + 1)); sum=$(awk -v a="$sum" -v b="$sec" 'BEGIN { print a + b }')
        case $kind in
            correct) [ "$score" = "$max" ] ;;
            no-compile) [ "$score" = 0 ] && [[ $row == *"does not compile"* ]] ;;
            use-after-free) [ "$score" -lt "$max" ] && [[ $row == *heap-use-after-free* ]] ;;
            endless-loop) [ "$score" -lt "$max" ] && [[ $row == *"hung: stopped after"* ]] ;;
            *) [ "$score" -lt "$max" ] ;;
        esac || wrong="$wrong $s"
    done
    [ $cnt -gt 0 ] || continue
    printf '  %-16s %3d copies, %6.1f s each on average%s\n' "$kind" "$cnt" "$(awk -v a="$sum" -v c="$cnt" 'BEGIN { print a / c }')" \
        "${wrong:+  WRONG ROWS:$wrong}"
    [ -z "$wrong" ] || fail=1
done
echo "grade_bench: $n submissions of $name graded in $secs s with $jobs job(s) ($(awk -v s="$secs" -v n="$n" 'BEGIN { printf "%.1f", s / n }') s each; the prebuilt tree included)"
echo "grade_bench: CPU $cpu s (user + system, all processes): $(awk -v c="$cpu" -v k="$(nproc)" 'BEGIN { printf "%.0f", c / k }') s on $(nproc) idle cores at best"
exit $fail
