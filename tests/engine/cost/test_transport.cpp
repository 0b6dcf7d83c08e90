// The transport settings a calibration records (comm/transport.hpp): which environment variables shape a
// collective's cost, what an environment gives, and how two records of them differ.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "meshloom/comm/transport.hpp"

namespace meshloom::comm {
namespace {

TEST(Transport, WhichVariablesShapeACollectivesCost) {
  for (const char* name : {"OMPI_MCA_btl", "OMPI_MCA_btl_vader_single_copy_mechanism", "OMPI_MCA_pml",
                           "OMPI_MCA_pml_ucx_tls", "OMPI_MCA_mtl", "OMPI_MCA_coll_tuned_use_dynamic_rules",
                           "OMPI_MCA_coll", "OMPI_MCA_osc", "OMPI_MCA_mpi_yield_when_idle", "OMPI_MCA_mpi_leave_pinned",
                           "UCX_TLS", "UCX_NET_DEVICES", "NCCL_PROTO", "NCCL_ALGO", "NCCL_SOCKET_IFNAME",
                           "NCCL_DEBUG_X"}) {
    EXPECT_TRUE(shapes_collective_cost(name)) << name;
  }
  // mpirun's own bookkeeping (different in every job), logging, a rendezvous, and names that only look alike.
  for (const char* name : {"OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_hnp_uri", "OMPI_MCA_rmaps_base_oversubscribe",
                           "OMPI_MCA_mpi_oversubscribe", "OMPI_MCA_btlx", "OMPI_MCA_collective", "OMPI_MCA_",
                           "UCX_LOG_LEVEL", "UCX_", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE",
                           "NCCL_COMM_ID", "NCCL_", "HOME", "", "ompi_mca_btl"}) {
    EXPECT_FALSE(shapes_collective_cost(name)) << name;
  }
}

TEST(Transport, AnEnvironmentsSettings) {
  // The header's example.
  EXPECT_EQ(transport_settings({"OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_ess_base_jobid=1",
                                "NCCL_DEBUG=INFO", "HOME=/root"}),
            (TransportSettings{{"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}}));
  // Values keep their '=' and may be empty; entries without '=' or that a record cannot hold are left out.
  EXPECT_EQ(transport_settings({"NCCL_ALGO=Ring", "UCX_TLS=", "OMPI_MCA_btl=^vader=x", "NCCL_PROTO",
                                "NCCL_NET=a\tb", "NCCL_IB_HCA=" + std::string(kMaxTransportChars + 1, 'm'),
                                "NCCL_SOCKET_IFNAME=\xff"}),
            (TransportSettings{{"NCCL_ALGO", "Ring"}, {"OMPI_MCA_btl", "^vader=x"}, {"UCX_TLS", ""}}));
  EXPECT_EQ(transport_settings({"NCCL_IB_HCA=" + std::string(kMaxTransportChars, 'm')}).size(), 1U);
  EXPECT_TRUE(transport_settings({}).empty());
}

TEST(Transport, HowTwoRecordsDiffer) {
  // The header's example.
  EXPECT_EQ(transport_difference({{"OMPI_MCA_btl", "^vader"}}, "the calibration", {}, "this job"),
            "OMPI_MCA_btl is \"^vader\" in the calibration and unset in this job");
  EXPECT_EQ(transport_difference({}, "a", {}, "b"), "");
  const TransportSettings a{{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "LL"}, {"UCX_TLS", "sm"}};
  EXPECT_EQ(transport_difference(a, "a", a, "b"), "");
  const TransportSettings b{{"NCCL_PROTO", "Simple"}, {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"},
                            {"UCX_TLS", "sm"}};
  EXPECT_EQ(transport_difference(a, "the calibration", b, "\"v3.jsonl\""),
            "NCCL_ALGO is \"Ring\" in the calibration and unset in \"v3.jsonl\"; NCCL_PROTO is \"LL\" in the "
            "calibration and \"Simple\" in \"v3.jsonl\"; OMPI_MCA_btl_vader_single_copy_mechanism is unset in the "
            "calibration and \"none\" in \"v3.jsonl\"");
  // An empty value is a setting, not unset.
  EXPECT_EQ(transport_difference({{"UCX_TLS", ""}}, "a", {}, "b"), "UCX_TLS is \"\" in a and unset in b");
}

}  // namespace
}  // namespace meshloom::comm
