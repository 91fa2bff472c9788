# shapes.awk — the shape of a line of C or Lua, for the checks that look for a copy
# under other names: scripts/handout.sh's leak check and scripts/similarity.sh. norm(s)
# takes comments out (a /* */ comment may span lines: the global incom carries it; a
# caller resets it at each file's first line), makes every name but a keyword "I",
# every string "@", every number "0", and collapses spaces. Used with awk -f, beside
# the caller's own program.
BEGIN {                             # the words that stay: C and Lua keywords
    split("if else for while do return break continue switch case default goto " \
          "sizeof struct typedef static const void int char long unsigned signed " \
          "short size_t ssize_t bool true false NULL enum union float double " \
          "function end local then elseif nil not and or repeat until in", kw, " ")
    for (i in kw) keep[kw[i]] = 1
}
function norm(s,   out, i, w, r) {   # comments out, names and literals
    out = ""                         # made one each, spaces collapsed
    while (s != "") {
        if (incom) { i = index(s, "*/"); if (!i) break; s = substr(s, i + 2); incom = 0; continue }
        i = index(s, "/*")
        if (!i) { out = out s; break }
        out = out substr(s, 1, i - 1); s = substr(s, i + 2); incom = 1
    }
    gsub(/"([^"\\]|\\.)*"/, "@", out); gsub("\047([^\047\\\\]|\\\\.)*\047", "@", out)
    sub(/\/\/.*$/, "", out); sub(/(^|[ \t])-- .*$/, "", out)    # C99, Lua comments
    r = ""
    while (match(out, /[A-Za-z_][A-Za-z0-9_]*/)) {
        w = substr(out, RSTART, RLENGTH)
        r = r substr(out, 1, RSTART - 1) (w in keep ? w : "I")
        out = substr(out, RSTART + RLENGTH)
    }
    out = r out
    gsub(/[0-9][0-9.]*/, "0", out)
    gsub(/[ \t]+/, " ", out); sub(/^ /, "", out); sub(/ $/, "", out)
    return out
}
