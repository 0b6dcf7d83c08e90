// JAX mesh_utils: create_device_mesh and create_hybrid_device_mesh.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/presets/presets.hpp"

#include "presets_test_support.hpp"

namespace meshloom {
namespace {

using meshloom::testing::expect_error;

TEST(Jax, DeviceMesh) {
  EXPECT_EQ(jax_device_mesh({2, 4}, {"data", "model"}), (MeshSpec{{2, 4}, {"data", "model"}, {}}));
  EXPECT_EQ(jax_device_mesh({1, 2, 4}, {"replica", "data", "model"}, 8).shape, (std::vector<std::int64_t>{1, 2, 4}));
}

TEST(Jax, DeviceMeshErrors) {
  expect_error([] { (void)jax_device_mesh({2, 4}, {"data", "model"}, 6); }, ErrorKind::ValueError,
               "Number of devices 6 must equal the product of mesh_shape (2, 4)");
  expect_error([] { (void)jax_device_mesh({8}, {"data"}, 1); }, ErrorKind::ValueError,
               "Number of devices 1 must equal the product of mesh_shape (8,)");
  expect_error([] { (void)jax_device_mesh({2, 4}, {"data"}); }, ErrorKind::ValueError,
               "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second argument "
               "(`axis_names`), got devices.ndim == 2 and len(axis_names) == 1.");
  expect_error([] { (void)jax_device_mesh({2, 0}, {"a", "b"}); }, ErrorKind::ValueError,
               "mesh_shape must contain positive integers. Got (2, 0)");
  expect_error([] { (void)jax_device_mesh({2, 2}, {"a", "a"}); }, ErrorKind::ValueError,
               "Duplicate axis name 'a' in axis_names");
}

TEST(Jax, HybridMeshShapeAndHosts) {
  // Two hosts of 8 GPUs: ICI (1, 8), DCN (2, 1) -> (2, 8).
  const JaxHybridMesh m = jax_hybrid_device_mesh({1, 8}, {2, 1}, {"data", "model"}, 16, 2);
  EXPECT_EQ(m.logical, (MeshSpec{{2, 8}, {"data", "model"}, {}}));
  EXPECT_EQ(m.devices_per_host, 8);
  EXPECT_EQ(m.num_hosts, 2);
  EXPECT_EQ(m.ici_shape, (std::vector<std::int64_t>{1, 8}));
  EXPECT_EQ(m.dcn_shape, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(m.placement.shape, (std::vector<std::int64_t>{2, 1, 1, 8}));
  EXPECT_EQ(m.placement.names, (std::vector<std::string>{"data_dcn", "model_dcn", "data_ici", "model_ici"}));
  EXPECT_EQ(m.placement.flattened,
            (std::vector<FlattenSpec>{{"data", {"data_dcn", "data_ici"}}, {"model", {"model_dcn", "model_ici"}}}));
}

// The device at each logical position, read from the placement mesh: the logical coordinate c_i splits into
// (c_i / ici_i, c_i % ici_i) on (<n>_dcn, <n>_ici), and the placement mesh is row-major.
std::vector<std::int64_t> ids_from_placement(const JaxHybridMesh& m) {
  const std::size_t n = m.ici_shape.size();
  const std::vector<std::int64_t>& shape = m.placement.shape;
  std::vector<std::int64_t> stride(2 * n, 1);
  for (std::size_t i = 2 * n - 1; i-- > 0;) stride[i] = stride[i + 1] * shape[i + 1];
  std::int64_t total = 1;
  for (const auto s : m.logical.shape) total *= s;
  std::vector<std::int64_t> ids;
  for (std::int64_t pos = 0; pos < total; ++pos) {
    std::int64_t rem = pos;
    std::int64_t id = 0;
    for (std::size_t i = n; i-- > 0;) {
      const std::int64_t c = rem % m.logical.shape[i];
      rem /= m.logical.shape[i];
      id += (c / m.ici_shape[i]) * stride[i] + (c % m.ici_shape[i]) * stride[n + i];
    }
    ids.push_back(id);
  }
  return ids;
}

TEST(Jax, HybridDeviceIds) {
  EXPECT_EQ(jax_hybrid_device_ids({2}, {2}), (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(jax_hybrid_device_ids({1, 2}, {2, 1}), (std::vector<std::int64_t>{0, 1, 2, 3}));
  // DCN on the inner axis: np.block puts host 1's devices in the second column block.
  EXPECT_EQ(jax_hybrid_device_ids({2, 1}, {1, 2}), (std::vector<std::int64_t>{0, 2, 1, 3}));
  // ICI (2, 2), DCN (2, 2): 4 hosts of 4; row 0 = host 0 row 0, host 1 row 0.
  EXPECT_EQ(jax_hybrid_device_ids({2, 2}, {2, 2}),
            (std::vector<std::int64_t>{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15}));
  for (const auto& [ici, dcn] : std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>>{
           {{2, 2}, {2, 2}}, {{1, 8}, {4, 1}}, {{2, 4}, {2, 2}}, {{4, 1, 2}, {1, 3, 2}}}) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < ici.size(); ++i) names.push_back("a" + std::to_string(i));
    const JaxHybridMesh m = jax_hybrid_device_mesh(ici, dcn, names);
    EXPECT_EQ(ids_from_placement(m), jax_hybrid_device_ids(ici, dcn));
  }
}

TEST(Jax, HybridErrors) {
  expect_error([] { (void)jax_hybrid_device_mesh({2, 4}, {2}, {"a", "b"}); }, ErrorKind::ValueError,
               "mesh_shape (2, 4) and dcn_mesh_shape (2,) must have the same length");
  expect_error([] { (void)jax_hybrid_device_mesh({1, 8}, {2, 1}, {"data", "model"}, std::nullopt, 3); },
               ErrorKind::ValueError, "Number of slices 3 must equal the product of dcn_mesh_shape (2, 1)");
  expect_error([] { (void)jax_hybrid_device_mesh({1, 8}, {2, 1}, {"data", "model"}, 12); }, ErrorKind::ValueError,
               "Number of devices 6 must equal the product of mesh_shape (1, 8)");
  expect_error([] { (void)jax_hybrid_device_mesh({1, 8}, {2, 1}, {"data"}); }, ErrorKind::ValueError,
               "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second argument "
               "(`axis_names`), got devices.ndim == 2 and len(axis_names) == 1.");
  expect_error([] { (void)jax_hybrid_device_mesh({1, 8}, {0, 1}, {"a", "b"}); }, ErrorKind::ValueError,
               "dcn_mesh_shape must contain positive integers. Got (0, 1)");
}

}  // namespace
}  // namespace meshloom
