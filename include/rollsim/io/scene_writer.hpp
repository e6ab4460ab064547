#pragma once
/// \file The /scene group of a run's result file (docs/scene.md): the attributes of the model's scene, one subgroup
/// per drawable, and each sample's values as rows in step with /trajectory, buffered in blocks like its columns.
#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "rollsim/hybrid/scene.hpp"
#include "rollsim/io/hdf5.hpp"

namespace rollsim {

class SceneWriter {
 public:
  /// Creates /scene under `root` for the scene of `system` (which must not be empty), `block` rows per write.
  SceneWriter(hid_t root, const SceneSystem& system, std::size_t block);
  SceneWriter(const SceneWriter&) = delete;
  SceneWriter& operator=(const SceneWriter&) = delete;
  ~SceneWriter();
  /// One sample (the same as /trajectory's row): no allocation.
  void append(double t, const double* x, const double* y, int mode);
  /// Write the buffered rows and the extent so far. Throws IoError.
  void flush();
  /// The blocks (each a chunk, the last one partial) go through `chunks`, as h5::Table::compress_with says.
  void compress_with(h5::ChunkWriter* chunks) { chunks_ = chunks; }

 private:
  /// A dataset of one drawable: the columns [offset, offset + width) of a sample's values; one row when fixed.
  struct Dataset {
    h5::Handle handle;
    std::size_t offset, width;
    bool fixed;
  };
  /// Widens the extent by the point (or centre) and the drawing's reach along each axis there.
  void include(const double* point, const double* reach);

  const SceneSystem& system_;
  const Scene& scene_;
  h5::Handle group_;
  std::vector<Dataset> datasets_;
  /// A block's sample values, and one dataset's columns of them: left uninitialised (rows are written before they
  /// are read), so that the pages of a block a short run never fills are never touched.
  std::unique_ptr<double[]> buffer_, column_;
  std::size_t size_, block_, buffered_ = 0, rows_ = 0;
  std::array<double, 6> extent_;
  h5::ChunkWriter* chunks_ = nullptr;
};

}  // namespace rollsim
