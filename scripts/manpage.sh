#!/usr/bin/env bash
# manpage.sh PROGRAM OUT — a crawler's man page (roff, section 1), made from its own
# --help and --version at build time (CMakeLists.txt), so it cannot drift from --help,
# which is printed from the flag rows (common/app/cli.c and the crawler's tables):
# scripts/helprows.awk reads --help back into its parts, and each becomes the page's —
# the usage line SYNOPSIS, the lines after it DESCRIPTION, each option a tagged
# paragraph of OPTIONS, each heading a subsection, "Exit status:" EXIT STATUS.
#
#   manpage.sh build/bin/crawl-queue build/share/man/man1/crawl-queue.1
set -euo pipefail
prog=${1:?usage: manpage.sh PROGRAM OUT}
out=${2:?usage: manpage.sh PROGRAM OUT}
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$prog")
help=$("$prog" --help)
version=$("$prog" --version | awk '{ print $NF; exit }')
case $name in
    crawl-callbacks) what="the chapter's crawler, stage 1: callbacks on a selector" ;;
    crawl-generators) what="the chapter's crawler, stage 2: coroutines from generators" ;;
    crawl-queue) what="stage 3: a Queue of workers; a polite, fast crawler" ;;
    *) what="a crawler of crawlstages" ;;
esac
others=$(printf '%s\n' crawl-callbacks crawl-generators crawl-queue | grep -vx "$name" |
    sed 's/.*/.BR & (1)/' | sed '1s/$/ ,/')

awk -f "$here/helprows.awk" <<<"$help" | awk -F'\t' -v name="$name" -v version="$version" \
    -v what="$what" -v others="$others" '
# Text for roff: backslashes and dashes escaped, no line opening with a control char.
function esc(s) {
    gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s)
    if (s ~ /^[.'"'"']/) s = "\\&" s
    return s
}
function q(s) { s = esc(s); gsub(/"/, "\\(dq", s); return "\"" s "\"" }
BEGIN {
    printf ".\\\" %s.1 \\- made by scripts/manpage.sh from %s \\-\\-help: do not edit\n", name, name
    printf ".TH %s 1 \"\" \"crawlstages %s\" \"User Commands\"\n.nh\n.ad l\n", toupper(name), version
    printf ".SH NAME\n%s \\- %s\n", esc(name), esc(what)
}
$1 == "U" { printf ".SH SYNOPSIS\n.B %s\n%s\n.SH DESCRIPTION\n", esc(name), esc($2) }
$1 == "D" || $1 == "C" || $1 == "E" { print esc($2) }
$1 == "O" { printf ".SH OPTIONS\n%s\n", esc($2) }
$1 == "H" { printf ".SS %s\n", q($2) }
$1 == "F" {
    flag = $3 == "" ? $2 : $3 ", " $2
    if ($4 == "") printf ".TP\n.B %s\n", q(flag)
    else printf ".TP\n.BI %s %s\n", q(flag " "), q($4)
    if ($5 != "") print esc($5)
}
$1 == "X" { printf ".SH \"EXIT STATUS\"\n%s\n", esc($2) }
END { printf ".SH \"SEE ALSO\"\n%s\n.PP\nREADME.md and docs/ of crawlstages.\n", others }
' >"$out.tmp"
mv "$out.tmp" "$out"
