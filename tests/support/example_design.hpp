// The engine tests' bundled designs: resources/examples/NAME.meshloom.json, loaded. Header-only; include as
// "support/example_design.hpp" in a target that defines MESHLOOM_EXAMPLES_DIR (the tests' CMake does).
#pragma once

#include <filesystem>
#include <string>

#include "meshloom/design/design.hpp"

#ifndef MESHLOOM_EXAMPLES_DIR
#error "MESHLOOM_EXAMPLES_DIR must name resources/examples"
#endif

namespace meshloom::testing {

inline Design example_design(const std::string& name) {
  return load_design(std::filesystem::path(MESHLOOM_EXAMPLES_DIR) / (name + ".meshloom.json"));
}

}  // namespace meshloom::testing
