"""The key tables of scenarios/README.md and docs/*.md agree with the declarations: each table between a
`<!-- rollsim keys ... -->` line and `<!-- end rollsim keys -->` is exactly what that command prints (key, type,
unit, default, allowed values, meaning), and every model's [parameters] and [initial] keys are in some table."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

import synth

TOOL = os.path.join(synth.TOOLS, "key-tables")


def load_tool():
    return synth.load_tool("key_tables", TOOL)


def models():
    out = synth.rollsim("keys").stdout
    return [line.split()[0] for line in out.splitlines()[1:] if line.strip()]


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"needs the built program {synth.BINARY}")
class KeyTables(unittest.TestCase):
    def test_tables_match_the_program(self):
        env = dict(os.environ, ROLLSIM_BINARY=synth.BINARY)
        p = subprocess.run([TOOL, "--check"], capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_every_declared_key_is_documented(self):
        tool = load_tool()
        documented = set()
        for path in tool.documents():
            lines, found = tool.blocks(path)
            for begin, end, _ in found:
                documented.update(re.findall(r"^\| `([^`]+)` \|", "\n".join(lines[begin + 1:end]), re.M))
        names = models()
        builtin = {"tipping_table", "carriage_pendulum", "rolling_disk", "relay_feedback", "double_pendulum"}
        self.assertTrue(builtin <= set(names), names)
        # The user model's parameters and initial values are named by the scenario itself: its keys are
        # documented in docs/user-models.md, not generated.
        for model in [m for m in names if m != "lagrangian"]:
            table = synth.rollsim("keys", model, "--markdown", "--section", "parameters", "--section", "initial").stdout
            keys = re.findall(r"^\| `([^`]+)` \|", table, re.M)
            self.assertTrue(keys, model)
            for key in keys:
                with self.subTest(model=model, key=key):
                    self.assertIn(key, documented)

    @unittest.skipIf(os.environ.get("ROLLSIM_SANITIZED"),
                     "about tools/key-tables' own logic (143 runs of the program, 150 s under ASan): the release "
                     "suite runs it, and test_tables_match_the_program runs every table's command under ASan")
    def test_check_sees_a_changed_cell_and_regeneration_restores_it(self):
        """A wrong default, unit, range or description in a table fails the check; a rewrite fixes it."""
        with tempfile.TemporaryDirectory() as tmp:
            for d in ("scenarios", "docs"):
                os.makedirs(os.path.join(tmp, d))
            readme = os.path.join(tmp, "scenarios", "README.md")
            shutil.copy(os.path.join(synth.REPO, "scenarios", "README.md"), readme)
            tool = load_tool()
            tool.ROOT = tmp
            os.environ["ROLLSIM_BINARY"] = synth.BINARY
            self.assertEqual(tool.main(["key-tables", "--check"]), 0)
            with open(readme, encoding="utf-8") as f:
                good = f.read()
            row = "| `parameters.wheel_mass` | number | kg | 1 | (0, inf) | wheel mass m_w |"
            self.assertIn(row, good)
            for wrong in (row.replace("| 1 |", "| 2 |"), row.replace("| kg |", "| g |"),
                          row.replace("(0, inf)", "[0, inf)"), row.replace("wheel mass", "wheel weight"),
                          row.replace("parameters.wheel_mass", "parameters.wheel_mas"), ""):
                with self.subTest(wrong=wrong):
                    with open(readme, "w", encoding="utf-8") as f:
                        f.write(good.replace(row + "\n", wrong + "\n" if wrong else ""))
                    self.assertEqual(tool.main(["key-tables", "--check"]), 1)
                    self.assertEqual(tool.main(["key-tables"]), 0)
                    with open(readme, encoding="utf-8") as f:
                        self.assertEqual(f.read(), good)


if __name__ == "__main__":
    unittest.main()
