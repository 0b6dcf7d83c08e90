// Helpers shared by the DeviceMesh tests of tests/engine/mesh: the error checker, small RankTensor builders and
// readers, and the naive model (row-major index arithmetic on the root rank tensor) the views are checked against.
// Header-only; a test file includes it and writes `using namespace meshloom::testing;`.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "support/expect_error.hpp"

namespace meshloom::testing {

using meshloom::AxisRef;
using meshloom::DeviceMesh;
using meshloom::Error;
using meshloom::ErrorKind;
using meshloom::RankTensor;
using Ranks = std::vector<std::int64_t>;
using Rows = std::vector<Ranks>;
using Names = DeviceMesh::Names;

// Evaluates `stmt`, which must throw a meshloom::Error of `kind` whose message holds every phrase given after it.
#define EXPECT_MESH_ERROR(stmt, kind, ...)                                          \
  do {                                                                              \
    SCOPED_TRACE(#stmt);                                                            \
    ::meshloom::testing::expect_error([&] { (void)(stmt); }, kind, {__VA_ARGS__}); \
  } while (0)

// The n ranks start, start + 1, ..., start + n - 1.
inline Ranks iota(std::int64_t n, std::int64_t start = 0) {
  Ranks r(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = start + static_cast<std::int64_t>(i);
  return r;
}

// The rows of a tensor of shape {rows, ...}: one flat list per leading index.
inline Rows rows(const RankTensor& t) {
  Rows out;
  if (t.shape.empty() || t.shape[0] == 0) return out;
  const auto n = static_cast<std::size_t>(t.shape[0]);
  const std::size_t len = t.values.size() / n;
  for (std::size_t i = 0; i < n; ++i) {
    out.emplace_back(t.values.begin() + static_cast<std::ptrdiff_t>(i * len),
                     t.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * len));
  }
  return out;
}

// A RankTensor of the given shape holding `values` in row-major order.
inline RankTensor tensor(Ranks shape, Ranks values) { return RankTensor{std::move(shape), std::move(values)}; }

// ---- Naive model: row-major index arithmetic on the root rank tensor ----------------------------------------

// The row-major strides of `shape` (the last axis has stride 1).
inline Ranks suffix_strides(const Ranks& shape) {
  Ranks s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// The row-major coordinate of the flat `index` in a tensor of `shape`.
inline Ranks unravel(std::int64_t index, const Ranks& shape) {
  Ranks c(shape.size(), 0);
  for (std::size_t i = shape.size(); i-- > 0;) {
    c[i] = index % shape[i];
    index /= shape[i];
  }
  return c;
}

// The product of the entries of `v` (1 for none).
inline std::int64_t product(const Ranks& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

// For each coordinate of the dims not in `keep` (row-major), the sub-tensor over `keep`, in the order of
// `keep`: PyTorch's mesh.permute(rest..., keep...).reshape(-1, keep sizes...).
inline RankTensor project(const Ranks& shape, const Ranks& values, const std::vector<std::size_t>& keep) {
  std::vector<std::size_t> rest;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (std::find(keep.begin(), keep.end(), d) == keep.end()) rest.push_back(d);
  }
  Ranks rest_shape, keep_shape;
  for (auto d : rest) rest_shape.push_back(shape[d]);
  for (auto d : keep) keep_shape.push_back(shape[d]);
  const Ranks strides = suffix_strides(shape);
  RankTensor t;
  t.shape.push_back(product(rest_shape));
  t.shape.insert(t.shape.end(), keep_shape.begin(), keep_shape.end());
  for (std::int64_t o = 0; o < product(rest_shape); ++o) {
    const Ranks rc = unravel(o, rest_shape);
    for (std::int64_t i = 0; i < product(keep_shape); ++i) {
      const Ranks kc = unravel(i, keep_shape);
      std::int64_t index = 0;
      for (std::size_t j = 0; j < rest.size(); ++j) index += rc[j] * strides[rest[j]];
      for (std::size_t j = 0; j < keep.size(); ++j) index += kc[j] * strides[keep[j]];
      t.values.push_back(values[static_cast<std::size_t>(index)]);
    }
  }
  return t;
}

// The row of `t` that holds `rank`, as a {1, ...} tensor, or nothing.
inline std::optional<RankTensor> row_holding(const RankTensor& t, std::int64_t rank) {
  const auto rs = rows(t);
  for (const auto& r : rs) {
    if (std::find(r.begin(), r.end(), rank) != r.end()) {
      RankTensor out{t.shape, r};
      out.shape[0] = 1;
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace meshloom::testing
