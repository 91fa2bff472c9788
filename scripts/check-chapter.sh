#!/usr/bin/env bash
# check-chapter.sh [--chapter DIR] [--selftest] — the project cites its two sources, the
# chapter "A Web Crawler With asyncio Coroutines" and the article on Scrapy's extension
# points, by name and never by copy. Where their text is at hand (DIR, default
# ../shared/chapter beside the project root, or $CHAPTER_DIR), it fails when:
#   - a sentence or code line of either source, 30 bytes or longer once trimmed, is
#     found in a tracked file of the project (headings are exempt: a section is cited by
#     its title, and so is the article's first line, its title; so is the one line
#     below that is Python's own output, not the authors');
#   - a reference in docs/side-by-side.md,
#         chapter: NAME | SECTION | N
#     (inside a <!-- side-by-side: ... --> comment) does not hold: SECTION must be a
#     "## " heading of the chapter, its Nth code block (counting the chapter's fenced
#     blocks from 1) must lie under that heading and define NAME's function
#     ("def f(" for f or Class.f), and a Class must be defined somewhere in the chapter.
# Prints each failure as FILE:LINE: WHY; exit 1 if any, 77 (skipped) when the sources
# are not at hand. --selftest plants a quoted line and a wrong reference in a copy and
# checks that each is caught.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${CHAPTER_DIR:-$here/../shared/chapter}
selftest=0
while [ $# -gt 0 ]; do
    case $1 in
    --chapter) dir=$2; shift 2 ;;
    --selftest) selftest=1; shift ;;
    *) echo "usage: check-chapter.sh [--chapter DIR] [--selftest]" >&2; exit 2 ;;
    esac
done
chapter=$dir/a-web-crawler-with-asyncio-coroutines.md
article=$dir/scrapy-async-extension-points.zh.txt
if [ ! -r "$chapter" ] || [ ! -r "$article" ]; then
    echo "check-chapter: the sources are not at hand ($dir): skipped"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The pieces that must not appear: code lines whole; prose cut into sentences (after
# . ! ? and the article's 。！？；), each trimmed; 30 bytes or more.
pieces() {
    LC_ALL=C awk '
        FILENAME ~ /\.txt$/ && FNR == 1 { next }  # the article'"'"'s title
        /^```/ { code = !code; next }
        !code && /^#/ { next }
        {
            line = $0
            if (!code) {
                gsub(/[.!?] /, "&\n", line)
                gsub(/(\343\200\202|\357\274\201|\357\274\237|\357\274\233)/, "&\n", line)
            }
            n = split(line, part, "\n")
            for (i = 1; i <= n; i++) {
                p = part[i]
                sub(/^[ \t>*-]+/, "", p); sub(/[ \t]+$/, "", p)
                if (length(p) >= 30 && p != "Traceback (most recent call last):") print p
            }
        }' "$@" | sort -u
}

# The references of docs/side-by-side.md against the chapter's headings and blocks.
references() { # ROOT
    LC_ALL=C awk -v chapter="$chapter" '
        BEGIN {
            while ((getline l < chapter) > 0) {
                if (l ~ /^```/) { code = !code; if (code) { nb++; under[nb] = sec; body[nb] = "" }; continue }
                if (code) { body[nb] = body[nb] "\n" l; continue }
                if (l ~ /^## /) { sec = substr(l, 4); gsub(/`/, "", sec); heading[sec] = 1 }
            }
            close(chapter)
        }
        function fail(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg; bad++ }
        /^<!-- side-by-side: / { inside = 1; next }
        inside && /^-->$/ { inside = 0; next }
        inside && /^chapter: / {
            n = split(substr($0, 10), f, / *\| */)
            name = f[1]; sec = f[2]; k = f[3] + 0
            gsub(/`/, "", sec)
            fn = name; cls = ""
            if (index(name, ".")) { cls = substr(name, 1, index(name, ".") - 1); fn = substr(name, index(name, ".") + 1) }
            if (n != 3 || k < 1) fail("a reference is NAME | SECTION | N: " $0)
            else if (!(sec in heading)) fail("the chapter has no section \"" sec "\"")
            else if (k > nb) fail("the chapter has " nb " code blocks, not " k)
            else if (under[k] != sec) fail("block " k " is under \"" under[k] "\", not \"" sec "\"")
            else if (index(body[k], "def " fn "(") == 0) fail("block " k " defines no " fn "()")
            else if (cls != "" && !classdef(cls)) fail("the chapter defines no class " cls)
            refs++
        }
        function classdef(c,   i) { for (i = 1; i <= nb; i++) if (index(body[i], "class " c)) return 1; return 0 }
        END { if (!refs) { printf "%s: no chapter: references\n", FILENAME; bad++ }; exit bad > 0 }
    ' "$1/docs/side-by-side.md"
}

check() { # ROOT
    local root=$1 status=0
    pieces "$chapter" "$article" >"$work/pieces"
    (cd "$root" && git ls-files -z 2>/dev/null || find . -type f -not -path './.git/*' -printf '%P\0') |
        (cd "$root" && xargs -0 grep -nF -f "$work/pieces" -- 2>/dev/null) |
        cut -c1-160 | sed 's/$/  <- quotes a source/' >"$work/hits"
    if [ -s "$work/hits" ]; then
        cat "$work/hits"
        status=1
    fi
    references "$root" || status=1
    return $status
}

if [ $selftest = 1 ]; then
    fail=0
    t=$work/tree
    mkdir -p "$t/docs"
    cp "$here/docs/side-by-side.md" "$t/docs/"
    (cd "$t" && git init -q && git add -A) >/dev/null
    if out=$(check "$t"); then echo "selftest: the page as it is passes: ok"
    else echo "selftest: the page as it is: FAILED:"; echo "$out"; fail=1; fi
    # A quoted line: the chapter's code (a line of Fetcher.connected's listing).
    grep -m1 -F "request.encode('ascii')" "$chapter" >>"$t/docs/side-by-side.md"
    (cd "$t" && git add -A)
    if out=$(check "$t"); then echo "selftest: a planted code line: FAILED (not caught)"; fail=1
    else echo "selftest: a planted code line is caught: ok"; fi
    cp "$here/docs/side-by-side.md" "$t/docs/"
    # A quoted sentence of the chapter's prose, inside a paragraph of ours.
    s=$(pieces "$chapter" | grep -m1 'event loop')
    echo "Ours, in other words: $s And more." >>"$t/docs/side-by-side.md"
    if out=$(check "$t"); then echo "selftest: a planted sentence: FAILED (not caught)"; fail=1
    else echo "selftest: a planted sentence is caught: ok"; fi
    cp "$here/docs/side-by-side.md" "$t/docs/"
    # A reference to the wrong block, and to a section the chapter lacks.
    sed -i '0,/^chapter: /s/^\(chapter: [^|]*|[^|]*| *\)[0-9]*/\11/' "$t/docs/side-by-side.md"
    if out=$(check "$t"); then echo "selftest: a wrong block number: FAILED (not caught)"; fail=1
    else echo "selftest: a wrong block number is caught: ok"; fi
    cp "$here/docs/side-by-side.md" "$t/docs/"
    sed -i '0,/^chapter: /s/^\(chapter: [^|]*| *\)[^|]*|/\1Epilogue |/' "$t/docs/side-by-side.md"
    if out=$(check "$t"); then echo "selftest: a missing section: FAILED (not caught)"; fail=1
    else echo "selftest: a missing section is caught: ok"; fi
    exit $fail
fi

if check "$here"; then
    echo "check-chapter: no line of the sources in the project; every reference holds"
else
    exit 1
fi
