#!/usr/bin/env bash
# format-check.sh — the C sources keep the project's style (.editorconfig, .clang-format).
#
#   every .c and .h git tracks: no tab, no trailing white space, at most 100 columns
#     (characters, not bytes), a final newline;
#   every line changed since .clang-format was added: as clang-format writes it
#     (git clang-format --diff). The tree before that commit was written by hand in
#     nearly the same style; reformatting it whole would only churn history, so the
#     formatter holds each line from its next change on.
#
# Prints each violation; exit 1 if any. `--fix` rewrites the changed lines in place.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
fix=0
[ "${1:-}" = "--fix" ] && fix=1

bad=0
files=$(git ls-files '*.c' '*.h')
if ! out=$(printf '%s\n' $files | python3 -c '
import sys
bad = 0
for f in sys.stdin.read().split():
    data = open(f, "rb").read()
    text = data.decode("utf-8", "replace")
    if data and not data.endswith(b"\n"):
        print(f"{f}: no newline at the end"); bad += 1
    for i, line in enumerate(text.split("\n"), 1):
        if "\t" in line:
            print(f"{f}:{i}: a tab"); bad += 1
        if line != line.rstrip(" "):
            print(f"{f}:{i}: trailing white space"); bad += 1
        if len(line) > 100:
            print(f"{f}:{i}: {len(line)} columns (at most 100)"); bad += 1
sys.exit(1 if bad else 0)
'); then
    echo "$out"
    bad=1
fi

# The files added since .clang-format was: as clang-format writes them, whole.
base=$(git log --diff-filter=A --format=%H -- .clang-format | tail -n 1)
if ! command -v clang-format >/dev/null 2>&1; then
    echo "format-check: clang-format is missing (Debian: clang-format)"; exit 1
fi
if [ -z "$base" ]; then
    new_files=""      # .clang-format not committed yet: every file is older
elif ! git cat-file -e "$base^" 2>/dev/null; then
    echo "format-check: no history before .clang-format here (a shallow clone?): whole-tree rules only"
    new_files=""
else
    new_files=$(git diff --diff-filter=A --name-only "$base^" -- '*.c' '*.h')
    new_files+=$'\n'$(git ls-files --others --exclude-standard -- '*.c' '*.h')
fi
for f in $new_files; do
    [ -f "$f" ] || continue
    if [ "$fix" -eq 1 ]; then
        clang-format -i "$f"
    elif ! clang-format --dry-run -Werror "$f" 2>/dev/null; then
        echo "$f: not as clang-format writes it (clang-format -i $f)"
        bad=1
    fi
done
n=$(printf '%s\n' $files | wc -l)
if [ "$bad" -eq 0 ]; then echo "format-check: $n files clean"; else echo "format-check: FAILED"; fi
exit "$bad"
