// meshloom-launch mesh --batch: answer_mesh_line on every op, every error path and the submesh_of semantics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <ios>
#include <istream>
#include <set>
#include <sstream>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "mesh_batch.hpp"
#include "meshloom/mesh/device_mesh.hpp"

namespace {

using meshloom::DeviceMesh;
using meshloom::RankTensor;
using meshloom::launcher::answer_mesh_line;
using meshloom::launcher::MeshBatchLimits;
using json = nlohmann::ordered_json;

// The answer, checked to be one line of JSON.
std::string ask(const std::string& line, const MeshBatchLimits& limits = {}) {
  std::string answer = answer_mesh_line(line, limits);
  EXPECT_EQ(answer.find('\n'), std::string::npos) << answer;
  EXPECT_TRUE(json::accept(answer)) << answer;
  return answer;
}

std::string error_of(const std::string& line, const MeshBatchLimits& limits = {}) {
  const json j = json::parse(ask(line, limits));
  EXPECT_EQ(j.at("ok"), false) << j.dump();
  return j.value("error", "");
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// ---- The contract's examples ------------------------------------------------------------------------------------

TEST(MeshBatch, ContractExample2x4) {
  EXPECT_EQ(ask(R"J({"world": 8, "mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, "ops": [{"op": "describe"}]})J"),
            R"J({"ok":true,"results":[{"ok":true,"shape":[2,4],"names":["dp","tp"],"layout":"(2,4):(4,1)",)J"
            R"J("meshes":[[[0,1,2,3],[4,5,6,7]]],)J"
            R"J("dim_groups":{"dp":[[0,4],[1,5],[2,6],[3,7]],"tp":[[0,1,2,3],[4,5,6,7]]}}]})J");
}

TEST(MeshBatch, UnnamedMeshKeysAxesByIndex) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2, 4]}, "ops": [{"op": "describe"}]})J"),
            R"J({"ok":true,"results":[{"ok":true,"shape":[2,4],"names":null,"layout":"(2,4):(4,1)",)J"
            R"J("meshes":[[[0,1,2,3],[4,5,6,7]]],"dim_groups":{"0":[[0,4],[1,5],[2,6],[3,7]],"1":[[0,1,2,3],[4,5,6,7]]}}]})J");
}

TEST(MeshBatch, ExplicitRankTensor) {
  EXPECT_EQ(ask(R"J({"mesh": {"ranks": [[0, 2], [1, 3]], "names": ["dp", "tp"]}, "ops": [{"op": "describe"},)J"
                R"J( {"op": "groups", "dim": "tp"}, {"op": "coordinate", "rank": 2}]})J"),
            R"J({"ok":true,"results":[{"ok":true,"shape":[2,2],"names":["dp","tp"],"layout":"(2,2):(2,1)",)J"
            R"J("meshes":[[[0,2],[1,3]]],"dim_groups":{"dp":[[0,1],[2,3]],"tp":[[0,2],[1,3]]}},)J"
            R"J({"ok":true,"groups":[[0,2],[1,3]]},{"ok":true,"coordinate":[0,1]}]})J");
  // A rank of the world outside the mesh has no coordinate.
  EXPECT_EQ(ask(R"J({"world": 8, "mesh": {"ranks": [[0, 2], [1, 3]]}, "ops": [{"op": "coordinate", "rank": 5}]})J"),
            R"J({"ok":true,"results":[{"ok":true,"coordinate":null}]})J");
}

TEST(MeshBatch, NoOpsGivesNoResults) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [4]}})J"), R"J({"ok":true,"results":[]})J");
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [4]}, "ops": []})J"), R"J({"ok":true,"results":[]})J");
}

// ---- Every op ---------------------------------------------------------------------------------------------------

TEST(MeshBatch, Slice) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2, 2, 2], "names": ["dp", "cp", "tp"]}, "ops": [{"op": "slice", "names": ["dp", "tp"]}]})J"),
            R"J({"ok":true,"results":[{"ok":true,"shape":[2,2],"names":["dp","tp"],"layout":"(2,2):(4,1)",)J"
            R"J("meshes":[[[0,1],[4,5]],[[2,3],[6,7]]],)J"
            R"J("dim_groups":{"dp":[[0,4],[1,5],[2,6],[3,7]],"tp":[[0,1],[2,3],[4,5],[6,7]]}}]})J");
}

TEST(MeshBatch, FlattenThenGroupsAndSliceByFlattenedName) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2, 2, 2], "names": ["dp", "cp", "tp"]}, "ops": [)J"
                R"J({"op": "slice", "names": ["dp", "cp"], "as": "dc"}, {"op": "flatten", "on": "dc"},)J"
                R"J( {"op": "groups", "dim": "dp_cp"}, {"op": "slice", "names": ["dp_cp", "tp"]}]})J"),
            R"J({"ok":true,"results":[)J"
            R"J({"ok":true,"shape":[2,2],"names":["dp","cp"],"layout":"(2,2):(4,2)","meshes":[[[0,2],[4,6]],[[1,3],[5,7]]],)J"
            R"J("dim_groups":{"dp":[[0,4],[1,5],[2,6],[3,7]],"cp":[[0,2],[1,3],[4,6],[5,7]]}},)J"
            R"J({"ok":true,"shape":[4],"names":["dp_cp"],"layout":"(4,):(2,)","meshes":[[0,2,4,6],[1,3,5,7]],)J"
            R"J("dim_groups":{"dp_cp":[[0,2,4,6],[1,3,5,7]]}},)J"
            R"J({"ok":true,"groups":[[0,2,4,6],[1,3,5,7]]},)J"
            R"J({"ok":true,"shape":[4,2],"names":["dp_cp","tp"],"layout":"(4,2):(2,1)","meshes":[[[0,1],[2,3],[4,5],[6,7]]],)J"
            R"J("dim_groups":{"dp_cp":[[0,2,4,6],[1,3,5,7]],"tp":[[0,1],[2,3],[4,5],[6,7]]}}]})J");
}

TEST(MeshBatch, FlattenNonContiguousWithName) {
  const json j = json::parse(ask(R"J({"mesh": {"shape": [2, 2, 2], "names": ["dp", "cp", "tp"]}, "ops": [)J"
                                 R"J({"op": "slice", "names": ["dp", "tp"], "as": "dt"}, {"op": "flatten", "on": "dt", "name": "dptp"}]})J"));
  EXPECT_EQ(j["results"][1].dump(),
            R"J({"ok":true,"shape":[4],"names":["dptp"],"layout":"((2,2),):((4,1),)","meshes":[[0,1,4,5],[2,3,6,7]],)J"
            R"J("dim_groups":{"dptp":[[0,1,4,5],[2,3,6,7]]}})J");
}

TEST(MeshBatch, Unflatten) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [4, 2], "names": ["dp", "tp"]}, "ops": [{"op": "unflatten", "dim": 0,)J"
                R"J( "sizes": [2, 2], "names": ["dp_shard", "dp_replicate"]}]})J"),
            R"J({"ok":true,"results":[{"ok":true,"shape":[2,2,2],"names":["dp_shard","dp_replicate","tp"],)J"
            R"J("layout":"(2,2,2):(4,2,1)","meshes":[[[[0,1],[2,3]],[[4,5],[6,7]]]],"dim_groups":{)J"
            R"J("dp_shard":[[0,4],[1,5],[2,6],[3,7]],"dp_replicate":[[0,2],[1,3],[4,6],[5,7]],"tp":[[0,1],[2,3],[4,5],[6,7]]}}]})J");
  // By name, and the product must match.
  const json j = json::parse(ask(R"J({"mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, "ops": [)J"
                                 R"J({"op": "unflatten", "dim": "tp", "sizes": [2, 2], "names": ["a", "b"]},)J"
                                 R"J( {"op": "unflatten", "dim": "tp", "sizes": [3], "names": ["a"]}]})J"));
  EXPECT_EQ(j["results"][0]["layout"], "(2,2,2):(4,2,1)");
  EXPECT_EQ(j["results"][1].dump(),
            R"J({"ok":false,"error":"ValueError: The product of mesh_sizes=(3,) is 3, but the original dimension at dim=1 has size 4.)J"
            R"J( These must be equal for unflatten to work correctly."})J");
}

TEST(MeshBatch, ConcatenateAndEqual) {
  const json j = json::parse(ask(
      R"J({"mesh": {"shape": [2, 2, 2], "names": ["pp", "dp", "tp"]}, "ops": [)J"
      R"J({"op": "slice", "names": ["pp", "dp"], "as": "a"}, {"op": "slice", "names": ["tp"], "as": "b"},)J"
      R"J( {"op": "concatenate", "meshes": ["a", "b"], "as": "c"}, {"op": "equal", "other": "c"},)J"
      R"J( {"op": "concatenate", "meshes": ["b", "a"]}, {"op": "equal", "on": "a", "other": "b"}]})J"));
  ASSERT_EQ(j["results"].size(), 6U);
  EXPECT_EQ(j["results"][2]["layout"], "(2,2,2):(4,2,1)");
  EXPECT_EQ(j["results"][3].dump(), R"J({"ok":true,"equal":true})J");
  EXPECT_EQ(j["results"][4].dump(),
            R"J({"ok":true,"shape":[2,2,2],"names":["tp","pp","dp"],"layout":"(2,2,2):(1,4,2)","meshes":[[[[0,2],[4,6]],[[1,3],[5,7]]]],)J"
            R"J("dim_groups":{"tp":[[0,1],[2,3],[4,5],[6,7]],"pp":[[0,4],[1,5],[2,6],[3,7]],"dp":[[0,2],[1,3],[4,6],[5,7]]}})J");
  EXPECT_EQ(j["results"][5].dump(), R"J({"ok":true,"equal":false})J");
}

TEST(MeshBatch, ConcatenateRepeatingANameIsRejected) {
  const json j = json::parse(ask(
      R"J({"mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, "ops": [{"op": "slice", "names": ["dp"], "as": "a"},)J"
      R"J( {"op": "slice", "names": ["tp"], "as": "t"}, {"op": "unflatten", "on": "t", "dim": 0, "sizes": [4],)J"
      R"J( "names": ["dp"], "as": "b"}, {"op": "concatenate", "meshes": ["a", "b"]}]})J"));
  EXPECT_TRUE(starts_with(j["results"][3]["error"], "ValueError: ops[3]: the resulting mesh")) << j.dump();
}

TEST(MeshBatch, SubmeshOf) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2, 2, 2], "names": ["dp", "cp", "tp"]}, "ops": [)J"
                R"J({"op": "submesh_of", "names": ["dp", "tp"], "rank": 6}]})J"),
            R"J({"ok":true,"results":[{"ok":true,"shape":[2,2],"names":["dp","tp"],"layout":"(2,2):(4,1)",)J"
            R"J("meshes":[[[2,3],[6,7]]],"dim_groups":{"dp":[[2,6],[3,7]],"tp":[[2,3],[6,7]]}}]})J");
  const json j = json::parse(ask(R"J({"world": 8, "mesh": {"ranks": [[5, 2], [1, 3]], "names": ["a", "b"]}, "ops": [)J"
                                 R"J({"op": "submesh_of", "names": ["b"], "rank": 1},)J"
                                 R"J( {"op": "submesh_of", "names": ["b"], "rank": 4},)J"
                                 R"J( {"op": "submesh_of", "names": ["a", "b"], "rank": 3},)J"
                                 R"J( {"op": "submesh_of", "names": ["a"], "rank": 9}]})J"));
  EXPECT_EQ(j["results"][0]["meshes"].dump(), "[[1,3]]");
  EXPECT_EQ(j["results"][1]["error"],
            "RuntimeError: In order to get the mesh Tensor of a DeviceMesh it needs to either have all its original "
            "dimensions (e.g., no slicing) or it needs to contain the local rank: rank 4 is not part of "
            "DeviceMesh((b=2), stride=(1,))");
  EXPECT_EQ(j["results"][2]["meshes"].dump(), "[[[5,2],[1,3]]]");
  EXPECT_EQ(j["results"][2]["dim_groups"].dump(), R"J({"a":[[5,1],[2,3]],"b":[[5,2],[1,3]]})J");
  EXPECT_TRUE(starts_with(j["results"][3]["error"], "ValueError: rank 9 is out of range for world size 8"));
}

TEST(MeshBatch, GroupsByIndexNameAndNegativeIndex) {
  const json j = json::parse(ask(R"J({"mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, "ops": [)J"
                                 R"J({"op": "groups", "dim": 0}, {"op": "groups", "dim": "tp"}, {"op": "groups", "dim": -1}]})J"));
  EXPECT_EQ(j["results"][0].dump(), R"J({"ok":true,"groups":[[0,4],[1,5],[2,6],[3,7]]})J");
  EXPECT_EQ(j["results"][1].dump(), R"J({"ok":true,"groups":[[0,1,2,3],[4,5,6,7]]})J");
  EXPECT_EQ(j["results"][2], j["results"][1]);
}

TEST(MeshBatch, CoordinateAndLocalRank) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, "ops": [{"op": "coordinate", "rank": 6},)J"
                R"J( {"op": "local_rank", "rank": 6, "dim": "tp"}, {"op": "local_rank", "rank": 6, "dim": 0},)J"
                R"J( {"op": "local_rank", "rank": 6}, {"op": "slice", "names": ["tp"], "as": "t"},)J"
                R"J( {"op": "local_rank", "on": "t", "rank": 6, "dim": null}]})J"),
            R"J({"ok":true,"results":[{"ok":true,"coordinate":[1,2]},{"ok":true,"local_rank":2},{"ok":true,"local_rank":1},)J"
            R"J({"ok":false,"error":"RuntimeError: Found the DeviceMesh have 2 dimensions. Optional kwarg `mesh_dim` needs)J"
            R"J( to be specified when device_mesh.ndim > 1."},)J"
            R"J({"ok":true,"shape":[4],"names":["tp"],"layout":"(4,):(1,)","meshes":[[0,1,2,3],[4,5,6,7]],)J"
            R"J("dim_groups":{"tp":[[0,1,2,3],[4,5,6,7]]}},{"ok":true,"local_rank":2}]})J");
}

TEST(MeshBatch, CreateSavesANewRoot) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2, 2]}, "ops": [{"op": "create", "mesh": {"shape": [4], "names": ["x"]}, "as": "m"},)J"
                R"J( {"op": "equal", "other": "m"}, {"op": "describe", "on": "m"}]})J"),
            R"J({"ok":true,"results":[{"ok":true,"shape":[4],"names":["x"],"layout":"(4,):(1,)","meshes":[[0,1,2,3]],)J"
            R"J("dim_groups":{"x":[[0,1,2,3]]}},{"ok":true,"equal":false},)J"
            R"J({"ok":true,"shape":[4],"names":["x"],"layout":"(4,):(1,)","meshes":[[0,1,2,3]],"dim_groups":{"x":[[0,1,2,3]]}}]})J");
  // create takes the line's world unless it gives its own.
  const json j = json::parse(ask(R"J({"world": 4, "mesh": {"shape": [4]}, "ops": [{"op": "create", "mesh": {"shape": [8]}},)J"
                                 R"J( {"op": "create", "mesh": {"shape": [8]}, "world": 8}]})J"));
  EXPECT_EQ(j["results"][0]["error"], "RuntimeError: Mesh should not be bigger than default world size 4, but found 8 ranks!");
  EXPECT_EQ(j["results"][1]["ok"], true);
}

TEST(MeshBatch, DescribeAsAliasesAndOnMissingIsKeyError) {
  const json j = json::parse(ask(R"J({"mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, "ops": [{"op": "describe", "as": "x"},)J"
                                 R"J( {"op": "equal", "on": "x", "other": "root"}, {"op": "groups", "on": "nope", "dim": 0}]})J"));
  EXPECT_EQ(j["results"][1]["equal"], true);
  EXPECT_EQ(j["results"][2]["error"], R"J(KeyError: ops[2].on = "nope": no mesh is saved under that name (saved: "root", "x"))J");
}

// ---- Errors -----------------------------------------------------------------------------------------------------

TEST(MeshBatchErrors, NotJson) {
  EXPECT_EQ(ask("garbage"),
            R"J({"ok":false,"error":"ValueError: the line is not valid JSON: parse error at line 1, column 1: syntax error)J"
            R"J( while parsing value - invalid literal; last read: 'g'"})J");
  EXPECT_TRUE(starts_with(error_of(R"J({"mesh": {"shape": [2, 4]})J"), "ValueError: the line is not valid JSON: "));
  EXPECT_EQ(error_of(""), "ValueError: empty line: expected a JSON object");
  EXPECT_EQ(error_of("[1,2]"), "ValueError: the line must be a JSON object, got an array: [1,2]");
  EXPECT_EQ(error_of("null"), "ValueError: the line must be a JSON object, got null: null");
  EXPECT_TRUE(starts_with(error_of("{\"mesh\": \"\xff\"}"), "ValueError: the line is not valid JSON: "));
}

// The engine's JSON policy (json_read.hpp), as for design files: a duplicate key is refused, naming it, never
// "the last one wins".
TEST(MeshBatchErrors, DuplicateKeys) {
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [2, 4]}, "mesh": {"shape": [8]}})J"),
            R"(ValueError: mesh: duplicate key "mesh")");
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [2, 4], "shape": [8]}})J"),
            R"(ValueError: mesh.shape: duplicate key "shape")");
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [2, 4]}, "ops": [{"op": "describe"}, {"op": "slice", "op": "flatten"}]})J"),
            R"(ValueError: ops[1].op: duplicate key "op")");
}

TEST(MeshBatchErrors, UnknownFields) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2]}, "extra": 1})J"),
            R"J({"ok":false,"error":"ValueError: unknown field \"extra\" in the line (expected world, mesh, ops)"})J");
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [2, 4], "names": ["dp", "tp"], "world": 8}})J"),
            R"J(ValueError: mesh: unknown field "world" (expected shape, ranks, names))J");
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2]}, "ops": [{"op": "groups", "dim": 0, "x": 1}]})J"),
            R"J({"ok":true,"results":[{"ok":false,"error":"ValueError: ops[0]: unknown field \"x\" for op \"groups\")J"
            R"J( (expected op, on, as, dim)"}]})J");
}

TEST(MeshBatchErrors, OnIsRefusedByOpsThatDoNotActOnASavedMesh) {
  // create and concatenate build their mesh from their own fields: an `on` there is an unknown field.
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2]}, "ops": [{"op": "create", "on": "nope", "mesh": {"shape": [2]}}]})J"),
            R"J({"ok":true,"results":[{"ok":false,"error":"ValueError: ops[0]: unknown field \"on\" for op \"create\")J"
            R"J( (expected op, as, mesh, world)"}]})J");
  const json j = json::parse(ask(R"J({"mesh": {"shape": [2, 2], "names": ["a", "b"]}, "ops": [)J"
                                 R"J({"op": "slice", "names": ["a"], "as": "x"}, {"op": "slice", "names": ["b"], "as": "y"},)J"
                                 R"J( {"op": "concatenate", "on": "root", "meshes": ["x", "y"]},)J"
                                 R"J( {"op": "concatenate", "meshes": ["x", "y"]}]})J"));
  EXPECT_EQ(j["results"][2]["error"],
            R"J(ValueError: ops[2]: unknown field "on" for op "concatenate" (expected op, as, meshes))J");
  EXPECT_EQ(j["results"][3]["ok"], true);
  // The ops that act on a saved mesh still take it.
  EXPECT_EQ(j.dump().find("unknown field \"on\" for op \"slice\""), std::string::npos);
}

TEST(MeshBatchErrors, UnknownOp) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2]}, "ops": [{"op": "frob"}]})J"),
            R"J({"ok":true,"results":[{"ok":false,"error":"ValueError: ops[0].op = \"frob\": unknown op (expected one of)J"
            R"J( describe, create, slice, flatten, unflatten, concatenate, submesh_of, groups, coordinate, local_rank, equal)"})J"
            R"J(]})J");
}

TEST(MeshBatchErrors, FailingOpThenSucceedingOp) {
  EXPECT_EQ(ask(R"J({"mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, "ops": [{"op": "slice", "names": ["tp", "dp"]},)J"
                R"J( {"op": "groups", "dim": "tp"}]})J"),
            R"J({"ok":true,"results":[{"ok":false,"error":"KeyError: Invalid mesh_dim_names ('tp', 'dp') specified.)J"
            R"J( Mesh dim indices should be in ascending order."},{"ok":true,"groups":[[0,1,2,3],[4,5,6,7]]}]})J");
}

TEST(MeshBatchErrors, EngineErrorsKeepTheirKinds) {
  const json j = json::parse(ask(
      R"J({"mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, "ops": [{"op": "slice", "names": ["pp"]},)J"
      R"J( {"op": "slice", "names": ["dp", "dp"]}, {"op": "groups", "dim": 2}, {"op": "groups", "dim": "x"},)J"
      R"J( {"op": "flatten", "name": "dp"}, {"op": "coordinate", "rank": -1}, {"op": "coordinate", "rank": 8}]})J"));
  EXPECT_EQ(j["results"][0]["error"], "KeyError: Invalid mesh_dim_names ('pp',) specified. Valid mesh_dim_names are ['dp', 'tp'].");
  EXPECT_EQ(j["results"][1]["error"], "RuntimeError: Slicing overlapping dim_names ('dp', 'dp') is not allowed.");
  EXPECT_TRUE(starts_with(j["results"][2]["error"], "IndexError: Dim 2 is out of range"));
  EXPECT_TRUE(starts_with(j["results"][3]["error"], "KeyError: Mesh dimension 'x' does not exist."));
  EXPECT_TRUE(starts_with(j["results"][4]["error"], "ValueError: dp already exists for submesh of the"));
  EXPECT_EQ(j["results"][5]["error"], "ValueError: rank -1 is out of range for world size 8 (valid ranks are 0..7)");
  // Past the world a rank is simply not in the mesh (the contract's null).
  EXPECT_EQ(j["results"][6], json::parse(R"J({"ok": true, "coordinate": null})J"));
}

TEST(MeshBatchErrors, AnEngineMessageHoldingANulIsAnsweredWhole) {
  // A name read from \u0000 goes into the engine's message; the answer carries all of it, not what() up to the NUL.
  const json j = json::parse(ask(R"J({"mesh": {"shape": [2, 2], "names": ["a", "c"]}, "ops": [)J"
                                 R"J({"op": "slice", "names": ["x\u0000y"]}, {"op": "groups", "dim": "zz\u0000"}]})J"));
  EXPECT_EQ(j["results"][0]["error"], std::string("KeyError: Invalid mesh_dim_names ('x\0y',) specified. Valid "
                                                  "mesh_dim_names are ['a', 'c'].", 89));
  const std::string missing("KeyError: Mesh dimension 'zz\0' does not exist.", 46);
  EXPECT_TRUE(starts_with(j["results"][1]["error"], missing));
}

TEST(MeshBatchErrors, WrongTypesNameTheFieldAndValue) {
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [2]}, "world": "8"})J"), R"J(ValueError: world = "8": expected an integer, got a string)J");
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [2, "4"]}})J"), R"J(ValueError: mesh.shape[1] = "4": expected an integer, got a string)J");
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [2.0]}})J"), R"J(ValueError: mesh.shape[0] = 2.0: expected an integer, got a non-integer number)J");
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [2, 4]}, "ops": {"op": "describe"}})J"),
            R"J(ValueError: ops = {"op":"describe"}: expected a list of ops, got an object)J");
  EXPECT_EQ(error_of(R"J({"mesh": [2, 4]})J"),
            R"J(ValueError: mesh = [2,4]: expected an object {"shape": [...], "names": [...]} or {"ranks": [[...]], "names": [...]}, got an array)J");
  EXPECT_EQ(error_of(R"J({"world": 8})J"), R"J(ValueError: missing field "mesh" in the line)J");
  EXPECT_TRUE(starts_with(error_of(R"J({"mesh": {"shape": [2], "ranks": [0, 1]}})J"), "ValueError: mesh: give exactly one of"));
  const json j = json::parse(ask(R"J({"mesh": {"shape": [2, 4]}, "ops": [5, {"op": 3}, {"op": "coordinate", "rank": 1.5},)J"
                                 R"J( {"op": "slice", "names": "dp"}, {"op": "groups", "dim": true}, {"op": "coordinate"},)J"
                                 R"J( {"op": "coordinate", "rank": 18446744073709551615}, {"op": "slice", "names": ["a", 1]}]})J"));
  const std::vector<std::string> expected = {
      "ValueError: ops[0] = 5: expected an object, got an integer",
      "ValueError: ops[1].op = 3: expected a string, got an integer",
      "ValueError: ops[2].rank = 1.5: expected an integer, got a non-integer number",
      R"J(ValueError: ops[3].names = "dp": expected a list of strings, got a string)J",
      "ValueError: ops[4].dim = true: expected an axis index or name, got a boolean",
      R"J(ValueError: ops[5]: missing field "rank" for op "coordinate")J",
      "ValueError: ops[6].rank = 18446744073709551615: out of range for a 64-bit integer",
      "ValueError: ops[7].names[1] = 1: expected a string, got an integer",
  };
  ASSERT_EQ(j["results"].size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(j["results"][i]["error"], expected[i]) << i;
}

TEST(MeshBatchErrors, RankTensorMustBeRectangularIntegers) {
  EXPECT_EQ(error_of(R"J({"mesh": {"ranks": [[0, 2], [1]]}})J"),
            "ValueError: mesh.ranks[1] = [1]: expected a list of 2 elements like mesh.ranks[0] (the rank tensor must be rectangular)");
  EXPECT_EQ(error_of(R"J({"mesh": {"ranks": [[0, 2], [1, "x"]]}})J"),
            R"J(ValueError: mesh.ranks[1][1] = "x": expected an integer rank, got a string (the rank tensor must be a rectangular nested list of integers))J");
  EXPECT_EQ(error_of(R"J({"mesh": {"ranks": [[0, 2], [1, [3]]]}})J"),
            "ValueError: mesh.ranks[1][1] = [3]: expected an integer rank, got an array (the rank tensor must be a rectangular nested list of integers)");
  EXPECT_EQ(error_of(R"J({"mesh": {"ranks": 5}})J"), "ValueError: mesh.ranks = 5: expected a nested list of integer ranks, got an integer");
  EXPECT_EQ(error_of(R"J({"mesh": {"ranks": []}})J"), "ValueError: mesh.ranks = []: the rank tensor holds no ranks");
  EXPECT_EQ(error_of(R"J({"mesh": {"ranks": [[0, 1], [1, 2]]}})J"),
            "ValueError: rank 1 appears more than once in the mesh tensor (positions 1 and 2)");
  const json j = json::parse(ask(R"J({"mesh": {"shape": [4]}, "ops": [{"op": "create", "mesh": {"ranks": [0, true]}}]})J"));
  EXPECT_EQ(j["results"][0]["error"],
            "ValueError: ops[0].mesh.ranks[1] = true: expected an integer rank, got a boolean (the rank tensor must be a "
            "rectangular nested list of integers)");
}

TEST(MeshBatchErrors, MeshBuildErrors) {
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [2, 4]}, "world": 4})J"),
            "RuntimeError: Mesh should not be bigger than default world size 4, but found 8 ranks!");
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [2, 4], "names": ["dp", "dp"]}})J"),
            "RuntimeError: Each mesh_dim_name must be unique. Found repeated mesh_dim_name in mesh_dim_names ('dp', 'dp')");
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [65536, 65536]}})J"), "ValueError: mesh_shape (65536, 65536) holds more than 2147483647 ranks");
}

// ---- Limits -----------------------------------------------------------------------------------------------------

TEST(MeshBatchLimits, HugeMeshAnswersCheapOpsAndRefusesHugeResults) {
  const json j = json::parse(ask(R"J({"mesh": {"shape": [46340, 46340]}, "ops": [{"op": "describe"},)J"
                                 R"J( {"op": "coordinate", "rank": 46345}, {"op": "groups", "dim": 0}]})J"));
  EXPECT_EQ(j["results"][0]["error"],
            "ValueError: ops[0]: the result would hold 6442186800 ranks, over the output limit of 67108864 ranks per line "
            "(0 already written on this line)");
  EXPECT_EQ(j["results"][1]["coordinate"].dump(), "[1,5]");
  EXPECT_TRUE(starts_with(j["results"][2]["error"], "ValueError: ops[2]: the result would hold 2147395600 ranks"));
}

TEST(MeshBatchLimits, OutputLimitIsPerLineAndConfigurable) {
  MeshBatchLimits limits;
  limits.max_output_ranks = 20;
  const json j = json::parse(ask(R"J({"mesh": {"shape": [2, 4]}, "ops": [{"op": "describe"}, {"op": "groups", "dim": 0},)J"
                                 R"J( {"op": "groups", "dim": 1}, {"op": "groups", "dim": 1}, {"op": "coordinate", "rank": 1}]})J",
                                 limits));
  EXPECT_EQ(j["results"][0]["error"],
            "ValueError: ops[0]: the result would hold 24 ranks, over the output limit of 20 ranks per line (0 already written on this line)");
  EXPECT_EQ(j["results"][1]["ok"], true);
  EXPECT_EQ(j["results"][2]["ok"], true);
  EXPECT_EQ(j["results"][3]["error"],
            "ValueError: ops[3]: the result would hold 8 ranks, over the output limit of 20 ranks per line (16 already written on this line)");
  EXPECT_EQ(j["results"][4]["ok"], true);
}

// flatten registers its axis on the root (as PyTorch's does): one refused over the limit registers nothing, so what
// later ops see does not depend on the limit.
TEST(MeshBatchLimits, AFlattenOverTheLimitLeavesNoAxisBehind) {
  MeshBatchLimits limits;
  limits.max_output_ranks = 8;
  const json j = json::parse(ask(R"J({"mesh": {"shape": [2, 4], "names": ["a", "b"]}, "ops": [)J"
                                 R"J({"op": "flatten", "as": "f"}, {"op": "groups", "dim": "a_b"},)J"
                                 R"J( {"op": "describe", "on": "f"}]})J",
                                 limits));
  EXPECT_EQ(j["results"][0]["error"],
            "ValueError: ops[0]: the result would hold 16 ranks, over the output limit of 8 ranks per line (0 already "
            "written on this line)");
  EXPECT_EQ(j["results"][1]["ok"], false) << j.dump();
  EXPECT_EQ(j["results"][2]["ok"], false) << j.dump();
  limits.max_output_ranks = 24;  // the flattened mesh (8 ranks and its one axis' groups), then a_b's groups
  const json fits = json::parse(ask(R"J({"mesh": {"shape": [2, 4], "names": ["a", "b"]}, "ops": [)J"
                                    R"J({"op": "flatten"}, {"op": "groups", "dim": "a_b"}]})J",
                                    limits));
  EXPECT_EQ(fits["results"][0]["shape"].dump(), "[8]");
  EXPECT_EQ(fits["results"][1]["groups"].dump(), "[[0,1,2,3,4,5,6,7]]");
}

TEST(MeshBatchLimits, GroupsOfABadAxisChargeNothing) {
  MeshBatchLimits limits;
  limits.max_output_ranks = 10;
  const json j = json::parse(ask(R"J({"mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, "ops": [)J"
                                 R"J({"op": "groups", "dim": "nope"}, {"op": "groups", "dim": 5}, {"op": "groups", "dim": "tp"},)J"
                                 R"J( {"op": "groups", "dim": "dp"}]})J",
                                 limits));
  EXPECT_EQ(j["results"][0]["ok"], false);
  EXPECT_FALSE(starts_with(j["results"][0]["error"], "ValueError: ops[0]: the result would hold")) << j.dump();
  EXPECT_EQ(j["results"][1]["ok"], false);
  EXPECT_EQ(j["results"][2]["groups"].dump(), "[[0,1,2,3],[4,5,6,7]]");
  EXPECT_EQ(j["results"][3]["error"],
            "ValueError: ops[3]: the result would hold 8 ranks, over the output limit of 10 ranks per line (8 already "
            "written on this line)");
}

TEST(MeshBatchLimits, DeepNestingAndLongLines) {
  const std::string deep = R"J({"mesh": {"ranks": )J" + std::string(100000, '[') + "0" + std::string(100000, ']') + "}}";
  EXPECT_EQ(error_of(deep), "ValueError: the line nests JSON arrays and objects more than 64 levels deep");
  // Brackets inside strings do not count.
  EXPECT_TRUE(starts_with(error_of(R"J({"mesh": {"shape": [1]}, "x": ")J" + std::string(1000, '[') + "\"}"),
                          "ValueError: unknown field \"x\""));
  MeshBatchLimits limits;
  limits.max_line_bytes = 64;
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": [1]}, "ops": [{"op": "describe"}, {"op": "describe"}]})J", limits),
            "ValueError: the line holds 73 bytes, over the limit of 64");
  // A rank tensor deeper than 64 axes but within the nesting limit.
  limits = {};
  limits.max_depth = 200;
  const std::string axes = R"J({"mesh": {"ranks": )J" + std::string(70, '[') + "0" + std::string(70, ']') + "}}";
  EXPECT_EQ(error_of(axes, limits), "ValueError: mesh.ranks nests more than 64 levels: a mesh has at most 64 axes");
}

TEST(MeshBatchLimits, LongListsAreRefused) {
  std::string shape = "[";
  for (int i = 0; i < 65; ++i) shape += (i > 0 ? ",1" : "1");
  shape += "]";
  EXPECT_EQ(error_of(R"J({"mesh": {"shape": )J" + shape + "}}"), "ValueError: mesh.shape holds 65 entries: at most 64 are allowed");
}

// ---- submesh_of against the full enumeration ------------------------------------------------------------------

std::vector<std::vector<std::int64_t>> rows_of(const RankTensor& t) {
  std::vector<std::vector<std::int64_t>> rows;
  const std::size_t per = t.shape.front() > 0 ? t.values.size() / static_cast<std::size_t>(t.shape.front()) : 0;
  for (std::size_t k = 0; k < static_cast<std::size_t>(t.shape.front()); ++k) {
    rows.emplace_back(t.values.begin() + static_cast<std::ptrdiff_t>(k * per),
                      t.values.begin() + static_cast<std::ptrdiff_t>((k + 1) * per));
  }
  return rows;
}

std::vector<std::int64_t> flat(const json& j) {
  std::vector<std::int64_t> out;
  // Depth-first, left to right.
  std::function<void(const json&)> walk = [&](const json& v) {
    if (v.is_array()) {
      for (const auto& e : v) walk(e);
    } else {
      out.push_back(v.get<std::int64_t>());
    }
  };
  walk(j);
  return out;
}

void check_submesh_of(const std::string& mesh_json, const DeviceMesh& root, std::int64_t world) {
  const auto& names = *root.names();
  // Every ordered subset of the axes.
  for (std::size_t mask = 1; mask < (std::size_t{1} << names.size()); ++mask) {
    DeviceMesh::Names pick;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if ((mask >> i) & 1U) pick.push_back(names[i]);
    }
    const DeviceMesh sub = root.slice(pick);
    const auto instances = rows_of(sub.instances());
    for (std::int64_t rank = 0; rank < world; ++rank) {
      SCOPED_TRACE(mesh_json + " " + json(pick).dump() + " rank " + std::to_string(rank));
      const json line = {{"world", world}, {"mesh", json::parse(mesh_json)},
                         {"ops", {{{"op", "submesh_of"}, {"names", pick}, {"rank", rank}}}}};
      const json r = json::parse(ask(line.dump()))["results"][0];
      auto holder = std::find_if(instances.begin(), instances.end(), [&](const auto& inst) {
        return std::find(inst.begin(), inst.end(), rank) != inst.end();
      });
      // As PyTorch's `mesh` property: a mesh with one instance shows it to every rank, member or not.
      if (holder == instances.end() && instances.size() == 1) holder = instances.begin();
      if (holder == instances.end()) {
        EXPECT_EQ(r["ok"], false);
        EXPECT_TRUE(starts_with(r["error"], "RuntimeError: In order to get the mesh Tensor of a DeviceMesh"));
        EXPECT_NE(r["error"].get<std::string>().find("rank " + std::to_string(rank) + " is not part of"),
                  std::string::npos);
        continue;
      }
      ASSERT_EQ(r["ok"], true) << r.dump();
      ASSERT_EQ(r["meshes"].size(), 1U);
      EXPECT_EQ(flat(r["meshes"]), *holder);
      EXPECT_EQ(r["shape"], json(sub.shape()));
      const std::set<std::int64_t> inside(holder->begin(), holder->end());
      for (std::size_t i = 0; i < pick.size(); ++i) {
        std::vector<std::vector<std::int64_t>> expected;
        for (const auto& g : rows_of(sub.groups(static_cast<std::int64_t>(i)))) {
          if (inside.count(g.front()) > 0) expected.push_back(g);
        }
        EXPECT_EQ(r["dim_groups"][pick[i]], json(expected)) << pick[i];
      }
    }
  }
}

TEST(MeshBatchSubmeshOf, MatchesTheFullEnumeration) {
  check_submesh_of(R"J({"shape": [2, 2, 2], "names": ["dp", "cp", "tp"]})J",
                   DeviceMesh::init({2, 2, 2}, DeviceMesh::Names{"dp", "cp", "tp"}), 8);
  check_submesh_of(R"J({"shape": [2, 3, 2], "names": ["pp", "dp", "tp"]})J",
                   DeviceMesh::init({2, 3, 2}, DeviceMesh::Names{"pp", "dp", "tp"}), 12);
  check_submesh_of(R"J({"shape": [3, 1, 2], "names": ["a", "b", "c"]})J",
                   DeviceMesh::init({3, 1, 2}, DeviceMesh::Names{"a", "b", "c"}), 9);
  check_submesh_of(R"J({"ranks": [[7, 1], [4, 0], [2, 6]], "names": ["x", "y"]})J",
                   DeviceMesh::from_ranks({3, 2}, {7, 1, 4, 0, 2, 6}, DeviceMesh::Names{"x", "y"}), 9);
}

TEST(MeshBatchSubmeshOf, EngineHoldingLookupsMatchTheEnumerations) {
  const auto root = DeviceMesh::from_ranks({2, 2, 2}, {5, 3, 0, 7, 1, 6, 2, 4}, DeviceMesh::Names{"a", "b", "c"});
  const auto ac = root.slice({"a", "c"}).flatten();
  for (std::int64_t rank = 0; rank < 8; ++rank) {
    for (const std::string axis : {"a", "b", "c", "a_c"}) {
      const auto groups = rows_of(root.groups(axis));
      const auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& row) {
        return std::find(row.begin(), row.end(), rank) != row.end();
      });
      ASSERT_NE(g, groups.end());
      EXPECT_EQ(root.group_of(rank, axis), *g) << axis << " " << rank;
    }
    const auto sub = root.slice({"b", "c"});
    const auto inst = sub.instance_of(rank);
    const auto all = rows_of(sub.instances());
    EXPECT_NE(std::find(all.begin(), all.end(), inst.values), all.end());
    EXPECT_NE(std::find(inst.values.begin(), inst.values.end(), rank), inst.values.end());
  }
  EXPECT_EQ(ac.ndim(), 1U);
}

// ---- run_mesh_batch -------------------------------------------------------------------------------------------

TEST(MeshBatchStream, OneLinePerInputLineInOrder) {
  std::istringstream in("{\"mesh\": {\"shape\": [2]}, \"ops\": [{\"op\": \"coordinate\", \"rank\": 1}]}\n"
                        "garbage\n"
                        "\n"
                        "{\"mesh\": {\"shape\": [4]}, \"ops\": [{\"op\": \"coordinate\", \"rank\": 3}]}\r\n"
                        "{\"mesh\": {\"shape\": [3]}, \"ops\": [{\"op\": \"coordinate\", \"rank\": 2}]}");
  std::ostringstream out;
  EXPECT_EQ(meshloom::launcher::run_mesh_batch(in, out), 0);
  std::istringstream lines(out.str());
  std::vector<json> answers;
  for (std::string line; std::getline(lines, line);) answers.push_back(json::parse(line));
  ASSERT_EQ(answers.size(), 5U);
  EXPECT_EQ(answers[0]["results"][0]["coordinate"].dump(), "[1]");
  EXPECT_EQ(answers[1]["ok"], false);
  EXPECT_EQ(answers[2]["ok"], false);
  EXPECT_EQ(answers[3]["results"][0]["coordinate"].dump(), "[3]");
  EXPECT_EQ(answers[4]["results"][0]["coordinate"].dump(), "[2]");
  EXPECT_EQ(out.str().back(), '\n');
}

TEST(MeshBatchStream, OverlongLineIsSkippedToItsEnd) {
  MeshBatchLimits limits;
  limits.max_line_bytes = 32;
  std::istringstream in(std::string(100, 'x') + "\n{\"mesh\": {\"shape\": [2]}}\n");
  std::ostringstream out;
  EXPECT_EQ(meshloom::launcher::run_mesh_batch(in, out, limits), 0);
  EXPECT_EQ(out.str(), "{\"ok\":false,\"error\":\"ValueError: the line holds 100 bytes, over the limit of 32\"}\n"
                       "{\"ok\":true,\"results\":[]}\n");
}

// Serves `text`, then fails the next read the way libstdc++'s file buffer does (an exception from underflow).
class FailingBuf : public std::streambuf {
 public:
  explicit FailingBuf(std::string text) : text_(std::move(text)) {
    setg(text_.data(), text_.data(), text_.data() + text_.size());
  }

 protected:
  int_type underflow() override { throw std::ios_base::failure("read error"); }

 private:
  std::string text_;
};

TEST(MeshBatchStream, ReadErrorAnswersTheEarlierLinesAndFails) {
  FailingBuf buf("{\"mesh\": {\"shape\": [2]}, \"ops\": [{\"op\": \"coordinate\", \"rank\": 1}]}\n"
                 "{\"mesh\": {\"shape\": [4]}}\r\n"
                 "{\"mesh\": {\"sha");
  std::istream in(&buf);
  std::ostringstream out;
  EXPECT_EQ(meshloom::launcher::run_mesh_batch(in, out), 1);
  EXPECT_TRUE(in.bad());
  // The two complete lines are answered; the partial one is not.
  EXPECT_EQ(out.str(), "{\"ok\":true,\"results\":[{\"ok\":true,\"coordinate\":[1]}]}\n"
                       "{\"ok\":true,\"results\":[]}\n");
}

TEST(MeshBatchStream, ReadErrorWithExceptionsEnabledStillReturnsOne) {
  FailingBuf buf("{\"mesh\": {\"shape\": [2]}}\n");
  std::istream in(&buf);
  in.exceptions(std::ios::badbit);
  std::ostringstream out;
  EXPECT_EQ(meshloom::launcher::run_mesh_batch(in, out), 1);
  EXPECT_TRUE(in.bad());
  EXPECT_EQ(out.str(), "{\"ok\":true,\"results\":[]}\n");
}

TEST(MeshBatchStream, CrlfLineAtTheLengthLimitIsAccepted) {
  MeshBatchLimits limits;
  const std::string line = "{\"mesh\": {\"shape\": [2]}}";
  limits.max_line_bytes = line.size();
  std::istringstream in(line + "\r\n" + line + " \r\n");
  std::ostringstream out;
  EXPECT_EQ(meshloom::launcher::run_mesh_batch(in, out, limits), 0);
  EXPECT_EQ(out.str(), "{\"ok\":true,\"results\":[]}\n"
                       "{\"ok\":false,\"error\":\"ValueError: the line holds " + std::to_string(line.size() + 2) +
                       " bytes, over the limit of " + std::to_string(line.size()) + "\"}\n");
}

TEST(MeshBatchStream, EmptyInputGivesNoOutput) {
  std::istringstream in("");
  std::ostringstream out;
  EXPECT_EQ(meshloom::launcher::run_mesh_batch(in, out), 0);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
