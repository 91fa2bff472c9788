#!/usr/bin/env bash
# mirror_browser.sh — --mirror checked in a real browser (test_mirror's other half):
# headless Chromium screenshots three pages of tests/sites/mirror.site as served, then,
# the server stopped and the network off (every name unresolvable, every request sent
# to a proxy where nothing listens, loopback included), the same pages of the mirror
# from file://; ImageMagick's `compare -metric AE` counts the pixels that differ. The
# stylesheet is proven loaded: the colour print.css (imported by site.css?v=2) paints
# on the paragraphs covers many pixels of each mirrored index page.
#
#   mirror_browser.sh BIN_DIR SITES_DIR WORK_DIR     exit 0 pass, 1 fail, 77 skip
set -uo pipefail
bin=$1 sites=$2 work=$(realpath -m "$3")
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ] || ! command -v compare >/dev/null || ! command -v convert >/dev/null; then
    echo "mirror_browser: no chromium or ImageMagick here: skipped"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT

"$bin/testsite" "$sites/mirror.site" >"$work/url" 2>"$work/testsite.err" &
server=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
url=$(head -1 "$work/url")
[ -n "$url" ] || { echo "mirror_browser: testsite did not start"; exit 1; }
host=${url#http://}; host=${host%/}

shot() { # URL OUT.png [flags...]: one screenshot, 60 s at most
    local u=$1 out=$2; shift 2
    timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --no-first-run --user-data-dir="$work/profile" --window-size=800,600 "$@" \
        --screenshot="$out" "$u" >"$work/chromium.log" 2>&1
    [ -s "$out" ] || { echo "mirror_browser: no screenshot of $u"; tail -3 "$work/chromium.log"; exit 1; }
}

"$bin/crawl-queue" -q --mirror "$work/m" "$url" >/dev/null || { echo "mirror_browser: the mirror failed"; exit 1; }
pages=("" "docs/" "docs/page.html")
files=("index.html" "docs/index.html" "docs/page.html")
for i in 0 1 2; do
    shot "$url${pages[$i]}" "$work/served-$i.png"
done
kill "$server"; wait "$server" 2>/dev/null; server=
fail=0
for i in 0 1 2; do
    shot "file://$work/m/$host/${files[$i]}" "$work/mirrored-$i.png" \
        --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server="http://127.0.0.1:9" \
        --proxy-bypass-list="<-loopback>"
    ae=$(compare -metric AE "$work/served-$i.png" "$work/mirrored-$i.png" "$work/diff-$i.png" 2>&1)
    echo "mirror_browser: ${files[$i]}: $ae pixel(s) differ from the served page"
    # a small threshold: font hinting may differ by a few pixels, a lost image or
    # stylesheet by thousands
    [ "${ae%%.*}" -le 50 ] 2>/dev/null || fail=1
done
green=$(convert "$work/mirrored-0.png" -fill black +opaque "#1ec81e" -fill white -opaque "#1ec81e" \
        -format "%[fx:round(mean*w*h)]" info:)
echo "mirror_browser: index.html: $green pixel(s) in print.css's colour"
[ "${green:-0}" -ge 2000 ] || fail=1
exit $fail
