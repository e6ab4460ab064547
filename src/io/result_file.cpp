#include "rollsim/io/result_file.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iterator>
#include <set>

#include "rollsim/core/error.hpp"
#include "rollsim/core/version.hpp"
#include "rollsim/io/chunk_writer.hpp"

namespace rollsim {

namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

ResultFile::ResultFile(const std::string& path, const Provenance& prov) : path_(path), tmp_(path + ".tmp") {
  file_ = h5::create_file(tmp_);
  try {
    write_provenance(prov);
  } catch (...) {
    discard();
    throw;
  }
}

void ResultFile::write_provenance(const Provenance& prov) {
  const hid_t r = file_.get();
  h5::write_attr(r, "format", "rollsim");
  h5::write_attr(r, "format_version", static_cast<long long>(kFormatVersion));
  h5::write_attr(r, "software_version", kSoftwareVersion);
  h5::write_attr(r, "git_hash", kGitHash);
  h5::write_attr(r, "command_line", prov.command_line);
  h5::write_attr(r, "created_utc", utc_now());
  h5::write_attr(r, "model", prov.model);
  h5::write_attr(r, "title", prov.title.empty() ? std::filesystem::path(prov.scenario_path).stem().string() : prov.title);
  h5::write_attr(r, "completed", 0LL);
  h5::write_attr(r, "status", "running");
  h5::Handle sc = h5::create_group(r, "scenario");
  h5::write_attr(sc.get(), "toml", prov.scenario_text);
  h5::write_attr(sc.get(), "resolved", prov.scenario_resolved);
  h5::write_attr(sc.get(), "path", prov.scenario_path);
}

void ResultFile::close(bool completed, const std::string& status) {
  if (closed_) return;
  closed_ = true;
  h5::write_attr(file_.get(), "completed", completed ? 1LL : 0LL);
  h5::write_attr(file_.get(), "status", status);
  h5::check(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), "flushing " + tmp_);
  file_.reset();
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) throw IoError("cannot rename " + tmp_ + " to " + path_ + ": " + ec.message());
}

void ResultFile::discard() {
  closed_ = true;
  file_.reset();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

ResultFile::~ResultFile() {
  if (closed_) return;
  // Not closed explicitly: an exception is on its way. Before any data there is nothing to keep, and an
  // existing file of the same name must survive: remove the temporary file. After, keep what was written,
  // marked incomplete.
  if (!has_data_) {
    discard();
    return;
  }
  try {
    close(false, "failed");
  } catch (...) {
    discard();
  }
}

namespace {

/// Rows per chunk of /trajectory and /scene (and rows buffered before a write): 1,024, or the samples the run would
/// write by t_end in 1,024 chunks, up to 16,384. HDF5 keeps the chunk index's nodes in memory as the datasets grow,
/// so at most about 1,024 chunks a dataset bound the memory: the table at rest (tools/longruns' command) peaked at
/// 22 MiB with 10^4 samples, 33 MiB with 10^6 and 39 MiB with 10^7.
/// A chunk is deflated whole, fill included, and a run stopped by an event before t_end deflates its last chunk's
/// fill too. The table stopped at its edge (1,821 samples of the 10,001 its t_end would give) spent 52 % of its
/// run's instructions deflating /scene and /trajectory with chunks of at least 4,096 rows, 43 % with 1,024
/// (callgrind). Smaller chunks deflate a little worse: the double pendulum's 200,001 samples take 27.2 MB instead
/// of 26.2 MB. A run that would write fewer than 1,024 samples gets chunks of the next power of two above its
/// samples and 32 more rows (its events' samples), at least 64.
std::size_t trajectory_block(const RunInfo& info) {
  constexpr double kChunks = 1024, kMin = 1024, kMax = 16384;
  const double samples = info.output_dt > 0 ? (info.t_end - info.t0) / info.output_dt + 1 : 0;
  if (!(samples > 0) || !std::isfinite(samples)) return static_cast<std::size_t>(kMin);
  if (samples < kMin)
    return std::clamp<std::size_t>(std::bit_ceil(static_cast<std::size_t>(std::ceil(samples)) + 32), 64,
                                   static_cast<std::size_t>(kMin));
  return static_cast<std::size_t>(std::clamp(std::ceil(samples / kChunks), kMin, kMax));
}

}  // namespace

void TrajectoryWriter::on_start(const RunInfo& info) {
  sys_ = info.system;
  const Signal ts = sys_->time_signal();
  std::vector<h5::Table::Column> cols{{"time", ts.unit, ts.description}};
  for (const auto& s : sys_->states()) cols.push_back({s.name, s.unit, s.description});
  for (const auto& s : sys_->outputs()) cols.push_back({s.name, s.unit, s.description});
  if (sys_->has_modes())
    cols.push_back({"mode", "1", "mode of the hybrid system",
                    sys_->largest_mode() <= 127 ? h5::ColumnType::Int8 : h5::ColumnType::Int32});
  chunks_ = std::make_unique<h5::ChunkWriter>();
  traj_ = std::make_unique<h5::Table>(file_.root(), "trajectory", cols, trajectory_block(info));
  traj_->compress_with(chunks_.get());
  if (const auto* drawn = facet<SceneSystem>(*sys_); write_scene_ && drawn && !drawn->scene().drawables.empty()) {
    scene_ = std::make_unique<SceneWriter>(file_.root(), *drawn, trajectory_block(info));
    scene_->compress_with(chunks_.get());
  }
  row_.assign(cols.size(), 0.0);
  std::vector<std::pair<Signal, bool>> roles{{Signal{"time", "", ""}.as(Role::Time), false}};
  for (const auto& s : sys_->states()) roles.emplace_back(s, true);
  for (const auto& s : sys_->outputs()) roles.emplace_back(s, false);
  if (sys_->has_modes()) roles.emplace_back(Signal{"mode", "", ""}.as(Role::Mode), false);
  write_roles(traj_->group(), roles);

  std::vector<h5::Table::Column> ev;
  roles.clear();
  for (const auto& c : event_columns(*sys_)) {
    ev.push_back({c.signal.name, c.signal.unit, c.signal.description,
                  c.integer ? h5::ColumnType::Int32 : h5::ColumnType::Float64});
    roles.emplace_back(c.signal, false);
  }
  ev.push_back({"kind", "", "event kind", h5::ColumnType::String});
  roles.emplace_back(Signal{"kind", "", ""}.as(Role::EventKind), false);
  events_ = std::make_unique<h5::Table>(file_.root(), "events", ev, 256);
  write_roles(events_->group(), roles);
}

void write_roles(hid_t group, const std::vector<std::string>& names, const std::vector<std::string>& roles,
                 const std::vector<std::string>& contacts, const std::vector<double>& ledger) {
  std::string text;
  for (std::size_t k = 0; k < names.size() && k < roles.size(); ++k) {
    h5::Handle ds(H5Dopen2(group, names[k].c_str(), H5P_DEFAULT), H5Dclose, ("opening dataset " + names[k]).c_str());
    h5::write_attr(ds.get(), "role", roles[k]);
    if (k < contacts.size() && !contacts[k].empty()) h5::write_attr(ds.get(), "contact", contacts[k]);
    const double sign = k < ledger.size() ? ledger[k] : 0.0;
    if (sign == 0) continue;
    h5::write_attr(ds.get(), "ledger", sign > 0 ? 1LL : -1LL);
    if (!text.empty()) text += ' ';
    text += sign > 0 ? '+' : '-';
    text += names[k];
  }
  if (!text.empty()) h5::write_attr(group, "energy_ledger", text);
}

void write_roles(hid_t group, const std::vector<std::pair<Signal, bool>>& columns) {
  std::vector<std::string> names, roles, contacts;
  std::vector<double> ledger;
  for (const auto& [s, state] : columns) {
    names.push_back(s.name);
    roles.emplace_back(role_name(written_role(s, state)));
    contacts.push_back(s.contact);
    ledger.push_back(s.ledger);
  }
  write_roles(group, names, roles, contacts, ledger);
}

void TrajectoryWriter::on_sample(double t, const double* x, const double* y, int mode) {
  file_.mark_data();
  std::size_t k = 0;
  row_[k++] = t;
  for (std::size_t i = 0; i < sys_->states().size(); ++i) row_[k++] = x[i];
  for (std::size_t i = 0; i < sys_->outputs().size(); ++i) row_[k++] = y[i];
  if (sys_->has_modes()) {
    row_[k++] = mode;
    note_mode(mode);
  }
  traj_->append(row_.data());
  if (scene_) scene_->append(t, x, y, mode);
}

void TrajectoryWriter::on_event(const EventRecord& ev) {
  if (sys_->has_modes()) {
    note_mode(ev.mode_before);
    note_mode(ev.mode_after);
  }
  event_row(*sys_, ev, event_row_);
  events_->append(event_row_.data(), {ev.kind});
}

void write_summary(hid_t root, const RunResult& res) {
  h5::Handle g = h5::exists(root, "summary") ? h5::open_group(root, "summary") : h5::create_group(root, "summary");
  h5::write_attr(g.get(), "termination", res.termination);
  h5::write_attr(g.get(), "t_final", res.t_final);
  h5::write_attr(g.get(), "n_samples", static_cast<long long>(res.n_samples));
  h5::write_attr(g.get(), "n_events", static_cast<long long>(res.n_events));
  if (!res.message.empty()) h5::write_attr(g.get(), "message", res.message);
  // build_system refuses duplicates among the items a system declares before its run (check_unique_columns); an
  // item a summarizer adds only at the end is checked here, before it could overwrite another.
  std::set<std::string> written(std::begin(kSummaryOwnKeys), std::end(kSummaryOwnKeys));
  for (const auto& it : res.summary)
    if (!written.insert(it.key).second)
      throw IoError("the summary would hold two items named '" + it.key + "' (\"" + it.label +
                    "\" and an earlier one): one would overwrite the other");
  for (const auto& it : res.summary) {
    if (!it.text.empty())
      h5::write_attr(g.get(), it.key, it.text);
    else if (it.is_integer)
      h5::write_attr(g.get(), it.key, static_cast<long long>(std::llround(it.number)));
    else
      h5::write_attr(g.get(), it.key, it.number);
  }
  h5::Handle s = h5::exists(root, "solver") ? h5::open_group(root, "solver") : h5::create_group(root, "solver");
  h5::write_attr(s.get(), "method", res.stats.method);
  h5::write_attr(s.get(), "rtol", res.stats.rtol);
  h5::write_attr(s.get(), "atol", res.stats.atol);
  for (const auto& [k, v] : res.stats.counts) h5::write_attr(s.get(), k, static_cast<long long>(v));
}

void TrajectoryWriter::release() {
  traj_.reset();  // the tables' destructors flush what they can and close their datasets
  events_.reset();
  scene_.reset();
}

void TrajectoryWriter::on_finish(const RunResult& res) {
  traj_->flush();
  events_->flush();
  if (scene_) scene_->flush();
  chunks_->finish();
  if (sys_->has_modes()) {
    h5::Handle ds(H5Dopen2(traj_->group(), "mode", H5P_DEFAULT), H5Dclose, "opening dataset mode");
    for (int m : modes_) h5::write_attr(ds.get(), "mode_name_" + std::to_string(m), sys_->mode_name(m));
  }
  write_summary(file_.root(), res);
}

}  // namespace rollsim
