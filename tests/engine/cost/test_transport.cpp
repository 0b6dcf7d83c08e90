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
                           "NCCL_DEBUG_X", "scheduler"}) {
    EXPECT_TRUE(shapes_collective_cost(name)) << name;
  }
  // mpirun's own bookkeeping (different in every job), logging, a rendezvous, and names that only look alike.
  for (const char* name : {"OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_hnp_uri", "OMPI_MCA_rmaps_base_oversubscribe",
                           "OMPI_MCA_mpi_oversubscribe", "OMPI_MCA_btlx", "OMPI_MCA_collective", "OMPI_MCA_",
                           "OMPI_MCA_btl_base_verbose", "OMPI_MCA_coll_base_verbose",
                           "UCX_LOG_LEVEL", "UCX_", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE",
                           "NCCL_COMM_ID", "NCCL_", "HOME", "", "ompi_mca_btl", "SCHEDULER", "schedulers"}) {
    EXPECT_FALSE(shapes_collective_cost(name)) << name;
  }
}

TEST(Transport, AnEnvironmentsSettings) {
  // The header's example.
  EXPECT_EQ(transport_settings({"OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_ess_base_jobid=1",
                                "NCCL_DEBUG=INFO", "HOME=/root"}),
            (TransportSettings{{"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}}));
  // Values keep their '=' and may be empty; a value a record cannot hold is "?"; entries without '=' are left out,
  // and the first of a name counts (as getenv reads it).
  EXPECT_EQ(transport_settings({"NCCL_ALGO=Ring", "UCX_TLS=", "OMPI_MCA_btl=^vader=x", "NCCL_PROTO",
                                "NCCL_NET=a\tb", "NCCL_IB_HCA=" + std::string(kMaxTransportChars + 1, 'm'),
                                "NCCL_SOCKET_IFNAME=\xff", "NCCL_ALGO=Tree"}),
            (TransportSettings{{"NCCL_ALGO", "Ring"},
                               {"NCCL_IB_HCA", "?"},
                               {"NCCL_NET", "?"},
                               {"NCCL_SOCKET_IFNAME", "?"},
                               {"OMPI_MCA_btl", "^vader=x"},
                               {"UCX_TLS", ""}}));
  const std::string longest(kMaxTransportChars, 'm');
  EXPECT_EQ(transport_settings({"NCCL_IB_HCA=" + longest}).at("NCCL_IB_HCA"), longest);
  EXPECT_TRUE(transport_settings({}).empty());
  // The scheduling policy is read from the process: a variable of its name is not it.
  EXPECT_TRUE(transport_settings({"scheduler=SCHED_RR priority 1"}).empty());
}

TEST(Transport, WhatARecordHolds) {
  EXPECT_TRUE(recordable_setting("none"));
  EXPECT_TRUE(recordable_setting(""));
  EXPECT_TRUE(recordable_setting("\u00e9t\u00e9"));
  EXPECT_TRUE(recordable_setting(std::string(kMaxTransportChars, 'x')));
  EXPECT_FALSE(recordable_setting(std::string(kMaxTransportChars + 1, 'x')));
  EXPECT_FALSE(recordable_setting("a\nb"));
  EXPECT_FALSE(recordable_setting("a\x7f"));
  EXPECT_FALSE(recordable_setting("\xff"));
}

TEST(Transport, TheSettingsABackendsCollectivesRunOn) {
  // The header's example.
  EXPECT_EQ(settings_of_backend(
                {{"NCCL_PROTO", "LL"}, {"OMPI_MCA_btl", "^vader"}, {"scheduler", "SCHED_RR priority 1"}}, "mpi"),
            (TransportSettings{{"OMPI_MCA_btl", "^vader"}, {"scheduler", "SCHED_RR priority 1"}}));
  // The scheduler counts on every backend.
  for (const char* backend : {"mpi", "nccl", "gloo"}) {
    EXPECT_EQ(settings_of_backend({{"scheduler", "SCHED_FIFO priority 2"}}, backend),
              (TransportSettings{{"scheduler", "SCHED_FIFO priority 2"}}))
        << backend;
    EXPECT_EQ(transport_difference(backend, {{"scheduler", "SCHED_RR priority 1"}}, "the calibration", {}, "this job"),
              "scheduler is \"SCHED_RR priority 1\" in the calibration and unset in this job")
        << backend;
  }
  const TransportSettings all{{"NCCL_PROTO", "LL"}, {"OMPI_MCA_pml", "ucx"}, {"UCX_TLS", "sm"}};
  EXPECT_EQ(settings_of_backend(all, "mpi"), (TransportSettings{{"OMPI_MCA_pml", "ucx"}, {"UCX_TLS", "sm"}}));
  EXPECT_EQ(settings_of_backend(all, "nccl"), (TransportSettings{{"NCCL_PROTO", "LL"}}));
  EXPECT_EQ(settings_of_backend(all, "gloo"), all);
  EXPECT_TRUE(settings_of_backend({}, "mpi").empty());
  // What a calibration of a backend and a measurement disagree on: only those settings (the header's example).
  EXPECT_EQ(transport_difference("mpi", {{"NCCL_PROTO", "LL"}}, "a", {}, "b"), "");
  EXPECT_EQ(transport_difference("nccl", {{"NCCL_PROTO", "LL"}}, "a", {}, "b"),
            "NCCL_PROTO is \"LL\" in a and unset in b");
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
  // An empty value is a setting, not unset; values are quoted as JSON strings.
  EXPECT_EQ(transport_difference({{"UCX_TLS", ""}}, "a", {}, "b"), "UCX_TLS is \"\" in a and unset in b");
  EXPECT_EQ(transport_difference({{"UCX_TLS", "say \"sm\""}}, "a", {}, "b"),
            "UCX_TLS is \"say \\\"sm\\\"\" in a and unset in b");
}

}  // namespace
}  // namespace meshloom::comm
