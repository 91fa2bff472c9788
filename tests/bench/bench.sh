#!/usr/bin/env bash
# bench.sh — the benchmarks of docs/benchmarks.md: the three stages (each transport),
# the thread-per-fetch crawler (crawl-threads) and wget, on sites served by testsite.
#
#   tests/bench/bench.sh            (or: make -f Makefile.tutorial bench)
#
# Sections (BENCH_SECTIONS, default "throughput latency c10k memory cluster politeness
# politehosts linkpath"):
#   throughput  a generated site of BENCH_PAGES pages (BENCH_LINKS links, ~BENCH_SIZE
#               bytes each), no delay: pages found, wall and CPU seconds, peak RSS of
#               each crawler and of `wget -r -l inf -nv --delete-after`, with the ratios
#               to wget. Medians of BENCH_RUNS runs, taken round-robin.
#   latency     the same site with --delay BENCH_DELAY ms per response, --max-tasks
#               BENCH_LAT_TASKS: wall time against the ideal pages x delay / max_tasks,
#               and against the bound: the finish of a crawler that costs nothing on
#               the same link graph (idealsim).
#   c10k        BENCH_C10K_PAGES pages with BENCH_C10K_LINKS links each, BENCH_C10K_DELAY
#               ms per response, at --max-tasks BENCH_C10K_TASKS (all the site) and at
#               BENCH_MID_TASKS (the first BENCH_MID_PAGES pages, --max-pages): whether
#               each crawler reached that many fetches in flight and finished, and its
#               memory per in-flight fetch, (peak RSS - baseline) / peak_in_flight, the
#               baseline being the same crawler on a tiny crawl at --max-tasks 1. Also
#               the RSS while all the fetches wait (sampled), threads, kernel stacks,
#               and two SVG plots of in-flight fetches and RSS over time.
#   memory      generated sites of BENCH_MEM_PAGES pages each (default "200000 1000000";
#               12 links, ~2000 B each), no delay, crawled by crawl-queue (and, on the
#               first size, crawl-callbacks --transport raw) with --format jsonl
#               --output FILE: pages/s, peak RSS and peak RSS per URL. ~2 minutes.
#   cluster     crawl-queue --frontier redis://... (docs/scale.md) on generated sites of
#               BENCH_CLUSTER_PAGES pages each (default "2000 20000"; 12 links, ~2000 B),
#               no delay, against a redis-server of its own: crawl-queue alone (the
#               in-memory Queue), 1 and 2 processes sharing the frontier — wall seconds,
#               pages/s, the speed-up of 2 processes over 1 — and Redis's CPU seconds
#               per 10,000 URLs and its memory per URL (used_memory's growth).
#               Medians of BENCH_RUNS runs. Needs redis-server (skipped without it).
#   politeness  BENCH_POL_HOSTS hosts (50: 127.0.0.1 ... 127.0.0.50, one testsite each)
#               of BENCH_POL_PAGES pages (40; 5 links, ~800 B), host 1 answering in
#               BENCH_POL_SLOW ms (2000), the others at once: crawl-queue --max-tasks
#               BENCH_POL_TASKS (20) --per-host 2 --delay BENCH_POL_DELAY (0.1) against
#               Scrapy with the same settings (tests/bench/scrapy_polite.py; Debian's
#               /usr/bin/scrapy, skipped without it or with BENCH_POL_SCRAPY=0), with its
#               default scheduler queue and with DownloaderAwarePriorityQueue, and the
#               theoretical bound. From the servers' --log files: how long the fast hosts
#               took, their pages/s, the most requests in flight to one host and the
#               shortest gap between two starts on one host. One run each (~3 minutes).
#   manyhosts   BENCH_HOSTS hosts (default "5000 20000 50000": 127.0.0.1, 127.0.0.2, ...,
#               skipping .0 and .255) of one page each, served by one testsite that
#               listens on 0.0.0.0 (so every 127.x.y.z reaches it; the crawler talks to
#               127.0.0.0/8 only): every host a root of crawl-queue -q --ignore-robots
#               on each transport, then on curl with robots.txt and --per-host 1 — wall
#               seconds, pages, and curl's time over raw's (issue #27 M4). Not in the
#               default list.
#   defaults    crawl-queue with no flag (polite: 8 requests in flight per host) and with
#               --chapter (the chapter's crawler) on BENCH_DEF_HOSTS hosts (50: 127.0.0.1
#               ... 127.0.0.50, one testsite each) of BENCH_DEF_PAGES pages (200; 5 links,
#               ~800 B) answering in BENCH_DEF_DELAY ms (0), and on host 1 alone: pages/s,
#               CPU seconds, the most requests in flight to one host (servers' logs).
#               Medians of BENCH_RUNS runs. Not in the default list.
#   politehosts BENCH_PH_HOSTS hosts (2000: 127.0.0.1, 127.0.0.2, ...) of one page each
#               (one testsite on 0.0.0.0, no robots.txt: a 404), crawl-queue polite (no
#               flag), --ignore-robots, --chapter and --chapter --ignore-robots, taken
#               round-robin: pages, wall seconds, pages/s and each one's pages/s over
#               --chapter's, side by side. Medians of BENCH_RUNS runs.
#   linkpath    tests/bench/linkpath.sh: "site A" (LINKPATH_PAGES static pages of ~7 KB,
#               12 links, on nginx): the three stages (crawl-queue --chapter and
#               polite) against wget2 (Debian's wget2, skipped without it), round-robin:
#               wall and CPU seconds and CPU microseconds per page, medians of
#               BENCH_RUNS runs. Skipped without nginx.
#   sitemaps    BENCH_SITEMAPS gzip sitemaps of 50,000 URLs each (default 20: a million
#               URLs, ~5 MB on the wire) named by robots.txt, crawled with crawl-queue
#               --sitemaps and interrupted (SIGINT) after BENCH_SITEMAPS_SECS (20) s:
#               the peak RSS, the URLs left to do and the records (issue #27 L2). Not in
#               the default list.
#   http2       BENCH_H2_PAGES (2000) static pages (BENCH_LINKS links, ~BENCH_SIZE bytes)
#               on disk, served over TLS by nginx (nginx-light; skipped without it) on
#               127.0.0.1, HTTP/2 offered by ALPN: crawl-queue --insecure, then with
#               --http1.1, at --max-tasks BENCH_H2_TASKS (100): wall seconds, pages/s,
#               the connections nginx saw (its log's $connection), the crawler's CPU
#               seconds and nginx's. Medians of BENCH_RUNS runs, round-robin. Not in
#               the default list.
#   spiders     a generated site of BENCH_SPIDER_PAGES pages (2000; 12 links, ~7000 B),
#               no delay, --ignore-robots: crawl-queue --spider spider_titles.lua (each
#               page's title and links with response:xpath, an item each, every link
#               followed) against Scrapy with the same extraction (scrapy_spider.py,
#               Debian's /usr/bin/python3; skipped without it): pages, pages/s, CPU
#               seconds; and crawl-queue with no spider against --spider
#               spider_follow.lua (follows response:links(): the same crawl), the cost of
#               the spider machinery — by default (robots.txt obeyed: the engine runs
#               either way) and with --ignore-robots (without a spider, the chapter's
#               fetch and no engine). Medians of BENCH_RUNS runs. Not in the default list.
#   mirror      a generated site of BENCH_MIRROR_PAGES pages (3000; 12 links, ~2000 B),
#               no delay, --per-host 16 (docs/mirror.md): crawl-queue --requisites,
#               crawl-queue --mirror DIR and wget -m -k -p -E, interleaved; files
#               saved, wall and CPU seconds, medians of BENCH_RUNS runs. Each run
#               writes a new directory; all are removed at the end (a directory freed
#               just before a run would slow the next one's inode allocations on ext4).
#               Then the file system's floor (mirrorfloor, when built): the same number
#               of 2000-B files written into one directory in place, through a
#               temporary and a rename, and rewritten by exchange, CPU seconds.
#               Then the same three crawls of python3-doc (PYTHON_DOCS, default
#               /usr/share/doc/python3/html), served by nginx, when both are there.
#               Not in the default list.
#
# Figures only: a slow machine gives slow figures, never a failure. The exit status is
# 1 only when a crawler or testsite fails to run (crash, bad exit status, no report).
#
# Settings (environment): BENCH_BUILD (build-release), BENCH_SKIP_BUILD (unset: build
# Release there first), BENCH_OUT (BENCH_BUILD/bench: raw data, logs and plots),
# BENCH_RUNS (3) and the sizes above.
set -uo pipefail
cd "$(dirname "$0")/../.."

runs=${BENCH_RUNS:-3}
build=${BENCH_BUILD:-build-release}
sections=${BENCH_SECTIONS:-throughput latency c10k memory cluster politeness politehosts linkpath}
pages=${BENCH_PAGES:-2000}
links=${BENCH_LINKS:-12}
size=${BENCH_SIZE:-7000}
delay=${BENCH_DELAY:-50}
lat_tasks=${BENCH_LAT_TASKS:-100}
c10k_pages=${BENCH_C10K_PAGES:-20000}
c10k_links=${BENCH_C10K_LINKS:-50}
c10k_size=${BENCH_C10K_SIZE:-2000}
c10k_delay=${BENCH_C10K_DELAY:-2000}
c10k_tasks=${BENCH_C10K_TASKS:-10000}
mid_tasks=${BENCH_MID_TASKS:-1000}
mid_pages=${BENCH_MID_PAGES:-5000}
mem_pages=${BENCH_MEM_PAGES:-200000 1000000}
cluster_pages=${BENCH_CLUSTER_PAGES:-2000 20000}
pol_hosts=${BENCH_POL_HOSTS:-50}
pol_pages=${BENCH_POL_PAGES:-40}
pol_slow=${BENCH_POL_SLOW:-2000}
pol_delay=${BENCH_POL_DELAY:-0.1}
pol_tasks=${BENCH_POL_TASKS:-20}
pol_scrapy=${BENCH_POL_SCRAPY:-1}
def_hosts=${BENCH_DEF_HOSTS:-50}
def_pages=${BENCH_DEF_PAGES:-200}
def_delay=${BENCH_DEF_DELAY:-0}
many_hosts=${BENCH_HOSTS:-5000 20000 50000}
ph_hosts=${BENCH_PH_HOSTS:-2000}
sm_files=${BENCH_SITEMAPS:-20}
sm_secs=${BENCH_SITEMAPS_SECS:-20}
h2_pages=${BENCH_H2_PAGES:-2000}
h2_tasks=${BENCH_H2_TASKS:-100}
spider_pages=${BENCH_SPIDER_PAGES:-2000}
mirror_pages=${BENCH_MIRROR_PAGES:-3000}
bin=$build/bin
out=${BENCH_OUT:-$build/bench}
mkdir -p "$out"
out=$(cd "$out" && pwd)
status=0

say() { printf '%s\n' "$*"; }
warn() { printf 'bench: %s\n' "$*" >&2; }

# ---- build ----------------------------------------------------------------------------
if [ -z "${BENCH_SKIP_BUILD:-}" ]; then
    say "Building Release in $build ..."
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/build.log" 2>&1 &&
        cmake --build "$build" -j"${JOBS:-2}" --target crawl-callbacks crawl-generators \
            crawl-queue crawl-threads testsite runstat statsampler idealsim mirrorfloor >>"$out/build.log" 2>&1 ||
        { warn "build failed, see $out/build.log"; exit 1; }
fi
for t in crawl-callbacks crawl-generators crawl-queue crawl-threads testsite runstat statsampler idealsim; do
    [ -x "$bin/$t" ] || { warn "$bin/$t is missing"; exit 1; }
done
have_wget=1
command -v wget >/dev/null || { have_wget=0; warn "wget not found: its rows are skipped (scripts/install-deps.sh wget)"; }

# Every crawler and testsite may open as many files as the hard limit allows.
ulimit -n "$(ulimit -Hn)" 2>/dev/null

# ---- the site ---------------------------------------------------------------------------
site_pid=
site_url=
tiny_pid=
tiny_url=
sampler_pid=
# stop PID: stop a server this script started (none when PID is empty).
stop() { [ -n "$1" ] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null; }
stop_site() { stop "$site_pid"; site_pid=; }
stop_tiny() { stop "$tiny_pid"; tiny_pid=; }
# redis_start DIR / redis_stop: a redis-server of our own (scripts/redis-lib.sh)
. scripts/redis-lib.sh
. scripts/nginx-lib.sh # nginx_start DIR HTTP SERVER, nginx_stop (sets nginx_pid)
pol_pids=()
stop_pol() {
    local p
    for p in "${pol_pids[@]}"; do stop "$p"; done
    pol_pids=()
}
cleanup() {
    [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null
    stop "$nginx_pid"
    stop_site
    stop_tiny
    redis_stop
    stop_pol
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# launch NAME ARG...: run testsite ARG... in the background, its output in
# $out/NAME.out and .err, and wait for the URL it prints: sets launched_pid and
# launched_url. A server that does not start is stopped, and the script ends.
launch() {
    local name=$1
    shift
    rm -f "$out/$name.out"
    "$bin/testsite" "$@" >"$out/$name.out" 2>"$out/$name.err" &
    launched_pid=$!
    launched_url=
    for _ in $(seq 200); do
        launched_url=$(head -n1 "$out/$name.out" 2>/dev/null)
        [ -n "$launched_url" ] && return 0
        sleep 0.05
    done
    stop "$launched_pid"
    warn "testsite ($name) did not start: $(cat "$out/$name.err")"
    exit 1
}

# start_site SPEC DELAY_MS: serve a generated site; sets site_url.
start_site() {
    stop_site
    launch site --generate "$1" --delay "$2"
    site_pid=$launched_pid
    site_url=$launched_url
}

# ---- running and reading ----------------------------------------------------------------
# The summary line's field KEY (numbers and strings alike).
sfield() { tail -n1 "$1" 2>/dev/null | sed -nE "s/.*\"$2\": \"?([^,\"}]*)\"?.*/\1/p"; }
# runstat's field KEY (wall, cpu, maxrss_kb, status).
rfield() { sed -nE "s/.*$2=([^ ]*).*/\1/p" "$1" 2>/dev/null; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {if (NR) print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2); else print "-"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b <= 0) print "-"; else printf "%.2f", a / b }'; }
mb() { awk -v k="$1" 'BEGIN { if (k == "-" || k == "") print "-"; else printf "%.1f", k / 1024 }'; }

# crawl NAME TRANSPORT TAG [ARGS...]: run one crawler on site_url under runstat; the
# report goes to $out/TAG.jsonl, runstat's line to $out/TAG.stat. crawl-threads takes
# the crawlers' options and ignores --transport raw. crawl-queue runs as the chapter's
# crawler (--chapter: its Queue, no politeness), as stages 1 and 2 are; NAME
# crawl-queue-ir is crawl-queue --chapter --ignore-robots: without the robots.txt
# middleware either.
crawl() {
    local name=$1 transport=$2 tag=$3
    shift 3
    if [ "$name" = crawl-queue-ir ]; then
        name=crawl-queue
        set -- --ignore-robots "$@"
    fi
    [ "$name" = crawl-queue ] && set -- --chapter "$@"
    "$bin/runstat" -o "$out/$tag.stat" ${SAMPLE:+-s "$out/$tag.rss" -i "$SAMPLE"} \
        "$bin/$name" -q --format jsonl --transport "$transport" --output "$out/$tag.jsonl" \
        "$@" "$site_url" 2>"$out/$tag.err"
    local rc=$?
    if [ "$rc" -ne 0 ] || [ -z "$(sfield "$out/$tag.jsonl" done)" ]; then
        warn "$name --transport $transport ($tag) failed: exit $rc; $(head -c 300 "$out/$tag.err")"
        status=1
    fi
}

# wget_run TAG: Debian's wget, recursive, on site_url.
wget_run() {
    local dir
    dir=$(mktemp -d "$out/wget.XXXXXX")
    "$bin/runstat" -o "$out/$1.stat" wget -r -l inf -nv --delete-after -P "$dir" "$site_url" \
        2>"$out/$1.log"
    grep -c ' URL:' "$out/$1.log" >"$out/$1.pages"
    rm -rf "$dir"
}

# crawl-queue obeys robots.txt by default (the generated sites have none: a 404);
# crawl-queue-ir is the same crawl with --ignore-robots, for the middleware's cost.
configs="crawl-callbacks:raw crawl-callbacks:curl crawl-generators:raw crawl-generators:curl crawl-queue:raw crawl-queue:curl crawl-queue-ir:raw crawl-queue-ir:curl crawl-threads:raw"

# ---- 1. throughput ------------------------------------------------------------------------
section_throughput() {
    local spec="pages=$pages,links=$links,size=$size,seed=1"
    say ""
    say "== Throughput: $pages pages ($links links, ~$size B each), no delay; default --max-tasks (100); median of $runs run(s)"
    start_site "$spec" 0
    for r in $(seq "$runs"); do
        for c in $configs; do crawl "${c%%:*}" "${c##*:}" "tp.${c%%:*}.${c##*:}.$r"; done
        [ "$have_wget" = 1 ] && wget_run "tp.wget.$r"
    done
    stop_site
    local ww=- wc=-
    if [ "$have_wget" = 1 ]; then
        ww=$(for r in $(seq "$runs"); do rfield "$out/tp.wget.$r.stat" wall; done | median)
        wc=$(for r in $(seq "$runs"); do rfield "$out/tp.wget.$r.stat" cpu; done | median)
    fi
    printf '%-18s %-9s %6s %8s %8s %8s %9s %9s\n' crawler transport pages wall_s cpu_s rss_MB wall/wget cpu/wget
    for c in $configs; do
        local n=${c%%:*} t=${c##*:} p w cpu rss
        p=$(for r in $(seq "$runs"); do sfield "$out/tp.$n.$t.$r.jsonl" done; done | median)
        w=$(for r in $(seq "$runs"); do rfield "$out/tp.$n.$t.$r.stat" wall; done | median)
        cpu=$(for r in $(seq "$runs"); do rfield "$out/tp.$n.$t.$r.stat" cpu; done | median)
        rss=$(for r in $(seq "$runs"); do rfield "$out/tp.$n.$t.$r.stat" maxrss_kb; done | median)
        printf '%-18s %-9s %6s %8s %8s %8s %9s %9s\n' "$n" "$t" "$p" "$w" "$cpu" "$(mb "$rss")" \
            "$(ratio "$w" "$ww")" "$(ratio "$cpu" "$wc")"
    done
    if [ "$have_wget" = 1 ]; then
        local p rss
        p=$(for r in $(seq "$runs"); do cat "$out/tp.wget.$r.pages"; done | median)
        rss=$(for r in $(seq "$runs"); do rfield "$out/tp.wget.$r.stat" maxrss_kb; done | median)
        printf '%-18s %-9s %6s %8s %8s %8s %9s %9s\n' wget - "$p" "$ww" "$wc" "$(mb "$rss")" 1.00 1.00
    fi
}

# ---- 2. latency ---------------------------------------------------------------------------
section_latency() {
    local spec="pages=$pages,links=$links,size=$size,seed=1"
    local ideal sim bound
    ideal=$(awk -v p="$pages" -v d="$delay" -v t="$lat_tasks" 'BEGIN { printf "%.3f", p * d / t / 1000 }')
    # The best any crawler can do on this link graph: idealsim's crawler costs nothing.
    sim=$("$bin/idealsim" --generate "$spec" --delay "$delay" --max-tasks "$lat_tasks") ||
        { warn "idealsim failed"; status=1; }
    bound=$(printf '%s\n' "$sim" | sed -n 's/.*bound_s=\([0-9.]*\).*/\1/p')
    bound=${bound:--}
    say ""
    say "== Latency: the same site, $delay ms per response, --max-tasks $lat_tasks; median of $runs run(s)"
    say "   ideal = $pages x $delay ms / $lat_tasks = $ideal s; bound = $bound s, a crawler that costs nothing on this link graph (idealsim: $sim)"
    start_site "$spec" "$delay"
    for r in $(seq "$runs"); do
        for c in $configs; do
            crawl "${c%%:*}" "${c##*:}" "lat.${c%%:*}.${c##*:}.$r" --max-tasks "$lat_tasks"
        done
    done
    stop_site
    printf '%-18s %-9s %6s %8s %8s %10s %10s\n' crawler transport pages wall_s cpu_s wall/ideal wall/bound
    for c in $configs; do
        local n=${c%%:*} t=${c##*:} p w cpu
        p=$(for r in $(seq "$runs"); do sfield "$out/lat.$n.$t.$r.jsonl" done; done | median)
        w=$(for r in $(seq "$runs"); do rfield "$out/lat.$n.$t.$r.stat" wall; done | median)
        cpu=$(for r in $(seq "$runs"); do rfield "$out/lat.$n.$t.$r.stat" cpu; done | median)
        printf '%-18s %-9s %6s %8s %8s %10s %10s\n' "$n" "$t" "$p" "$w" "$cpu" "$(ratio "$w" "$ideal")" "$(ratio "$w" "$bound")"
    done
}

# ---- 3. C10K ------------------------------------------------------------------------------
c10k_configs="crawl-callbacks:raw crawl-generators:raw crawl-queue:curl crawl-queue:raw crawl-queue-ir:raw crawl-threads:raw"

# The RSS while the fetches wait: the largest RSS sample taken while testsite counted at
# least 95 % of TASKS requests in progress (its samples lined up by time); and the
# same process's RSS while its first request (the root) waited, before any page was
# served: "base wait". Prints "WAIT BASE_WAIT" (KB, "-" when not seen).
rss_waiting() {   # RSS_FILE STATS_FILE TASKS
    awk -v tasks="$3" '
        FNR == NR { st[NR] = $1; ip[NR] = $2; sv[NR] = $4; n = NR; next }
        {
            while (j < n && st[j + 1] <= $1) j++
            if (j > 0 && ip[j] >= 0.95 * tasks && $2 > best) best = $2
            # served counts over the server'"'"'s life: none more yet means the root waits
            if (j > 0 && sv[j] == sv[1] && ip[j] >= 1 && $2 > base) base = $2
        }
        END { print (best ? best : "-"), (base ? base : "-") }' "$2" "$1"
}

# The tiny site of the baselines. Started here, not inside baseline: baseline runs in a
# $( ) subshell, where a server it started would be forgotten, and never stopped.
start_tiny() {
    launch tiny --generate "pages=3,links=2,size=$c10k_size,seed=1"
    tiny_pid=$launched_pid
    tiny_url=$launched_url
}

# The baseline: the same crawler, the tiny site, --max-tasks 1.
baseline() {   # NAME TRANSPORT
    site_url=$tiny_url crawl "$1" "$2" "base.$1.$2" --max-tasks 1
    rfield "$out/base.$1.$2.stat" maxrss_kb
}

c10k_level() {   # TASKS MAX_PAGES(0 = all)
    local tasks=$1 maxp=$2 label=$1
    local extra=()
    [ "$maxp" -gt 0 ] && extra=(--max-pages "$maxp")
    say ""
    say "-- --max-tasks $tasks$([ "$maxp" -gt 0 ] && printf ', --max-pages %s' "$maxp")"
    printf '%-18s %-9s %8s %6s %7s %7s %8s %7s %8s | %7s %7s %7s %7s\n' crawler transport in_flight \
        pages wall_s cpu_s peak_MB base_MB KB/fetch wait_MB base_MB KB/wait threads
    for c in $c10k_configs; do
        local n=${c%%:*} t=${c##*:} tag="c10k.$label.${c%%:*}.${c##*:}"
        local base
        base=$(baseline "$n" "$t")
        "$bin/statsampler" -a -i 100 -o "$out/$tag.site" "$site_url" &
        sampler_pid=$!
        SAMPLE=100 crawl "$n" "$t" "$tag" --max-tasks "$tasks" --timeout 60 "${extra[@]}"
        kill "$sampler_pid" 2>/dev/null
        wait "$sampler_pid" 2>/dev/null
        sampler_pid=
        local peak p w cpu rss wrss wbase thr kstack reached
        peak=$(sfield "$out/$tag.jsonl" peak_in_flight)
        p=$(sfield "$out/$tag.jsonl" done)
        w=$(rfield "$out/$tag.stat" wall)
        cpu=$(rfield "$out/$tag.stat" cpu)
        rss=$(rfield "$out/$tag.stat" maxrss_kb)
        read -r wrss wbase < <(rss_waiting "$out/$tag.rss" "$out/$tag.site" "$tasks")
        thr=$(awk '$3 > m { m = $3 } END { print m ? m : "-" }' "$out/$tag.rss")
        kstack=$(awk 'NR == 1 { first = $4 } $4 > m { m = $4 } END { if (NR) printf "%.0f", (m - first) / 1024; else print "-" }' "$out/$tag.rss")
        reached=$([ "${peak:-0}" -ge "$tasks" ] 2>/dev/null && echo "" || echo " (NOT reached)")
        local per=- perw=-
        if [ -n "$peak" ] && [ "$peak" -gt 0 ] 2>/dev/null; then
            per=$(awk -v a="$rss" -v b="$base" -v n="$peak" 'BEGIN { printf "%.2f", (a - b) / n }')
            [ "$wrss" != "-" ] && [ "$wbase" != "-" ] &&
                perw=$(awk -v a="$wrss" -v b="$wbase" -v n="$peak" 'BEGIN { printf "%.2f", (a - b) / n }')
        fi
        printf '%-18s %-9s %8s %6s %7s %7s %8s %7s %8s | %7s %7s %7s %7s%s\n' "$n" "$t" "${peak:--}" \
            "${p:--}" "$w" "$cpu" "$(mb "$rss")" "$(mb "$base")" "$per" "$(mb "$wrss")" "$(mb "$wbase")" \
            "$perw" "$thr" "$reached"
        [ "$n" = crawl-threads ] && say "   (crawl-threads: kernel stacks grew by ~${kstack} MB, which no RSS shows)"
    done
}

# plot_series KIND TITLE YLABEL COLUMN: in-flight (site) or RSS (rss) over time, one line
# per crawler, from the --max-tasks $c10k_tasks runs.
plot() {   # SVG TITLE YLABEL WHICH
    local svg=$1 title=$2 ylabel=$3 which=$4
    for c in $c10k_configs; do
        local tag="c10k.$c10k_tasks.${c%%:*}.${c##*:}"
        [ -s "$out/$tag.rss" ] || continue
        local t0
        t0=$(head -n1 "$out/$tag.rss" | cut -d' ' -f1)
        if [ "$which" = site ]; then
            awk -v l="${c%%:*} ${c##*:}" -v t0="$t0" '$1 >= t0 { printf "%s\t%.3f\t%s\n", l, ($1 - t0) / 1000, $2 }' "$out/$tag.site"
        else
            awk -v l="${c%%:*} ${c##*:}" -v t0="$t0" '{ printf "%s\t%.3f\t%.1f\n", l, ($1 - t0) / 1000, $2 / 1024 }' "$out/$tag.rss"
        fi
    done | awk -F'\t' -v title="$title" -v xlabel="seconds since the crawler started" \
        -v ylabel="$ylabel" -f tests/bench/plot.awk >"$svg"
}

section_c10k() {
    say ""
    say "== C10K: $c10k_pages pages ($c10k_links links, ~$c10k_size B each), $c10k_delay ms per response; default transport, and raw for crawl-queue"
    say "   KB/fetch = (peak RSS - base) / in_flight, base = peak RSS of the same crawler on a tiny crawl at --max-tasks 1."
    say "   Right of |: RSS sampled every 100 ms while >= 95 % of the fetches wait on the server (wait_MB), and while"
    say "   the root alone waited (base_MB); KB/wait = their difference / in_flight: what a waiting fetch costs."
    start_site "pages=$c10k_pages,links=$c10k_links,size=$c10k_size,seed=1" "$c10k_delay"
    start_tiny
    c10k_level "$c10k_tasks" 0
    c10k_level "$mid_tasks" "$mid_pages"
    stop_tiny
    stop_site
    plot "$out/c10k-inflight.svg" "Fetches in flight (testsite's in_progress), --max-tasks $c10k_tasks, $c10k_delay ms per response" "fetches in flight" site
    plot "$out/c10k-rss.svg" "Crawler RSS, --max-tasks $c10k_tasks, $c10k_delay ms per response" "RSS (MB)" rss
    say ""
    say "Plots: $out/c10k-inflight.svg $out/c10k-rss.svg"
}

# ---- 4. memory per URL ---------------------------------------------------------------------
section_memory() {
    say ""
    say "== Memory per URL: generated sites (12 links, ~2000 B a page), no delay, --format jsonl --output FILE"
    say "   B/URL = peak RSS / pages: every byte the process held at its peak, spread over the pages"
    printf '%-18s %-9s %8s %8s %9s %8s %7s\n' crawler transport pages wall_s pages/s peak_MB B/URL
    local first=1
    for n in $mem_pages; do
        start_site "pages=$n,links=12,size=2000,seed=1" 0
        local c list="crawl-queue:curl"
        [ "$first" = 1 ] && list="$list crawl-callbacks:raw"
        for c in $list; do
            local name=${c%%:*} t=${c##*:} tag="mem.$n.${c%%:*}.${c##*:}"
            crawl "$name" "$t" "$tag"
            local p w rss
            p=$(sfield "$out/$tag.jsonl" done)
            w=$(rfield "$out/$tag.stat" wall)
            rss=$(rfield "$out/$tag.stat" maxrss_kb)
            printf '%-18s %-9s %8s %8s %9s %8s %7s\n' "$name" "$t" "$p" "$w" \
                "$(awk -v p="$p" -v w="$w" 'BEGIN { if (w > 0) printf "%.0f", p / w; else print "-" }')" \
                "$(mb "$rss")" \
                "$(awk -v p="$p" -v k="$rss" 'BEGIN { if (p > 0) printf "%.0f", k * 1024 / p; else print "-" }')"
            rm -f "$out/$tag.jsonl"     # up to 250 MB of records: the figures are read
        done
        stop_site
        first=0
    done
}

# ---- 5. many processes, one crawl (--frontier on Redis) ---------------------------------------
# A redis-server of our own on a free port, nothing saved, in $out/redis.
# Redis's used_memory, bytes.
redis_mem() { redis-cli -p "$redis_port" info memory | sed -nE 's/^used_memory:([0-9]+).*/\1/p'; }
# CPU seconds redis-server has used so far.
redis_cpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$redis_pid/stat"; }

# cluster_run TAG N CRAWL: N crawl-queue processes sharing crawl CRAWL (N = 0: one
# crawl-queue without --frontier: the chapter's Queue, --chapter; with --frontier,
# --per-host 0: no cap on the one host); the wall seconds of the whole run in
# $out/TAG.wall.
cluster_run() {
    local tag=$1 n=$2 crawl=$3 t0 t1 i pids=() rc=0
    t0=$(date +%s.%N)
    if [ "$n" -eq 0 ]; then
        "$bin/crawl-queue" -q --chapter --format jsonl --output "$out/$tag.0.jsonl" "$site_url" \
            2>"$out/$tag.0.err" || rc=$?
    else
        for i in $(seq "$n"); do
            "$bin/crawl-queue" -q --per-host 0 --frontier "redis://127.0.0.1:$redis_port/$crawl" --format jsonl \
                --output "$out/$tag.$i.jsonl" "$site_url" 2>"$out/$tag.$i.err" &
            pids+=($!)
        done
        for i in "${pids[@]}"; do wait "$i" || rc=$?; done
    fi
    t1=$(date +%s.%N)
    [ "$rc" -eq 0 ] || { warn "crawl-queue ($tag) failed: exit $rc"; status=1; }
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >"$out/$tag.wall"
}

section_cluster() {
    say ""
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
        { warn "redis-server not found: the cluster section is skipped (scripts/install-deps.sh)"; return; }
    say "== Many processes, one crawl: crawl-queue --frontier redis://... (docs/scale.md), curl transport"
    say "   generated sites (12 links, ~2000 B a page), no delay; $(nproc) CPU(s) shared by testsite,"
    say "   redis-server and the crawlers. Medians of $runs run(s); Redis CPU s per 10,000 URLs,"
    say "   Redis memory per URL (used_memory after the crawl less before it, / pages)"
    printf '%-8s %-26s %8s %9s %8s %9s %8s\n' pages run wall_s pages/s speedup redis_cpu B/URL
    mkdir -p "$out/redis"
    redis_start "$out/redis" || { warn "redis-server did not start"; status=1; return; }
    local n
    for n in $cluster_pages; do
        start_site "pages=$n,links=12,size=2000,seed=1" 0
        local procs walls w one="-" r k cpu0 cpu1 cpus mem mem0
        for procs in 0 1 2; do
            walls="" cpus="" mem="-"
            for r in $(seq "$runs"); do
                k="cl.$n.$procs.$r"
                redis-cli -p "$redis_port" flushall >/dev/null
                mem0=$(redis_mem)
                cpu0=$(redis_cpu)
                cluster_run "$k" "$procs" "c$n$procs$r"
                cpu1=$(redis_cpu)
                walls="$walls $(cat "$out/$k.wall")"
                cpus="$cpus $(awk -v a="$cpu0" -v b="$cpu1" -v n="$n" 'BEGIN { printf "%.3f", (b - a) * 10000 / n }')"
                if [ "$procs" -gt 0 ]; then
                    mem=$(awk -v a="$mem0" -v b="$(redis_mem)" -v n="$n" 'BEGIN { printf "%.0f", (b - a) / n }')
                fi
                rm -f "$out/$k".*.jsonl
            done
            w=$(median <<<"$walls")
            [ "$procs" -eq 1 ] && one=$w
            local name="crawl-queue alone"
            [ "$procs" -gt 0 ] && name="$procs process(es), --frontier"
            printf '%-8s %-26s %8s %9s %8s %9s %8s\n' "$n" "$name" "$w" \
                "$(awk -v p="$n" -v w="$w" 'BEGIN { if (w > 0) printf "%.0f", p / w; else print "-" }')" \
                "$([ "$procs" -eq 2 ] && ratio "$one" "$w" || echo -)" \
                "$([ "$procs" -gt 0 ] && median <<<"$cpus" || echo -)" "$mem"
        done
        stop_site
    done
    redis_stop
}

# ---- 6. politeness: many hosts, one slow -------------------------------------------------
# pol_sites TAG [SLOW_MS FAST_MS PAGES]: one testsite per host 127.0.0.K, K =
# 1..pol_hosts, each logging its requests to $out/pol.TAG.K.log; host 1 answers in
# SLOW_MS (pol_slow), the others in FAST_MS (0), each of PAGES pages (pol_pages). Sets
# pol_roots.
pol_sites() {
    local tag=$1 slow=${2:-$pol_slow} fast=${3:-0} pages=${4:-$pol_pages} k
    stop_pol
    pol_roots=()
    for k in $(seq "$pol_hosts"); do
        rm -f "$out/pol.$tag.$k.log"
        launch "pol.$k" --bind "127.0.0.$k" --generate "pages=$pages,links=5,size=800,seed=9" \
            --delay "$([ "$k" = 1 ] && echo "$slow" || echo "$fast")" --log "$out/pol.$tag.$k.log"
        pol_pids+=("$launched_pid")
        pol_roots+=("$launched_url")
    done
}

# pol_figures TAG: from the servers' logs of run TAG (host 1 slow, the others fast),
# "PAGES FAST_PAGES FAST_S MAX_IN_FLIGHT MIN_GAP_MS": the pages served (robots.txt not
# counted), those of the fast hosts, the seconds from the fast hosts' first request to
# their last answer, the most requests in flight to one host at once and the shortest
# time between two starts on one host.
pol_figures() {
    local tag=$1 k files=()
    for k in $(seq "$pol_hosts"); do files+=("$out/pol.$tag.$k.log"); done
    awk -v nh="$pol_hosts" '
        # the host from the file name (an empty log has no line to count it by)
        { h = FILENAME; sub(/\.log$/, "", h); sub(/.*\./, "", h); h += 0 }
        { n[h]++; b[h, n[h]] = $1; e[h, n[h]] = $2 }
        $5 == "served" && $4 != "/robots.txt" { pages++; if (h > 1) fast++ }
        h > 1 { if (!seen || $1 < first) first = $1; if (!seen || $2 > last) last = $2; seen = 1 }
        END {
            peak = 0; gap = -1
            for (k = 1; k <= nh; k++)
                for (i = 1; i <= n[k]; i++) {
                    c = 0
                    for (j = 1; j <= n[k]; j++) {
                        if (b[k, j] <= b[k, i] && b[k, i] < e[k, j]) c++
                        if (j != i) {
                            d = b[k, j] - b[k, i]
                            if (d < 0) d = -d
                            if (gap < 0 || d < gap) gap = d
                        }
                    }
                    if (c > peak) peak = c
                }
            printf "%d %d %s %d %s\n", pages, fast, seen ? sprintf("%.2f", (last - first) / 1000) : "-",
                peak, gap < 0 ? "-" : sprintf("%.1f", gap)
        }' "${files[@]}"
}

# pol_row NAME TAG: the table's row for run TAG.
pol_row() {
    local name=$1 tag=$2 pages fast fs peak gap w cpu
    read -r pages fast fs peak gap < <(pol_figures "$tag")
    w=$(rfield "$out/pol.$tag.stat" wall)
    cpu=$(rfield "$out/pol.$tag.stat" cpu)
    printf '%-24s %6s %6s %7s %8s %7s %7s %7s %6s %6s %7s\n' "$name" "$pages" "$fast" "$fs" \
        "$(awk -v p="$fast" -v s="$fs" 'BEGIN { if (s > 0) printf "%.0f", p / s; else print "-" }')" \
        "$(ratio "$fs" "$pol_fast_bound")" "$w" "$(ratio "$w" "$pol_bound")" "$cpu" "$peak" "$gap"
}

section_politeness() {
    local h=$pol_hosts p=$pol_pages t=$pol_slow d=$pol_delay m=$pol_tasks
    local r=$((p + 1)) fast=$((h - 1)) slow_b tasks_b
    # The bounds: robots.txt and P pages a host (both crawlers obey robots.txt).
    pol_fast_bound=$(awk -v r="$r" -v d="$d" 'BEGIN { printf "%.2f", (r - 1) * d }')
    slow_b=$(awk -v p="$p" -v t="$t" 'BEGIN {
        c = (p - 1) / 2; if (c > int(c)) c = int(c) + 1     # ceil
        printf "%.2f", (2 + c) * t / 1000 }')
    tasks_b=$(awk -v r="$r" -v t="$t" -v m="$m" 'BEGIN { printf "%.2f", r * t / 1000 / m }')
    pol_bound=$(printf '%s\n' "$pol_fast_bound" "$slow_b" "$tasks_b" | sort -g | tail -n1)
    say ""
    say "== Politeness: $h hosts (127.0.0.1-$h, one testsite each) of $p pages (5 links, ~800 B); host 1 answers in $t ms, the others at once"
    say "   crawl-queue --max-tasks $m --per-host 2 --delay $d; Scrapy: CONCURRENT_REQUESTS $m, CONCURRENT_REQUESTS_PER_DOMAIN 2,"
    say "   DOWNLOAD_DELAY $d, RANDOMIZE_DOWNLOAD_DELAY False, ROBOTSTXT_OBEY True (tests/bench/scrapy_polite.py). One run each."
    say "   Bounds, with R = $r requests a host (robots.txt and $p pages), D = $d s, T = $t ms:"
    say "     fast hosts: (R - 1) x D = $pol_fast_bound s (their answers taken as instant)"
    say "     slow host:  (2 + ceil((P - 1) / 2)) x T = $slow_b s (robots.txt, then the root, before any other page is known; then 2 at a time)"
    say "     --max-tasks: the answers' total time / max-tasks = R x T / $m = $tasks_b s"
    say "     whole crawl: the largest, $pol_bound s"
    say "   fast_s: the fast hosts' first request to their last answer (servers' logs); wall_s: the crawler's run;"
    say "   peak: the most requests in flight to one host; gap_ms: the shortest time between two starts on one host"
    printf '%-24s %6s %6s %7s %8s %7s %7s %7s %6s %6s %7s\n' crawler pages fast fast_s fast_p/s fast/bnd wall_s \
        all/bnd cpu_s peak gap_ms
    printf '%-24s %6s %6s %7s %8s %7s %7s %7s %6s %6s %7s\n' bound "$((h * p))" "$((fast * p))" "$pol_fast_bound" \
        "$(awk -v n="$((fast * p))" -v s="$pol_fast_bound" 'BEGIN { if (s > 0) printf "%.0f", n / s; else print "-" }')" \
        1.00 "$pol_bound" 1.00 - 2 "$(awk -v d="$d" 'BEGIN { printf "%.0f", d * 1000 }')"

    pol_sites cq
    "$bin/runstat" -o "$out/pol.cq.stat" "$bin/crawl-queue" -q --format jsonl --output "$out/pol.cq.jsonl" \
        --max-tasks "$m" --per-host 2 --delay "$d" "${pol_roots[@]}" 2>"$out/pol.cq.err"
    local rc=$?
    stop_pol
    if [ "$rc" -ne 0 ] || [ -z "$(sfield "$out/pol.cq.jsonl" done)" ]; then
        warn "crawl-queue (politeness) failed: exit $rc; $(head -c 300 "$out/pol.cq.err")"
        status=1
    fi
    pol_row "crawl-queue" cq

    if [ "$pol_scrapy" != 1 ]; then
        say "(Scrapy rows skipped: BENCH_POL_SCRAPY=$pol_scrapy)"
        return
    fi
    if [ ! -x /usr/bin/scrapy ]; then
        say "(Scrapy rows skipped: /usr/bin/scrapy not found; apt-get install python3-scrapy)"
        return
    fi
    local q tag
    for q in default daq; do
        tag=scrapy.$q
        pol_sites "$tag"
        "$bin/runstat" -o "$out/pol.$tag.stat" /usr/bin/python3 tests/bench/scrapy_polite.py \
            $([ "$q" = daq ] && echo --queue daq) "$d" "${pol_roots[@]}" >"$out/pol.$tag.out" 2>"$out/pol.$tag.err"
        rc=$?
        stop_pol
        if [ "$rc" -ne 0 ] || ! grep -q '^pages=' "$out/pol.$tag.out"; then
            warn "Scrapy ($tag) failed: exit $rc; $(head -c 300 "$out/pol.$tag.err")"
            status=1
        fi
        pol_row "scrapy $(/usr/bin/python3 -c 'import scrapy; print(scrapy.__version__)' 2>/dev/null)$([ "$q" = daq ] && echo ', DAQ')" "$tag"
    done
    say "   DAQ: SCHEDULER_PRIORITY_QUEUE = scrapy.pqueues.DownloaderAwarePriorityQueue, Scrapy's advice for broad crawls"
}

say "crawlstages benchmarks — $(nproc) CPU(s), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1), Linux $(uname -r), $(awk '/MemTotal/ { printf "%.1f GB", $2 / 1048576 }' /proc/meminfo)"
say "open files: $(ulimit -n); data in $out"
# ---- 7. many hosts ---------------------------------------------------------------------
# hosts_roots N PORT: N root URLs, one per address 127.a.b.c (c neither 0 nor 255).
hosts_roots() {
    awk -v n="$1" -v p="$2" 'BEGIN {
        for (i = 1; k < n; i++) {
            c = i % 256
            if (c == 0 || c == 255) continue
            printf "http://127.%d.%d.%d:%s/\n", int(i / 65536) % 256, int(i / 256) % 256, c, p
            k++
        }
    }'
}

# many_run TAG TRANSPORT N ARGS...: crawl-queue on the N roots of $out/hosts.N.
many_run() {
    local tag=$1 transport=$2 n=$3
    shift 3
    # shellcheck disable=SC2046 # one root per word
    "$bin/runstat" -o "$out/$tag.stat" timeout 600 "$bin/crawl-queue" -q --format jsonl \
        --transport "$transport" --output "$out/$tag.jsonl" "$@" $(cat "$out/hosts.$n") \
        2>"$out/$tag.err" || warn "crawl-queue ($tag) failed: $(head -c 300 "$out/$tag.err")"
}

section_manyhosts() {
    say ""
    say "== Many hosts: N hosts (127.0.0.1, 127.0.0.2, ...) of one page, one testsite on 0.0.0.0;"
    say "   crawl-queue --chapter --ignore-robots on each transport, and on curl with robots.txt and --per-host 1"
    launch hosts --bind 0.0.0.0 --generate "pages=1,links=0,size=200,seed=1"
    local pid=$launched_pid port=${launched_url##*:}
    port=${port%/}
    printf '%-7s %-26s %8s %8s %9s\n' hosts run wall_s pages vs_raw
    local n raw curl
    for n in $many_hosts; do
        hosts_roots "$n" "$port" >"$out/hosts.$n"
        many_run "many.$n.raw" raw "$n" --chapter --ignore-robots
        many_run "many.$n.curl" curl "$n" --chapter --ignore-robots
        many_run "many.$n.polite" curl "$n" --per-host 1
        raw=$(rfield "$out/many.$n.raw.stat" wall)
        curl=$(rfield "$out/many.$n.curl.stat" wall)
        printf '%-7s %-26s %8s %8s %9s\n' "$n" "raw --ignore-robots" "$raw" \
            "$(sfield "$out/many.$n.raw.jsonl" done)" "1.00"
        printf '%-7s %-26s %8s %8s %9s\n' "$n" "curl --ignore-robots" "$curl" \
            "$(sfield "$out/many.$n.curl.jsonl" done)" "$(ratio "$curl" "$raw")"
        printf '%-7s %-26s %8s %8s %9s\n' "$n" "curl robots --per-host 1" \
            "$(rfield "$out/many.$n.polite.stat" wall)" "$(sfield "$out/many.$n.polite.jsonl" done)" \
            "$(ratio "$(rfield "$out/many.$n.polite.stat" wall)" "$raw")"
    done
    stop "$pid"
}

# ---- 7b. many hosts, polite: what robots.txt and the polite Queue cost -------------------
section_politehosts() {
    say ""
    say "== Polite on many hosts: $ph_hosts hosts (127.0.0.1, 127.0.0.2, ...) of one page, one testsite on"
    say "   0.0.0.0, robots.txt a 404; crawl-queue on curl, round-robin; medians of $runs run(s)"
    launch hosts --bind 0.0.0.0 --generate "pages=1,links=0,size=200,seed=1"
    local pid=$launched_pid port=${launched_url##*:} r m
    port=${port%/}
    hosts_roots "$ph_hosts" "$port" >"$out/hosts.$ph_hosts"
    local modes="polite polite-ir chapter chapter-ir"
    for r in $(seq "$runs"); do
        for m in $modes; do
            # shellcheck disable=SC2046 # the mode's flags, one a word
            many_run "ph.$m.$r" curl "$ph_hosts" $(case $m in
                polite-ir) echo --ignore-robots ;;
                chapter) echo --chapter ;;
                chapter-ir) echo --chapter --ignore-robots ;;
                esac)
        done
    done
    stop "$pid"
    printf '%-26s %7s %8s %9s %10s\n' run pages wall_s pages/s vs_chapter
    local -A rate pages wall label=([polite]="polite (no flag)" [polite-ir]="polite --ignore-robots"
        [chapter]="--chapter" [chapter-ir]="--chapter --ignore-robots")
    for m in $modes; do
        wall[$m]=$(for r in $(seq "$runs"); do rfield "$out/ph.$m.$r.stat" wall; done | median)
        pages[$m]=$(sfield "$out/ph.$m.1.jsonl" done)
        rate[$m]=$(awk -v p="${pages[$m]}" -v w="${wall[$m]}" \
            'BEGIN { if (w > 0 && p != "") printf "%.0f", p / w; else print "-" }')
    done
    for m in $modes; do
        printf '%-26s %7s %8s %9s %10s\n' "${label[$m]}" "${pages[$m]}" "${wall[$m]}" "${rate[$m]}" \
            "$(ratio "${rate[$m]}" "${rate[chapter]}")"
    done
}

# ---- 8. sitemaps: a million URLs ---------------------------------------------------------
section_sitemaps() {
    say ""
    say "== Sitemaps: $sm_files gzip sitemaps of 50,000 URLs, crawl-queue --sitemaps, SIGINT after $sm_secs s"
    local dir=$out/sitemaps port i
    mkdir -p "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    {
        printf 'page /robots.txt type=text/plain body="User-agent: *\\n'
        for i in $(seq "$sm_files"); do printf 'Sitemap: {base}/s%d.xml.gz\\n' "$i"; done
        printf '"\npage /\n'
        for i in $(seq "$sm_files"); do
            printf 'page /s%d.xml.gz type=application/gzip body=@s%d.xml.gz\n' "$i" "$i"
        done
    } >"$dir/site"
    for i in $(seq "$sm_files"); do
        awk -v i="$i" -v p="$port" 'BEGIN {
            print "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
            for (j = 0; j < 50000; j++)
                printf "<url><loc>http://127.0.0.1:%d/u/%d/%d</loc></url>\n", p, i, j
            print "</urlset>"
        }' | gzip -c >"$dir/s$i.xml.gz"
    done
    say "   on the wire: $(du -ck "$dir"/s*.xml.gz | tail -n1 | cut -f1) KB"
    launch sitemaps --port "$port" "$dir/site"
    local pid=$launched_pid
    "$bin/runstat" -o "$out/sitemaps.stat" timeout --preserve-status -s INT "$sm_secs" "$bin/crawl-queue" -q \
        --format jsonl --sitemaps --output "$out/sitemaps.jsonl" "$launched_url" \
        2>"$out/sitemaps.err"
    say "   peak RSS $(mb "$(rfield "$out/sitemaps.stat" maxrss_kb)") MB;" \
        "todo $(sfield "$out/sitemaps.jsonl" todo); records $(sfield "$out/sitemaps.jsonl" done)"
    stop "$pid"
}

# ---- 10. the defaults: polite (no flag) against --chapter -----------------------------------
# def_run TAG HOSTS FLAG...: crawl-queue on the first HOSTS of pol_roots; figures in
# $out/pol.TAG.*.
def_run() {
    local tag=$1 n=$2
    shift 2
    pol_sites "$tag" "$def_delay" "$def_delay" "$def_pages"
    "$bin/runstat" -o "$out/pol.$tag.stat" "$bin/crawl-queue" -q --format jsonl \
        --output "$out/pol.$tag.jsonl" "$@" "${pol_roots[@]:0:$n}" 2>"$out/pol.$tag.err"
    local rc=$?
    stop_pol
    if [ "$rc" -ne 0 ] || [ -z "$(sfield "$out/pol.$tag.jsonl" done)" ]; then
        warn "crawl-queue ($tag) failed: exit $rc; $(head -c 300 "$out/pol.$tag.err")"
        status=1
    fi
}

section_defaults() {
    local pol_hosts=$def_hosts n mode r tag pages fast fs peak gap
    say ""
    say "== Polite by default: crawl-queue with no flag (8 in flight per host at most) and with --chapter"
    say "   (the chapter's Queue, no politeness); $def_hosts hosts (127.0.0.1-$def_hosts, one testsite each), then"
    say "   host 1 alone, of $def_pages pages (5 links, ~800 B), answers in $def_delay ms; --max-tasks 100 (the"
    say "   default); robots.txt obeyed (a 404). Medians of $runs run(s); peak: the most requests in"
    say "   flight to one host (servers' logs), in the median run's"
    printf '%-6s %-12s %7s %8s %9s %7s %6s\n' hosts run pages wall_s pages/s cpu_s peak
    for n in "$def_hosts" 1; do
        for mode in polite chapter; do
            local walls="" rows=""
            for r in $(seq "$runs"); do
                tag=def.$n.$mode.$r
                # shellcheck disable=SC2046 # no flag, or --chapter
                def_run "$tag" "$n" $([ "$mode" = chapter ] && echo --chapter)
                walls="$walls $(rfield "$out/pol.$tag.stat" wall)"
                read -r pages fast fs peak gap < <(pol_figures "$tag")
                rows="$rows$(rfield "$out/pol.$tag.stat" wall) $pages $(rfield "$out/pol.$tag.stat" cpu) $peak
"
            done
            local w p c k
            w=$(median <<<"$walls")
            read -r _ p c k < <(grep -m1 "^$w " <<<"$rows" || head -n1 <<<"$rows")
            printf '%-6s %-12s %7s %8s %9s %7s %6s\n' "$n" "$mode" "$p" "$w" \
                "$(awk -v p="$p" -v w="$w" 'BEGIN { if (w > 0) printf "%.0f", p / w; else print "-" }')" \
                "$c" "$k"
        done
    done
}

# ---- 9. HTTP/2 against HTTP/1.1 over TLS ---------------------------------------------------
# h2_site DIR: the pages (p0.html is the root) and a self-signed certificate, in DIR.
h2_site() {
    local dir=$1
    awk -v n="$h2_pages" -v links="$links" -v size="$size" -v dir="$dir" 'BEGIN {
        for (i = 0; i < n; i++) {
            f = dir "/p" i ".html"
            printf "<html><body><h1>page %d</h1>\n", i > f
            for (k = 1; k <= links; k++)
                printf "<a href=\"p%d.html\">link %d</a>\n", (i * 7 + k * 131) % n, k > f
            for (b = 0; b < size; b += 64)
                printf "<p>filler filler filler filler filler filler filler fill</p>\n" > f
            printf "</body></html>\n" > f
            close(f)
        }
    }'
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -keyout "$dir/key.pem" -out "$dir/cert.pem" -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 2>/dev/null
}

# nginx's CPU seconds so far (user + system).
nginx_cpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$nginx_pid/stat"; }

section_http2() {
    say ""
    say "== HTTP/2 against HTTP/1.1 over TLS: $h2_pages pages on disk, nginx on 127.0.0.1,"
    say "   crawl-queue --chapter --insecure [--http1.1] --max-tasks $h2_tasks"
    if [ -z "$nginx_bin" ] || ! command -v openssl >/dev/null; then
        warn "nginx or openssl not found: the http2 section is skipped (scripts/install-deps.sh)"
        return
    fi
    local dir=$out/h2 i mode tag before
    rm -rf "$dir"
    mkdir -p "$dir"
    h2_site "$dir"
    nginx_start "$dir" "  types { text/html html; }
  log_format conn '\$connection \$server_protocol \$status';
  access_log $dir/access.log conn;" "    listen 127.0.0.1:@PORT@ ssl http2;
    ssl_certificate $dir/cert.pem;
    ssl_certificate_key $dir/key.pem;
    root $dir;
    index p0.html;" ||
        { warn "nginx did not start: $(tail -c 300 "$dir/error.log")"; status=1; return; }
    site_url=https://127.0.0.1:$nginx_port/
    for i in $(seq "$runs"); do
        for mode in h2 h1; do
            tag=h2.$mode.$i
            : >"$dir/access.log"
            before=$(nginx_cpu)
            crawl crawl-queue curl "$tag" --insecure --max-tasks "$h2_tasks" \
                $([ "$mode" = h1 ] && echo --http1.1)
            awk -v a="$before" -v b="$(nginx_cpu)" 'BEGIN { printf "%.3f\n", b - a }' \
                >"$out/$tag.srvcpu"
            awk '{ c[$1] = 1; p[$2] = 1 } END { n = 0; for (k in c) n++; s = ""
                   for (k in p) s = s k " "; print n, s }' "$dir/access.log" >"$out/$tag.conns"
        done
    done
    printf '%-22s %8s %8s %8s %12s %10s %12s\n' protocol pages wall_s pages/s connections \
        cpu_s nginx_cpu_s
    local w pg conns
    for mode in h2 h1; do
        w=$(for i in $(seq "$runs"); do rfield "$out/h2.$mode.$i.stat" wall; done | median)
        pg=$(sfield "$out/h2.$mode.1.jsonl" done)
        conns=$(for i in $(seq "$runs"); do cut -d' ' -f1 "$out/h2.$mode.$i.conns"; done | median)
        printf '%-22s %8s %8s %8s %12s %10s %12s\n' \
            "$(cut -d' ' -f2 "$out/h2.$mode.1.conns")" "$pg" "$w" \
            "$(awk -v p="$pg" -v w="$w" 'BEGIN { if (w > 0) printf "%.0f", p / w; else print "-" }')" \
            "$conns" \
            "$(for i in $(seq "$runs"); do rfield "$out/h2.$mode.$i.stat" cpu; done | median)" \
            "$(for i in $(seq "$runs"); do cat "$out/h2.$mode.$i.srvcpu"; done | median)"
    done
    nginx_stop
}

# ---- 10. spiders: Lua against Scrapy, and the cost of --spider -----------------------------
# spider_row LABEL TAG: pages, wall, pages/s, CPU (medians of the runs of TAG.N).
spider_row() {
    local label=$1 tag=$2 p w cpu
    p=$(for r in $(seq "$runs"); do cat "$out/$tag.$r.pages"; done | median)
    w=$(for r in $(seq "$runs"); do rfield "$out/$tag.$r.stat" wall; done | median)
    cpu=$(for r in $(seq "$runs"); do rfield "$out/$tag.$r.stat" cpu; done | median)
    printf '%-34s %6s %8s %8s %8s\n' "$label" "$p" "$w" \
        "$(awk -v p="$p" -v w="$w" 'BEGIN { if (w == "-" || w <= 0) print "-"; else printf "%.0f", p / w }')" "$cpu"
    eval "${tag//[.-]/_}_wall=$w ${tag//[.-]/_}_cpu=$cpu"
}

# spider_crawl NAME TAG ARGS...: crawl-queue (NAME crawl-queue-ir: --ignore-robots) on
# site_url; its pages counted.
spider_crawl() {
    local name=$1 tag=$2
    shift 2
    crawl "$name" curl "$tag" "$@"
    sfield "$out/$tag.jsonl" done >"$out/$tag.pages"
}

section_spiders() {
    local spec="pages=$spider_pages,links=12,size=7000,seed=1" have_scrapy=1
    [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scrapy' 2>/dev/null || {
        have_scrapy=0
        warn "Debian's python3-scrapy not found: the Scrapy row is skipped"
    }
    say ""
    say "== Spiders: $spider_pages pages (12 links, ~7000 B each), no delay, --ignore-robots; median of $runs run(s)"
    start_site "$spec" 0
    for r in $(seq "$runs"); do
        spider_crawl crawl-queue "sp.none.$r"
        spider_crawl crawl-queue "sp.follow.$r" --spider tests/bench/spider_follow.lua
        spider_crawl crawl-queue-ir "sp.none-ir.$r"
        spider_crawl crawl-queue-ir "sp.follow-ir.$r" --spider tests/bench/spider_follow.lua
        rm -f "$out/sp.lua.$r.items"
        spider_crawl crawl-queue-ir "sp.lua.$r" --spider tests/bench/spider_titles.lua \
            --items "$out/sp.lua.$r.items"
        if [ "$have_scrapy" = 1 ]; then
            "$bin/runstat" -o "$out/sp.scrapy.$r.stat" /usr/bin/python3 tests/bench/scrapy_spider.py \
                "$site_url" "$out/sp.scrapy.$r.items" >"$out/sp.scrapy.$r.out" 2>"$out/sp.scrapy.$r.err" ||
                { warn "scrapy failed: $(tail -c 300 "$out/sp.scrapy.$r.err")"; status=1; }
            sed -nE 's/^pages=//p' "$out/sp.scrapy.$r.out" >"$out/sp.scrapy.$r.pages"
        fi
    done
    stop_site
    printf '%-34s %6s %8s %8s %8s\n' crawler pages wall_s pages/s cpu_s
    spider_row "crawl-queue --spider (titles, links)" sp.lua
    [ "$have_scrapy" = 1 ] && spider_row "Scrapy (titles, links)" sp.scrapy
    spider_row "crawl-queue, no spider" sp.none
    spider_row "crawl-queue --spider (follow links)" sp.follow
    spider_row "... --ignore-robots, no spider" sp.none-ir
    spider_row "... --ignore-robots, --spider (follow)" sp.follow-ir
    say "   the cost of --spider that follows response:links(): wall x$(ratio "$sp_follow_wall" "$sp_none_wall"), CPU x$(ratio "$sp_follow_cpu" "$sp_none_cpu");" \
        "with --ignore-robots (no spider: the chapter's fetch, no engine) wall x$(ratio "$sp_follow_ir_wall" "$sp_none_ir_wall"), CPU x$(ratio "$sp_follow_ir_cpu" "$sp_none_ir_cpu")"
    [ "$have_scrapy" = 1 ] &&
        say "   Scrapy against the Lua spider: wall x$(ratio "$sp_scrapy_wall" "$sp_lua_wall"), CPU x$(ratio "$sp_scrapy_cpu" "$sp_lua_cpu")"
}

# ---- 11. mirror: --mirror against --requisites and wget -m -k -p -E -----------------------
# mirror_row LABEL TAG: files, wall, CPU (medians of the runs of TAG.N).
mirror_row() {
    local label=$1 tag=$2 f w cpu
    f=$(for r in $(seq "$runs"); do cat "$out/$tag.$r.files"; done | median)
    w=$(for r in $(seq "$runs"); do rfield "$out/$tag.$r.stat" wall; done | median)
    cpu=$(for r in $(seq "$runs"); do rfield "$out/$tag.$r.stat" cpu; done | median)
    printf '%-34s %6s %8s %8s\n' "$label" "$f" "$w" "$cpu"
    eval "${tag//[.-]/_}_wall=$w ${tag//[.-]/_}_cpu=$cpu"
}

# mirror_floor FIELD: the median of mirrorfloor's FIELD= over the runs.
mirror_floor() {
    for r in $(seq "$runs"); do sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$out/mi.floor.$r"; done | median
}

# mirror_run TAG R CMD...: CMD under runstat; the files it left under $out/$TAG.$R.d.
mirror_run() {
    local tag=$1 r=$2 d="$out/$1.$2.d"
    shift 2
    rm -rf "$d"
    "$bin/runstat" -o "$out/$tag.$r.stat" "$@" >"$out/$tag.$r.out" 2>"$out/$tag.$r.err"
    local rc=$?
    # wget's 8: some server answered an error (python3-doc links to a few missing files)
    [ "$rc" -eq 0 ] || { [ "$tag" = mi.wget ] && [ "$rc" -eq 8 ]; } ||
        { warn "$tag run $r failed (exit $rc): $(tail -c 300 "$out/$tag.$r.err")"; status=1; }
    find "$d" -type f ! -name '.crawlstages-*' 2>/dev/null | wc -l >"$out/$tag.$r.files"
}

# mirror_crawls URL: crawl-queue --requisites, --mirror and wget -m -k -p -E on URL,
# BENCH_RUNS times interleaved; their rows and the ratios.
mirror_crawls() {
    local url=$1 r
    for r in $(seq "$runs"); do
        mirror_run mi.req "$r" "$bin/crawl-queue" -q --per-host 16 --requisites \
            --output "$out/mi.req.$r.d.jsonl" "$url"
        mirror_run mi.mirror "$r" "$bin/crawl-queue" -q --per-host 16 --mirror "$out/mi.mirror.$r.d" \
            --output "$out/mi.mirror.$r.jsonl" "$url"
        [ "$have_wget" = 1 ] &&
            mirror_run mi.wget "$r" wget -q -m -k -p -E -P "$out/mi.wget.$r.d" "$url"
    done
    printf '%-34s %6s %8s %8s\n' crawler files wall_s cpu_s
    mirror_row "crawl-queue --requisites" mi.req
    mirror_row "crawl-queue --mirror DIR" mi.mirror
    [ "$have_wget" = 1 ] && mirror_row "wget -m -k -p -E" mi.wget
    say "   --mirror against --requisites: CPU x$(ratio "$mi_mirror_cpu" "$mi_req_cpu"), wall x$(ratio "$mi_mirror_wall" "$mi_req_wall")"
    [ "$have_wget" = 1 ] &&
        say "   --mirror against wget -m -k -p -E: CPU x$(ratio "$mi_mirror_cpu" "$mi_wget_cpu"), wall x$(ratio "$mi_mirror_wall" "$mi_wget_wall")"
    rm -rf "$out"/mi.*.d
}

# python3-doc's HTML served by nginx on 127.0.0.1: its root URL in docs_url (empty, and
# a warning, without python3-doc or nginx), nginx's pid in nginx_pid. Not called in a
# $( ) subshell, where the server would be forgotten and never stopped.
python_docs_site() {
    docs_url=
    local docs=${PYTHON_DOCS:-/usr/share/doc/python3/html} dir=$out/pydocs
    [ -f "$docs/index.html" ] && [ -n "$nginx_bin" ] ||
        { warn "python3-doc or nginx not found: its mirror rows are skipped (scripts/install-deps.sh)"; return; }
    rm -rf "$dir"
    mkdir -p "$dir"
    nginx_start "$dir" "  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log off;" "    listen 127.0.0.1:@PORT@;
    root $docs;
    index index.html;" ||
        { warn "nginx did not start: $(tail -c 300 "$dir/error.log")"; status=1; return; }
    docs_url=http://127.0.0.1:$nginx_port/
}

section_mirror() {
    local spec="pages=$mirror_pages,links=12,size=2000,seed=1" r
    say ""
    say "== Mirror: $mirror_pages pages (12 links, ~2000 B each), no delay, --per-host 16; median of $runs run(s), interleaved"
    start_site "$spec" 0
    mirror_crawls "$site_url"
    stop_site
    # the file system alone (mirrorfloor.c): the same files written in place, through a
    # temporary and a rename, and rewritten by exchange; medians of as many runs
    if [ -x "$bin/mirrorfloor" ]; then
        local d0 d1 d2
        for r in $(seq "$runs"); do
            "$bin/mirrorfloor" "$out/mi.floor.$r.d" "$mirror_pages" 2000 >"$out/mi.floor.$r" ||
                { warn "mirrorfloor run $r failed"; status=1; }
        done
        fl() { for r in $(seq "$runs"); do sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$out/mi.floor.$r"; done | median; }
        d0=$(fl direct) d1=$(fl renamed) d2=$(fl rewrite)
        say "   the file system alone, $mirror_pages files of 2000 B in one directory (CPU s): written in place $d0, through a temporary and a rename $d1, rewritten by exchange $d2"
        say "   --requisites + that floor (renamed + rewrite) against --requisites: CPU x$(ratio "$(awk -v a="$mi_req_cpu" -v b="$d1" -v c="$d2" 'BEGIN { printf "%.3f", a + b + c }')" "$mi_req_cpu")"
    fi
    rm -rf "$out"/mi.floor.*.d.*
    # the issue's site: python3-doc (about 550 files, pages of 10 to 300 KB)
    python_docs_site
    if [ -n "$docs_url" ]; then
        say ""
        say "== Mirror: python3-doc, nginx on 127.0.0.1, --per-host 16; median of $runs run(s), interleaved"
        mirror_crawls "$docs_url"
        nginx_stop
    fi
}

section_linkpath() {
    say ""
    say "== Link path: site A (static pages of ~7 KB, 12 links, nginx on 127.0.0.1), round-robin;"
    say "   medians of $runs run(s) (tests/bench/linkpath.sh)"
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
        { warn "nginx not found: the linkpath section is skipped (scripts/install-deps.sh)"; return; }
    local w=()
    if [ -x /usr/bin/wget2 ]; then
        w=(wget2)
    else
        warn "wget2 not found: its row is skipped (scripts/install-deps.sh)"
    fi
    LINKPATH_RUNS=$runs LINKPATH_BUILD=$build LINKPATH_OUT=$out/linkpath \
        bash tests/bench/linkpath.sh "queue-ch=$bin/crawl-queue --chapter -q" \
        "queue=$bin/crawl-queue -q" "callbacks=$bin/crawl-callbacks -q" \
        "generators=$bin/crawl-generators -q" "${w[@]}" ||
        { warn "linkpath.sh failed"; status=1; }
}

for s in $sections; do
    case $s in
    throughput) section_throughput ;;
    latency) section_latency ;;
    c10k) section_c10k ;;
    memory) section_memory ;;
    cluster) section_cluster ;;
    politeness) section_politeness ;;
    manyhosts) section_manyhosts ;;
    politehosts) section_politehosts ;;
    linkpath) section_linkpath ;;
    defaults) section_defaults ;;
    sitemaps) section_sitemaps ;;
    http2) section_http2 ;;
    spiders) section_spiders ;;
    mirror) section_mirror ;;
    *) warn "unknown section '$s'" ;;
    esac
done
exit "$status"
