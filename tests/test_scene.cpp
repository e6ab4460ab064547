// The models' scenes (docs/scene.md): each built-in model's drawables at a sample against the closed forms of its
// equations, computed here from the state, and /scene as the result file holds it, read back.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
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
  std::map<std::string, std::vector<double>> attributes;  ///< the sizes: half_extents, width
  std::map<std::string, std::vector<hsize_t>> chunks;     ///< each dataset's chunk shape
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

/// The same for the scenario text `text`.
SceneRun run_scene_text(const std::string& text, const std::string& scenario,
                        const std::vector<std::string>& overrides) {
  test::TempDir dir;
  const std::string out = (dir.path / "r.h5").string();
  const Scenario sc = load_scenario_text(text, scenario, overrides);
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
  if (sys->has_modes()) r.trajectory["mode"] = h5::read_vector(traj.get(), "mode");
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
                    h5::read_attr_string(g.get(), "role"), h5::read_attr_double(g.get(), "static") == 1, {}, {}};
    CHECK(fd.name == d.name);
    CHECK(h5::read_attr_string(g.get(), "color").size() == 7);
    for (const char* ds : {"position", "rotation", "points", "normal", "force"})
      if (h5::exists(g.get(), ds)) {
        fd.data[ds] = h5::read_vector(g.get(), ds);
        h5::Handle set(H5Dopen2(g.get(), ds, H5P_DEFAULT), H5Dclose, "H5Dopen2");
        h5::Handle dcpl(H5Dget_create_plist(set.get()), H5Pclose, "H5Dget_create_plist");
        hsize_t dims[4] = {};
        const int rank = H5Pget_chunk(dcpl.get(), 4, dims);
        REQUIRE(rank >= 1);
        fd.chunks[ds].assign(dims, dims + rank);
      }
    for (const char* at : {"half_extents", "width"})
      if (H5Aexists(g.get(), at) > 0) fd.attributes[at] = h5::read_attr_doubles(g.get(), at);
    r.drawables.push_back(std::move(fd));
  }
  return r;
}

SceneRun run_with_scene(const std::string& scenario, const std::vector<std::string>& overrides) {
  return run_scene_text(test::scenario_text(scenario), scenario, overrides);
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

TEST_CASE("scene: every sample of a run of two chunks is the model's scene there, bit for bit, a chunk per column") {
  // The table to its edge at 1 ms: its samples in chunks of 1,024 rows, the second one partial. Each sample's scene
  // computed again from the state, the outputs and the mode /trajectory holds at it must be /scene's row there, bit
  // for bit: the writer gathers a block's rows into a chunk per column (a coordinate, a rotation entry), and the
  // chunk writer reuses a constant chunk's deflated bytes.
  const std::string name = "tipping_table.toml";
  const SceneRun r = run_with_scene(name, {});
  REQUIRE(r.rows > 1024);
  REQUIRE(r.rows < 2048);
  auto sys = build_system(load_scenario_text(test::scenario_text(name), name, {}));
  const auto* drawn = facet<SceneSystem>(*sys);
  REQUIRE(drawn);
  const Scene& scene = drawn->scene();
  REQUIRE(scene.drawables.size() == r.drawables.size());
  std::vector<double> x(sys->states().size()), y(sys->outputs().size()), v(scene.size());
  std::size_t compared = 0, moving = 0;
  for (std::size_t i = 0; i < r.rows; ++i) {
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = r.trajectory.at(sys->states()[k].name)[i];
    for (std::size_t k = 0; k < y.size(); ++k) y[k] = r.trajectory.at(sys->outputs()[k].name)[i];
    // A system without modes has the mode 0 at every sample, and no column of it.
    const int mode = r.trajectory.count("mode") ? static_cast<int>(r.trajectory.at("mode")[i]) : 0;
    REQUIRE((r.trajectory.count("mode") || !sys->has_modes()));
    drawn->scene_values(r.trajectory.at("time")[i], x.data(), y.data(), mode, v.data());
    std::size_t offset = 0;
    for (std::size_t d = 0; d < scene.drawables.size(); ++d) {
      const Drawable& dr = scene.drawables[d];
      const FileDrawable& fd = r.drawables[d];
      std::vector<std::pair<std::string, std::size_t>> sets;
      if (has_pose(dr.kind)) sets = {{"position", 3}, {"rotation", 9}};
      else {
        sets = {{"points", 3 * dr.points}};
        if (dr.force) sets.push_back({"force", 3});
      }
      for (const auto& entry : sets) {
        // Named, not a structured binding: clang does not let CAPTURE's lambda take one.
        const std::string& set = entry.first;
        const std::size_t width = entry.second;
        CAPTURE(fd.name);
        CAPTURE(set);
        const std::vector<double>& file = fd.data.at(set);
        if (fd.fixed) {
          REQUIRE(file.size() == width);
        } else {
          REQUIRE(file.size() == width * r.rows);
          for (std::size_t j = 0; j < width; ++j) {
            const double a = file[i * width + j], b = v[offset + j];
            if (!(std::memcmp(&a, &b, sizeof a) == 0)) {
              CAPTURE(i);
              CAPTURE(j);
              CHECK(a == b);
            }
            ++compared;
          }
          if (i == 0) {
            ++moving;
            const std::vector<hsize_t>& chunk = fd.chunks.at(set);
            CHECK(chunk.front() == 1024);
            for (std::size_t k = 1; k < chunk.size(); ++k) CHECK(chunk[k] == 1);
          }
        }
        offset += width;
      }
    }
    REQUIRE(offset == v.size());
  }
  CHECK(moving == 6);  // the table's and the wheel's position and rotation, the contact's point and force
  CHECK(compared == 30 * r.rows);
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

namespace {

/// The rolling coin's pose at the run's last sample from the scenario's expressions: the centre
/// [x + a sin(theta) sin(psi), y - a sin(theta) cos(psi), z + a cos(theta)] and R = R_Z(psi) R_X(theta) R_Y(phi),
/// row-major.
void coin_pose(const SceneRun& r, double* centre, double* R) {
  const double a = 0.05, x = r.last("x"), y = r.last("y"), z = r.last("z"), psi = r.last("psi"), th = r.last("theta"),
               phi = r.last("phi");
  centre[0] = x + a * std::sin(th) * std::sin(psi);
  centre[1] = y - a * std::sin(th) * std::cos(psi);
  centre[2] = z + a * std::cos(th);
  const double cz = std::cos(psi), sz = std::sin(psi), cx = std::cos(th), sx = std::sin(th), cy = std::cos(phi), sy = std::sin(phi);
  const double Rz[9] = {cz, -sz, 0, sz, cz, 0, 0, 0, 1}, Rx[9] = {1, 0, 0, 0, cx, -sx, 0, sx, cx},
               Ry[9] = {cy, 0, sy, 0, 1, 0, -sy, 0, cy};
  auto mul = [](const double* A, const double* B, double* C) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  };
  double RzRx[9];
  mul(Rz, Rx, RzRx);
  mul(RzRx, Ry, R);
}

/// The world point centre + R local.
std::array<double, 3> body_point(const double* centre, const double* R, const std::array<double, 3>& local) {
  std::array<double, 3> w{};
  for (int i = 0; i < 3; ++i) w[i] = centre[i] + R[3 * i] * local[0] + R[3 * i + 1] * local[1] + R[3 * i + 2] * local[2];
  return w;
}

void check_world_point(const SceneRun& r, const std::string& name, const std::string& what, std::size_t k,
                       const std::array<double, 3>& p) {
  CAPTURE(name);
  CAPTURE(k);
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(r.at_end(name, what, 3 * k + i) == doctest::Approx(p[i]).epsilon(1e-12).scale(1));
}

void check_sizes(const FileDrawable& d, const std::string& attribute, const std::vector<double>& expected) {
  CAPTURE(d.name);
  REQUIRE(d.attributes.count(attribute));
  const std::vector<double>& v = d.attributes.at(attribute);
  REQUIRE(v.size() == expected.size());
  for (std::size_t i = 0; i < v.size(); ++i) CHECK(v[i] == doctest::Approx(expected[i]).epsilon(1e-15));
}

}  // namespace

TEST_CASE("scene: a user model's 3-D body drawn as its contact shape at the scenario's own pose (the rolling coin)") {
  const SceneRun r = run_with_scene("rolling_coin.toml", kShort);
  check_file(r, 3);
  CHECK(r.drawable("ground").kind == "plane");
  CHECK(r.drawable("ground").fixed);
  const FileDrawable& coin = r.drawable("coin");
  CHECK(coin.kind == "disk");
  double centre[3], R[9];
  coin_pose(r, centre, R);
  for (std::size_t i = 0; i < 3; ++i) CHECK(r.at_end("coin", "position", i) == doctest::Approx(centre[i]).epsilon(1e-12));
  // The drawn disk's local z is the body's y axis; its marked radius (local x) the body's x axis.
  for (int i = 0; i < 3; ++i) {
    CHECK(r.at_end("coin", "rotation", 3 * i + 2) == doctest::Approx(R[3 * i + 1]).scale(1).epsilon(1e-12));
    CHECK(r.at_end("coin", "rotation", 3 * i) == doctest::Approx(R[3 * i]).scale(1).epsilon(1e-12));
  }
  // The extent: the plane's square and the coin's rim above it.
  CHECK(r.extent[5] >= centre[2]);
}

TEST_CASE("scene: a 3-D body's drawn box and rod fixed in its axes at its pose, and a changed rod recompiled") {
  // The rolling coin with a box and a rod in its body axes; the scene at the last sample against the coin's pose from
  // the scenario's expressions.
  const std::string shapes = R"(name = "coin"
draw = [{ box = { half_extents = ["a", "a/2", "0.01"], centre = ["a", "0", "-a/4"] } },
        { rod = { from = ["0", "0", "0"], to = ["0", "2*a", "a"], radius = "a/10" } }]
)";
  const std::string text = test::replace_once(test::scenario_text("rolling_coin.toml"), "name = \"coin\"\n", shapes);
  const SceneRun r = run_scene_text(text, "coin.toml", kShort);
  check_file(r, 3);
  CHECK(r.drawable("coin").kind == "disk");
  const double a = 0.05;
  double centre[3], R[9];
  coin_pose(r, centre, R);
  const FileDrawable& box = r.drawable("coin_1");
  CHECK(box.kind == "box");
  CHECK(box.role == "body");
  check_sizes(box, "half_extents", {a, a / 2, 0.01});
  check_world_point(r, "coin_1", "position", 0, body_point(centre, R, {a, 0, -a / 4}));
  for (std::size_t j = 0; j < 9; ++j) CHECK(r.at_end("coin_1", "rotation", j) == doctest::Approx(R[j]).scale(1).epsilon(1e-12));
  const FileDrawable& rod = r.drawable("coin_2");
  CHECK(rod.kind == "line");
  check_sizes(rod, "width", {2 * a / 10});
  check_world_point(r, "coin_2", "points", 0, {centre[0], centre[1], centre[2]});
  check_world_point(r, "coin_2", "points", 1, body_point(centre, R, {0, 2 * a, a}));
  // The same model with the rod's end changed: its kernels (keyed by the model's text) are compiled again.
  const SceneRun turned = run_scene_text(test::replace_once(text, R"(to = ["0", "2*a", "a"])", R"(to = ["0", "-2*a", "a"])"),
                                         "coin.toml", kShort);
  coin_pose(turned, centre, R);
  check_world_point(turned, "coin_2", "points", 1, body_point(centre, R, {0, -2 * a, a}));
}

TEST_CASE("scene: a planar body's drawn box and rod (the Chaplygin sleigh's body and blade)") {
  const SceneRun r = run_with_scene("chaplygin_sleigh.toml", kShort);
  check_file(r, 2);
  // The blade P = (x, y) and the heading theta: the blade is a rod 16 cm long centred at P along the heading, the body
  // a box 50 cm by 24 cm whose rear edge is over P (its centre 25 cm ahead of P), turned by theta.
  const double x = r.last("x"), y = r.last("y"), th = r.last("theta"), c = std::cos(th), s = std::sin(th);
  const FileDrawable& body = r.drawable("sleigh_1");
  CHECK(body.kind == "box");
  check_sizes(body, "half_extents", {0.25, 0.12, 0.12});
  check_point(r, "sleigh_1", "position", 0, x + 0.25 * c, y + 0.25 * s);
  check_planar_rotation(r, "sleigh_1", th);
  CHECK(r.drawable("sleigh_2").kind == "line");
  check_point(r, "sleigh_2", "points", 0, x - 0.08 * c, y - 0.08 * s);
  check_point(r, "sleigh_2", "points", 1, x + 0.08 * c, y + 0.08 * s);
}

TEST_CASE("scene: the bicycle's frames as rods between the wheel centres, the head and the steer axis") {
  const Scenario sc = load_scenario_text(test::scenario_text("bicycle_meijaard.toml"), "bicycle.toml", {});
  auto sys = build_system(sc);
  const auto* drawn = facet<SceneSystem>(*sys);
  REQUIRE(drawn);
  const Scene& scene = drawn->scene();
  std::vector<double> x(sys->states().size()), y(sys->outputs().size()), v(scene.size());
  sys->initial_state(x.data());
  sys->compute_outputs(0, x.data(), 0, y.data());
  drawn->scene_values(0, x.data(), y.data(), 0, v.data());
  std::map<std::string, std::vector<double>> values;  // each drawable's
  std::map<std::string, const Drawable*> by_name;
  std::size_t at = 0;
  for (const Drawable& d : scene.drawables) {
    values[d.name].assign(v.begin() + at, v.begin() + at + d.size());
    by_name[d.name] = &d;
    at += d.size();
  }
  for (const char* rod : {"rear_frame_1", "rear_frame_2", "front_frame_1", "front_frame_2"}) {
    CAPTURE(rod);
    REQUIRE(by_name.count(rod));
    CHECK(by_name[rod]->kind == DrawKind::Line);
    CHECK(by_name[rod]->points == 2);
    CHECK(by_name[rod]->width > 0);
  }
  // The start is the benchmark's reference configuration: the rear contact at the origin, upright, straight ahead.
  // Its points from the paper's geometry (z up): the rear hub (0, 0, rR), the front hub (w, 0, rF), the steer axis
  // through (w + c, 0, 0) tilted back by lam; the head where it is at the front frame's height -zH, the crown where
  // the front hub's perpendicular meets it.
  const double w = 1.02, c = 0.08, lam = 0.3141592653589793, rR = 0.3, rF = 0.35, zH = -0.7;
  const double along = c * std::sin(lam) + rF * std::cos(lam);  // from (w + c, 0, 0) up the axis to the crown
  const std::array<double, 3> rear_hub{0, 0, rR}, front_hub{w, 0, rF}, head{w + c + zH * std::tan(lam), 0, -zH},
      crown{w + c - along * std::sin(lam), 0, along * std::cos(lam)};
  auto check_at = [&](const std::string& name, std::size_t k, const std::array<double, 3>& p) {
    CAPTURE(name);
    CAPTURE(k);
    for (std::size_t i = 0; i < 3; ++i) CHECK(values[name][3 * k + i] == doctest::Approx(p[i]).scale(1).epsilon(1e-12));
  };
  check_at("rear_frame_1", 0, rear_hub);
  check_at("rear_frame_1", 1, head);
  check_at("rear_frame_2", 0, rear_hub);
  check_at("rear_frame_2", 1, {0.3, 0, 0.9});  // the rear frame's centre of mass (xB, -zB)
  check_at("front_frame_1", 0, front_hub);
  check_at("front_frame_1", 1, crown);
  check_at("front_frame_2", 0, crown);
  check_at("front_frame_2", 1, head);
  // The wheels' drawn centres are the hubs.
  check_at("rear_wheel", 0, rear_hub);
  check_at("front_wheel", 0, front_hub);
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

TEST_CASE("scene: bad drawn shapes of a body (bodies.N.draw) stop the run with file:line:column, exit 2 and no file") {
  // Sizes and points fixed in the body, a shape each.
  using test::replace_once;
  const std::string body = R"(model = "lagrangian"
[parameters]
m = 1.0
g = 9.81
a = 0.1
[coordinates]
z = "m"
[[bodies]]
name = "block"
mass = "m"
inertia = ["0.01", "0.01", "0.01"]
position = ["0", "0", "z"]
draw = { box = { half_extents = ["a", "a", "a/2"] } }
[initial]
z = 1.0
[simulation]
t_end = 0.1
output_dt = 0.01
)";
  const std::string box = R"(["a", "a", "a/2"])";
  const std::string rod = R"(rod = { from = ["0", "0", "0"], to = ["a", "0", "0"], radius = "-a" })";
  const std::vector<test::BadInputCase> shape_cases{
      {"shape: a size of the coordinates", replace_once(body, box, R"(["a", "z", "a/2"])"), "",
       "s.toml:13:33: bodies.0.draw.box.half_extents[1] = \"z\" is not a number of the parameters; allowed range (0, inf)"},
      {"shape: two half extents", replace_once(body, box, R"(["a", "a"])"), "",
       "s.toml:13:33: bodies.0.draw.box.half_extents has 2 values; allowed: 3, [x, y, z] in the body's axes"},
      {"shape: a zero half extent", replace_once(body, box, R"(["a", "0", "a/2"])"), "",
       "s.toml:13:33: bodies.0.draw.box.half_extents[1] = \"0\" is 0; allowed range (0, inf)"},
      {"shape: a negative rod radius", replace_once(body, R"(box = { half_extents = ["a", "a", "a/2"] })", rod), "",
       "s.toml:13:73: bodies.0.draw.rod.radius = -a is -0.1; allowed range (0, inf)"},
      {"shape: a rod without its radius", replace_once(body, R"(box = { half_extents = ["a", "a", "a/2"] })",
                                                       R"(rod = { from = ["0", "0", "0"], to = ["a", "0", "0"] })"), "",
       "s.toml:13:25: the rod bodies.0.draw needs its ends from and to, [x, y, z] in the body's axes, and its radius"},
      {"shape: unknown", replace_once(body, R"(box = { half_extents = ["a", "a", "a/2"] })", R"(cone = { radius = "a" })"), "",
       "s.toml:13:17: unknown key 'bodies.0.draw.cone'; allowed under bodies.0.draw: box, rod"},
      {"shape: a box and a rod in one entry", replace_once(body, " } }\n", " }, " + rod + " }\n"), "",
       "bodies.0.draw gives a box and a rod; allowed: one shape each"},
  };
  for (const auto& c : shape_cases) {
    CAPTURE(c.name);
    test::check_bad_input(c);
  }
}

TEST_CASE("scene: every model's scene_values writes each of its values (the writer's block is not initialised)") {
  // The writer's buffer (io/scene_writer.hpp) holds whatever the last block left: a value scene_values skipped
  // would be written stale. Each built-in model's scenes, and a user model's (planar and 3-D), from a buffer of
  // sentinels at the start and again at a later state.
  for (const char* name : {"tipping_table.toml", "tipping_table_contact.toml", "tipping_table_dae.toml",
                           "double_pendulum.toml", "carriage_pendulum.toml", "carriage_pendulum_linear.toml",
                           "disk_type_a.toml", "disk_type_b.toml", "relay_feedback.toml", "user_tipping_table.toml",
                           "bicycle_meijaard.toml"}) {
    CAPTURE(name);
    const Scenario sc = load_scenario_text(test::scenario_text(name), name, {});
    auto sys = build_system(sc);
    const auto* drawn = facet<SceneSystem>(*sys);
    REQUIRE(drawn);
    const std::size_t size = drawn->scene().size();
    REQUIRE(size > 0);
    std::vector<double> x(sys->states().size()), y(sys->outputs().size());
    sys->initial_state(x.data());
    for (int pass = 0; pass < 2; ++pass) {
      CAPTURE(pass);
      if (pass == 1)
        for (double& xi : x) xi = xi * 0.9 + 0.01;  // another state near the start
      const int mode = sys->initial_mode(x.data());
      sys->compute_outputs(0, x.data(), mode, y.data());
      constexpr double kSentinel = -1.2345e300;
      std::vector<double> v(size, kSentinel);
      drawn->scene_values(0, x.data(), y.data(), mode, v.data());
      std::size_t unwritten = 0;
      for (double value : v) unwritten += value == kSentinel;
      CHECK(unwritten == 0);
    }
  }
}
