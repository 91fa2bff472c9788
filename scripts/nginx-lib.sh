# nginx-lib.sh — sourced by tests/bench/bench.sh, tests/bench/linkpath.sh and
# tests/integration/mirror_wget.sh: an nginx (nginx-light) of the caller's own on a free
# 127.0.0.1 port, one worker in the foreground, all it writes in one directory.
#   nginx_start DIR HTTP SERVER  DIR/nginx.conf: the http block's lines HTTP and one
#                                server of lines SERVER, @PORT@ in them the port; starts
#                                it, answering on the port before it returns; sets
#                                nginx_pid and nginx_port; 1 on failure (DIR/error.log)
#   nginx_stop
nginx_pid=
nginx_port=
nginx_bin=$(command -v nginx || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; })

nginx_start() {
    local dir=$1 http=$2 server=$3 try _
    [ -n "$nginx_bin" ] || { echo "nginx not found (nginx-light)" >>"$dir/error.log"; return 1; }
    for try in 1 2 3; do # a port found free may be taken before nginx binds it
        nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
master_process off;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
${http//@PORT@/$nginx_port}
  client_body_temp_path $dir;
  proxy_temp_path $dir;
  fastcgi_temp_path $dir;
  uwsgi_temp_path $dir;
  scgi_temp_path $dir;
  server {
${server//@PORT@/$nginx_port}
  }
}
CONF
        "$nginx_bin" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" 2>>"$dir/error.log" &
        nginx_pid=$!
        for _ in $(seq 100); do
            (exec 3<>"/dev/tcp/127.0.0.1/$nginx_port") 2>/dev/null && return 0
            kill -0 "$nginx_pid" 2>/dev/null || break
            sleep 0.05
        done
        nginx_stop
    done
    return 1
}

nginx_stop() {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
    nginx_pid=
}
