#include "rollsim/io/growth_writer.hpp"

#include "rollsim/io/hdf5.hpp"

namespace rollsim {

void write_growth(hid_t root, const GrowthResult& g) {
  std::vector<std::string> labels, status;
  std::vector<double> eps, pr, pi, mr, mi, err, win, pred, meas, floor;
  std::vector<long long> mode;
  for (const auto& r : g.rows) {
    labels.push_back(r.label);
    status.push_back(r.status);
    mode.push_back(r.mode);
    eps.push_back(r.epsilon);
    pr.push_back(r.predicted.real());
    pi.push_back(r.predicted.imag());
    mr.push_back(r.measured.real());
    mi.push_back(r.measured.imag());
    const bool osc = r.predicted.imag() != 0;
    pred.push_back(osc ? r.predicted.imag() : r.predicted.real());
    meas.push_back(osc ? r.measured.imag() : r.measured.real());
    err.push_back(r.rel_error);
    win.push_back(r.window);
    floor.push_back(r.floor);
  }
  h5::Handle gr = h5::create_group(root, "growth");
  const hid_t id = gr.get();
  h5::write_attr(id, "passed", g.passed ? 1LL : 0LL);
  h5::write_attr(id, "floor_margin", g.floor_margin);
  h5::write_attr(id, "order_points", static_cast<long long>(g.order_points));
  h5::write_strings(id, "mode", labels, "mode (modal-table number) and kind");
  h5::write_ints(id, "mode_number", mode, "row of the modal table");
  h5::write_vector(id, "epsilon", eps, "1", "perturbation along the unit mode shape");
  h5::write_vector(id, "predicted", pred, "rad/s", "eigenvalue: growth rate (real root) or frequency (pair)");
  h5::write_vector(id, "measured", meas, "rad/s", "fitted on the nonlinear run, as `predicted`");
  h5::write_vector(id, "predicted_real", pr, "rad/s", "eigenvalue, real part");
  h5::write_vector(id, "predicted_imag", pi, "rad/s", "eigenvalue, imaginary part");
  h5::write_vector(id, "measured_real", mr, "rad/s", "fitted rate of the modal coordinate, real part");
  h5::write_vector(id, "measured_imag", mi, "rad/s", "fitted rate of the modal coordinate, imaginary part");
  h5::write_vector(id, "rel_error", err, "1", "|measured - predicted| / |predicted| (complex)");
  h5::write_vector(id, "window", win, "s", "length of the fitted window");
  h5::write_vector(id, "floor", floor, "1",
                   std::string("estimated integration-error floor of rel_error: ") + kGrowthFloorFormula);
  h5::write_strings(id, "status", status, "ok, or why the run fell short");
  std::vector<std::string> ol;
  std::vector<double> ov;
  std::vector<long long> on;
  for (const auto& o : g.orders) {
    ol.push_back(o.label);
    ov.push_back(o.order);
    on.push_back(o.points);
  }
  h5::write_strings(id, "order_mode", ol, "mode");
  h5::write_vector(id, "order", ov, "1", "observed order of the error in epsilon: the slope over the order_points smallest epsilons above the floor");
  h5::write_ints(id, "order_points", on, "rows used in the order fit (status ok, rel_error > floor_margin x floor)");
}

}  // namespace rollsim
