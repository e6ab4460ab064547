#include "rollsim/io/scene_writer.hpp"

#include "rollsim/io/chunk_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace rollsim {

namespace {

/// The subgroup's name: the drawing order in two digits, then the drawable's name.
std::string subgroup_name(std::size_t index, const std::string& name) {
  char prefix[24];
  std::snprintf(prefix, sizeof prefix, "%02zu_", index);
  return prefix + name;
}

}  // namespace

SceneWriter::SceneWriter(hid_t root, const SceneSystem& system, std::size_t block)
    : system_(system), scene_(system.scene()), size_(scene_.size()), block_(block) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  extent_ = {inf, -inf, inf, -inf, inf, -inf};
  group_ = h5::create_group(root, "scene");
  h5::write_attr(group_.get(), "format", 1LL);
  h5::write_attr(group_.get(), "dimension", static_cast<long long>(scene_.dimension));
  h5::write_attr(group_.get(), "length_unit", "m");
  std::size_t offset = 0;
  for (std::size_t i = 0; i < scene_.drawables.size(); ++i) {
    const Drawable& d = scene_.drawables[i];
    h5::Handle g = h5::create_group(group_.get(), subgroup_name(i, d.name));
    h5::write_attr(g.get(), "name", d.name);
    h5::write_attr(g.get(), "kind", draw_kind_name(d.kind));
    h5::write_attr(g.get(), "role", draw_role_name(d.role));
    h5::write_attr(g.get(), "color", d.color);
    h5::write_attr(g.get(), "static", d.fixed ? 1LL : 0LL);
    const std::size_t rows = d.fixed ? 1 : block_;
    auto dataset = [&](const char* name, std::size_t width, std::vector<std::size_t> shape) {
      // A drawable that moves is chunked by column (a coordinate, an entry of a rotation): a column's values are
      // shuffled and deflated together, and the constant ones (a planar scene's z, 6 of a planar rotation's 9
      // entries) deflate to almost nothing, where whole rows mixed them.
      datasets_.push_back({h5::create_growing(g.get(), name, H5T_IEEE_F64LE, rows, h5::Filter::ShuffleDeflate, nullptr,
                                              shape, !d.fixed),
                           offset, width, d.fixed});
      offset += width;
    };
    switch (d.kind) {
      case DrawKind::Disk:
        h5::write_attr(g.get(), "radius", d.radius);
        h5::write_attr(g.get(), "thickness", d.thickness);
        break;
      case DrawKind::Sphere: h5::write_attr(g.get(), "radius", d.radius); break;
      case DrawKind::Box:
        h5::write_attr(g.get(), "half_extents", std::vector<double>(d.half_extents.begin(), d.half_extents.end()));
        break;
      case DrawKind::Plane:
        h5::write_attr(g.get(), "half_size", std::vector<double>(d.half_size.begin(), d.half_size.end()));
        break;
      case DrawKind::Line: h5::write_attr(g.get(), "width", d.width); break;
      case DrawKind::Circle:
      case DrawKind::Point: h5::write_attr(g.get(), "radius", d.radius); break;
      case DrawKind::Contact: h5::write_attr(g.get(), "contact", d.contact); break;
      case DrawKind::Polygon:
      case DrawKind::Trail: break;
    }
    if (has_pose(d.kind)) {
      dataset("position", 3, {3});
      dataset("rotation", 9, {9});
    } else {
      dataset("points", 3 * d.points, {d.points, 3});
      if (d.force) dataset("force", 3, {3});
    }
  }
  std::size_t widest = 0;
  for (const auto& ds : datasets_) widest = std::max(widest, ds.width);
  buffer_.reset(new double[block_ * size_]);
  column_.reset(new double[block_ * widest]);
}

SceneWriter::~SceneWriter() {
  try {
    flush();
    if (chunks_) chunks_->finish();  // before the datasets close
  } catch (...) {
    // A destructor must not throw; the trajectory writer calls flush() to see errors.
  }
}

void SceneWriter::include(const double* point, const double* reach) {
  const int axes = scene_.dimension == 3 ? 3 : 2;  // a planar scene lies in z = 0
  for (int a = 0; a < axes; ++a)
    if (!std::isfinite(point[a]) || !std::isfinite(reach[a])) return;
  for (int a = 0; a < axes; ++a) {
    extent_[2 * a] = std::min(extent_[2 * a], point[a] - reach[a]);
    extent_[2 * a + 1] = std::max(extent_[2 * a + 1], point[a] + reach[a]);
  }
}

void SceneWriter::append(double t, const double* x, const double* y, int mode) {
  double* v = buffer_.get() + buffered_ * size_;
  system_.scene_values(t, x, y, mode, v);
  for (const Drawable& d : scene_.drawables) {
    const std::size_t points = has_pose(d.kind) ? 1 : d.points;
    double reach[3];
    d.reach(v, reach);
    for (std::size_t k = 0; k < points; ++k) include(v + 3 * k, reach);
    v += d.size();
  }
  if (rows_ == 0 && buffered_ == 0)
    for (const auto& ds : datasets_)
      if (ds.fixed) h5::write_rows(ds.handle.get(), 0, 1, H5T_NATIVE_DOUBLE, buffer_.get() + ds.offset, "scene");
  if (++buffered_ >= block_) flush();
}

void SceneWriter::flush() {
  if (buffered_ == 0) return;
  const std::size_t n = buffered_;
  buffered_ = 0;  // consumed whatever happens below: a failed write is not retried
  for (const auto& ds : datasets_) {
    if (ds.fixed) continue;
    if (chunks_ && rows_ % block_ == 0) {
      // A chunk per column: its n values, gathered from the block's rows.
      for (std::size_t c = 0; c < ds.width; ++c) {
        const double* from = buffer_.get() + ds.offset + c;
        for (std::size_t r = 0; r < n; ++r) column_[r] = from[r * size_];
        chunks_->submit(ds.handle.get(), rows_, n, column_.get(), n, block_, "scene", c);
      }
    } else {
      for (std::size_t r = 0; r < n; ++r)
        std::copy_n(buffer_.get() + r * size_ + ds.offset, ds.width, column_.get() + r * ds.width);
      h5::write_rows(ds.handle.get(), rows_, n, H5T_NATIVE_DOUBLE, column_.get(), "scene");
    }
  }
  rows_ += n;
  std::vector<double> extent(extent_.begin(), extent_.end());
  for (int a = scene_.dimension == 3 ? 3 : 2; a < 3; ++a) extent[2 * a] = extent[2 * a + 1] = 0;
  h5::write_attr(group_.get(), "extent", extent);
}

}  // namespace rollsim
