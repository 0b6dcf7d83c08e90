// The timeout case, as its own program (the job cannot continue after a timed-out collective): the last rank
// skips an all_reduce on communicator "tp"; every other rank must get a TimeoutError naming its world rank, the
// communicator, the collective and the size, within the timeout, print "meshloom-timeout-ok", and abort.
// expect_abort.cmake then requires a non-zero exit status, that line, and no "meshloom-timeout-FAIL".
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "meshloom/backends/mpi_communicator.hpp"

int main(int argc, char** argv) {
  using namespace std::chrono;
  using meshloom::mpi::MpiCommunicator;
  meshloom::mpi::MpiSession session(&argc, &argv);
  auto world = MpiCommunicator::world();
  const int rank = world->rank();
  const int skipper = world->size() - 1;
  constexpr milliseconds kTimeout{400};

  auto tp = world->split(0, rank, "tp");
  tp->set_timeout(kTimeout);
  world->set_timeout(seconds(10));
  world->barrier();  // everyone is here; now the last rank goes missing

  if (rank == skipper) {
    // Never joins: MPI_Abort from a peer ends this process.
    std::this_thread::sleep_for(seconds(30));
    std::printf("meshloom-timeout-FAIL: rank %d was not aborted\n", rank);
    return 6;
  }
  std::vector<float> in(1024, 1.0F), out(1024, 0.0F);
  const auto start = steady_clock::now();
  try {
    tp->all_reduce(meshloom::comm::ConstBuffer{in.data(), in.size(), meshloom::DType::Float32},
                   meshloom::comm::Buffer{out.data(), out.size(), meshloom::DType::Float32}, meshloom::ReduceOp::Sum);
  } catch (const meshloom::comm::TimeoutError& e) {
    const auto waited = duration_cast<milliseconds>(steady_clock::now() - start);
    const std::string what = e.what();
    // The message names the place; the kind is the exception's type, which whoever reports it writes once.
    const bool named = what.rfind("world rank " + std::to_string(rank) + " ", 0) == 0 &&
                       what.find("'tp'") != std::string::npos && what.find("all_reduce") != std::string::npos &&
                       what.find("4096 bytes") != std::string::npos;
    const bool in_time = waited >= kTimeout && waited < kTimeout + seconds(3);
    std::printf("%s after %lld ms: %s\n", named && in_time ? "meshloom-timeout-ok" : "meshloom-timeout-FAIL",
                static_cast<long long>(waited.count()), what.c_str());
    tp->abort(named && in_time ? 3 : 5);
  } catch (const std::exception& e) {
    std::printf("meshloom-timeout-FAIL: unexpected error: %s\n", e.what());
    world->abort(5);
  }
  std::printf("meshloom-timeout-FAIL: rank %d: all_reduce completed without its peer\n", rank);
  world->abort(4);
  return 4;
}
