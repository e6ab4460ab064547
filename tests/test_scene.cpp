// The models' scenes (docs/scene.md): each built-in model's drawables at a sample against the closed forms of its
// equations, computed here from the state, and /scene as the result file holds it, read back.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/hybrid/scene.hpp"
#include "rollsim/io/hdf5.hpp"
#include "rollsim/io/result_file.hpp"
#include "bad_input_cases.hpp"
#include "support.hpp"

using namespace rollsim;

namespace {

/// One drawable as the file holds it: its attributes and its datasets, flat by rows.
struct FileDrawable {
  std::string name, kind, role;
  bool fixed = false;
  std::map<std::string, std::vector<double>> data;
};

/// A run of the shipped scenario `name` written to a result file, and what its /scene and /trajectory hold.
struct SceneRun {
  std::size_t rows = 0;  ///< /trajectory's
  int dimension = 0;
  std::vector<double> extent;
  std::vector<FileDrawable> drawables;
  std::map<std::string, std::vector<double>> trajectory;

  const FileDrawable& drawable(const std::string& n) const {
    for (const auto& d : drawables)
      if (d.name == n) return d;
    FAIL("no drawable " << n);
    return drawables.front();
  }
  /// Element j of the dataset `what` of drawable `n` at the last sample (a static one's only row).
  double at_end(const std::string& n, const std::string& what, std::size_t j) const {
    const FileDrawable& d = drawable(n);
    const std::vector<double>& v = d.data.at(what);
    const std::size_t width = v.size() / (d.fixed ? 1 : rows);
    return v[v.size() - width + j];
  }
  double last(const std::string& signal) const { return trajectory.at(signal).back(); }
};

SceneRun run_with_scene(const std::string& scenario, const std::vector<std::string>& overrides) {
  test::TempDir dir;
  const std::string out = (dir.path / "r.h5").string();
  const Scenario sc = load_scenario_text(test::scenario_text(scenario), scenario, overrides);
  auto sys = build_system(sc);
  {
    ResultFile file(out, Provenance{});
    TrajectoryWriter writer(file);
    const RunResult res = simulate(*sys, simulation_options(sc), {&writer});
    file.close(res.completed(), res.status);
  }
  SceneRun r;
  h5::Handle f = h5::open_file_readonly(out);
  h5::Handle traj = h5::open_group(f.get(), "trajectory");
  r.trajectory["time"] = h5::read_vector(traj.get(), "time");
  for (const auto& s : sys->states()) r.trajectory[s.name] = h5::read_vector(traj.get(), s.name);
  for (const auto& s : sys->outputs()) r.trajectory[s.name] = h5::read_vector(traj.get(), s.name);
  r.rows = r.trajectory["time"].size();
  h5::Handle scene = h5::open_group(f.get(), "scene");
  CHECK(h5::read_attr_double(scene.get(), "format") == 1);
  CHECK(h5::read_attr_string(scene.get(), "length_unit") == "m");
  r.dimension = static_cast<int>(h5::read_attr_double(scene.get(), "dimension"));
  r.extent = h5::read_attr_doubles(scene.get(), "extent");
  const auto* drawn = facet<SceneSystem>(*sys);
  REQUIRE(drawn);
  std::size_t index = 0;
  for (const Drawable& d : drawn->scene().drawables) {
    char prefix[8];
    std::snprintf(prefix, sizeof prefix, "%02d_", static_cast<int>(index++));
    h5::Handle g = h5::open_group(scene.get(), prefix + d.name);
    FileDrawable fd{h5::read_attr_string(g.get(), "name"), h5::read_attr_string(g.get(), "kind"),
                    h5::read_attr_string(g.get(), "role"), h5::read_attr_double(g.get(), "static") == 1, {}};
    CHECK(fd.name == d.name);
    CHECK(h5::read_attr_string(g.get(), "color").size() == 7);
    for (const char* ds : {"position", "rotation", "points", "normal", "force"})
      if (h5::exists(g.get(), ds)) fd.data[ds] = h5::read_vector(g.get(), ds);
    r.drawables.push_back(std::move(fd));
  }
  return r;
}

/// Every drawable has a row per sample (one when static), and the extent encloses every point and centre.
void check_file(const SceneRun& r, int dimension) {
  REQUIRE(r.rows > 1);
  CHECK(r.dimension == dimension);
  REQUIRE(r.extent.size() == 6);
  for (const auto& d : r.drawables) {
    CAPTURE(d.name);
    const char* where = d.data.count("position") ? "position" : "points";
    REQUIRE(d.data.count(where));
    const std::vector<double>& v = d.data.at(where);
    const std::size_t rows = d.fixed ? 1 : r.rows;
    REQUIRE(v.size() % (3 * rows) == 0);
    for (const auto& [name, values] : d.data) CHECK(values.size() % rows == 0);
    for (std::size_t k = 0; k + 2 < v.size(); k += 3)
      for (int a = 0; a < 3; ++a)
        if (std::isfinite(v[k + a])) {
          CHECK(v[k + a] >= r.extent[2 * a] - 1e-12);
          CHECK(v[k + a] <= r.extent[2 * a + 1] + 1e-12);
        }
  }
  if (dimension == 2) CHECK((r.extent[4] == 0 && r.extent[5] == 0));
}

/// The rotation by `angle` about z, row-major, against the drawable's last row.
void check_planar_rotation(const SceneRun& r, const std::string& name, double angle) {
  const double c = std::cos(angle), s = std::sin(angle), R[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
  for (std::size_t j = 0; j < 9; ++j) CHECK(r.at_end(name, "rotation", j) == doctest::Approx(R[j]).epsilon(1e-12));
}

void check_point(const SceneRun& r, const std::string& name, const std::string& what, std::size_t k, double x, double y) {
  CAPTURE(name);
  CHECK(r.at_end(name, what, 3 * k) == doctest::Approx(x).epsilon(1e-12).scale(1));
  CHECK(r.at_end(name, what, 3 * k + 1) == doctest::Approx(y).epsilon(1e-12).scale(1));
  CHECK(r.at_end(name, what, 3 * k + 2) == 0);
}

const std::vector<std::string> kShort = {"simulation.t_end=0.05", "simulation.output_dt=0.01"};

/// The table's closed forms (docs/equations.md §1): the wheel rolls at s = r (theta1 - theta2) along e1, its centre at
/// s e1 + r e2, the contact force T_c e1 + N e2.
void check_rolling_table(const SceneRun& r) {
  const double r_w = 0.25, th1 = r.last("theta1"), th2 = r.last("theta2"), s = r_w * (th1 - th2);
  const double c = std::cos(th1), sn = std::sin(th1);
  check_point(r, "wheel", "position", 0, s * c - r_w * sn, s * sn + r_w * c);
  check_planar_rotation(r, "wheel", th2);
  check_planar_rotation(r, "table", th1);
  check_point(r, "contact_table", "points", 0, s * c, s * sn);
  const double n = r.last("normal_force"), t = r.last("tangential_force");
  check_point(r, "contact_table", "force", 0, t * c - n * sn, t * sn + n * c);
  CHECK(r.drawable("hinge").fixed);
  CHECK(r.drawable("hinge").role == "ground");
}

}  // namespace

TEST_CASE("scene: the tipping table's wheel, table and contact from theta1 and theta2") {
  const SceneRun r = run_with_scene("tipping_table.toml", kShort);
  check_file(r, 2);
  check_rolling_table(r);
  // The table top's upper face passes through the hinge: its centre lies half its thickness below, along -e2.
  const double th1 = r.last("theta1");
  const FileDrawable& table = r.drawable("table");
  CHECK(table.kind == "box");
  CHECK(table.role == "body");
  const double ty = r.at_end("table", "position", 1), tx = r.at_end("table", "position", 0);
  CHECK(tx * std::cos(th1) + ty * std::sin(th1) == doctest::Approx(0).scale(1));
  CHECK(-tx * std::sin(th1) + ty * std::cos(th1) < 0);
}

TEST_CASE("scene: the tipping table's DAE draws its wheel at its own coordinates wheel_x, wheel_y") {
  const SceneRun r = run_with_scene("tipping_table_dae.toml", kShort);
  check_file(r, 2);
  check_rolling_table(r);  // the constraints hold to the tolerance
  check_point(r, "wheel", "position", 0, r.last("wheel_x"), r.last("wheel_y"));
}

TEST_CASE("scene: the tipping table with contact draws the wheel at s e1 + d e2 and the contact below it") {
  // Dropped from 2 cm, the wheel is still in the air at 0.05 s: no contact point, no force.
  const SceneRun falling = run_with_scene("tipping_table_contact.toml", kShort);
  check_file(falling, 2);
  CHECK(std::isnan(falling.at_end("contact_table", "points", 0)));
  CHECK(std::isnan(falling.at_end("contact_table", "force", 1)));
  std::vector<std::string> set = kShort;
  set.push_back("initial.height=0");
  const SceneRun r = run_with_scene("tipping_table_contact.toml", set);
  check_file(r, 2);
  const double th1 = r.last("theta1"), s = r.last("s"), d = r.last("d"), c = std::cos(th1), sn = std::sin(th1);
  check_point(r, "wheel", "position", 0, s * c - d * sn, s * sn + d * c);
  check_planar_rotation(r, "wheel", r.last("theta2"));
  // On the top face: the contact point (s, d - r) in the table's frame, the force T e1 + N e2.
  REQUIRE(std::abs(s) < 0.5);
  REQUIRE(d > 0);
  const double dc = d - 0.25, n = r.last("normal_force_table"), t = r.last("tangential_force_table");
  check_point(r, "contact_table", "points", 0, s * c - dc * sn, s * sn + dc * c);
  check_point(r, "contact_table", "force", 0, t * c - n * sn, t * sn + n * c);
}

TEST_CASE("scene: the double pendulum's masses at l1 (sin theta1, -cos theta1) and that plus l2 (sin theta2, -cos theta2)") {
  const SceneRun r = run_with_scene("double_pendulum.toml", kShort);
  check_file(r, 2);
  const double l1 = 1.0, l2 = 1.0, t1 = r.last("theta1"), t2 = r.last("theta2");
  const double x1 = l1 * std::sin(t1), y1 = -l1 * std::cos(t1), x2 = x1 + l2 * std::sin(t2), y2 = y1 - l2 * std::cos(t2);
  check_point(r, "mass1", "points", 0, x1, y1);
  check_point(r, "mass2", "points", 0, x2, y2);
  check_point(r, "links", "points", 0, 0, 0);
  check_point(r, "links", "points", 1, x1, y1);
  check_point(r, "links", "points", 2, x2, y2);
  CHECK(r.drawable("path2").kind == "trail");
}

TEST_CASE("scene: the carriage pendulum's carriage at x and ball at (bob_x, bob_y), and at x + l sin phi in minimal form") {
  for (const char* formulation : {"dae", "ode"}) {
    CAPTURE(formulation);
    std::vector<std::string> set = kShort;
    set.push_back(std::string("formulation=") + formulation);
    const SceneRun r = run_with_scene("carriage_pendulum.toml", set);
    check_file(r, 2);
    const double l = 1.0, x = r.last("x"), phi = r.last("phi");
    check_point(r, "carriage", "position", 0, x, 0);
    check_point(r, "rod", "points", 0, x, 0);
    if (std::string(formulation) == "dae")
      check_point(r, "ball", "points", 0, r.last("bob_x"), r.last("bob_y"));
    else
      check_point(r, "ball", "points", 0, x + l * std::sin(phi), -l * std::cos(phi));
  }
}

TEST_CASE("scene: the rolling disk's centre at (u, r) over its contact, the friction force along u") {
  const SceneRun r = run_with_scene("disk_physical.toml", kShort);
  check_file(r, 2);
  const double u = r.last("u"), rd = r.at_end("disk", "position", 1);  // the centre's height: the drawn radius
  CHECK(rd > 0);
  check_point(r, "disk", "position", 0, u, rd);
  check_point(r, "contact_ground", "points", 0, u, 0);
  CHECK(r.at_end("contact_ground", "force", 0) == doctest::Approx(r.last("friction_force")));
}

TEST_CASE("scene: the relay feedback system's mass at C x, pushed by u") {
  const SceneRun r = run_with_scene("relay_feedback.toml", kShort);
  check_file(r, 2);
  const double h = r.last("x1");  // C = (1, 0, 0)
  check_point(r, "mass", "position", 0, h, 0);
  check_point(r, "relay", "points", 0, h, 0);
  CHECK(r.at_end("relay", "points", 3) - h == doctest::Approx(0.1 * r.last("u")));  // L = |C x(0)| = 0.1
}

TEST_CASE("scene: output.scene = false writes no /scene") {
  test::TempDir dir;
  const std::string out = (dir.path / "r.h5").string();
  std::vector<std::string> set = kShort;
  set.push_back("output.scene=false");
  const Scenario sc = load_scenario_text(test::scenario_text("double_pendulum.toml"), "d.toml", set);
  auto sys = build_system(sc);
  {
    ResultFile file(out, Provenance{});
    TrajectoryWriter writer(file, output_options(sc).scene);
    const RunResult res = simulate(*sys, simulation_options(sc), {&writer});
    file.close(res.completed(), res.status);
  }
  h5::Handle f = h5::open_file_readonly(out);
  CHECK(h5::exists(f.get(), "trajectory"));
  CHECK_FALSE(h5::exists(f.get(), "scene"));
}

TEST_CASE("scene: a user model's 3-D body drawn as its contact shape at the scenario's own pose (the rolling coin)") {
  const SceneRun r = run_with_scene("rolling_coin.toml", kShort);
  check_file(r, 3);
  CHECK(r.drawable("ground").kind == "plane");
  CHECK(r.drawable("ground").fixed);
  const FileDrawable& coin = r.drawable("coin");
  CHECK(coin.kind == "disk");
  // The scenario's expressions: the centre [x + a sin(theta) sin(psi), y - a sin(theta) cos(psi), z + a cos(theta)]
  // and R = R_Z(psi) R_X(theta) R_Y(phi), the disk's axis the body's y.
  const double a = 0.05, x = r.last("x"), y = r.last("y"), z = r.last("z"), psi = r.last("psi"), th = r.last("theta"),
               phi = r.last("phi");
  const double centre[3] = {x + a * std::sin(th) * std::sin(psi), y - a * std::sin(th) * std::cos(psi), z + a * std::cos(th)};
  for (std::size_t i = 0; i < 3; ++i) CHECK(r.at_end("coin", "position", i) == doctest::Approx(centre[i]).epsilon(1e-12));
  const double cz = std::cos(psi), sz = std::sin(psi), cx = std::cos(th), sx = std::sin(th), cy = std::cos(phi), sy = std::sin(phi);
  const double Rz[9] = {cz, -sz, 0, sz, cz, 0, 0, 0, 1}, Rx[9] = {1, 0, 0, 0, cx, -sx, 0, sx, cx},
               Ry[9] = {cy, 0, sy, 0, 1, 0, -sy, 0, cy};
  auto mul = [](const double* A, const double* B, double* C) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  };
  double RzRx[9], R[9];
  mul(Rz, Rx, RzRx);
  mul(RzRx, Ry, R);
  // The drawn disk's local z is the body's y axis; its marked radius (local x) the body's x axis.
  for (int i = 0; i < 3; ++i) {
    CHECK(r.at_end("coin", "rotation", 3 * i + 2) == doctest::Approx(R[3 * i + 1]).scale(1).epsilon(1e-12));
    CHECK(r.at_end("coin", "rotation", 3 * i) == doctest::Approx(R[3 * i]).scale(1).epsilon(1e-12));
  }
  // The extent: the plane's square and the coin's rim above it.
  CHECK(r.extent[5] >= centre[2]);
}

TEST_CASE("scene: a planar user model's [[draw]] entries at the expressions' values (the tipping table in the scenario)") {
  const SceneRun r = run_with_scene("user_tipping_table.toml", kShort);
  check_file(r, 2);
  const double rw = 0.25, l = 1.0, t1 = r.last("theta1"), t2 = r.last("theta2"), s = rw * (t1 - t2);
  const double cx = s * std::cos(t1) - rw * std::sin(t1), cy = s * std::sin(t1) + rw * std::cos(t1);
  CHECK(r.drawable("wheel").kind == "circle");
  CHECK(r.drawable("wheel").role == "draw");
  check_point(r, "wheel", "points", 0, cx, cy);
  check_point(r, "spoke", "points", 1, cx + rw * std::cos(t2), cy + rw * std::sin(t2));
  check_point(r, "table", "points", 0, -l / 2 * std::cos(t1), -l / 2 * std::sin(t1));
}

TEST_CASE("scene: bad [[draw]] entries stop the run with file:line:column, exit 2 and no file") {
  const std::string base = R"(model = "lagrangian"
[parameters]
m = 1.0
g = 9.81
[coordinates]
y = "m"
[lagrangian]
kinetic = "1/2*m*der(y)^2"
potential = "m*g*y"
[initial]
y = 1.0
[simulation]
t_end = 0.1
output_dt = 0.01

[[draw]]
name = "ball"
kind = "point"
points = [["0", "y"]]
)";
  using test::replace_once;
  const std::vector<test::BadInputCase> cases{
      {"unknown symbol", replace_once(base, R"(["0", "y"])", R"(["0", "h"])"), "",
       "s.toml:19:18: draw.0.points[1] = \"h\": unknown name 'h'"},
      {"coordinates", replace_once(base, R"(["0", "y"])", R"(["0", "y", "0"])"), "",
       "s.toml:19:10: draw.0.points: point 1 has 3 coordinates; allowed: 2, [x, y] in a planar scene"},
      {"kind", replace_once(base, R"(kind = "point")", R"(kind = "arrow")"), "",
       "s.toml:18:8: draw.0.kind = \"arrow\" is not allowed; allowed values one of \"line\", \"polygon\", \"circle\""},
      {"colour", replace_once(base, R"(kind = "point")", "kind = \"point\"\ncolor = \"red\""), "",
       "s.toml:19:9: draw.0.color = \"red\"; allowed: #rrggbb"},
      {"count", replace_once(base, R"(kind = "point")", R"(kind = "line")"), "",
       "s.toml:19:10: draw.0.points has 1 points; a line takes 2 or more"},
      {"radius", replace_once(base, R"(kind = "point")", "kind = \"point\"\nradius = \"-1\""), "",
       "s.toml:19:10: draw.0.radius = -1 is -1; allowed range (0, inf)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    test::check_bad_input(c);
  }
}
