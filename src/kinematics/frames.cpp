#include "rollsim/kinematics/frames.hpp"

#include <stdexcept>

namespace rollsim::kinematics {

Vec3 add(const Vec3& a, const Vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 scale(const ex& s, const Vec3& a) { return {s * a[0], s * a[1], s * a[2]}; }
ex dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec3 mul(const Mat3& m, const Vec3& v) { return {dot(m[0], v), dot(m[1], v), dot(m[2], v)}; }
Vec3 mul_transposed(const Mat3& m, const Vec3& v) {
  Vec3 r{0, 0, 0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[j] += m[i][j] * v[i];
  return r;
}
Mat3 transpose(const Mat3& m) {
  Mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[i][j] = m[j][i];
  return r;
}
Mat3 mul(const Mat3& a, const Mat3& b) {
  Mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
  return r;
}
Mat3 identity() { return {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}}; }
ex determinant(const Mat3& m) { return dot(m[0], cross(m[1], m[2])); }
Vec3 unit(int axis) {
  Vec3 e{0, 0, 0};
  e[static_cast<std::size_t>(axis)] = 1;
  return e;
}

Mat3 axis_rotation(int axis, const ex& angle) {
  const ex c = GiNaC::cos(angle), s = GiNaC::sin(angle);
  switch (axis) {
    case 0: return {Vec3{1, 0, 0}, Vec3{0, c, -s}, Vec3{0, s, c}};
    case 1: return {Vec3{c, 0, s}, Vec3{0, 1, 0}, Vec3{-s, 0, c}};
    default: return {Vec3{c, -s, 0}, Vec3{s, c, 0}, Vec3{0, 0, 1}};
  }
}

Mat3 axis_angle_rotation(const Vec3& n, const ex& angle) {
  const ex c = GiNaC::cos(angle), s = GiNaC::sin(angle), v = 1 - c;
  Mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[i][j] = v * n[i] * n[j] + (i == j ? c : ex(0));
  r[0][1] -= s * n[2];
  r[1][0] += s * n[2];
  r[0][2] += s * n[1];
  r[2][0] -= s * n[1];
  r[1][2] -= s * n[0];
  r[2][1] += s * n[0];
  return r;
}

Vec3 skew_vector(const Mat3& m) {
  const ex h = GiNaC::numeric(1, 2);
  return {h * (m[2][1] - m[1][2]), h * (m[0][2] - m[2][0]), h * (m[1][0] - m[0][1])};
}

ex Symbols::rate(const ex& e) const {
  ex r = d(e, t);
  for (std::size_t i = 0; i < q.size(); ++i) {
    r += d(e, q[i]) * qd[i];
    r += d(e, qd[i]) * a[i];
  }
  return r;
}
Vec3 Symbols::rate(const Vec3& v) const { return {rate(v[0]), rate(v[1]), rate(v[2])}; }
Mat3 Symbols::rate(const Mat3& m) const { return {rate(m[0]), rate(m[1]), rate(m[2])}; }

int axis_of(char letter) {
  switch (letter) {
    case 'X': return 0;
    case 'Y': return 1;
    case 'Z': return 2;
    default: return -1;
  }
}

Frame Frame::world() {
  Frame f;
  f.name = "world";
  return f;
}

Frame Frame::from_sequence(const std::string& name, const Frame& parent, const std::string& sequence,
                           const std::vector<ex>& angles, const Symbols& s) {
  if (sequence.empty() || sequence.size() > 3)
    throw std::invalid_argument("a rotation sequence has 1 to 3 letters, not " + std::to_string(sequence.size()));
  if (angles.size() != sequence.size())
    throw std::invalid_argument("the sequence " + sequence + " takes " + std::to_string(sequence.size()) +
                                " angles, not " + std::to_string(angles.size()));
  std::vector<int> axes;
  for (char c : sequence) {
    if (axis_of(c) < 0) throw std::invalid_argument(std::string("the letter '") + c + "' is not X, Y or Z");
    axes.push_back(axis_of(c));
  }
  for (std::size_t k = 1; k < axes.size(); ++k)
    if (axes[k] == axes[k - 1])
      throw std::invalid_argument("the sequence " + sequence + " turns twice in a row about " + sequence[k] +
                                  ": the two angles are one rotation (adjacent letters must differ)");
  Frame f;
  f.name = name;
  // The partial products R_1 .. R_k (local) give the world axes of the later rotations.
  Mat3 partial = identity();
  std::vector<ex> rates;
  std::vector<Mat3> local;
  Mat3 rate_map;  // columns: the local axes of the rates, in the parent's axes
  f.w = parent.w;
  for (std::size_t k = 0; k < axes.size(); ++k) {
    const Vec3 axis_parent = mul(partial, unit(axes[k]));
    const ex rate = s.rate(angles[k]);
    rates.push_back(rate);
    f.w = add(f.w, scale(rate, mul(parent.R, axis_parent)));
    for (int i = 0; i < 3; ++i) rate_map[static_cast<std::size_t>(i)][k] = axis_parent[static_cast<std::size_t>(i)];
    local.push_back(axis_rotation(axes[k], angles[k]));
    partial = mul(partial, local.back());
  }
  f.R = mul(parent.R, partial);
  // In the body's axes: the parent's rate seen through the whole sequence, then each angle's rate seen through the
  // rotations after it.
  f.w_body = mul_transposed(partial, parent.w_body);
  for (std::size_t k = 0; k < axes.size(); ++k) {
    Vec3 e = unit(axes[k]);
    for (std::size_t j = k + 1; j < axes.size(); ++j) e = mul_transposed(local[j], e);
    f.w_body = add(f.w_body, scale(rates[k], e));
  }
  if (axes.size() == 3) {
    f.sequence = sequence;
    f.chart_determinant = determinant(rate_map).expand();  // Mat3 rows: [i][k] = component i of the k-th axis
  }
  return f;
}

Frame Frame::from_axis_angle(const std::string& name, const Frame& parent, const Vec3& axis, const ex& angle,
                             const Symbols& s) {
  const ex norm = GiNaC::sqrt(dot(axis, axis));
  const Vec3 n = scale(1 / norm, axis);
  const Mat3 local = axis_angle_rotation(n, angle);
  const ex rate = s.rate(angle);
  Frame f;
  f.name = name;
  f.R = mul(parent.R, local);
  f.w = add(parent.w, scale(rate, mul(parent.R, n)));
  f.w_body = add(mul_transposed(local, parent.w_body), scale(rate, n));
  return f;
}

Frame Frame::from_matrix(const std::string& name, const Frame& parent, const Mat3& M, const Symbols& s) {
  const Mat3 Md = s.rate(M);
  Frame f;
  f.name = name;
  f.R = mul(parent.R, M);
  f.w = add(parent.w, mul(parent.R, skew_vector(mul(Md, transpose(M)))));
  f.w_body = add(mul_transposed(M, parent.w_body), skew_vector(mul(transpose(M), Md)));
  return f;
}

}  // namespace rollsim::kinematics
