#!/usr/bin/env python3
"""clients/python installs offline: `python3 -m venv --system-site-packages`
then `pip install --no-build-isolation --no-index <copy of clients/python>`
(the distribution's setuptools builds it, prometheus_client comes from the
system site packages), and the installed package imports from the venv, not
from the source tree, and works. Skips (77) when venv or pip is missing."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clienttest  # noqa: E402

clienttest.setup_paths()
clienttest.require("prometheus_client", "venv", "ensurepip")

CHECK = r"""
import sys, gpumon
print(gpumon.__file__)
print(gpumon.__version__)
mon = gpumon.TrainingMonitor(job="installed", rank=0, local_rank=0, node="n")
with mon.step(samples=1):
    pass
print(mon.registry.get_sample_value("training_steps_total",
      {"job": "installed", "rank": "0", "local_rank": "0", "node": "n"}))
print("torch" in sys.modules)
"""


class InstallTest(unittest.TestCase):
    def test_venv_install_and_import(self):
        source = os.path.join(clienttest.ARGS.source_dir, "clients", "python")
        with tempfile.TemporaryDirectory() as tmp:
            # Build from a copy: pip builds in the source folder and would
            # leave build/ and *.egg-info behind in the repository.
            copy = os.path.join(tmp, "src")
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns(
                "__pycache__", "build", "*.egg-info"))
            venv = os.path.join(tmp, "venv")
            env = {k: v for k, v in os.environ.items()
                   if k not in ("PYTHONPATH", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")}
            env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
            env["PIP_NO_INPUT"] = "1"
            made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv],
                                  capture_output=True, text=True, env=env, timeout=120)
            if made.returncode != 0:
                self.skipTest(f"python3 -m venv failed (python3-venv missing?): "
                              f"{made.stderr.strip()[-500:]}")
            python = os.path.join(venv, "bin", "python")
            if subprocess.run([python, "-m", "pip", "--version"], capture_output=True,
                              env=env, timeout=60).returncode != 0:
                self.skipTest("pip is not available in the venv (python3-pip missing?)")
            installed = subprocess.run(
                [python, "-m", "pip", "install", "--no-build-isolation", "--no-index", copy],
                capture_output=True, text=True, env=env, timeout=150, cwd=tmp)
            self.assertEqual(installed.returncode, 0,
                             f"pip install failed:\n{installed.stdout[-2000:]}\n"
                             f"{installed.stderr[-2000:]}")
            ran = subprocess.run([python, "-c", CHECK], capture_output=True, text=True,
                                 env=env, timeout=60, cwd=tmp)
            self.assertEqual(ran.returncode, 0, ran.stderr)
            path, version, steps, torch_loaded = ran.stdout.split()
            self.assertTrue(os.path.realpath(path).startswith(os.path.realpath(venv)),
                            f"imported from {path}, not from the venv")
            with open(os.path.join(source, "gpumon", "_version.py")) as f:
                self.assertIn(f'"{version}"', f.read())
            self.assertEqual(float(steps), 1.0)
            self.assertEqual(torch_loaded, "False", "import gpumon must not import torch")
            # Every module of the package was installed (gpumon.torch's too).
            want = sorted(f for f in os.listdir(os.path.join(source, "gpumon"))
                          if f.endswith(".py"))
            have = sorted(f for f in os.listdir(os.path.dirname(path)) if f.endswith(".py"))
            self.assertEqual(have, want)
            shown = subprocess.run([python, "-m", "pip", "show", "gpumon"], capture_output=True,
                                   text=True, env=env, timeout=60)
            self.assertIn("Requires: prometheus-client", shown.stdout.replace("_", "-"))


if __name__ == "__main__":
    clienttest.main()
