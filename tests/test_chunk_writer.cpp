// The chunk writer (io/chunk_writer.hpp): chunks it compresses on its thread (libdeflate) inflate, with zlib, to the
// bytes HDF5's own shuffle and deflate filters inflate to for the same rows (compared chunk by chunk with
// H5Dread_chunk, the fill of a partial chunk included), and read back as the values given, through the whole-chunk,
// partial-chunk, chunk-per-column, constant-chunk and back-pressure paths; a chunk that cannot be written is an
// IoError from finish(), and the writer then stops cleanly.
#include <doctest/doctest.h>

#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rollsim/core/error.hpp"
#include "rollsim/io/chunk_writer.hpp"
#include "rollsim/io/hdf5.hpp"
#include "support.hpp"

using namespace rollsim;
using namespace rollsim::test;

namespace {

/// Values with a varied mantissa (as a trajectory's), row r and column c.
double value(std::size_t r, std::size_t c) {
  return std::sin(0.001 * static_cast<double>(r) + 0.37 * static_cast<double>(c)) * (1.0 + static_cast<double>(c));
}

/// The raw (filtered) bytes of every chunk of `ds`, and each one's filter mask.
std::vector<std::vector<unsigned char>> raw_chunks(hid_t ds, std::vector<std::uint32_t>& masks) {
  hsize_t n = 0;
  h5::Handle space(H5Dget_space(ds), H5Sclose, "H5Dget_space");
  REQUIRE(H5Dget_num_chunks(ds, space.get(), &n) >= 0);
  std::vector<std::vector<unsigned char>> out;
  masks.clear();
  for (hsize_t i = 0; i < n; ++i) {
    hsize_t offset[3] = {}, size = 0;
    unsigned mask = 0;
    haddr_t addr = 0;
    REQUIRE(H5Dget_chunk_info(ds, space.get(), i, offset, &mask, &addr, &size) >= 0);
    std::vector<unsigned char> bytes(size);
    std::uint32_t read_mask = 0;
    REQUIRE(H5Dread_chunk(ds, H5P_DEFAULT, offset, &read_mask, bytes.data()) >= 0);
    out.push_back(std::move(bytes));
    masks.push_back(read_mask);
  }
  return out;
}

/// A chunk's bytes inflated by zlib (as HDF5's deflate filter inflates them): `size` bytes expected.
std::vector<unsigned char> inflated(const std::vector<unsigned char>& chunk, std::size_t size) {
  std::vector<unsigned char> out(size + 1);
  uLongf n = static_cast<uLongf>(out.size());
  REQUIRE(uncompress(out.data(), &n, chunk.data(), static_cast<uLong>(chunk.size())) == Z_OK);
  out.resize(n);
  return out;
}

/// `rows` rows of `width` values written as growing datasets of `chunk` rows, once through HDF5's filters and once
/// through a ChunkWriter (whole chunks, and the last one partial as the writers give it); the two datasets' chunks
/// and values compared. With `by_column` the datasets are chunked by column (create_growing's `by_column`), and the
/// ChunkWriter is given each column's values as a chunk of its own, as the scene writer gives them. A chunk the
/// writer stored as it is (filter mask h5::kRaw: deflating it would not save a quarter) must hold the values HDF5's
/// chunk holds, unshuffled, and HDF5's deflate must not have halved it; every other chunk must be HDF5's bytes.
/// Returns the number of chunks stored as they are.
std::size_t compare_paths(std::size_t rows, std::size_t width, std::size_t chunk, bool by_column = false,
                          double (*at)(std::size_t, std::size_t) = value) {
  TempDir dir;
  const std::string path = (dir.path / "chunks.h5").string();
  std::vector<double> data(rows * width);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < width; ++c) data[r * width + c] = at(r, c);
  const std::vector<std::size_t> shape = width == 1 ? std::vector<std::size_t>{} : std::vector<std::size_t>{width / 3, 3};
  const std::size_t columns = by_column ? width : 1, per_chunk = by_column ? 1 : width;
  {
    h5::Handle file = h5::create_file(path);
    h5::Handle a = h5::create_growing(file.get(), "hdf5", H5T_IEEE_F64LE, chunk, h5::Filter::ShuffleDeflate, nullptr,
                                      shape, by_column);
    h5::Handle b = h5::create_growing(file.get(), "chunks", H5T_IEEE_F64LE, chunk, h5::Filter::ShuffleDeflate,
                                      nullptr, shape, by_column);
    h5::ChunkWriter writer;
    std::vector<double> column(chunk * width);
    for (std::size_t first = 0; first < rows; first += chunk) {
      const std::size_t n = std::min(chunk, rows - first);
      h5::write_rows(a.get(), first, n, H5T_NATIVE_DOUBLE, data.data() + first * width, "hdf5");
      if (!by_column) {
        writer.submit(b.get(), first, n, data.data() + first * width, n * width, chunk * width, "chunks");
        continue;
      }
      for (std::size_t c = 0; c < width; ++c) {
        for (std::size_t r = 0; r < n; ++r) column[r] = data[(first + r) * width + c];
        writer.submit(b.get(), first, n, column.data(), n, chunk, "chunks", c);
      }
    }
    writer.finish();
  }
  h5::Handle file = h5::open_file_readonly(path);
  h5::Handle a(H5Dopen2(file.get(), "hdf5", H5P_DEFAULT), H5Dclose, "open");
  h5::Handle b(H5Dopen2(file.get(), "chunks", H5P_DEFAULT), H5Dclose, "open");
  std::vector<std::uint32_t> mask_a, mask_b;
  const auto ca = raw_chunks(a.get(), mask_a), cb = raw_chunks(b.get(), mask_b);
  REQUIRE(ca.size() == columns * ((rows + chunk - 1) / chunk));
  REQUIRE(cb.size() == ca.size());
  std::size_t stored_raw = 0;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    CAPTURE(i);
    const std::size_t raw = chunk * per_chunk * sizeof(double);
    const auto a_bytes = inflated(ca[i], raw);
    CHECK(a_bytes.size() == raw);  // a whole chunk, the fill of a partial one included
    // The rule, from its definition over HDF5's shuffled bytes: the bytes that differ from the one before them in
    // their byte plane, against three quarters of the chunk's bytes.
    const std::size_t n = raw / sizeof(double);  // HDF5's shuffle: byte b of value k at b * n + k
    std::size_t changes = 0;
    for (std::size_t b = 0; b < sizeof(double); ++b)
      for (std::size_t k = 1; k < n; ++k) changes += a_bytes[b * n + k] != a_bytes[b * n + k - 1];
    CHECK((mask_b[i] == h5::kRaw) == (4 * changes >= 3 * raw));
    if (mask_b[i] == h5::kRaw) {
      ++stored_raw;
      std::vector<unsigned char> values(raw);
      for (std::size_t k = 0; k < n; ++k)
        for (std::size_t b = 0; b < sizeof(double); ++b) values[k * sizeof(double) + b] = a_bytes[b * n + k];
      CHECK(cb[i] == values);
      CHECK(2 * ca[i].size() > raw);  // HDF5's deflate of it did not halve it
    } else {
      CHECK(mask_b[i] == mask_a[i]);
      CHECK(inflated(cb[i], raw) == a_bytes);
      CHECK(cb[i].size() < raw);  // deflated: smaller than the raw chunk
    }
  }
  // The values read back through the filters, and the extent: the rows given, not the last chunk's fill.
  h5::Handle space(H5Dget_space(b.get()), H5Sclose, "H5Dget_space");
  hsize_t dims[3] = {};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  CHECK(dims[0] == rows);
  std::vector<double> back(rows * width, 42.0);
  REQUIRE(H5Dread(b.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) >= 0);
  CHECK(std::memcmp(back.data(), data.data(), data.size() * sizeof(double)) == 0);  // bit for bit: -0.0 and NaN too
  return stored_raw;
}

/// value() rounded to 1/64: as a count, a flag or a quantised signal, values whose low bytes are zero.
double quantised(std::size_t r, std::size_t c) { return std::round(64.0 * value(r, c)) / 64.0; }

/// Columns constant through a run (as a planar scene's z and the fixed entries of its rotation), by column c:
/// 0.0, -0.0, 1.0, NaN, a varying value, 0.0 again, 1.0 again, 0.0 for the first 300 rows then varying, 2.5.
double constants(std::size_t r, std::size_t c) {
  switch (c) {
    case 0:
    case 5: return 0.0;
    case 1: return -0.0;
    case 2:
    case 6: return 1.0;
    case 3: return NAN;
    case 7: return r < 300 ? 0.0 : value(r, c);
    case 8: return 2.5;
    default: return value(r, c);
  }
}

}  // namespace

TEST_CASE("chunk writer: a column's chunks are HDF5's shuffle and deflate bytes, the last one partial") {
  // 9 whole chunks and one of 784 rows. Varying values change six or seven of their bytes at each value, about
  // the rule's bound: some of their chunks are stored as they are (compare_paths checks each chunk against the rule);
  // quantised ones, whose low bytes stay zero, are all deflated.
  CHECK(compare_paths(10000, 1, 1024) > 0);
  CHECK(compare_paths(10000, 1, 1024, false, quantised) == 0);
}

TEST_CASE("chunk writer: a scene's rows of points (rows x 3 x 3), one chunk partial") {
  compare_paths(700, 9, 256);
}

TEST_CASE("chunk writer: a dataset chunked by column (rows x 3 x 3), a chunk per column, the last ones partial") {
  CHECK(compare_paths(700, 9, 256, /*by_column=*/true) > 0);
  CHECK(compare_paths(700, 9, 256, /*by_column=*/true, quantised) == 0);
}

TEST_CASE("chunk writer: a chunk is deflated when that saves a quarter of it, judged by its bytes' changes") {
  // worth_deflating counts the bytes of each value that differ from the previous value's, the fill's zeros after
  // the values given included, and says yes below three quarters of the chunk's bytes.
  std::vector<double> v(1024);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = value(i, 0);
  CHECK_FALSE(h5::worth_deflating(v.data(), v.size(), v.size()));  // six or more bytes change at each value
  CHECK(h5::worth_deflating(v.data(), 100, v.size()));             // 100 values, then 924 zeros
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);  // a count: its high bytes change
  CHECK(h5::worth_deflating(v.data(), v.size(), v.size()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = quantised(i, 0);
  CHECK(h5::worth_deflating(v.data(), v.size(), v.size()));
  // At the bound: values whose eight bytes all differ from the previous value's, then the fill. n values give 8 n
  // changes (8 (n - 1) between them and 8 into the fill), against three quarters of 8 x 1024 bytes: deflated below
  // 768 values, stored as they are from 768.
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint64_t bits = i % 2 ? 0x0202020202020202ull : 0x0101010101010101ull;
    std::memcpy(&v[i], &bits, sizeof bits);
  }
  CHECK(h5::worth_deflating(v.data(), 767, v.size()));
  CHECK_FALSE(h5::worth_deflating(v.data(), 768, v.size()));
  CHECK_FALSE(h5::worth_deflating(v.data(), v.size(), v.size()));
}

TEST_CASE("chunk writer: constant chunks (0.0, -0.0, 1.0, NaN, whole and partial) are HDF5's bytes, bit for bit") {
  // The writer reuses a constant chunk's deflated bytes for the next chunk of the same value and rows: 0.0 and -0.0
  // differ in their bits, a partial chunk differs from a whole one, and column 7 is constant in its first chunk only.
  compare_paths(700, 9, 256, /*by_column=*/true, constants);
  compare_paths(3000, 1, 256, /*by_column=*/false, [](std::size_t r, std::size_t) { return r < 2000 ? 0.0 : -0.0; });
}

TEST_CASE("chunk writer: more chunks than it may hold at once are written in order, the caller compressing too") {
  // 96 chunks of 16,384 rows: 12 MiB, three times the values the writer holds before its caller compresses or waits.
  REQUIRE(96 * 16384 * sizeof(double) >= 3 * h5::ChunkWriter::kMaxHeldBytes);
  compare_paths(96 * 16384, 1, 16384);
}

TEST_CASE("chunk writer: a chunk that cannot be written is an IoError from finish, and the writer stops cleanly") {
  TempDir dir;
  h5::Handle file = h5::create_file((dir.path / "bad.h5").string());
  std::vector<double> v(64, 1.0);
  h5::ChunkWriter writer;
  // Not a dataset: HDF5 refuses to write a chunk to a group.
  h5::Handle group = h5::create_group(file.get(), "not_a_dataset");
  // The first chunk's failure comes from whichever call writes it: a later submit or finish.
  auto give = [&] {
    writer.submit(group.get(), 0, 64, v.data(), 64, 64, "not_a_dataset");
    writer.submit(group.get(), 64, 64, v.data(), 64, 64, "not_a_dataset");
    writer.finish();
  };
  CHECK_THROWS_AS(give(), IoError);
  CHECK_NOTHROW(writer.finish());  // nothing left: the failed chunk's followers were dropped
}

TEST_CASE("chunk writer: the byte shuffle puts byte b of element i at b * plane + i, the fill zero, for any count") {
  // The 8-byte elements go eight at a time through a transposition of their bytes, the rest one byte at a time:
  // every count from 0 to 40 (whole groups of eight and tails), with and without fill, against the definition.
  for (const std::size_t elem : {1u, 3u, 4u, 8u})
    for (std::size_t n = 0; n <= 40; ++n)
      for (const std::size_t plane : {n, n + 5}) {
        CAPTURE(elem);
        CAPTURE(n);
        CAPTURE(plane);
        std::vector<unsigned char> in(n * elem);
        for (std::size_t k = 0; k < in.size(); ++k) in[k] = static_cast<unsigned char>(37 * k + 11);
        std::vector<unsigned char> got(plane * elem, 0xAA), want(plane * elem, 0);
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t b = 0; b < elem; ++b) want[b * plane + i] = in[i * elem + b];
        h5::shuffle_bytes(in.data(), n, elem, got.data(), plane);
        CHECK(got == want);
      }
}
