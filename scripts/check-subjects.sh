#!/usr/bin/env bash
# check-subjects.sh — the subject of every commit since the project began to hold it
# (BASE: 4dd0c58, issue 32's first commit) is at most 72 characters (characters, not
# bytes: an em dash is one); the details go in the body. The commits before BASE are
# exempt. Prints each long subject; exit 1 if any.
#
# A history without BASE — a shallow clone (CI's, often one commit deep) or a copy of
# one commit (a handout) — is said so, and what it holds is checked: its commits
# committed after BASE's date (the older ones are exempt, as BASE's ancestors are).
# Not a git work tree: says so, exit 77 (ctest: skipped).
#
#   check-subjects.sh [--tree DIR] [--base COMMIT EPOCH]
#                      DIR: the work tree (default: this script's); COMMIT and its
#                      committer date EPOCH: another base (the selftest's)
#   check-subjects.sh --selftest
#                      long and short subjects before and after a base, in a repository
#                      of its own and in shallow clones of it
set -uo pipefail
MAX=72
BASE=4dd0c580d2a35d19e931ec68b483d4555fba7903
BASE_DATE=1796236636 # git log -1 --format=%ct 4dd0c58

check() {   # check TREE BASE BASE_DATE
    local tree=$1 base=$2 base_date=$3 list what n bad=0 h ct s len
    if ! git -C "$tree" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        echo "check-subjects: $tree is not a git work tree; no history to check"
        return 77
    fi
    if git -C "$tree" cat-file -e "$base^{commit}" 2>/dev/null; then
        list=$(git -C "$tree" log --format='%h %ct %s' "$base..HEAD") || return 2
        what="after ${base:0:7}"
    else
        local all kind=history
        [ "$(git -C "$tree" rev-parse --is-shallow-repository)" = true ] && kind="shallow clone"
        all=$(git -C "$tree" log --format='%h %ct %s' HEAD) || return 2
        list=$(awk -v d="$base_date" '$2 > d' <<<"$all")
        echo "check-subjects: ${base:0:7} is not in this $kind ($(grep -c . <<<"$all") commit(s));" \
             "checking the ones committed after its date, $(date -u -d "@$base_date" '+%F %T' 2>/dev/null || echo "$base_date") UTC"
        what="committed after ${base:0:7}'s date"
    fi
    n=0
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        h=${line%% *}
        s=${line#* }
        s=${s#* }
        n=$((n + 1))
        len=$(LC_ALL=C.UTF-8 bash -c 'printf %s "${#1}"' _ "$s")
        if [ "$len" -gt "$MAX" ]; then
            echo "check-subjects: $h: subject of $len characters (at most $MAX): $s"
            bad=$((bad + 1))
        fi
    done <<<"$list"
    echo "check-subjects: $n commit(s) $what, $bad subject(s) over $MAX characters"
    [ $bad -eq 0 ] || echo "check-subjects: shorten them (git rebase -i, reword); the details go in the body"
    [ $bad -eq 0 ]
}

selftest() {
    local tmp fails=0 self
    self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-subjects.XXXXXX") || return 1
    trap 'rm -rf "$tmp"' RETURN
    local long short72 t=1700000000 base
    long="A subject that goes on and on, well past the seventy-two characters of a line"
    short72="A subject of exactly seventy-two characters — with an em dash, 3 bytes.."
    commit() {   # commit REPO SUBJECT: an empty commit, one minute after the last
        t=$((t + 60))
        GIT_COMMITTER_DATE="$t +0000" GIT_AUTHOR_DATE="$t +0000" \
            git -C "$1" -c user.name=selftest -c user.email=selftest@localhost \
            commit -q --allow-empty -m "$2" -m "The body may be as long as it likes to be, line after line after line."
    }
    expect() {   # expect RC WHAT DIR [--base ...]: the check's exit status on DIR is RC
        local want=$1 what=$2 dir=$3 out rc
        shift 3
        out=$(GIT_CEILING_DIRECTORIES=$tmp bash "$self" --tree "$dir" "$@" 2>&1)
        rc=$?
        if [ $rc -ne "$want" ]; then
            echo "selftest: $what: expected exit $want, got $rc:"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1))
        else
            echo "selftest: $what: exit $rc as it should"
        fi
        LAST=$out
    }
    git init -q "$tmp/r" || return 1
    commit "$tmp/r" "$long (before the base)"
    commit "$tmp/r" "The base"
    base=$(git -C "$tmp/r" rev-parse HEAD)
    local base_date=$t
    commit "$tmp/r" "Short"
    commit "$tmp/r" "$short72"
    expect 0 "short subjects after the base; a long one before it" "$tmp/r" --base "$base" "$base_date"
    grep -q '2 commit(s) after' <<<"$LAST" || { echo "selftest: not 2 commits counted"; fails=$((fails + 1)); }
    git clone -q --depth 1 "file://$tmp/r" "$tmp/s1" 2>/dev/null
    expect 0 "a shallow clone of them" "$tmp/s1" --base "$base" "$base_date"
    grep -q 'not in this shallow clone' <<<"$LAST" || { echo "selftest: the shallow clone is not said"; fails=$((fails + 1)); }
    git clone -q --depth 4 "file://$tmp/r" "$tmp/s4" 2>/dev/null
    # all four commits, the base among them: the long one before it stays exempt
    expect 0 "a shallow clone that holds the base" "$tmp/s4" --base "$base" "$base_date"
    # a history without the base (a handout's one commit): by date, the long one is older
    expect 0 "a history without the base" "$tmp/r" --base 0123456789abcdef0123456789abcdef01234567 "$base_date"
    grep -q 'not in this history' <<<"$LAST" || { echo "selftest: the missing base is not said"; fails=$((fails + 1)); }
    expect 1 "... with a base date before the long one" "$tmp/r" --base 0123456789abcdef0123456789abcdef01234567 1700000000
    commit "$tmp/r" "$short72."
    expect 1 "a subject of 73 characters" "$tmp/r" --base "$base" "$base_date"
    grep -q 'subject of 73 characters' <<<"$LAST" || { echo "selftest: the long subject is not named"; fails=$((fails + 1)); }
    git clone -q --depth 2 "file://$tmp/r" "$tmp/s2" 2>/dev/null
    expect 1 "a shallow clone holding the long subject" "$tmp/s2" --base "$base" "$base_date"
    mkdir -p "$tmp/plain"
    expect 77 "not a git tree" "$tmp/plain"
    echo "check-subjects --selftest: $fails failure(s)"
    [ "$fails" -eq 0 ]
}

tree=$(cd "$(dirname "$0")/.." && pwd)
while [ $# -gt 0 ]; do
    case $1 in
    --selftest) selftest; exit ;;
    --tree) tree=${2:?--tree needs a directory}; shift 2 ;;
    --base) BASE=${2:?--base needs COMMIT EPOCH}; BASE_DATE=${3:?--base needs COMMIT EPOCH}; shift 3 ;;
    *) echo "usage: check-subjects.sh [--tree DIR] [--base COMMIT EPOCH] | --selftest" >&2; exit 2 ;;
    esac
done
check "$tree" "$BASE" "$BASE_DATE"
