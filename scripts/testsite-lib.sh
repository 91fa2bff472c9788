# testsite-lib.sh — sourced by debug.sh, traces.sh, demo.sh and timeline.sh: start a generated testsite in
# the background, in a session of its own (so a Ctrl-C typed at gdb, which goes to
# the terminal's whole foreground process group, does not stop the server), and stop
# it by its pid.
#   site_start BINDIR SPEC [--delay MS]   sets site_pid and site_url
#   site_stop
site_pid=
site_url=
site_out=

site_start() {
    local bin=$1 spec=$2
    shift 2
    site_out=$(mktemp)
    setsid "$bin/testsite" --generate "$spec" "$@" >"$site_out" 2>&1 </dev/null &
    site_pid=$!
    for _ in $(seq 100); do
        site_url=$(head -n1 "$site_out")
        case $site_url in http://*/) return 0 ;; esac
        kill -0 "$site_pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "testsite did not start: $(cat "$site_out")" >&2
    site_stop
    return 1
}

site_stop() {
    if [ -n "$site_pid" ]; then
        kill "$site_pid" 2>/dev/null && wait "$site_pid" 2>/dev/null
        site_pid=
    fi
    [ -n "$site_out" ] && rm -f "$site_out"
    site_out=
    return 0
}
