// Engine-internal: design validation in parts, for expand_workload, which validates the design once and expands
// its model once (validate_design would expand the model a second time to check it).
#pragma once

#include "meshloom/design/design.hpp"

namespace meshloom::detail {

// validate_design without validate_workload: every other rule, with the same messages.
void validate_design_without_workload(const Design& design);

}  // namespace meshloom::detail
