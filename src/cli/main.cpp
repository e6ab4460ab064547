// The rollsim command line: a thin layer that wires the library's pieces together and maps errors to exit codes.
#include <csignal>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <cstdlib>
#include <cstdio>

#include <hdf5.h>

#include "common.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/core/lsan_suppressions.hpp"
#include "rollsim/core/version.hpp"
#include "rollsim/solve/simulate.hpp"

namespace {

void on_signal(int) { rollsim::interrupt_flag().store(true); }

}  // namespace

int main(int argc, char** argv) {
  using namespace rollsim;
  for (int i = 0; i < argc; ++i) cli::command_line() += (i ? " " : "") + shell_quote(argv[i]);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // Past a file-size limit (ulimit -f) a write fails with EFBIG instead of killing the process, so that
  // HDF5 reports the error and the run ends with exit 4 and a message.
  std::signal(SIGXFSZ, SIG_IGN);
  // HDF5 1.10 closes whatever is still open at exit; after a file whose close failed (disk full) that
  // cleanup crashes (H5SL_search from H5G close at H5_term_library). Every file is closed explicitly, by
  // its RAII handle, before main returns, so the library's own cleanup at exit is not needed.
  H5dont_atexit();
  // The LCP solver's library brings OpenBLAS when it is first loaded (src/hybrid/lcp.cpp). Its LCPs are small,
  // and a pool of BLAS threads would only compete with the sweep's own threads: one thread, unless the user
  // chose otherwise. Set now, while this is the only thread and before anything loads it.
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
#ifdef __GLIBC__
  // zlib allocates about 256 KiB to deflate each chunk that HDF5 writes and frees it after; glibc gave those pages
  // back to the system each time (the heap's top above 128 KiB is trimmed) and faulted them in again for the next
  // chunk. Kept: a sample-free run of the tipping table took 2,716 page faults and 60 ms of CPU, now 2,077 and 50 ms;
  // with samples every 1 ms 3,577 and 83 ms, now 2,520 and 65 ms (perf stat -r 10, docs/hardening.md).
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif

  CLI::App app{"rollsim: nonlinear time-domain simulation of rolling and sliding contact"};
  app.set_version_flag("--version", std::string("rollsim ") + kSoftwareVersion + " (" + kGitHash + ")");
  app.require_subcommand(1);
  cli::add_run_command(app);
  cli::add_bench_command(app);
  cli::add_linearize_command(app);
  cli::add_check_growth_command(app);
  cli::add_check_formulations_command(app);
  cli::add_sweep_command(app);
  cli::add_keys_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own exit code
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitInput;
  } catch (const InputError& e) {
    std::fprintf(stderr, "rollsim: error: %s\n", e.what());
    return kExitInput;
  } catch (const SolverError& e) {
    std::fprintf(stderr, "rollsim: solver failure: %s\n", e.what());
    return kExitSolver;
  } catch (const IoError& e) {
    std::fprintf(stderr, "rollsim: I/O error: %s\n", e.what());
    return kExitIo;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rollsim: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return 0;
}
