#!/bin/sh
# SEARXNG_SECRET (the searxng/searxng image's name) is searx's SEARX_SECRET; without one, stop.
set -eu
: "${SEARX_SECRET:=${SEARXNG_SECRET:-}}"
[ -n "$SEARX_SECRET" ] || { echo "searxng: set SEARXNG_SECRET" >&2; exit 1; }
export SEARX_SECRET
exec "$@"
