#pragma once
/// \file Writing a sweep's results: the /sweep table of equal-length 1-D datasets and, optionally, each point's
/// trajectory under /points/NNNNNN/trajectory. Called from one thread only (the Debian HDF5 is not thread-safe).
#include <hdf5.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rollsim/io/hdf5.hpp"

#include "rollsim/sweep/sweep.hpp"

namespace rollsim {

/// The /sweep table written block by block as a sweep runs, so that memory stays flat in the number of points.
/// Numbers go to growing, chunked datasets, shuffled and deflated where a trial deflate of their first block shrinks
/// it tenfold (a column first met in a later block reads NaN, or 0, in the rows before it). Strings are spooled to a temporary file and written by finish(): as fixed-length
/// NUL-padded UTF-8 strings, deflated, when the longest is at most kFixedWidth bytes (or the padding at most
/// triples the text), else as variable-length strings. The group's attribute `columns` lists the columns in table
/// order, one per line (the string columns are created last).
class SweepTableWriter {
 public:
  static constexpr std::size_t kFixedWidth = 256;
  /// The most rows in a chunk.
  static constexpr std::size_t kBlockRows = 4096;
  /// `chunk`: rows per chunk (0: the sweep's points in equal chunks of at most kBlockRows rows).
  SweepTableWriter(hid_t root, const std::string& name, const sweep::Spec& spec, std::size_t chunk = 0);
  SweepTableWriter(const SweepTableWriter&) = delete;
  SweepTableWriter& operator=(const SweepTableWriter&) = delete;
  ~SweepTableWriter();
  /// The rows a caller should hand over at a time (rollsim sweep): one chunk, so that each write fills whole
  /// chunks (a deflated chunk written in parts is read back, inflated and deflated again).
  std::size_t block_rows() const { return chunk_; }
  /// The rows [first, first + n) of every column in `block` (sweep::TableBuilder::take_block()).
  void write(const std::vector<sweep::Column>& block, std::size_t first);
  /// Write the string columns and the column order. Call once, after the last block.
  void finish();
  /// The numeric columns' compressor and scratch (defined in sweep_file.cpp).
  struct Packer;

 private:
  struct Spool;
  struct Entry {
    sweep::Column::Type type;
    h5::Handle ds;                   ///< numbers: the growing dataset
    bool deflated = false;           ///< numbers: shuffled and deflated (else stored as they are)
    std::unique_ptr<Spool> spool;    ///< strings: the rows so far
    std::string unit, description;
  };
  /// A numeric column's rows [first, first + n) of 8-byte values: a block that starts a chunk and fits in it is
  /// written as that chunk (shuffled and deflated here, by libdeflate, when the column is deflated); any other
  /// block through HDF5's filters.
  void write_numbers(Entry& e, std::size_t first, std::size_t n, hid_t mem_type, const void* values,
                     const std::string& name);
  Packer& packer();
  h5::Handle group_;
  std::size_t chunk_;
  std::vector<std::string> order_;
  std::map<std::string, Entry> columns_;
  std::unique_ptr<Packer> packer_;  ///< the compressor and scratch of the numeric columns' chunks
};

/// Write point `index`'s trajectory to /points/NNNNNN/trajectory, with its status and overrides as attributes of
/// /points/NNNNNN.
void write_point_trajectory(hid_t root, std::size_t index, const std::vector<std::string>& overrides,
                            const sweep::PointResult& r);

}  // namespace rollsim
