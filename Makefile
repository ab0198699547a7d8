PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
OPEN_BROWSER ?= $(if $(or $(DISPLAY),$(WAYLAND_DISPLAY),$(filter Darwin,$(shell uname -s))),True,False)
LAB_FLAGS := --ServerApp.open_browser=$(OPEN_BROWSER) $(if $(filter 0,$(shell id -u)),--allow-root) \
	--LabApp.default_url=/lab/tree/notebooks/00_course_map.ipynb

.PHONY: lab test notebooks slides site lite benchmark clean

# The Python versions requirements.txt is locked for, from its first line: "3.10 3.13"
LOCKED := $(shell sed -n '1s/.*Python \([0-9.]*\)-\([0-9.]*\).*/\1 \2/p' requirements.txt)
define CHECK_VERSION
import sys
low, high = sys.argv[1:]
found = sys.version_info[:2]
if not tuple(map(int, low.split("."))) <= found <= tuple(map(int, high.split("."))):
    sys.exit("make: Python %d.%d is not supported by requirements.txt (%s–%s); "
             "set PYTHON=python%s" % (*found, low, high, high))
endef

$(INSTALLED): export CHECK_VERSION_PY = $(CHECK_VERSION)
$(INSTALLED): requirements.txt pyproject.toml
	@$(PYTHON) -c "$$CHECK_VERSION_PY" $(LOCKED)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --disable-pip-version-check -e . --no-deps
	touch $@

lab: $(INSTALLED)
	$(BIN)/jupyter lab $(LAB_FLAGS)

# Lint, types, tests and the stored notebooks: every step runs, and any failure fails the target.
test: $(INSTALLED)
	status=0; \
	$(BIN)/ruff check lsa_helpers tests tools benchmarks notebooks site || status=1; \
	$(BIN)/mypy || status=1; \
	$(BIN)/python -m pytest || status=1; \
	$(BIN)/python -m pytest --nbval --nbval-current-env \
		--nbval-sanitize-with notebooks/nbval_sanitize.cfg \
		--nbval-cell-timeout=120 notebooks/ || status=1; \
	exit $$status

EXECUTE := jupyter nbconvert --config=$(CURDIR)/tools/nbclient_wakeup.py --to notebook --execute --inplace \
	--ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=600 \
	--ExecutePreprocessor.record_timing=False

# Each notebook runs in its own folder; one of them: make notebooks NOTEBOOKS=notebooks/03_dimension.ipynb
NOTEBOOKS ?= $(wildcard notebooks/*.ipynb notebooks/solutions/*.ipynb notebooks/slides/*.ipynb)

notebooks: $(INSTALLED)
	$(BIN)/$(EXECUTE) $(NOTEBOOKS)
	$(BIN)/python tools/clean_notebooks.py $(NOTEBOOKS)

# Offline decks and handouts (tools/build_slides.py): build/slides/NN_name.slides.html for each deck
# notebooks/slides/NN_name.ipynb (reveal.js, MathJax, require.js, jQuery from npm, pinned by
# tools/web/package-lock.json, in build/slides/lib); build/handouts/: the cheat sheets as one-page
# PDFs (A4, Letter) and a homework sheet per lesson. Needs npm, chromium and fonts-noto-cjk. One deck:
#   make slides DECKS=notebooks/slides/02_fibers_and_identifiability.ipynb
DECKS ?=
slides: $(INSTALLED)
	$(BIN)/python tools/build_slides.py $(DECKS)

# The course as a static book (Sphinx, MyST-NB): build/site/, every page readable with no network
# (MathJax from npm, site/package-lock.json); the decks of make slides in build/site/slides. Each
# notebook's page links to it in JupyterLite (make lite LITE_DIR=build/site/lite builds it there);
# with REPOSITORY=https://github.com/... every page links to the repository.
REPOSITORY ?=
site: slides
	$(BIN)/python tools/build_site.py --repository "$(REPOSITORY)"

# The course as a static JupyterLite site (README, "Run in the browser"); LITE_DIR=build/site/lite
# puts it beside the book.
LITE_DIR ?= build/lite
lite: $(INSTALLED)
	$(BIN)/python tools/build_lite.py $(LITE_DIR)

benchmark: $(INSTALLED)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .benchmarks build *.egg-info \
		site/node_modules lite/node_modules
	find . -path ./.git -prune -o \
		\( -name __pycache__ -o -name .ipynb_checkpoints -o -name .pytest_cache \) \
		-type d -prune -exec rm -rf {} +
