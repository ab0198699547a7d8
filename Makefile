PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
OPEN_BROWSER ?= $(if $(or $(DISPLAY),$(WAYLAND_DISPLAY),$(filter Darwin,$(shell uname -s))),True,False)
LAB_FLAGS := --ServerApp.open_browser=$(OPEN_BROWSER) $(if $(filter 0,$(shell id -u)),--allow-root) \
	--LabApp.default_url=/lab/tree/notebooks/00_course_map.ipynb

.PHONY: lab test notebooks benchmark clean

$(INSTALLED): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --disable-pip-version-check -e . --no-deps
	touch $@

lab: $(INSTALLED)
	$(BIN)/jupyter lab $(LAB_FLAGS)

test: $(INSTALLED)
	status=0; \
	$(BIN)/python -m pytest || status=1; \
	$(BIN)/python -m pytest --nbval --nbval-current-env \
		--nbval-sanitize-with notebooks/nbval_sanitize.cfg \
		--nbval-cell-timeout=120 notebooks/ || status=1; \
	exit $$status

EXECUTE := jupyter nbconvert --to notebook --execute --inplace \
	--ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=600 \
	--ExecutePreprocessor.record_timing=False

notebooks: $(INSTALLED)
	cd notebooks && ../$(BIN)/$(EXECUTE) *.ipynb
	cd notebooks/solutions && ../../$(BIN)/$(EXECUTE) *.ipynb
	$(BIN)/python tools/clean_notebooks.py notebooks/*.ipynb notebooks/solutions/*.ipynb

benchmark: $(INSTALLED)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) .pytest_cache .benchmarks build *.egg-info
	find . -path ./.git -prune -o \
		\( -name __pycache__ -o -name .ipynb_checkpoints -o -name .pytest_cache \) \
		-type d -prune -exec rm -rf {} +
