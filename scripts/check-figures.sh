#!/usr/bin/env bash
# check-figures.sh BUILD — the table of docs/exercises.md that follows the line
# "<!-- figures: scripts/exercise.sh figures -->" is the one the grader makes from
# what the selftests in BUILD measured (ctest docs.exercises, run after them).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: check-figures.sh BUILD}
want=$(bash "$here/scripts/exercise.sh" figures --build "$build") || exit 1
have=$(awk '/<!-- figures: scripts\/exercise.sh figures -->/ { on = 1; next } on && /^\|/ { print; next } on { exit }' \
       "$here/docs/exercises.md")
if [ "$want" = "$have" ]; then
    echo "check-figures: docs/exercises.md gives the figures the grader measured ($(grep -c '^| `' <<<"$want") exercises)"
    exit 0
fi
echo "check-figures: docs/exercises.md is out of date; the grader measured (scripts/exercise.sh figures --build $build):"
diff <(echo "$have") <(echo "$want") | sed 's/^/  /'
exit 1
