# Two commands: `make lab` opens the course, `make test` runs every test.
# Without make (e.g. on Windows): python course.py lab / python course.py test
# `make site` builds the course's website into site/_build/html (python course.py site).
PYTHON ?= python3

.PHONY: lab test setup site
lab:
	$(PYTHON) course.py lab
test:
	$(PYTHON) course.py test
setup:
	$(PYTHON) course.py setup
site:
	$(PYTHON) course.py site
