// broadcast: count elements from root 0 to every rank, in place.
//   counts      count = S / s, bytes = count * s
//   bus factor  1
//   check       element i of every rank's buffer is mix(0, i), root 0's element i (the other ranks start from a
//               different pattern, so a rank the broadcast did not reach is caught)
#include "collectives/collective.hpp"
#include "collectives/known_data.hpp"

namespace meshloom::launcher {

namespace {

constexpr std::uint64_t kNotRoot = 1000003;  // the pattern offset of the ranks that receive

class Broadcast final : public CollectiveDef {
public:
  BenchCollective id() const noexcept override { return BenchCollective::Broadcast; }
  std::string_view name() const noexcept override { return "broadcast"; }
  bool rooted() const noexcept override { return true; }
  bool in_place() const noexcept override { return true; }

  SizeCounts counts(std::int64_t elements, std::int64_t item, std::int64_t /*n*/) const override {
    return {.count = elements, .bytes = elements * item, .in_count = elements, .out_count = elements};
  }
  double bus_factor(std::int64_t /*n*/) const override { return 1.0; }

  void fill(CollectiveData& d) const override {
    known::size_buffers(d, true);
    known::fill_moved(d, d.me == 0 ? 0 : static_cast<std::uint64_t>(d.me) + kNotRoot);
  }
  std::int64_t wrong(const CollectiveData& d) const override {
    return known::wrong_moved(d.in, d.counts.in_count, d.item(),
                              [](std::size_t i) { return std::pair<std::uint64_t, std::uint64_t>{0, i}; });
  }
  void launch(comm::Communicator& group, void* in, void* /*out*/, const SizeCounts& c, DType dtype,
              ReduceOp /*op*/) const override {
    group.broadcast({in, static_cast<std::size_t>(c.in_count), dtype}, 0);
  }
};

}  // namespace

const CollectiveDef& broadcast_def() {
  static const Broadcast def;
  return def;
}

}  // namespace meshloom::launcher
