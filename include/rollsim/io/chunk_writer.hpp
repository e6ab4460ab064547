#pragma once
/// \file Whole chunks of a run's float64 datasets, shuffled and deflated on a second thread while the run goes on.
#include <hdf5.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

struct libdeflate_compressor;

namespace rollsim::h5 {

/// HDF5's shuffle filter: byte b of element i (of n elements of `elem` bytes) goes to position b * n + i.
void shuffle_bytes(const unsigned char* in, std::size_t n, std::size_t elem, unsigned char* out);
/// The same for `plane` >= n elements of which the first n are given and the others are zeros (a partial chunk and
/// its fill): byte b of element i goes to b * plane + i, and each byte plane's last plane - n bytes are zeros.
void shuffle_bytes(const unsigned char* in, std::size_t n, std::size_t elem, unsigned char* out, std::size_t plane);

/// libdeflate's compressor at level 1, writing the zlib format HDF5's deflate filter inflates (about twice as fast as
/// zlib's level 1 on a run's chunks, for as many bytes), with its output buffer, grown to the largest input seen.
class Deflater {
 public:
  Deflater();
  ~Deflater();
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;
  /// `bytes` bytes at `in`, deflated; valid until the next call. Empty if that failed: failure() says why.
  std::span<const unsigned char> deflate(const void* in, std::size_t bytes);
  const char* failure() const { return failure_; }

 private:
  libdeflate_compressor* c_;
  std::vector<unsigned char> out_;
  const char* failure_ = nullptr;
};

/// Writes `packed`, a chunk of `ds` already through its filters, as the chunk that starts at row `first`, the
/// dataset grown to first + rows rows. `column`: of a dataset chunked by column (create_growing's `by_column`), the
/// chunk's column, the index of its value in a row (row-major over the row's shape); 0 for one chunked by whole
/// rows. `filters`: HDF5's filter mask, bit k set when the dataset's filter k was skipped (kRaw: a chunk of a
/// shuffled and deflated dataset stored as it is; readers undo only the filters a chunk went through). Throws
/// IoError.
void write_chunk(hid_t ds, std::size_t first, std::size_t rows, std::span<const unsigned char> packed,
                 const std::string& name, std::size_t column = 0, unsigned filters = 0);

/// The filter mask of a chunk of a create_growing(..., Filter::ShuffleDeflate) dataset that skipped both filters.
inline constexpr unsigned kRaw = 0x3;

/// Whether deflating the shuffled chunk of `chunk_count` values (the first `n` given, zeros after them) would save a
/// quarter of its bytes or more, judged from how often each byte of a value differs from the previous value's (the
/// runs in the shuffled byte planes that deflate finds). Varying values (a trajectory, a moving body's coordinates)
/// change their six low bytes at nearly every value and deflate to some 0.8 of their size, at about as much CPU as
/// the rest of a sample. On 3,311 chunks of seven runs' /trajectory and /scene this rule and zlib's level 1 (a gain
/// of a quarter or more, or less) agreed on 93 %: 30 chunks that would have gained a quarter or more were judged
/// not to, 189 that would not were judged to (and are deflated).
bool worth_deflating(const double* values, std::size_t n, std::size_t chunk_count);

/// Writes whole chunks of float64 datasets made by create_growing(..., Filter::ShuffleDeflate): each chunk is
/// shuffled as HDF5's shuffle filter does it and deflated at level 1 by libdeflate, in the zlib format HDF5's deflate
/// filter inflates (so any reader reads the values through the dataset's filters; the deflated bytes are not
/// zlib's own), and written with H5Dwrite_chunk; a chunk that deflating would not shrink by a quarter
/// (worth_deflating) is stored as it is, its filter mask saying so (kRaw), which every HDF5 reader honours. A
/// partial chunk is given its rows alone: the fill after them (the datasets' fill value, zeros) is laid down as the
/// chunk is shuffled. The compression is done on a thread of the
/// writer's own, started at the first chunk, while the caller goes on; HDF5 itself is called only from the caller's
/// thread (the library is not thread-safe), in the order the chunks were given. When the chunks given and not yet
/// written hold more than kMaxHeldBytes, the caller compresses too, or waits. Not thread-safe: one caller thread.
///
/// Deflating is most of what samples cost (the double pendulum's 200,000 samples: 79 % of the run's CPU in zlib).
/// Through HDF5 (compress2), zlib allocated and cleared about 256 KiB to deflate each chunk; here each thread keeps
/// one compressor, and libdeflate's level 1 deflated the table's /scene chunks in 3.9 ms where zlib's took 7.4 ms,
/// to as many bytes within 1 %.
class ChunkWriter {
 public:
  ChunkWriter();
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;
  /// Stops the thread. Chunks given and not yet written are dropped: finish() writes them.
  ~ChunkWriter();

  /// Queues the chunk of `ds` that starts at row `first` (a multiple of its chunk rows) and holds `rows` rows (at
  /// most its chunk rows; the dataset is extended to first + rows): `count` doubles, row-major, copied, then zeros
  /// (the datasets' fill value, as HDF5 fills a partial chunk) up to `chunk_count`, the values of a whole chunk.
  /// Writes the chunks already compressed, in order. `column`: write_chunk's, for a dataset chunked by column.
  /// Throws IoError.
  void submit(hid_t ds, std::size_t first, std::size_t rows, const double* values, std::size_t count,
              std::size_t chunk_count, const std::string& name, std::size_t column = 0);
  /// Compresses (with the thread's help) and writes every chunk queued. Throws IoError for the first that fails;
  /// the others are dropped.
  void finish();

  /// The values of the chunks given and not yet written, at most (about as much again is held compressed).
  static constexpr std::size_t kMaxHeldBytes = std::size_t{4} << 20;

 private:
  struct Job;
  struct Stream;
  void work();
  /// Compresses the first queued chunk with `stream`, the lock released meanwhile; false if none is queued. Called
  /// with the lock held.
  bool compress_next(std::unique_lock<std::mutex>& lock, Stream& stream);
  /// Writes the leading chunks that are compressed; with `wait`, all of them, compressing queued ones meanwhile.
  void write_ready(bool wait);
  void write(Job& job);
  /// compress_next on the caller's thread.
  bool help(std::unique_lock<std::mutex>& lock);

  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::unique_ptr<Job>> jobs_;  ///< in the order given
  std::vector<std::unique_ptr<Job>> spare_;  ///< written jobs, their buffers reused
  std::size_t held_bytes_ = 0;             ///< the values of the jobs in jobs_
  bool stop_ = false;
  std::unique_ptr<Stream> caller_stream_;
  std::thread thread_;
};

}  // namespace rollsim::h5
