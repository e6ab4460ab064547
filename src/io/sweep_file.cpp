#include "rollsim/io/sweep_file.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>

#include <libdeflate.h>
#include <zlib.h>

#include "rollsim/core/error.hpp"

#include "rollsim/io/chunk_writer.hpp"
#include "rollsim/io/hdf5.hpp"
#include "rollsim/io/result_file.hpp"

namespace rollsim {

namespace {

/// zlib's level 1 with its stream kept (reset for each chunk), writing the zlib format HDF5's deflate filter reads.
/// The table's deflated numeric columns are those that deflate to a tenth or less (below): grid values, counts,
/// flags, constants, whose shuffled bytes are long runs. On those zlib's level 1 took 0.43 of the time of
/// libdeflate's (the 10^4-point basin map's eight deflated columns, a block of 3,400 rows: 410 us against 953 us),
/// for 4.2 KB instead of 3.2 KB; on a run's varying values libdeflate is the faster (io/chunk_writer.hpp).
/// zlib writes the raw stream; its two-byte header and its Adler-32 trailer are written here, the checksum by
/// libdeflate's vectorised routine: on the 10^6-point basin map's eight deflated columns zlib's own checksum took
/// 26 ns of the 91 ns a row took to deflate them (best of seven, a benchmark of the chunks alone).
class RunDeflater {
 public:
  RunDeflater() : ok_(deflateInit2(&z_, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK) {}
  ~RunDeflater() {
    if (ok_) deflateEnd(&z_);
  }
  RunDeflater(const RunDeflater&) = delete;
  RunDeflater& operator=(const RunDeflater&) = delete;
  /// `bytes` bytes at `in`, deflated in the zlib format; valid until the next call. Empty if that failed.
  std::span<const unsigned char> deflate(const unsigned char* in, std::size_t bytes) {
    if (!ok_ || deflateReset(&z_) != Z_OK) return {};
    // RFC 1950: CM 8 (deflate) with a 32 KB window, no dictionary, FLEVEL 0 (fastest), FCHECK making the pair a
    // multiple of 31 (0x7801 = 31 x 991).
    constexpr std::size_t kHeader = 2, kTrailer = 4;
    out_.resize(kHeader + deflateBound(&z_, static_cast<uLong>(bytes)) + kTrailer);
    out_[0] = 0x78;
    out_[1] = 0x01;
    z_.next_in = const_cast<unsigned char*>(in);
    z_.avail_in = static_cast<uInt>(bytes);
    z_.next_out = out_.data() + kHeader;
    z_.avail_out = static_cast<uInt>(out_.size() - kHeader - kTrailer);
    if (::deflate(&z_, Z_FINISH) != Z_STREAM_END) return {};
    const std::size_t end = out_.size() - kTrailer - z_.avail_out;
    const std::uint32_t adler = libdeflate_adler32(1, in, bytes);
    for (std::size_t b = 0; b < kTrailer; ++b)  // big-endian
      out_[end + b] = static_cast<unsigned char>(adler >> (24 - 8 * b));
    return {out_.data(), end + kTrailer};
  }

 private:
  z_stream z_{};
  bool ok_;
  std::vector<unsigned char> out_;
};

}  // namespace

/// The numeric columns' compressors, kept for the table, and their scratch (grown to a chunk's bytes and kept):
/// libdeflate's for the trial of a column's first block (most of a column that does not deflate well is varying
/// bytes), zlib's for the chunks of the columns that do.
struct SweepTableWriter::Packer {
  h5::Deflater deflater;
  RunDeflater runs;
  std::vector<unsigned char> bytes;
};

namespace {

/// A numeric column is deflated when its first block, byte-shuffled as HDF5's filter shuffles it, deflates at
/// level 1 to a tenth of its size or less: a grid's swept values, counts, flags and constant columns do. Deflating
/// costs about 30 ns per 8-byte value whatever the gain (a row of the 10^6-point basin map took 1.4 us to write
/// with every column that halves deflated, 1.0 us with these, for a file of 59 and 72 MiB; 131 MiB with none).
h5::Filter numeric_filter(const void* data, std::size_t n, std::size_t elem, SweepTableWriter::Packer& p) {
  if (n == 0) return h5::Filter::ShuffleDeflate;
  const auto* bytes = static_cast<const unsigned char*>(data);
  if (p.bytes.size() < n * elem) p.bytes.resize(n * elem);
  h5::shuffle_bytes(bytes, n, elem, p.bytes.data());
  // libdeflate's level 1, as the string columns and the chunks of runs are deflated: the 17 trials of a 10^4-point
  // basin map took 17.5 M instructions where zlib's level 1 took 24.7 M (callgrind), a quarter of its table's.
  const auto packed = p.deflater.deflate(p.bytes.data(), n * elem);
  if (packed.empty()) return h5::Filter::ShuffleDeflate;
  return 10 * packed.size() <= n * elem ? h5::Filter::ShuffleDeflate : h5::Filter::None;
}

/// Rows per chunk: at most kBlockRows, the points split into chunks of equal size, so that the last chunk is full
/// or nearly (an unfiltered dataset's last chunk takes its whole size on disk).
std::size_t balanced_chunk(std::size_t n) {
  constexpr std::size_t kMax = SweepTableWriter::kBlockRows;
  const std::size_t chunks = std::max<std::size_t>(1, (n + kMax - 1) / kMax);
  return std::max<std::size_t>(1, (n + chunks - 1) / chunks);
}

}  // namespace

/// One string column's rows, as (length, bytes) records in a temporary file, written and read through a buffer of
/// its own (a record at a time through stdio would cost more than the rest of a row).
struct SweepTableWriter::Spool {
  static constexpr std::size_t kBuffer = 1u << 18;
  /// The length field of a record that repeats the one before it (its text is not stored again): most of a column's
  /// rows repeat their neighbour's (a status, a termination, an audit, a class, the symbols of a map's region).
  static constexpr std::uint32_t kRepeat = UINT32_MAX;
  std::FILE* f = nullptr;
  std::size_t rows = 0, longest = 0, bytes = 0;
  std::string buf;       // writing: records not yet in the file; reading: bytes read and not yet taken
  std::size_t pos = 0;   // reading: the next record's offset in buf
  std::string last;      // writing: the last text put; reading: the last text got
  bool repeated = false; // reading: the last text got repeats the one before it
  Spool() {
    f = std::tmpfile();
    if (!f) throw IoError(std::string("sweep table: cannot create a temporary file: ") + std::strerror(errno));
    buf.reserve(kBuffer);
  }
  ~Spool() {
    if (f) std::fclose(f);
  }
  void spill() {
    if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), f) != buf.size())
      throw IoError(std::string("sweep table: writing a temporary file failed: ") + std::strerror(errno));
    buf.clear();
  }
  void put(std::string_view s) {
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(s.size(), UINT32_MAX - 1));
    const bool repeat = rows > 0 && s.substr(0, n) == last;
    ++rows;
    bytes += n;
    if (repeat) {
      if (buf.size() + sizeof kRepeat > kBuffer) spill();
      buf.append(reinterpret_cast<const char*>(&kRepeat), sizeof kRepeat);
      return;
    }
    last.assign(s.data(), n);
    longest = std::max<std::size_t>(longest, n);
    if (buf.size() + sizeof n + n > kBuffer) spill();  // the buffer never grows past its first size
    if (sizeof n + n > kBuffer) {
      if (std::fwrite(&n, sizeof n, 1, f) != 1 || std::fwrite(s.data(), 1, n, f) != n)
        throw IoError(std::string("sweep table: writing a temporary file failed: ") + std::strerror(errno));
    } else {
      buf.append(reinterpret_cast<const char*>(&n), sizeof n);
      buf.append(s.data(), n);
    }
  }
  void pad_to(std::size_t first) {
    while (rows < first) put({});
  }
  /// After the last put: read from the start.
  void rewind() {
    spill();
    std::rewind(f);
    pos = 0;
    last.clear();
  }
  /// Make at least `n` bytes from pos available in buf (fewer only at the end of the file).
  void want(std::size_t n) {
    if (buf.size() - pos >= n) return;
    buf.erase(0, pos);
    pos = 0;
    const std::size_t have = buf.size();
    buf.resize(std::max(n, kBuffer));
    const std::size_t got = std::fread(buf.data() + have, 1, buf.size() - have, f);
    buf.resize(have + got);
  }
  /// The next record, valid until the next call.
  std::string_view get() {
    std::uint32_t n = 0;
    want(sizeof n);
    if (buf.size() - pos < sizeof n) throw IoError("sweep table: a temporary file ended early");
    std::memcpy(&n, buf.data() + pos, sizeof n);
    pos += sizeof n;
    repeated = n == kRepeat;
    if (repeated) return last;
    want(n);
    if (buf.size() - pos < n) throw IoError("sweep table: a temporary file ended early");
    last.assign(buf.data() + pos, n);
    pos += n;
    return last;
  }
};

SweepTableWriter::SweepTableWriter(hid_t root, const std::string& name, const sweep::Spec& spec, std::size_t chunk)
    : group_(h5::create_group(root, name)),
      chunk_(chunk ? chunk : balanced_chunk(spec.n_points)) {
  h5::write_attr(group_.get(), "mode", spec.mode);
  h5::write_attr(group_.get(), "n_points", static_cast<long long>(spec.n_points));
  std::string keys;
  for (const auto& a : spec.axes) keys += (keys.empty() ? "" : ",") + a.key;
  h5::write_attr(group_.get(), "swept_keys", keys);
  h5::write_attr(group_.get(), "order", spec.mode == "zip"
                                            ? "zip: row i takes the i-th value of every swept key"
                                            : "grid: swept keys in file order, the last key varies fastest");
}

SweepTableWriter::~SweepTableWriter() = default;

void SweepTableWriter::write(const std::vector<sweep::Column>& block, std::size_t first) {
  for (const auto& c : block) {
    auto it = columns_.find(c.name);
    if (it != columns_.end() && it->second.type != c.type) {
      // A summary item first met as a number became a text: its earlier rows are "" (as build_table has them).
      if (c.type != sweep::Column::String || it->second.type != sweep::Column::Float64)
        throw std::logic_error("sweep table: column " + c.name + " changed its type");
      it->second.ds.reset();
      h5::check(H5Ldelete(group_.get(), c.name.c_str(), H5P_DEFAULT), "removing " + c.name);
      it->second.type = c.type;
    }
    if (it == columns_.end()) {
      it = columns_.emplace(c.name, Entry{c.type, {}, false, nullptr, c.unit, c.description}).first;
      order_.push_back(c.name);
    }
    Entry& e = it->second;
    // A unit or a description can be known only from a later row (the first point whose system was built).
    if (!c.unit.empty() && c.unit != e.unit) {
      e.unit = c.unit;
      if (e.ds) h5::write_attr(e.ds.get(), "unit", e.unit);
    }
    if (!c.description.empty() && c.description != e.description) {
      e.description = c.description;
      if (e.ds) h5::write_attr(e.ds.get(), "description", e.description);
    }
    switch (c.type) {
      case sweep::Column::Float64: {
        if (!e.ds) {
          const double nan = NAN;
          const h5::Filter filter = numeric_filter(c.numbers.data(), c.numbers.size(), sizeof(double), packer());
          e.ds = h5::create_growing(group_.get(), c.name, H5T_IEEE_F64LE, chunk_, filter, &nan);
          e.deflated = filter == h5::Filter::ShuffleDeflate;
          h5::describe(e.ds.get(), c.unit, c.description);
        }
        write_numbers(e, first, c.numbers.size(), H5T_NATIVE_DOUBLE, c.numbers.data(), c.name);
        break;
      }
      case sweep::Column::Int64: {
        if (!e.ds) {
          const long long zero = 0;
          const h5::Filter filter = numeric_filter(c.ints.data(), c.ints.size(), sizeof(long long), packer());
          e.ds = h5::create_growing(group_.get(), c.name, H5T_STD_I64LE, chunk_, filter, &zero);
          e.deflated = filter == h5::Filter::ShuffleDeflate;
          h5::describe(e.ds.get(), c.unit, c.description);
        }
        write_numbers(e, first, c.ints.size(), H5T_NATIVE_LLONG, c.ints.data(), c.name);
        break;
      }
      case sweep::Column::String: {
        if (!e.spool) e.spool = std::make_unique<Spool>();
        e.spool->pad_to(first);
        for (const auto& v : c.strings) e.spool->put(v);
        break;
      }
    }
  }
}

SweepTableWriter::Packer& SweepTableWriter::packer() {
  if (!packer_) packer_ = std::make_unique<Packer>();
  return *packer_;
}

void SweepTableWriter::write_numbers(Entry& e, std::size_t first, std::size_t n, hid_t mem_type, const void* values,
                                     const std::string& name) {
  // A whole chunk (or the last rows, at a chunk's start) goes to the file as the chunk's bytes: HDF5's filter
  // pipeline and its chunk cache took 2.0 K instructions a row of the basin map for its 17 numeric columns (zlib
  // deflating 8 of them), callgrind. The memory bytes are the file's (8-byte little-endian values).
  static_assert(sizeof(double) == 8 && sizeof(long long) == 8);
  if (std::endian::native != std::endian::little || n == 0 || n > chunk_ || first % chunk_ != 0) {
    h5::write_rows(e.ds.get(), first, n, mem_type, values, name);
    return;
  }
  Packer& p = packer();
  const std::size_t bytes = chunk_ * 8;
  if (p.bytes.size() < bytes) p.bytes.resize(bytes);
  const auto* in = static_cast<const unsigned char*>(values);
  if (e.deflated) {
    // The rows after the last one given are zeros, as the chunk writer lays a partial chunk's fill (they lie past
    // the extent, and a later block that reaches them writes them through HDF5, which inflates the chunk first).
    h5::shuffle_bytes(in, n, 8, p.bytes.data(), chunk_);
    const auto packed = p.runs.deflate(p.bytes.data(), bytes);
    if (packed.empty()) throw IoError("writing " + name + ": zlib's deflate failed (out of memory?)");
    h5::write_chunk(e.ds.get(), first, n, packed, name);
  } else {
    std::memcpy(p.bytes.data(), in, n * 8);
    std::memset(p.bytes.data() + n * 8, 0, bytes - n * 8);
    h5::write_chunk(e.ds.get(), first, n, {p.bytes.data(), bytes}, name);
  }
}

void SweepTableWriter::finish() {
  // Fixed-length strings are deflated a whole chunk at a time by libdeflate and written as chunks. On the 300 x 300
  // basin map's symbols and audit columns this took 11 ms where zlib's level 1 (HDF5's own filter) took 15.5 ms,
  // and stored them in 44 KB instead of 81 KB.
  std::optional<h5::Deflater> deflater;
  std::size_t rows = 0;
  for (const auto& [name, e] : columns_)
    if (e.spool) rows = std::max(rows, e.spool->rows);
  for (const auto& name : order_) {
    Entry& e = columns_.at(name);
    if (!e.spool) continue;
    Spool& sp = *e.spool;
    sp.pad_to(rows);
    sp.rewind();
    const bool fixed = sp.longest <= kFixedWidth || sp.longest * sp.rows <= 3 * (sp.bytes + sp.rows);
    const std::size_t width = std::max<std::size_t>(sp.longest, 1);
    const std::size_t block = fixed ? std::clamp<std::size_t>((1u << 20) / width, 1, chunk_) : chunk_;
    h5::Handle type = fixed ? h5::fixed_string_type(width) : h5::utf8_string_type();
    h5::Handle ds = h5::create_growing(group_.get(), name, type.get(), block, h5::Filter::Deflate);
    h5::describe(ds.get(), e.unit, e.description);
    std::vector<char> chars, last_chars;
    std::vector<unsigned char> last_packed;
    std::vector<std::string> strs;
    std::vector<const char*> ptrs;
    std::string first;
    bool last_uniform = false;  // the previous chunk was whole, every row its first row's text
    for (std::size_t at = 0; at < sp.rows; at += block) {
      const std::size_t n = std::min(block, sp.rows - at);
      if (fixed) {
        // A whole chunk (a chunk is stored whole, the last one too), its padding NUL as the dataset's fill. While
        // every row repeats the first (a spooled repeat), nothing is laid out: such a chunk after another one whole
        // of the same text is that chunk.
        chars.resize(block * width);
        auto put_row = [&](std::size_t k, std::string_view s) {
          std::memcpy(chars.data() + k * width, s.data(), s.size());
        };
        auto lay_out_first = [&](std::size_t rows) {  // the chunk zeroed, then `first` in rows [0, rows)
          std::fill(chars.begin(), chars.end(), '\0');
          for (std::size_t u = 0; u < rows; ++u) put_row(u, first);
        };
        first = sp.get();
        const bool first_repeats = sp.repeated;
        std::size_t uniform_rows = 1;  // rows [0, uniform_rows) hold `first`, not yet laid out
        for (std::size_t k = 1; k < n; ++k) {
          const std::string_view s = sp.get();
          if (uniform_rows == k && sp.repeated) {
            ++uniform_rows;
            continue;
          }
          if (uniform_rows == k) lay_out_first(k);
          put_row(k, s);
        }
        const bool uniform = uniform_rows == n;
        if (uniform && first_repeats && last_uniform && n == block) {
          h5::write_chunk(ds.get(), at, n, last_packed, name);  // the bytes of the chunk before it
          continue;
        }
        if (uniform) lay_out_first(n);
        last_uniform = uniform && n == block;
        // A chunk whose bytes are the column's previous chunk's (a status, termination or audit text that every
        // point shares) is stored as the same deflated bytes: deflating is a function of the bytes alone.
        if (chars != last_chars) {
          if (!deflater) deflater.emplace();
          const auto packed = deflater->deflate(chars.data(), chars.size());
          if (packed.empty()) throw IoError("writing " + name + ": " + deflater->failure());
          last_packed.assign(packed.begin(), packed.end());
          chars.swap(last_chars);
        }
        h5::write_chunk(ds.get(), at, n, last_packed, name);
      } else {
        strs.clear();
        ptrs.clear();
        for (std::size_t k = 0; k < n; ++k) strs.emplace_back(sp.get());
        for (const auto& s : strs) ptrs.push_back(s.c_str());
        h5::write_rows(ds.get(), at, n, type.get(), ptrs.data(), name);
      }
    }
    e.spool.reset();
  }
  std::string list;
  for (const auto& name : order_) list += (list.empty() ? "" : "\n") + name;
  h5::write_attr(group_.get(), "columns", list);
}

void write_point_trajectory(hid_t root, std::size_t index, const std::vector<std::string>& overrides,
                            const sweep::PointResult& r) {
  h5::Handle points = h5::exists(root, "points") ? h5::open_group(root, "points") : h5::create_group(root, "points");
  char name[32];
  std::snprintf(name, sizeof name, "%06zu", index);
  h5::Handle p = h5::create_group(points.get(), name);
  h5::write_attr(p.get(), "index", static_cast<long long>(index));
  h5::write_attr(p.get(), "status", r.status);
  std::string ov;
  for (const auto& o : overrides) ov += (ov.empty() ? "" : " ") + o;
  h5::write_attr(p.get(), "overrides", ov);
  if (!r.has_trajectory) return;
  h5::Handle t = h5::create_group(p.get(), "trajectory");
  for (std::size_t c = 0; c < r.trajectory.names.size(); ++c)
    h5::write_vector(t.get(), r.trajectory.names[c], r.trajectory.columns[c], r.trajectory.units[c],
                     c < r.trajectory.descriptions.size() ? r.trajectory.descriptions[c] : "");
  const auto& tr = r.trajectory;
  write_roles(t.get(), tr.names, tr.roles, tr.contacts, tr.ledger);
  // The point's events, with the columns and roles of a run's /events.
  h5::Handle e = h5::create_group(p.get(), "events");
  for (std::size_t c = 0; c < tr.event_names.size(); ++c)
    h5::write_vector(e.get(), tr.event_names[c], tr.event_columns[c], tr.event_units[c], tr.event_descriptions[c]);
  h5::write_strings(e.get(), "kind", tr.event_kinds, "event kind");
  write_roles(e.get(), tr.event_names, tr.event_roles, tr.event_contacts, tr.event_ledger);
  write_roles(e.get(), {"kind"}, {std::string(role_name(Role::EventKind))}, {}, {});
}

}  // namespace rollsim
