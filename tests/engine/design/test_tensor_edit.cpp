// Tensor edits (design/edit): add_tensor, remove_tensor, rename_tensor, set_tensor_shape, set_tensor_dtype and
// replicated_state, on small designs and the bundled examples:
//   - the input is never modified, every result passes validate_design, only the named tensor changes;
//   - the workload follows by name: rename renames the entry, remove removes it, the others leave it alone;
//   - add then remove, and rename there and back, round-trip;
//   - a shape that drops a dim a state shards is refused (naming the state and the dim), never reset;
// and every error path, with a message that names the offending value and the rule.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/design/edit.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/state.hpp"
#include "support/example_design.hpp"
#include "support/expect_error.hpp"

namespace meshloom {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;

using testing::example_design;

// (dp=2, tp=4) over 8 ranks: w [16, 32] float32 S(0)R -> RR, b [32] bfloat16 RS(0) -> RR, and a workload of both.
Design dp_tp() {
  Design d;
  d.name = "dp-tp";
  d.world = 8;
  d.devices_per_host = 4;
  d.mesh.shape = {2, 4};
  d.mesh.names = {"dp", "tp"};
  d.tensors.push_back({"w", {16, 32}, DType::Float32, parse_state("S(0)R"), parse_state("RR")});
  d.tensors.push_back({"b", {32}, DType::BFloat16, parse_state("RS(0)"), parse_state("RR")});
  d.workload = Workload{{{"w", 4}, {"b", 2}}, std::nullopt};
  validate_design(d);
  return d;
}

DesignTensor tensor(const std::string& name, std::vector<std::int64_t> shape, const std::string& src = "RR",
                    const std::string& dst = "RR", DType dtype = DType::Float32) {
  return {name, std::move(shape), dtype, parse_state(src), parse_state(dst)};
}

std::vector<std::string> names(const Design& d) {
  std::vector<std::string> out;
  for (const DesignTensor& t : d.tensors) out.push_back(t.name);
  return out;
}

std::vector<std::string> workload_names(const Design& d) {
  std::vector<std::string> out;
  if (d.workload) {
    for (const WorkloadTensor& w : d.workload->tensors) out.push_back(w.tensor + "x" + std::to_string(w.count));
  }
  return out;
}

// Runs an edit and checks what every edit promises: the input is unchanged, the result is valid and only the
// tensors (and the workload's entries) changed.
template <class F>
Design edited(const Design& design, F&& f) {
  const Design before = design;
  Design result = f(design);
  EXPECT_EQ(design, before) << "the edit modified its input";
  EXPECT_NO_THROW(validate_design(result));
  Design same = result;
  same.tensors = before.tensors;
  if (same.workload && before.workload) same.workload->tensors = before.workload->tensors;
  EXPECT_EQ(same, before) << "the edit changed more than the tensors";
  return result;
}

template <class F>
void expect_edit_error(const Design& design, F&& f, std::initializer_list<std::string> phrases) {
  const Design before = design;
  expect_error([&] { (void)f(design); }, ErrorKind::ValueError, phrases);
  EXPECT_EQ(design, before) << "the failed edit modified its input";
}

// ---- replicated_state -----------------------------------------------------------------------------------------

TEST(ReplicatedState, HasROnEveryMeshAxis) {
  EXPECT_EQ(to_string(replicated_state(dp_tp())), "RR");
  EXPECT_EQ(to_string(replicated_state(example_design("default"))), "RRR");
  EXPECT_EQ(replicated_state(example_design("llama3-405b")).ndim(), example_design("llama3-405b").mesh.shape.size());
}

// ---- add_tensor -----------------------------------------------------------------------------------------------

TEST(AddTensor, AppendsTheTensorAndLeavesTheWorkload) {
  const Design d = dp_tp();
  const DesignTensor x = tensor("layers.0.wq", {1024, 512}, "RS(1)", "S(0)R", DType::BFloat16);
  const Design r = edited(d, [&](const Design& in) { return add_tensor(in, x); });
  EXPECT_EQ(names(r), (std::vector<std::string>{"w", "b", "layers.0.wq"}));
  EXPECT_EQ(r.tensors.back(), x);
  EXPECT_EQ(r.workload, d.workload);
  EXPECT_EQ(remove_tensor(r, "layers.0.wq"), d);
}

TEST(AddTensor, ScalarsAndTheLimits) {
  const Design d = dp_tp();
  const Design scalar = edited(d, [](const Design& in) { return add_tensor(in, tensor("loss", {})); });
  EXPECT_TRUE(scalar.tensors.back().shape.empty());
  const std::string longest(kMaxTensorNameChars, 'n');
  EXPECT_EQ(edited(d, [&](const Design& in) { return add_tensor(in, tensor(longest, {1})); }).tensors.back().name,
            longest);
  const std::vector<std::int64_t> deepest(kMaxDesignTensorRank, 1);
  EXPECT_EQ(edited(d, [&](const Design& in) { return add_tensor(in, tensor("deep", deepest)); }).tensors.back().shape,
            deepest);
  // The largest float32 tensor: 2^61 - 1 elements, just under 2^63 bytes.
  EXPECT_NO_THROW((void)add_tensor(d, tensor("huge", {(std::int64_t{1} << 61) - 1})));
}

TEST(AddTensor, Errors) {
  const Design d = dp_tp();
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor("w", {4})); },
                    {"'w' is already the name of a tensor; tensors are w, b"});
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor("a b", {4})); },
                    {"tensor name = \"a b\": names must be 1 to 256 characters of A-Z, a-z, 0-9, _ and ."});
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor("", {4})); }, {"tensor name = \"\": names must"});
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor(std::string(257, 'n'), {4})); },
                    {"tensor name = \"nnn", "names must be 1 to 256 characters"});
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor("x", {4, 0})); },
                    {"shape[1] = 0: dims must be >= 1"});
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor("x", {-3})); },
                    {"shape[0] = -3: dims must be >= 1"});
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor("x", std::vector<std::int64_t>(65, 1))); },
                    {"shape = [1,1,", "at most 64 dims"});
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor("x", {std::int64_t{1} << 61})); },
                    {"shape = [2305843009213693952]: the tensor would hold more than 2^63-1 bytes of float32"});
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor("x", {4, 4}, "S(2)R")); },
                    {"src = \"S(2)R\": S(2) on axis 0 shards dim 2 but the tensor has 2 dims (0..1)"});
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor("x", {4, 4}, "RR", "R")); },
                    {"dst = \"R\": 1 placement for a mesh of 2 axes"});
  expect_edit_error(d, [](const Design& x) { return add_tensor(x, tensor("x", {}, "S(0)R")); },
                    {"src = \"S(0)R\": S(0) on axis 0 shards dim 0 but the tensor has 0 dims (none)"});

  Design full = dp_tp();
  full.workload.reset();
  while (full.tensors.size() < kMaxDesignTensors) full.tensors.push_back(tensor("t" + std::to_string(full.tensors.size()), {1}));
  expect_edit_error(full, [](const Design& x) { return add_tensor(x, tensor("one_more", {1})); },
                    {"tensors: the design has 1024 tensors; at most 1024"});
  // A long list of names is cut in the message.
  expect_edit_error(full, [](const Design& x) { return rename_tensor(x, "w", "t7"); },
                    {"'t7' is already the name of a tensor; tensors are w, b, t2, t3, t4, t5, t6, t7, ... (1024 in all)"});
}

// ---- remove_tensor --------------------------------------------------------------------------------------------

TEST(RemoveTensor, RemovesTheTensorAndItsWorkloadEntry) {
  const Design d = dp_tp();
  const Design r = edited(d, [](const Design& x) { return remove_tensor(x, "w"); });
  EXPECT_EQ(names(r), (std::vector<std::string>{"b"}));
  EXPECT_EQ(workload_names(r), (std::vector<std::string>{"bx2"}));
  // The workload stays when its last entry goes (an empty workload is valid; the file stays version 2).
  const Design none = edited(r, [](const Design& x) { return remove_tensor(x, "b"); });
  EXPECT_TRUE(none.tensors.empty());
  ASSERT_TRUE(none.workload.has_value());
  EXPECT_TRUE(none.workload->tensors.empty());
}

TEST(RemoveTensor, LeavesTheOtherEntriesAndTheModel) {
  const Design d = example_design("llama3-8b");
  ASSERT_TRUE(d.workload && d.workload->model);
  for (const DesignTensor& t : d.tensors) {
    const Design r = edited(d, [&t](const Design& x) { return remove_tensor(x, t.name); });
    EXPECT_EQ(r.tensors.size() + 1, d.tensors.size());
    EXPECT_EQ(r.workload->model, d.workload->model);
    for (const WorkloadTensor& w : r.workload->tensors) EXPECT_NE(w.tensor, t.name);
  }
  // A design without a workload keeps none.
  EXPECT_FALSE(remove_tensor(example_design("default"), "weight").workload.has_value());
}

TEST(RemoveTensor, Errors) {
  expect_edit_error(dp_tp(), [](const Design& x) { return remove_tensor(x, "wq"); },
                    {"tensor 'wq' does not exist; tensors are w, b"});
  expect_edit_error(dp_tp(), [](const Design& x) { return remove_tensor(x, "a b"); },
                    {"tensor \"a b\" does not exist"});
  Design empty = dp_tp();
  empty.tensors.clear();
  empty.workload.reset();
  expect_edit_error(empty, [](const Design& x) { return remove_tensor(x, "w"); },
                    {"tensor 'w' does not exist; the design has no tensors"});
}

// ---- rename_tensor --------------------------------------------------------------------------------------------

TEST(RenameTensor, RenamesTheTensorAndItsWorkloadEntry) {
  const Design d = dp_tp();
  const Design r = edited(d, [](const Design& x) { return rename_tensor(x, "w", "layers.0.w"); });
  EXPECT_EQ(names(r), (std::vector<std::string>{"layers.0.w", "b"}));
  EXPECT_EQ(workload_names(r), (std::vector<std::string>{"layers.0.wx4", "bx2"}));
  EXPECT_EQ(r.tensors[0].src, d.tensors[0].src);
  EXPECT_EQ(rename_tensor(r, "layers.0.w", "w"), d);
  EXPECT_EQ(rename_tensor(d, "w", "w"), d);
  // Every tensor of every example with a workload: the entry goes with its tensor.
  for (const char* name : {"advisor-2x2", "llama3-8b", "llama3-405b"}) {
    const Design e = example_design(name);
    for (const DesignTensor& t : e.tensors) {
      const Design renamed = edited(e, [&t](const Design& x) { return rename_tensor(x, t.name, t.name + "_2"); });
      for (std::size_t i = 0; i < e.workload->tensors.size(); ++i) {
        const std::string& was = e.workload->tensors[i].tensor;
        EXPECT_EQ(renamed.workload->tensors[i].tensor, was == t.name ? t.name + "_2" : was);
      }
    }
  }
}

TEST(RenameTensor, Errors) {
  const Design d = dp_tp();
  expect_edit_error(d, [](const Design& x) { return rename_tensor(x, "wq", "x"); },
                    {"tensor 'wq' does not exist; tensors are w, b"});
  expect_edit_error(d, [](const Design& x) { return rename_tensor(x, "w", "b"); },
                    {"'b' is already the name of a tensor; tensors are w, b"});
  expect_edit_error(d, [](const Design& x) { return rename_tensor(x, "w", "w-2"); },
                    {"tensor name = \"w-2\": names must be 1 to 256 characters of A-Z, a-z, 0-9, _ and ."});
  expect_edit_error(d, [](const Design& x) { return rename_tensor(x, "w", ""); }, {"tensor name = \"\": names must"});
}

// ---- set_tensor_shape -----------------------------------------------------------------------------------------

TEST(SetTensorShape, SetsTheShapeAndKeepsTheStates) {
  const Design d = dp_tp();
  const Design r = edited(d, [](const Design& x) { return set_tensor_shape(x, "w", {2048, 32, 3}); });
  EXPECT_EQ(r.tensors[0].shape, (std::vector<std::int64_t>{2048, 32, 3}));
  EXPECT_EQ(r.tensors[0].src, d.tensors[0].src);
  EXPECT_EQ(r.tensors[1], d.tensors[1]);
  EXPECT_EQ(r.workload, d.workload);
  // Uneven shards are allowed (torch.chunk): 5 over 2 ranks.
  EXPECT_EQ(edited(d, [](const Design& x) { return set_tensor_shape(x, "w", {5, 3}); }).tensors[0].shape,
            (std::vector<std::int64_t>{5, 3}));
  // A dim nothing shards can go: w shards only dim 0.
  EXPECT_EQ(edited(d, [](const Design& x) { return set_tensor_shape(x, "w", {16}); }).tensors[0].shape,
            (std::vector<std::int64_t>{16}));
  EXPECT_EQ(set_tensor_shape(d, "w", {16, 32}), d);
}

TEST(SetTensorShape, RefusesToDropADimAStateShards) {
  const Design d = dp_tp();
  expect_edit_error(d, [](const Design& x) { return set_tensor_shape(x, "b", {}); },
                    {"shape = []: src of 'b' = \"RS(0)\": S(0) on axis 1 shards dim 0 but the tensor has 0 dims (none); "
                     "change the states first"});
  Design s = d;
  s.tensors[0].dst = parse_state("RS(1)");
  expect_edit_error(s, [](const Design& x) { return set_tensor_shape(x, "w", {16}); },
                    {"shape = [16]: dst of 'w' = \"RS(1)\": S(1) on axis 1 shards dim 1 but the tensor has 1 dim (0..0)"});
  // Once the state no longer shards it, the dim can go.
  const Design replicated = edited(s, [](const Design& x) {
    Design y = x;
    y.tensors[0].dst = parse_state("RR");
    return y;
  });
  EXPECT_NO_THROW((void)set_tensor_shape(replicated, "w", {16}));
}

TEST(SetTensorShape, Errors) {
  const Design d = dp_tp();
  expect_edit_error(d, [](const Design& x) { return set_tensor_shape(x, "x", {4}); },
                    {"tensor 'x' does not exist; tensors are w, b"});
  expect_edit_error(d, [](const Design& x) { return set_tensor_shape(x, "w", {1024, 0}); },
                    {"shape[1] = 0: dims must be >= 1"});
  expect_edit_error(d, [](const Design& x) { return set_tensor_shape(x, "w", std::vector<std::int64_t>(65, 2)); },
                    {"at most 64 dims"});
  // bfloat16: 2 bytes per element.
  expect_edit_error(d, [](const Design& x) { return set_tensor_shape(x, "b", {std::int64_t{1} << 62}); },
                    {"shape = [4611686018427387904]: the tensor would hold more than 2^63-1 bytes of bfloat16"});
}

// ---- set_tensor_dtype -----------------------------------------------------------------------------------------

TEST(SetTensorDtype, SetsTheDtype) {
  const Design d = dp_tp();
  for (const auto name : dtype_names()) {
    const DType dtype = *dtype_from_string(name);
    const Design r = edited(d, [dtype](const Design& x) { return set_tensor_dtype(x, "w", dtype); });
    EXPECT_EQ(r.tensors[0].dtype, dtype);
    EXPECT_EQ(r.tensors[1], d.tensors[1]);
  }
  EXPECT_EQ(set_tensor_dtype(d, "w", DType::Float32), d);
}

TEST(SetTensorDtype, Errors) {
  const Design d = dp_tp();
  expect_edit_error(d, [](const Design& x) { return set_tensor_dtype(x, "x", DType::Int8); },
                    {"tensor 'x' does not exist; tensors are w, b"});
  const Design big = set_tensor_shape(d, "b", {std::int64_t{1} << 61});  // 2^62 bytes of bfloat16
  expect_edit_error(big, [](const Design& x) { return set_tensor_dtype(x, "b", DType::Float64); },
                    {"dtype = float64: the tensor [2305843009213693952] would hold more than 2^63-1 bytes"});
  EXPECT_NO_THROW((void)set_tensor_dtype(big, "b", DType::Int8));
  expect_edit_error(d, [](const Design& x) { return set_tensor_dtype(x, "w", static_cast<DType>(200)); },
                    {"dtype = 200: not a dtype; dtypes are float32, float16"});
}

// ---- Inputs -----------------------------------------------------------------------------------------------------

TEST(TensorEdits, RefuseAnInvalidInput) {
  Design d = dp_tp();
  d.world = 4;  // the mesh holds 8
  for (const auto& run : std::vector<std::function<Design(const Design&)>>{
           [](const Design& x) { return add_tensor(x, tensor("x", {4})); },
           [](const Design& x) { return remove_tensor(x, "w"); },
           [](const Design& x) { return rename_tensor(x, "w", "v"); },
           [](const Design& x) { return set_tensor_shape(x, "w", {4, 4}); },
           [](const Design& x) { return set_tensor_dtype(x, "w", DType::Int8); },
       }) {
    expect_edit_error(d, run, {"mesh.shape = [2,4]: world = 4 but the mesh holds 8 ranks"});
  }
}

}  // namespace
}  // namespace meshloom
