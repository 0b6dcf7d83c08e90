// Private to the engine: the local-tensor operations of the simulator (simulator.cpp), shared with the executor
// (executor.cpp) so that both apply the same data-layout rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/simulator.hpp"

namespace meshloom::detail {

// [offset, offset + size) of t along dim.
[[nodiscard]] LocalTensor slice(const LocalTensor& t, std::size_t dim, std::int64_t offset, std::int64_t size);
// torch.chunk piece `index` of `parts` along dim.
[[nodiscard]] LocalTensor chunk(const LocalTensor& t, std::size_t dim, std::int64_t parts, std::int64_t index);
// Concatenation along dim; the pieces must agree on every other dim.
[[nodiscard]] LocalTensor concat(const std::vector<const LocalTensor*>& pieces, std::size_t dim);
// The reduce ops of a P -> ... step, one per axis of the step (a merged step takes each axis' op from `before`).
[[nodiscard]] std::vector<ReduceOp> step_ops(const PlanStep& step, std::size_t mesh_ndim);

}  // namespace meshloom::detail
