// reduce_scatter: count * n elements in, count out; rank r keeps block r of the reduction.
//   counts      count = (S / s) / n, bytes = count * s * n (the whole array)
//   bus factor  (n-1)/n
//   check       element k of rank me's output is reduced_output(op, me * count + k, n)
#include "collectives/collective.hpp"
#include "collectives/known_data.hpp"

namespace meshloom::launcher {

namespace {

class ReduceScatter final : public CollectiveDef {
public:
  BenchCollective id() const noexcept override { return BenchCollective::ReduceScatter; }
  std::string_view name() const noexcept override { return "reduce_scatter"; }
  bool reduces() const noexcept override { return true; }

  SizeCounts counts(std::int64_t elements, std::int64_t item, std::int64_t n) const override {
    const std::int64_t count = elements / n;
    return {.count = count, .bytes = count * item * n, .in_count = count * n, .out_count = count};
  }
  double bus_factor(std::int64_t n) const override { return static_cast<double>(n - 1) / static_cast<double>(n); }

  void fill(CollectiveData& d) const override {
    known::size_buffers(d, false);
    known::fill_reduced(d);
  }
  std::int64_t wrong(const CollectiveData& d) const override { return known::wrong_reduced_output(d, d.me * d.counts.count); }
  void launch(comm::Communicator& group, void* in, void* out, const SizeCounts& c, DType dtype,
              ReduceOp op) const override {
    group.reduce_scatter({in, static_cast<std::size_t>(c.in_count), dtype},
                         {out, static_cast<std::size_t>(c.out_count), dtype}, op);
  }
};

}  // namespace

const CollectiveDef& reduce_scatter_def() {
  static const ReduceScatter def;
  return def;
}

}  // namespace meshloom::launcher
