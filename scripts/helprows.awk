# helprows.awk — a crawler's --help, read back into its parts (for scripts/manpage.sh
# and scripts/completion.sh), one tab-separated line each:
#   U REST              the usage line, after "Usage: PROG "
#   D LINE              a line of the description (up to "Options ...")
#   O LINE              the "Options (default in brackets):" line
#   H HEADING           a heading (its lines joined)
#   F FLAG SHORT META TEXT  an option: "--name", "-x" or "", its value's name or "", the
#                       first line of its help
#   C TEXT              the next line of the help above
#   X TEXT              the "Exit status:" line, after its words; E LINE the lines after
# An option line is cli.c's print_row: "  -x, " or six spaces, "--name META" padded to
# 20 columns (help at column 26), or 20 to 24 long and two spaces, or longer and alone
# on its line; its next lines at column 26.
function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
function flush() { if (heading != "") print "H\t" heading; heading = "" }
BEGIN { part = "usage" }
part == "usage" && /^Usage: / { s = $0; sub(/^Usage: [^ ]+ /, "", s); print "U\t" s; part = "desc"; next }
part == "desc" && /^Options/ { print "O\t" $0; part = "opts"; next }
part == "desc" { if ($0 != "") print "D\t" $0; next }
/^Exit status:/ { flush(); s = $0; sub(/^Exit status: */, "", s); print "X\t" s; part = "end"; next }
part == "end" { if ($0 != "") print "E\t" $0; next }
/^[^ ]/ { heading = heading == "" ? $0 : heading " " $0; next }
{ flush() }
/^$/ { next }
/^(  -[a-zA-Z], |      )--/ {
    rest = substr($0, 7); p = index(rest, "  ")
    if (p > 0 && p - 1 >= 20) { h = substr(rest, 1, p - 1); text = trim(substr(rest, p)) }
    else if (p > 0) { h = trim(substr(rest, 1, 20)); text = trim(substr(rest, 21)) }
    else if (length(rest) > 20 && substr(rest, 20, 1) == " ") { h = substr(rest, 1, 19); text = trim(substr(rest, 21)) }
    else { h = trim(rest); text = "" }
    meta = ""
    if ((n = index(h, " ")) > 0) { meta = substr(h, n + 1); h = substr(h, 1, n - 1) }
    short = substr($0, 3, 2)
    print "F\t" h "\t" (short ~ /^-[a-zA-Z]$/ ? short : "") "\t" meta "\t" text
    next
}
/^ +/ { print "C\t" trim($0) }
