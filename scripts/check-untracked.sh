#!/usr/bin/env bash
# check-untracked.sh — no test writes into the source tree (tests write only under the
# build dir). Runs COMMAND (the test suite: make -f Makefile.tutorial test runs ctest
# through it), then compares `git status` of the source tree after the run with what it
# was before: every path that shows now and did not then — a new untracked file, a new
# ignored one outside the ignored folders already there (an exercise-*/ copy, a core
# dump), a tracked file changed — is printed, and the run fails. What the tree held
# before the run (the developer's own new or changed files, the build dirs) is not
# flagged. COMMAND's exit status is kept; a COMMAND that passed but left paths exits 1.
#
#   check-untracked.sh [--tree DIR] -- COMMAND [ARG...]
#                               run COMMAND here; DIR (default: this script's tree) is
#                               the git work tree checked
#   check-untracked.sh --selftest
#                               plant files from a command in a small repository of its
#                               own and check that they are caught, and what was there
#                               before is not
set -uo pipefail

# The tree's paths git shows: untracked (each file), ignored (a folder matched by
# .gitignore as one line), changed; sorted, one a line.
snapshot() {
    git -C "$1" status --porcelain --untracked-files=all --ignored=matching | LC_ALL=C sort
}

run_checked() {   # run_checked TREE COMMAND...
    local tree=$1
    shift
    if ! git -C "$tree" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        echo "check-untracked: $tree is not a git work tree; the run is not checked"
        "$@"
        return
    fi
    tree=$(git -C "$tree" rev-parse --show-toplevel)
    local before after rc new
    before=$(snapshot "$tree") || return 2
    "$@"
    rc=$?
    after=$(snapshot "$tree") || return 2
    new=$(LC_ALL=C comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | grep -v '^$')
    if [ -n "$new" ]; then
        echo "check-untracked: the run left $(grep -c . <<<"$new") path(s) in the source tree" \
             "($tree) that were not there before it:"
        sed 's/^/    /' <<<"$new"
        echo "check-untracked: tests write only under the build dir (a file you changed" \
             "during the run shows here too)"
        [ $rc -ne 0 ] || rc=1
    else
        echo "check-untracked: no new path in the source tree after the run"
    fi
    return $rc
}

selftest() {
    local tmp fails=0 self
    self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-untracked.XXXXXX") || return 1
    trap 'rm -rf "$tmp"' RETURN
    make_repo() {   # a repository with a tracked file, an ignored build dir, a file of "mine"
        rm -rf "$tmp/r" && mkdir -p "$tmp/r/build" "$tmp/r/docs"
        printf '/build*/\n*.o\n' >"$tmp/r/.gitignore"
        printf 'text\n' >"$tmp/r/docs/a.md"
        git -C "$tmp/r" init -q &&
            git -C "$tmp/r" add -A &&
            git -C "$tmp/r" -c user.name=selftest -c user.email=selftest@localhost commit -q -m base ||
            return 1
        printf 'my notes\n' >"$tmp/r/mine.txt"   # the developer's, before the run
        printf 'edited\n' >>"$tmp/r/docs/a.md"   # changed before the run
        : >"$tmp/r/build/old.log"
    }
    expect() {   # expect RC WHAT COMMAND...: the check's exit status on $tmp/r is RC
        local want=$1 what=$2 out rc
        shift 2
        make_repo || { echo "selftest: cannot make a repository"; fails=$((fails + 1)); return; }
        out=$(cd "$tmp/r/build" && bash "$self" --tree "$tmp/r" -- "$@" 2>&1)
        rc=$?
        if [ $rc -ne "$want" ]; then
            echo "selftest: $what: expected exit $want, got $rc:"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1))
        else
            echo "selftest: $what: exit $rc as it should"
        fi
        LAST=$out
    }
    expect 0 "a run that writes only under build/" sh -c 'echo x >out.jsonl; mkdir -p t; : >t/x.o'
    expect 1 "a file planted at the top" sh -c 'echo x >../dl.jsonl'
    grep -q '?? dl.jsonl' <<<"$LAST" || { echo "selftest: the planted file is not named"; fails=$((fails + 1)); }
    grep -q 'mine.txt\|a.md' <<<"$LAST" && { echo "selftest: a file there before is named"; fails=$((fails + 1)); }
    expect 1 "a file planted in a new folder" sh -c 'mkdir -p ../tests/out && : >../tests/out/x'
    expect 1 "a tracked file changed by the run" sh -c 'echo y >>../.gitignore'
    expect 1 "an ignored file outside build/" sh -c ': >../leftover.o'
    expect 1 "a new ignored folder" sh -c 'mkdir -p ../build-other && : >../build-other/x'
    expect 3 "a failing command keeps its exit status" sh -c 'exit 3'
    expect 3 "... also when it left a file" sh -c ': >../stray; exit 3'
    mkdir -p "$tmp/plain"
    # (the ceiling: $tmp may itself lie in a work tree, the build dir of this one)
    if out=$(GIT_CEILING_DIRECTORIES=$tmp bash "$self" --tree "$tmp/plain" -- sh -c 'exit 0' 2>&1) && grep -q 'not a git work tree' <<<"$out"; then
        echo "selftest: not a git tree: runs the command, says it is not checked"
    else
        echo "selftest: not a git tree: got:"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1))
    fi
    echo "check-untracked --selftest: $fails failure(s)"
    [ "$fails" -eq 0 ]
}

tree=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
--selftest) selftest; exit ;;
--tree)
    tree=${2:?--tree needs a directory}
    shift 2
    ;;
esac
if [ "${1:-}" != -- ] || [ $# -lt 2 ]; then
    echo "usage: check-untracked.sh [--tree DIR] -- COMMAND [ARG...] | --selftest" >&2
    exit 2
fi
shift
run_checked "$tree" "$@"
