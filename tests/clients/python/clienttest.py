"""Shared runner for the Python client's tests (standard library only).

Each test_*.py here is a unittest program run by ctest as
    python3 test_x.py --gpumon PATH/TO/gpumon --source-dir REPO_ROOT
It exits 0 when its tests pass, 77 when it must skip (prometheus_client
missing, or every test skipped), 1 on failure. The package is imported from
REPO_ROOT/clients/python; tests/integration/harness.py is importable for
starting gpumon.
"""

import argparse
import os
import sys
import unittest

SKIP = 77
ARGS = argparse.Namespace(gpumon=None, source_dir=None)


def setup_paths(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpumon", help="path to the gpumon binary")
    parser.add_argument("--source-dir", help="repository root",
                        default=os.path.abspath(os.path.join(os.path.dirname(__file__),
                                                             "..", "..", "..")))
    args, rest = parser.parse_known_args(argv)
    ARGS.gpumon = args.gpumon
    ARGS.source_dir = args.source_dir
    client = os.path.join(args.source_dir, "clients", "python")
    integration = os.path.join(args.source_dir, "tests", "integration")
    for path in (integration, client):
        if path not in sys.path:
            sys.path.insert(0, path)
    return rest


def require(*modules):
    """Exits with the skip code when a module cannot be imported."""
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            name = os.path.basename(sys.argv[0])
            print(f"SKIP {name}: {sys.executable} cannot import {module}")
            sys.exit(SKIP)


def main():
    rest = setup_paths()
    name = os.path.basename(sys.argv[0])
    program = unittest.main(module="__main__", argv=[sys.argv[0], "-v"] + rest, exit=False)
    result = program.result
    if not result.wasSuccessful():
        print(f"FAIL {name}")
        sys.exit(1)
    if result.testsRun and len(result.skipped) == result.testsRun:
        print(f"SKIP {name}: every test skipped")
        sys.exit(SKIP)
    print(f"PASS {name}")
    sys.exit(0)


def gpumon_binary():
    """The gpumon binary from --gpumon, or None when absent / not executable."""
    path = ARGS.gpumon
    if path and os.access(path, os.X_OK):
        return path
    return None
