#include "rollsim/io/hdf5.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "rollsim/core/error.hpp"
#include "rollsim/io/chunk_writer.hpp"

namespace rollsim::h5 {

namespace {

std::once_flag g_quiet_once;

/// Every group's links in creation order, tracked and indexed (the index is what iterating in that order needs).
constexpr unsigned kCreationOrder = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;

/// HDF5 prints its error stack by default; rollsim reports errors itself.
void quiet() {
  std::call_once(g_quiet_once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

struct Collected {
  std::string text;    // the outermost descriptions
  std::string system;  // the operating system's reason, when a read or write call failed
};

herr_t collect(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<Collected*>(data);
  if (!err->desc) return 0;
  std::string d = err->desc;
  for (auto& c : d)
    if (c == '\n') c = ' ';
  if (n < 3) out->text += (n ? "; " : "") + d;
  // The file driver's message carries errno's text: "... errno = 27, error message = 'File too large', ..."
  const std::string key = "error message = '";
  const auto p = d.find(key);
  if (out->system.empty() && p != std::string::npos) {
    const auto q = d.find('\'', p + key.size());
    out->system = d.substr(p + key.size(), q == std::string::npos ? std::string::npos : q - p - key.size());
  }
  return 0;
}

std::string error_stack() {
  Collected c;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, &c);
  H5Eclear2(H5E_DEFAULT);
  return c.system.empty() ? c.text : c.system + " (" + c.text + ")";
}

Handle scalar_space() { return Handle(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate"); }

Handle simple_space(std::size_t n) {
  hsize_t dims[1] = {n};
  return Handle(H5Screate_simple(1, dims, nullptr), H5Sclose, "H5Screate_simple");
}

void remove_attr_if_exists(hid_t obj, const std::string& name) {
  const htri_t e = H5Aexists(obj, name.c_str());
  check(e, "H5Aexists " + name);
  if (e > 0) check(H5Adelete(obj, name.c_str()), "H5Adelete " + name);
}

void write_attr_typed(hid_t obj, const std::string& name, hid_t type, const void* value,
                      const Handle& space = scalar_space()) {
  remove_attr_if_exists(obj, name);
  Handle a(H5Acreate2(obj, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose, "H5Acreate2");
  check(H5Awrite(a.get(), type, value), "H5Awrite " + name);
}

}  // namespace

Handle utf8_string_type() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
  check(H5Tset_size(t.get(), H5T_VARIABLE), "H5Tset_size");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "H5Tset_cset");
  return t;
}

Handle fixed_string_type(std::size_t width) {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
  check(H5Tset_size(t.get(), std::max<std::size_t>(width, 1)), "H5Tset_size");
  check(H5Tset_strpad(t.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "H5Tset_cset");
  return t;
}

void describe(hid_t ds, const std::string& unit, const std::string& description) {
  if (!unit.empty()) write_attr(ds, "unit", unit);
  if (!description.empty()) write_attr(ds, "description", description);
}

Handle create_growing(hid_t parent, const std::string& name, hid_t type, std::size_t chunk, Filter filter,
                      const void* fill, const std::vector<std::size_t>& row_shape, bool by_column) {
  std::vector<hsize_t> dims{0}, maxdims{H5S_UNLIMITED}, chunks{std::max<std::size_t>(chunk, 1)};
  for (const std::size_t d : row_shape) {
    dims.push_back(d);
    maxdims.push_back(d);
    chunks.push_back(by_column ? 1 : d);
  }
  const int rank = static_cast<int>(dims.size());
  Handle space(H5Screate_simple(rank, dims.data(), maxdims.data()), H5Sclose, "H5Screate_simple");
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
  check(H5Pset_chunk(dcpl.get(), rank, chunks.data()), "H5Pset_chunk");
  if (filter != Filter::None && H5Tis_variable_str(type) <= 0) {
    if (filter == Filter::ShuffleDeflate) check(H5Pset_shuffle(dcpl.get()), "H5Pset_shuffle");
    check(H5Pset_deflate(dcpl.get(), 1), "H5Pset_deflate");
  }
  if (fill) check(H5Pset_fill_value(dcpl.get(), type, fill), "H5Pset_fill_value");
  // Rows are appended in whole blocks, each written once: a chunk cache (1 MiB per dataset) would only hold memory.
  Handle dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, "H5Pcreate");
  check(H5Pset_chunk_cache(dapl.get(), 0, 0, H5D_CHUNK_CACHE_W0_DEFAULT), "H5Pset_chunk_cache");
  return Handle(H5Dcreate2(parent, name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(), dapl.get()), H5Dclose,
                ("creating dataset " + name).c_str());
}

int grow_rows(hid_t ds, std::size_t rows, hsize_t* row_shape, const std::string& name) {
  Handle cur(H5Dget_space(ds), H5Sclose, "H5Dget_space");
  const int rank = H5Sget_simple_extent_ndims(cur.get());
  if (rank < 1 || rank > kMaxGrowingRank)
    throw IoError("writing " + name + ": a growing dataset of rank " + std::to_string(rank));
  hsize_t have[kMaxGrowingRank] = {};
  H5Sget_simple_extent_dims(cur.get(), have, nullptr);
  hsize_t total[kMaxGrowingRank] = {rows};
  for (int i = 1; i < rank; ++i) total[i] = row_shape[i] = have[i];
  if (have[0] < total[0]) check(H5Dset_extent(ds, total), "extending " + name);
  return rank;
}

namespace {

/// A transfer property list whose type-conversion buffer fits `elements` values (32 bytes each: a variable-length
/// string's 16 in the file, with room to spare), between 4 KiB and HDF5's default of 1 MiB. A write that converts
/// (strings, the int8 mode column written from int) has HDF5 allocate and clear that buffer: at the default size,
/// 256 pages faulted in for a few rows, which were 30 % of a short run's page faults (with the clearing, about
/// 17 us a page on these machines: docs/hardening.md).
Handle transfer_list(std::size_t elements) {
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "H5Pcreate(H5P_DATASET_XFER)");
  const std::size_t bytes = std::clamp<std::size_t>(elements * 32, std::size_t{4} << 10, std::size_t{1} << 20);
  check(H5Pset_buffer(dxpl.get(), bytes, nullptr, nullptr), "H5Pset_buffer");
  return dxpl;
}

}  // namespace

void write_rows(hid_t ds, std::size_t first, std::size_t n, hid_t mem_type, const void* data, const std::string& name) {
  if (n == 0) return;
  hsize_t start[kMaxGrowingRank] = {first}, count[kMaxGrowingRank] = {n};
  const int rank = grow_rows(ds, first + n, count, name);  // whole rows
  Handle mem(H5Screate_simple(rank, count, nullptr), H5Sclose, "H5Screate_simple");
  Handle file_space(H5Dget_space(ds), H5Sclose, "H5Dget_space");
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), "H5Sselect_hyperslab");
  std::size_t elements = 1;
  for (int i = 0; i < rank; ++i) elements *= count[i];
  const Handle dxpl = transfer_list(elements);
  check(H5Dwrite(ds, mem_type, mem.get(), file_space.get(), dxpl.get(), data), "writing " + name);
}

Handle::Handle(hid_t id, Closer closer, const char* what) : id_(id), closer_(closer) {
  quiet();
  if (id < 0) throw IoError(std::string(what) + " failed: " + error_stack());
}

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = -1;
  }
  return *this;
}

void Handle::reset() {
  if (id_ >= 0 && closer_) closer_(id_);
  id_ = -1;
}

void check(herr_t status, const std::string& what) {
  if (status < 0) throw IoError(what + " failed: " + error_stack());
}

Handle create_file(const std::string& path) {
  quiet();
  // HDF5's own message for a file it cannot create is a page of internals; the system's is one line.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) throw IoError("cannot create " + path + ": " + std::strerror(errno));
  ::close(fd);
  // Memory stays flat however long the run: the metadata cache (which holds the chunk indexes of the
  // growing datasets) is capped at 4 MiB instead of growing adaptively to 32 MiB.
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate");
  H5AC_cache_config_t mdc;
  mdc.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  check(H5Pget_mdc_config(fapl.get(), &mdc), "H5Pget_mdc_config");
  mdc.set_initial_size = true;
  mdc.initial_size = 1 << 20;
  mdc.min_size = 1 << 20;
  mdc.max_size = 4 << 20;
  check(H5Pset_mdc_config(fapl.get(), &mdc), "H5Pset_mdc_config");
  // The root group, like every other (create_group), keeps its members in the order they are written.
  Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose, "H5Pcreate");
  check(H5Pset_link_creation_order(fcpl.get(), kCreationOrder), "H5Pset_link_creation_order");
  return Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), H5Fclose,
                ("creating HDF5 file " + path).c_str());
}

Handle open_file_readonly(const std::string& path) {
  quiet();
  return Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, ("opening HDF5 file " + path).c_str());
}

Handle create_group(hid_t parent, const std::string& name) {
  // The creation order is tracked and indexed, so a reader lists a table's columns in the order the writer wrote
  // them (h5py: iterate with INDEX_CRT_ORDER) rather than by name.
  Handle gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, "H5Pcreate");
  check(H5Pset_link_creation_order(gcpl.get(), kCreationOrder), "H5Pset_link_creation_order");
  return Handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose,
                ("creating group " + name).c_str());
}

Handle open_group(hid_t parent, const std::string& name) {
  return Handle(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), H5Gclose, ("opening group " + name).c_str());
}

bool exists(hid_t parent, const std::string& path) {
  quiet();
  const htri_t e = H5Lexists(parent, path.c_str(), H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
  return e > 0;
}

void write_attr(hid_t obj, const std::string& name, double v) { write_attr_typed(obj, name, H5T_NATIVE_DOUBLE, &v); }
void write_attr(hid_t obj, const std::string& name, long long v) { write_attr_typed(obj, name, H5T_NATIVE_LLONG, &v); }
void write_attr(hid_t obj, const std::string& name, const char* v) { write_attr(obj, name, std::string(v)); }
void write_attr(hid_t obj, const std::string& name, const std::vector<double>& v) {
  write_attr_typed(obj, name, H5T_NATIVE_DOUBLE, v.data(), simple_space(v.size()));
}
void write_attr(hid_t obj, const std::string& name, const std::string& v) {
  Handle t = utf8_string_type();
  const char* p = v.c_str();
  write_attr_typed(obj, name, t.get(), &p);
}

void write_vector(hid_t parent, const std::string& name, const std::vector<double>& v, const std::string& unit,
                  const std::string& description) {
  Handle space = simple_space(v.size());
  Handle ds(H5Dcreate2(parent, name.c_str(), H5T_NATIVE_DOUBLE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose, ("creating dataset " + name).c_str());
  if (!v.empty()) check(H5Dwrite(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "H5Dwrite " + name);
  describe(ds.get(), unit, description);
}

void write_ints(hid_t parent, const std::string& name, const std::vector<long long>& v, const std::string& description) {
  Handle space = simple_space(v.size());
  Handle ds(H5Dcreate2(parent, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose, ("creating dataset " + name).c_str());
  if (!v.empty()) check(H5Dwrite(ds.get(), H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "H5Dwrite " + name);
  describe(ds.get(), "", description);
}

void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& v,
                   const std::string& description) {
  Handle t = utf8_string_type();
  Handle space = simple_space(v.size());
  Handle ds(H5Dcreate2(parent, name.c_str(), t.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
            ("creating dataset " + name).c_str());
  std::vector<const char*> ptrs;
  for (const auto& s : v) ptrs.push_back(s.c_str());
  if (!v.empty())
    check(H5Dwrite(ds.get(), t.get(), H5S_ALL, H5S_ALL, transfer_list(v.size()).get(), ptrs.data()), "H5Dwrite " + name);
  describe(ds.get(), "", description);
}

void write_matrix(hid_t parent, const std::string& name, const std::vector<double>& data, std::size_t rows,
                  std::size_t cols, const std::string& description) {
  hsize_t dims[2] = {rows, cols};
  Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose, "H5Screate_simple");
  Handle ds(H5Dcreate2(parent, name.c_str(), H5T_NATIVE_DOUBLE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose, ("creating dataset " + name).c_str());
  if (rows * cols != 0)
    check(H5Dwrite(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), "H5Dwrite " + name);
  describe(ds.get(), "", description);
}

std::vector<double> read_vector(hid_t parent, const std::string& name) {
  Handle ds(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, ("opening dataset " + name).c_str());
  Handle space(H5Dget_space(ds.get()), H5Sclose, "H5Dget_space");
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  std::vector<double> v(static_cast<std::size_t>(n));
  if (n > 0) check(H5Dread(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "H5Dread " + name);
  return v;
}

std::vector<std::string> read_strings(hid_t parent, const std::string& name) {
  Handle ds(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, ("opening dataset " + name).c_str());
  Handle space(H5Dget_space(ds.get()), H5Sclose, "H5Dget_space");
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get()));
  Handle file_type(H5Dget_type(ds.get()), H5Tclose, "H5Dget_type");
  std::vector<std::string> out(n);
  if (n == 0) return out;
  if (H5Tis_variable_str(file_type.get()) > 0) {
    Handle t = utf8_string_type();
    std::vector<char*> ptrs(n, nullptr);
    check(H5Dread(ds.get(), t.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), "H5Dread " + name);
    for (std::size_t i = 0; i < n; ++i) out[i] = ptrs[i] ? ptrs[i] : "";
    check(H5Dvlen_reclaim(t.get(), space.get(), H5P_DEFAULT, ptrs.data()), "H5Dvlen_reclaim " + name);
  } else {
    const std::size_t width = H5Tget_size(file_type.get());
    Handle t = fixed_string_type(width);
    std::vector<char> chars(n * width);
    check(H5Dread(ds.get(), t.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, chars.data()), "H5Dread " + name);
    for (std::size_t i = 0; i < n; ++i) {
      const char* s = chars.data() + i * width;
      out[i].assign(s, strnlen(s, width));
    }
  }
  return out;
}

std::vector<long long> read_ints(hid_t parent, const std::string& name) {
  Handle ds(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, ("opening dataset " + name).c_str());
  Handle space(H5Dget_space(ds.get()), H5Sclose, "H5Dget_space");
  std::vector<long long> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
  if (!v.empty()) check(H5Dread(ds.get(), H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "H5Dread " + name);
  return v;
}

std::string read_attr_string(hid_t obj, const std::string& name) {
  Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, ("opening attribute " + name).c_str());
  Handle t = utf8_string_type();
  char* p = nullptr;
  check(H5Aread(a.get(), t.get(), &p), "H5Aread " + name);
  std::string s = p ? p : "";
  Handle space = scalar_space();
  H5Dvlen_reclaim(t.get(), space.get(), H5P_DEFAULT, &p);
  return s;
}

std::vector<double> read_attr_doubles(hid_t obj, const std::string& name) {
  Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, ("opening attribute " + name).c_str());
  Handle space(H5Aget_space(a.get()), H5Sclose, "H5Aget_space");
  std::vector<double> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
  check(H5Aread(a.get(), H5T_NATIVE_DOUBLE, v.data()), "H5Aread " + name);
  return v;
}

double read_attr_double(hid_t obj, const std::string& name) {
  const std::vector<double> v = read_attr_doubles(obj, name);
  if (v.size() != 1) throw IoError("attribute " + name + " holds " + std::to_string(v.size()) + " numbers, not one");
  return v[0];
}

Table::Table(hid_t parent, const std::string& group, std::vector<Column> columns, std::size_t block)
    : columns_(std::move(columns)), block_(block) {
  group_ = exists(parent, group) ? open_group(parent, group) : create_group(parent, group);
  Handle str_type = utf8_string_type();
  for (const auto& c : columns_) {
    hid_t type = c.type == ColumnType::Float64 ? H5T_IEEE_F64LE
                 : c.type == ColumnType::Int8  ? H5T_STD_I8LE
                 : c.type == ColumnType::Int32 ? H5T_STD_I32LE
                                               : str_type.get();
    Handle ds = create_growing(group_.get(), c.name, type, block_, Filter::ShuffleDeflate);
    describe(ds.get(), c.unit, c.description);
    datasets_.push_back(std::move(ds));
    if (c.type == ColumnType::String) {
      str_buf_.emplace_back();
      str_buf_.back().reserve(block_);
    } else {
      num_buf_.emplace_back();
      num_buf_.back().reserve(block_);
    }
  }
}

Table::~Table() {
  try {
    flush();
    if (chunks_) chunks_->finish();  // before the datasets close
  } catch (...) {
    // A destructor must not throw; writers call flush() explicitly to see errors.
  }
}

void Table::append(const double* numbers, const std::vector<std::string>& strings) {
  for (std::size_t i = 0; i < num_buf_.size(); ++i) num_buf_[i].push_back(numbers[i]);
  for (std::size_t i = 0; i < str_buf_.size(); ++i) str_buf_[i].push_back(i < strings.size() ? strings[i] : "");
  if (++buffered_ >= block_) flush();
}

void Table::flush() {
  if (buffered_ == 0) return;
  Handle str_type = utf8_string_type();
  std::size_t ni = 0, si = 0;
  // Whatever happens below, these rows are consumed: a failed write is not retried.
  const std::size_t n = buffered_;
  buffered_ = 0;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    hid_t ds = datasets_[c].get();
    if (columns_[c].type == ColumnType::String) {
      auto& buf = str_buf_[si++];
      std::vector<const char*> ptrs;
      ptrs.reserve(buf.size());
      for (const auto& s : buf) ptrs.push_back(s.c_str());
      write_rows(ds, rows_, n, str_type.get(), ptrs.data(), columns_[c].name);
      buf.clear();
    } else {
      auto& buf = num_buf_[ni++];
      if (columns_[c].type == ColumnType::Float64) {
        // A chunk (the last one partial) goes to the chunk writer.
        if (chunks_ && rows_ % block_ == 0)
          chunks_->submit(ds, rows_, n, buf.data(), n, block_, columns_[c].name);
        else
          write_rows(ds, rows_, n, H5T_NATIVE_DOUBLE, buf.data(), columns_[c].name);
      } else {
        std::vector<int> ints(buf.begin(), buf.end());
        write_rows(ds, rows_, n, H5T_NATIVE_INT, ints.data(), columns_[c].name);
      }
      buf.clear();
    }
  }
  rows_ += n;
}

}  // namespace rollsim::h5
