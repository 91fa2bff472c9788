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

dest=${1:-}
[ -n "$dest" ] || die "usage: handout.sh DEST [EXERCISE...] (make -f Makefile.tutorial handout HANDOUT=DEST)"
shift
if [ -e "$dest" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ]; then
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

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

# 1. The tracked files, as they are in the working tree.
(cd "$ROOT" && git ls-files -z | while IFS= read -r -d '' f; do
    [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
done) | (cd "$ROOT" && xargs -0 -r cp --parents -P -t "$dest")

# 2. Each exercise's region becomes its stub.
regions=()
for n in "${names[@]}"; do
    rel=$(cd "$ROOT" && grep -rlF --include='*.c' "EXERCISE $n: BEGIN" common stage1_callbacks stage2_generators stage3_queue)
    bash "$ROOT/scripts/exercise.sh" copy "$n" "$dest/$rel.new"
    mv "$dest/$rel.new" "$dest/$rel"
    regions+=("$n:$rel")
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

# 4. What the students are told.
{
    echo "# This is a handout"
    echo
    echo "The code of these exercises is not here: in the sources their regions hold a stub"
    echo "(docs/exercises.md says how to start, write and check each one):"
    echo
    for r in "${regions[@]}"; do echo "- \`${r%%:*}\` in \`${r#*:}\`"; done
    echo
    echo "Until they are written, the tests and the stages that run on them fail: crawl-generators"
    echo "and crawl-queue run on stage 2's coroutines, so do \`stage2-await\` and \`stage2-task_step\`"
    echo "before \`stage3-queue\`. \`make -f Makefile.tutorial check-exercise EX=NAME\` grades one; in a"
    echo "handout it also compiles your copies of the others (\`exercise-OTHER/\`) it runs on."
} >"$dest/HANDOUT.md"
tmp=$(mktemp)
{ echo "> **Handout**: the exercises' code is not in this copy ([HANDOUT.md](../HANDOUT.md))."; echo; cat "$dest/docs/exercises.md"; } >"$tmp"
mv "$tmp" "$dest/docs/exercises.md"

# 5. No line that only a solution has may be left anywhere in the copy.
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
if [ -n "$leaks" ]; then
    echo "handout: lines of a solution are still in these files:" >&2
    echo "$leaks" | sed 's/^/  /' >&2
    exit 1
fi

# 6. One commit, no history.
git -C "$dest" init -q
git -C "$dest" add -A
git -C "$dest" -c user.name="crawlstages handout" -c user.email="handout@localhost" \
    commit -q -m "crawlstages: the course, exercises to do: ${names[*]}"
echo "handout: $dest — one commit, exercises replaced by their stubs: ${names[*]}"
echo "  $(git -C "$dest" ls-files | wc -l) files; excerpts left out: $(grep -c . <<<"$stale" || true)"
