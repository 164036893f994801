"""Long fuzzing run of every reader a user can feed a file to: QAPLIB .dat/.sln, TSPLIB .tsp/.tour,
result JSON, TOML config and checkpoints. It runs the property-based tests of the suite
(tests/problems/test_fuzz_readers.py, tests/test_fuzz_config_checkpoint.py) with many more
examples: each reader must return the right instance (or another valid one) or raise the
user-facing error, never anything else.

    python experiments/fuzz.py [--examples 20000]

The test suite runs the same properties with 120 examples each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ["tests/problems/test_fuzz_readers.py", "tests/test_fuzz_config_checkpoint.py"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=int, default=20000, help="examples per property")
    args = ap.parse_args()
    env = dict(os.environ, METAHEUR_FUZZ_EXAMPLES=str(args.examples))
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS], cwd=ROOT,
                          env=env)
    print(f"fuzz: {args.examples} examples per property, {time.time() - t0:.0f} s, "
          f"{'no failure' if proc.returncode == 0 else 'FAILURES (see above)'}")
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
