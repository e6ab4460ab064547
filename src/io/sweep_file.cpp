#include "rollsim/io/sweep_file.hpp"

#include <cstdio>

#include "rollsim/io/hdf5.hpp"
#include "rollsim/io/result_file.hpp"

namespace rollsim {

void write_sweep_table(hid_t root, const std::string& name, const sweep::Spec& spec,
                       const std::vector<sweep::Column>& columns) {
  h5::Handle g = h5::create_group(root, name);
  h5::write_attr(g.get(), "mode", spec.mode);
  h5::write_attr(g.get(), "n_points", static_cast<long long>(spec.n_points));
  std::string keys;
  for (const auto& a : spec.axes) keys += (keys.empty() ? "" : ",") + a.key;
  h5::write_attr(g.get(), "swept_keys", keys);
  h5::write_attr(g.get(), "order", spec.mode == "zip"
                                       ? "zip: row i takes the i-th value of every swept key"
                                       : "grid: swept keys in file order, the last key varies fastest");
  for (const auto& c : columns) {
    switch (c.type) {
      case sweep::Column::Float64: h5::write_vector(g.get(), c.name, c.numbers, c.unit, c.description); break;
      case sweep::Column::Int64: h5::write_ints(g.get(), c.name, c.ints, c.description); break;
      case sweep::Column::String: h5::write_strings(g.get(), c.name, c.strings, c.description); break;
    }
  }
}

void write_point_trajectory(hid_t root, std::size_t index, const std::vector<std::string>& overrides,
                            const sweep::PointResult& r) {
  h5::Handle points = h5::exists(root, "points") ? h5::open_group(root, "points") : h5::create_group(root, "points");
  char name[32];
  std::snprintf(name, sizeof name, "%06zu", index);
  h5::Handle p = h5::create_group(points.get(), name);
  h5::write_attr(p.get(), "index", static_cast<long long>(index));
  h5::write_attr(p.get(), "status", r.status);
  std::string ov;
  for (const auto& o : overrides) ov += (ov.empty() ? "" : " ") + o;
  h5::write_attr(p.get(), "overrides", ov);
  if (!r.has_trajectory) return;
  h5::Handle t = h5::create_group(p.get(), "trajectory");
  for (std::size_t c = 0; c < r.trajectory.names.size(); ++c)
    h5::write_vector(t.get(), r.trajectory.names[c], r.trajectory.columns[c], r.trajectory.units[c],
                     c < r.trajectory.descriptions.size() ? r.trajectory.descriptions[c] : "");
  const auto& tr = r.trajectory;
  write_roles(t.get(), tr.names, tr.roles, tr.contacts, tr.ledger);
  // The point's events, with the columns and roles of a run's /events.
  h5::Handle e = h5::create_group(p.get(), "events");
  for (std::size_t c = 0; c < tr.event_names.size(); ++c)
    h5::write_vector(e.get(), tr.event_names[c], tr.event_columns[c], tr.event_units[c], tr.event_descriptions[c]);
  h5::write_strings(e.get(), "kind", tr.event_kinds, "event kind");
  write_roles(e.get(), tr.event_names, tr.event_roles, tr.event_contacts, tr.event_ledger);
  write_roles(e.get(), {"kind"}, {std::string(role_name(Role::EventKind))}, {}, {});
}

}  // namespace rollsim
