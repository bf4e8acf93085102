# factbot: `make run` sets up and serves the API; `make test` sets up and runs every check.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.factbot-installed
# Every extra the suite needs: the platform libraries, faces, torch (train), the docs site.
EXTRAS := dev,rapidocr,discord,slack,x,bluesky,mastodon,faces,train,docs

.PHONY: setup run doctor model test lint typecheck docs reference catalogs pytest bench lock clean deploy-test

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt deploy/apt-packages.txt deploy/setup-system.sh
	sh deploy/setup-system.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[$(EXTRAS)]'
	touch $(STAMP)

# The local model lives in .models/ of the checkout unless FACTBOT_MODEL__MODELS_DIR says otherwise.
FACTBOT_MODEL__MODELS_DIR ?= $(CURDIR)/.models

# `factbot serve` starts by printing the short `factbot doctor` summary (sources, model, problems).
run: model
	FACTBOT_MODEL__MODELS_DIR=$(FACTBOT_MODEL__MODELS_DIR) $(BIN)/factbot serve

# Every fact of the set-up, and each problem with the command that fixes it.
doctor: setup
	FACTBOT_MODEL__MODELS_DIR=$(FACTBOT_MODEL__MODELS_DIR) $(BIN)/factbot doctor

# The local language model: llama-cpp-python (built once) and the verified Qwen2.5 GGUF.
# On x86-64, llama.cpp is compiled for the instruction sets the CPU lists in /proc/cpuinfo, AMX
# excepted, instead of -march=native: a native build uses every instruction the CPU advertises,
# and on hosts that advertise AMX but do not grant it (virtual machines, sandboxes) the first
# answer dies with a protection fault in ldtilecfg. AVX-512 with VNNI evaluates prompts ~1.5x
# faster than AVX2 alone on these machines, so it is kept where the CPU has it. Elsewhere
# (ARM) the build stays native. The wheel is kept under WHEELS, keyed by LLAMA_CMAKE_ARGS,
# because pip's own wheel cache ignores CMAKE_ARGS and would hand back one built otherwise.
LLAMA_VERSION := 0.3.36
CPU_FLAGS := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2)
# $(call has,FEATURES,IF ALL LISTED,IF ANY MISSING)
has = $(if $(strip $(foreach f,$(1),$(if $(filter $(f),$(CPU_FLAGS)),,missing))),$(3),$(2))
LLAMA_X86 := -DGGML_NATIVE=OFF \
  $(call has,avx2,,-DGGML_AVX2=OFF) $(call has,fma,,-DGGML_FMA=OFF) $(call has,f16c,,-DGGML_F16C=OFF) \
  $(call has,bmi2,,-DGGML_BMI2=OFF) \
  $(call has,avx512f avx512cd avx512vl avx512dq avx512bw,-DGGML_AVX512=ON) \
  $(call has,avx512f avx512_vnni,-DGGML_AVX512_VNNI=ON) $(call has,avx512f avx512vbmi,-DGGML_AVX512_VBMI=ON) \
  $(call has,avx512f avx512_bf16,-DGGML_AVX512_BF16=ON) $(call has,avx_vnni,-DGGML_AVX_VNNI=ON)
LLAMA_CMAKE_ARGS ?= $(strip $(if $(filter x86_64,$(shell uname -m)),$(LLAMA_X86)))
LLAMA_KEY := $(shell printf '%s %s' '$(LLAMA_VERSION)' '$(LLAMA_CMAKE_ARGS)' | sha256sum | cut -c1-12)
WHEELS ?= $(HOME)/.cache/factbot/wheels
LLAMA_WHEELS := $(WHEELS)/llama-$(LLAMA_KEY)
LLAMA_STAMP := $(VENV)/.llama-$(LLAMA_KEY)

model: setup $(LLAMA_STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt --find-links $(LLAMA_WHEELS) -e '.[$(EXTRAS),local]'
	$(BIN)/factbot models pull --no-progress --models-dir $(FACTBOT_MODEL__MODELS_DIR)

$(LLAMA_STAMP): | setup
	ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(BIN)/python -m pip wheel --quiet --disable-pip-version-check \
	    --no-deps --no-cache-dir --no-binary llama-cpp-python -w $(LLAMA_WHEELS) llama-cpp-python==$(LLAMA_VERSION)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
	  $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	touch $@

lint: setup
	$(BIN)/ruff format --check bots pipeline storage bench tests
	$(BIN)/ruff check bots pipeline storage bench tests
	$(BIN)/lint-imports

typecheck: setup
	$(BIN)/mypy

# Every test, slow ones included, on every core (pytest-xdist). --dist loadgroup keeps the tests
# marked with one xdist_group on one worker, one after another (the local model server, the
# browser); --no-loadscope-reorder keeps collection order, so the browser tests, collected last,
# are the last work of their worker (Playwright holds that worker's event loop to the end).
# --durations=25 prints where the time went; a per-test timeout is in pyproject.toml.
PYTEST_WORKERS ?= auto
pytest: setup model
	FACTBOT_MODEL__MODELS_DIR=$(FACTBOT_MODEL__MODELS_DIR) $(BIN)/pytest -n $(PYTEST_WORKERS) \
	  --dist loadgroup --no-loadscope-reorder --durations=25

# The documentation site (mkdocs-material) into site/, warnings as errors: broken links and
# anchors fail. docs/reference/ is generated from the code (`make reference`); a test fails
# when it is out of date.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

reference: setup
	$(BIN)/factbot docs generate

# The reply catalogues (pipeline/locales): extract every marked string into factbot.pot, merge
# it into each language's factbot.po (translate what is new there), compile the factbot.mo that
# are checked in. tests/pipeline/reply/test_catalogues.py fails when any of them is stale.
CATALOGUES := pipeline/locales
catalogs: setup
	$(BIN)/pybabel extract -F babel.cfg --no-default-keywords -k N_ -k gettext -k ngettext:1,2 \
	  --no-location --sort-output --omit-header -o $(CATALOGUES)/factbot.pot .
	$(BIN)/pybabel update -D factbot -i $(CATALOGUES)/factbot.pot -d $(CATALOGUES) \
	  --no-fuzzy-matching --width 100 --ignore-obsolete
	$(BIN)/pybabel compile -D factbot -d $(CATALOGUES) --statistics

test: lint typecheck docs model pytest

# The images built here (local Debian base, no registry) and both compose files run, broken
# on purpose (a worker killed, PostgreSQL and the API restarted) and torn down; needs root for
# Docker (installed and started when missing). docs/operations/deploy.md says what it checks.
deploy-test: setup
	PYTHON=$(BIN)/python sh deploy/test/run.sh

bench: setup
	$(BIN)/factbot bench index --data ../shared/data/corpus/recovery/articles.jsonl

lock: setup
	(echo "# Pinned versions that make test uses (pip install -c). Regenerate: make lock"; \
	 $(BIN)/python -m pip freeze --exclude-editable | sed 's/^torch==\([0-9.]*\)+cpu/torch==\1/') > constraints.txt

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache site
