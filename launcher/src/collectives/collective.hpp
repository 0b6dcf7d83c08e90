// One home per collective, as nccl-tests has one file per collective plugged into one driver. Everything bench,
// calibrate and --check know of a collective lives in its own file (all_reduce.cpp, all_gather.cpp,
// reduce_scatter.cpp, all_to_all.cpp, broadcast.cpp) behind this interface; the driver (bench_run.cpp) and the
// timing protocol (timing.hpp) know no collective by name. Adding gather or scatter is one file defining a
// CollectiveDef, one enum value in bench_format.hpp and one line in registry.cpp.
//
//   counts      nccl-tests' count and size columns and each rank's buffer lengths at a sweep size
//   bus_factor  nccl-tests' busbw factor (the same as the engine's bus_factor, which the calibrated model uses)
//   fill        the inputs of local rank `me` of n, chosen so that the exact output has a closed form
//   wrong       the elements of this rank's output that differ from that closed form, in O(elements of the output)
//               (never a loop over the group's ranks per element: a check must stay cheap at thousands of ranks)
//   launch      the call on a comm::Communicator
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "bench_format.hpp"
#include "meshloom/comm/communicator.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom::launcher {

// One rank's host buffers of one collective at one size: filled before the run, checked after it. Heap vectors, as
// the executor's (engine/src/plan/executor.cpp, Wire): a curve and a plan's step must time the same call on
// buffers placed alike (docs/benchmarks.md, "What did not help": page-aligned buffers).
struct CollectiveData {
  std::vector<std::byte> in;
  std::vector<std::byte> out;  // empty for an in-place collective (broadcast)
  SizeCounts counts;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;
  std::int64_t me = 0;  // this rank's index in its group
  std::int64_t n = 1;   // the group's size

  [[nodiscard]] std::size_t item() const noexcept { return static_cast<std::size_t>(itemsize(dtype)); }
};

class CollectiveDef {
public:
  virtual ~CollectiveDef() = default;

  [[nodiscard]] virtual BenchCollective id() const noexcept = 0;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  // It takes --op (all_reduce, reduce_scatter).
  [[nodiscard]] virtual bool reduces() const noexcept { return false; }
  // It has a root, always 0 here (broadcast).
  [[nodiscard]] virtual bool rooted() const noexcept { return false; }
  // Its output is its input buffer (broadcast): CollectiveData::out stays empty.
  [[nodiscard]] virtual bool in_place() const noexcept { return false; }

  // For a sweep size of `elements` whole elements of `item` bytes on n ranks (see bench_format.hpp).
  [[nodiscard]] virtual SizeCounts counts(std::int64_t elements, std::int64_t item, std::int64_t n) const = 0;
  [[nodiscard]] virtual double bus_factor(std::int64_t n) const = 0;

  // Sizes data.in (and data.out, poisoned) from data.counts and fills the input of rank data.me of data.n.
  virtual void fill(CollectiveData& data) const = 0;
  // The elements of this rank's output (data.out, or data.in when in_place) that are not the closed form.
  [[nodiscard]] virtual std::int64_t wrong(const CollectiveData& data) const = 0;
  // Runs the collective on `group`; in and out point at buffers of the communicator's memory holding
  // counts.in_count and counts.out_count elements (out is ignored when in_place).
  virtual void launch(comm::Communicator& group, void* in, void* out, const SizeCounts& counts, DType dtype,
                      ReduceOp op) const = 0;
};

// The definition of `c` (registry.cpp).
[[nodiscard]] const CollectiveDef& collective_def(BenchCollective c);
// Every definition, in the default order of --collectives.
[[nodiscard]] const std::vector<const CollectiveDef*>& collective_defs();

}  // namespace meshloom::launcher
