// Property tests of DeviceMesh over many random meshes: 1..6 axes of sizes 1..4, identity, permuted and subset
// rank maps, worlds larger than the mesh, and random sequences of slice / flatten / unflatten / concatenate.
// Every mesh is compared with an independent naive model written here:
//   - a root-derived slice or unflatten is plain row-major index arithmetic (transpose / reshape) on the root
//     rank tensor;
//   - any derived mesh is a list of axes, each the list of rank-map positions its indices reach from 0; its
//     instances are the translates of the sum of those lists that tile [0, N), smallest free position first
//     (PyTorch's complement order); a flattened axis is the sum in row-major order; an unflattened axis is
//     O[i * stride] per new axis, valid when the sum of the new axes gives O back.
// Checked: the groups of every axis partition the rank map; for every rank of the world, coordinate(rank)
// indexes the rank inside instance_of(rank), local_rank(rank, axis) is its position in group_of(rank, axis),
// which is one of groups(axis); instances() of slices equal the projections of the root; flatten's groups are
// the instances read row-major; unflatten then flatten gives back the original groups; == and hash agree with
// the model's equality (same rank map, same axes, same names).
//
// Nothing of PyTorch's test file is ported here (see the other files of this directory).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"

#include "mesh_test_support.hpp"

namespace {

using namespace meshloom::testing;

using Offsets = std::vector<std::int64_t>;
using Rng = std::mt19937_64;

std::int64_t rnd(Rng& rng, std::int64_t lo, std::int64_t hi) {  // inclusive
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}
bool chance(Rng& rng, std::int64_t one_in) { return rnd(rng, 1, one_in) == 1; }

template <class T>
void shuffle(std::vector<T>& v, Rng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<std::size_t>(rnd(rng, 0, static_cast<std::int64_t>(i) - 1))]);
}

// ---- The offset model -----------------------------------------------------------------------------------

Offsets combine(const std::vector<Offsets>& axes) {
  Offsets out{0};
  for (const auto& a : axes) {
    Offsets next;
    for (auto o : out) {
      for (auto x : a) next.push_back(o + x);
    }
    out = std::move(next);
  }
  return out;
}

// Bases of the tiling of [0, n) by translates of `offsets` (which start with 0), smallest free position first;
// nothing when the translates overlap or overflow.
std::optional<Ranks> tile(const Offsets& offsets, std::int64_t n) {
  std::vector<char> covered(static_cast<std::size_t>(n), 0);
  Ranks bases;
  for (std::int64_t p = 0; p < n; ++p) {
    if (covered[static_cast<std::size_t>(p)]) continue;
    for (auto o : offsets) {
      const std::int64_t q = p + o;
      if (q >= n || covered[static_cast<std::size_t>(q)]) return std::nullopt;
      covered[static_cast<std::size_t>(q)] = 1;
    }
    bases.push_back(p);
  }
  return bases;
}

bool increasing(const Offsets& o) {
  for (std::size_t i = 1; i < o.size(); ++i) {
    if (o[i] <= o[i - 1]) return false;
  }
  return true;
}

struct ModelRoot {
  Ranks rank_map;
  std::int64_t world = 0;
  std::optional<Names> names;
  std::vector<Offsets> axes;
  std::vector<std::pair<std::string, Offsets>> registry;

  [[nodiscard]] const Offsets* registered(const std::string& name) const {
    for (const auto& [n, o] : registry) {
      if (n == name) return &o;
    }
    return nullptr;
  }
};

struct Model {
  std::shared_ptr<ModelRoot> root;
  std::vector<Offsets> axes;
  std::optional<Names> names;

  [[nodiscard]] Ranks shape() const {
    Ranks s;
    for (const auto& a : axes) s.push_back(static_cast<std::int64_t>(a.size()));
    return s;
  }
  [[nodiscard]] bool is_root() const { return axes == root->axes && names == root->names; }
  // An axis by name as PyTorch's get_group looks it up: a flattened name of the root first, then an own name.
  [[nodiscard]] const Offsets& axis(const std::string& name) const {
    if (const auto* o = root->registered(name)) return *o;
    const auto it = std::find(names->begin(), names->end(), name);
    return axes[static_cast<std::size_t>(it - names->begin())];
  }
};

bool model_equal(const Model& a, const Model& b) {
  return a.root->rank_map == b.root->rank_map && a.axes == b.axes && a.names == b.names;
}

RankTensor model_instances(const Model& m) {
  const auto n = static_cast<std::int64_t>(m.root->rank_map.size());
  const Offsets all = combine(m.axes);
  const auto bases = tile(all, n);
  EXPECT_TRUE(bases.has_value()) << "the model mesh does not tile its rank map";
  RankTensor t;
  t.shape = m.shape();
  t.shape.insert(t.shape.begin(), bases ? static_cast<std::int64_t>(bases->size()) : 0);
  if (!bases) return t;
  for (auto b : *bases) {
    for (auto o : all) t.values.push_back(m.root->rank_map[static_cast<std::size_t>(b + o)]);
  }
  return t;
}

RankTensor model_groups(const Model& m, const Offsets& axis) {
  return model_instances(Model{m.root, {axis}, std::nullopt});
}

// ---- Checks ---------------------------------------------------------------------------------------------

void check_partition(const RankTensor& groups, const Ranks& rank_map) {
  Ranks all = groups.values;
  Ranks expected = rank_map;
  std::sort(all.begin(), all.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(all, expected) << "the groups do not partition the rank map";
}

void check_mesh(const DeviceMesh& e, const Model& m) {
  SCOPED_TRACE("mesh " + e.repr());
  const Ranks shape = m.shape();
  ASSERT_EQ(e.shape(), shape);
  ASSERT_EQ(e.names(), m.names);
  EXPECT_EQ(e.world(), m.root->world);
  const RankTensor inst = model_instances(m);
  ASSERT_EQ(e.instances(), inst);
  const std::size_t nd = shape.size();
  std::vector<RankTensor> groups;
  for (std::size_t k = 0; k < nd; ++k) {
    groups.push_back(model_groups(m, m.axes[k]));
    const RankTensor g = e.groups(static_cast<std::int64_t>(k));
    EXPECT_EQ(g, groups.back()) << "axis " << k;
    check_partition(g, m.root->rank_map);
    if (m.names) { EXPECT_EQ(e.groups((*m.names)[k]), model_groups(m, m.axis((*m.names)[k]))); }
  }
  // Per rank: position -> (instance, index inside it) from the model's tiling, and likewise per axis.
  const auto n = static_cast<std::int64_t>(m.root->rank_map.size());
  std::map<std::int64_t, std::int64_t> position;
  for (std::int64_t p = 0; p < n; ++p) position[m.root->rank_map[static_cast<std::size_t>(p)]] = p;
  const auto inst_rows = rows(inst);
  std::vector<Rows> group_rows;
  for (const auto& g : groups) group_rows.push_back(rows(g));
  for (std::int64_t r = 0; r < e.world(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const bool member = position.count(r) > 0;
    ASSERT_EQ(e.contains(r), member);
    if (!member) {
      EXPECT_EQ(e.coordinate(r), std::nullopt);
      if (inst_rows.size() == 1) {
        EXPECT_EQ(e.instance_of(r), inst);
      } else {
        EXPECT_MESH_ERROR(e.instance_of(r), ErrorKind::RuntimeError, "is not part of");
      }
      EXPECT_MESH_ERROR(e.group_of(r, std::int64_t{0}), ErrorKind::RuntimeError, "is not part of");
      continue;
    }
    const auto coord = e.coordinate(r);
    ASSERT_TRUE(coord.has_value());
    ASSERT_EQ(coord->size(), nd);
    const RankTensor mine = e.instance_of(r);
    Ranks row;
    for (const auto& ir : inst_rows) {
      if (std::find(ir.begin(), ir.end(), r) != ir.end()) row = ir;
    }
    EXPECT_EQ(mine.values, row);
    std::int64_t flat = 0;
    for (std::size_t k = 0; k < nd; ++k) {
      EXPECT_GE((*coord)[k], 0);
      EXPECT_LT((*coord)[k], shape[k]);
      flat = flat * shape[k] + (*coord)[k];
    }
    ASSERT_LT(static_cast<std::size_t>(flat), mine.values.size());
    EXPECT_EQ(mine.values[static_cast<std::size_t>(flat)], r) << "the coordinate does not index the rank";
    for (std::size_t k = 0; k < nd; ++k) {
      const auto group = e.group_of(r, static_cast<std::int64_t>(k));
      const auto& all = group_rows[k];
      EXPECT_NE(std::find(all.begin(), all.end(), group), all.end()) << "group_of is not one of groups(" << k << ")";
      const auto at = std::find(group.begin(), group.end(), r);
      ASSERT_NE(at, group.end());
      const auto local = e.local_rank(r, AxisRef(static_cast<std::int64_t>(k)));
      EXPECT_EQ(local, at - group.begin());
      EXPECT_EQ(local, (*coord)[k]);
    }
  }
  // Identity.
  const DeviceMesh copy = e;
  EXPECT_EQ(copy, e);
  EXPECT_EQ(copy.hash(), e.hash());
  if (m.names) { EXPECT_EQ(e.slice(*m.names), e); }
  EXPECT_TRUE(e.root().rank_map() == e.rank_map());
}

// ---- Random roots and operations --------------------------------------------------------------------------

struct Step {
  DeviceMesh e;
  Model m;
};

// How many operations of each kind succeeded (index 0..3: slice, flatten, unflatten, concatenate) or were
// rejected as predicted (4), over a test: the sequences must not degenerate.
struct Counts {
  std::int64_t done[5] = {0, 0, 0, 0, 0};
};
Counts g_counts;

struct Session {
  Rng rng;
  int fresh = 0;
  std::string name(const char* prefix) { return prefix + std::to_string(fresh++); }
};

Step random_root(Session& s) {
  auto& rng = s.rng;
  Ranks shape;
  std::int64_t n = 1;
  const auto nd = rnd(rng, 1, 6);
  for (std::int64_t i = 0; i < nd; ++i) {
    std::int64_t size = rnd(rng, 1, 4);
    if (n * size > 512) size = 1;
    shape.push_back(size);
    n *= size;
  }
  std::optional<Names> names;
  if (!chance(rng, 10)) {
    names = Names{};
    for (std::int64_t i = 0; i < nd; ++i) names->push_back("d" + std::to_string(i));
  }
  auto root = std::make_shared<ModelRoot>();
  root->names = names;
  std::int64_t stride = 1;
  root->axes.resize(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    for (std::int64_t i = 0; i < shape[k]; ++i) root->axes[k].push_back(i * stride);
    stride *= shape[k];
  }
  const auto kind = rnd(rng, 0, 2);  // identity, permutation, subset of a larger world
  Ranks ranks = iota(n);
  if (kind >= 1) {
    Ranks pool = iota(kind == 1 ? n : n + rnd(rng, 1, n));
    shuffle(pool, rng);
    ranks.assign(pool.begin(), pool.begin() + n);
  }
  std::int64_t world = std::max(n, *std::max_element(ranks.begin(), ranks.end()) + 1);
  std::optional<std::int64_t> world_arg;
  if (chance(rng, 3)) {
    world += rnd(rng, 0, 3);
    world_arg = world;
  }
  root->rank_map = ranks;
  root->world = world;
  const DeviceMesh e = kind == 0 && chance(rng, 2) ? DeviceMesh::init(shape, names, world_arg)
                                                   : DeviceMesh::from_ranks(shape, ranks, names, world_arg);
  return {e, Model{root, root->axes, names}};
}

// Slices `names` of `cur`, predicting the outcome; returns the new step on success.
std::optional<Step> do_slice(const Step& cur, const Names& names) {
  SCOPED_TRACE("slice " + ::testing::PrintToString(names) + " of " + cur.e.repr());
  if (!cur.m.names) {
    EXPECT_MESH_ERROR(cur.e.slice(names), ErrorKind::RuntimeError, "Cannot slice a DeviceMesh without mesh_dim_names!");
    return std::nullopt;
  }
  if (names == *cur.m.names) {
    const auto e = cur.e.slice(names);
    EXPECT_EQ(e, cur.e);
    return Step{e, cur.m};
  }
  const bool from_root = cur.m.is_root();
  std::vector<Offsets> gathered;
  for (const auto& name : names) {
    const auto own = std::find(cur.m.names->begin(), cur.m.names->end(), name);
    if (own != cur.m.names->end()) {
      gathered.push_back(cur.m.axes[static_cast<std::size_t>(own - cur.m.names->begin())]);
    } else if (const auto* f = cur.m.root->registered(name); f && from_root) {
      gathered.push_back(*f);
    } else {
      EXPECT_MESH_ERROR(cur.e.slice(names), ErrorKind::KeyError, "Invalid mesh_dim_names", "specified");
      return std::nullopt;
    }
  }
  const Offsets all = combine(gathered);
  if (!tile(all, static_cast<std::int64_t>(cur.m.root->rank_map.size()))) {
    try {
      (void)cur.e.slice(names);
      ADD_FAILURE() << "an overlapping slice must throw";
    } catch (const Error& err) {
      EXPECT_TRUE(err.kind() == ErrorKind::KeyError || err.kind() == ErrorKind::RuntimeError) << err.what();
    }
    return std::nullopt;
  }
  if (!increasing(all)) {
    EXPECT_MESH_ERROR(cur.e.slice(names), ErrorKind::KeyError, "Mesh dim indices should be in ascending order.");
    return std::nullopt;
  }
  try {
    return Step{cur.e.slice(names), Model{cur.m.root, gathered, names}};
  } catch (const Error& err) {
    ADD_FAILURE() << "unexpected " << err.what();
    return std::nullopt;
  }
}

std::optional<Step> do_flatten(Session& s, const Step& cur) {
  auto& rng = s.rng;
  std::optional<std::string> name;
  const auto pick = rnd(rng, 0, 4);
  if (pick == 1) name = s.name("f");
  if (pick == 2 && !cur.m.root->registry.empty()) {
    name = cur.m.root->registry[static_cast<std::size_t>(rnd(rng, 0, static_cast<std::int64_t>(cur.m.root->registry.size()) - 1))].first;
  }
  if (pick == 3 && cur.m.root->names) name = (*cur.m.root->names)[0];
  if (pick == 4 && cur.m.names) name = (*cur.m.names)[0];
  SCOPED_TRACE("flatten " + name.value_or("<default>") + " of " + cur.e.repr());
  if (!cur.m.names) {
    EXPECT_MESH_ERROR(cur.e.flatten(name), ErrorKind::RuntimeError, "Cannot flatten a DeviceMesh without mesh_dim_names!");
    return std::nullopt;
  }
  std::string flat_name;
  if (name) {
    flat_name = *name;
  } else {
    for (std::size_t i = 0; i < cur.m.names->size(); ++i) flat_name += (i ? "_" : "") + (*cur.m.names)[i];
  }
  const auto& own = *cur.m.names;
  if (cur.m.axes.size() == 1 && std::find(own.begin(), own.end(), flat_name) != own.end()) {
    const auto e = cur.e.flatten(name);
    EXPECT_EQ(e, cur.e);
    return Step{e, cur.m};
  }
  const auto& root_names = *cur.m.root->names;
  if (std::find(root_names.begin(), root_names.end(), flat_name) != root_names.end()) {
    EXPECT_MESH_ERROR(cur.e.flatten(name), ErrorKind::ValueError, flat_name + " already exists for submesh of the");
    return std::nullopt;
  }
  const Offsets all = combine(cur.m.axes);
  if (const auto* f = cur.m.root->registered(flat_name); f && *f != all) {
    EXPECT_MESH_ERROR(cur.e.flatten(name), ErrorKind::ValueError,
                      "Flatten mesh with mesh_dim_name " + flat_name + " has been created before");
    return std::nullopt;
  }
  if (!cur.m.root->registered(flat_name)) cur.m.root->registry.emplace_back(flat_name, all);
  Step out{cur.e.flatten(name), Model{cur.m.root, {all}, Names{flat_name}}};
  // The concatenation rule: the flattened groups are the instances read row-major.
  EXPECT_EQ(rows(out.e.groups(std::int64_t{0})), rows(cur.e.instances()));
  const auto registered = out.e.flattened_names();
  EXPECT_NE(std::find(registered.begin(), registered.end(), flat_name), registered.end());
  return out;
}

Ranks random_factors(Rng& rng, std::int64_t size) {
  Ranks parts;
  std::int64_t left = size;
  const auto count = rnd(rng, 1, 3);
  for (std::int64_t i = 0; i + 1 < count; ++i) {
    Ranks divisors;
    for (std::int64_t d = 1; d <= left; ++d) {
      if (left % d == 0) divisors.push_back(d);
    }
    const auto d = divisors[static_cast<std::size_t>(rnd(rng, 0, static_cast<std::int64_t>(divisors.size()) - 1))];
    parts.push_back(d);
    left /= d;
  }
  parts.push_back(left);
  return parts;
}

std::optional<Step> do_unflatten(Session& s, const Step& cur) {
  auto& rng = s.rng;
  const auto nd = static_cast<std::int64_t>(cur.m.axes.size());
  const auto k = rnd(rng, 0, nd - 1);
  const auto& axis = cur.m.axes[static_cast<std::size_t>(k)];
  const Ranks parts = random_factors(rng, static_cast<std::int64_t>(axis.size()));
  Names new_names;
  for (std::size_t j = 0; j < parts.size(); ++j) new_names.push_back(s.name("u"));
  const auto how = rnd(rng, 0, 2);
  AxisRef ref = how == 0 ? AxisRef(k) : how == 1 ? AxisRef(k - nd) : AxisRef(std::int64_t{0});
  if (how == 2) ref = cur.m.names ? AxisRef((*cur.m.names)[static_cast<std::size_t>(k)]) : AxisRef(k);
  SCOPED_TRACE("unflatten axis " + std::to_string(k) + " into " + ::testing::PrintToString(parts) + " of " +
               cur.e.repr());
  if (!cur.m.names) {
    EXPECT_MESH_ERROR(cur.e.unflatten(ref, parts, new_names), ErrorKind::RuntimeError,
                      "Cannot unflatten a DeviceMesh without mesh_dim_names!");
    return std::nullopt;
  }
  // Each new axis j reaches axis[i * stride_j]; valid when the sum of the new axes gives the axis back.
  std::vector<Offsets> split(parts.size());
  std::int64_t stride = 1;
  for (std::size_t j = parts.size(); j-- > 0;) {
    for (std::int64_t i = 0; i < parts[j]; ++i) split[j].push_back(axis[static_cast<std::size_t>(i * stride)]);
    stride *= parts[j];
  }
  if (combine(split) != axis) {
    try {
      (void)cur.e.unflatten(ref, parts, new_names);
      ADD_FAILURE() << "a split across the axis's digits must throw";
    } catch (const Error& err) {
      EXPECT_EQ(err.kind(), ErrorKind::ValueError) << err.what();
    }
    return std::nullopt;
  }
  Model m{cur.m.root, cur.m.axes, cur.m.names};
  m.axes.erase(m.axes.begin() + k);
  m.axes.insert(m.axes.begin() + k, split.begin(), split.end());
  m.names->erase(m.names->begin() + k);
  m.names->insert(m.names->begin() + k, new_names.begin(), new_names.end());
  Step out{cur.e.unflatten(ref, parts, new_names), m};
  // Unflatten then flatten gives back the original groups (when the new axes can be sliced out together).
  if (nd == 1 || (increasing(axis))) {
    const auto back = do_slice(out, new_names);
    if (back) {
      const std::string name = s.name("rt");
      const auto flat = back->e.flatten(name);
      cur.m.root->registry.emplace_back(name, axis);
      EXPECT_EQ(flat.groups(std::int64_t{0}), cur.e.groups(k));
    } else {
      ADD_FAILURE() << "the new axes of an unflatten could not be sliced back";
    }
  }
  return out;
}

std::optional<Step> do_concatenate(Session& s, const Step& cur) {
  auto& rng = s.rng;
  if (!cur.m.names) {
    EXPECT_MESH_ERROR(DeviceMesh::concatenate({cur.e}), ErrorKind::RuntimeError, "no mesh_dim_names");
    return std::nullopt;
  }
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < cur.m.axes.size(); ++k) {
    if (!chance(rng, 4) || order.empty()) order.push_back(k);
  }
  shuffle(order, rng);
  // Sometimes one axis twice: overlapping unless it has size 1 (size-1 axes reach no position but 0).
  if (chance(rng, 5) && cur.m.axes[order[0]].size() > 1) order.push_back(order[0]);
  std::vector<DeviceMesh> pieces;
  Model m{cur.m.root, {}, Names{}};
  for (auto k : order) {
    const auto piece = do_slice(cur, {(*cur.m.names)[k]});
    if (!piece) return std::nullopt;  // an axis that cannot be sliced alone (checked by do_slice)
    pieces.push_back(piece->e);
    m.axes.push_back(cur.m.axes[k]);
    m.names->push_back((*cur.m.names)[k]);
  }
  SCOPED_TRACE("concatenate of " + cur.e.repr());
  if (!tile(combine(m.axes), static_cast<std::int64_t>(cur.m.root->rank_map.size()))) {
    EXPECT_MESH_ERROR(DeviceMesh::concatenate(pieces), ErrorKind::RuntimeError, "Cannot concatenate overlapping meshes");
    return std::nullopt;
  }
  return Step{DeviceMesh::concatenate(pieces), m};
}

// One random root and a random sequence of operations; every mesh reached is checked against the model.
std::vector<Step> run_sequence(std::uint64_t seed) {
  Session s{Rng(seed)};
  std::vector<Step> steps{random_root(s)};
  check_mesh(steps[0].e, steps[0].m);
  Step cur = steps[0];
  const auto n_ops = rnd(s.rng, 2, 7);
  for (std::int64_t i = 0; i < n_ops; ++i) {
    if (::testing::Test::HasFatalFailure()) break;
    std::optional<Step> next;
    const auto op = rnd(s.rng, 0, 4);
    switch (op) {
      case 0:
      case 1: {  // slice: a random subset of own names (and, from the root, flattened names), maybe shuffled
        Names valid = cur.m.names.value_or(Names{"x"});
        if (cur.m.is_root()) {
          for (const auto& [n, o] : cur.m.root->registry) valid.push_back(n);
        }
        Names chosen;
        for (const auto& n : valid) {
          if (chance(s.rng, 2)) chosen.push_back(n);
        }
        if (chosen.empty()) chosen.push_back(valid[static_cast<std::size_t>(rnd(s.rng, 0, static_cast<std::int64_t>(valid.size()) - 1))]);
        if (chance(s.rng, 4)) shuffle(chosen, s.rng);
        if (chance(s.rng, 12)) chosen.push_back("nope");
        next = do_slice(cur, chosen);
        break;
      }
      case 2:
        next = do_flatten(s, cur);
        break;
      case 3:
        next = do_unflatten(s, cur);
        break;
      default:
        next = do_concatenate(s, cur);
        break;
    }
    ++g_counts.done[next ? (op <= 1 ? 0 : op - 1) : 4];
    if (!next) {
      if (chance(s.rng, 2)) cur = steps[0];  // start again from the root
      continue;
    }
    check_mesh(next->e, next->m);
    steps.push_back(*next);
    cur = *next;
  }
  return steps;
}

TEST(Properties, RandomSequencesMatchTheModel) {
  g_counts = Counts{};
  for (std::uint64_t seed = 1; seed <= 800; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto a = run_sequence(seed);
    if (HasFatalFailure()) return;
    // The same sequence replayed on a second root built alike: == and hash agree with the model's equality,
    // across both roots.
    const auto b = run_sequence(seed);
    if (HasFatalFailure()) return;
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      for (std::size_t j = 0; j < b.size(); ++j) {
        const bool equal = model_equal(a[i].m, b[j].m);
        EXPECT_EQ(a[i].e == b[j].e, equal) << a[i].e.repr() << " vs " << b[j].e.repr();
        if (equal) { EXPECT_EQ(a[i].e.hash(), b[j].e.hash()); }
        EXPECT_EQ(a[i].e == a[j].e, model_equal(a[i].m, a[j].m)) << a[i].e.repr() << " vs " << a[j].e.repr();
      }
    }
  }
  // Both runs of every seed counted: each kind of operation succeeded often, and some were rejected.
  const char* kinds[] = {"slices", "flattens", "unflattens", "concatenates", "rejected"};
  for (std::size_t k = 0; k < 5; ++k) {
    RecordProperty(kinds[k], std::to_string(g_counts.done[k]));
    EXPECT_GE(g_counts.done[k], 100) << kinds[k];
  }
}

// instances() of every ascending slice of a random root equals the projection of the root rank tensor
// (transpose the kept axes last, reshape), and its flattening enumerates the same rows.
TEST(Properties, RootSlicesAreProjections) {
  for (std::uint64_t seed = 1000; seed < 1200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Session s{Rng(seed)};
    Step root = random_root(s);
    if (!root.m.names) continue;
    const Ranks shape = root.m.shape();
    std::vector<std::size_t> keep;
    Names names;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (chance(s.rng, 2)) {
        keep.push_back(d);
        names.push_back((*root.m.names)[d]);
      }
    }
    if (keep.empty()) continue;
    const auto sliced = root.e.slice(names);
    const RankTensor expected = project(shape, root.m.root->rank_map, keep);
    EXPECT_EQ(sliced.instances(), expected);
    for (std::size_t j = 0; j < keep.size(); ++j) {
      EXPECT_EQ(sliced.groups(static_cast<std::int64_t>(j)), project(shape, root.m.root->rank_map, {keep[j]}));
    }
    EXPECT_EQ(rows(sliced.flatten(s.name("p")).groups(std::int64_t{0})), rows(expected));
    // Unflattening a root axis is a reshape of the root tensor: the groups are the expanded tensor's.
    const auto k = static_cast<std::size_t>(rnd(s.rng, 0, static_cast<std::int64_t>(shape.size()) - 1));
    const Ranks parts = random_factors(s.rng, shape[k]);
    Names new_names;
    for (std::size_t j = 0; j < parts.size(); ++j) new_names.push_back(s.name("v"));
    const auto u = root.e.unflatten(static_cast<std::int64_t>(k), parts, new_names);
    Ranks expanded(shape.begin(), shape.end());
    expanded.erase(expanded.begin() + static_cast<std::ptrdiff_t>(k));
    expanded.insert(expanded.begin() + static_cast<std::ptrdiff_t>(k), parts.begin(), parts.end());
    std::vector<std::size_t> every(expanded.size());
    for (std::size_t d = 0; d < every.size(); ++d) every[d] = d;
    EXPECT_EQ(u.instances(), project(expanded, root.m.root->rank_map, every));
    for (std::size_t j = 0; j < parts.size(); ++j) {
      EXPECT_EQ(u.groups(new_names[j]), project(expanded, root.m.root->rank_map, {k + j}));
    }
  }
}

}  // namespace
