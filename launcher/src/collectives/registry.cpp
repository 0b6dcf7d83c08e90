// The collectives bench knows, in the default order of --collectives. A new collective: its file, its enum value
// (bench_format.hpp) and one line here.
#include <string>

#include "collectives/collective.hpp"
#include "meshloom/error.hpp"

namespace meshloom::launcher {

const CollectiveDef& all_reduce_def();
const CollectiveDef& all_gather_def();
const CollectiveDef& reduce_scatter_def();
const CollectiveDef& all_to_all_def();
const CollectiveDef& broadcast_def();

const std::vector<const CollectiveDef*>& collective_defs() {
  static const std::vector<const CollectiveDef*> defs{&all_reduce_def(), &all_gather_def(), &reduce_scatter_def(),
                                                      &all_to_all_def(), &broadcast_def()};
  return defs;
}

const CollectiveDef& collective_def(BenchCollective c) {
  for (const CollectiveDef* def : collective_defs()) {
    if (def->id() == c) return *def;
  }
  raise(ErrorKind::ValueError, "no definition for collective " + std::to_string(static_cast<int>(c)));
}

}  // namespace meshloom::launcher
