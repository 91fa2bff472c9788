#!/usr/bin/env bash
# check-docs.sh — every code excerpt in docs/*.md marked
#     <!-- excerpt: path/in/repo.c -->
# followed by a ```c block must still be in that file, line for line (a line "..."
# in the block skips any number of lines). And every line of README.md
#     make -f Makefile.tutorial TARGET   # WORDS
# must give the WORDS of TARGET's `## ` comment in Makefile.tutorial, which `make -f
# Makefile.tutorial help` prints: one description per target. Prints the stale ones;
# exit 1 if any.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
awk '
function check(   nsrc, i, j, k, pos, found, line) {
    nsrc = 0
    while ((getline line < src) > 0) s[++nsrc] = line
    close(src)
    if (nsrc == 0) { printf "%s:%d: %s: no such file\n", FILENAME, start, src; bad++; return }
    pos = 1; i = 1
    while (i <= nb) {
        # one chunk: b[i .. j-1], up to the next "..."
        for (j = i; j <= nb && b[j] !~ /^ *\.\.\. *$/; j++) ;
        found = 0
        for (k = pos; k + (j - i) - 1 <= nsrc && !found; k++) {
            ok = 1
            for (m = 0; m < j - i && ok; m++) if (s[k + m] != b[i + m]) ok = 0
            if (ok) { found = 1; pos = k + (j - i) }
        }
        if (!found) {
            printf "%s:%d: excerpt of %s not found there, from: %s\n", FILENAME, start, src, b[i]
            bad++; return
        }
        i = j + 1
    }
    checked++
}
/<!-- excerpt: .* -->/ { src = $0; sub(/.*excerpt: */, "", src); sub(/ *-->.*/, "", src); want = 1; next }
want == 1 && /^```/ { want = 2; nb = 0; start = FNR; next }
want == 1 { printf "%s:%d: excerpt marker not followed by a code block\n", FILENAME, FNR; bad++; want = 0 }
want == 2 && /^```/ { check(); want = 0; next }
want == 2 { b[++nb] = $0; next }
END { printf "check-docs: %d excerpt(s) match the source, %d stale\n", checked, bad; exit bad > 0 }
' docs/*.md
excerpts=$?

# The targets' words: Makefile.tutorial's `## ` comments.
awk '
FNR == NR { if (match($0, /^[a-z0-9-]+:.*## /)) { t = $0; sub(/:.*/, "", t); w = $0; sub(/^[^#]*## /, "", w); help[t] = w }; next }
/^ *make -f Makefile.tutorial [a-z0-9-]+ +# / {
    t = $0; sub(/^ *make -f Makefile.tutorial /, "", t); sub(/ .*/, "", t)
    w = $0; sub(/^[^#]*# /, "", w)
    n++
    if (!(t in help)) { printf "%s:%d: no target %s in Makefile.tutorial\n", FILENAME, FNR, t; bad++ }
    else if (w != help[t]) { printf "%s:%d: %s: \"%s\", but make help says \"%s\"\n", FILENAME, FNR, t, w, help[t]; bad++ }
}
END { printf "check-docs: %d make line(s) say what make help says, %d differ\n", n, bad; exit bad > 0 }
' Makefile.tutorial README.md
targets=$?
[ $excerpts -eq 0 ] && [ $targets -eq 0 ]
