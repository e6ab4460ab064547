"""docs/python.md works as written: its ```sh block makes the example files with the built program, then its
```python blocks run in order in one namespace, from a folder that has the repository's tools/ and scenarios/.
Also: the documentation cites no file outside the repository, and every docs/equations.md section cited exists."""

import contextlib
import io
import os
import re
import shlex
import subprocess
import tempfile
import unittest

import synth

DOC = os.path.join(synth.REPO, "docs", "python.md")
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(path, lang):
    with open(path, encoding="utf-8") as f:
        return [body for tag, body in BLOCK.findall(f.read()) if tag == lang]


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"needs the built program {synth.BINARY}")
class DocsPythonExamples(unittest.TestCase):
    def test_blocks_run(self):
        sh = blocks(DOC, "sh")
        py = blocks(DOC, "python")
        self.assertEqual(len(sh), 1, "one sh block makes the example files")
        self.assertGreaterEqual(len(py), 5)
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("tools", "scenarios"):
                os.symlink(os.path.join(synth.REPO, name), os.path.join(tmp, name))
            for line in sh[0].splitlines():
                args = shlex.split(line)
                if not args:
                    continue
                if args[0] == "build/rollsim":
                    args[0] = synth.BINARY
                p = subprocess.run(args, cwd=tmp, capture_output=True, text=True, timeout=600)
                self.assertEqual(p.returncode, 0, f"{line}: {p.stderr}")
            namespace = {"__name__": "docs_python"}
            old = os.getcwd()
            os.chdir(tmp)
            try:
                for i, code in enumerate(py, 1):
                    with self.subTest(block=i), contextlib.redirect_stdout(io.StringIO()) as out:
                        exec(compile(code, f"docs/python.md python block {i}", "exec"), namespace)
                    self.assertNotIn("Traceback", out.getvalue())
            finally:
                os.chdir(old)
            # The values the comments promise.
            r = namespace["r"]
            self.assertEqual(r.resolved["parameters.wheel_radius"], "0.25")
            self.assertEqual(namespace["keys"], ["initial.theta1", "parameters.wheel_inertia"])
            self.assertEqual(namespace["t_edge"].shape, (12, 4))


class DocsCiteOnlyTheRepository(unittest.TestCase):
    TREES = ("docs", "scenarios", "src", "include", "tools", "tests", "fuzz", "README.md", "CMakeLists.txt")
    OUTSIDE = re.compile(r"PHYSICS\.md|DESIGN\.md|\.\./shared|/work/shared")

    def files(self):
        for tree in self.TREES:
            top = os.path.join(synth.REPO, tree)
            if os.path.isfile(top):
                yield top
            for root, _, names in os.walk(top):
                for n in names:
                    yield os.path.join(root, n)

    def test_no_outside_citations_and_sections_exist(self):
        with open(os.path.join(synth.REPO, "docs", "equations.md"), encoding="utf-8") as f:
            sections = set(re.findall(r"^## (\d+)\. ", f.read(), re.M))
        self.assertEqual(sections, {"1", "2", "3", "4", "5"})
        me = os.path.abspath(__file__)
        cited = 0
        for path in self.files():
            if os.path.abspath(path) == me:
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
            rel = os.path.relpath(path, synth.REPO)
            self.assertIsNone(self.OUTSIDE.search(text), f"{rel} cites a file outside the repository")
            for m in re.finditer(r"equations\.md §(\d+)(?:-(\d+))?", text):
                cited += 1
                for n in filter(None, m.groups()):
                    self.assertIn(n, sections, f"{rel}: {m.group(0)}")
        self.assertGreater(cited, 5)


if __name__ == "__main__":
    unittest.main()
