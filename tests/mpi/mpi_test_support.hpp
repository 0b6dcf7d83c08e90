// Shared helpers of the MPI tests: one world communicator per process (with a timeout, so that a test that
// goes wrong on one rank fails the others instead of hanging them) and an all_gather of int64 values.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "meshloom/backends/mpi_communicator.hpp"

namespace meshloom::testing {

inline mpi::MpiCommunicator& world() {
  static std::unique_ptr<mpi::MpiCommunicator> w = [] {
    auto c = mpi::MpiCommunicator::world();
    c->set_timeout(std::chrono::seconds(20));
    return c;
  }();
  return *w;
}

inline std::vector<std::int64_t> gather_i64(comm::Communicator& c, std::int64_t value) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(c.size()), -1);
  c.all_gather(comm::ConstBuffer{&value, 1, DType::Int64}, comm::Buffer{out.data(), out.size(), DType::Int64});
  return out;
}

}  // namespace meshloom::testing
