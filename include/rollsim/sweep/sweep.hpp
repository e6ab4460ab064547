#pragma once
/// \file Parameter sweeps: the [sweep] section of a scenario expanded into points (a full grid or zipped
/// lists), each point run like a single scenario, and the per-point results gathered into columns.
///
/// Point order: the swept keys are taken in the order they appear in the file; in grid mode the last key
/// varies fastest (row-major, like nested loops with the first key outermost). In zip mode point i takes
/// the i-th value of every key.
#include <atomic>
#include <cmath>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "rollsim/core/error.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/scenario/scenario_set.hpp"
#include "rollsim/solve/integrator.hpp"
#include "rollsim/solve/observer.hpp"

namespace rollsim::sweep {

/// One swept key and its values.
struct Axis {
  std::string key;                  ///< dotted scenario key, e.g. "initial.theta1"
  std::vector<Value> typed;         ///< each value, typed as the key takes it (an integer key's whole numbers as integers)
  std::vector<std::string> values;  ///< each value as TOML text, value_text(typed), ready for "key=value"
  std::vector<double> numbers;      ///< the values as numbers (NaN for non-numeric values)
  std::vector<std::string> labels;  ///< the values as plain text (strings without quotes), for string columns
  bool numeric = true;              ///< every value is a number
  Origin origin;                    ///< where the key is in the file
  std::string unit, description;    ///< from the model's schema
};

/// The expanded [sweep] section.
struct Spec {
  std::string mode = "grid";  ///< "grid" or "zip"
  std::vector<Axis> axes;     ///< in file order
  std::size_t n_points = 0;
  /// `summary = [...]`: the summary items the sweep writes, in this order (what only the others need is not
  /// computed); unset: every item. Each key's place in the file, for check_valid_point's message.
  std::optional<std::vector<std::string>> summary;
  std::vector<Origin> summary_origins;
  /// The value index of every axis at point i.
  std::vector<std::size_t> indices(std::size_t i) const;
  /// The value index of axis k at point i (indices(i)[k], without building the others).
  std::size_t index(std::size_t i, std::size_t k) const;
  /// The overrides "key=value" of point i, in axis order.
  std::vector<std::string> overrides(std::size_t i) const;
};

/// Largest number of points a sweep may have.
constexpr std::size_t kMaxPoints = 100000000;

/// Evenly spaced values: linear, or geometric for "log" (from, to > 0). n = 1 gives {from}. The end points are
/// exactly `from` and `to`.
std::vector<double> spaced(double from, double to, long long n, bool log);

/// Read and check the [sweep] section of `base` (re-parsing base.text for positions). `sets` are the command-line
/// overrides: a key may not be both swept and set. Throws InputError with file:line:column.
Spec parse_spec(const Scenario& base, const std::vector<std::string>& sets = {});

/// A sampled trajectory of one point (only with --trajectories).
struct Trajectory {
  std::vector<std::string> names, units, descriptions;  ///< time, states, outputs, [mode]
  std::vector<std::vector<double>> columns;
  /// The point's events: the columns of event_columns() (observer.hpp), and the kinds.
  std::vector<std::string> event_names, event_units, event_descriptions;
  /// The columns' roles as a run's file writes them (role_name of written_role, Signal::contact, Signal::ledger),
  /// parallel to names, and to event_names (empty: a point recorded without them).
  std::vector<std::string> roles, contacts, event_roles, event_contacts;
  std::vector<double> ledger, event_ledger;
  std::vector<std::vector<double>> event_columns;
  std::vector<std::string> event_kinds;
};

/// What one point produced.
struct PointResult {
  std::string status;       ///< "ok", "input_error: <message>", "solver_failure", "interrupted", "not_run", "error: ..."
  std::string termination;  ///< t_end, the terminal event, or "" when the point did not run
  std::string message;      ///< the failure message, if any
  double t_final = NAN;
  std::string time_unit;  ///< the system's time unit ("s", or "1" for a dimensionless time); "" if not built
  long long n_events = 0;
  std::vector<std::string> state_names, state_units;
  std::vector<double> x_final;
  std::vector<SummaryItem> summary;
  Trajectory trajectory;
  bool has_trajectory = false;
  /// A compact row (run_points with `compact`), made by the worker that ran the point so that the thread that
  /// tabulates it reads a few contiguous numbers: `layout` numbers this point's kind of row within its `worker` (its
  /// state names and units, and its summary items' keys and which of them are texts), from 1. The first row of a
  /// layout keeps everything in `summary`. A row whose layout is its worker's previous one has its summary's
  /// numbers in `numbers` (one per item, in order) and its texts in `texts` (one per text item), and `summary`,
  /// `state_names` and `state_units` emptied (the layout has them). layout 0: not compact.
  int worker = -1;
  std::size_t layout = 0;
  std::vector<double> numbers;
  std::vector<std::string> texts;
};

/// Point i's values as "key = value, key = value" (for messages).
std::string point_text(const Spec& spec, std::size_t i);

/// Before a sweep opens its file: a sweep none of whose points is valid input is bad input. Builds the points in
/// order until one is valid (usually the first); if none is, throws the first point's InputError, located at the
/// swept key when a swept value caused it. Invalid points among valid ones are rows with status input_error.
void check_valid_point(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec);

/// Run point i: the base text + `sets` + the point's overrides, validated by load_scenario_text, built and
/// simulated. Never throws: every failure is a status. An input error's message names the point by its values
/// ("at initial.theta1 = 0.5: ..."), not by the override that carried them.
/// With a `workspace` (one per thread) the point's integrator is rebound from an earlier point's when it can be.
PointResult run_point(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec, std::size_t i,
                      bool keep_trajectory, SolverWorkspace* workspace = nullptr);

/// One thread's memory between the points of a sweep: its integrators, and its copy of the base scenario, on
/// which each point sets its swept values anew (set_value replaces the swept entries and re-derives the derived
/// defaults; the overrides are put back to the base's) instead of copying the whole scenario per point.
struct PointWorkspace {
  SolverWorkspace* solver = nullptr;
  std::unique_ptr<Scenario> scenario;  ///< a copy of *of with an earlier point's swept values, or empty
  const Scenario* of = nullptr;        ///< the base the copy was made of, known by its address: one per sweep
  /// Each axis's values checked and converted once (prepare_value), by axis and value index, for the base `of`
  /// and the spec `spec`; a value that is bad input keeps its error, thrown again at each point that uses it. A
  /// workspace serves one sweep: its base and spec are known by their addresses.
  std::vector<std::vector<std::variant<std::monostate, PreparedValue, std::exception_ptr>>> prepared;
  const Spec* spec = nullptr;
  /// The columns of a point built from base `of` and spec `spec` were checked (build_system's ColumnCheck): with
  /// numeric axes every later point has the same keys and text values.
  const Spec* columns_checked = nullptr;
};

/// The same with a thread's PointWorkspace: the same result as without it.
PointResult run_point(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec, std::size_t i,
                      bool keep_trajectory, PointWorkspace& workspace);

/// Run the points `which` on `threads` threads (points handed out by an atomic counter; each thread keeps its
/// integrators for its next points). `sink(k, result)` is
/// called on the calling thread, in increasing k (k indexes `which`), so that output can be written by one thread;
/// `progress(done, total)` is called on the calling thread now and then. When the global interrupt flag is set, the
/// points not yet started are returned as "not_run".
/// With `window` > 0 a worker does not start point k until fewer than `window` results wait for the sink. With
/// `compact` the results are compact rows (PointResult::layout), for a TableBuilder.
void run_points(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec,
                const std::vector<std::size_t>& which, int threads, bool keep_trajectory,
                const std::function<void(std::size_t, PointResult&&)>& sink,
                const std::function<void(std::size_t, std::size_t)>& progress, std::size_t window = 0,
                bool compact = false);

/// A column's texts, stored one after another in one buffer: appending a row's text copies its bytes and allocates
/// nothing once the buffer has grown, where a std::string per row allocates for every text longer than 15 bytes
/// (the disk's symbol sequences and audits: those copies took half of TableBuilder::add's time on its basin map).
/// Reads give std::string_view, valid until the column changes.
class Texts {
 public:
  Texts() = default;
  Texts(std::initializer_list<std::string_view> values) {
    for (auto v : values) push_back(v);
  }
  explicit Texts(const std::vector<std::string>& values) {
    for (const auto& v : values) push_back(v);
  }
  void push_back(std::string_view v) {
    bytes_.append(v);
    ends_.push_back(bytes_.size());
  }
  void emplace_back() { ends_.push_back(bytes_.size()); }
  /// n copies of v in place of what the column held.
  void assign(std::size_t n, std::string_view v) {
    clear();
    for (std::size_t i = 0; i < n; ++i) push_back(v);
  }
  void clear() {
    bytes_.clear();
    ends_.clear();
  }
  /// Room for `texts` texts of `bytes` bytes in all, allocated once.
  void reserve(std::size_t texts, std::size_t bytes) {
    ends_.reserve(texts);
    bytes_.reserve(bytes);
  }
  /// The bytes of all the texts.
  std::size_t bytes() const { return bytes_.size(); }
  std::size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  std::string_view operator[](std::size_t i) const {
    const std::size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }
  std::string_view back() const { return (*this)[size() - 1]; }
  /// Iterates over the texts as string_views.
  class const_iterator {
   public:
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    const_iterator() = default;
    const_iterator(const Texts* t, std::size_t i) : t_(t), i_(i) {}
    std::string_view operator*() const { return (*t_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++i_;
      return old;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    const Texts* t_ = nullptr;
    std::size_t i_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }
  /// The texts as strings (for a test or a message; the table's writers read them in place).
  std::vector<std::string> strings() const { return {begin(), end()}; }
  friend bool operator==(const Texts& a, const Texts& b) { return a.ends_ == b.ends_ && a.bytes_ == b.bytes_; }
  friend bool operator==(const Texts& a, const std::vector<std::string>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < b.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  std::string bytes_;
  std::vector<std::size_t> ends_;  ///< where each text ends in bytes_
};

/// A column of the output table.
struct Column {
  enum Type { Float64, Int64, String } type = Float64;
  std::string name, unit, description;
  std::vector<double> numbers;
  std::vector<long long> ints;
  Texts strings;
};

/// The /sweep table: one column per swept key, status, termination, message, t_final, n_events, final_<state>,
/// and every summary item met in any point (numbers as Float64, texts as String; NaN or "" where a point has none).
/// Column order: swept keys, fixed columns, final states, summary items in order of first appearance.
std::vector<Column> build_table(const Spec& spec, const std::vector<PointResult>& rows);

/// The same table built row by row, so that a sweep keeps one compact row per point (its numbers and short
/// strings) rather than every PointResult, and only for the rows of the current block: take_block() hands them
/// over (to be written) and keeps only the columns' names, types and units. Rows must be added for i = 0, 1, 2, ...
/// in order.
class TableBuilder {
 public:
  explicit TableBuilder(const Spec& spec);
  /// Takes the row's strings from `r` (its texts are left empty).
  void add(std::size_t i, PointResult&& r);
  void add(std::size_t i, const PointResult& r) { add(i, PointResult(r)); }
  std::size_t rows() const { return rows_; }
  /// The first row of the current block (the rows added since the last take_block()).
  std::size_t first_row() const { return first_; }
  std::size_t block_rows() const { return rows_ - first_; }
  /// The current block's rows [first_row(), rows()) as columns, in table order: every column met so far, a
  /// summary item first met in an earlier block too (NaN or "" where a row has none). A column's type may change
  /// from Float64 to String between blocks (a text item first met with an empty text), never back.
  std::vector<Column> take_block();
  /// The rows not yet taken: every row when take_block() was never called.
  std::vector<Column> finish() { return take_block(); }
  /// A tallied summary item (SummaryItem::tallied): how many of the rows added so far have each of its values (a
  /// point without the item is not counted).
  struct Tally {
    std::string key;
    std::map<std::string, std::size_t> counts;
  };
  /// The tallied items, in table order.
  std::vector<Tally> tallies() const;

 private:
  struct Item {
    std::string key, unit, label;
    bool text = false;
    bool tallied = false;
    std::vector<double> numbers;
    Texts strings;
    /// A tallied item's values over every row, looked up by a row's text without a copy of it.
    std::map<std::string, std::size_t, std::less<>> counts;
    /// The count of the last value tallied (a map's entries stay where they are): neighbouring points mostly share
    /// their class.
    std::pair<const std::string, std::size_t>* last = nullptr;
    /// Counts a row's value.
    void tally(std::string_view value);
  };
  /// A worker's current layout of compact rows: the column of each summary item, which items are texts, and
  /// whether its state names are the table's.
  struct Layout {
    std::size_t serial = 0;
    std::vector<std::size_t> at;
    std::vector<char> text;
    bool states_match = false;
    /// The table's item count when `covers` was last decided; `covers`: `at` names each of those items once, so
    /// that a row of this layout fills every column exactly (no column to pad, no cell written twice).
    std::size_t items_known = 0;
    bool covers = false;
  };
  /// Pads the items a row did not report, refuses an item reported twice, and tallies the row's texts.
  void close_row(std::size_t i);
  /// The column of summary item `it` (created, NaN or "" in the block's earlier rows, where it is new; made a text
  /// column where `text` and it was a number column). `guess`: the column tried first, then the one after it.
  std::size_t column(const SummaryItem& it, bool text, std::size_t& guess);
  /// Sets the table's state names from the first point that has any.
  void take_state_names(const PointResult& r);
  const Spec& spec_;
  std::size_t rows_ = 0, first_ = 0;
  Column status_, termination_, message_, t_final_, n_events_;
  std::vector<std::string> state_names_, state_units_;
  std::vector<std::vector<double>> finals_;
  std::vector<Item> items_;
  std::map<std::string, std::size_t> index_;
  std::vector<Layout> layouts_;  ///< by worker
};

/// Serialize results (for MPI gathering); `decode` appends to `out`, with the point indices in `index`.
void encode(std::size_t index, const PointResult& r, std::string& buf);
void decode(const std::string& buf, std::vector<std::size_t>& index, std::vector<PointResult>& out);

}  // namespace rollsim::sweep
