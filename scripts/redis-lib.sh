# redis-lib.sh — sourced by demo-cluster.sh and tests/bench/bench.sh: a redis-server of
# the caller's own on a free 127.0.0.1 port (no config file, nothing saved), in the
# background, answering PING before it returns.
#   redis_start DIR   sets redis_pid and redis_port (its log in DIR/redis.log); 1 on failure
#   redis_stop
redis_pid=
redis_port=

redis_start() {
    local dir=$1 _
    for _ in $(seq 20); do
        # a port nothing answers on (a few tries at random), then Redis must PONG
        redis_port=$((20000 + RANDOM % 40000))
        (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null && continue
        redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
            --dir "$dir" --logfile "$dir/redis.log" --daemonize no </dev/null >/dev/null 2>&1 &
        redis_pid=$!
        for _ in $(seq 100); do
            [ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = PONG ] && return 0
            kill -0 "$redis_pid" 2>/dev/null || break
            sleep 0.05
        done
        redis_stop
    done
    return 1
}

redis_stop() {
    if [ -n "$redis_pid" ]; then                  # safe under set -e
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    fi
    redis_pid=
}
