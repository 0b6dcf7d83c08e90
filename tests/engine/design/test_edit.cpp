// Design edits (design/edit): every edit of the mesh designer, checked by the properties that define it on the
// bundled examples and on a few hundred random small designs (fixed seed):
//   - the input is never modified and every result passes validate_design;
//   - unflatten: build_mesh of the result has the groups of DeviceMesh::unflatten on the built original for
//     every own axis, and the original groups for every flattened axis; a sharded tensor keeps its blocks;
//   - move: every axis and flattened axis keeps its groups up to the renumbering of ranks by the permuted
//     coordinates; rename keeps every group;
//   - remove drops exactly the flattened axes flattened_using names; add then remove round-trips;
//   - flatten registers what DeviceMesh's slice + flatten registers;
//   - tensors follow their axes (checked on the states' text), and the world follows the mesh when it covered it;
// and every error path, with a message that names the offending value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/design/edit.hpp"
#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/simulator.hpp"
#include "meshloom/plan/state.hpp"
#include "meshloom/presets/presets.hpp"
#include "support/example_design.hpp"
#include "support/expect_error.hpp"
#include "support/random_state.hpp"

namespace meshloom {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;

// ---- Designs --------------------------------------------------------------------------------------------------

using testing::example_design;

std::vector<Design> examples() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(MESHLOOM_EXAMPLES_DIR)) {
    if (entry.path().filename().string().ends_with(".meshloom.json")) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Design> designs;
  for (const auto& path : paths) designs.push_back(load_design(path));
  return designs;
}

// A small design: (dp=2, tp=4) over 8 ranks, 4 per host, one tensor per kind of placement.
Design dp_tp(const std::string& w_src = "S(0)R", const std::string& w_dst = "RR") {
  Design d;
  d.name = "dp-tp";
  d.world = 8;
  d.devices_per_host = 4;
  d.mesh.shape = {2, 4};
  d.mesh.names = {"dp", "tp"};
  d.tensors.push_back({"w", {16, 32}, DType::Float32, parse_state(w_src), parse_state(w_dst)});
  validate_design(d);
  return d;
}

std::int64_t ranks(const MeshSpec& mesh) {
  std::int64_t n = 1;
  for (std::int64_t size : mesh.shape) n *= size;
  return n;
}

// "name: src -> dst" for every tensor.
std::vector<std::string> states(const Design& d) {
  std::vector<std::string> out;
  for (const DesignTensor& t : d.tensors) out.push_back(t.name + ": " + to_string(t.src) + " -> " + to_string(t.dst));
  return out;
}

std::vector<std::string> flat_names(const Design& d) {
  std::vector<std::string> out;
  for (const FlattenSpec& f : d.mesh.flattened) out.push_back(f.name);
  return out;
}

const FlattenSpec* find_flat(const Design& d, const std::string& name) {
  for (const FlattenSpec& f : d.mesh.flattened) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::size_t index_of(const std::vector<std::string>& names, const std::string& name) {
  return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

DeviceMesh built(const Design& d) { return build_mesh(d.mesh, d.world); }

// Runs an edit and checks what every edit promises: the input is unchanged and the result is valid.
template <class F>
Design edited(const Design& design, F&& f) {
  const Design before = design;
  Design result = f(design);
  EXPECT_EQ(design, before) << "the edit modified its input";
  EXPECT_NO_THROW(validate_design(result));
  return result;
}

// Runs an edit that must fail with an error of `kind` holding every phrase, leaving the input unchanged.
template <class F>
void expect_edit_error(const Design& design, F&& f, ErrorKind kind, std::initializer_list<std::string> phrases) {
  const Design before = design;
  expect_error([&] { (void)f(design); }, kind, phrases);
  EXPECT_EQ(design, before) << "the failed edit modified its input";
}

// The edits' own checks raise ValueError.
template <class F>
void expect_edit_error(const Design& design, F&& f, std::initializer_list<std::string> phrases) {
  expect_edit_error(design, std::forward<F>(f), ErrorKind::ValueError, phrases);
}

// ---- Random small designs -------------------------------------------------------------------------------------

using testing::Random;
using testing::random_state;

// Up to 4 axes of sizes 1..4, world = mesh size or a multiple, flattened ordered subsets, random states.
Design random_design(Random& rng) {
  static const std::vector<std::string> axis_pool = {"dp", "tp", "pp", "cp", "ep", "dp_shard", "dp_replicate", "x1"};
  static const std::vector<std::string> flat_pool = {"dp_cp", "flat", "all", "dp_shard_cp", "f9", "loss"};
  Design d;
  d.name = "random";
  const auto ndim = static_cast<std::size_t>(rng.between(1, 4));
  std::vector<std::string> names = axis_pool;
  rng.shuffle(names);
  names.resize(ndim);
  d.mesh.names = names;
  for (std::size_t i = 0; i < ndim; ++i) d.mesh.shape.push_back(rng.between(1, 4));
  d.world = ranks(d.mesh) * (rng.chance(70) ? 1 : rng.between(2, 3));
  std::vector<std::int64_t> divisors;
  for (std::int64_t k = 1; k <= d.world; ++k) {
    if (d.world % k == 0) divisors.push_back(k);
  }
  d.devices_per_host = rng.chance(50) ? 1 : rng.pick(divisors);
  std::vector<std::string> flats = flat_pool;
  rng.shuffle(flats);
  const auto nflat = static_cast<std::size_t>(rng.between(0, 3));
  for (std::size_t f = 0; f < nflat; ++f) {
    FlattenSpec spec{flats[f], {}};
    for (std::size_t a = 0; a < ndim; ++a) {
      if (rng.chance(50)) spec.axes.push_back(names[a]);
    }
    if (spec.axes.empty()) spec.axes.push_back(names[rng.index(ndim)]);
    d.mesh.flattened.push_back(std::move(spec));
  }
  const std::int64_t ntensors = rng.between(0, 3);
  for (std::int64_t i = 0; i < ntensors; ++i) {
    DesignTensor t;
    t.name = "t" + std::to_string(i);
    const std::int64_t rank = rng.between(0, 3);
    for (std::int64_t k = 0; k < rank; ++k) t.shape.push_back(rng.between(1, 12));
    t.src = random_state(rng, ndim, rank);
    t.dst = random_state(rng, ndim, rank);
    d.tensors.push_back(std::move(t));
  }
  validate_design(d);
  return d;
}

// The bundled examples followed by `count` random designs.
std::vector<Design> corpus(std::uint32_t seed, int count = 300) {
  std::vector<Design> designs = examples();
  Random rng(seed);
  for (int i = 0; i < count; ++i) designs.push_back(random_design(rng));
  return designs;
}

// Every placement of the tensors of `after`, by axis name, equals the one of `before` on the axis of that name
// (Replicate where `before` has no such axis); and every dim's shard order, as names, keeps its relative order.
void expect_carried_by_name(const Design& before, const Design& after) {
  ASSERT_EQ(before.tensors.size(), after.tensors.size());
  for (std::size_t t = 0; t < before.tensors.size(); ++t) {
    for (const auto& [old_state, new_state] : {std::pair{&before.tensors[t].src, &after.tensors[t].src},
                                               std::pair{&before.tensors[t].dst, &after.tensors[t].dst}}) {
      ASSERT_EQ(new_state->ndim(), after.mesh.names.size());
      for (std::size_t j = 0; j < after.mesh.names.size(); ++j) {
        const std::size_t old = index_of(before.mesh.names, after.mesh.names[j]);
        const Placement expected = old < before.mesh.names.size() ? old_state->placement(old) : Placement::replicate();
        EXPECT_EQ(new_state->placement(j), expected) << after.mesh.names[j] << " of " << after.tensors[t].name;
      }
      for (const ShardOrderEntry& entry : new_state->shard_order()) {
        std::vector<std::string> kept;
        for (std::size_t a : old_state->shard_axes(entry.dim)) {
          if (index_of(after.mesh.names, before.mesh.names[a]) < after.mesh.names.size()) {
            kept.push_back(before.mesh.names[a]);
          }
        }
        std::vector<std::string> got;
        for (std::size_t a : entry.axes) got.push_back(after.mesh.names[a]);
        EXPECT_EQ(got, kept) << "dim " << entry.dim << " of " << after.tensors[t].name;
      }
    }
  }
}

// Groups as a sorted list of rank lists; `as_sets` also sorts each group.
std::vector<std::vector<std::int64_t>> group_list(const RankTensor& groups, bool as_sets) {
  std::vector<std::vector<std::int64_t>> out;
  const auto size = static_cast<std::size_t>(groups.shape.at(1));
  for (std::size_t g = 0; g < groups.values.size() / size; ++g) {
    std::vector<std::int64_t> group(groups.values.begin() + static_cast<std::ptrdiff_t>(g * size),
                                    groups.values.begin() + static_cast<std::ptrdiff_t>((g + 1) * size));
    if (as_sets) std::sort(group.begin(), group.end());
    out.push_back(std::move(group));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- flattened_using --------------------------------------------------------------------------------------------

TEST(FlattenedUsing, NamesTheFlattenedAxesOfAnAxisInCreationOrder) {
  const Design d = example_design("torchtitan-4d");
  EXPECT_EQ(flattened_using(d, "dp_shard"), (std::vector<std::string>{"dp", "dp_shard_cp", "dp_cp"}));
  EXPECT_EQ(flattened_using(d, "dp_replicate"), (std::vector<std::string>{"dp", "dp_cp"}));
  EXPECT_TRUE(flattened_using(d, "pp").empty());
  EXPECT_TRUE(flattened_using(d, "tp").empty());
  EXPECT_TRUE(flattened_using(d, "nope").empty());
  EXPECT_TRUE(flattened_using(d, "dp").empty());  // a flattened axis' own name is not one of its axes
}

// ---- add_axis ---------------------------------------------------------------------------------------------------

TEST(AddAxis, InsertsAReplicatedAxisAndTheWorldFollowsTheMesh) {
  const Design d = dp_tp("S(0)R", "RS(1)");
  const Design r = edited(d, [](const Design& x) { return add_axis(x, 1, "cp", 2); });
  EXPECT_EQ(r.mesh.shape, (std::vector<std::int64_t>{2, 2, 4}));
  EXPECT_EQ(r.mesh.names, (std::vector<std::string>{"dp", "cp", "tp"}));
  EXPECT_EQ(r.world, 16);
  EXPECT_EQ(r.devices_per_host, 4);
  EXPECT_EQ(states(r), (std::vector<std::string>{"w: S(0)RR -> RRS(1)"}));
  EXPECT_EQ(states(add_axis(d, 0, "pp", 3)), (std::vector<std::string>{"w: RS(0)R -> RRS(1)"}));
  EXPECT_EQ(states(add_axis(d, 2, "ep", 1)), (std::vector<std::string>{"w: S(0)RR -> RS(1)R"}));
  EXPECT_EQ(add_axis(d, 2, "ep", 1).world, 8);
}

TEST(AddAxis, RenumbersShardOrders) {
  const Design d = example_design("default");  // (pp, dp, tp); weight RS(0)[1]S(0)[0]: dim 0 split by tp, then dp
  EXPECT_EQ(edited(d, [](const Design& x) { return add_axis(x, 0, "ep", 2); }).tensors[0].src,
            parse_state("RRS(0)[1]S(0)[0]"));
  EXPECT_EQ(add_axis(d, 2, "ep", 2).tensors[0].src, parse_state("RS(0)[1]RS(0)[0]"));
  EXPECT_EQ(add_axis(d, 3, "ep", 2).tensors[0].src, parse_state("RS(0)[1]S(0)[0]R"));
  // Flattened axes keep their lists.
  EXPECT_EQ(add_axis(d, 2, "ep", 2).mesh.flattened, d.mesh.flattened);
}

TEST(AddAxis, KeepsAWorldLargerThanTheMesh) {
  Design d = dp_tp();
  d.world = 32;
  const Design r = edited(d, [](const Design& x) { return add_axis(x, 0, "pp", 4); });
  EXPECT_EQ(r.world, 32);
  expect_edit_error(d, [](const Design& x) { return add_axis(x, 0, "pp", 8); },
                    {"mesh: world = 32 but the mesh holds 64 ranks"});
}

TEST(AddAxis, ThenRemoveRoundTrips) {
  Random rng(7);
  int checked = 0;
  for (const Design& d : corpus(1234)) {
    SCOPED_TRACE(to_json_text(d));
    for (std::size_t index = 0; index <= d.mesh.shape.size(); ++index) {
      const std::int64_t size = rng.between(1, 3);
      if (ranks(d.mesh) != d.world && ranks(d.mesh) * size > d.world) {
        expect_edit_error(d, [&](const Design& x) { return add_axis(x, index, "added", size); },
                          {"mesh: world = " + std::to_string(d.world) + " but the mesh holds " +
                           std::to_string(ranks(d.mesh) * size) + " ranks"});
        continue;
      }
      const Design added = edited(d, [&](const Design& x) { return add_axis(x, index, "added", size); });
      EXPECT_EQ(added.mesh.names[index], "added");
      EXPECT_EQ(added.mesh.shape[index], size);
      EXPECT_EQ(added.world, ranks(d.mesh) == d.world ? d.world * size : d.world);
      expect_carried_by_name(d, added);
      for (const DesignTensor& t : added.tensors) {
        EXPECT_TRUE(t.src.placement(index).is_replicate());
        EXPECT_TRUE(t.dst.placement(index).is_replicate());
      }
      // The world rule is not symmetric when the added axis makes the mesh cover a larger world exactly: the
      // removal then lets the world follow the mesh.
      if (ranks(d.mesh) != d.world && ranks(added.mesh) == d.world) continue;
      EXPECT_EQ(edited(added, [](const Design& x) { return remove_axis(x, "added"); }), d);
      ++checked;
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(checked, 700);
}

TEST(AddAxis, Errors) {
  const Design d = example_design("default");
  expect_edit_error(d, [](const Design& x) { return add_axis(x, 4, "ep", 2); },
                    {"index = 4: a new axis goes at 0..3", "axes are pp, dp, tp"});
  expect_edit_error(d, [](const Design& x) { return add_axis(x, 1, "a b", 2); },
                    {"axis name = \"a b\": names must be 1 to 64 characters"});
  expect_edit_error(d, [](const Design& x) { return add_axis(x, 1, "", 2); }, {"axis name = \"\": names must be"});
  expect_edit_error(d, [](const Design& x) { return add_axis(x, 1, "tp", 2); },
                    {"'tp' is already the name of a mesh axis; axes are pp, dp, tp"});
  expect_edit_error(d, [](const Design& x) { return add_axis(x, 1, "dp_tp", 2); },
                    {"'dp_tp' is already the name of a flattened axis; flattened axes are dp_tp"});
  expect_edit_error(d, [](const Design& x) { return add_axis(x, 1, "ep", 0); }, {"size = 0: axis sizes must be >= 1"});
  expect_edit_error(d, [](const Design& x) { return add_axis(x, 1, "ep", -3); },
                    {"size = -3: axis sizes must be >= 1"});
  expect_edit_error(example_design("llama3-405b"), [](const Design& x) { return add_axis(x, 0, "big", 131072); },
                    {"mesh: the mesh holds 2147483648 ranks; a world holds at most 2147483647"});

  Design full;
  full.name = "full";
  for (std::size_t i = 0; i < kMaxDesignAxes; ++i) {
    full.mesh.shape.push_back(1);
    full.mesh.names.push_back("a" + std::to_string(i));
  }
  expect_edit_error(full, [](const Design& x) { return add_axis(x, 0, "one_more", 1); },
                    {"the mesh has 64 axes; at most 64"});
}

// ---- remove_axis ------------------------------------------------------------------------------------------------

TEST(RemoveAxis, DropsThePlacementAndTheAxisFromShardOrders) {
  Design d = example_design("default");  // weight RS(0)[1]S(0)[0] -> RRS(0); activation RS(0)P(sum) -> RRS(1)
  d.devices_per_host = 2;
  const Design r = edited(d, [](const Design& x) { return remove_axis(x, "tp"); });
  EXPECT_EQ(r.mesh.names, (std::vector<std::string>{"pp", "dp"}));
  EXPECT_EQ(r.world, 4);
  EXPECT_EQ(r.devices_per_host, 2);
  EXPECT_TRUE(r.mesh.flattened.empty());
  EXPECT_EQ(states(r), (std::vector<std::string>{"weight: RS(0) -> RR", "activation: RS(0) -> RR"}));
  EXPECT_EQ(states(remove_axis(d, "pp")),
            (std::vector<std::string>{"weight: S(0)[1]S(0)[0] -> RS(0)", "activation: S(0)P(sum) -> RS(1)"}));
}

TEST(RemoveAxis, RemovesExactlyTheFlattenedAxesThatUseIt) {
  int removed_some = 0;
  for (const Design& d : corpus(99)) {
    SCOPED_TRACE(to_json_text(d));
    for (const std::string& axis : d.mesh.names) {
      if (d.mesh.names.size() == 1) break;
      const std::int64_t new_ranks = ranks(d.mesh) / d.mesh.shape[index_of(d.mesh.names, axis)];
      const bool follows = ranks(d.mesh) == d.world;
      const std::int64_t world = follows ? new_ranks : d.world;
      const Design r = edited(d, [&](const Design& x) { return remove_axis(x, axis); });
      EXPECT_EQ(r.devices_per_host, follows ? std::gcd(d.devices_per_host, world) : d.devices_per_host);
      const std::vector<std::string> users = flattened_using(d, axis);
      std::vector<FlattenSpec> kept;
      for (const FlattenSpec& f : d.mesh.flattened) {
        if (std::find(users.begin(), users.end(), f.name) == users.end()) kept.push_back(f);
      }
      EXPECT_EQ(r.mesh.flattened, kept);
      EXPECT_EQ(r.world, world);
      removed_some += users.empty() ? 0 : 1;
      expect_carried_by_name(d, r);
      // The other axes keep their sizes and order.
      std::vector<std::string> names = d.mesh.names;
      names.erase(names.begin() + static_cast<std::ptrdiff_t>(index_of(names, axis)));
      EXPECT_EQ(r.mesh.names, names);
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(removed_some, 50);
}

TEST(RemoveAxis, Errors) {
  const Design d = example_design("hsdp-2d");  // (dp_replicate=2, dp_shard=4), flattened dp, devices_per_host 4
  expect_edit_error(d, [](const Design& x) { return remove_axis(x, "cp"); },
                    {"axis 'cp' does not exist; axes are dp_replicate, dp_shard"});
  expect_edit_error(d, [](const Design& x) { return remove_axis(x, "dp"); },
                    {"'dp' is a flattened axis, not a mesh axis; axes are dp_replicate, dp_shard"});
  expect_edit_error(d, [](const Design& x) { return remove_axis(x, "a\nb"); }, {"axis \"a\\nb\" does not exist"});
  // A following world keeps whole hosts: devices_per_host becomes gcd(devices_per_host, world).
  EXPECT_EQ(remove_axis(d, "dp_shard").devices_per_host, 2);
  EXPECT_EQ(remove_axis(example_design("default"), "tp").devices_per_host, 4);
  const Design one = remove_axis(d, "dp_replicate");
  EXPECT_EQ(one.mesh.names, (std::vector<std::string>{"dp_shard"}));
  EXPECT_TRUE(one.mesh.flattened.empty());
  expect_edit_error(one, [](const Design& x) { return remove_axis(x, "dp_shard"); },
                    {"cannot remove 'dp_shard': a mesh keeps at least one axis"});
}

// ---- move_axis --------------------------------------------------------------------------------------------------

TEST(MoveAxis, PermutesPlacementsWithTheAxes) {
  const Design d = dp_tp("S(0)R", "RP(avg)");
  const Design r = edited(d, [](const Design& x) { return move_axis(x, "tp", 0); });
  EXPECT_EQ(r.mesh.shape, (std::vector<std::int64_t>{4, 2}));
  EXPECT_EQ(r.mesh.names, (std::vector<std::string>{"tp", "dp"}));
  EXPECT_EQ(r.world, 8);
  EXPECT_EQ(states(r), (std::vector<std::string>{"w: RS(0) -> P(avg)R"}));
  EXPECT_EQ(edited(d, [](const Design& x) { return move_axis(x, "tp", 1); }), d);

  // A dim's shard order keeps its axes: default's weight splits dim 0 by tp, then dp.
  const Design def = example_design("default");
  EXPECT_EQ(states(move_axis(def, "tp", 0))[0], "weight: S(0)[0]RS(0)[1] -> S(0)RR");
  EXPECT_EQ(states(move_axis(def, "pp", 2))[0], "weight: S(0)[1]S(0)[0]R -> RS(0)R");
  // Flattened lists follow the new mesh order.
  EXPECT_EQ(move_axis(def, "tp", 0).mesh.flattened, (std::vector<FlattenSpec>{{"dp_tp", {"tp", "dp"}}}));
}

TEST(MoveAxis, GroupsOfTheMovedMeshAreInitDeviceMeshOfTheNewShape) {
  const Design d = dp_tp();
  const Design r = move_axis(d, "tp", 0);
  EXPECT_EQ(built(d).groups("tp").values, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(built(r).groups("tp").values, (std::vector<std::int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(built(r), DeviceMesh::init({4, 2}, DeviceMesh::Names{"tp", "dp"}));
}

// Every axis and flattened axis keeps its groups up to the renumbering of ranks: rank r at coordinate c before
// is rank r' at the permuted coordinate after. Own axes keep the order inside a group too.
TEST(MoveAxis, KeepsEveryGroupUpToTheRenumberingOfRanks) {
  int checked = 0;
  for (const Design& d : corpus(4321, 200)) {
    if (ranks(d.mesh) > 4096) continue;  // llama3-405b: its 16,384 ranks make the check slow, not stronger
    SCOPED_TRACE(to_json_text(d));
    const DeviceMesh before = built(d);
    const std::size_t n = d.mesh.shape.size();
    for (const std::string& axis : d.mesh.names) {
      for (std::size_t index = 0; index < n; ++index) {
        const Design r = edited(d, [&](const Design& x) { return move_axis(x, axis, index); });
        EXPECT_EQ(r.world, d.world);
        EXPECT_EQ(r.devices_per_host, d.devices_per_host);
        expect_carried_by_name(d, r);
        std::vector<std::size_t> order;  // order[j]: the old index of new axis j
        for (const std::string& name : r.mesh.names) order.push_back(index_of(d.mesh.names, name));
        for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(r.mesh.shape[j], d.mesh.shape[order[j]]);
        // Flattened axes: same axes, in the new mesh order.
        ASSERT_EQ(flat_names(r), flat_names(d));
        for (std::size_t f = 0; f < d.mesh.flattened.size(); ++f) {
          std::vector<std::string> expected;
          for (const std::string& name : r.mesh.names) {
            const auto& axes = d.mesh.flattened[f].axes;
            if (std::find(axes.begin(), axes.end(), name) != axes.end()) expected.push_back(name);
          }
          EXPECT_EQ(r.mesh.flattened[f].axes, expected);
        }
        const DeviceMesh after = built(r);
        auto renumber = [&](std::int64_t rank) {
          const std::vector<std::int64_t> c = rank_coordinate(d.mesh.shape, static_cast<std::size_t>(rank));
          std::vector<std::int64_t> moved;
          for (std::size_t j = 0; j < n; ++j) moved.push_back(c[order[j]]);
          return static_cast<std::int64_t>(rank_index(r.mesh.shape, moved));
        };
        auto mapped = [&](const std::string& name) {
          RankTensor g = before.groups(name);
          for (auto& rank : g.values) rank = renumber(rank);
          return g;
        };
        for (const std::string& name : d.mesh.names) {
          EXPECT_EQ(group_list(after.groups(name), false), group_list(mapped(name), false)) << name;
        }
        for (const FlattenSpec& f : d.mesh.flattened) {
          EXPECT_EQ(group_list(after.groups(f.name), true), group_list(mapped(f.name), true)) << f.name;
        }
        ++checked;
      }
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(checked, 1000);
}

TEST(MoveAxis, Errors) {
  const Design d = example_design("default");
  expect_edit_error(d, [](const Design& x) { return move_axis(x, "cp", 0); },
                    {"axis 'cp' does not exist; axes are pp, dp, tp"});
  expect_edit_error(d, [](const Design& x) { return move_axis(x, "dp_tp", 0); },
                    {"'dp_tp' is a flattened axis, not a mesh axis; axes are pp, dp, tp"});
  expect_edit_error(d, [](const Design& x) { return move_axis(x, "tp", 3); },
                    {"index = 3: a mesh axis moves to 0..2 (0 = outermost); axes are pp, dp, tp"});
}

// ---- rename_axis ------------------------------------------------------------------------------------------------

TEST(RenameAxis, RenamesTheAxisAndEveryReference) {
  const Design d = example_design("torchtitan-4d");
  const Design r = edited(d, [](const Design& x) { return rename_axis(x, "dp_shard", "fsdp"); });
  EXPECT_EQ(r.mesh.names, (std::vector<std::string>{"pp", "dp_replicate", "fsdp", "tp"}));
  EXPECT_EQ(r.mesh.flattened, (std::vector<FlattenSpec>{{"dp", {"dp_replicate", "fsdp"}},
                                                         {"dp_shard_cp", {"fsdp"}},
                                                         {"dp_cp", {"dp_replicate", "fsdp"}}}));
  EXPECT_EQ(r.tensors, d.tensors);
  const Design f = edited(d, [](const Design& x) { return rename_axis(x, "dp_cp", "loss"); });
  EXPECT_EQ(flat_names(f), (std::vector<std::string>{"dp", "dp_shard_cp", "loss"}));
  EXPECT_EQ(f.mesh.names, d.mesh.names);
  EXPECT_EQ(edited(d, [](const Design& x) { return rename_axis(x, "tp", "tp"); }), d);
  EXPECT_EQ(edited(d, [](const Design& x) { return rename_axis(x, "dp", "dp"); }), d);
}

TEST(RenameAxis, KeepsEveryGroup) {
  for (const Design& d : corpus(555, 200)) {
    SCOPED_TRACE(to_json_text(d));
    const DeviceMesh before = built(d);
    std::vector<std::string> all = d.mesh.names;
    for (const std::string& name : flat_names(d)) all.push_back(name);
    for (const std::string& from : all) {
      const Design r = edited(d, [&](const Design& x) { return rename_axis(x, from, "renamed"); });
      EXPECT_EQ(r.world, d.world);
      EXPECT_EQ(r.tensors, d.tensors);
      const DeviceMesh after = built(r);
      for (const std::string& name : all) {
        EXPECT_EQ(after.groups(name == from ? "renamed" : name), before.groups(name)) << from << " -> " << name;
      }
      // Renaming back restores the design.
      EXPECT_EQ(rename_axis(r, "renamed", from), d);
    }
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(RenameAxis, Errors) {
  const Design d = example_design("default");
  expect_edit_error(d, [](const Design& x) { return rename_axis(x, "cp", "context"); },
                    {"axis 'cp' does not exist; axes are pp, dp, tp; flattened axes are dp_tp"});
  expect_edit_error(example_design("pp-dp-tp-3d"), [](const Design& x) { return rename_axis(x, "cp", "context"); },
                    {"axis 'cp' does not exist; axes are pp, dp, tp; the mesh has no flattened axes"});
  expect_edit_error(d, [](const Design& x) { return rename_axis(x, "tp", "t-p"); },
                    {"axis name = \"t-p\": names must be 1 to 64 characters of A-Z, a-z, 0-9 and _"});
  expect_edit_error(d, [](const Design& x) { return rename_axis(x, "dp_tp", ""); },
                    {"flattened axis name = \"\": names must be"});
  expect_edit_error(d, [](const Design& x) { return rename_axis(x, "tp", std::string(65, 'x')); },
                    {"axis name = \"xxxx", "names must be 1 to 64 characters"});
  expect_edit_error(d, [](const Design& x) { return rename_axis(x, "tp", "dp"); },
                    {"'dp' is already the name of a mesh axis; axes are pp, dp, tp"});
  expect_edit_error(d, [](const Design& x) { return rename_axis(x, "tp", "dp_tp"); },
                    {"'dp_tp' is already the name of a flattened axis; flattened axes are dp_tp"});
  expect_edit_error(d, [](const Design& x) { return rename_axis(x, "dp_tp", "pp"); },
                    {"'pp' is already the name of a mesh axis"});
}

// ---- resize_axis ------------------------------------------------------------------------------------------------

TEST(ResizeAxis, TheWorldFollowsTheMeshThatCoveredIt) {
  const Design d = dp_tp("S(0)R", "RS(1)");
  const Design r = edited(d, [](const Design& x) { return resize_axis(x, "tp", 8); });
  EXPECT_EQ(r.mesh.shape, (std::vector<std::int64_t>{2, 8}));
  EXPECT_EQ(r.world, 16);
  EXPECT_EQ(r.tensors, d.tensors);
  EXPECT_EQ(edited(d, [](const Design& x) { return resize_axis(x, "tp", 2); }).world, 4);
  EXPECT_EQ(resize_axis(d, "tp", 4), d);

  Design wide = d;
  wide.world = 16;  // the mesh does not cover the world: it stays
  EXPECT_EQ(edited(wide, [](const Design& x) { return resize_axis(x, "tp", 2); }).world, 16);
  EXPECT_EQ(resize_axis(wide, "tp", 8).world, 16);
  expect_edit_error(wide, [](const Design& x) { return resize_axis(x, "tp", 16); },
                    {"mesh: world = 16 but the mesh holds 32 ranks"});
}

TEST(ResizeAxis, Errors) {
  const Design d = dp_tp();
  EXPECT_EQ(resize_axis(d, "tp", 3).devices_per_host, 2);  // world 6 follows; 4 per host -> gcd(4, 6) = 2
  expect_edit_error(d, [](const Design& x) { return resize_axis(x, "tp", 0); }, {"size = 0: axis sizes must be >= 1"});
  expect_edit_error(d, [](const Design& x) { return resize_axis(x, "cp", 2); },
                    {"axis 'cp' does not exist; axes are dp, tp"});
  expect_edit_error(example_design("hsdp-2d"), [](const Design& x) { return resize_axis(x, "dp", 2); },
                    {"'dp' is a flattened axis, not a mesh axis"});
  expect_edit_error(d, [](const Design& x) { return resize_axis(x, "tp", std::int64_t{1} << 62); },
                    {"mesh: the mesh holds more than 2^63-1 ranks; a world holds at most 2147483647"});
  expect_edit_error(d, [](const Design& x) { return resize_axis(x, "tp", std::int64_t{1} << 30); },
                    {"mesh: the mesh holds 2147483648 ranks"});
}

// ---- set_world, set_devices_per_host ----------------------------------------------------------------------------

TEST(SetWorld, SetsTheWorldOrNamesTheRule) {
  const Design d = dp_tp();
  const Design r = edited(d, [](const Design& x) { return set_world(x, 16); });
  EXPECT_EQ(r.world, 16);
  EXPECT_EQ(r.mesh, d.mesh);
  EXPECT_EQ(set_world(r, 8), d);
  expect_edit_error(d, [](const Design& x) { return set_world(x, 4); }, {"mesh: world = 4 but the mesh holds 8 ranks"});
  expect_edit_error(d, [](const Design& x) { return set_world(x, 0); }, {"world = 0: must be in 1..2147483647"});
  expect_edit_error(d, [](const Design& x) { return set_world(x, kMaxDesignWorld + 1); },
                    {"world = 2147483648: must be in 1..2147483647"});
  expect_edit_error(d, [](const Design& x) { return set_world(x, 10); },
                    {"devices_per_host = 4 does not divide world = 10"});
}

TEST(SetDevicesPerHost, SetsItOrNamesTheRule) {
  const Design d = dp_tp();
  EXPECT_EQ(edited(d, [](const Design& x) { return set_devices_per_host(x, 8); }).devices_per_host, 8);
  EXPECT_EQ(set_devices_per_host(d, 1).devices_per_host, 1);
  expect_edit_error(d, [](const Design& x) { return set_devices_per_host(x, 3); },
                    {"devices_per_host = 3 does not divide world = 8"});
  expect_edit_error(d, [](const Design& x) { return set_devices_per_host(x, 0); },
                    {"devices_per_host = 0: must be >= 1"});
  expect_edit_error(d, [](const Design& x) { return set_devices_per_host(x, -4); },
                    {"devices_per_host = -4: must be >= 1"});
}

// ---- flatten_axes, remove_flattened -----------------------------------------------------------------------------

TEST(FlattenAxes, RegistersTheFlattenedAxis) {
  const Design d = example_design("pp-dp-tp-3d");
  const Design r = edited(d, [](const Design& x) { return flatten_axes(x, {"dp", "tp"}); });
  EXPECT_EQ(r.mesh.flattened, (std::vector<FlattenSpec>{{"dp_tp", {"dp", "tp"}}}));
  EXPECT_EQ(built(r).groups("dp_tp").values, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  const Design s = edited(r, [](const Design& x) { return flatten_axes(x, {"pp", "tp"}, "outer"); });
  EXPECT_EQ(s.mesh.flattened.back(), (FlattenSpec{"outer", {"pp", "tp"}}));
  EXPECT_EQ(built(s).groups("outer").values, (std::vector<std::int64_t>{0, 1, 4, 5, 2, 3, 6, 7}));
  EXPECT_EQ(s.tensors, d.tensors);
  EXPECT_EQ(s.world, d.world);
  // The same groups under another name are a new flattened axis (torchtitan's dp and dp_cp).
  EXPECT_EQ(flat_names(flatten_axes(r, {"dp", "tp"}, "again")), (std::vector<std::string>{"dp_tp", "again"}));
}

TEST(FlattenAxes, NoOps) {
  const Design d = example_design("default");  // dp_tp = [dp, tp]
  EXPECT_EQ(edited(d, [](const Design& x) { return flatten_axes(x, {"dp", "tp"}); }), d);
  EXPECT_EQ(edited(d, [](const Design& x) { return flatten_axes(x, {"dp", "tp"}, "dp_tp"); }), d);
  // mesh["tp"]._flatten("tp") is mesh["tp"]: nothing is registered.
  EXPECT_EQ(edited(d, [](const Design& x) { return flatten_axes(x, {"tp"}); }), d);
  EXPECT_EQ(edited(d, [](const Design& x) { return flatten_axes(x, {"pp"}, "pp"); }), d);
  // Size-1 axes hold no ranks: dp_cp = [dp, cp] with cp = 1 has the groups of [dp].
  const Design llama = example_design("llama3-405b");
  EXPECT_EQ(edited(llama, [](const Design& x) { return flatten_axes(x, {"dp"}, "dp_cp"); }), llama);
}

TEST(FlattenAxes, RegistersWhatDeviceMeshRegisters) {
  Random rng(31);
  int flattened = 0;
  for (const Design& d : corpus(777)) {
    if (ranks(d.mesh) > 4096) continue;
    SCOPED_TRACE(to_json_text(d));
    std::vector<std::string> axes;
    for (const std::string& name : d.mesh.names) {
      if (rng.chance(50)) axes.push_back(name);
    }
    if (axes.empty()) axes.push_back(rng.pick(d.mesh.names));
    const std::optional<std::string> name =
        rng.chance(50) ? std::optional<std::string>("fresh") : std::optional<std::string>();
    std::string default_name;
    for (const std::string& a : axes) default_name += (default_name.empty() ? "" : "_") + a;
    const std::string flat = name.value_or(default_name);
    if (flat == "fresh" || (find_flat(d, flat) == nullptr &&
                            std::find(d.mesh.names.begin(), d.mesh.names.end(), flat) == d.mesh.names.end())) {
      const Design r = edited(d, [&](const Design& x) { return flatten_axes(x, axes, name); });
      EXPECT_EQ(r.mesh.flattened.size(), d.mesh.flattened.size() + 1);
      EXPECT_EQ(r.mesh.flattened.back(), (FlattenSpec{flat, axes}));
      const DeviceMesh root = built(d);
      const DeviceMesh expected = root.slice(axes).flatten(flat);
      EXPECT_EQ(built(r).groups(flat), expected.groups(flat));
      for (const std::string& own : d.mesh.names) EXPECT_EQ(built(r).groups(own), root.groups(own));
      EXPECT_EQ(r.tensors, d.tensors);
      // Removing it again restores the design.
      EXPECT_EQ(edited(r, [&](const Design& x) { return remove_flattened(x, flat); }), d);
      ++flattened;
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(flattened, 200);
}

TEST(FlattenAxes, Errors) {
  const Design d = example_design("default");  // (pp, dp, tp), dp_tp = [dp, tp]
  // Design rules, checked first.
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {"dp", "cp"}); },
                    {"axis 'cp' does not exist; axes are pp, dp, tp"});
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {"pp", "dp_tp"}); },
                    {"'dp_tp' is a flattened axis, not a mesh axis; axes are pp, dp, tp"});
  // PyTorch's slice and flatten checks, messages verbatim.
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {"tp", "dp"}); },
                    ErrorKind::KeyError, {"Invalid mesh_dim_names ('tp', 'dp') specified. Mesh dim indices should be in ascending order."});
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {"dp", "dp"}); },
                    ErrorKind::RuntimeError, {"Slicing overlapping dim_names ('dp', 'dp') is not allowed."});
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {}); },
                    {"Cannot slice a DeviceMesh by an empty tuple of mesh_dim_names"});
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {"pp", "dp"}, "tp"); },
                    {"tp already exists for submesh of the DeviceMesh", "Please specify another valid mesh_dim_name."});
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {"tp"}, "dp"); },
                    {"dp already exists for submesh of the DeviceMesh"});
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {"pp", "dp"}, "dp_tp"); },
                    {"Flatten mesh with mesh_dim_name dp_tp has been created before, Please specify another valid "
                     "mesh_dim_name."});
  // The name rule.
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {"pp", "dp"}, "p d"); },
                    {"flattened axis name = \"p d\": names must be 1 to 64 characters"});
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {"pp", "dp"}, ""); },
                    {"flattened axis name = \"\": names must be"});
  // Size-1 axes: PyTorch lets any order through, a design does not.
  const Design llama = example_design("llama3-405b");  // (dp=128, pp=16, cp=1, tp=8)
  expect_edit_error(llama, [](const Design& x) { return flatten_axes(x, {"tp", "cp"}); },
                    {"axes ('tp', 'cp') are not in mesh order (outer to inner: dp, pp, cp, tp)"});
  expect_edit_error(llama, [](const Design& x) { return flatten_axes(x, {"cp", "cp"}); },
                    {"axis 'cp' is listed twice in ('cp', 'cp')"});
}

TEST(FlattenAxes, AtMost64) {
  Design d = example_design("pp-dp-tp-3d");
  for (std::size_t i = 0; i < kMaxDesignFlattened; ++i) {
    d = edited(d, [i](const Design& x) { return flatten_axes(x, {"dp", "tp"}, "f" + std::to_string(i)); });
  }
  expect_edit_error(d, [](const Design& x) { return flatten_axes(x, {"dp", "tp"}, "one_more"); },
                    {"mesh.flattened: 65 flattened axes; at most 64"});
}

TEST(RemoveFlattened, RemovesItOrNamesTheRule) {
  const Design d = example_design("torchtitan-4d");
  const Design r = edited(d, [](const Design& x) { return remove_flattened(x, "dp_shard_cp"); });
  EXPECT_EQ(flat_names(r), (std::vector<std::string>{"dp", "dp_cp"}));
  EXPECT_EQ(r.mesh.names, d.mesh.names);
  EXPECT_EQ(r.tensors, d.tensors);
  expect_edit_error(d, [](const Design& x) { return remove_flattened(x, "loss"); },
                    {"flattened axis 'loss' does not exist; flattened axes are dp, dp_shard_cp, dp_cp"});
  expect_edit_error(d, [](const Design& x) { return remove_flattened(x, "tp"); },
                    {"'tp' is a mesh axis, not a flattened axis; flattened axes are dp, dp_shard_cp, dp_cp"});
  expect_edit_error(example_design("pp-dp-tp-3d"), [](const Design& x) { return remove_flattened(x, "dp_tp"); },
                    {"flattened axis 'dp_tp' does not exist; the mesh has no flattened axes"});
}

// ---- unflatten_axis ---------------------------------------------------------------------------------------------

TEST(UnflattenAxis, SplitsTheAxisInPlace) {
  const Design d = dp_tp("S(0)R", "RP(avg)");
  const Design r = edited(d, [](const Design& x) { return unflatten_axis(x, "tp", {2, 2}, {"tp_a", "tp_b"}); });
  EXPECT_EQ(r.mesh.shape, (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(r.mesh.names, (std::vector<std::string>{"dp", "tp_a", "tp_b"}));
  EXPECT_EQ(r.world, 8);
  EXPECT_EQ(r.devices_per_host, 4);
  EXPECT_EQ(states(r), (std::vector<std::string>{"w: S(0)RR -> RP(avg)P(avg)"}));
  // A part may keep the axis' name; a split into one part is a rename.
  EXPECT_EQ(unflatten_axis(d, "tp", {4, 1}, {"tp", "one"}).mesh.names, (std::vector<std::string>{"dp", "tp", "one"}));
  EXPECT_EQ(unflatten_axis(d, "tp", {4}, {"t"}), rename_axis(d, "tp", "t"));
}

TEST(UnflattenAxis, ShardedPartsStandInTheAxisPlaceInTheShardOrder) {
  // Dim 0 split by tp, then dp: tp's parts take tp's place, outer first.
  const Design d = dp_tp("S(0)[1]S(0)[0]", "S(1)S(0)");
  const Design r = edited(d, [](const Design& x) { return unflatten_axis(x, "tp", {2, 2}, {"tp_a", "tp_b"}); });
  EXPECT_EQ(states(r), (std::vector<std::string>{"w: S(0)[2]S(0)[0]S(0)[1] -> S(1)S(0)[0]S(0)[1]"}));
  const Design s = edited(d, [](const Design& x) { return unflatten_axis(x, "dp", {2, 1}, {"dp_a", "dp_b"}); });
  EXPECT_EQ(states(s), (std::vector<std::string>{"w: S(0)[1]S(0)[2]S(0)[0] -> S(1)[0]S(1)[1]S(0)"}));
}

TEST(UnflattenAxis, ReplacesTheAxisInFlattenedAxes) {
  const Design d = example_design("torchtitan-4d");
  const Design r = edited(d, [](const Design& x) {
    return unflatten_axis(x, "dp_shard", {2, 2}, {"dp_shard_out", "dp_shard_in"});
  });
  EXPECT_EQ(r.mesh.flattened, (std::vector<FlattenSpec>{{"dp", {"dp_replicate", "dp_shard_out", "dp_shard_in"}},
                                                         {"dp_shard_cp", {"dp_shard_out", "dp_shard_in"}},
                                                         {"dp_cp", {"dp_replicate", "dp_shard_out", "dp_shard_in"}}}));
  EXPECT_EQ(states(r)[0], "tok_embeddings: RRS(0)[1]S(0)[2]S(0)[0] -> RRRRS(0)");
  EXPECT_EQ(states(r)[3], "feed_forward_w2_grad: RP(avg)P(avg)P(avg)S(1) -> RRS(0)[0]S(0)[1]S(1)");
}

// A random split of `size` into 1 to 3 parts (1s included).
std::vector<std::int64_t> random_split(Random& rng, std::int64_t size) {
  std::vector<std::int64_t> divisors;
  auto divisors_of = [&divisors](std::int64_t n) {
    divisors.clear();
    for (std::int64_t k = 1; k <= n; ++k) {
      if (n % k == 0) divisors.push_back(k);
    }
  };
  const std::int64_t parts = rng.between(1, 3);
  std::vector<std::int64_t> sizes;
  std::int64_t rest = size;
  for (std::int64_t p = 0; p + 1 < parts; ++p) {
    divisors_of(rest);
    sizes.push_back(rng.pick(divisors));
    rest /= sizes.back();
  }
  sizes.push_back(rest);
  return sizes;
}

// build_mesh of the result has, for every own axis, the groups of DeviceMesh::unflatten on the built original,
// and for every flattened axis the original's groups.
TEST(UnflattenAxis, HasTheGroupsOfDeviceMeshUnflatten) {
  Random rng(2718);
  int checked = 0;
  std::set<std::size_t> part_counts;
  for (const Design& d : corpus(1618)) {
    SCOPED_TRACE(to_json_text(d));
    const bool big = ranks(d.mesh) > 4096;
    for (const std::string& axis : d.mesh.names) {
      const std::int64_t size = d.mesh.shape[index_of(d.mesh.names, axis)];
      const std::vector<std::int64_t> sizes =
          big ? (size % 2 == 0 ? std::vector<std::int64_t>{2, size / 2} : std::vector<std::int64_t>{size})
              : random_split(rng, size);
      std::vector<std::string> names;
      for (std::size_t p = 0; p < sizes.size(); ++p) names.push_back("part" + std::to_string(p));
      if (rng.chance(30)) names[rng.index(names.size())] = axis;  // a part may keep the axis' name
      const Design r = edited(d, [&](const Design& x) { return unflatten_axis(x, axis, sizes, names); });
      part_counts.insert(sizes.size());

      const DeviceMesh before = built(d);
      const DeviceMesh split = before.unflatten(axis, sizes, names);
      const DeviceMesh after = built(r);
      EXPECT_EQ(r.world, d.world);
      EXPECT_EQ(r.devices_per_host, d.devices_per_host);
      EXPECT_EQ(after.shape(), split.shape());
      EXPECT_EQ(after.names(), split.names());
      for (const std::string& name : r.mesh.names) EXPECT_EQ(after.groups(name), split.groups(name)) << name;
      ASSERT_EQ(flat_names(r), flat_names(d));
      for (const FlattenSpec& f : d.mesh.flattened) EXPECT_EQ(after.groups(f.name), before.groups(f.name)) << f.name;

      // Tensors: every part carries the axis' placement, the others theirs.
      const std::size_t k = index_of(d.mesh.names, axis);
      for (std::size_t t = 0; t < d.tensors.size(); ++t) {
        for (const auto& [old_state, new_state] : {std::pair{&d.tensors[t].src, &r.tensors[t].src},
                                                   std::pair{&d.tensors[t].dst, &r.tensors[t].dst}}) {
          for (std::size_t j = 0; j < r.mesh.names.size(); ++j) {
            const std::size_t old = j < k ? j : j < k + sizes.size() ? k : j + 1 - sizes.size();
            EXPECT_EQ(new_state->placement(j), old_state->placement(old));
          }
          for (const ShardOrderEntry& entry : old_state->shard_order()) {
            std::vector<std::size_t> expected;
            for (std::size_t a : entry.axes) {
              if (a < k) expected.push_back(a);
              if (a > k) expected.push_back(a + sizes.size() - 1);
              if (a == k) {
                for (std::size_t p = 0; p < sizes.size(); ++p) expected.push_back(k + p);
              }
            }
            EXPECT_EQ(new_state->shard_axes(entry.dim), expected) << to_string(*new_state);
          }
        }
      }
      ++checked;
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(checked, 600);
  EXPECT_EQ(part_counts, (std::set<std::size_t>{1, 2, 3}));
}

// The split keeps every rank's block of a sharded tensor when the dims divide evenly: the simulator's target
// distribution (each rank's slice of the global tensor, Partial axes reduced) is the same before and after, rank
// by rank (a split of a row-major root axis keeps the rank numbering).
TEST(UnflattenAxis, KeepsTheBlocksOfShardedTensors) {
  Random rng(161803);
  int compared = 0;
  for (int n = 0; n < 1000; ++n) {
    Design d = random_design(rng);
    const std::int64_t mesh_ranks = ranks(d.mesh);
    if (d.tensors.empty() || mesh_ranks > 16) continue;  // small enough to hold every rank's buffer
    for (DesignTensor& t : d.tensors) {
      for (std::int64_t& extent : t.shape) extent = mesh_ranks;  // even at every split
    }
    const std::string& axis = rng.pick(d.mesh.names);
    const std::vector<std::int64_t> sizes = random_split(rng, d.mesh.shape[index_of(d.mesh.names, axis)]);
    std::vector<std::string> names;
    for (std::size_t p = 0; p < sizes.size(); ++p) names.push_back("part" + std::to_string(p));
    const Design r = edited(d, [&](const Design& x) { return unflatten_axis(x, axis, sizes, names); });
    SCOPED_TRACE(to_json_text(d) + to_json_text(r));
    for (std::size_t t = 0; t < d.tensors.size(); ++t) {
      for (const auto& [old_state, new_state] : {std::pair{&d.tensors[t].src, &r.tensors[t].src},
                                                 std::pair{&d.tensors[t].dst, &r.tensors[t].dst}}) {
        EXPECT_EQ(expected_distribution(r.mesh.shape, d.tensors[t].shape, *new_state).ranks,
                  expected_distribution(d.mesh.shape, d.tensors[t].shape, *old_state).ranks);
        ++compared;
      }
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(compared, 300);
}

// With uneven chunks a chunk of a chunk is not the chunk of the whole: dim 5 over tp = 4 gives 2,2,1,0; over
// (2, 2) it gives 2,1,1,1. The header says so.
TEST(UnflattenAxis, UnevenChunksCanMoveBlocks) {
  Design d = dp_tp("RS(0)", "RR");
  d.tensors[0].shape = {5};
  const Design r = unflatten_axis(d, "tp", {2, 2}, {"a", "b"});
  EXPECT_EQ(states(r), (std::vector<std::string>{"w: RS(0)[0]S(0)[1] -> RRR"}));
  const Distribution before = expected_distribution(d.mesh.shape, {5}, d.tensors[0].src);
  const Distribution after = expected_distribution(r.mesh.shape, {5}, r.tensors[0].src);
  std::vector<std::int64_t> extents_before;
  std::vector<std::int64_t> extents_after;
  for (std::size_t rank = 0; rank < 4; ++rank) {
    extents_before.push_back(before.ranks[rank].shape[0]);
    extents_after.push_back(after.ranks[rank].shape[0]);
  }
  EXPECT_EQ(extents_before, (std::vector<std::int64_t>{2, 2, 1, 0}));
  EXPECT_EQ(extents_after, (std::vector<std::int64_t>{2, 1, 1, 1}));
}

TEST(UnflattenAxis, Errors) {
  const Design d = example_design("hsdp-2d");  // (dp_replicate=2, dp_shard=4), flattened dp
  expect_edit_error(d, [](const Design& x) { return unflatten_axis(x, "dp", {2, 4}, {"a", "b"}); },
                    {"'dp' is a flattened axis: only a mesh axis can be split; axes are dp_replicate, dp_shard"});
  // PyTorch's _unflatten checks, messages verbatim.
  expect_edit_error(d, [](const Design& x) { return unflatten_axis(x, "cp", {2}, {"a"}); },
                    {"dim cp specified in `_unflatten` is not in ('dp_replicate', 'dp_shard')"});
  expect_edit_error(d, [](const Design& x) { return unflatten_axis(x, "dp_shard", {2, 3}, {"a", "b"}); },
                    {"The product of mesh_sizes=(2, 3) is 6, but the original dimension at dim=1 has size 4."});
  expect_edit_error(d, [](const Design& x) { return unflatten_axis(x, "dp_shard", {2, 2}, {"a"}); },
                    ErrorKind::RuntimeError, {"mesh_dim_names must have same length as mesh_sizes in _unflatten!"});
  expect_edit_error(d, [](const Design& x) { return unflatten_axis(x, "dp_shard", {}, {}); },
                    {"mesh_sizes () is empty"});
  expect_edit_error(d, [](const Design& x) { return unflatten_axis(x, "dp_shard", {0, 4}, {"a", "b"}); },
                    {"mesh_sizes (0, 4) has size 0 at axis 0: every axis size must be >= 1"});
  expect_edit_error(d, [](const Design& x) { return unflatten_axis(x, "dp_shard", {2, 2}, {"a", "dp_replicate"}); },
                    ErrorKind::RuntimeError, {"Each mesh_dim_name must be unique.", "('dp_replicate', 'a', 'dp_replicate')"});
  expect_edit_error(d, [](const Design& x) { return unflatten_axis(x, "dp_shard", {2, 2}, {"a", "a"}); },
                    ErrorKind::RuntimeError, {"Each mesh_dim_name must be unique."});
  expect_edit_error(d, [](const Design& x) { return unflatten_axis(x, "dp_shard", {2, 2}, {"a", "dp"}); },
                    {"dp already exists as a flattened mesh_dim_name of the root"});
  // The design's name rule, which PyTorch does not check.
  expect_edit_error(d, [](const Design& x) { return unflatten_axis(x, "dp_shard", {2, 2}, {"a", "b c"}); },
                    {"names[1] = \"b c\": names must be 1 to 64 characters"});
  // At most 64 axes.
  Design wide;
  wide.name = "wide";
  wide.world = 4;
  for (std::size_t i = 0; i + 1 < kMaxDesignAxes; ++i) {
    wide.mesh.shape.push_back(1);
    wide.mesh.names.push_back("a" + std::to_string(i));
  }
  wide.mesh.shape.push_back(4);
  wide.mesh.names.push_back("last");
  EXPECT_EQ(edited(wide, [](const Design& x) { return unflatten_axis(x, "last", {4}, {"z"}); }).mesh.names.back(), "z");
  expect_edit_error(wide, [](const Design& x) { return unflatten_axis(x, "last", {2, 2}, {"y", "z"}); },
                    {"the mesh would have 65 axes; at most 64"});
}

// ---- apply_mesh -------------------------------------------------------------------------------------------------

TEST(ApplyMesh, CarriesPlacementsByAxisName) {
  const Design d = example_design("default");  // (pp, dp, tp); weight RS(0)[1]S(0)[0] -> RRS(0)
  const MeshSpec spec{{2, 4}, {"tp", "dp"}, {{"all", {"tp", "dp"}}}};
  const Design r = edited(d, [&spec](const Design& x) { return apply_mesh(x, spec); });
  EXPECT_EQ(r.mesh, spec);
  EXPECT_EQ(r.world, 8);
  EXPECT_EQ(r.devices_per_host, 8);
  // dim 0 was split by tp, then dp: tp is now axis 0, dp axis 1.
  EXPECT_EQ(states(r),
            (std::vector<std::string>{"weight: S(0)[0]S(0)[1] -> S(0)R", "activation: P(sum)S(0) -> S(1)R"}));
  // Axes of other names are replicated; the world is the mesh size unless given.
  const Design s = edited(d, [](const Design& x) { return apply_mesh(x, MeshSpec{{4, 4}, {"cp", "tp"}, {}}); });
  EXPECT_EQ(states(s), (std::vector<std::string>{"weight: RS(0) -> RS(0)", "activation: RP(sum) -> RS(1)"}));
  EXPECT_EQ(s.world, 16);
  EXPECT_EQ(s.devices_per_host, 8);
  const Design t = edited(d, [](const Design& x) { return apply_mesh(x, MeshSpec{{2}, {"dp"}, {}}, 64); });
  EXPECT_EQ(t.world, 64);
  EXPECT_EQ(t.devices_per_host, 8);
  EXPECT_EQ(states(t), (std::vector<std::string>{"weight: S(0) -> R", "activation: S(0) -> R"}));
  // devices_per_host becomes gcd(devices_per_host, world): whole hosts.
  EXPECT_EQ(apply_mesh(d, MeshSpec{{2, 2}, {"dp", "tp"}, {}}).devices_per_host, 4);
  EXPECT_EQ(apply_mesh(d, MeshSpec{{2, 2}, {"dp", "tp"}, {}}, 12).devices_per_host, 4);
  EXPECT_EQ(apply_mesh(d, MeshSpec{{3}, {"dp"}, {}}).devices_per_host, 1);
}

TEST(ApplyMesh, PresetsAndRandomMeshes) {
  const Design d = example_design("torchtitan-4d");
  const MeshSpec spec = torchtitan_mesh({.dp_replicate = 2, .dp_shard = -1, .cp = 2, .tp = 2, .world_size = 32});
  const Design r = edited(d, [&spec](const Design& x) { return apply_mesh(x, spec); });
  EXPECT_EQ(r.mesh, spec);
  EXPECT_EQ(r.world, 32);
  expect_carried_by_name(d, r);
  EXPECT_EQ(states(r)[0], "tok_embeddings: RS(0)[1]RS(0)[0] -> RRRS(0)");

  // Any design onto any other's mesh: placements carried by name, relative shard orders kept.
  const std::vector<Design> designs = corpus(42, 100);
  Random rng(43);
  for (const Design& from : designs) {
    const Design& onto = rng.pick(designs);
    SCOPED_TRACE(to_json_text(from) + to_json_text(onto));
    const Design moved = edited(from, [&onto](const Design& x) { return apply_mesh(x, onto.mesh, onto.world); });
    EXPECT_EQ(moved.mesh, onto.mesh);
    EXPECT_EQ(moved.world, onto.world);
    EXPECT_EQ(moved.devices_per_host, std::gcd(from.devices_per_host, onto.world));
    expect_carried_by_name(from, moved);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(ApplyMesh, Errors) {
  const Design d = example_design("default");
  expect_edit_error(d, [](const Design& x) { return apply_mesh(x, MeshSpec{{4, 4}, {"dp", "tp"}, {}}, 8); },
                    {"mesh: world = 8 but the mesh holds 16 ranks"});
  expect_edit_error(d, [](const Design& x) { return apply_mesh(x, MeshSpec{{2, 0}, {"dp", "tp"}, {}}); },
                    {"mesh.shape[1] = 0: axis sizes must be >= 1"});
  expect_edit_error(d, [](const Design& x) { return apply_mesh(x, MeshSpec{{}, {}, {}}); },
                    {"mesh.shape = []: a mesh needs at least one axis"});
  expect_edit_error(d, [](const Design& x) { return apply_mesh(x, MeshSpec{{2, 2}, {"dp"}, {}}); },
                    {"mesh.names = [\"dp\"]: 1 names for the 2 axes"});
  expect_edit_error(d, [](const Design& x) { return apply_mesh(x, MeshSpec{{2, 2}, {"dp", "dp"}, {}}); },
                    {"mesh.names[1] = \"dp\": duplicate axis name"});
  expect_edit_error(d,
                    [](const Design& x) {
                      return apply_mesh(x, MeshSpec{{2, 2}, {"dp", "tp"}, {{"x", {"tp", "dp"}}}});
                    },
                    {"axes must be listed in mesh order"});
  expect_edit_error(d, [](const Design& x) { return apply_mesh(x, MeshSpec{{65536, 65536}, {"dp", "tp"}, {}}); },
                    {"mesh: the mesh holds 4294967296 ranks; a world holds at most 2147483647"});
  expect_edit_error(d, [](const Design& x) { return apply_mesh(x, MeshSpec{{2}, {"dp"}, {}}, 0); },
                    {"world = 0: must be in 1..2147483647"});
}

// ---- Inputs -----------------------------------------------------------------------------------------------------

TEST(Edits, RefuseAnInvalidInput) {
  Design d = dp_tp();
  d.world = 4;  // the mesh holds 8
  for (const auto& run : std::vector<std::function<Design(const Design&)>>{
           [](const Design& x) { return add_axis(x, 0, "pp", 2); },
           [](const Design& x) { return remove_axis(x, "tp"); },
           [](const Design& x) { return move_axis(x, "tp", 0); },
           [](const Design& x) { return rename_axis(x, "tp", "t"); },
           [](const Design& x) { return resize_axis(x, "tp", 2); },
           [](const Design& x) { return set_world(x, 8); },
           [](const Design& x) { return set_devices_per_host(x, 1); },
           [](const Design& x) { return flatten_axes(x, {"dp", "tp"}); },
           [](const Design& x) { return unflatten_axis(x, "tp", {2, 2}, {"a", "b"}); },
           [](const Design& x) { return apply_mesh(x, MeshSpec{{2}, {"dp"}, {}}); },
       }) {
    expect_edit_error(d, run, {"mesh.shape = [2,4]: world = 4 but the mesh holds 8 ranks"});
  }
}

}  // namespace
}  // namespace meshloom
