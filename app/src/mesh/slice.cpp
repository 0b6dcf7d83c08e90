#include "mesh/slice.hpp"

#include <cstddef>

#include "meshloom/layout/layout.hpp"

namespace meshloom::app {

SliceGroups slice_groups(const DeviceMesh& root, const std::vector<std::string>& axes) {
  const RankTensor instances = root.slice(axes).instances();  // throws PyTorch's errors for a bad pick
  SliceGroups out;
  out.axes = axes;
  const RankMap& map = root.rank_map();
  out.cell_group.assign(static_cast<std::size_t>(map.size()), -1);
  const std::size_t count = instances.shape.empty() ? 0 : static_cast<std::size_t>(instances.shape.front());
  if (count == 0) return out;
  const std::size_t size = instances.values.size() / count;
  out.groups.reserve(count);
  for (std::size_t g = 0; g < count; ++g) {
    const auto first = instances.values.begin() + static_cast<std::ptrdiff_t>(g * size);
    out.groups.emplace_back(first, first + static_cast<std::ptrdiff_t>(size));
    for (const std::int64_t rank : out.groups.back()) {
      if (const auto cell = map.position_of(rank)) out.cell_group[static_cast<std::size_t>(*cell)] = static_cast<std::int32_t>(g);
    }
  }
  return out;
}

}  // namespace meshloom::app
