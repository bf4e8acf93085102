#!/bin/sh
# Fill deploy/docker/wheels/ with every wheel of factbot's dependencies, requirements.lock with
# their versions, default.txt with the ones `pip install .` takes (no extra) and SHA256SUMS with
# their sha256; factbot's own wheel goes to deploy/docker/app/ (with its SHA256SUMS). The image
# checks the files, then installs only from them (`pip install --no-index`): the dependencies
# in one layer, kept while only factbot's code changes, factbot and its EXTRAS in the next.
# Versions come from constraints.txt (what `make test` uses); run on the host, where pip
# reaches the index (and torch's CPU wheel is a local file, for EXTRAS=train).
#   EXTRAS=slack sh deploy/docker/wheels.sh
set -eu
cd "$(dirname "$0")/../.."
python=${PYTHON:-python3}
out=deploy/docker/wheels
app=deploy/docker/app
extras=${EXTRAS:-}
rm -rf "$out" "$app" && mkdir -p "$out" "$app" && touch "$out/.keep" "$app/.keep"
# The default's wheels first (their names are default.txt), then the extras' beside them.
"$python" -m pip wheel --quiet --disable-pip-version-check -c constraints.txt -w "$out" .
ls "$out" >"$out/.default"
[ -z "$extras" ] || "$python" -m pip wheel --quiet --disable-pip-version-check \
    -c constraints.txt -w "$out" ".[$extras]"
mv "$out"/factbot-*.whl "$app/"
"$python" - "$out" "$app" <<'PY'
import hashlib, pathlib, sys
out, app = (pathlib.Path(p) for p in sys.argv[1:])
default = set((out / ".default").read_text().split())
(out / ".default").unlink()


def pins(folder: pathlib.Path) -> list[tuple[str, str, str]]:
    """Return (name==version, sha256 line, file name) for each wheel of folder."""
    rows = []
    for wheel in sorted(folder.glob("*.whl")):
        name, version = wheel.name.split("-")[:2]
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        rows.append((f"{name}=={version}", f"{digest}  {wheel.name}", wheel.name))
    return rows


deps = pins(out)
(out / "requirements.lock").write_text("".join(f"{pin}\n" for pin, _, _ in deps))
(out / "default.txt").write_text("".join(f"{pin}\n" for pin, _, f in deps if f in default))
(out / "SHA256SUMS").write_text("".join(f"{line}\n" for _, line, _ in deps))
(app / "SHA256SUMS").write_text("".join(f"{line}\n" for _, line, _ in pins(app)))
size = sum(w.stat().st_size for w in out.glob("*.whl")) >> 20
print(f"wheels: {len(deps)} wheels ({sum(f in default for *_, f in deps)} default), {size} MB")
PY
