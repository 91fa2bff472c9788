# plot.awk — a line chart as SVG, from tab-separated lines "label<TAB>x<TAB>y".
#
#   awk -F'\t' -v title=T -v xlabel=X -v ylabel=Y -f plot.awk DATA > chart.svg
#
# One line per label, in order of first appearance; axes from 0 to a round number
# above the largest x and y; a legend at the top right. No dependencies but awk.

function nice(v,    e, f, i, n, step) {  # a round number >= v: 1, 1.2, 1.5, 2, ... x 10^k
    if (v <= 0) return 1
    e = 10 ^ int(log(v) / log(10))
    if (e > v) e /= 10
    f = v / e
    n = split("1 1.2 1.5 2 2.5 3 4 5 6 8 10", step, " ")
    for (i = 1; i <= n; i++)
        if (f <= step[i] + 1e-9) return step[i] * e
    return 10 * e
}
function esc(s) {
    gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s)
    return s
}
function fmt(v) {
    if (v >= 1000 && v % 1000 == 0) return (v / 1000) "k"
    return sprintf("%g", v)
}
BEGIN {
    W = 860; H = 440; L = 80; R = 220; T = 50; B = 60
    split("#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #17becf", colour, " ")
}
NF >= 3 {
    if (!($1 in idx)) { idx[$1] = ++nlab; lab[nlab] = $1 }
    k = idx[$1]
    n[k]++
    px[k, n[k]] = $2 + 0
    py[k, n[k]] = $3 + 0
    if ($2 + 0 > xmax) xmax = $2 + 0
    if ($3 + 0 > ymax) ymax = $3 + 0
}
END {
    xmax = nice(xmax); ymax = nice(ymax * 1.05)
    pw = W - L - R; ph = H - T - B
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
    printf "<text x=\"%d\" y=\"24\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", L, esc(title)
    for (i = 0; i <= 5; i++) {
        y = T + ph - ph * i / 5
        printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, y, L + pw, y
        printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", L - 6, y + 4, fmt(ymax * i / 5)
        x = L + pw * i / 5
        printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, T, x, T + ph
        printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, T + ph + 18, fmt(xmax * i / 5)
    }
    printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n", L, T, pw, ph
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", L + pw / 2, H - 16, esc(xlabel)
    printf "<text transform=\"translate(18,%d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", T + ph / 2, esc(ylabel)
    for (k = 1; k <= nlab; k++) {
        c = colour[(k - 1) % 8 + 1]
        printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" points=\"", c
        for (i = 1; i <= n[k]; i++)
            printf "%.1f,%.1f ", L + pw * px[k, i] / xmax, T + ph - ph * py[k, i] / ymax
        printf "\"/>\n"
        ly = T + 10 + 22 * (k - 1)
        printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>\n", L + pw + 14, ly, L + pw + 38, ly, c
        printf "<text x=\"%d\" y=\"%d\">%s</text>\n", L + pw + 44, ly + 4, esc(lab[k])
    }
    printf "</svg>\n"
}
