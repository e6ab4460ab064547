#!/usr/bin/env bash
# consumer_test.sh CMAKE BUILD_DIR SOURCE_DIR CC CXX BUILD_TYPE (run by ctest, see consumer.cmake)
# Installs BUILD_DIR into a scratch prefix, builds examples/consumer against it in a fresh build directory,
# runs it on scenarios/tipping_table.toml and checks the printed edge time against an independent reference,
# tools/peer_scipy.py (scipy's DOP853 on the benchmark's Lagrange equations, rtol 1e-10 like the scenario), to
# 1e-7 s; and that the figure the README quotes is still this time, to the digits quoted (a documentation
# check: the README's figure is rollsim's own result rounded, not a published one).
set -euo pipefail
cmake="$1" build="$2" src="$3" cc="$4" cxx="$5" build_type="${6:-Release}"
tmp="$(mktemp -d /tmp/rollsim-consumer-XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "consumer_test: FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "install"; }
for f in bin/rollsim include/rollsim/core/version.hpp include/rollsim/solve/simulate.hpp; do
  [ -e "$tmp/prefix/$f" ] || fail "the install tree has no $f"
done
[ -z "$(find "$tmp/prefix/include" -name '*.in')" ] || fail "a header template was installed"
# The package files sit in <libdir>/cmake/rollsim (libdir: lib, or lib/<multiarch> under /usr).
config_dir="$(dirname "$(find "$tmp/prefix" -path '*/cmake/rollsim/rollsimConfig.cmake' | head -n 1)")"
for f in rollsimConfig.cmake rollsimConfigVersion.cmake rollsimTargets.cmake; do
  [ -e "$config_dir/$f" ] || fail "the install tree has no cmake/rollsim/$f"
done
# MPI belongs to the command-line tool: nothing of it in the library's exported interface.
if grep -il "mpi" "$config_dir"/rollsimTargets*.cmake; then
  fail "the exported rollsim::core mentions MPI"
fi

"$cmake" -S "$src/examples/consumer" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE="$build_type" >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; fail "configuring examples/consumer against the install tree"; }
grep -q "rollsim_DIR:PATH=$tmp/prefix/" "$tmp/build/CMakeCache.txt" || fail "find_package(rollsim) did not use the install tree"
"$cmake" --build "$tmp/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "building examples/consumer"; }

out="$("$tmp/build/rollsim_consumer" "$src/scenarios/tipping_table.toml")" || fail "rollsim_consumer exited $?"
echo "$out"
t_edge="$(sed -n 's/^table_edge t = \([0-9.eE+-]*\) s$/\1/p' <<<"$out")"
[ -n "$t_edge" ] || fail "no edge time in the output"

# The README's figure ("... edge (t = 1.8202 s)", rollsim's result rounded) is still right to its digits.
quoted="$(grep -o 'edge (t = [0-9.]* s)' "$src/README.md" | head -n 1 | sed 's/.*= \([0-9.]*\) s)/\1/')"
[ -n "$quoted" ] || fail "the README quotes no edge time"
peer="$(/usr/bin/python3 "$src/tools/peer_scipy.py" table --theta1 0.01 --rtol 1e-10 --atol 1e-12)" || fail "peer_scipy.py"
/usr/bin/python3 - "$t_edge" "$quoted" "$peer" <<'PY'
import json, sys
t, quoted, peer = float(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
half_unit = 0.5 * 10.0 ** -len(quoted.split(".")[1])
ok = True
for name, ref, tol in (("scipy DOP853 peer", peer["t_edge"], 1e-7), ("README figure (documentation)", float(quoted), half_unit)):
    good = abs(t - ref) <= tol
    ok &= good
    print("consumer_test: edge time %.12f s, %s %.12f s, |diff| %.2e, tolerance %.1e: %s"
          % (t, name, ref, abs(t - ref), tol, "ok" if good else "FAIL"))
sys.exit(0 if ok else 1)
PY
