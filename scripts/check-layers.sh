#!/usr/bin/env bash
# check-layers.sh — the layering of common/ (docs/architecture.md), checked on the
# sources as well as by the build: no file includes a header of a layer above its own,
# the loop includes nothing of HTTP, libcurl, libxml2 or hiredis, the redis layer (beside
# web: it links the loop only) and web know nothing of each other, nothing in common/
# includes a stage's header, and nothing in common/ — code, strings or comments — names
# a stage (its program, its folder, "stage 3", its name as a string) or one of the flags
# stage 3 declares in its table (the rows of stage3_queue's cli_flag arrays: --NAME, or
# NAME as a long option) — a crawler's options are its own. Stage 3 has floors too
# (stage3_queue/CMakeLists.txt), each including only the floors below it: the chapter's
# Queue (queue.c), the Frontier interface (frontier/frontier.c), engine/, the extensions
# (the other Queues in frontier/, downloadermw/, spidermw/, pipelines/, seeds/,
# spiders/), assembly/, and on top the chapter's crawler (main.c, crawler.c). Prints each violation; exit 1 if any.
#
#   check-layers.sh             check this tree
#   check-layers.sh --selftest  plant each kind of violation in a small tree of its own
#                               and check that it is caught (and a clean one passes)
set -uo pipefail

# The stage-3 flags: the names of the rows of every cli_flag table in stage3_queue/.
stage3_flags() {
    local f
    for f in $(grep -rl --include='*.c' 'cli_flag' stage3_queue 2>/dev/null); do
        sed -n 's/.*\.name = "\([a-z0-9-]*\)".*/\1/p' "$f"
    done | sort -u
}

# Check the tree in the current directory; prints the violations and a summary line.
check_tree() {
    local layers=(base loop redis web core app)
    local -A rank
    local i h f inc r
    for i in "${!layers[@]}"; do
        for h in common/"${layers[$i]}"/*.h common/"${layers[$i]}"/private/*.h; do
            [ -e "$h" ] && rank[$(basename "$h")]=$i
        done
    done
    local stage_headers
    stage_headers=$(find stage1_callbacks stage2_generators stage3_queue -name '*.h' 2>/dev/null |
                    xargs -r -n1 basename | sort -u)
    local bad=0
    for i in "${!layers[@]}"; do
        for f in common/"${layers[$i]}"/*.[ch] common/"${layers[$i]}"/private/*.h; do
            [ -e "$f" ] || continue
            while IFS= read -r inc; do
                r=${rank[$inc]:-}
                if [ -n "$r" ] && [ "$r" -gt "$i" ]; then
                    echo "$f: includes $inc of common/${layers[$r]} (above ${layers[$i]})"; bad=$((bad + 1))
                fi
                if grep -qx "$inc" <<<"$stage_headers" && [ -z "$r" ]; then
                    echo "$f: includes the stage header $inc"; bad=$((bad + 1))
                fi
            done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
        done
    done
    if grep -nE '#[[:space:]]*include[[:space:]]*[<"](curl/|libxml/|http|hiredis/|redis)' common/loop/*.[ch] common/loop/private/*.h 2>/dev/null; then
        echo "common/loop: includes HTTP, libcurl, libxml2 or hiredis (above)"; bad=$((bad + 1))
    fi
    if grep -nE '#[[:space:]]*include[[:space:]]*[<"](hiredis/|redis)' common/web/*.[ch] 2>/dev/null; then
        echo "common/web: includes hiredis or the redis layer (above), which sits beside it"; bad=$((bad + 1))
    fi
    # A stage named in common/: its program, its folder, "stage N", its name as a string.
    local stage_words='crawl-(callbacks|generators|queue)([^a-z]|$)|[Ss]tages? ?[123]([^0-9]|$)|stage[123]_|"(callbacks|generators|queue)"'
    local hits
    if hits=$(grep -rnE "$stage_words" common); then
        sed 's/$/   <- names a stage (common\/ knows none)/' <<<"$hits"
        bad=$((bad + $(wc -l <<<"$hits")))
    fi
    # A stage-3 flag named in common/: --NAME, or "NAME" as a long option (getopt's).
    local flags
    flags=$(stage3_flags | paste -sd '|')
    if [ -z "$flags" ]; then
        echo "stage3_queue: no cli_flag rows found (the table of stage 3's flags moved?)"; bad=$((bad + 1))
    elif hits=$(grep -rnE -- "--($flags)([^a-z0-9-]|\$)|\"($flags)\",[[:space:]]*[a-z_]*_argument" common); then
        sed 's/$/   <- names a flag of stage 3 (its table is its own)/' <<<"$hits"
        bad=$((bad + $(wc -l <<<"$hits")))
    fi
    # Stage 3's floors, lowest first: a file includes no header of a floor above its own.
    local floors=("queue.[ch]" "frontier/frontier.[ch]" "engine/*.[ch]"
                  "frontier/hostqueue.[ch] frontier/redisqueue.[ch] downloadermw/*.[ch] spidermw/*.[ch] pipelines/*.[ch] seeds/*.[ch] spiders/*.[ch]"
                  "assembly/*.[ch]" "main.c crawler.[ch]")
    local names=(queue frontier engine extensions assembly crawler)
    local -A floor
    local g
    for i in "${!floors[@]}"; do
        for g in ${floors[$i]}; do
            for f in stage3_queue/$g; do
                [ -e "$f" ] && [ "${f%.h}" != "$f" ] && floor[$(basename "$f")]=$i
            done
        done
    done
    for i in "${!floors[@]}"; do
        for g in ${floors[$i]}; do
            for f in stage3_queue/$g; do
                [ -e "$f" ] || continue
                while IFS= read -r inc; do
                    r=${floor[$inc]:-}
                    if [ -n "$r" ] && [ "$r" -gt "$i" ]; then
                        echo "$f: includes $inc of stage 3's ${names[$r]} (above ${names[$i]})"; bad=$((bad + 1))
                    fi
                done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
            done
        done
    done
    echo "check-layers: ${#rank[@]} headers in ${#layers[@]} layers, ${#floor[@]} of stage 3 in ${#floors[@]} floors, $(stage3_flags | wc -l) stage-3 flags, $bad violation(s)"
    [ "$bad" -eq 0 ]
}

# --selftest: a tree of a few files, clean, then with one violation planted at a time.
selftest() {
    local tmp fails=0
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-layers.XXXXXX") || return 1
    trap 'rm -rf "$tmp"' RETURN
    make_tree() {
        rm -rf "$tmp/t" && mkdir -p "$tmp/t"/common/{base,loop,web,redis,core,app} "$tmp/t"/stage3_queue/{engine,assembly,downloadermw}
        printf '/* alloc.h — never NULL */\n' >"$tmp/t/common/base/alloc.h"
        printf '/* selector.h */\n#include "alloc.h"\n' >"$tmp/t/common/loop/selector.h"
        printf '/* crawl.h — the core, for every crawler */\n#include "selector.h"\n' >"$tmp/t/common/core/crawl.h"
        printf '/* cli.c — the command line */\n#include "crawl.h"\nstatic const char *a = "--max-tasks";\n' >"$tmp/t/common/app/cli.c"
        printf '/* settings.h */\n#include "engine.h"\n' >"$tmp/t/stage3_queue/assembly/settings.h"
        printf '/* engine.h */\n#include "crawl.h"\n' >"$tmp/t/stage3_queue/engine/engine.h"
        printf '/* headers.h */\n#include "engine.h"\n' >"$tmp/t/stage3_queue/downloadermw/headers.h"
        printf '/* crawler.c */\n#include "settings.h"\n#include "headers.h"\n' >"$tmp/t/stage3_queue/crawler.c"
        printf 'static const cli_flag rows[] = {\n    {.name = "per-host", .arg = CLI_ARG_INT},\n    {.name = "ignore-robots"},\n};\n' \
            >"$tmp/t/stage3_queue/assembly/settings.c"
    }
    expect() {   # expect pass|fail WHAT: run the check on $tmp/t
        local want=$1 what=$2 out rc
        out=$(cd "$tmp/t" && check_tree 2>&1); rc=$?
        if { [ "$want" = pass ] && [ $rc -ne 0 ]; } || { [ "$want" = fail ] && [ $rc -eq 0 ]; }; then
            echo "selftest: $what: expected $want, got:"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1))
        else
            echo "selftest: $what: ${want/pass/passe}s as it should"
        fi
    }
    plant() {    # plant FILE LINE WHAT: a clean tree plus LINE at the end of FILE
        make_tree
        printf '%s\n' "$2" >>"$tmp/t/$1"
        expect fail "$3"
    }
    make_tree
    expect pass "a clean tree"
    plant common/app/cli.c 'static const char *stage = "queue";' 'a stage name as a string'
    plant common/core/crawl.h '/* crawl-queue only */' 'a stage program in a comment'
    plant common/app/cli.c 'int stage3;' 'a stage folder-like name'
    plant common/core/crawl.h '/* as stage 2 does */' '"stage 2" in a comment'
    plant common/app/cli.c 'static const char *b = "--per-host";' 'a stage-3 flag in a string'
    plant common/core/crawl.h '/* with --ignore-robots, ... */' 'a stage-3 flag in a comment'
    plant common/app/cli.c '{"per-host", required_argument, NULL, 1},' 'a stage-3 flag as an option name'
    plant common/loop/selector.h '#include "crawl.h"' 'an include from a layer above'
    plant common/app/cli.c '#include "settings.h"' "an include of a stage's header"
    plant stage3_queue/engine/engine.h '#include "headers.h"' "the engine including an extension's header"
    plant stage3_queue/downloadermw/headers.h '#include "settings.h"' 'an extension including the assembly'
    make_tree
    printf '/* crawler.h */\n' >"$tmp/t/stage3_queue/crawler.h"
    printf '#include "crawler.h"\n' >>"$tmp/t/stage3_queue/assembly/settings.h"
    expect fail 'the assembly including the crawler on top'
    make_tree
    printf '/* --per-hostile is another word; crawl-queues too */\n' >>"$tmp/t/common/app/cli.c"
    expect pass "words that only begin like a flag or a stage"
    make_tree
    : >"$tmp/t/stage3_queue/assembly/settings.c"
    expect fail "no table of stage-3 flags to read"
    echo "check-layers --selftest: $fails failure(s)"
    [ "$fails" -eq 0 ]
}

here=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --selftest ]; then
    selftest
    exit
fi
cd "$here" || exit 1
check_tree
