#pragma once
/// \file A result file: written as NAME.tmp, renamed to NAME when closed. The root attribute `completed`
/// is 1 only for a run that finished; a failed or interrupted run keeps its data with completed = 0. A
/// failure before any data was written (mark_data) removes NAME.tmp and leaves an existing NAME untouched.
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rollsim/io/chunk_writer.hpp"
#include "rollsim/io/hdf5.hpp"
#include "rollsim/io/scene_writer.hpp"
#include "rollsim/solve/observer.hpp"

namespace rollsim {

struct Provenance {
  std::string command_line;
  std::string scenario_text;
  std::string scenario_resolved;
  std::string scenario_path;
  std::string model;
  std::string title;
};

class ResultFile {
 public:
  /// Creates `path`.tmp and writes the provenance. Throws IoError (and then leaves no `path`.tmp behind).
  ResultFile(const std::string& path, const Provenance& prov);
  ~ResultFile();
  ResultFile(const ResultFile&) = delete;
  ResultFile& operator=(const ResultFile&) = delete;
  hid_t root() const { return file_.get(); }
  const std::string& path() const { return path_; }
  /// Write `completed` and `status`, close, and rename NAME.tmp to NAME. Throws IoError.
  void close(bool completed, const std::string& status);
  /// Close without renaming and delete the temporary file (used when nothing useful was written).
  void discard();
  /// Data worth keeping has been written (the first sample, the first sweep point): from now on a failure
  /// keeps the file, marked incomplete. Until then the destructor discards it.
  void mark_data() { has_data_ = true; }
  bool has_data() const { return has_data_; }

 private:
  void write_provenance(const Provenance& prov);
  std::string path_, tmp_;
  h5::Handle file_;
  bool closed_ = false;
  bool has_data_ = false;
};

/// Writes /trajectory, /events, /summary and /solver of one run into a result file, and /scene when the system can
/// be drawn (SceneSystem) and `scene` is set (output.scene). An /events row holds the time, the modes before and
/// after, the state and the outputs after the event, the model's extra values and the kind.
class TrajectoryWriter final : public Observer {
 public:
  explicit TrajectoryWriter(ResultFile& file, bool scene = true) : file_(file), write_scene_(scene) {}
  void on_start(const RunInfo& info) override;
  void on_sample(double t, const double* x, const double* y, int mode) override;
  void on_event(const EventRecord& ev) override;
  void on_finish(const RunResult& res) override;
  /// Write what is buffered if possible and close every dataset (before closing a file after an error).
  void release();

 private:
  ResultFile& file_;
  const HybridSystem* sys_ = nullptr;
  bool write_scene_;
  /// Compresses the whole chunks of /trajectory and /scene on a second thread; declared first, so that it outlives
  /// the tables that give it chunks.
  std::unique_ptr<h5::ChunkWriter> chunks_;
  std::unique_ptr<h5::Table> traj_, events_;
  std::unique_ptr<SceneWriter> scene_;
  std::vector<double> row_, event_row_;
  /// The modes the run was in at a sample or an event: each gets its name (HybridSystem::mode_name) as the
  /// attribute `mode_name_M` of /trajectory/mode when the run ends, so that a reader names them as the program does.
  std::set<int> modes_;
  int last_mode_ = 0;
  void note_mode(int mode) {
    if (mode != last_mode_ || modes_.empty()) modes_.insert(last_mode_ = mode);
  }
};

/// Writes a run's summary items as attributes of /summary, and the solver statistics as attributes of /solver.
/// Throws IoError naming the item when two items (or an item and one of /summary's own attributes: termination,
/// t_final, n_samples, n_events, message) share a name: one would overwrite the other.
void write_summary(hid_t root, const RunResult& res);

/// The roles of the datasets `names` of `group`, as attributes of each: `role`, `contact` where not empty and
/// `ledger` (+1 or -1) where the column is a term of the energy ledger E + D; and, as the group's attribute
/// `energy_ledger`, the ledger the signs give, e.g. "+total_energy -input_work" (none when no column has a sign).
/// `contacts` and `ledger` are parallel to `names` and `roles`.
void write_roles(hid_t group, const std::vector<std::string>& names, const std::vector<std::string>& roles,
                 const std::vector<std::string>& contacts, const std::vector<double>& ledger);

/// The same for a table of signals, each with whether it is one of the system's states (written_role).
void write_roles(hid_t group, const std::vector<std::pair<Signal, bool>>& columns);

}  // namespace rollsim
