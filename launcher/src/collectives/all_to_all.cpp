// all_to_all: count * n elements in and out; block j of rank r goes to block r of rank j.
//   counts      count = (S / s) / n elements to each peer, bytes = count * s * n (the whole array)
//   bus factor  (n-1)/n
//   check       element k of block j of rank me's output is mix(j, me * count + k): element me*count+k of rank j
#include "collectives/collective.hpp"
#include "collectives/known_data.hpp"

namespace meshloom::launcher {

namespace {

class AllToAll final : public CollectiveDef {
public:
  BenchCollective id() const noexcept override { return BenchCollective::AllToAll; }
  std::string_view name() const noexcept override { return "all_to_all"; }

  SizeCounts counts(std::int64_t elements, std::int64_t item, std::int64_t n) const override {
    const std::int64_t count = elements / n;
    return {.count = count, .bytes = count * item * n, .in_count = count * n, .out_count = count * n};
  }
  double bus_factor(std::int64_t n) const override { return static_cast<double>(n - 1) / static_cast<double>(n); }

  void fill(CollectiveData& d) const override {
    known::size_buffers(d, false);
    known::fill_moved(d, static_cast<std::uint64_t>(d.me));
  }
  std::int64_t wrong(const CollectiveData& d) const override {
    const auto count = static_cast<std::size_t>(d.counts.count);
    const std::size_t mine = static_cast<std::size_t>(d.me) * count;
    return known::wrong_moved(d.out, d.counts.out_count, d.item(), [&](std::size_t e) {
      return std::pair<std::uint64_t, std::uint64_t>{e / count, mine + e % count};
    });
  }
  void launch(comm::Communicator& group, void* in, void* out, const SizeCounts& c, DType dtype,
              ReduceOp /*op*/) const override {
    group.all_to_all({in, static_cast<std::size_t>(c.in_count), dtype}, {out, static_cast<std::size_t>(c.out_count), dtype});
  }
};

}  // namespace

const CollectiveDef& all_to_all_def() {
  static const AllToAll def;
  return def;
}

}  // namespace meshloom::launcher
