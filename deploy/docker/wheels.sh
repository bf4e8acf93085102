#!/bin/sh
# Fill deploy/docker/wheels/ with every wheel the image installs, requirements.lock with their
# versions and SHA256SUMS with their sha256: the image checks the files, then installs only
# from them (`pip install --no-index`).
# Versions come from constraints.txt (what `make test` uses); run on the host, where pip
# reaches the index (and torch's CPU wheel is a local file, for EXTRAS=train).
#   EXTRAS=slack sh deploy/docker/wheels.sh
set -eu
cd "$(dirname "$0")/../.."
python=${PYTHON:-python3}
out=deploy/docker/wheels
extras=${EXTRAS:-}
rm -rf "$out" && mkdir -p "$out" && touch "$out/.keep"
"$python" -m pip wheel --quiet --disable-pip-version-check -c constraints.txt -w "$out" \
    ".${extras:+[$extras]}"
"$python" - "$out" <<'PY'
import hashlib, pathlib, sys
out = pathlib.Path(sys.argv[1])
lines = []
for wheel in sorted(out.glob("*.whl")):
    name, version = wheel.name.split("-")[:2]
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    lines.append((f"{name}=={version}", f"{digest}  {wheel.name}"))
(out / "requirements.lock").write_text("".join(f"{pin}\n" for pin, _ in lines))
(out / "SHA256SUMS").write_text("".join(f"{line}\n" for _, line in lines))
print(f"wheels: {len(lines)} wheels, {sum(w.stat().st_size for w in out.glob('*.whl')) >> 20} MB")
PY
