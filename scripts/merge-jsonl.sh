#!/usr/bin/env bash
# merge-jsonl.sh — the records of one crawl run by many processes (crawl-queue
# --frontier redis://..., each with its own --output FILE), merged into one JSONL report.
#
#   scripts/merge-jsonl.sh p1.jsonl p2.jsonl ... > crawl.jsonl
#   scripts/merge-jsonl.sh --table p1.jsonl p2.jsonl ...     (a table per process)
#
# Records are sorted by url; a URL recorded twice (a process killed after writing its
# record and before acknowledging it: docs/scale.md) is kept once, the first file's
# record. A torn last line (a killed process) is left out. The last line is
# {"summary": {"done": N, "files": K, "repeated": R}}. With --table: per
# process (fetched_by), its records, 200s, other statuses, failures; then the totals.
set -euo pipefail
table=0
if [ "${1:-}" = "--table" ]; then table=1; shift; fi
if [ "$#" -eq 0 ]; then
    echo "usage: merge-jsonl.sh [--table] FILE.jsonl..." >&2
    exit 2
fi
for f in "$@"; do
    [ -r "$f" ] || { echo "merge-jsonl.sh: cannot read '$f'" >&2; exit 1; }
done
export LC_ALL=C
# Whole lines only: a file that does not end in a newline ends in a torn line.
whole_lines() {
    if [ -s "$1" ] && [ -n "$(tail -c1 "$1")" ]; then head -n "$(wc -l < "$1")" "$1"
    else cat "$1"; fi
}
# One line per record — url, file index, the record — summaries left out.
for i in $(seq 1 "$#"); do
    whole_lines "${!i}" | awk -v i="$i" '
        /^\{"url": "/ {
            u = substr($0, 10); e = index(u, "\", \"next_url\"")
            if (e > 0) printf "%s\t%06d\t%s\n", substr(u, 1, e - 1), i, $0
        }'
done | sort -t $'\t' -k1,1 -k2,2 | awk -F '\t' -v files="$#" -v table="$table" '
    function field(rec, name,    s, p) {
        p = index(rec, "\"" name "\": ")
        if (p == 0) return ""
        s = substr(rec, p + length(name) + 4)
        if (substr(s, 1, 1) == "\"") { s = substr(s, 2); return substr(s, 1, index(s, "\"") - 1) }
        return substr(s, 1, match(s, /[,}]/) - 1)
    }
    $1 == last { repeated++; next }
    {
        last = $1; done++
        rec = $0; sub(/^[^\t]*\t[^\t]*\t/, "", rec)
        if (!table) { print rec; next }
        by = field(rec, "fetched_by"); if (by == "") by = "-"
        st = field(rec, "status")
        n[by]++
        if (st == "200") ok[by]++; else if (st == "null") bad[by]++; else other[by]++
    }
    END {
        if (!table) {
            printf "{\"summary\": {\"done\": %d, \"files\": %d, \"repeated\": %d}}\n", done, files, repeated
            exit
        }
        printf "%-28s %8s %8s %8s %8s\n", "fetched_by", "records", "200", "other", "failed"
        for (b in n) {
            printf "%-28s %8d %8d %8d %8d\n", b, n[b], ok[b], other[b], bad[b]
            t1 += ok[b]; t2 += other[b]; t3 += bad[b]
        }
        printf "%-28s %8d %8d %8d %8d\n", "total (each URL once)", done, t1, t2, t3
        printf "%d file(s); %d record(s) repeated (a killed process: written, not acknowledged)\n", files, repeated
    }'
