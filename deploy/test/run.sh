#!/bin/sh
# `make deploy-test` (and `.ci/run`, after `make test`): Docker up (installed and started when
# missing), the images built, then deploy/test/deploy_test.py brings both compose files up,
# checks, breaks and tears them down. Figures: $REPORT (JSON), sizes and build times in
# $REPORT.build. Every step is bounded in time; whatever happens, the EXIT trap removes both
# compose projects (containers, volumes, networks), prints the diagnostics of a failure (the
# containers' logs, `docker ps`, disk, dockerd's log) and stops the dockerd it started.
set -eu
cd "$(dirname "$0")/../.."
python=${PYTHON:-.venv/bin/python}
report=${REPORT:-reports/deploy-test.json}
min_free_gb=${DEPLOY_TEST_MIN_FREE_GB:-10}  # images, build cache and volumes take ~8 GB
mkdir -p "$(dirname "$report")"
logs=$(mktemp -d "${TMPDIR:-/tmp}/factbot-deploy-test.XXXXXX")
export DOCKER_BUILDKIT=0  # the classic builder: no buildx here
t_all=$(date +%s)
started_dockerd=""
services=""  # the background builds of the PostgreSQL and SearXNG images
say() { echo "deploy-test $(date +%H:%M:%S): $*"; }
fail() { say "FAILED: $*" >&2; exit 1; }

# Both compose projects of deploy_test.py, by their labels: what is left when it was killed.
remove_projects() {
    for project in fbdeploy1 fbdeploy2; do
        filter="label=com.docker.compose.project=$project"
        ids=$(docker ps -aq --filter "$filter" 2>/dev/null) || continue
        if [ -n "$ids" ] && [ "$1" != 0 ]; then
            for id in $ids; do
                echo "--- $(docker inspect -f '{{.Name}} {{.State.Status}} exit={{.State.ExitCode}}' "$id"), last 40 lines"
                docker logs --tail 40 "$id" 2>&1 || true
            done
        fi
        # shellcheck disable=SC2086
        [ -z "$ids" ] || docker rm -f -v $ids >/dev/null 2>&1 || true
        vols=$(docker volume ls -q --filter "$filter" 2>/dev/null) || true
        # shellcheck disable=SC2086
        [ -z "$vols" ] || docker volume rm -f $vols >/dev/null 2>&1 || true
        nets=$(docker network ls -q --filter "$filter" 2>/dev/null) || true
        # shellcheck disable=SC2086
        [ -z "$nets" ] || docker network rm $nets >/dev/null 2>&1 || true
    done
}

cleanup() {
    rc=$?
    trap - EXIT INT TERM
    set +e
    if [ -n "$services" ] && kill -0 "$services" 2>/dev/null; then  # the background builds
        pkill -TERM -P "$services" 2>/dev/null
        kill "$services" 2>/dev/null
        wait "$services" 2>/dev/null
    fi
    if docker info >/dev/null 2>&1; then
        remove_projects "$rc"
        # The images that the new builds replaced (our label, no tag left).
        docker image prune -f --filter label=org.factbot.deploy-test >/dev/null 2>&1 || true
        if [ "$rc" != 0 ]; then
            echo "--- docker ps -a"
            docker ps -a 2>&1 | head -30
        fi
    fi
    if [ "$rc" != 0 ]; then
        echo "--- disk"
        df -h / /var/lib/docker 2>/dev/null || true
        for f in "$logs"/*.log; do
            [ -s "$f" ] && { echo "--- $(basename "$f"), last 40 lines"; tail -40 "$f"; }
        done
        say "failed (exit $rc) after $(( $(date +%s) - t_all )) s" >&2
    fi
    if [ -n "$started_dockerd" ]; then
        kill "$started_dockerd" 2>/dev/null || true
        for _ in $(seq 30); do kill -0 "$started_dockerd" 2>/dev/null || break; sleep 1; done
        kill -9 "$started_dockerd" 2>/dev/null || true
        say "stopped the dockerd it started"
    fi
    rm -rf "$logs"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

apt_install() {  # packages...: bounded, quiet, no questions
    say "apt-get install $*"
    timeout 300 apt-get update -qq >"$logs/apt.log" 2>&1 || fail "apt-get update (see apt.log)"
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq "$@" \
        >>"$logs/apt.log" 2>&1 || fail "apt-get install $* (see apt.log)"
}

# dockerd in the background, `docker info` waited for (120 s at most, while it lives).
start_dockerd() {
    say "starting dockerd $*"
    dockerd "$@" >>"$logs/dockerd.log" 2>&1 &
    started_dockerd=$!
    for _ in $(seq 120); do
        docker info >/dev/null 2>&1 && return 0
        kill -0 "$started_dockerd" 2>/dev/null || break
        sleep 1
    done
    kill "$started_dockerd" 2>/dev/null || true
    wait "$started_dockerd" 2>/dev/null || true
    started_dockerd=""
    return 1
}

if ! docker info >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || fail "Docker is not running and only root can install or start it"
    command -v dockerd >/dev/null 2>&1 || apt_install docker.io docker-compose
    # A machine whose kernel refuses Docker's iptables rules still runs it without them: builds
    # use the host's network and containers reach only each other and this host.
    start_dockerd || start_dockerd --iptables=false \
        || fail "dockerd did not answer within 120 s (see dockerd.log)"
    say "dockerd started (pid $started_dockerd)"
fi
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1 \
    || apt_install docker-compose
say "$(docker info -f 'Docker {{.ServerVersion}}, storage {{.Driver}}, cgroup {{.CgroupVersion}}, {{.NCPU}} CPUs')"
root=$(docker info -f '{{.DockerRootDir}}')
free_gb=$(df -Pk "$root" | awk 'NR == 2 {print int($4 / 1048576)}')
[ "$free_gb" -ge "$min_free_gb" ] \
    || fail "$free_gb GB free under $root, $min_free_gb GB needed (docker system prune -a frees it)"
remove_projects 0  # what an earlier, killed run left

base=${FACTBOT_BASE:-local/debian:bookworm}
t=$(date +%s)
timeout 900 nice -n 10 sh deploy/docker/base.sh "$base" >"$logs/base.log" 2>&1 \
    || fail "the Debian base $base (see base.log)"
t_base=$(( $(date +%s) - t )); say "$(tail -1 "$logs/base.log") ($t_base s)"
build() {  # log name, tag, docker build arguments...
    name=$1 tag=$2
    shift 2
    timeout 1200 nice -n 10 docker build --network host --label org.factbot.deploy-test=1 \
        --build-arg BASE="$base" -t "$tag" "$@" >"$logs/build-$name.log" 2>&1 \
        || fail "docker build $tag (see build-$name.log)"
}
# PostgreSQL and SearXNG (Debian packages: mostly downloads and unpacking) build in the
# background while the wheelhouse and the factbot images (mostly pip) build here; their
# times overlap, so the steps' seconds add up to more than the wall clock.
(
    t=$(date +%s); build postgres factbot-postgres:15 deploy/postgres
    echo "$(( $(date +%s) - t ))" >"$logs/postgres.s"
    t=$(date +%s); build searxng factbot-searxng:latest deploy/searxng
    echo "$(( $(date +%s) - t ))" >"$logs/searxng.s"
) >"$logs/services.log" 2>&1 &
services=$!
# One wheelhouse for both images: the default and the Slack variant the scaled test uses.
t=$(date +%s)
EXTRAS=slack PYTHON="$python" timeout 900 nice -n 10 sh deploy/docker/wheels.sh \
    >"$logs/wheels.log" 2>&1 || fail "the wheelhouse (see wheels.log)"
t_wheels=$(( $(date +%s) - t )); say "$(tail -1 "$logs/wheels.log") ($t_wheels s)"
# The Slack image reuses the default's layers up to its dependencies (deploy/Dockerfile).
t=$(date +%s); build factbot factbot:latest -f deploy/Dockerfile .; t_image=$(( $(date +%s) - t ))
say "factbot:latest built ($t_image s)"
t=$(date +%s); build slack factbot:slack -f deploy/Dockerfile --build-arg EXTRAS=slack .
t_slack=$(( $(date +%s) - t )); say "factbot:slack built ($t_slack s)"
t=$(date +%s)
wait "$services" || { cat "$logs/services.log" >&2; fail "the PostgreSQL or SearXNG image"; }
t_pg=$(cat "$logs/postgres.s") t_searxng=$(cat "$logs/searxng.s")
say "factbot-postgres:15 built ($t_pg s), factbot-searxng:latest built ($t_searxng s), in the background (waited $(( $(date +%s) - t )) s more)"
size() { docker image inspect -f '{{.Size}}' "$1" | awk '{printf "%.0f", $1/1000000}'; }
cat >"$report.build" <<JSON
{"base_s": $t_base, "wheels_s": $t_wheels, "image_s": $t_image, "image_slack_s": $t_slack,
 "postgres_s": $t_pg, "searxng_s": $t_searxng, "size_mb": {"base": $(size "$base"),
 "factbot": $(size factbot:latest), "factbot_slack": $(size factbot:slack),
 "postgres": $(size factbot-postgres:15), "searxng": $(size factbot-searxng:latest)}}
JSON
say "images built: $(tr -d '\n' <"$report.build")"
uid=$(timeout 120 docker run --rm --entrypoint id factbot:latest -u)
[ "$uid" != 0 ] || fail "the image runs as root"
timeout 120 docker run --rm factbot:latest python3 -c "import importlib.util as u; assert u.find_spec('torch') is None and u.find_spec('slack_bolt') is None" \
    || fail "the default image holds torch or a platform library"
# deploy_test.py bounds each wait itself; this bounds the whole (killed: the trap cleans up).
timeout -k 30 "${DEPLOY_TEST_LIMIT:-1200}" "$python" deploy/test/deploy_test.py --report "$report"
say "passed in $(( $(date +%s) - t_all )) s"
