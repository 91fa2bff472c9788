#!/usr/bin/env bash
# handout.sh DEST [NAME...] — a copy of the course for students: the repository's
# files as they are in this checkout (the ones git tracks), with each exercise's
# region replaced by its stub (every exercise, or the NAMEs given), in a fresh git
# repository of one commit, so nothing of the solutions is in its history either.
#
# The docs' excerpts of a replaced region are left out (scripts/check-docs.sh still
# passes there). The graders work as in the course (make -f Makefile.tutorial
# check-exercise EX=NAME); in the handout, grading one exercise also compiles the
# student's exercise-OTHER/ copies of the others it runs on. Before committing, every
# line that exists only in a solution is looked for in the whole copy: one found is
# an error, and no handout is made.
#
# Needs git. DEST must not exist (or be empty).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "handout: $*" >&2; exit 2; }

check_only=0
if [ "${1:-}" = --check ]; then
    check_only=1
    shift
fi
dest=${1:-}
[ -n "$dest" ] || die "usage: handout.sh [--check] DEST [EXERCISE...] (make -f Makefile.tutorial handout HANDOUT=DEST)"
shift
if [ $check_only = 1 ]; then
    [ -d "$dest" ] || die "$dest is not a directory"
elif [ -e "$dest" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ]; then
    die "$dest exists and is not empty"
fi
command -v git >/dev/null || die "git is needed"
git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 || die "$ROOT is not a git checkout"

all=$(bash "$ROOT/scripts/exercise.sh" list | sed -n 's/^  \([^ ]*\) .*/\1/p')
names=("$@")
[ ${#names[@]} -gt 0 ] || read -r -a names <<<"$(echo $all)"
for n in "${names[@]}"; do
    grep -qxF "$n" <<<"$all" || die "no exercise '$n' (scripts/exercise.sh list)"
done

# 5. No line that only a solution has may be left anywhere in the copy (DEST, for the
# exercises of `regions`); 1, naming each, when one is.
leak_check() {
    leaks=$(
        for r in "${regions[@]}"; do
            n=${r%%:*} rel=${r#*:}
            # The region's lines (trimmed, 16 characters or more) that no other place of
            # the course's code has, docs aside: the solution's own lines.
            (cd "$ROOT" && git ls-files -z -- ':!*.md' | xargs -0 awk -v b="EXERCISE $n: BEGIN" -v e="EXERCISE $n: END" -v rel="$rel" '
                function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
                FILENAME == rel && index($0, e) { inside = 0 }
                { t = trim($0) }
                FILENAME == rel && inside { if (length(t) >= 16) sol[t] = 1; next }
                FILENAME == rel && index($0, b) { inside = 1 }
                { common[t] = 1 }
                END { for (t in sol) if (!(t in common)) print t }') >"$dest.sol.$n"
            (cd "$dest" && find . -type f ! -path './.git/*' -print0 | xargs -0 awk '
                function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
                FNR == NR { sol[$0] = 1; next }
                trim($0) in sol { print FILENAME ": " trim($0) }' "$dest.sol.$n") |
                sed "s|^\./|$n: |"
            rm -f "$dest.sol.$n"
        done
    )
    # 5b. Nor six lines in a row shaped as a solution's (comments left out, every name
    # but a keyword made "I", every string "@", every number "0", spaces collapsed; at
    # least three of them of 12 characters or more; not those the stub has too),
    # anywhere: the same code under other names, say. `duplicates` finds such copies;
    # this is a small check of our own, since students' and CI's machines lack it.
    shapes=$(
        for r in "${regions[@]}"; do
            n=${r%%:*} rel=${r#*:}
            awk -v b="EXERCISE $n: BEGIN" -v e="EXERCISE $n: END" '
                index($0, e) { inside = 0 } inside { print } index($0, b) { inside = 1 }' "$ROOT/$rel" >"$dest.sol.$n"
            stub=$ROOT/docs/exercises/$n/stub.c
            [ -f "$stub" ] || stub=$ROOT/docs/exercises/$n/stub.lua    # a Lua spider's
            (cd "$dest" && find . -type f ! -path './.git/*' -print0 |
                xargs -0 awk -v W=6 -v stub="$stub" -f "$ROOT/scripts/shapes.awk" -f "$ROOT/scripts/shape-windows.awk" \
                "$dest.sol.$n" "$stub") | sed "s|^\./|$n: |"
            rm -f "$dest.sol.$n"
        done
    )
    # 5c. Nothing hidden: no hidden case's name (the names and name prefixes every
    # hidden.conf picks), nor a line of tests/hidden/ (its data and expected values,
    # 20 characters or more, trimmed) that no other file of the course has.
    hidden=$(
        { sed -n 's/^scenario [^ ]* [^ ]* [^ ]* //p; s/^unit [^ ]* //p' "$ROOT"/docs/exercises/*/hidden.conf 2>/dev/null |
              tr ',' '\n' | sed 's/\*.*//' | awk 'length($0) >= 8'
          (cd "$ROOT" && git ls-files -z | xargs -0 awk '
                function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
                { t = trim($0) }
                FILENAME ~ /^tests\/hidden\// { if (length(t) >= 20) mine[t] = 1; next }
                FILENAME ~ /\/hidden\.conf$/ { next }
                { common[t] = 1 }
                END { for (t in mine) if (!(t in common)) print t }')
        } | sort -u >"$dest.hidden"
        # ... nor one the course has inside a line elsewhere (a common header, say).
        (cd "$ROOT" && git ls-files -z -- ':!tests/hidden' ':!*/hidden.conf' |
            xargs -0 grep -ohF -f "$dest.hidden" -- 2>/dev/null) | sort -u >"$dest.common" || true
        grep -vxF -f "$dest.common" "$dest.hidden" >"$dest.hidden.own" || true
        mv "$dest.hidden.own" "$dest.hidden"
        rm -f "$dest.common"
        if [ -s "$dest.hidden" ]; then
            (cd "$dest" && find . -type f ! -path './.git/*' -print0 | xargs -0 grep -nF -f "$dest.hidden" -- 2>/dev/null |
                cut -c1-150 | sed 's|^\./||')
        fi
        rm -f "$dest.hidden"
    )
    if [ -n "$hidden" ]; then
        echo "handout: what the hidden tests hold is in these files (a case's name, its data or" >&2
        echo "an expected value: keep it in tests/hidden/ and hidden.conf):" >&2
        echo "$hidden" | sed 's/^/  /' >&2
        return 1
    fi
    if [ -n "$shapes" ]; then
        echo "handout: six lines shaped as a solution's are still in these files (stub them:" >&2
        echo "docs/exercises/NAME/handout.conf):" >&2
        echo "$shapes" | sed 's/^/  /' >&2
        return 1
    fi
    if [ -n "$leaks" ]; then
        echo "handout: lines of a solution are still in these files:" >&2
        echo "$leaks" | sed 's/^/  /' >&2
        return 1
    fi
    return 0
}

if [ $check_only = 1 ]; then      # only the leak check, on a copy made before
    dest=$(cd "$dest" && pwd)
    regions=()
    for n in "${names[@]}"; do
        regions+=("$n:$(cd "$ROOT" && grep -rlF --include='*.c' --include='*.lua' "EXERCISE $n: BEGIN" common stage1_callbacks stage2_generators stage3_queue)")
    done
    leak_check || exit 1
    echo "handout: no line nor shape of a solution in $dest"
    exit 0
fi

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

# 1. The tracked files, as they are in the working tree.
(cd "$ROOT" && git ls-files -z | while IFS= read -r -d '' f; do
    [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
done) | (cd "$ROOT" && xargs -0 -r cp --parents -P -t "$dest")

# 2. Each exercise's region becomes its stub.
regions=()
for n in "${names[@]}"; do
    rel=$(cd "$ROOT" && grep -rlF --include='*.c' --include='*.lua' "EXERCISE $n: BEGIN" common stage1_callbacks stage2_generators stage3_queue)
    bash "$ROOT/scripts/exercise.sh" copy "$n" "$dest/$rel.new"
    mv "$dest/$rel.new" "$dest/$rel"
    regions+=("$n:$rel")
done

# 2b. Other code that shows a solution's pattern (docs/exercises/NAME/handout.conf):
# each such function becomes the stub the exercise gives for it, or (withhold) such a
# file is left out; its tests skip what needs it in a handout (HANDOUT.md says which).
withheld=()
for n in "${names[@]}"; do
    conf=$ROOT/docs/exercises/$n/handout.conf
    [ -f "$conf" ] || continue
    while read -r kind file stub; do
        if [ "$kind" = withhold ]; then    # a whole file, left out of the copy
            [ -f "$dest/$file" ] || die "$conf: 'withhold $file': no such file"
            rm -f "$dest/$file"
            withheld+=("$n:$file")
            echo "handout: $file withheld ($n)"
            continue
        fi
        [ "$kind" = stub ] && [ -f "$dest/$file" ] && [ -f "$ROOT/docs/exercises/$n/$stub" ] ||
            die "$conf: want 'stub FILE STUBFILE' or 'withhold FILE' with the files there, not '$kind $file $stub'"
        awk -v stub="$ROOT/docs/exercises/$n/$stub" '
            BEGIN { getline first < stub; if (!sub(/^\/\* replaces: /, "", first) || !sub(/ \*\/$/, "", first)) exit 2 }
            !found && $0 == first { found = 1; skip = 1; while ((getline l < stub) > 0) print l; next }
            skip { if ($0 == "}") skip = 0; next }
            { print }
            END { exit found ? 0 : 1 }' "$dest/$file" >"$dest/$file.new" ||
            die "$file: no line is the one the first line of $stub names ('/* replaces: LINE */'): was it renamed?"
        mv "$dest/$file.new" "$dest/$file"
        echo "handout: $file: $(head -n1 "$ROOT/docs/exercises/$n/$stub" | sed 's|^/\* replaces: \(.*\) \*/$|\1|') stubbed too ($n)"
    done < <(grep -Ev '^[[:space:]]*(#|$)' "$conf")
done

# 2c. What only the teacher has: the hidden tests (hidden.conf, tests/hidden/), and the
# teacher-only parts of the docs (between <!-- teacher-only: BEGIN --> and <!-- teacher-only: END -->).
rm -f "$dest"/docs/exercises/*/hidden.conf
rm -rf "$dest/tests/hidden"
# ... and the graders' own tests, whose wrong solutions are our solutions, edited.
rm -f "$dest/tests/exercise/grade_test.sh" "$dest/tests/exercise/hints_test.sh"
{ grep -rlF --include='*.md' '<!-- teacher-only: BEGIN' "$dest" || true; } | while read -r md; do
    awk '/<!-- teacher-only: BEGIN/ { skip = 1; print "*(The teacher'"'"'s part of this page is not in the handout.)*"; next }
         skip && /<!-- teacher-only: END/ { skip = 0; next }
         !skip { print }
         END { if (skip) exit 1 }' "$md" >"$md.new" || die "$md: a teacher-only part has no END"
    mv "$md.new" "$md"
done

# 3. Excerpts in the docs that quoted a replaced region: left out, with a note.
stale=$(cd "$dest" && bash scripts/check-docs.sh 2>/dev/null | sed -n 's/^\(docs\/[^:]*\):\([0-9]*\): excerpt of \([^ ]*\) .*/\1 \2 \3/p' || true)
while read -r md line src; do
    [ -n "$md" ] || continue
    ex=
    for r in "${regions[@]}"; do [ "${r#*:}" = "$src" ] && ex=${r%%:*}; done
    awk -v at="$line" -v ex="$ex" -v src="$src" '
        /<!-- excerpt: .* -->/ { held = $0; next }
        held != "" && FNR == at {
            print "*(The excerpt of `" src "` that stood here is left out of the handout: " \
                  (ex != "" ? "it is exercise `" ex "`" : "it quoted an exercise") ".)*"
            skip = 1; held = ""; next }
        held != "" { print held; held = "" }
        skip && /^```/ { skip = 0; next }
        !skip { print }' "$dest/$md" >"$dest/$md.new"
    mv "$dest/$md.new" "$dest/$md"
done < <(sort -k1,1 -k2,2nr <<<"$stale")   # from the bottom: line numbers stay true

# 3b. The side-by-side listings (docs/side-by-side.md), from the copy's sources: one
# that quotes a stubbed exercise's lines is left out, with a note.
(cd "$dest" && bash scripts/regen-docs.sh --handout listings >/dev/null) ||
    die "scripts/regen-docs.sh --handout listings failed in the copy"

# 4. What the students are told.
{
    echo "# This is a handout"
    echo
    echo "The code of these exercises is not here: in the sources their regions hold a stub"
    echo "(docs/exercises.md says how to start, write and check each one):"
    echo
    for r in "${regions[@]}"; do echo "- \`${r%%:*}\` in \`${r#*:}\`"; done
    echo
    echo "Until they are written, the tests and the programs that run on them fail, and"
    echo "\`make -f Makefile.tutorial demo\` leaves those programs out and names the exercises"
    echo "still to do. \`make -f Makefile.tutorial check-exercise EX=NAME\` grades one; in a"
    echo "handout it also compiles your copies of the others (\`exercise-OTHER/\`) it runs on."
    echo
    if [ ${#withheld[@]} -gt 0 ]; then
        echo "Left out of this copy, being too close to an exercise's solution (the tests that"
        echo "use them skip those cases here):"
        echo
        for w in "${withheld[@]}"; do echo "- \`${w#*:}\` (\`${w%%:*}\`)"; done
        echo
    fi
    echo "## In which order"
    echo
    echo "An exercise's tests run on the code of those it comes after: write those first."
    echo
    bash "$ROOT/scripts/exercise.sh" graph
} >"$dest/HANDOUT.md"
tmp=$(mktemp)
{ echo "> **Handout**: the exercises' code is not in this copy ([HANDOUT.md](../HANDOUT.md))."; echo; cat "$dest/docs/exercises.md"; } >"$tmp"
mv "$tmp" "$dest/docs/exercises.md"

leak_check || exit 1

# 6. One commit, no history.
git -C "$dest" init -q
git -C "$dest" add -A
git -C "$dest" -c user.name="crawlstages handout" -c user.email="handout@localhost" \
    commit -q -m "crawlstages: the course, exercises to do: ${names[*]}"
echo "handout: $dest — one commit, exercises replaced by their stubs: ${names[*]}"
echo "  $(git -C "$dest" ls-files | wc -l) files; excerpts left out: $(grep -c . <<<"$stale" || true)"
