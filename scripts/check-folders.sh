#!/usr/bin/env bash
# check-folders.sh — the folder tables of the docs match the tree. A table (or code
# block) right after a line
#     <!-- folders: covers=DIR[,DIR...] [root=DIR] -->
# is a map of the folders of each covered DIR (paths from the top, "." the top itself):
#   - every folder it lists is a folder of the tree;
#   - every folder of a covered DIR (one that holds a file git knows of or would add:
#     not an ignored one, nor a hidden one such as .ci/) is listed.
# A listed path lists its folder and the folders above it (`common/web/url.c` lists
# common/web/ and common/). In a markdown table, the paths are the first cell's `quoted`
# words that hold a "/", read from root=DIR (default: the top); in a code block, each
# line's first word when it ends with "/", read from the folder of the nearest line
# above it indented less (README.md's `base/` under `common/`); its other lines (files,
# the description's next lines, indented deeper) name no folder.
# Prints each mismatch with the file and line to edit; exit 1 if any.
#
#   check-folders.sh [FILE...]   check these (default: README.md, stage3_queue/README.md,
#                                docs/architecture.md; each must mark a table)
#   check-folders.sh --selftest  a small tree of its own, its tables stale one way at a time
set -uo pipefail

# The entries of FILE's marked tables: "M LINE ROOT COVERS" for a marker, then "E LINE
# PATH" for each folder its table lists, "X LINE WHY" for a marker with no table.
entries() {
    awk '
    function dirof(t) { if (t !~ /\/$/) sub(/[^\/]*$/, "", t); sub(/^(\.\/)+/, "", t); return t }
    /<!-- folders:.*-->/ {
        root = ""; covers = "."
        n = split($0, w, /[ \t]+/)
        for (i = 1; i <= n; i++) {
            if (w[i] ~ /^root=/) { root = substr(w[i], 6); sub(/\/*$/, "/", root); if (root == "./") root = "" }
            if (w[i] ~ /^covers=/) covers = substr(w[i], 8)
        }
        print "M", FNR, (root == "" ? "." : root), covers
        state = 1; mline = FNR; next
    }
    state == 1 && /^[ \t]*$/ { next }
    state == 1 {
        base = -1; sp = 0; state = 2
        if ($0 ~ /^\|/) mode = "table"
        else if ($0 ~ /^```/) { mode = "fence"; next }
        else if ($0 ~ /^    /) mode = "indent"
        else { print "X", mline, "no table nor code block after the marker"; state = 0; next }
    }
    state == 2 && mode == "table" {
        if ($0 !~ /^\|/) { state = 0; next }
        cell = $0; sub(/^\| */, "", cell); sub(/\|.*/, "", cell)
        while (match(cell, /`[^`]*`/)) {
            t = substr(cell, RSTART + 1, RLENGTH - 2); cell = substr(cell, RSTART + RLENGTH)
            if (t ~ /\//) print "E", FNR, root dirof(t)
        }
        next
    }
    state == 2 && mode == "fence" && /^```/ { state = 0; next }
    state == 2 && mode == "indent" && !/^    / && !/^[ \t]*$/ { state = 0; next }
    state == 2 {
        if ($0 ~ /^[ \t]*$/) next
        match($0, /^ */); ind = RLENGTH
        t = substr($0, ind + 1); sub(/[ \t].*/, "", t)
        if (base < 0) base = ind
        if (ind > base + 8) next                    # the description, continued
        while (sp > 0 && st_ind[sp] >= ind) sp--
        if (t !~ /\/$/) next                        # a file
        p = (sp > 0 ? st_path[sp] : root) dirof(t)
        sp++; st_ind[sp] = ind; st_path[sp] = p
        print "E", FNR, p
    }
    END { if (state == 1) print "X", mline, "no table nor code block after the marker" }
    ' "$1"
}

# Every folder holding a file of the tree (not ignored, not hidden), one a line, "x/y/".
tree_folders() {
    local files
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
        [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
        files=$(git ls-files --cached --others --exclude-standard)
    else
        files=$(find . -path './.*' -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||')
    fi
    awk '{ while (sub(/\/[^\/]*$/, "")) print $0 "/" }' <<<"$files" | grep -v '^\.' | grep -v '/\.' | LC_ALL=C sort -u
}

# The folders of covered DIR $1 not in $listed, the table of $f at line $mline.
unlisted() {
    local d=${1%/} sub s where
    if [ "$d" = . ]; then
        sub=$(grep -v '/.*/' <<<"$folders"); where="the top"
    else
        sub=$(grep -E "^${d//./\\.}/[^/]+/\$" <<<"$folders"); where="$d/"
        grep -qxF "$d/" <<<"$folders" ||
            { echo "$f:$mline: the table covers $d/, which is no folder of the tree"; bad=$((bad + 1)); }
    fi
    while IFS= read -r s; do
        [ -n "$s" ] || continue
        grep -qxF "$s" <<<"$listed" && continue
        echo "$f:$mline: $s (a folder of $where) is not in the table below this line (covers=$covers): add its row"
        bad=$((bad + 1))
    done <<<"$sub"
}

check_tree() {   # check_tree FILE...: in the tree's top folder
    local folders bad=0 f tag line a b tables mline covers listed p d
    folders=$(tree_folders)
    for f in "$@"; do
        if [ ! -f "$f" ]; then echo "$f: no such file"; bad=$((bad + 1)); continue; fi
        tables=0 mline="" covers="" listed=""
        while read -r tag line a b; do
            case $tag in
            M)
                for d in ${covers//,/ }; do unlisted "$d"; done
                tables=$((tables + 1)) mline=$line covers=$b listed=""
                ;;
            X) echo "$f:$line: $a $b"; bad=$((bad + 1)) ;;
            E)
                if ! grep -qxF "$a" <<<"$folders"; then
                    echo "$f:$line: the table lists $a, which is no folder of the tree (covers=$covers): remove or rename its row"
                    bad=$((bad + 1))
                fi
                p=${a%/}
                while [ -n "$p" ]; do   # the folder and those above it
                    listed+="$p/"$'\n'
                    case $p in */*) p=${p%/*} ;; *) p="" ;; esac
                done
                ;;
            esac
        done < <(entries "$f")
        for d in ${covers//,/ }; do unlisted "$d"; done
        [ $tables -gt 0 ] || { echo "$f: no folder table marked (<!-- folders: covers=... -->)"; bad=$((bad + 1)); }
        echo "check-folders: $f: $tables table(s)"
    done
    echo "check-folders: $bad mismatch(es) between the folder tables and the tree"
    [ $bad -eq 0 ]
}

selftest() {
    local tmp fails=0
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-folders.XXXXXX") || return 1
    trap 'rm -rf "$tmp"' RETURN
    make_tree() {
        rm -rf "$tmp/t" && mkdir -p "$tmp/t"/{common/base,common/web,app/engine,app/spiders/examples,docs,.ci,build/x}
        local d
        for d in common/base common/web app app/engine app/spiders/examples docs .ci build/x; do : >"$tmp/t/$d/f.c"; done
        cat >"$tmp/t/README.md" <<'EOF'
# t

<!-- folders: covers=.,common -->

    CMakeLists.txt       the build
    common/              shared:
      base/              alloc.h, and a description that goes on
                         to a second line/
      web/               sockets
    app/                 the program
    docs/                the course
EOF
        cat >"$tmp/t/app/README.md" <<'EOF'
<!-- folders: root=app covers=app -->
| folder | what |
|---|---|
| `engine/` | the engine |
| `spiders/` (`spiders/examples/`) | spiders, `x/` in the second cell is no path |
EOF
        cat >"$tmp/t/docs/arch.md" <<'EOF'
Text.

<!-- folders: covers=common -->

| module | what |
|---|---|
| `common/base/alloc.c`, `list.h` | alloc |
| `common/web/` | web |
EOF
    }
    expect() {   # expect pass|fail WHAT: run the check on $tmp/t
        local want=$1 what=$2 out rc
        out=$(cd "$tmp/t" && check_tree README.md app/README.md docs/arch.md 2>&1); rc=$?
        if { [ "$want" = pass ] && [ $rc -ne 0 ]; } || { [ "$want" = fail ] && [ $rc -eq 0 ]; }; then
            echo "selftest: $what: expected $want, got:"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1))
        else
            echo "selftest: $what: ${want/pass/passe}s as it should"
        fi
        LAST=$out
    }
    make_tree
    expect pass "tables that match the tree"
    make_tree; mkdir -p "$tmp/t/tools" && : >"$tmp/t/tools/x.sh"
    expect fail "a new top-level folder"
    grep -q 'README.md:3: tools/ (a folder of the top)' <<<"$LAST" || { echo "selftest: not named so"; fails=$((fails + 1)); }
    make_tree; mkdir -p "$tmp/t/common/redis" && : >"$tmp/t/common/redis/r.c"
    expect fail "a new folder of common/ (two tables cover it)"
    [ "$(grep -c 'common/redis/' <<<"$LAST")" -eq 2 ] || { echo "selftest: not in both tables"; fails=$((fails + 1)); }
    make_tree; mkdir -p "$tmp/t/app/assembly" && : >"$tmp/t/app/assembly/a.c"
    expect fail "a new folder of app/ (root=app)"
    make_tree; rm -rf "$tmp/t/app/engine"
    expect fail "a listed folder gone"
    grep -q 'app/README.md:4: the table lists app/engine/' <<<"$LAST" || { echo "selftest: not named so"; fails=$((fails + 1)); }
    make_tree; rm -rf "$tmp/t/common/web"
    expect fail "a folder listed in a code block, gone"
    make_tree; mkdir -p "$tmp/t/app/spiders/course" "$tmp/t/.git2" "$tmp/t/build-asan" &&
        : >"$tmp/t/app/spiders/course/c.lua" && : >"$tmp/t/.git2/x" && : >"$tmp/t/build-asan/x"
    expect pass "a deeper folder, a hidden one, a build dir"
    make_tree; sed -i '/<!-- folders/d' "$tmp/t/docs/arch.md"
    expect fail "a file without a marked table"
    make_tree; printf '\n<!-- folders: covers=common -->\nJust text.\n' >>"$tmp/t/docs/arch.md"
    expect fail "a marker with no table after it"
    echo "check-folders --selftest: $fails failure(s)"
    [ "$fails" -eq 0 ]
}

if [ "${1:-}" = --selftest ]; then
    selftest
    exit
fi
cd "$(dirname "$0")/.." || exit 1
[ $# -gt 0 ] || set -- README.md stage3_queue/README.md docs/architecture.md
check_tree "$@"
