// all_reduce: count elements in and out on every rank, reduced with op.
//   counts      count = S / s, bytes = count * s (nccl-tests: the buffer, not the group's data)
//   bus factor  2(n-1)/n (a ring moves each byte twice: reduce-scatter then all-gather)
//   check       element i of every rank is reduced_output(op, i, n)
#include "collectives/collective.hpp"
#include "collectives/known_data.hpp"

namespace meshloom::launcher {

namespace {

class AllReduce final : public CollectiveDef {
public:
  BenchCollective id() const noexcept override { return BenchCollective::AllReduce; }
  std::string_view name() const noexcept override { return "all_reduce"; }
  bool reduces() const noexcept override { return true; }

  SizeCounts counts(std::int64_t elements, std::int64_t item, std::int64_t /*n*/) const override {
    return {.count = elements, .bytes = elements * item, .in_count = elements, .out_count = elements};
  }
  double bus_factor(std::int64_t n) const override {
    return 2.0 * static_cast<double>(n - 1) / static_cast<double>(n);
  }

  void fill(CollectiveData& d) const override {
    known::size_buffers(d, false);
    known::fill_reduced(d);
  }
  std::int64_t wrong(const CollectiveData& d) const override { return known::wrong_reduced_output(d, 0); }
  void launch(comm::Communicator& group, void* in, void* out, const SizeCounts& c, DType dtype,
              ReduceOp op) const override {
    group.all_reduce({in, static_cast<std::size_t>(c.in_count), dtype}, {out, static_cast<std::size_t>(c.out_count), dtype},
                     op);
  }
};

}  // namespace

const CollectiveDef& all_reduce_def() {
  static const AllReduce def;
  return def;
}

}  // namespace meshloom::launcher
