// rollsim sweep SCENARIO: many runs of one scenario over the values of its [sweep] section, on a thread pool
// (and, when built with ROLLSIM_MPI and launched by mpirun, over MPI ranks), into one HDF5 table.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <memory>
#include <optional>
#include <thread>

#include "common.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/io/progress.hpp"
#include "rollsim/io/sweep_file.hpp"
#include "rollsim/solve/simulate.hpp"
#include "rollsim/sweep/sweep.hpp"

#ifdef ROLLSIM_WITH_MPI
#include <mpi.h>
#endif

namespace rollsim::cli {

namespace {

struct SweepArgs {
  std::string scenario, out;
  std::vector<std::string> sets;
  int threads = -1;  ///< -1: not given (all cores)
  bool trajectories = false;
  bool quiet = false;
};

/// The MPI world, when this process was started by mpirun (and the program was built with MPI); else one rank.
class World {
 public:
  World() {
#ifdef ROLLSIM_WITH_MPI
    // Only a process started by an MPI launcher joins MPI: a plain `rollsim sweep` stays a single process.
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK")) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      active_ = true;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
      MPI_Comm_size(MPI_COMM_WORLD, &size_);
    }
#endif
  }
  ~World() {
#ifdef ROLLSIM_WITH_MPI
    if (!active_) return;
    if (std::uncaught_exceptions() > 0 && size_ > 1) MPI_Abort(MPI_COMM_WORLD, kExitInternal);
    MPI_Finalize();
#endif
  }
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

  /// Gather every rank's bytes on rank 0 (concatenated in rank order); other ranks get "".
  std::string gather(const std::string& mine) const {
#ifdef ROLLSIM_WITH_MPI
    if (active_ && size_ > 1) {
      if (mine.size() > static_cast<std::size_t>(INT32_MAX))
        throw IoError("sweep: a rank's results exceed 2 GiB; use fewer points per run or no --trajectories");
      int n = static_cast<int>(mine.size());
      std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
      MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
      std::string all;
      if (rank_ == 0) {
        long long total = 0;
        for (int r = 0; r < size_; ++r) {
          displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
          total += counts[static_cast<std::size_t>(r)];
        }
        if (total > INT32_MAX) throw IoError("sweep: the gathered results exceed 2 GiB");
        all.resize(static_cast<std::size_t>(total));
      }
      MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
      return all;
    }
#endif
    return mine;
  }
  /// Rank 0's exit code to every rank.
  int broadcast(int code) const {
#ifdef ROLLSIM_WITH_MPI
    if (active_ && size_ > 1) MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
    return code;
  }

 private:
  bool active_ = false;
  int rank_ = 0, size_ = 1;
};

/// This process's rank as told by the MPI launcher (0 when not launched by one, or without MPI support).
int launched_rank() {
#ifdef ROLLSIM_WITH_MPI
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
#endif
  return 0;
}

int default_threads(const World& w) {
  unsigned hw = std::thread::hardware_concurrency();
  if (hw == 0) hw = 1;
  int local = 1;
  if (const char* s = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) local = std::max(1, std::atoi(s));
  if (w.size() == 1) local = 1;
  return std::max(1, static_cast<int>(hw) / local);
}

constexpr int kMaxThreads = 4096;

/// The calling thread's CPU time in seconds.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int sweep_command(const SweepArgs& a) {
  // Everything that can be wrong with the input is found before any file is created (and, under mpirun, before
  // MPI starts: every rank finds the same error; only the first one prints it).
  Scenario base;
  sweep::Spec spec;
  std::string out;
  try {
    if (a.threads != -1 && (a.threads < 1 || a.threads > kMaxThreads))
      throw InputError(Origin{"--threads " + std::to_string(a.threads), 0, 0},
                       "the number of worker threads is out of range; allowed range [1, " +
                           std::to_string(kMaxThreads) + "] (leave --threads out to use every core)");
    base = load_scenario(a.scenario, a.sets);
    spec = sweep::parse_spec(base, a.sets);
    sweep::check_valid_point(base, a.sets, spec);
    out = output_path(base, a.out);
  } catch (const InputError&) {
    if (launched_rank() > 0) return kExitInput;
    throw;
  }

  World world;
  const int threads = a.threads > 0 ? a.threads : default_threads(world);
  const bool root = world.rank() == 0;
  const bool bar = root && !a.quiet && ProgressBar::enabled();

  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(world.rank()); i < spec.n_points; i += static_cast<std::size_t>(world.size()))
    mine.push_back(i);

  std::unique_ptr<ResultFile> file;
  if (root) file = std::make_unique<ResultFile>(out, provenance(base));
  // One compact row per point, written to the file a block at a time; the full results are dropped as soon as
  // they are tabulated. The time spent on it is measured: it is reported per point.
  sweep::TableBuilder table(spec);
  std::unique_ptr<SweepTableWriter> writer;
  if (root) writer = std::make_unique<SweepTableWriter>(file->root(), "sweep", spec);
  // Two measures of the rows' cost: the wall time spent taking the results from the workers, tabulating and
  // writing them, and the CPU time of this thread, which does that, wakes and waits. The wall time is taken a batch
  // of results at a time (from the first result run_points hands over to its progress call after the batch): read
  // at each row, the clock took 8 % of this thread's time on the disk's basin map.
  std::chrono::steady_clock::duration tabulating{};
  std::optional<std::chrono::steady_clock::time_point> batch_start;
  const double cpu_start = thread_cpu_seconds();
  auto tabulate = [&](std::size_t i, sweep::PointResult&& r) {
    table.add(i, std::move(r));
    if (table.block_rows() >= writer->block_rows()) {
      const std::size_t first = table.first_row();
      writer->write(table.take_block(), first);
    }
  };
  std::size_t n_ok = 0, n_input = 0, n_solver = 0, n_audit = 0, n_not_run = 0, n_other = 0;
  auto count = [&](const sweep::PointResult& r) {
    if (r.status == "ok") ++n_ok;
    else if (r.status.rfind("input_error", 0) == 0) ++n_input;
    else if (r.status == "solver_failure") ++n_solver;
    else if (r.status == "audit_failure") ++n_audit;
    else if (r.status == "not_run") ++n_not_run;
    else ++n_other;
    // A point that ran is data worth keeping: from here on a failure keeps the file, marked incomplete.
    if (file && r.status != "not_run") file->mark_data();
  };
  const auto started = ProgressBar::Clock::now();
  auto progress = [&](std::size_t done, std::size_t total) {
    if (batch_start) tabulating += std::chrono::steady_clock::now() - *batch_start;
    batch_start.reset();
    if (bar) ProgressBar::draw(total ? static_cast<double>(done) / static_cast<double>(total) : 1.0, "points", started);
  };

  if (world.size() == 1) {
    // Results arrive in index order on this thread, which alone calls HDF5.
    sweep::run_points(
        base, a.sets, spec, mine, threads, a.trajectories,
        [&](std::size_t k, sweep::PointResult&& r) {
          if (!batch_start) batch_start = std::chrono::steady_clock::now();
          const std::size_t i = mine[k];
          if (a.trajectories) {
            write_point_trajectory(file->root(), i, spec.overrides(i), r);
            r.trajectory = {};
          }
          count(r);
          tabulate(i, std::move(r));
        },
        progress, a.trajectories ? static_cast<std::size_t>(4 * threads) : 0, /*compact=*/true);
  } else {
    std::string buf;
    sweep::run_points(
        base, a.sets, spec, mine, threads, a.trajectories,
        [&](std::size_t k, sweep::PointResult&& r) { sweep::encode(mine[k], r, buf); }, progress);
    const std::string all = world.gather(buf);
    if (root) {
      std::vector<std::size_t> index;
      std::vector<sweep::PointResult> got;
      sweep::decode(all, index, got);
      if (index.size() != spec.n_points) throw IoError("sweep: rank 0 gathered " + std::to_string(index.size()) + " of " + std::to_string(spec.n_points) + " points");
      std::vector<sweep::PointResult> rows(spec.n_points);
      for (std::size_t k = 0; k < index.size(); ++k) rows.at(index[k]) = std::move(got[k]);
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (a.trajectories) write_point_trajectory(file->root(), i, spec.overrides(i), rows[i]);
        count(rows[i]);
        tabulate(i, std::move(rows[i]));
        rows[i] = {};
      }
      tabulating += std::chrono::steady_clock::now() - t0;
    }
  }
  if (bar) ProgressBar::clear();

  int code = kExitOk;
  if (root && !file->has_data()) {
    // Interrupted before any point ran: nothing to keep, and an existing file of the same name stays.
    writer.reset();
    file->discard();
    std::fprintf(stderr, "rollsim: sweep interrupted before any point ran; no result file written\n");
    code = kExitInterrupted;
  } else if (root) {
    const bool interrupted = interrupt_flag().load();
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t first = table.first_row();
    writer->write(table.finish(), first);
    writer->finish();
    writer.reset();
    tabulating += std::chrono::steady_clock::now() - t0;
    const double writer_cpu = thread_cpu_seconds() - cpu_start;
    h5::write_attr(file->root(), "n_points", static_cast<long long>(spec.n_points));
    h5::write_attr(file->root(), "n_ok", static_cast<long long>(n_ok));
    h5::write_attr(file->root(), "n_failed", static_cast<long long>(spec.n_points - n_ok - n_not_run));
    h5::write_attr(file->root(), "n_not_run", static_cast<long long>(n_not_run));
    h5::write_attr(file->root(), "threads", static_cast<long long>(threads));
    h5::write_attr(file->root(), "ranks", static_cast<long long>(world.size()));
    file->close(!interrupted, interrupted ? "interrupted" : "ok");
    if (!a.quiet) {
      std::printf("points           %zu (%s, %zu key%s), %d rank%s x %d thread%s\n", spec.n_points, spec.mode.c_str(),
                  spec.axes.size(), spec.axes.size() == 1 ? "" : "s", world.size(), world.size() == 1 ? "" : "s",
                  threads, threads == 1 ? "" : "s");
      std::printf("ok               %zu\n", n_ok);
      for (const auto& t : table.tallies()) {  // a class the points fall into (the disk's orbit type A, B)
        std::string counts;
        for (const auto& [value, n] : t.counts)
          counts += (counts.empty() ? "" : ", ") + value + " " + std::to_string(n);
        std::printf("%-16s %s\n", t.key.c_str(), counts.c_str());
      }
      if (n_input) std::printf("input_error      %zu\n", n_input);
      if (n_solver) std::printf("solver_failure   %zu\n", n_solver);
      if (n_audit) std::printf("audit_failure    %zu (the self-audit refused the run: docs/audit.md)\n", n_audit);
      if (n_other) std::printf("other failures   %zu (interrupted while running, or an internal error)\n", n_other);
      if (n_not_run) std::printf("not run          %zu (the sweep was interrupted before they started)\n", n_not_run);
      const double tab_s = std::chrono::duration<double>(tabulating).count();
      std::printf("table            %.3f s to tabulate and write (%.2f us per point)\n", tab_s,
                  spec.n_points ? tab_s * 1e6 / static_cast<double>(spec.n_points) : 0.0);
      std::printf("writer           %.3f s CPU on the thread that takes the results and writes the file (%.2f us per "
                  "point)\n",
                  writer_cpu,
                  spec.n_points ? writer_cpu * 1e6 / static_cast<double>(spec.n_points) : 0.0);
      std::printf("%s %s\n", interrupted ? "kept partial results (completed = 0) in" : "wrote", out.c_str());
    }
    if (interrupted) {
      std::fprintf(stderr, "rollsim: sweep interrupted; finished points kept in %s (completed = 0), %zu of %zu not run\n",
                   out.c_str(), n_not_run, spec.n_points);
      code = kExitInterrupted;
    }
  }
  return world.broadcast(code);
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "Run a scenario over the values of its [sweep] section into one HDF5 table");
  cmd->add_option("scenario", args->scenario, "scenario file (.toml) with a [sweep] section")->required();
  cmd->add_option("-o,--output", args->out, "result file (default: output.file, or SCENARIO.h5)");
  cmd->add_option("--set", args->sets, "override a scenario key for every point (repeatable; not a swept key)");
  cmd->add_option("--threads", args->threads, "worker threads per process, 1 to 4096 (default: all cores)");
  cmd->add_flag("--trajectories", args->trajectories, "also write every point's trajectory under /points/NNNNNN");
  cmd->add_flag("-q,--quiet", args->quiet, "print nothing on success");
  cmd->callback([args]() { throw CLI::RuntimeError(sweep_command(*args)); });
}

}  // namespace rollsim::cli
