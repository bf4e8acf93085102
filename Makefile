# factbot: `make run` sets up and serves the API; `make test` sets up and runs every check.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.factbot-installed

.PHONY: setup run doctor model test lint typecheck pytest bench lock clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt deploy/apt-packages.txt deploy/setup-system.sh
	sh deploy/setup-system.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev,rapidocr]'
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
# llama.cpp is compiled for portable x86-64 with AVX2 (GGML_NATIVE=OFF), not for this CPU: a
# native build uses every instruction the CPU advertises, and on hosts that advertise AMX but do
# not grant it (virtual machines, sandboxes) the first answer dies with a protection fault in
# ldtilecfg. The wheel is kept under WHEELS, keyed by LLAMA_CMAKE_ARGS, because pip's own wheel
# cache ignores CMAKE_ARGS and would hand back a wheel built with other flags.
LLAMA_VERSION := 0.3.36
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF
LLAMA_KEY := $(shell printf '%s %s' '$(LLAMA_VERSION)' '$(LLAMA_CMAKE_ARGS)' | sha256sum | cut -c1-12)
WHEELS ?= $(HOME)/.cache/factbot/wheels
LLAMA_WHEELS := $(WHEELS)/llama-$(LLAMA_KEY)
LLAMA_STAMP := $(VENV)/.llama-$(LLAMA_KEY)

model: setup $(LLAMA_STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt --find-links $(LLAMA_WHEELS) -e '.[dev,rapidocr,local]'
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

pytest: setup model
	FACTBOT_MODEL__MODELS_DIR=$(FACTBOT_MODEL__MODELS_DIR) $(BIN)/pytest

test: lint typecheck model pytest

bench: setup
	$(BIN)/factbot bench index --data ../shared/data/corpus/recovery/articles.jsonl

lock: setup
	(echo "# Pinned versions that make test uses (pip install -c). Regenerate: make lock"; \
	 $(BIN)/python -m pip freeze --exclude-editable | sed 's/^torch==\([0-9.]*\)+cpu/torch==\1/') > constraints.txt

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
