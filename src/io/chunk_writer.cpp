#include "rollsim/io/chunk_writer.hpp"

#include <libdeflate.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "rollsim/core/error.hpp"
#include "rollsim/io/hdf5.hpp"

namespace rollsim::h5 {

namespace {

/// Eight 8-byte elements at `in` shuffled into their eight byte planes at out + b * plane: the 8 x 8 byte matrix
/// (row k: element k's bytes, least significant first, as x86-64 stores a double) transposed in three rounds of
/// masked swaps (4 x 4 blocks, then 2 x 2, then single bytes). Byte by byte this took 4 to 7 instructions a byte
/// (callgrind: the sweep's column trials and a run's /scene chunks); this takes under 2.
void shuffle_eight(const unsigned char* in, unsigned char* out, std::size_t plane) {
  std::uint64_t v[8];
  std::memcpy(v, in, sizeof v);
  auto swap = [&](int a, int b, int shift, std::uint64_t mask) {
    const std::uint64_t t = ((v[a] >> shift) ^ v[b]) & mask;
    v[a] ^= t << shift;
    v[b] ^= t;
  };
  for (int k = 0; k < 4; ++k) swap(k, k + 4, 32, 0x00000000FFFFFFFFull);
  for (int k : {0, 1, 4, 5}) swap(k, k + 2, 16, 0x0000FFFF0000FFFFull);
  for (int k : {0, 2, 4, 6}) swap(k, k + 1, 8, 0x00FF00FF00FF00FFull);
  for (std::size_t b = 0; b < 8; ++b) std::memcpy(out + b * plane, &v[b], 8);
}

}  // namespace

void shuffle_bytes(const unsigned char* in, std::size_t n, std::size_t elem, unsigned char* out, std::size_t plane) {
  std::size_t i = 0;
  if (elem == 8 && std::endian::native == std::endian::little)
    for (; i + 8 <= n; i += 8) shuffle_eight(in + i * 8, out + i, plane);
  for (; i < n; ++i)
    for (std::size_t b = 0; b < elem; ++b) out[b * plane + i] = in[i * elem + b];
  if (plane > n)
    for (std::size_t b = 0; b < elem; ++b) std::memset(out + b * plane + n, 0, plane - n);
}

void shuffle_bytes(const unsigned char* in, std::size_t n, std::size_t elem, unsigned char* out) {
  shuffle_bytes(in, n, elem, out, n);
}

/// One chunk: its place, its values, and once compressed its bytes (shuffled and deflated, as HDF5's filters read
/// them).
struct ChunkWriter::Job {
  enum class State { Queued, Running, Done };
  hid_t ds = -1;
  std::size_t first = 0, rows = 0, column = 0;
  std::string name;
  std::vector<double> values;  ///< the rows given, the chunk's first values (Stream::compress lays the fill after them)
  std::size_t chunk_count = 0;  ///< the values of a whole chunk
  std::vector<unsigned char> packed;
  unsigned filters = 0;  ///< H5Dwrite_chunk's filter mask: the filters `packed` skipped (kRaw: stored as it is)
  std::string error;  ///< the compressor's complaint, if compressing failed
  State state = State::Queued;
};

Deflater::Deflater() : c_(libdeflate_alloc_compressor(1)) {
  if (!c_) failure_ = "libdeflate's compressor could not be set up (out of memory?)";
}

Deflater::~Deflater() {
  if (c_) libdeflate_free_compressor(c_);
}

std::span<const unsigned char> Deflater::deflate(const void* in, std::size_t bytes) {
  if (!c_) return {};
  const std::size_t bound = libdeflate_zlib_compress_bound(c_, bytes);
  if (out_.size() < bound) out_.resize(bound);
  const std::size_t n = libdeflate_zlib_compress(c_, in, bytes, out_.data(), bound);
  if (n == 0) {
    failure_ = "libdeflate's compressor found no room within its own bound";
    return {};
  }
  return {out_.data(), n};
}

void write_chunk(hid_t ds, std::size_t first, std::size_t rows, std::span<const unsigned char> packed,
                 const std::string& name, std::size_t column, unsigned filters) {
  hsize_t shape[kMaxGrowingRank] = {}, offset[kMaxGrowingRank] = {first};  // the chunk starts a row
  const int rank = grow_rows(ds, first + rows, shape, name);
  for (int d = rank - 1; d >= 1; --d) {  // the column's place in the row, the last dimension fastest
    offset[d] = column % shape[d];
    column /= shape[d];
  }
  if (column != 0) throw IoError("writing " + name + ": a chunk's column is past the row's values");
  check(H5Dwrite_chunk(ds, H5P_DEFAULT, filters, offset, packed.size(), packed.data()), "writing " + name);
}

bool worth_deflating(const double* values, std::size_t n, std::size_t chunk_count) {
  // Byte b of a value changes from the previous value's where their bits' XOR has a non-zero byte b: each byte of
  // the XOR folded onto its lowest bit, and those bits summed into the top byte by a multiplication (std::popcount
  // is a library call on the baseline x86-64 this is built for: 2 % of a run's instructions with samples every
  // 1 ms). The fill after the n values is zeros: one more change for each non-zero byte of the last value.
  constexpr std::uint64_t kLow = 0x0101010101010101ull;
  auto changed_bytes = [](std::uint64_t x) {
    x |= x >> 4;
    x |= x >> 2;
    x |= x >> 1;
    return static_cast<std::size_t>(((x & kLow) * kLow) >> 56);
  };
  std::size_t changes = 0;
  std::uint64_t prev = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    if (i > 0) changes += changed_bytes(bits ^ prev);
    prev = bits;
  }
  if (n > 0 && n < chunk_count) changes += changed_bytes(prev);
  return 4 * changes < 3 * 8 * chunk_count;
}

/// A compressor, kept for the thread's chunks, and its scratch.
struct ChunkWriter::Stream {
  Deflater deflater;
  /// The thread's scratch, grown to the largest chunk seen and kept: the shuffled values (the deflated bytes are
  /// copied out to the job at their size, so that a job touches no more memory than its bytes).
  std::vector<unsigned char> shuffled;
  /// The deflated bytes of the constant chunks met last, by the value's bits, the rows given and the chunk's
  /// values: deflating is a function of the bytes alone, and a constant column (a planar scene's z, the fixed entries
  /// of a planar rotation, a flag) gives the same chunk again and again. libdeflate's level 1 took about as long on
  /// a constant chunk of 1,024 values as on one of varying values (40 us against 40 to 70 us here).
  struct Constant {
    std::uint64_t bits;
    std::size_t rows, count;
    std::vector<unsigned char> packed;
  };
  static constexpr std::size_t kConstants = 8;
  std::vector<Constant> constants;  ///< at most kConstants, the newest last

  /// HDF5's pipeline for the chunk: shuffle, then deflate into a buffer of the compressor's bound (a chunk that
  /// grows is stored grown, as HDF5's filter stores it).
  void compress(Job& job) {
    const std::size_t n = job.values.size();
    std::uint64_t bits = 0;
    bool constant = n > 0;
    if (constant) {
      std::memcpy(&bits, job.values.data(), sizeof bits);
      for (std::size_t i = 1; i < n && constant; ++i) constant = std::memcmp(&job.values[i], &bits, sizeof bits) == 0;
    }
    job.filters = 0;
    if (constant)
      for (const Constant& c : constants)
        if (c.bits == bits && c.rows == n && c.count == job.chunk_count) {
          job.packed.assign(c.packed.begin(), c.packed.end());
          return;
        }
    const std::size_t bytes = job.chunk_count * sizeof(double);
    if (std::endian::native == std::endian::little && !constant &&
        !worth_deflating(job.values.data(), n, job.chunk_count)) {
      // Stored as it is, the fill's zeros after the values (the dataset's type is little-endian float64).
      job.packed.resize(bytes);
      std::memcpy(job.packed.data(), job.values.data(), n * sizeof(double));
      std::memset(job.packed.data() + n * sizeof(double), 0, bytes - n * sizeof(double));
      job.filters = kRaw;
      return;
    }
    if (shuffled.size() < bytes) shuffled.resize(bytes);
    shuffle_bytes(reinterpret_cast<const unsigned char*>(job.values.data()), n, sizeof(double), shuffled.data(),
                  job.chunk_count);
    const auto packed = deflater.deflate(shuffled.data(), bytes);
    if (packed.empty()) {
      job.error = deflater.failure();
      return;
    }
    job.packed.assign(packed.begin(), packed.end());
    if (constant) {
      if (constants.size() == kConstants) constants.erase(constants.begin());
      constants.push_back({bits, n, job.chunk_count, job.packed});
    }
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
                         std::size_t chunk_count, const std::string& name, std::size_t column) {
  {
    std::unique_lock lock(mutex_);
    // A written job of the same size (a dataset's chunk) takes this one: its buffers are reused as they are.
    std::unique_ptr<Job> job;
    const auto same =
        std::find_if(spare_.begin(), spare_.end(), [&](const auto& j) { return j->chunk_count == chunk_count; });
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
    job->column = column;
    job->name = name;
    job->chunk_count = chunk_count;
    job->values.assign(values, values + count);  // the fill after them is the compressor's (Stream::compress)
    held_bytes_ += count * sizeof(double);
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
  write_chunk(job.ds, job.first, job.rows, job.packed, job.name, job.column, job.filters);
}

}  // namespace rollsim::h5
