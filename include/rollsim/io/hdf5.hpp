#pragma once
/// \file Move-only RAII handles over the HDF5 C API, and the few writes rollsim needs: scalar and string
/// attributes, 1-D and 2-D datasets, and growing 1-D columns appended in blocks.
#include <hdf5.h>

#include <string>
#include <vector>

namespace rollsim::h5 {

class ChunkWriter;

/// An owned hid_t, closed with the right H5*close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer, const char* what);
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  hid_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }
  void reset();

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

/// Throws IoError naming `what` and the HDF5 error stack if status < 0.
void check(herr_t status, const std::string& what);

Handle create_file(const std::string& path);  ///< truncates
Handle open_file_readonly(const std::string& path);
Handle create_group(hid_t parent, const std::string& name);
Handle open_group(hid_t parent, const std::string& name);
bool exists(hid_t parent, const std::string& path);

void write_attr(hid_t obj, const std::string& name, double v);
void write_attr(hid_t obj, const std::string& name, long long v);
void write_attr(hid_t obj, const std::string& name, const std::string& v);
void write_attr(hid_t obj, const std::string& name, const char* v);
/// A 1-D array of doubles.
void write_attr(hid_t obj, const std::string& name, const std::vector<double>& v);

/// A fixed 1-D double dataset with unit and description attributes.
void write_vector(hid_t parent, const std::string& name, const std::vector<double>& v, const std::string& unit = "",
                  const std::string& description = "");
void write_ints(hid_t parent, const std::string& name, const std::vector<long long>& v, const std::string& description = "");
void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& v,
                   const std::string& description = "");
/// A 2-D dataset, row-major: data[i * cols + j] is element (i, j); h5py reads shape (rows, cols).
void write_matrix(hid_t parent, const std::string& name, const std::vector<double>& data, std::size_t rows,
                  std::size_t cols, const std::string& description = "");

/// Variable-length UTF-8 strings.
Handle utf8_string_type();
/// UTF-8 strings of at most `width` bytes, stored NUL-padded in `width` bytes each.
Handle fixed_string_type(std::size_t width);
/// The `unit` and `description` attributes of a dataset, each when not empty.
void describe(hid_t ds, const std::string& unit, const std::string& description);

/// The filters of a growing dataset: none, deflate, or HDF5's byte shuffle then deflate (level 1 either way).
enum class Filter { None, Deflate, ShuffleDeflate };
/// A dataset of `type` that grows by rows: chunked by `chunk` rows and filtered (not variable-length strings, which
/// live in the global heap), with no chunk cache (rows are written once, in blocks); rows never written read as
/// `*fill` (a value of `type`), when given. A row is one value, or an array of `row_shape` (up to 2 dimensions:
/// the dataset's shape is rows x row_shape). With `by_column` a chunk holds `chunk` rows of one value of the row
/// (a column: chunk shape chunk x 1 x 1) rather than whole rows, so that each column's values are shuffled and
/// deflated together (write_chunk's `column`).
Handle create_growing(hid_t parent, const std::string& name, hid_t type, std::size_t chunk, Filter filter,
                      const void* fill = nullptr, const std::vector<std::size_t>& row_shape = {},
                      bool by_column = false);
/// Write `n` rows of `mem_type` from `data` (whole rows, row-major) at row `first` of a growing dataset, growing it
/// to first + n rows.
void write_rows(hid_t ds, std::size_t first, std::size_t n, hid_t mem_type, const void* data, const std::string& name);
/// The largest rank of a growing dataset (rows x up to 2 dimensions).
inline constexpr int kMaxGrowingRank = 3;
/// Extends a growing dataset to at least `rows` rows; returns its rank and puts the extent of its other dimensions
/// in row_shape[1..rank-1]. Throws IoError naming `name`.
int grow_rows(hid_t ds, std::size_t rows, hsize_t* row_shape, const std::string& name);

/// Reading back (tests, the sweep merger).
std::vector<double> read_vector(hid_t parent, const std::string& name);
std::string read_attr_string(hid_t obj, const std::string& name);
/// A 1-D string dataset, variable- or fixed-length (NUL padding removed).
std::vector<std::string> read_strings(hid_t parent, const std::string& name);
/// A 1-D integer dataset.
std::vector<long long> read_ints(hid_t parent, const std::string& name);
double read_attr_double(hid_t obj, const std::string& name);
/// A numeric attribute as doubles (a scalar gives one).
std::vector<double> read_attr_doubles(hid_t obj, const std::string& name);

/// The element type of a growing column.
enum class ColumnType { Float64, Int8, Int32, String };

/// A table of growing 1-D columns in one group, chunked, shuffled and deflated, appended in whole blocks
/// so that memory stays flat however long the run.
class Table {
 public:
  struct Column {
    std::string name, unit, description;
    ColumnType type = ColumnType::Float64;
  };
  Table(hid_t parent, const std::string& group, std::vector<Column> columns, std::size_t block = 4096);
  /// The float64 columns' blocks (each a chunk, the last one partial) go through `chunks`, compressed on its
  /// thread; it must outlive the table (the table's destructor calls its finish()). Null: HDF5 filters them.
  void compress_with(ChunkWriter* chunks) { chunks_ = chunks; }
  Table(Table&&) = default;
  ~Table();
  /// Append one row; `numbers` holds the numeric columns in order, `strings` the string columns in order.
  void append(const double* numbers, const std::vector<std::string>& strings = {});
  void flush();
  std::size_t rows() const { return rows_; }
  hid_t group() const { return group_.get(); }

 private:
  std::vector<Column> columns_;
  Handle group_;
  std::vector<Handle> datasets_;
  std::vector<std::vector<double>> num_buf_;
  std::vector<std::vector<std::string>> str_buf_;
  std::size_t block_, rows_ = 0, buffered_ = 0;
  ChunkWriter* chunks_ = nullptr;
};

}  // namespace rollsim::h5
