"""The README's benchmark figures are one `tools/bench` run's: the text between `<!-- tools/bench --table
docs/benchmarks.json -->` and `<!-- end tools/bench --table -->` is exactly what `tools/bench --table` renders from
the committed JSON file, and that file is a whole run (every item, at least 3 repetitions) of a commit of this
history with no local changes."""

import copy
import json
import os
import subprocess
import unittest

import synth

TOOL = os.path.join(synth.TOOLS, "bench")
JSON = os.path.join(synth.REPO, "docs", "benchmarks.json")
README = os.path.join(synth.REPO, "README.md")


def load_tool():
    return synth.load_tool("rollsim_bench", TOOL)


def run_json():
    with open(JSON, encoding="utf-8") as f:
        return json.load(f)


class BenchTable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bench = load_tool()

    def test_readme_quotes_the_run(self):
        BEGIN, END = self.bench.README_BEGIN, self.bench.README_END
        with open(README, encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(text.count(BEGIN), 1, "one benchmark block in the README")
        self.assertEqual(text.count(END), 1)
        quoted = text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"
        self.assertEqual(quoted, self.bench.render_tables(run_json()),
                         "the README's benchmark block differs from `tools/bench --table docs/benchmarks.json`; "
                         "run `tools/bench --table docs/benchmarks.json --readme`")

    def test_the_run_is_whole(self):
        res = run_json()
        self.assertGreaterEqual(res["repeat"], 3)
        self.assertEqual(sorted(res["run"]["items_run"]), [str(k) for k in range(1, 9)])
        self.assertEqual(sorted(k.split("_", 1)[0] for k in res["items"]), [str(k) for k in range(1, 9)])
        self.assertIs(res["run"]["tree_modified"], False, "the run was of a tree with local changes")
        self.assertRegex(res["run"]["commit"], r"^[0-9a-f]{40}$")

    def test_the_run_is_of_this_history(self):
        commit = run_json()["run"]["commit"]
        top = subprocess.run(["git", "-C", synth.REPO, "rev-parse", "--show-toplevel"], capture_output=True, text=True)
        if top.returncode != 0 or os.path.realpath(top.stdout.strip()) != os.path.realpath(synth.REPO):
            self.skipTest("not a git checkout")
        p = subprocess.run(["git", "-C", synth.REPO, "merge-base", "--is-ancestor", commit, "HEAD"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, "the benchmark run's commit %s is not in this history" % commit)

    def test_figures_are_the_json_values(self):
        """A few cells against the values they render (a change of key or of formatting shows here)."""
        res = run_json()
        text = self.bench.render_tables(res)
        sweep = res["items"]["7_sweep_vs_peer"]["table_edge_auto"]
        cell = "| default (auto) | %s µs | %s [%s–%s] | %s [%s–%s] |" % (
            self.bench.Bench.fx(sweep["rollsim_us_1_thread"]),
            *(self.bench.Bench.fx(v) for v in [sweep["ratio_peer_over_rollsim"]] + sweep["ratio_peer_over_rollsim_spread"]),
            *(self.bench.Bench.fx(v) for v in [sweep["ratio_odeint_over_rollsim"]]
              + sweep["ratio_odeint_over_rollsim_spread"]))
        self.assertIn(cell, text)
        basin = res["items"]["4_peak_rss"]["sweep_points_1000000"]
        self.assertIn("| disk basin map, exact, 1000000 points, every core | %.1f MiB | %.1f MiB (%.0f bytes a point) "
                      "| %.1f s |" % (basin["peak_rss_kib"] / 1024, basin["file_bytes"] / 2**20,
                                      basin["file_bytes"] / 1e6, basin["wall_s"]), text)

    def test_items_left_out_are_named(self):
        res = copy.deepcopy(run_json())
        res["items"] = {"1_table_trajectory": res["items"]["1_table_trajectory"]}
        text = self.bench.render_tables(res)
        self.assertIn("Items not in this run: 2, 3, 4, 5, 6, 7, 8.", text)
        self.assertIn("%s µs" % self.bench.Bench.fx(res["items"]["1_table_trajectory"]["median_us"]), text)
        self.assertNotIn("Scaling", text)

    def test_the_command_prints_the_tables(self):
        p = subprocess.run(["/usr/bin/python3", TOOL, "--table", JSON], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, self.bench.render_tables(run_json()))


if __name__ == "__main__":
    unittest.main()
