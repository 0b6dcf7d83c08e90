// The main of the MPI GoogleTest programs: initialises MPI, lets only rank 0 print the usual report (other
// ranks print their failed assertions only, prefixed with their rank), and exits non-zero on every rank when
// any rank failed (MPI_Allreduce of the failure flag).
#include <mpi.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <exception>
#include <string>

#include "meshloom/backends/mpi_communicator.hpp"

namespace {

class FailurePrinter : public ::testing::EmptyTestEventListener {
public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestStart(const ::testing::TestInfo& info) override {
    test_ = std::string(info.test_suite_name()) + "." + info.name();
  }
  // (UnitTest::current_test_info() must not be called here: GoogleTest holds its mutex during this callback.)
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] FAILED %s at %s:%d\n%s\n", rank_, test_.c_str(),
                 result.file_name() ? result.file_name() : "?", result.line_number(), result.message());
    std::fflush(stderr);
  }

private:
  int rank_;
  std::string test_ = "(outside a test)";
};

}  // namespace

int main(int argc, char** argv) {
  try {
    meshloom::mpi::MpiSession session(&argc, &argv);
    ::testing::InitGoogleTest(&argc, argv);
    const int rank = session.world_rank();
    if (rank != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new FailurePrinter(rank));
    }
    const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && any != 0 && failed == 0) {
      std::fprintf(stderr, "[rank 0] tests failed on another rank (see the [rank N] lines above)\n");
    }
    return any != 0 ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi test main: %s\n", e.what());
    return 2;
  }
}
