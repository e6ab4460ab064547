// Unilateral contacts with impacts and Coulomb friction in user models (model = "lagrangian", [contacts.NAME] with
// a gap): the bouncing ball, the rimless wheel, the Painleve rod and a block on a spring with friction, each
// against its closed form. The scenarios' header comments derive the closed forms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include "contact_support.hpp"

namespace rollsim {

namespace {

using test::events_of;
using test::extra;
using test::number_text;
using test::scenario_text;
using test::SignalLookup;

}  // namespace

TEST_CASE("contacts: the bouncing ball's impact times, apexes, capture and energy follow the closed form") {
  // The values of the test, given to the run (so each is declared here once).
  const double m = 1.3, g = 9.81, e = 0.8, h = 1.0, vc = 1e-6;
  const double t0 = std::sqrt(2 * h / g), v1 = g * t0, t_inf = t0 * (1 + e) / (1 - e);
  // The capture is the first impact whose rebound e v_n (v_n = v1 e^(n-1) the approach speed) is below vc.
  int n_capture = 1;
  while (e * v1 * std::pow(e, n_capture - 1) >= vc) ++n_capture;
  REQUIRE(n_capture == 69);  // the bound below is tested on a long accumulation
  auto t_impact = [&](int n) { return t0 * (1 + 2 * e * (1 - std::pow(e, n - 1)) / (1 - e)); };

  // An apex is where der(y) falls through 0.
  const std::string text = scenario_text("bouncing_ball.toml") +
                           "\n[events.apex]\nwhen = \"der(y)\"\ndirection = \"falling\"\n";
  const test::Run r = test::run_text(
      text, {"parameters.m=" + number_text(m), "parameters.g=" + number_text(g), "parameters.e=" + number_text(e),
             "initial.y=" + number_text(h), "nonsmooth.capture_velocity=" + number_text(vc), "simulation.t_end=6",
             "solver.rtol=1e-12", "solver.atol=1e-14"});
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  CHECK(r.result.t_final == doctest::Approx(6.0).epsilon(1e-15));
  const SignalLookup s(r.scenario);

  // Impacts 1 .. n_capture - 1 are `impact` events at t_n (1e-9 relative); then one `capture`.
  const auto impacts = events_of(r, "impact");
  const auto captures = events_of(r, "capture");
  REQUIRE(impacts.size() == static_cast<std::size_t>(n_capture - 1));
  REQUIRE(captures.size() == 1);
  // Two errors bound what the run can resolve. The event search places an instant to about 1e-12 s (SUNDIALS'
  // root tolerance is 100 epsilon (|t| + |h|)), which knows the approach speed g t to g 1e-12 m/s. And the
  // height is integrated to atol = 1e-14 m: a flight of speed v_n ends up to about atol / v_n early or late, an
  // error that becomes large in the last flights (v_n near 1e-6 m/s), and adds up over them. So the closed form
  // is checked tightly while the bounce is tall (its height e^2n h above 1e-6 m: the first 30 impacts), and
  // every impact is checked against Newton's law locally, with the measured speed after it; the time of the
  // capture against t_inf with the summed flight errors.
  const double dt_resolution = 1e-12, atol_y = 1e-14;
  double flight_errors = 0;  // the sum over the flights before the capture of 2 atol / v_n (both ends)
  for (int n = 1; n < n_capture; ++n) {
    const EventRecord& ev = *impacts[static_cast<std::size_t>(n - 1)];
    INFO("impact " << n);
    const double vn = v1 * std::pow(e, n - 1);
    flight_errors += 2 * atol_y / (e * vn);
    const double v_after = s.after(ev, "der_y");
    if (std::pow(e, 2 * n) * h > 1e-6) {
      CHECK(std::abs(ev.t - t_impact(n)) <= 1e-9 * t_impact(n));
      // Newton's law against the closed form: the speed after is e v_n upwards, on the floor.
      const double speed_rel = 1e-9 + 2 * g * dt_resolution / vn;
      CHECK(std::abs(v_after - e * vn) <= speed_rel * e * vn);
    }
    CHECK(std::abs(s.after(ev, "y")) <= vn * dt_resolution + 1e-14);
    // Locally, to round-off: the speed before is v_after / e; the impulse m (v_after + v_before) and the kinetic
    // energy lost 1/2 m (v_before^2 - v_after^2).
    const double v_before = v_after / e;
    CHECK(std::abs(extra(ev, "impulse_normal_floor") - m * (v_after + v_before)) <= 1e-12 * m * v_before);
    CHECK(std::abs(extra(ev, "kinetic_energy_loss") - 0.5 * m * (v_before * v_before - v_after * v_after)) <=
          1e-12 * 0.5 * m * v_before * v_before);
  }
  const EventRecord& cap = *captures.front();
  CHECK(cap.t > impacts.back()->t);
  CHECK(std::abs(cap.t - t_impact(n_capture)) <= 1e-9 * t_impact(n_capture) + flight_errors);
  // Bound of the capture rule: vc <= v_capture < vc / e, so t_inf - t_c = 2 e v_capture/(g (1 - e)) lies in
  // [2 e vc, 2 vc]/(g (1 - e)).
  CHECK(t_inf - cap.t >= 2 * e * vc / (g * (1 - e)) - 1e-9 * t_inf - flight_errors);
  CHECK(t_inf - cap.t <= 2 * vc / (g * (1 - e)) + 1e-9 * t_inf + flight_errors);
  // A capture is plastic: all of the kinetic energy before it is lost, and the ball is at rest on the floor.
  CHECK(extra(cap, "kinetic_energy_loss") > 0);
  CHECK(extra(cap, "kinetic_energy_loss") <= 0.5 * m * (vc / e) * (vc / e));
  CHECK(std::abs(s.after(cap, "der_y")) <= 1e-12);

  // Apexes between the impacts: the one after impact n at t_n + e^n t0, at the height e^(2n) h, so each is e^2
  // times the one before. Times to 1e-9 t_inf and heights to 1e-8 while above 1e-6 m (to n = 30: there the speed
  // after the impact, resolved to g 1e-12 m/s, still gives the height to 5e-9); every apex lower than the one
  // before it. (A crossing at the release, t = 0, is not counted.)
  std::vector<const EventRecord*> apexes;
  for (const auto* ev : events_of(r, "apex"))
    if (ev->t > 0.5 * t0 && ev->t < cap.t) apexes.push_back(ev);
  REQUIRE(apexes.size() >= 30);
  for (std::size_t j = 0; j < apexes.size(); ++j) {
    const int n = static_cast<int>(j) + 1;
    INFO("apex after impact " << n);
    const double height = s.after(*apexes[j], "y"), expected = std::pow(e, 2 * n) * h;
    if (expected > 1e-6) {
      CHECK(std::abs(apexes[j]->t - (t_impact(n) + std::pow(e, n) * t0)) <= 1e-9 * t_inf);
      CHECK(std::abs(height - expected) <= 1e-8 * expected);
      if (j > 0) CHECK(std::abs(height / s.after(*apexes[j - 1], "y") - e * e) <= 2e-8);
    }
    if (j > 0) CHECK(height < s.after(*apexes[j - 1], "y"));
  }

  // Nothing happens after the capture: no impact, lift-off or further capture; the ball rests with the normal
  // force m g. Before it: the gap never closes below 0 and the floor pushes only while the gap is closed.
  for (const auto& ev : r.rec.events)
    if (ev.t > cap.t) CHECK_MESSAGE(ev.kind == "apex", "event " << ev.kind << " at t = " << ev.t << " after the capture");
  std::size_t resting = 0;
  const double E0 = m * g * h;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    const double gap = s.at(r, k, "gap_floor"), N = s.at(r, k, "normal_force_floor");
    CHECK(gap >= -(v1 * dt_resolution + 1e-14));
    CHECK(N >= 0);
    if (gap > 1e-9) CHECK(N <= 1e-12);
    // Energy: T + V plus the kinetic energy taken by the impacts is the energy of the drop, m g h.
    CHECK(std::abs(s.at(r, k, "energy") + s.at(r, k, "dissipated_impact") - E0) <= 1e-9 * E0);
    if (r.rec.t[k] > cap.t + 1e-9) {
      ++resting;
      CHECK(std::abs(s.at(r, k, "y")) <= 1e-12);
      CHECK(std::abs(s.at(r, k, "der_y")) <= 1e-12);
      CHECK(N == doctest::Approx(m * g).epsilon(1e-9));
    }
  }
  CHECK(resting >= 1900);  // 1.9 s of rest at output_dt = 1 ms
  CHECK(s.at(r, r.rec.t.size() - 1, "dissipated_impact") == doctest::Approx(E0).epsilon(1e-9));
}

namespace {

/// The rimless wheel's closed form (scenarios/rimless_wheel.toml derives it).
struct RimlessWheel {
  double M, I, l, g, gamma, w0;
  int N;
  double alpha() const { return std::numbers::pi / N; }
  double eps() const { return I / (M * l * l); }
  double c() const { return (std::cos(2 * alpha()) + eps()) / (1 + eps()); }
  double K() const { return 4 * (g / l) * std::sin(alpha()) * std::sin(gamma) / (1 + eps()); }
  double fixed_point() const { return c() * std::sqrt(K() / (1 - c() * c())); }
  /// The rate just before impact n (n = 1, 2, ...), from the stance energy.
  double rate_before(int n) const {
    if (n == 1)
      return std::sqrt(w0 * w0 + 2 * (g / l) * (std::cos(gamma) - std::cos(alpha() + gamma)) / (1 + eps()));
    const double after = rate_after(n - 1);
    return std::sqrt(after * after + K());
  }
  double rate_after(int n) const { return c() * rate_before(n); }
};

}  // namespace

TEST_CASE("contacts: the rimless wheel's post-impact rate reaches McGeer's fixed point and keeps its momentum about the landing tip") {
  const std::string text = scenario_text("rimless_wheel.toml");
  // The number of spokes is the number of contacts the scenario declares.
  int spokes = 0;
  for (std::size_t p = text.find("[contacts."); p != std::string::npos; p = text.find("[contacts.", p + 1)) ++spokes;
  REQUIRE(spokes == 8);
  const RimlessWheel w{1.0, 0.01, 1.0, 9.81, 0.1, 0.5, spokes};
  // Size: 20 s and 26 impacts in a release run; 6 s and 8 impacts in a sanitizer tree (test::sanitized), every
  // check but the fixed point's (from impact 20 on) on each of them.
  const double t_end = test::full_or_sanitized(20.0, 6.0);
  const std::size_t min_impacts = test::full_or_sanitized<std::size_t>(25, 8);
  const test::Run r = test::run_text(
      text, {"parameters.M=" + number_text(w.M), "parameters.I=" + number_text(w.I), "parameters.l=" + number_text(w.l),
             "parameters.g=" + number_text(w.g), "parameters.gamma=" + number_text(w.gamma), "parameters.mu=1",
             "initial.x=0", "initial.y=" + number_text(w.l), "initial.theta=0",
             "initial_rates.x=" + number_text(w.l * w.w0), "initial_rates.y=0",
             "initial_rates.theta=" + number_text(w.w0), "simulation.t_end=" + number_text(t_end)});
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  const SignalLookup s(r.scenario);
  const auto impacts = events_of(r, "impact");
  REQUIRE(impacts.size() >= min_impacts);
  const double a = w.alpha();
  for (std::size_t i = 0; i < impacts.size(); ++i) {
    const int n = static_cast<int>(i) + 1;
    const EventRecord& ev = *impacts[i];
    INFO("impact " << n << " at t = " << ev.t);
    const double x = s.after(ev, "x"), y = s.after(ev, "y"), th = s.after(ev, "theta");
    const double vx = s.after(ev, "der_x"), vy = s.after(ev, "der_y"), wt = s.after(ev, "der_theta");
    // The landing spoke points at -alpha from the normal: phi_k = theta + 2 k alpha = -alpha (mod 2 pi).
    const long k = ((std::lround((-a - th) / (2 * a)) % w.N) + w.N) % w.N;
    const double phi = th + 2 * a * static_cast<double>(k);
    CHECK(std::abs(std::remainder(phi + a, 2 * std::numbers::pi)) <= 1e-8);
    CHECK(std::abs(y - w.l * std::cos(phi)) <= 1e-10);  // its gap is closed
    // The rate after impact n, by the stance energy and the impact map from the start.
    CHECK(std::abs(wt - w.rate_after(n)) <= 1e-8 * w.rate_after(n));
    // Angular momentum about the landing tip (counter-clockwise; theta turns clockwise): before the impact the hub
    // moves at l theta'- normal to the old spoke, at 2 alpha to the new one; after it, from the recorded state.
    const double tip_x = x - w.l * std::sin(phi), tip_y = y - w.l * std::cos(phi);
    const double L_after = w.M * ((x - tip_x) * vy - (y - tip_y) * vx) - w.I * wt;
    const double L_before = -(w.M * w.l * w.l * std::cos(2 * a) + w.I) * w.rate_before(n);
    CHECK(std::abs(L_after - L_before) <= 1e-8 * std::abs(L_before));
    // The impulse on the landing tip is the hub's momentum change (it carries all the mass); the old tip takes
    // none. Before: velocity l theta'- (cos alpha, -sin alpha); after: l theta'+ (cos alpha, sin alpha).
    const double wb = w.rate_before(n), wa = w.rate_after(n);
    const double Pn = w.M * w.l * std::sin(a) * (wa + wb), Pt = w.M * w.l * std::cos(a) * (wa - wb);
    const std::string landing = "spoke" + std::to_string(k), old = "spoke" + std::to_string((k + 1) % w.N);
    CHECK(std::abs(extra(ev, "impulse_normal_" + landing) - Pn) <= 1e-8 * Pn);
    CHECK(std::abs(std::abs(extra(ev, "impulse_tangential_" + landing)) - std::abs(Pt)) <= 1e-8 * std::abs(Pt));
    CHECK(std::abs(extra(ev, "impulse_normal_" + old)) <= 1e-12);
    // Kinetic energy lost: (1 - c^2) of 1/2 (M l^2 + I) theta'-^2.
    const double ke_before = 0.5 * (w.M * w.l * w.l + w.I) * wb * wb;
    CHECK(std::abs(extra(ev, "kinetic_energy_loss") - (1 - w.c() * w.c()) * ke_before) <= 1e-8 * ke_before);
    // The fixed point: the error falls by c^2 = 0.51 per step; from impact 20 on it is below 1e-6.
    if (n >= 20) CHECK(std::abs(wt / w.fixed_point() - 1) <= 1e-6);
  }
  // McGeer's massless form is the limit I -> 0 of the fixed point used here (0.3 % away at I = 0.01 M l^2).
  const RimlessWheel massless{w.M, 1e-12, w.l, w.g, w.gamma, w.w0, w.N};
  CHECK(massless.fixed_point() ==
        doctest::Approx(std::sqrt(4 * (w.g / w.l) * std::sin(a) * std::sin(w.gamma)) / std::tan(2 * a)).epsilon(1e-10));
  // Sticking throughout (no slip events), and the energy with the losses conserved.
  CHECK(events_of(r, "slip").empty());
  const double E0 = s.at(r, 0, "energy");
  for (std::size_t k = 0; k < r.rec.t.size(); ++k)
    CHECK(std::abs(s.at(r, k, "energy") + s.at(r, k, "dissipated_impact") + s.at(r, k, "dissipated_friction") - E0) <=
          1e-8 * (std::abs(E0) + 1));
}

TEST_CASE("contacts: the Painleve rod (mu = 1.5 > 4/3, tan theta = 2) is refused with exit 3, naming the contact") {
  // scenarios/painleve_rod.toml: no consistent mode (theta' = 0). With l sin(theta) theta'^2 > g the same
  // configuration has two (lift off, or stay with lambda > 0); theta' = 5 rad/s gives 0.447 * 25 = 11.2 > 9.81,
  // the centre's der(y) = l cos(theta) theta' keeps the end's gap rate 0 and der(x) = -3 keeps it sliding
  // backwards (slip velocity -3 + l sin(theta) 5 = -0.76).
  const double l = 0.5, theta = std::atan(2.0), rate = 5.0;
  test::TempDir dir;
  const std::string file = rollsim::test::source_dir() + "/scenarios/painleve_rod.toml";
  for (const std::string& sets :
       {std::string(), " --set initial_rates.theta=" + number_text(rate) + " --set initial_rates.y=" +
                           number_text(l * std::cos(theta) * rate) + " --set initial_rates.x=-3"}) {
    INFO("overrides:" << sets);
    std::string out;
    const int code = test::run_binary("run " + file + " -o " + (dir.path / "rod.h5").string() + sets, out);
    CHECK(code == 3);
    CHECK_MESSAGE(out.find("lower_end") != std::string::npos, out);
  }
}

TEST_CASE("contacts: a block on a spring with a floor and Coulomb friction decays by 2 mu N/k per half period") {
  // The test of the given-normal-force form in test_user_models.cpp, with the floor as a gap: N = m g is
  // computed. m x'' + k x = -mu N sgn(x'): each half period pi/omega is a half oscillation about -+d,
  // d = mu m g/k, so the turning points are x_n = (-1)^n (A0 - 2 n d) at t_n = n pi/omega until the first
  // |x_n| <= d, where the block sticks for good. m = 1, k = 4 (omega = 2), mu g = 1 (d = 0.25), A0 = 1.9:
  // x = -1.4, 0.9, -0.4, then -0.1 at t = 2 pi.
  const double m = 1, k = 4, mu = 0.1, g = 10, A0 = 1.9;
  const std::string text = "model = \"lagrangian\"\n[parameters]\nm = " + number_text(m) + "\nk = " + number_text(k) +
                           "\nmu = " + number_text(mu) + "\ng = " + number_text(g) + R"toml(
[coordinates]
x = "m"
y = "m"
[lagrangian]
kinetic = "1/2*m*(der(x)^2 + der(y)^2)"
potential = "1/2*k*x^2 + m*g*y"
[contacts.floor]
gap = "y"
slip_velocity = "der(x)"
friction_coefficient = "mu"
[simulation]
t_end = 10
output_dt = 0.01
[initial]
)toml" + "x = " + number_text(A0) + "\n";
  const double omega = std::sqrt(k / m), d = mu * m * g / k, pi = std::numbers::pi;
  // x_n = (-1)^n (A0 - 2 n d) for n = 1, 2, ... up to the first |x_n| <= d.
  std::vector<double> turning;
  for (int n = 1; turning.empty() || std::abs(turning.back()) > d; ++n)
    turning.push_back((n % 2 == 0 ? 1.0 : -1.0) * (A0 - 2 * n * d));
  REQUIRE(turning.size() == 4);
  const double x_rest = turning.back();  // -0.1
  const test::Run r = test::run_text(text);
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  const SignalLookup s(r.scenario);
  const auto reversals = events_of(r, "reversal");
  const auto sticks = events_of(r, "stick");
  REQUIRE(reversals.size() == turning.size() - 1);
  REQUIRE(sticks.size() == 1);
  for (std::size_t n = 0; n < turning.size(); ++n) {
    const EventRecord& ev = n + 1 < turning.size() ? *reversals[n] : *sticks.front();
    INFO("turning point " << n + 1);
    CHECK(ev.t == doctest::Approx(static_cast<double>(n + 1) * pi / omega).epsilon(1e-9));
    CHECK(s.after(ev, "x") == doctest::Approx(turning[n]).epsilon(1e-8));
  }
  CHECK(events_of(r, "impact").empty());
  CHECK(events_of(r, "lift_off").empty());
  const double N = m * g;
  for (std::size_t i = 0; i < r.rec.t.size(); ++i) {
    INFO("t = " << r.rec.t[i]);
    CHECK(std::abs(s.at(r, i, "gap_floor")) <= 1e-12);
    CHECK(s.at(r, i, "normal_force_floor") == doctest::Approx(N).epsilon(1e-9));
    const double w = s.at(r, i, "slip_velocity_floor"), F = std::abs(s.at(r, i, "tangential_force_floor"));
    if (std::abs(w) > 1e-6) CHECK(F == doctest::Approx(mu * N).epsilon(1e-9));  // sliding: the full mu N
    if (r.rec.t[i] > static_cast<double>(turning.size()) * pi / omega + 1e-6) {  // after the stick
      CHECK(std::abs(w) <= 1e-12);
      CHECK(F == doctest::Approx(k * std::abs(x_rest)).epsilon(1e-8));  // sticking: the spring's pull, below mu N
    }
  }
  const std::size_t last = r.rec.t.size() - 1;
  CHECK(s.at(r, last, "x") == doctest::Approx(x_rest).epsilon(1e-8));
  CHECK(s.at(r, last, "dissipated_friction") ==
        doctest::Approx(0.5 * k * (A0 * A0 - x_rest * x_rest)).epsilon(1e-8));
}

}  // namespace rollsim

namespace rollsim {

TEST_CASE("contacts: more undecided contacts than the exact enumeration takes are refused, and the LCP decides them") {
  // A plank (x, y, angle) resting on the floor on nine feet with friction: at the start each foot may open,
  // stick or slide either way, 4^9 = 262144 combinations, above the enumeration's 4^8. With
  // nonsmooth.mode_selection = "enumerate" that is refused; by default ("auto") the LCP narrows the combinations
  // and the plank stays at rest, its feet carrying its weight (unit mass, g = 9.81) with no moment about its
  // centre. The feet's shares are not unique (nine feet on a rigid plank are statically indeterminate): the force
  // distribution rule takes the least-norm one, which with the feet placed symmetrically about the centre is an
  // equal share, g/9, on every foot (minimising sum lambda_k^2 with sum lambda_k = g, sum arm_k lambda_k = 0).
  std::string text = "model = \"lagrangian\"\n[coordinates]\nx = \"m\"\ny = \"m\"\na = \"rad\"\n"
                     "[lagrangian]\nkinetic = \"1/2*(der(x)^2 + der(y)^2) + 1/24*der(a)^2\"\npotential = \"9.81*y\"\n";
  for (int k = 0; k < 9; ++k) {
    const std::string arm = number_text(-0.4 + 0.1 * k);
    text += "[contacts.foot" + std::to_string(k) + "]\ngap = \"y + " + arm + "*sin(a)\"\nslip_velocity = \"der(x) - " +
            arm + "*sin(a)*der(a)\"\nfriction_coefficient = \"0.5\"\n";
  }
  text += "[simulation]\nt_end = 1\n";
  const Scenario sc = load_scenario_text(text, "plank.toml", {"nonsmooth.mode_selection=enumerate"});
  CHECK_THROWS_WITH_AS(build_system(sc), doctest::Contains("9 contacts are undecided at once"), SolverError);

  const test::Run r = test::run_text(text);
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  const SignalLookup s(r.scenario);
  for (std::size_t i = 0; i < r.rec.t.size(); ++i) {
    INFO("t = " << r.rec.t[i]);
    for (const char* q : {"x", "y", "a"}) CHECK(std::abs(s.at(r, i, q)) <= 1e-12);
    double force = 0, moment = 0;
    for (int k = 0; k < 9; ++k) {
      const double lambda = s.at(r, i, "normal_force_foot" + std::to_string(k));
      CHECK(lambda >= -1e-12);
      CHECK(lambda == doctest::Approx(9.81 / 9).epsilon(1e-9));
      force += lambda;
      moment += (-0.4 + 0.1 * k) * lambda;
    }
    CHECK(force == doctest::Approx(9.81).epsilon(1e-12));
    CHECK(std::abs(moment) <= 1e-12);
  }
}

}  // namespace rollsim
