// Private to the engine: the local-tensor operations of the simulator (simulator.cpp), shared with the executor
// (executor.cpp) so that both apply the same data-layout rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/simulator.hpp"

namespace meshloom::detail {

// A row-major shape seen around one dim: `outer` blocks of `extent` rows of `inner` elements.
struct Split {
  std::size_t outer = 1;
  std::size_t extent = 0;
  std::size_t inner = 1;
};

[[nodiscard]] inline Split split_at(const std::vector<std::int64_t>& shape, std::size_t dim) {
  Split s;
  for (std::size_t d = 0; d < dim; ++d) s.outer *= static_cast<std::size_t>(shape[d]);
  s.extent = static_cast<std::size_t>(shape[dim]);
  for (std::size_t d = dim + 1; d < shape.size(); ++d) s.inner *= static_cast<std::size_t>(shape[d]);
  return s;
}

// Elements of a row-major shape.
[[nodiscard]] inline std::size_t count_of(const std::vector<std::int64_t>& shape) {
  std::size_t n = 1;
  for (const auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

// [offset, offset + size) of t along dim.
[[nodiscard]] LocalTensor slice(const LocalTensor& t, std::size_t dim, std::int64_t offset, std::int64_t size);
// torch.chunk piece `index` of `parts` along dim.
[[nodiscard]] LocalTensor chunk(const LocalTensor& t, std::size_t dim, std::int64_t parts, std::int64_t index);
// Concatenation along dim; the pieces must agree on every other dim.
[[nodiscard]] LocalTensor concat(const std::vector<const LocalTensor*>& pieces, std::size_t dim);
// The reduce ops of a P -> ... step, one per axis of the step (a merged step takes each axis' op from `before`).
[[nodiscard]] std::vector<ReduceOp> step_ops(const PlanStep& step, std::size_t mesh_ndim);

}  // namespace meshloom::detail
