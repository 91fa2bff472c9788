#!/usr/bin/env bash
# similarity_test.sh — scripts/similarity.sh flags two planted near-copies in a class
# and nothing else: four copies of stage1-read_response's file, ours (alice), ours with
# its names changed and its comments gone (bob), the stub (carol), and a solution of
# another shape (dave). Writes only under TMPDIR.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
ex=stage1-read_response
src=$here/stage1_callbacks/fetcher.c
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
ok() { echo "ok    $*"; }
bad() { echo "FAIL  $*"; fail=1; }

# The region of $src replaced by the lines of file $1.
region() {
    awk -v b="EXERCISE $ex: BEGIN" -v e="EXERCISE $ex: END" -v with="$1" '
        index($0, b) { print; while ((getline l < with) > 0) print l; skip = 1; next }
        index($0, e) { skip = 0 }
        !skip' "$src"
}
cp "$src" "$d/alice.c"
awk -v b="EXERCISE $ex: BEGIN" -v e="EXERCISE $ex: END" '
    index($0, b) { p = 1; next } index($0, e) { p = 0 } p' "$src" |
    sed 's|/\*.*\*/||; s/\bf\b/fx/g; s/\bn\b/got/g; s/\bchunk\b/buf/g; s/\br\b/rc/g; s/\berr\b/why/g' >"$d/bob.region"
region "$d/bob.region" >"$d/bob.c"
region "$here/docs/exercises/$ex/stub.c" >"$d/carol.c"
cp "$here/tests/exercise/similarity_dave.c" "$d/dave.region"
region "$d/dave.region" >"$d/dave.c"
grep -q 'fx->parser' "$d/bob.c" || bad "bob's copy was not renamed"

out=$(bash "$here/scripts/similarity.sh" $ex alice="$d/alice.c" bob="$d/bob.c" carol="$d/carol.c" dave="$d/dave.c")
echo "$out" | sed 's/^/  | /'
echo "$out" | grep -Eq '^ *[01]\.[0-9]+ +[0-9]+/[0-9]+ +alice +bob$' && ok "alice and bob, the near-copies, are a pair" ||
    bad "alice and bob are not flagged"
echo "$out" | grep -Eq ' (carol|dave)( |$)' && bad "a copy that is no near-copy is flagged" ||
    ok "carol (the stub) and dave (another shape) are in no pair"
echo "$out" | tail -n1 | grep -qx 'similarity: 1 pair(s) of 4 copies to look at' && ok "the summary counts one pair" ||
    bad "the summary says: $(echo "$out" | tail -n1)"
bash "$here/scripts/similarity.sh" $ex alice >/dev/null 2>&1
[ $? = 2 ] && ok "bad usage: exit 2" || bad "bad usage does not exit 2"
exit $fail
