"""tools/python installs as the package `rollsim` into a virtual environment made from the system interpreter,
offline, and the installed copy reads a result file written by the built program.

The install command is the one docs/python.md gives:
    /usr/bin/python3 -m venv --system-site-packages ENV
    ENV/bin/pip install --no-build-isolation --no-deps tools/python
It runs on a copy of tools/python in the temporary folder, so that the build files setuptools writes next to the
sources (build/, rollsim.egg-info/) do not land in the source tree. PIP_NO_INDEX makes sure no package index is
asked. Needs python3-venv and python3-setuptools (tools/install-deps installs them).
"""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

import synth

SYSTEM_PYTHON = "/usr/bin/python3"


def project_version():
    """The version declared in CMakeLists.txt: project(rollsim VERSION x.y.z ...)."""
    with open(os.path.join(synth.REPO, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(rollsim VERSION ([0-9.]+)", f.read()).group(1)


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"needs the built program {synth.BINARY}")
class InstalledPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = cls.tmp.name
        cls.env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
        cls.env.pop("PYTHONPATH", None)
        cls.venv = os.path.join(tmp, "ENV")
        p = subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", cls.venv],
                           capture_output=True, text=True, timeout=240, env=cls.env)
        if p.returncode != 0:
            raise AssertionError(f"venv: exit {p.returncode}: {p.stderr} (python3-venv installed?)")
        src = os.path.join(tmp, "python")
        shutil.copytree(os.path.join(synth.TOOLS, "python"), src,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        cls.pip = subprocess.run([os.path.join(cls.venv, "bin", "pip"), "install", "--no-build-isolation", "--no-deps",
                                  src], capture_output=True, text=True, timeout=240, env=cls.env, cwd=tmp)
        cls.result = os.path.join(tmp, "table.h5")
        synth.rollsim("run", os.path.join(synth.REPO, "scenarios", "tipping_table.toml"), "-o", cls.result, "-q",
                      "--set", "initial.theta1=0.0125")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def venv_python(self, code):
        """Run code with the environment's interpreter from the temporary folder (not from the source tree)."""
        p = subprocess.run([os.path.join(self.venv, "bin", "python"), "-c", code], capture_output=True, text=True,
                           timeout=240, env=self.env, cwd=self.tmp.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_pip_install_offline(self):
        self.assertEqual(self.pip.returncode, 0, self.pip.stdout + self.pip.stderr)
        self.assertIn("Successfully installed rollsim-", self.pip.stdout)

    def test_loads_a_result_from_site_packages(self):
        out = self.venv_python(
            "import os, site, rollsim\n"
            "r = rollsim.load(%r)\n"
            "print(os.path.realpath(rollsim.__file__))\n"
            "print(os.path.realpath(site.getsitepackages()[0]))\n"
            "print(repr(float(r.trajectory['theta1'][0])), r.trajectory.units['theta1'], r.model)\n"
            "print(rollsim.__version__)\n" % self.result)
        module, site_packages, values, version = out.splitlines()
        # The import came from the environment's site-packages, not from the source tree.
        self.assertTrue(module.startswith(site_packages + os.sep), f"{module} not under {site_packages}")
        self.assertFalse(module.startswith(os.path.realpath(synth.REPO) + os.sep), module)
        # theta1 at t = 0 is the initial value given on the command line.
        self.assertEqual(values, "0.0125 rad tipping_table")
        self.assertEqual(version, project_version())

    def test_modules_and_console_scripts(self):
        self.venv_python("import rollsim.plot, rollsim.mat, rollsim.report, rollsim.disk_closed_form, rollsim.animate, "
                         "rollsim.scene")
        mat = os.path.join(self.tmp.name, "table.mat")
        p = subprocess.run([os.path.join(self.venv, "bin", "rollsim-h5tomat"), self.result, mat], capture_output=True,
                           text=True, timeout=240, env=self.env, cwd=self.tmp.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        import scipy.io
        m = scipy.io.loadmat(mat, simplify_cells=True)
        self.assertEqual(float(m["trajectory"]["theta1"].ravel()[0]), 0.0125)


class SourceVersion(unittest.TestCase):
    def test_package_version_is_the_project_version(self):
        import rollsim
        self.assertEqual(rollsim.__version__, project_version())


if __name__ == "__main__":
    unittest.main()
