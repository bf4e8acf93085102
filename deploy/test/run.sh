#!/bin/sh
# `make deploy-test`: Docker up (installed and started when missing), the images built, then
# deploy/test/deploy_test.py brings both compose files up, checks, breaks and tears them down.
# Figures: $REPORT (JSON), sizes and build times in $REPORT.build.
set -eu
cd "$(dirname "$0")/../.."
python=${PYTHON:-.venv/bin/python}
report=${REPORT:-reports/deploy-test.json}
mkdir -p "$(dirname "$report")"
export DOCKER_BUILDKIT=0  # the classic builder: no buildx here
t_all=$(date +%s)
started_dockerd=""
if ! docker info >/dev/null 2>&1; then
    if ! command -v dockerd >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose >/dev/null
    fi
    dockerd >/tmp/factbot-dockerd.log 2>&1 &
    started_dockerd=$!
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null 2>&1 || { tail -20 /tmp/factbot-dockerd.log; exit 1; }
    echo "deploy-test: started dockerd (pid $started_dockerd)"
fi
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1 || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose >/dev/null; }
stop_dockerd() {
    [ -n "$started_dockerd" ] && kill "$started_dockerd" 2>/dev/null && wait "$started_dockerd" || true
}
trap stop_dockerd EXIT
base=${FACTBOT_BASE:-local/debian:bookworm}
t=$(date +%s); nice -n 10 sh deploy/docker/base.sh "$base"; t_base=$(( $(date +%s) - t ))
# One wheelhouse for both images: the default and the Slack variant the scaled test uses.
t=$(date +%s); EXTRAS=slack nice -n 10 sh deploy/docker/wheels.sh; t_wheels=$(( $(date +%s) - t ))
build() {  # tag, extras
    nice -n 10 docker build -q -f deploy/Dockerfile --build-arg BASE="$base" \
        --build-arg EXTRAS="$2" -t "$1" . >/dev/null
}
t=$(date +%s); build factbot:latest ""; t_image=$(( $(date +%s) - t ))
t=$(date +%s); build factbot:slack slack; t_slack=$(( $(date +%s) - t ))
t=$(date +%s)
nice -n 10 docker build -q --build-arg BASE="$base" -t factbot-postgres:15 deploy/postgres >/dev/null
t_pg=$(( $(date +%s) - t ))
size() { docker image inspect -f '{{.Size}}' "$1" | awk '{printf "%.0f", $1/1000000}'; }
cat >"$report.build" <<JSON
{"base_s": $t_base, "wheels_s": $t_wheels, "image_s": $t_image, "image_slack_s": $t_slack,
 "postgres_s": $t_pg, "size_mb": {"base": $(size "$base"), "factbot": $(size factbot:latest),
 "factbot_slack": $(size factbot:slack), "postgres": $(size factbot-postgres:15)}}
JSON
echo "deploy-test: images built: $(tr -d '\n' <"$report.build")"
docker run --rm --entrypoint id factbot:latest -u | grep -qv '^0$' || { echo "image runs as root"; exit 1; }
docker run --rm factbot:latest python3 -c "import importlib.util as u; assert u.find_spec('torch') is None and u.find_spec('slack_bolt') is None" \
    || { echo "the default image holds torch or a platform library"; exit 1; }
"$python" deploy/test/deploy_test.py --report "$report"
echo "deploy-test: passed in $(( $(date +%s) - t_all )) s"
