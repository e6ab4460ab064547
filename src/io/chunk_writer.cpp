#include "rollsim/io/chunk_writer.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "rollsim/core/error.hpp"
#include "rollsim/io/hdf5.hpp"

namespace rollsim::h5 {

void shuffle_bytes(const unsigned char* in, std::size_t n, std::size_t elem, unsigned char* out) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t b = 0; b < elem; ++b) out[b * n + i] = in[i * elem + b];
}

/// One chunk: its place, its values, and once compressed its bytes as HDF5's filters make them.
struct ChunkWriter::Job {
  enum class State { Queued, Running, Done };
  hid_t ds = -1;
  std::size_t first = 0, rows = 0;
  std::string name;
  std::vector<double> values;
  std::vector<unsigned char> packed;
  std::string error;  ///< zlib's complaint, if compressing failed
  State state = State::Queued;
};

/// A deflate stream at level 1 (what compress2 makes, as HDF5's deflate filter calls it), reset for each chunk,
/// and the shuffled bytes' scratch.
struct ChunkWriter::Stream {
  z_stream z{};
  bool ready = false;
  std::vector<unsigned char> shuffled;

  Stream() { ready = deflateInit(&z, 1) == Z_OK; }
  ~Stream() {
    if (ready) deflateEnd(&z);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// HDF5's pipeline for the chunk: shuffle, then deflate into a buffer of compressBound bytes (the filter's own:
  /// a chunk that grows is stored grown, as HDF5 stores it).
  void compress(Job& job) {
    const std::size_t n = job.values.size(), bytes = n * sizeof(double);
    shuffled.resize(bytes);
    shuffle_bytes(reinterpret_cast<const unsigned char*>(job.values.data()), n, sizeof(double), shuffled.data());
    job.packed.resize(compressBound(static_cast<uLong>(bytes)));
    if (!ready || deflateReset(&z) != Z_OK) {
      job.error = "zlib's deflate could not be set up (out of memory?)";
      return;
    }
    z.next_in = shuffled.data();
    z.avail_in = static_cast<uInt>(bytes);
    z.next_out = job.packed.data();
    z.avail_out = static_cast<uInt>(job.packed.size());
    const int status = deflate(&z, Z_FINISH);
    if (status != Z_STREAM_END) {
      job.error = "zlib's deflate failed (" + std::to_string(status) + ")";
      return;
    }
    job.packed.resize(z.total_out);
  }
};

ChunkWriter::ChunkWriter() = default;

ChunkWriter::~ChunkWriter() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool ChunkWriter::compress_next(std::unique_lock<std::mutex>& lock, Stream& stream) {
  const auto queued = std::find_if(jobs_.begin(), jobs_.end(), [](const auto& j) { return j->state == Job::State::Queued; });
  if (queued == jobs_.end()) return false;
  Job& job = **queued;
  job.state = Job::State::Running;
  lock.unlock();
  stream.compress(job);
  lock.lock();
  job.state = Job::State::Done;
  done_cv_.notify_all();
  return true;
}

void ChunkWriter::work() {
  Stream stream;
  std::unique_lock lock(mutex_);
  while (!stop_)
    if (!compress_next(lock, stream)) work_cv_.wait(lock);
}

bool ChunkWriter::help(std::unique_lock<std::mutex>& lock) {
  if (!caller_stream_) caller_stream_ = std::make_unique<Stream>();
  return compress_next(lock, *caller_stream_);
}

void ChunkWriter::submit(hid_t ds, std::size_t first, std::size_t rows, const double* values, std::size_t count,
                         std::size_t chunk_count, const std::string& name) {
  {
    std::unique_lock lock(mutex_);
    // A written job of the same size (a dataset's chunk) takes this one: its buffers are reused as they are.
    std::unique_ptr<Job> job;
    const auto same =
        std::find_if(spare_.begin(), spare_.end(), [&](const auto& j) { return j->values.size() == chunk_count; });
    if (same != spare_.end()) {
      job = std::move(*same);
      spare_.erase(same);
      job->error.clear();
      job->state = Job::State::Queued;
    } else {
      job = std::make_unique<Job>();
    }
    job->ds = ds;
    job->first = first;
    job->rows = rows;
    job->name = name;
    job->values.resize(chunk_count);
    std::copy(values, values + count, job->values.begin());
    std::fill(job->values.begin() + static_cast<std::ptrdiff_t>(count), job->values.end(), 0.0);  // the fill value
    held_bytes_ += chunk_count * sizeof(double);
    jobs_.push_back(std::move(job));
    if (!thread_.joinable()) thread_ = std::thread([this] { work(); });
  }
  work_cv_.notify_one();
  write_ready(false);
}

void ChunkWriter::finish() { write_ready(true); }

void ChunkWriter::write_ready(bool wait) {
  std::unique_lock lock(mutex_);
  while (!jobs_.empty()) {
    Job& front = *jobs_.front();
    if (front.state != Job::State::Done) {
      // Past the bound the caller compresses queued chunks too, or waits, rather than let them pile up in memory.
      if (!wait && held_bytes_ <= kMaxHeldBytes) return;
      if (help(lock)) continue;
      done_cv_.wait(lock, [&] { return front.state == Job::State::Done; });
    }
    std::unique_ptr<Job> job = std::move(jobs_.front());
    jobs_.pop_front();
    held_bytes_ -= job->values.size() * sizeof(double);
    lock.unlock();
    try {
      write(*job);
    } catch (...) {
      // The chunks after a failed one are not written: a file that lacks one chunk is as broken as one that lacks
      // them all, and the run reports the error.
      lock.lock();
      for (auto& j : jobs_)
        if (j->state == Job::State::Queued) j->state = Job::State::Done;  // not to be taken: dropped below
      held_bytes_ = 0;
      done_cv_.wait(lock, [&] {
        return std::none_of(jobs_.begin(), jobs_.end(), [](const auto& j) { return j->state == Job::State::Running; });
      });
      jobs_.clear();
      throw;
    }
    lock.lock();
    spare_.push_back(std::move(job));
  }
}

void ChunkWriter::write(Job& job) {
  if (!job.error.empty()) throw IoError("writing " + job.name + ": " + job.error);
  hsize_t shape[kMaxGrowingRank] = {}, offset[kMaxGrowingRank] = {job.first};  // the chunk starts a row
  grow_rows(job.ds, job.first + job.rows, shape, job.name);
  check(H5Dwrite_chunk(job.ds, H5P_DEFAULT, 0, offset, job.packed.size(), job.packed.data()), "writing " + job.name);
}

}  // namespace rollsim::h5
