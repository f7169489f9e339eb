"""`python -m grading.bench ...` still works: the benchmark is a maintainer's tool and lives in tools/bench.py."""
from __future__ import annotations

import sys

if __name__ == "__main__":
    from tools.bench import main

    sys.exit(main())
