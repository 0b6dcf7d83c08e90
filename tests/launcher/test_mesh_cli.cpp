// meshloom-launch mesh (and layout), run as a user runs it: --batch over a file of lines, the human output, exit
// statuses, the layout calculator's output limit.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch_support.hpp"

namespace {

using meshloom::test::launch;
using meshloom::test::Launched;
using meshloom::test::lines_of;

// The temporary files, removed when the test program ends.
const meshloom::test::ScratchDir scratch("meshloom_mesh_cli_");

TEST(MeshCli, BatchAnswersOneLinePerInputLineInOrder) {
  const std::string input =
      "{\"world\": 8, \"mesh\": {\"shape\": [2, 4], \"names\": [\"dp\", \"tp\"]}, \"ops\": [{\"op\": \"describe\"}]}\n"
      "not json at all\n"
      "\n"
      "{\"mesh\": {\"shape\": [4]}, \"ops\": [{\"op\": \"frob\"}, {\"op\": \"coordinate\", \"rank\": 3}]}\n"
      "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
      "\xff\xfe garbage \x01\n"
      "{\"mesh\": {\"shape\": [2]}}";  // no final newline
  const auto path = scratch.write("batch.jsonl", input);
  const Launched r = launch("mesh --batch < '" + path.string() + "' 2>/dev/null");
  EXPECT_EQ(r.status, 0);
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 7U) << r.out;
  EXPECT_EQ(lines[0],
            R"J({"ok":true,"results":[{"ok":true,"shape":[2,4],"names":["dp","tp"],"layout":"(2,4):(4,1)",)J"
            R"J("meshes":[[[0,1,2,3],[4,5,6,7]]],"dim_groups":{"dp":[[0,4],[1,5],[2,6],[3,7]],"tp":[[0,1,2,3],[4,5,6,7]]}}]})J");
  for (std::size_t i : {1U, 2U, 4U, 5U}) {
    const auto j = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(j["ok"], false) << lines[i];
    EXPECT_EQ(j["error"].template get<std::string>().rfind("ValueError: ", 0), 0U) << lines[i];
  }
  const auto third = nlohmann::json::parse(lines[3]);
  EXPECT_EQ(third["results"][0]["ok"], false);
  EXPECT_EQ(third["results"][1]["coordinate"].dump(), "[3]");
  EXPECT_EQ(lines[6], R"J({"ok":true,"results":[]})J");
  EXPECT_EQ(r.out.back(), '\n');
}

TEST(MeshCli, BatchWithAnEmptyInputWritesNothing) {
  const Launched r = launch("mesh --batch < /dev/null");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
}

TEST(MeshCli, BatchOutputLimitOption) {
  const auto path = scratch.write("limit.jsonl", "{\"mesh\": {\"shape\": [2, 4]}, \"ops\": [{\"op\": \"describe\"}]}\n");
  const Launched r = launch("mesh --batch --max-output-ranks 10 < '" + path.string() + "'");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "{\"ok\":true,\"results\":[{\"ok\":false,\"error\":\"ValueError: ops[0]: the result would hold 24 ranks, over the "
            "output limit of 10 ranks per line (0 already written on this line)\"}]}\n");
}

TEST(MeshCli, BatchExitsOneWhenStandardInputFails) {
  // Reading a directory fails (EISDIR): the exit status says so, and nothing is written.
  const Launched r = launch("mesh --batch < / 2>/dev/null");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
}

// The request of the two tests below.
const std::string kOneRequest = R"J({"mesh": {"shape": [2, 2]}, "ops": [{"op": "coordinate", "rank": 3}]})J";

TEST(MeshCli, BatchAnswersEachLineBeforeTheNextArrives) {
  // Each answer comes back while standard input is still open (flushed per line, as the contract says), a bad
  // line's included; the output ends, exit 0, once the input closes.
  const std::vector<std::string> heard = meshloom::test::batch_conversation("mesh", kOneRequest);
  ASSERT_EQ(heard.size(), 3U);
  EXPECT_EQ(heard[0], R"J({"ok":true,"results":[{"ok":true,"coordinate":[1,1]}]})J");
  EXPECT_TRUE(heard[1].starts_with(R"J({"ok":false,"error":"ValueError: )J")) << heard[1];
  EXPECT_EQ(heard[2], "exit 0");
}

TEST(MeshCli, BatchExitsOneWhenStandardOutputFails) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  const auto path = scratch.write("mesh-full.jsonl", kOneRequest + "\n");
  EXPECT_EQ(launch("mesh --batch < '" + path.string() + "' > /dev/full 2>/dev/null").status, 1);
}

TEST(MeshCli, LayoutRefusesHugeEnumerationsBeforeAllocating) {
  Launched r = launch("layout show \"(4294967296,2):(1,0)\" 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "error: ValueError: show (4294967296,2):(1,0) would enumerate 8589934592 offsets, over the limit of "
            "16777216 (--max-output N raises it)\n");
  r = launch("layout global-ranks 4:2 4294967296 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind("error: ValueError: global-ranks 4:2 4294967296 would enumerate 4294967296 ranks", 0), 0U)
      << r.out;
  r = launch("layout remap \"(4294967296,2):(0,1)\" 0,1 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind("error: ValueError: remap (4294967296,2):(0,1) would enumerate 8589934592 ranks", 0), 0U)
      << r.out;
  r = launch("layout injective \"(4294967296,2):(0,1)\" 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind("error: ValueError: injective", 0), 0U) << r.out;
  // The limit is an option; within it the answer is unchanged.
  r = launch("layout codomain 8:1 --max-output 4 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "error: ValueError: codomain 8:1 would enumerate 8 offsets, over the limit of 4 (--max-output N "
                   "raises it)\n");
  r = launch("layout global-ranks 4:2 8 --max-output 8 2>&1");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "0 2 4 6\n1 3 5 7\n");
  r = launch("layout codomain 8:1 --max-output 0 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "error: ValueError: --max-output \"0\": must be >= 1\n");
}

TEST(MeshCli, HumanGridAndSlice) {
  const Launched r = launch("mesh --shape 2,4 --names dp,tp --slice tp");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "DeviceMesh((dp=2, tp=4), stride=(4, 1))  layout (2,4):(4,1)  world 8\n"
            "\n"
            "      tp=0  tp=1  tp=2  tp=3\n"
            "dp=0     0     1     2     3\n"
            "dp=1     4     5     6     7\n"
            "\n"
            "slice tp: DeviceMesh((tp=4), stride=(1,))  layout (4,):(1,)  2 groups of 4\n"
            "  group 0: 0 1 2 3\n"
            "  group 1: 4 5 6 7\n");
}

TEST(MeshCli, HumanThreeDimensionsFlattenAndRank) {
  const Launched r = launch("mesh --shape 2,2,2 --names pp,dp,tp --flatten dp,tp --slice pp,tp --rank 5");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "DeviceMesh((pp=2, dp=2, tp=2), stride=(4, 2, 1))  layout (2,2,2):(4,2,1)  world 8\n"
            "\n"
            "pp=0\n"
            "      tp=0  tp=1\n"
            "dp=0     0     1\n"
            "dp=1     2     3\n"
            "\n"
            "pp=1\n"
            "      tp=0  tp=1\n"
            "dp=0     4     5\n"
            "dp=1     6     7\n"
            "\n"
            "flatten dp_tp: DeviceMesh((dp_tp=4), stride=(1,))  layout (4,):(1,)  2 groups of 4\n"
            "  group 0: 0 1 2 3\n"
            "  group 1: 4 5 6 7\n"
            "\n"
            "slice pp,tp: DeviceMesh((pp=2, tp=2), stride=(4, 1))  layout (2,2):(4,1)  2 instances of 2x2\n"
            "  instance 0: [[0, 1], [4, 5]]\n"
            "  instance 1: [[2, 3], [6, 7]]\n"
            "\n"
            "rank 5: coordinate (pp=1, dp=0, tp=1)\n"
            "  axis   local rank  group\n"
            "  pp              1  1 5\n"
            "  dp              0  5 7\n"
            "  tp              1  4 5\n"
            "  dp_tp           1  4 5 6 7\n");
}

TEST(MeshCli, BadShapeExitsTwoNamingTheValue) {
  const Launched r = launch("mesh --shape 2,x --names dp,tp 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "error: ValueError: --shape \"2,x\": \"x\" is not an integer\n");
  const Launched big = launch("mesh --shape 2,99999999999999999999 2>&1");
  EXPECT_EQ(big.status, 2);
  EXPECT_EQ(big.out, "error: ValueError: --shape \"2,99999999999999999999\": \"99999999999999999999\" is out of range "
                     "for a 64-bit integer\n");
  const Launched flat = launch("mesh --shape 2,2 --names dp,tp --flatten :x 2>&1");
  EXPECT_EQ(flat.status, 2);
  EXPECT_EQ(flat.out,
            "error: ValueError: --flatten \":x\": no axes before ':' (expected AXES[:NAME], e.g. dp,tp:dp_tp)\n");
}

TEST(MeshCli, EngineErrorsExitTwo) {
  Launched r = launch("mesh --shape 2,4 --names dp,tp --slice tp,dp 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "error: KeyError: Invalid mesh_dim_names ('tp', 'dp') specified. Mesh dim indices should be in ascending order.\n");
  r = launch("mesh --shape 2,4 --world 4 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "error: RuntimeError: Mesh should not be bigger than default world size 4, but found 8 ranks!\n");
  r = launch("mesh --batch --shape 2,4 2>&1 < /dev/null");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind("error: ValueError: --batch", 0), 0U) << r.out;
}

}  // namespace
