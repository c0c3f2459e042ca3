# What scripts/bench-proxy and scripts/soak-proxy share (sourced, not run): the tools, the
# release builds of shepherd and of the hudsucker baseline, a work directory cleaned up on exit,
# a local HTTPS origin (nginx with a private CA serving a 1 KB file), starting the proxies, and
# reading a process's figures from /proc (CPU time, resident memory, descriptors).
#
# Environment: CARGO_TARGET_DIR (where the release builds go), SHEPHERD_BIN (use this binary
# instead of building one), BENCH_HUDSUCKER=0 (no hudsucker baseline), HUDSUCKER_BIN (use this
# baseline binary instead of building one), BURST_BIN (soak-proxy's burst client).

TARGET_DIR=${CARGO_TARGET_DIR:-target}

# Installs oha (cargo) and nginx-light (apt) when missing; sets NGINX.
bench_tools() {
    if ! command -v oha >/dev/null; then
        echo "installing oha (cargo install oha --locked)..." >&2
        cargo install oha --locked >&2
    fi
    NGINX=$(command -v nginx || true)
    [ -z "$NGINX" ] && [ -x /usr/sbin/nginx ] && NGINX=/usr/sbin/nginx
    if [ -z "$NGINX" ]; then
        echo "installing nginx-light (apt-get)..." >&2
        apt-get install -y nginx-light >&2 || { apt-get update >&2 && apt-get install -y nginx-light >&2; }
        NGINX=/usr/sbin/nginx
    fi
    for tool in openssl python3 curl; do
        command -v "$tool" >/dev/null || { echo "$0 needs $tool" >&2; exit 1; }
    done
}

# Sets SHEPHERD (built in release unless SHEPHERD_BIN is given).
bench_build_shepherd() {
    if [ -n "${SHEPHERD_BIN:-}" ]; then
        SHEPHERD=$SHEPHERD_BIN
    else
        echo "building shepherd (release)..." >&2
        cargo build --release --locked -p shepherd --quiet >&2
        SHEPHERD="$TARGET_DIR/release/shepherd"
    fi
}

# Builds proxy/bench-baseline (hudsucker's no-op proxy and the burst client) unless both
# binaries are given or not wanted; sets HUDSUCKER (empty when BENCH_HUDSUCKER=0) and BURST.
bench_build_baseline() {
    local base
    base="$(realpath -m "$TARGET_DIR")/bench-baseline/release"
    HUDSUCKER=""
    if [ "${BENCH_HUDSUCKER:-1}" != 0 ]; then
        HUDSUCKER=${HUDSUCKER_BIN:-$base/hudsucker-baseline}
    fi
    BURST=${BURST_BIN:-$base/burst}
    if { [ -n "$HUDSUCKER" ] && [ -z "${HUDSUCKER_BIN:-}" ]; } || [ -z "${BURST_BIN:-}" ]; then
        echo "building the hudsucker baseline (release, first time takes minutes)..." >&2
        (cd proxy/bench-baseline && CARGO_TARGET_DIR="$(dirname "$base")" cargo build --release --locked --quiet >&2)
    fi
}

# A temporary work directory, removed with every process in PIDS on exit.
bench_workdir() {
    WORK=$(mktemp -d)
    # nginx's workers drop root: they must be able to read the files they serve.
    chmod 755 "$WORK"
    PIDS=()
    trap bench_cleanup EXIT
}

bench_cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_port() {
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "port $1 did not open" >&2
    exit 1
}

# The origin: a private CA and a leaf for localhost / 127.0.0.1 ($WORK/ca.pem), $WORK/www/1k.txt,
# nginx over TLS (h2 and http/1.1, keep-alive, enough descriptors for bursts of thousands of
# connections) on ORIGIN_PORT.
bench_origin() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj "/CN=bench origin CA" -keyout "$WORK/ca.key" -out "$WORK/ca.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj "/CN=localhost" -keyout "$WORK/leaf.key" -out "$WORK/leaf.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$WORK/ext"
    openssl x509 -req -in "$WORK/leaf.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" \
        -CAcreateserial -days 2 -extfile "$WORK/ext" -out "$WORK/leaf.pem" 2>/dev/null
    mkdir -p "$WORK/www" "$WORK/tmp"
    head -c 1024 /dev/zero | tr '\0' 'a' >"$WORK/www/1k.txt"
    ORIGIN_PORT=$(free_port)
    cat >"$WORK/nginx.conf" <<EOF
worker_processes auto;
worker_rlimit_nofile 65536;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
daemon off;
events { worker_connections 20000; }
http {
    access_log off;
    client_body_temp_path $WORK/tmp;
    proxy_temp_path $WORK/tmp;
    fastcgi_temp_path $WORK/tmp;
    uwsgi_temp_path $WORK/tmp;
    scgi_temp_path $WORK/tmp;
    keepalive_requests 10000000;
    default_type application/octet-stream;
    types { text/html html; text/plain txt; application/javascript js; }
    keepalive_timeout 120s;
    server {
        # "ssl http2" works on Debian 12's nginx 1.22 (newer ones warn and accept it).
        listen 127.0.0.1:$ORIGIN_PORT ssl http2 backlog=8192;
        ssl_certificate $WORK/leaf.pem;
        ssl_certificate_key $WORK/leaf.key;
        root $WORK/www;
    }
}
EOF
    "$NGINX" -c "$WORK/nginx.conf" -p "$WORK" 2>"$WORK/nginx.stderr" &
    PIDS+=($!)
    wait_port "$ORIGIN_PORT"
}

# start_shepherd NAME MODE [args...]: `shepherd MODE` on a free port trusting the origin's CA;
# sets NAME_PORT and NAME_PID, logs to $WORK/NAME.log.
start_shepherd() {
    local name=$1 mode=$2 port
    shift 2
    port=$(free_port)
    SHEPHERD_LOG=warn SHEPHERD_HOME="$WORK/home" "$SHEPHERD" "$mode" \
        --listen "127.0.0.1:$port" --upstream-ca "$WORK/ca.pem" "$@" 2>"$WORK/$name.log" &
    PIDS+=($!)
    printf -v "${name}_PID" '%s' "$!"
    printf -v "${name}_PORT" '%s' "$port"
    wait_port "$port"
}

# start_hudsucker NAME: the baseline on a free port; sets NAME_PORT and NAME_PID.
start_hudsucker() {
    local name=$1 port
    port=$(free_port)
    "$HUDSUCKER" "127.0.0.1:$port" "$WORK/ca.pem" 2>"$WORK/$name.log" &
    PIDS+=($!)
    printf -v "${name}_PID" '%s' "$!"
    printf -v "${name}_PORT" '%s' "$port"
    wait_port "$port"
}

# CPU seconds (user + system) a process has used so far.
cpu_of() {
    [ -n "$1" ] && [ -r "/proc/$1/stat" ] || { echo 0; return; }
    awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"
}

# Resident memory of a process in KiB (VmRSS), 0 when it is gone.
rss_kb() {
    awk '/^VmRSS:/ { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# Open descriptors of a process.
fds_of() {
    find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}
