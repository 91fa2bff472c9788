#!/usr/bin/env bash
# regen-docs.sh [--check] [--bin BINDIR] [PART...] — writes the generated parts of the
# docs, or (--check) fails if any of them is not what the code produces now.
#
# Generated parts, each a block a marker line introduces in a doc:
#   <!-- generated: NAME -->          the ``` block below it is the output of NAME,
#                                     normalised (below); NAME is one of the gdb parts:
#     inflight-gdb, inflight-usr1     scripts/inflight.sh (run once for both)
#     traces-stacks, traces-coro      scripts/traces.sh
#     watch-line                      scripts/watch-line.sh
#     stage1-finish                   gdb -x docs/gdb/stage1-finish.gdb on crawl-callbacks
#     stage3-session                  gdb -x docs/gdb/stage3.gdb on the chapter's crawl-queue
#     budget-stop                     gdb -x docs/gdb/budget-stop.gdb on crawl-queue --spider
#   <!-- side-by-side: FILE FUNCTION  the ``` block below it: each step in our words (the
#   chapter: NAME | SECTION | N       left side, as written in the comment) next to the
#   WORDS => ANCHOR                   first line of FUNCTION in FILE that contains ANCHOR
#   ... -->                           (after the previous anchor's line, if one does), with
#                                     its line number; each chapter: line (a reference,
#                                     scripts/check-chapter.sh) is shown above it
#   docs/img/frames-stage1.svg,       the two pictures of scripts/frames.sh (make -f
#   docs/img/frames-stage2.svg        Makefile.tutorial frames), normalised, embedded in
#                                     docs/debugging.md; frames.sh --check's own checks of
#                                     what they show run first
# and, in the prose of every doc, each code position `FILE:LINE (SYMBOL)`: LINE must
# hold SYMBOL or fall in the function SYMBOL; when it does not and SYMBOL is on exactly
# one line of FILE, LINE is rewritten. A position without its (SYMBOL) is an error, and
# so is a `snake_case` name in docs/debugging.md's prose that no source has.
#
# PART: gdb (the eight gdb blocks; runs the crawlers, ~30 s), inflight, traces,
# watch-line, stage1-finish, stage3-session, budget-stop, frames (the two pictures, ~10 s),
# listings (side-by-side, positions and names: no program runs). No PART: all. BINDIR: a Debug build's bin/ (build/bin); the
# transcripts are gcc -O0 -g3 output. Normalised: the testsite's port (PORT), addresses
# and pointers (0x…1, 0x…2, ... numbered in order of first appearance in a block),
# pids, glibc's own line numbers, a freed int's new value, and (inflight) which pages
# are in flight: /p/N; in the pictures, a read's deadline (a clock reading: NNNNNN) too.
# The stage-3 flags of the chapter's crawler come from
# scripts/chapter-flags.sh.
#
# regen-docs.sh --selftest: the listings' and positions' checks, tried on a small tree.
#
# --check runs inflight up to three times before it calls a doc stale: its stops come
# 1.5 s into a live crawl, and a loaded machine can make one run differ.
#
# --handout (scripts/handout.sh, in the copy): a listing that quotes a line the copy no
# longer has (an exercise's, stubbed) is left out, its comment too, with a note.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1

# --selftest: in a small tree of its own, the listings and positions do what the header
# says: written, then stale after a line moves (and rewritten), an error when a quoted
# line is gone or a position names no symbol.
selftest() {
    local t fail=0
    t=$(mktemp -d)
    mkdir -p "$t/scripts" "$t/docs" "$t/src"
    cp "$here/scripts/regen-docs.sh" "$here/scripts/chapter-flags.sh" "$t/scripts/"
    printf '%s\n' '/* a.c */' 'static int add_body(int x)' '{' '    int y = offset_of(x);' \
        '    return y;' '}' >"$t/src/a.c"
    printf '%s\n' 'See `src/a.c:4 (offset_of)`, in `src/a.c:5 (add_body)`.' '' \
        '<!-- side-by-side: src/a.c add_body' 'def add(x):     => static int add_body(' \
        '    return x + 1 => return y;' '-->' '```' '```' >"$t/docs/a.md"
    run() { (cd "$t" && bash scripts/regen-docs.sh "$@" listings) >"$t/out" 2>&1; }
    expect() {  # WHAT STATUS GREP: the last run's status and output
        local what=$1 want=$2 pat=$3 got=$4
        if [ "$got" != "$want" ] || ! grep -qF -- "$pat" "$t/out" "$t/docs/a.md"; then
            echo "selftest: $what: FAILED (status $got, wanted $want and '$pat'):"
            sed 's/^/  | /' "$t/out" "$t/docs/a.md"
            fail=1
        else
            echo "selftest: $what: ok"
        fi
    }
    run; expect "a listing is written" 0 '   5      return y;' $?
    run --check; expect "then it checks" 0 'the docs match' $?
    sed -i '1i\\' "$t/src/a.c"
    run --check; expect "a line moved: stale" 1 'is stale' $?
    run; expect "regenerated: the listing follows" 0 '   6      return y;' $?
    expect "... and the position follows its symbol" 0 'src/a.c:5 (offset_of)' 0
    run --check; expect "then it checks again" 0 'the docs match' $?
    sed -i '/return y;/d' "$t/src/a.c"
    run; expect "a quoted line is gone: an error" 1 'no line of src/a.c contains: return y;' $?
    printf '%s\n' '    return y;' >>"$t/src/a.c"
    printf '%s\n' '' 'A bare src/a.c:3 in prose.' >>"$t/docs/a.md"
    run; expect "a position without its symbol: an error" 1 'needs its symbol' $?
    rm -rf "$t"
    return $fail
}

orig_args=("$@")
check=0
handout=0
bin=$here/build/bin
parts=()
while [ $# -gt 0 ]; do
    case $1 in
        --check) check=1 ;;
        --handout) handout=1 ;;
        --bin) bin=${2:?--bin needs a directory}; shift ;;
        -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        --selftest) selftest; exit $? ;;
        gdb) parts+=(inflight traces watch-line stage1-finish stage3-session budget-stop) ;;
        inflight | traces | watch-line | stage1-finish | stage3-session | budget-stop | frames | listings)
            parts+=("$1") ;;
        *) echo "regen-docs.sh: unknown part or option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
full=0
if [ ${#parts[@]} -eq 0 ]; then
    parts=(inflight traces watch-line stage1-finish stage3-session budget-stop frames listings)
    full=1
fi
want() { local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
# shellcheck source=chapter-flags.sh
. "$here/scripts/chapter-flags.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blocks" "$work/new"
status=0

# Every doc that may hold a generated part or a position.
docs=()
for f in README.md docs/*.md docs/exercises/*/README.md; do [ -f "$f" ] && docs+=("$f"); done

# ---- the gdb parts
if want inflight || want traces || want watch-line || want stage1-finish ||
    want stage3-session || want budget-stop || want frames; then
    for f in crawl-callbacks crawl-generators crawl-queue testsite; do
        [ -x "$bin/$f" ] || { echo "regen-docs.sh: $bin/$f not built" >&2; exit 1; }
    done
    command -v gdb >/dev/null || { echo "regen-docs.sh: gdb not found" >&2; exit 1; }
fi

# normalise [EXTRA-SED-EXPR]: stdin to stdout, as the header says.
normalise() {
    sed -E -e "s|$here/||g" -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
        -e 's#(^|[ (])(\.{1,2}/[^ :]+):[0-9]+#\1\2:N#g' -e 's#^[0-9]+(\t\.{1,2}/)#N\1#' \
        -e 's/\(process [0-9]+\)/(process PID)/g' -e 's/\bpid [0-9]+/pid PID/g' \
        -e "${1:-s/^\$//}" |
        awk '{
            out = ""
            while (match($0, /0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f]+/)) {
                a = substr($0, RSTART, RLENGTH)
                if (!(a in id)) id[a] = ++n
                out = out substr($0, 1, RSTART - 1) "0x…" id[a]
                $0 = substr($0, RSTART + RLENGTH)
            }
            print out $0
        }'
}

# produce NAME CMD...: run CMD, keep its stdout as block NAME's raw output; a CMD that
# fails (its own checks: a breakpoint not reached, a gdb error) fails the run.
produce() {
    local name=$1
    shift
    if ! "$@" >"$work/$name.raw" 2>"$work/$name.err"; then
        echo "regen-docs.sh: $name: $* failed:" >&2
        tail -n 8 "$work/$name.err" >&2
        status=1
        return 1
    fi
}

# split RAW NAME1 NAME2 'LINE-REGEX': the lines before the first match to NAME1, the
# rest to NAME2, each without the blank lines at its ends.
split_at() {
    awk -v a="$work/blocks/$2" -v b="$work/blocks/$3" -v re="$4" '
        $0 ~ re { second = 1 }
        { if (second) nb[++m] = $0; else na[++n] = $0 }
        function emit(arr, k, f,   i, j) {
            for (i = 1; i <= k && arr[i] == ""; i++) ;
            for (j = k; j >= i && arr[j] == ""; j--) ;
            printf "" > f
            for (; i <= j; i++) print arr[i] > f
        }
        END { emit(na, n, a); emit(nb, m, b) }' "$1"
}

if want inflight && produce inflight bash scripts/inflight.sh "$bin"; then
    # Which pages are in flight 1.5 s in depends on the timing: /p/N.
    normalise 's#(127\.0\.0\.1:PORT/p/)[0-9]+#\1N#g' <"$work/inflight.raw" >"$work/inflight.txt"
    split_at "$work/inflight.txt" inflight-gdb inflight-usr1 '^== Without a debugger'
fi
if want traces && produce traces bash scripts/traces.sh "$bin"; then
    normalise <"$work/traces.raw" >"$work/traces.txt"
    split_at "$work/traces.txt" traces-stacks traces-coro "^== \\(b\\) in stage 2's terms"
fi
if want watch-line && produce watch-line bash scripts/watch-line.sh "$bin"; then
    # The last stop: the int under the watchpoint, after free() took the frame back.
    normalise 's/^New value = -?[0-9]{5,}$/New value = NNNNNNNNNN/' <"$work/watch-line.raw" \
        >"$work/blocks/watch-line"
fi

# session NAME PROG GDBFILE 'CMD;CMD;...' ARGS...: one gdb -batch session on PROG with
# ARGS and a local site's root URL: GDBFILE, then (echoed by trace-commands) the CMDs.
# Its output from the first command on, without gdb's thread chatter. Fails on a gdb
# or Python error in it.
session() {
    local name=$1 prog=$2 file=$3 cmds=$4 ex=() list c shown=""
    shift 4
    IFS=';' read -ra list <<<"$cmds"
    [ ${#list[@]} -gt 0 ] && ex=(-ex 'set trace-commands on')
    for c in "${list[@]}"; do
        ex+=(-ex "$c")
        case $c in *' '*) shown+=" -ex '$c'" ;; *) shown+=" -ex $c" ;; esac
    done
    . "$here/scripts/testsite-lib.sh"
    site_start "$bin" pages=6,links=3,size=500,seed=1 || return 1
    echo "\$ gdb -batch -x ${file#"$here"/}$shown --args $prog $* $site_url"
    timeout -k 5 60 gdb -q -batch -nx -x "$file" "${ex[@]}" \
        --args "$bin/$prog" "$@" --output /dev/null "$site_url" </dev/null >"$work/$name.gdb" 2>&1
    local rc=$?
    site_stop
    sed -n '/^+/,$p' "$work/$name.gdb" |
        grep -v -e '^\[Thread debugging' -e '^Using host libthread_db' -e '^\[New Thread' \
            -e '^\[Inferior 1 .* killed\]' -e '^\[Thread .* exited\]'
    if grep -E 'Python Exception|Error occurred in Python|Traceback|No symbol' "$work/$name.gdb" >&2 ||
        grep -E 'There is no member|<unreadable|Cannot call functions' "$work/$name.gdb" >&2; then
        return 1
    fi
    return "$rc"
}
if want stage1-finish &&
    produce stage1-finish session stage1-finish crawl-callbacks "$here/docs/gdb/stage1-finish.gdb" '' \
        --max-tasks 2; then
    if [ "$(grep -c '^Breakpoint 1, connected' "$work/stage1-finish.raw")" -ne 2 ]; then
        echo "regen-docs.sh: stage1-finish: gdb did not stop twice in connected:" >&2
        tail -n 8 "$work/stage1-finish.raw" >&2
        status=1
    else
        normalise <"$work/stage1-finish.raw" >"$work/blocks/stage1-finish"
    fi
fi
# Stage 3's session as debug-stage3 runs it (the chapter's crawler): the first stop,
# four more, and the tasks at each end.
if want stage3-session &&
    produce stage3-session session stage3-session crawl-queue "$here/docs/gdb/stage3.gdb" \
        'run;info tasks;continue;continue;continue;continue;info tasks;kill' \
        --max-tasks 2 "${CHAPTER_FLAGS[@]}"; then
    normalise <"$work/stage3-session.raw" >"$work/blocks/stage3-session"
fi
# A Lua spider stopped by its budget (docs/spiders.md): the hook's stop, then pcall's.
if want budget-stop &&
    produce budget-stop session budget-stop crawl-queue "$here/docs/gdb/budget-stop.gdb" '' \
        --spider docs/gdb/budget-loop.lua --spider-budget 100000 -q; then
    if [ "$(grep -c '^Thread 1 "crawl-queue" hit Breakpoint [12], ' "$work/budget-stop.raw")" -ne 2 ]; then
        echo "regen-docs.sh: budget-stop: gdb did not stop in stop_budget and finish_pcall:" >&2
        tail -n 8 "$work/budget-stop.raw" >&2
        status=1
    else
        normalise <"$work/budget-stop.raw" >"$work/blocks/budget-stop"
    fi
fi

# The pictures of the frames (scripts/frames.sh, which checks what they show): each
# normalised as a block is, a file of its own under docs/img/.
images=()
if want frames && produce frames bash scripts/frames.sh --check "$bin" "$work/frames"; then
    for n in 1 2; do
        images+=("docs/img/frames-stage$n.svg")
        normalise 's/(deadline = )[0-9]+/\1NNNNNN/g;s/(port = )[0-9]+/\1PORT/g' \
            <"$work/frames/stage$n.svg" >"$work/new/docs%img%frames-stage$n.svg"
    done
fi

# ---- write (or compare) the docs
# The gdb blocks: each marked block whose output this run produced gets it.
for doc in "${docs[@]}"; do
    awk -v dir="$work/blocks" -v full="$full" -v doc="$doc" '
        function fail(msg) { printf "%s:%d: %s\n", doc, FNR, msg > "/dev/stderr"; bad = 1 }
        state == 2 && /^```/ { state = 0; print; next }
        state == 2 { if (!keep) next; print; next }
        state == 1 {
            if ($0 !~ /^```/) { fail("generated: marker not followed by a ``` block"); state = 0; print; next }
            print
            f = dir "/" name
            keep = 1
            if ((getline line < f) > 0) {
                keep = 0
                print line
                while ((getline line < f) > 0) print line
                close(f)
            } else if (full) fail("no generated part named " name)
            state = 2
            next
        }
        /^<!-- generated: [a-z0-9-]+ -->$/ { name = $3; state = 1; print; next }
        { print }
        END { if (state) fail("generated block not closed"); exit bad }' "$doc" >"$work/new/${doc//\//%}" ||
        status=1
done

# The side-by-side listings, from the comments above them and the sources.
if want listings; then
    for doc in "${docs[@]}"; do
        src=$work/new/${doc//\//%}
        awk -v doc="$doc" -v handout="$handout" '
            function fail(msg) { printf "%s:%d: %s\n", doc, start, msg > "/dev/stderr"; bad = 1 }
            # The lines of FUNCTION in FILE: from its definition (a line at column 0
            # naming it, with no ";" at the end) to the next "}" at column 0.
            function load(file, fn,   line, n, in_fn) {
                nsrc = 0; n = 0; in_fn = 0
                while ((getline line < file) > 0) {
                    n++
                    if (!in_fn && line ~ ("^[a-z].*[ *]" fn "\\(") && line !~ /;[ \t]*$/) in_fn = 1
                    if (in_fn) { src[++nsrc] = line; num[nsrc] = n }
                    if (in_fn && line ~ /^}/) break
                }
                close(file)
                return n > 0
            }
            # The listing into `out`; 0 (and a message) when a line it quotes is gone.
            function render(   i, k, w, at, right, line) {
                if (!load(file, fn)) { why = file ": no such file"; return 0 }
                if (nsrc == 0) { why = file ": no function " fn; return 0 }
                w = length("in our words")
                for (i = 1; i <= np; i++) if (length(left[i]) > w) w = length(left[i])
                out = ""
                for (i = 1; i <= nc; i++) out = out chap[i] "\n"
                out = out sprintf("%-*s    %s (%s)\n", w, "in our words", file, fn)
                at = 0
                for (i = 1; i <= np; i++) {
                    right = ""
                    if (anc[i] != "") {
                        # The first after the previous match (C may order them otherwise).
                        for (k = at + 1; k <= nsrc && index(src[k], anc[i]) == 0; k++) ;
                        if (k > nsrc) for (k = 1; k <= at && index(src[k], anc[i]) == 0; k++) ;
                        if (k < 1 || k > nsrc || index(src[k], anc[i]) == 0) {
                            why = fn ": no line of " file " contains: " anc[i]; return 0
                        }
                        at = k
                        right = sprintf("%4d  %s", num[k], src[k])
                    }
                    line = sprintf("%-*s    %s", w, left[i], right)
                    sub(/[ \t]+$/, "", line)
                    out = out line "\n"
                }
                return 1
            }
            state == 0 && /^<!-- side-by-side: / {
                held = $0 "\n"; file = $3; fn = $4; np = 0; nc = 0; state = 1; start = FNR; next
            }
            state == 1 && /^-->$/ { held = held $0 "\n"; state = 2; next }
            # A reference to the chapter (checked by scripts/check-chapter.sh): shown
            # above the listing as "the chapter: NAME, section SECTION, listing N".
            state == 1 && /^chapter: / {
                held = held $0 "\n"
                nf = split(substr($0, 10), ref, / *\| */)
                chap[++nc] = sprintf("the chapter: %s, section \"%s\", listing %s", ref[1], ref[2], ref[3])
                gsub(/`/, "", chap[nc])
                next
            }
            state == 1 {
                held = held $0 "\n"
                line = $0
                if (index(line, " => ")) {
                    left[++np] = substr(line, 1, index(line, " => ") - 1)
                    anc[np] = substr(line, index(line, " => ") + 4)
                    sub(/^ +/, "", anc[np])
                } else { left[++np] = line; anc[np] = "" }
                sub(/[ \t]+$/, "", left[np])
                if (left[np] ~ /^ *$/) left[np] = ""
                next
            }
            state == 2 {
                if ($0 !~ /^```/) { fail("side-by-side comment not followed by a ``` block"); exit 1 }
                dropped = 0
                if (render()) printf "%s%s\n%s", held, $0, out
                else if (handout) { # an exercise stubbed: its lines (and anchors) go too
                    printf "*(The listing of `%s` is left out of the handout: it quotes an exercise.)*\n", fn
                    dropped = 1
                } else { fail(why); printf "%s", held; print }
                state = 3; next
            }
            state == 3 && /^```/ { if (!dropped) print; state = 0; next }
            state == 3 { next }
            { print }
            END { exit bad }' "$src" >"$src.sbs" && mv "$src.sbs" "$src" || status=1
    done

    # Positions in prose: FILE:LINE (SYMBOL). Code blocks (``` and 4-space indented
    # ones after a blank line) are output or excerpts, not prose.
    for doc in "${docs[@]}"; do
        src=$work/new/${doc//\//%}
        awk -v doc="$doc" '
            function fail(msg) { printf "%s:%d: %s\n", doc, FNR, msg > "/dev/stderr"; bad = 1 }
            function resolve(path,   cmd, r, n, f) {
                if (path in where) return where[path]
                n = 0
                if ((getline r < path) >= 0) { close(path); where[path] = path; return path }
                cmd = "git ls-files -- \"*/" path "\" 2>/dev/null"
                while ((cmd | getline f) > 0) { n++; r = f }
                close(cmd)
                where[path] = n == 1 ? r : ""
                return where[path]
            }
            # 0: LINE holds SYMBOL or is in the function SYMBOL; else the one line that
            # holds it (if there is one), or -1.
            function locate(file, ln, sym,   l, n, hits, only, inside, fnline) {
                n = 0; hits = 0; inside = 0; fnline = 0
                while ((getline l < file) > 0) {
                    n++
                    if (l ~ ("^[a-z].*[ *]" sym "\\(") && l !~ /;[ \t]*$/) fnline = n
                    else if (l ~ /^}/ && fnline && n < ln) fnline = 0
                    if (index(l, sym)) { hits++; only = n }
                    if (n == ln && (index(l, sym) || fnline)) inside = 1
                }
                close(file)
                if (inside) return 0
                return hits == 1 ? only : -1
            }
            /^```/ { fence = !fence; print; next }
            fence || (blank && /^    /) { print; next }
            {
                blank = ($0 ~ /^ *$/)
                rest = $0; out = ""
                while (match(rest, /[A-Za-z0-9_\/.-]+\.(c|h|py):[0-9]+`? \(`?[A-Za-z_][A-Za-z0-9_]*/)) {
                    m = substr(rest, RSTART, RLENGTH)
                    path = m; sub(/:.*/, "", path)
                    ln = m; sub(/^[^:]*:/, "", ln); sub(/[^0-9].*/, "", ln)
                    sym = m; sub(/.*\(`?/, "", sym)
                    file = resolve(path)
                    if (file == "") fail(path ": no such file, or more than one")
                    else if ((r = locate(file, ln + 0, sym)) < 0)
                        fail(path ":" ln " is not in " sym ", and " sym " is not on one line of " file)
                    else if (r > 0) {
                        printf "%s:%d: %s:%d -> %d (%s)\n", doc, FNR, path, ln, r, sym > "/dev/stderr"
                        sub(":" ln, ":" r, m)
                    }
                    out = out substr(rest, 1, RSTART - 1) m
                    rest = substr(rest, RSTART + RLENGTH)
                }
                $0 = out rest
                # Any other FILE:LINE in prose names no symbol: nothing checks it.
                t = $0
                gsub(/[A-Za-z0-9_\/.-]+\.(c|h|py):[0-9]+`? \(`?[A-Za-z_]/, "", t)
                if (match(t, /[A-Za-z0-9_\/-]+\.(c|h|py):[0-9]+/))
                    fail(substr(t, RSTART, RLENGTH) \
                         ": a code position in prose needs its symbol: FILE:LINE (SYMBOL)")
                print
            }
            END { exit bad }' "$src" >"$src.pos" && mv "$src.pos" "$src" || status=1
    done
fi

# The names the gdb guide's prose gives (a `snake_case` word in backticks) are still
# those of the sources (not in a handout, whose stubs drop some).
if want listings && [ "$handout" = 0 ]; then
    missing=$(awk '/^```/ { fence = !fence; next } !fence' docs/debugging.md |
        grep -o '`[a-z_][a-z0-9_]*_[a-z0-9_]*`' | tr -d '`' | sort -u |
        while read -r w; do
            grep -rqw --include='*.[ch]' --include='*.py' --include='*.gdb' -- "$w" \
                common stage1_callbacks stage2_generators stage3_queue docs/gdb || echo "$w"
        done)
    if [ -n "$missing" ]; then
        echo "regen-docs.sh: docs/debugging.md names what the sources no longer have:" $missing >&2
        status=1
    fi
fi

changed=0
for doc in "${docs[@]}" "${images[@]}"; do
    new=$work/new/${doc//\//%}
    if ! cmp -s "$doc" "$new"; then
        changed=$((changed + 1))
        if [ $check = 1 ]; then
            echo "regen-docs.sh: $doc is stale:" >&2
            diff -u "$doc" "$new" | head -n 40 >&2
        elif [ $status = 0 ]; then
            cp "$new" "$doc"
            echo "regen-docs.sh: $doc rewritten"
        fi
    fi
done
if [ $status != 0 ]; then
    echo "regen-docs.sh: failed (nothing written)" >&2
    exit 1
fi
if [ $check = 1 ] && [ $changed -gt 0 ]; then
    # inflight stops the crawlers after 1.5 s of a live crawl: a machine loaded enough
    # can still make one run differ (a response landing in the stopping turn). A stale
    # doc differs every time: two more runs before saying so.
    attempt=${REGEN_ATTEMPT:-1}
    if want inflight && [ "$attempt" -lt 3 ]; then
        echo "regen-docs.sh: run $attempt differs; once more (inflight's stops are timed)" >&2
        rm -rf "$work"
        REGEN_ATTEMPT=$((attempt + 1)) exec bash "$0" "${orig_args[@]}"
    fi
    echo "regen-docs.sh: $changed doc(s) differ from what the code produces: run scripts/regen-docs.sh" >&2
    exit 1
fi
if [ $check = 1 ]; then
    echo "regen-docs.sh: ${parts[*]}: the docs match"
else
    echo "regen-docs.sh: ${parts[*]}: $changed doc(s) changed"
fi
