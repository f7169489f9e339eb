# Two commands: `make lab` opens the course, `make test` runs every test.
# Without make (e.g. on Windows): python course.py lab / python course.py test
PYTHON ?= python3

.PHONY: lab test setup
lab:
	$(PYTHON) course.py lab
test:
	$(PYTHON) course.py test
setup:
	$(PYTHON) course.py setup
