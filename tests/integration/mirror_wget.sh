#!/usr/bin/env bash
# mirror_wget.sh — crawl-queue --mirror against wget -m -k -p -E on a real site:
# python3-doc's HTML (about 550 files), served by nginx on 127.0.0.1, mirrored by each
# into WORK_DIR; mirror_compare.py compares the two: the file sets, the bytes of the
# files neither rewrites, and the links of every page resolved against its place. Each
# difference must be listed in DIFFERENCES (mirror_wget_differences.txt) with its
# reason; an unlisted one fails the test, and so does a listed one that went away.
#
#   mirror_wget.sh BIN_DIR DIFFERENCES WORK_DIR     exit 0 pass, 1 fail, 77 skip
# PYTHON_DOCS names another copy of the docs (default /usr/share/doc/python3/html).
set -uo pipefail
bin=$1 listfile=$2 work=$(realpath -m "$3")
here=$(cd "$(dirname "$0")" && pwd)
docs=${PYTHON_DOCS:-/usr/share/doc/python3/html}
. "$here/../../scripts/nginx-lib.sh"
skip() { echo "mirror_wget: $1: skipped"; exit 77; }
[ -f "$docs/index.html" ] || skip "no python3-doc ($docs/index.html)"
command -v wget >/dev/null || skip "no wget"
[ -n "$nginx_bin" ] || skip "no nginx (nginx-light)"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
rm -rf "$work" && mkdir -p "$work" || exit 1
trap nginx_stop EXIT

# nginx on a free port of 127.0.0.1, its files in WORK_DIR
nginx_start "$work" "  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log off;" "    listen 127.0.0.1:@PORT@;
    root $docs;
    index index.html;" ||
    { echo "mirror_wget: nginx did not start"; tail -3 "$work/error.log"; exit 1; }
url=http://127.0.0.1:$nginx_port/ host=127.0.0.1:$nginx_port

start=$SECONDS
timeout 600 "$bin/crawl-queue" -q --mirror "$work/cq" "$url" >"$work/cq.jsonl" 2>"$work/cq.err"
rc=$?
cq_s=$((SECONDS - start))
[ "$rc" -eq 0 ] || { echo "mirror_wget: crawl-queue --mirror: exit $rc"; tail -3 "$work/cq.err"; exit 1; }
start=$SECONDS
# wget's exit 8: a server answered an error (a link to a missing page), not a failure here
timeout 600 wget -q -m -k -p -E -P "$work/wget" "$url" 2>"$work/wget.err"
rc=$?
wget_s=$((SECONDS - start))
[ "$rc" -eq 0 ] || [ "$rc" -eq 8 ] || { echo "mirror_wget: wget: exit $rc"; tail -3 "$work/wget.err"; exit 1; }
echo "mirror_wget: crawl-queue --mirror ${cq_s} s, wget -m -k -p -E ${wget_s} s"
# each put the site under HOST:PORT and nothing else beside it
for d in cq wget; do
    others=$(cd "$work/$d" && ls -A | grep -vx -e "$host" -e .crawlstages-mirror)
    [ -z "$others" ] || { echo "mirror_wget: $d: more than $host at the top: $others"; exit 1; }
done

/usr/bin/python3 "$here/mirror_compare.py" "$work/cq/$host" "$work/wget/$host" \
    >"$work/got" 2>"$work/compare.err" || { echo "mirror_wget: mirror_compare.py failed"; cat "$work/compare.err"; exit 1; }
cat "$work/compare.err"
sort -u "$work/got" -o "$work/got"
grep -v -e '^#' -e '^[[:space:]]*$' "$listfile" | sed 's/: .*//' | sort -u >"$work/listed"
fail=0
while IFS= read -r d; do
    echo "mirror_wget: a difference not in $(basename "$listfile"): $d"
    fail=1
done < <(comm -23 "$work/got" "$work/listed")
while IFS= read -r d; do
    echo "mirror_wget: listed in $(basename "$listfile") but gone: $d (take it out)"
    fail=1
done < <(comm -13 "$work/got" "$work/listed")
echo "mirror_wget: $(wc -l <"$work/got") difference(s), $(wc -l <"$work/listed") listed"
exit $fail
