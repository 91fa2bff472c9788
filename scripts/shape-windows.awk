# shape-windows.awk — scripts/handout.sh's check of six-line shapes, with shapes.awk:
#   awk -v W=6 -v stub=STUB -f shapes.awk -f shape-windows.awk SOLUTION STUB FILE...
# The windows of W lines' shapes (at least three of them of 12 characters or more) of
# SOLUTION, less those STUB has too (it is given to the student); then, for each FILE,
# the first window it shares with them: "FILE:LINE: first line ...".
function push(t, ln,   i, key, big) {    # the window ending at t; its key
    for (i = 1; i < W; i++) { win[i] = win[i + 1]; at[i] = at[i + 1] }
    win[W] = t; at[W] = ln; nw++
    if (nw < W) return ""
    key = ""; big = 0
    for (i = 1; i <= W; i++) { key = key win[i] "\034"; big += length(win[i]) >= 12 }
    return big >= 3 ? key : ""
}
FNR == 1 { incom = 0; nw = 0; reported = 0 }
{ t = norm($0) }
t == "" { next }
FNR == NR { k = push(t, FNR); if (k != "") sol[k] = 1; next }
FILENAME == stub { k = push(t, FNR); if (k != "") delete sol[k]; next }   # given
{ k = push(t, FNR); if (k != "" && (k in sol) && !reported) { print FILENAME ":" at[1] ": " win[1] " ..."; reported = 1 } }
