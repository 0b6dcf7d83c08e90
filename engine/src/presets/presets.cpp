#include "meshloom/presets/presets.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>

#include "meshloom/error.hpp"

namespace meshloom {

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

// The product of degrees, each >= 1 (checked by the caller), refusing one past 64 bits (the frameworks' Python ints
// have no such limit; no world holds that many ranks): "tp(4294967296) * pp(4294967296) overflows a 64-bit
// integer; WORLD_SIZE is 8".
std::int64_t degree_product(std::initializer_list<std::pair<const char*, std::int64_t>> degrees,
                            std::int64_t world_size) {
  std::int64_t product = 1;
  for (const auto& [name, v] : degrees) {
    if (__builtin_mul_overflow(product, v, &product)) {
      std::string terms;
      for (const auto& [n, d] : degrees) terms += (terms.empty() ? "" : " * ") + std::string(n) + "(" + str(d) + ")";
      raise(ErrorKind::ValueError, terms + " overflows a 64-bit integer; WORLD_SIZE is " + str(world_size));
    }
  }
  return product;
}

// Python's repr of a tuple of ints: (2, 4), (8,), ().
std::string py_tuple(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += ", ";
    s += str(v[i]);
  }
  if (v.size() == 1) s += ",";
  return s + ")";
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += sep;
    s += v[i];
  }
  return s;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (const auto x : v) p *= x;
  return p;
}

struct AxisList {
  std::vector<std::int64_t> shape;
  std::vector<std::string> names;
  void add(std::int64_t size, std::string name) {
    shape.push_back(size);
    names.push_back(std::move(name));
  }
};

}  // namespace

// ---- torchtitan -------------------------------------------------------------------------------------------

TorchtitanDims torchtitan_resolve(TorchtitanDims d) {
  for (const auto v : {d.dp_replicate, d.cp, d.tp, d.pp, d.ep, d.etp}) {
    if (v < 1) raise(ErrorKind::ValueError, "Parallelism degree should be >= 1, except for dp_shard");
  }
  if (!(d.dp_shard == -1 || d.dp_shard >= 1)) raise(ErrorKind::ValueError, "dp_shard must -1 or >=1.");
  // torchtitan takes WORLD_SIZE from the launcher, never below 1; a preset typed by hand may hold anything.
  if (d.world_size < 1) raise(ErrorKind::ValueError, "WORLD_SIZE must be >= 1, got " + str(d.world_size));
  const std::int64_t others =
      degree_product({{"dp_replicate", d.dp_replicate}, {"cp", d.cp}, {"tp", d.tp}, {"pp", d.pp}}, d.world_size);
  if (d.dp_shard < 0) d.dp_shard = d.world_size / others;
  // torchtitan asserts dp_shard >= 1 without a message; the product check below names the inferred 0.
  std::int64_t product = 0;
  if (__builtin_mul_overflow(others, d.dp_shard, &product) || product != d.world_size) {
    raise(ErrorKind::ValueError, "Invalid parallel dims: dp_replicate(" + str(d.dp_replicate) + ") * dp_shard(" +
                                     str(d.dp_shard) + ") * cp(" + str(d.cp) + ") * tp(" + str(d.tp) + ") * pp(" +
                                     str(d.pp) + ") != WORLD_SIZE(" + str(d.world_size) + ")");
  }
  if (d.ep > 1) {
    if (d.etp != d.tp && d.etp != 1) raise(ErrorKind::ValueError, "Currently we only support ETP=TP or ETP=1");
    if (d.etp == d.tp) {
      // EP borrows all of cp and part of dp_shard.
      if (d.ep % d.cp != 0 || (d.dp_shard * d.cp) % d.ep != 0) {
        raise(ErrorKind::ValueError, "ep(" + str(d.ep) + ") must be a multiple of cp(" + str(d.cp) +
                                         ") and divide dp_shard(" + str(d.dp_shard) + ") * cp(" + str(d.cp) + ")");
      }
    } else {
      // etp == 1 < tp: EP borrows all of cp and tp and part of dp_shard.
      if (d.ep % (d.cp * d.tp) != 0 || (d.dp_shard * d.cp * d.tp) % d.ep != 0) {
        raise(ErrorKind::ValueError, "ep(" + str(d.ep) + ") must be a multiple of cp(" + str(d.cp) + ") * tp(" +
                                         str(d.tp) + ") and divide dp_shard(" + str(d.dp_shard) + ") * cp(" +
                                         str(d.cp) + ") * tp(" + str(d.tp) + ")");
      }
    }
  }
  return d;
}

MeshSpec torchtitan_mesh(const TorchtitanDims& dims) {
  const TorchtitanDims d = torchtitan_resolve(dims);
  MeshSpec spec;
  const auto add = [&](std::int64_t size, const char* name) {
    spec.shape.push_back(size);
    spec.names.emplace_back(name);
  };
  const auto flatten = [&](const char* name, std::vector<std::string> axes) {
    if (!axes.empty()) spec.flattened.push_back({name, std::move(axes)});
  };
  if (d.ep <= 1) {
    if (d.pp > 1) add(d.pp, "pp");
    if (d.dp_replicate > 1) add(d.dp_replicate, "dp_replicate");
    if (d.dp_shard > 1) add(d.dp_shard, "dp_shard");
    if (d.cp > 1) add(d.cp, "cp");
    if (d.tp > 1) add(d.tp, "tp");
    std::vector<std::string> dp;
    std::vector<std::string> dp_shard_cp;
    std::vector<std::string> dp_cp;
    if (d.dp_replicate > 1) {
      dp.emplace_back("dp_replicate");
      dp_cp.emplace_back("dp_replicate");
    }
    if (d.dp_shard > 1) {
      dp.emplace_back("dp_shard");
      dp_shard_cp.emplace_back("dp_shard");
      dp_cp.emplace_back("dp_shard");
    }
    if (d.cp > 1) {
      dp_shard_cp.emplace_back("cp");
      dp_cp.emplace_back("cp");
    }
    flatten("dp", std::move(dp));
    flatten("dp_shard_cp", std::move(dp_shard_cp));
    flatten("dp_cp", std::move(dp_cp));
    return spec;
  }
  const bool etp_is_tp = d.etp == d.tp;
  const std::int64_t borrowed = etp_is_tp ? d.cp : d.cp * d.tp;
  const std::int64_t dp_shard_in_ep = d.ep / borrowed;
  const std::int64_t dp_shard_mod_ep = d.dp_shard * borrowed / d.ep;
  if (d.pp > 1) add(d.pp, "pp");
  if (d.dp_replicate > 1) add(d.dp_replicate, "dp_replicate");
  add(dp_shard_mod_ep, "dp_shard_mod_ep");  // kept even at 1
  if (dp_shard_in_ep > 1) add(dp_shard_in_ep, "dp_shard_in_ep");
  if (d.cp > 1) add(d.cp, "cp");
  if (d.tp > 1) add(d.tp, "tp");
  std::vector<std::string> dp;
  std::vector<std::string> dp_shard_cp;
  std::vector<std::string> dp_cp;
  std::vector<std::string> ep;
  if (d.dp_replicate > 1) {
    dp.emplace_back("dp_replicate");
    dp_cp.emplace_back("dp_replicate");
  }
  dp.emplace_back("dp_shard_mod_ep");
  dp_shard_cp.emplace_back("dp_shard_mod_ep");
  dp_cp.emplace_back("dp_shard_mod_ep");
  if (dp_shard_in_ep > 1) {
    dp.emplace_back("dp_shard_in_ep");
    dp_shard_cp.emplace_back("dp_shard_in_ep");
    dp_cp.emplace_back("dp_shard_in_ep");
    ep.emplace_back("dp_shard_in_ep");
  }
  if (d.cp > 1) {
    dp_shard_cp.emplace_back("cp");
    dp_cp.emplace_back("cp");
    ep.emplace_back("cp");
  }
  if (d.etp == 1 && d.tp > 1) ep.emplace_back("tp");
  spec.flattened.push_back({"dp", std::move(dp)});
  spec.flattened.push_back({"dp_shard_cp", std::move(dp_shard_cp)});
  spec.flattened.push_back({"dp_cp", std::move(dp_cp)});
  spec.flattened.push_back({"ep", std::move(ep)});
  return spec;
}

// ---- OLMo-core --------------------------------------------------------------------------------------------

MeshSpec olmo_core_mesh(const OlmoConfig& c) {
  // OLMo-core reads the world size from torch.distributed, never below 1; a preset typed by hand may hold anything.
  if (c.world_size < 1) raise(ErrorKind::ValueError, "world size must be >= 1, got " + str(c.world_size));
  MeshSpec spec;
  std::int64_t dp_world_size = c.world_size;
  if (!c.pp && !c.tp && !c.cp && !c.dp && !c.ep) {
    spec.shape = {dp_world_size};
    spec.names = {"dp"};
    return spec;
  }
  if (!c.dp) {
    raise(ErrorKind::ValueError,
          "Data parallel config is required in addition to expert/tensor/context/pipeline parallel configs");
  }
  const auto check = [&](const std::optional<std::int64_t>& degree, const char* cls) {
    if (!degree) return;
    if (*degree < 1 || dp_world_size % *degree != 0) {
      raise(ErrorKind::ValueError, std::string(cls) + ".degree must be at least 1 and divide into the world size");
    }
    dp_world_size /= *degree;
  };
  check(c.pp, "PipelineParallelConfig");
  check(c.cp, "ContextParallelConfig");
  check(c.tp, "TensorParallelConfig");
  const bool hsdp = c.dp->type == OlmoDataParallelType::hsdp;
  if (c.ep) {
    // Python: dp_world_size % -1 == 0, so ep = -1 ("same as the shard degree") passes.
    // A negative degree other than -1 divides only where Python's % gives 0, as C++'s does.
    if (*c.ep == 0 || dp_world_size % *c.ep != 0) {
      raise(ErrorKind::ValueError, "ExpertParallelConfig.degree must be at least 1 and divide into the world size");
    }
    if (c.tp) raise(ErrorKind::ValueError, "expert parallelism is mutually exclusive with tensor parallism");
    if (!hsdp) {
      raise(ErrorKind::ValueError, "expert parallelism can currently only be used with HSDP data parallelism");
    }
  }
  if (c.pp) {
    spec.shape.push_back(*c.pp);
    spec.names.emplace_back("pp");
  }
  if (hsdp) {
    std::int64_t replicas = 0;
    std::int64_t shard = 0;
    const auto check_replicas = [&](std::int64_t r) {
      if (r == 0 || dp_world_size % r != 0) {
        raise(ErrorKind::ValueError, "data parallel world size (" + str(dp_world_size) +
                                         ") must be divisible by 'num_replicas' (" + str(r) + ")");
      }
    };
    const auto check_shard = [&](std::int64_t s) {
      if (s == 0 || dp_world_size % s != 0) {
        raise(ErrorKind::ValueError, "data parallel world size (" + str(dp_world_size) +
                                         ") must be divisible by 'shard_degree' (" + str(s) + ")");
      }
    };
    const auto& r = c.dp->num_replicas;
    const auto& s = c.dp->shard_degree;
    if (!r && !s) {
      if (c.num_nodes < 1) raise(ErrorKind::ValueError, "num_nodes must be >= 1, got " + str(c.num_nodes));
      replicas = c.num_nodes;
      shard = dp_world_size / c.num_nodes;
    } else if (r && s) {
      check_replicas(*r);
      check_shard(*s);
      replicas = *r;
      shard = *s;
    } else if (r) {
      check_replicas(*r);
      replicas = *r;
      shard = dp_world_size / *r;
    } else {
      check_shard(*s);
      replicas = dp_world_size / *s;
      shard = *s;
    }
    if (replicas * shard != dp_world_size || replicas < 1 || shard < 1) {
      raise(ErrorKind::ValueError, "HSDP num_replicas (" + str(replicas) + ") * shard_degree (" + str(shard) +
                                       ") = " + str(replicas * shard) +
                                       " does not equal the data parallel world size (" + str(dp_world_size) + ")");
    }
    spec.shape.push_back(replicas);
    spec.names.emplace_back("dp_replicate");
    spec.shape.push_back(shard);
    spec.names.emplace_back("dp_shard");
    if (c.ep && *c.ep >= 0 && *c.ep != shard) {
      raise(ErrorKind::ValueError, "expert parallelism + HSDP requires the same sharding degree");
    }
  } else {
    spec.shape.push_back(dp_world_size);
    spec.names.emplace_back("dp");
  }
  if (c.cp) {
    spec.shape.push_back(*c.cp);
    spec.names.emplace_back("cp");
  }
  if (c.tp) {
    spec.shape.push_back(*c.tp);
    spec.names.emplace_back("tp");
  }
  if (hsdp) spec.flattened.push_back({"dp", {"dp_replicate", "dp_shard"}});
  if (c.cp) spec.flattened.push_back({"dp_cp", {hsdp ? "dp_shard" : "dp", "cp"}});
  return spec;
}

// ---- Megatron ---------------------------------------------------------------------------------------------

namespace {

struct MegatronResolved {
  std::vector<std::string> order;   // completed, first varies fastest
  std::vector<std::int64_t> sizes;  // parallel to order
};

MegatronResolved megatron_resolve(const MegatronConfig& c) {
  const std::pair<const char*, std::int64_t> checked[] = {{"tp", c.tp}, {"cp", c.cp}, {"ep", c.ep}, {"pp", c.pp}};
  for (const auto& [name, v] : checked) {
    if (v < 1) raise(ErrorKind::ValueError, "Parallelism sizes must be >= 1, got " + std::string(name) + "=" + str(v));
  }
  if (c.dp < 1 && c.dp != -1) raise(ErrorKind::ValueError, "Parallelism sizes must be >= 1, got dp=" + str(c.dp));
  if (c.world_size < 1) raise(ErrorKind::ValueError, "Parallelism sizes must be >= 1, got world_size=" + str(c.world_size));
  if (c.ep > 1 && c.cp > 1) {
    raise(ErrorKind::ValueError,
          "Both EP and CP > 1 in not allow in one rank generator. CP is only included in default RankGenerator, "
          "and EP only in expert RankGenerator.");
  }
  const std::int64_t model = degree_product({{"tp", c.tp}, {"pp", c.pp}, {"cp", c.cp}, {"ep", c.ep}}, c.world_size);
  if (c.world_size % model != 0) {
    if (c.ep == 1) {
      raise(ErrorKind::RuntimeError, "world_size (" + str(c.world_size) + ") is not divisible by " + str(model));
    }
    raise(ErrorKind::RuntimeError, "world_size (" + str(c.world_size) +
                                       ") is not divisible by expert_tensor_model_pipeline_parallel size (" +
                                       str(model) + ")");
  }
  const std::int64_t dp = c.dp == -1 ? c.world_size / model : c.dp;
  std::int64_t product = 0;
  const bool overflow = __builtin_mul_overflow(model, dp, &product);
  if (overflow || product != c.world_size) {
    raise(ErrorKind::ValueError, "world_size (" + str(c.world_size) + ") does not equal tp (" + str(c.tp) +
                                     ") * cp (" + str(c.cp) + ") * ep (" + str(c.ep) + ") * dp (" + str(dp) +
                                     ") * pp (" + str(c.pp) + ") = " +
                                     (overflow ? std::string("more than a 64-bit integer holds") : str(product)));
  }
  std::string lower = c.order;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const std::pair<const char*, std::int64_t> name_to_size[] = {
      {"tp", c.tp}, {"pp", c.pp}, {"dp", dp}, {"ep", c.ep}, {"cp", c.cp}};
  const auto size_of = [&](const std::string& name) -> std::optional<std::int64_t> {
    for (const auto& [n, s] : name_to_size) {
      if (name == n) return s;
    }
    return std::nullopt;
  };
  MegatronResolved r;
  r.order = lower.empty() ? std::vector<std::string>{} : split(lower, '-');
  std::set<std::string> seen;
  for (const auto& token : r.order) {
    if (!size_of(token)) {
      raise(ErrorKind::KeyError, "Unknown parallelism '" + token + "' in order '" + c.order +
                                     "'; expected names from tp, cp, ep, dp, pp");
    }
    if (!seen.insert(token).second) {
      raise(ErrorKind::ValueError, "Parallelism '" + token + "' appears twice in order '" + c.order + "'");
    }
  }
  for (const auto& [name, size] : name_to_size) {
    if (seen.count(name) != 0) continue;
    if (size != 1) {
      raise(ErrorKind::RuntimeError, "The size of (" + std::string(name) + ") is (" + str(size) +
                                         "), but you haven't specified the order (" + c.order + ").");
    }
    r.order.emplace_back(name);
  }
  for (const auto& token : r.order) r.sizes.push_back(*size_of(token));
  return r;
}

}  // namespace

std::vector<std::string> megatron_order(const MegatronConfig& config) { return megatron_resolve(config).order; }

MeshSpec megatron_mesh(const MegatronConfig& config) {
  const MegatronResolved r = megatron_resolve(config);
  MeshSpec spec;
  spec.shape.assign(r.sizes.rbegin(), r.sizes.rend());
  spec.names.assign(r.order.rbegin(), r.order.rend());
  return spec;
}

std::vector<std::vector<std::int64_t>> megatron_rank_groups(const MegatronConfig& config, std::string_view query) {
  const MegatronResolved r = megatron_resolve(config);
  const std::size_t n = r.order.size();
  std::vector<bool> mask(n, false);
  for (const auto& token : split(query, '-')) {
    const auto it = std::find(r.order.begin(), r.order.end(), token);
    if (it == r.order.end()) raise(ErrorKind::ValueError, "'" + token + "' is not in list");
    mask[static_cast<std::size_t>(it - r.order.begin())] = true;
  }
  // Global stride of order position i: product of the sizes before it (first name fastest).
  std::vector<std::int64_t> stride(n, 1);
  for (std::size_t i = 1; i < n; ++i) stride[i] = stride[i - 1] * r.sizes[i - 1];
  std::vector<std::int64_t> masked_shape;
  std::vector<std::int64_t> masked_stride;
  std::vector<std::int64_t> unmasked_shape;
  std::vector<std::int64_t> unmasked_stride;
  for (std::size_t i = 0; i < n; ++i) {
    (mask[i] ? masked_shape : unmasked_shape).push_back(r.sizes[i]);
    (mask[i] ? masked_stride : unmasked_stride).push_back(stride[i]);
  }
  const std::int64_t group_size = product(masked_shape);
  const std::int64_t num_groups = product(r.sizes) / group_size;
  // Decompose an index over a shape with the first entry fastest, and take the inner product with strides.
  const auto offset = [](std::int64_t index, const std::vector<std::int64_t>& shape,
                         const std::vector<std::int64_t>& strides) {
    std::int64_t out = 0;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      out += (index % shape[i]) * strides[i];
      index /= shape[i];
    }
    return out;
  };
  std::vector<std::vector<std::int64_t>> groups;
  groups.reserve(static_cast<std::size_t>(num_groups));
  for (std::int64_t g = 0; g < num_groups; ++g) {
    const std::int64_t base = offset(g, unmasked_shape, unmasked_stride);
    std::vector<std::int64_t> ranks;
    ranks.reserve(static_cast<std::size_t>(group_size));
    for (std::int64_t k = 0; k < group_size; ++k) {
      ranks.push_back(base + offset(k, masked_shape, masked_stride) + config.rank_offset);
    }
    groups.push_back(std::move(ranks));
  }
  return groups;
}

FlattenSpec megatron_flatten(const MegatronConfig& config, std::string_view query) {
  const MegatronResolved r = megatron_resolve(config);
  const std::vector<std::string> tokens = split(query, '-');
  for (const auto& token : tokens) {
    if (std::find(r.order.begin(), r.order.end(), token) == r.order.end()) {
      raise(ErrorKind::ValueError, "'" + token + "' is not in list");
    }
  }
  FlattenSpec f;
  f.name = join(tokens, "_");
  // Mesh order is the reverse of the Megatron order.
  for (auto it = r.order.rbegin(); it != r.order.rend(); ++it) {
    if (std::find(tokens.begin(), tokens.end(), *it) != tokens.end()) f.axes.push_back(*it);
  }
  return f;
}

// ---- JAX --------------------------------------------------------------------------------------------------

namespace {

void jax_check_shape(const std::vector<std::int64_t>& shape, const char* what) {
  for (const auto s : shape) {
    if (s < 1) raise(ErrorKind::ValueError, std::string(what) + " must contain positive integers. Got " + py_tuple(shape));
  }
}

void jax_check_names(std::size_t ndim, const std::vector<std::string>& names) {
  if (names.size() != ndim) {
    raise(ErrorKind::ValueError,
          "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second argument "
          "(`axis_names`), got devices.ndim == " +
              std::to_string(ndim) + " and len(axis_names) == " + std::to_string(names.size()) + ".");
  }
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (!seen.insert(n).second) raise(ErrorKind::ValueError, "Duplicate axis name '" + n + "' in axis_names");
  }
}

}  // namespace

MeshSpec jax_device_mesh(const std::vector<std::int64_t>& mesh_shape, const std::vector<std::string>& axis_names,
                         std::optional<std::int64_t> num_devices) {
  jax_check_shape(mesh_shape, "mesh_shape");
  jax_check_names(mesh_shape.size(), axis_names);
  if (num_devices && *num_devices != product(mesh_shape)) {
    raise(ErrorKind::ValueError, "Number of devices " + str(*num_devices) +
                                     " must equal the product of mesh_shape " + py_tuple(mesh_shape));
  }
  return MeshSpec{mesh_shape, axis_names, {}};
}

JaxHybridMesh jax_hybrid_device_mesh(const std::vector<std::int64_t>& ici_shape,
                                     const std::vector<std::int64_t>& dcn_shape,
                                     const std::vector<std::string>& axis_names,
                                     std::optional<std::int64_t> num_devices, std::optional<std::int64_t> num_hosts) {
  if (ici_shape.size() != dcn_shape.size()) {
    raise(ErrorKind::ValueError, "mesh_shape " + py_tuple(ici_shape) + " and dcn_mesh_shape " + py_tuple(dcn_shape) +
                                     " must have the same length");
  }
  jax_check_shape(ici_shape, "mesh_shape");
  jax_check_shape(dcn_shape, "dcn_mesh_shape");
  jax_check_names(ici_shape.size(), axis_names);
  JaxHybridMesh m;
  m.ici_shape = ici_shape;
  m.dcn_shape = dcn_shape;
  m.devices_per_host = product(ici_shape);
  m.num_hosts = product(dcn_shape);
  const std::int64_t hosts = num_hosts.value_or(m.num_hosts);
  if (hosts != m.num_hosts) {
    raise(ErrorKind::ValueError, "Number of slices " + str(hosts) + " must equal the product of dcn_mesh_shape " +
                                     py_tuple(dcn_shape));
  }
  if (num_devices && *num_devices != hosts * m.devices_per_host) {
    const std::int64_t shown = *num_devices % hosts == 0 ? *num_devices / hosts : *num_devices;
    raise(ErrorKind::ValueError,
          "Number of devices " + str(shown) + " must equal the product of mesh_shape " + py_tuple(ici_shape));
  }
  for (std::size_t i = 0; i < ici_shape.size(); ++i) {
    m.logical.shape.push_back(ici_shape[i] * dcn_shape[i]);
    m.logical.names.push_back(axis_names[i]);
  }
  for (std::size_t i = 0; i < dcn_shape.size(); ++i) {
    m.placement.shape.push_back(dcn_shape[i]);
    m.placement.names.push_back(axis_names[i] + "_dcn");
  }
  for (std::size_t i = 0; i < ici_shape.size(); ++i) {
    m.placement.shape.push_back(ici_shape[i]);
    m.placement.names.push_back(axis_names[i] + "_ici");
  }
  std::set<std::string> all(m.placement.names.begin(), m.placement.names.end());
  for (const auto& n : axis_names) {
    if (!all.insert(n).second) {
      raise(ErrorKind::ValueError, "Duplicate axis name '" + n + "' in axis_names (placement axes <name>_dcn, <name>_ici)");
    }
  }
  if (all.size() != 3 * axis_names.size()) {
    raise(ErrorKind::ValueError, "Axis names clash with the placement axes <name>_dcn / <name>_ici");
  }
  for (const auto& n : axis_names) m.placement.flattened.push_back({n, {n + "_dcn", n + "_ici"}});
  return m;
}

std::vector<std::int64_t> jax_hybrid_device_ids(const std::vector<std::int64_t>& ici_shape,
                                                const std::vector<std::int64_t>& dcn_shape) {
  if (ici_shape.size() != dcn_shape.size()) {
    raise(ErrorKind::ValueError, "mesh_shape " + py_tuple(ici_shape) + " and dcn_mesh_shape " + py_tuple(dcn_shape) +
                                     " must have the same length");
  }
  jax_check_shape(ici_shape, "mesh_shape");
  jax_check_shape(dcn_shape, "dcn_mesh_shape");
  const std::size_t n = ici_shape.size();
  std::vector<std::int64_t> shape(n);
  for (std::size_t i = 0; i < n; ++i) shape[i] = ici_shape[i] * dcn_shape[i];
  const std::int64_t total = product(shape);
  const std::int64_t per_host = product(ici_shape);
  std::vector<std::int64_t> ids;
  ids.reserve(static_cast<std::size_t>(total));
  std::vector<std::int64_t> coord(n, 0);
  for (std::int64_t pos = 0; pos < total; ++pos) {
    std::int64_t rem = pos;
    for (std::size_t i = n; i-- > 0;) {
      coord[i] = rem % shape[i];
      rem /= shape[i];
    }
    std::int64_t host = 0;
    std::int64_t local = 0;
    for (std::size_t i = 0; i < n; ++i) {
      host = host * dcn_shape[i] + coord[i] / ici_shape[i];
      local = local * ici_shape[i] + coord[i] % ici_shape[i];
    }
    ids.push_back(host * per_host + local);
  }
  return ids;
}

// ---- Llama 3 ----------------------------------------------------------------------------------------------

MeshSpec llama3_405b_mesh() { return MeshSpec{{128, 16, 1, 8}, {"dp", "pp", "cp", "tp"}, {}}; }

MeshSpec llama3_405b_long_context_mesh() { return MeshSpec{{8, 16, 16, 8}, {"dp", "pp", "cp", "tp"}, {}}; }

// ---- Registry ---------------------------------------------------------------------------------------------

std::vector<PresetInfo> list_presets() {
  return {
      {"torchtitan", "torchtitan ParallelDims: pp, dp_replicate, dp_shard, cp, tp (degree-1 axes left out) with dp, "
                     "dp_shard_cp, dp_cp flattened; ep carved from dp_shard*cp(*tp)",
       {"world_size*", "dp_replicate", "dp_shard", "cp", "tp", "pp", "ep", "etp"}},
      {"olmo_core[:fsdp|:ddp|:hsdp]",
       "OLMo-core build_world_mesh: pp, dp or dp_replicate+dp_shard (HSDP), cp, tp; dp_cp flattened",
       {"world_size*", "tp", "cp", "pp", "ep", "num_replicas", "shard_degree", "num_nodes"}},
      {"megatron[:<order>]",
       "Megatron-LM RankGenerator order string (default tp-cp-ep-dp-pp, first name fastest) as a mesh",
       {"world_size*", "tp", "cp", "ep", "dp", "pp"}},
      {"jax:<name,name,...>", "JAX create_device_mesh: one axis per name, increasing network intensity",
       {"<name>*", "num_devices"}},
      {"jax_hybrid:<name,name,...>",
       "JAX create_hybrid_device_mesh: per-host ICI mesh tiled by a DCN mesh (exact device placement)",
       {"<name>*", "dcn_<name>", "num_devices", "num_hosts"}},
      {"llama3_405b", "Llama 3 405B on 16,384 GPUs: dp=128, pp=16, cp=1, tp=8", {}},
      {"llama3_405b_long_context", "Llama 3 405B long-context phase on 16,384 GPUs: dp=8, pp=16, cp=16, tp=8", {}},
  };
}

namespace {

class Degrees {
public:
  Degrees(std::string preset, const std::map<std::string, std::int64_t>& degrees, std::vector<std::string> accepted)
      : preset_(std::move(preset)), degrees_(degrees), accepted_(std::move(accepted)) {
    for (const auto& [key, value] : degrees_) {
      (void)value;
      if (std::find(accepted_.begin(), accepted_.end(), key) == accepted_.end()) {
        raise(ErrorKind::KeyError, "Unknown degree '" + key + "' for preset '" + preset_ + "'; accepted: " +
                                       (accepted_.empty() ? std::string("none") : join(accepted_, ", ")));
      }
    }
  }
  [[nodiscard]] std::optional<std::int64_t> get(const std::string& key) const {
    const auto it = degrees_.find(key);
    if (it == degrees_.end()) return std::nullopt;
    return it->second;
  }
  [[nodiscard]] std::int64_t get_or(const std::string& key, std::int64_t fallback) const {
    return get(key).value_or(fallback);
  }
  [[nodiscard]] std::int64_t required(const std::string& key) const {
    const auto v = get(key);
    if (!v) raise(ErrorKind::KeyError, "Preset '" + preset_ + "' requires degree '" + key + "'");
    return *v;
  }

private:
  std::string preset_;
  const std::map<std::string, std::int64_t>& degrees_;
  std::vector<std::string> accepted_;
};

std::vector<std::string> preset_axis_names(const std::string& preset, const std::string& arg) {
  if (arg.empty()) {
    raise(ErrorKind::ValueError, "Preset '" + preset + "' needs axis names after ':', e.g. '" + preset + ":data,model'");
  }
  std::vector<std::string> names = split(arg, ',');
  for (const auto& n : names) {
    if (n.empty()) raise(ErrorKind::ValueError, "Empty axis name in '" + preset + ":" + arg + "'");
  }
  return names;
}

}  // namespace

MeshSpec build_preset(std::string_view name, const std::map<std::string, std::int64_t>& degrees) {
  const std::size_t colon = name.find(':');
  const std::string base(name.substr(0, colon));
  const bool has_arg = colon != std::string_view::npos;
  const std::string arg = has_arg ? std::string(name.substr(colon + 1)) : std::string();
  const auto no_arg = [&] {
    if (has_arg) raise(ErrorKind::ValueError, "Preset '" + base + "' takes no argument, got '" + std::string(name) + "'");
  };
  if (base == "torchtitan") {
    no_arg();
    const Degrees d(base, degrees, {"world_size", "dp_replicate", "dp_shard", "cp", "tp", "pp", "ep", "etp"});
    TorchtitanDims dims;
    dims.world_size = d.required("world_size");
    dims.dp_replicate = d.get_or("dp_replicate", 1);
    dims.dp_shard = d.get_or("dp_shard", -1);
    dims.cp = d.get_or("cp", 1);
    dims.tp = d.get_or("tp", 1);
    dims.pp = d.get_or("pp", 1);
    dims.ep = d.get_or("ep", 1);
    dims.etp = d.get_or("etp", 1);
    return torchtitan_mesh(dims);
  }
  if (base == "olmo_core") {
    const Degrees d(base, degrees,
                    {"world_size", "tp", "cp", "pp", "ep", "num_replicas", "shard_degree", "num_nodes"});
    OlmoConfig c;
    c.world_size = d.required("world_size");
    OlmoDataParallel dp;
    if (!has_arg || arg == "fsdp") {
      dp.type = OlmoDataParallelType::fsdp;
    } else if (arg == "ddp") {
      dp.type = OlmoDataParallelType::ddp;
    } else if (arg == "hsdp") {
      dp.type = OlmoDataParallelType::hsdp;
    } else {
      raise(ErrorKind::ValueError, "Unknown data parallel type '" + arg + "' for preset 'olmo_core'; expected fsdp, ddp or hsdp");
    }
    dp.num_replicas = d.get("num_replicas");
    dp.shard_degree = d.get("shard_degree");
    if (dp.type != OlmoDataParallelType::hsdp && (dp.num_replicas || dp.shard_degree)) {
      raise(ErrorKind::ValueError, "num_replicas and shard_degree apply to 'olmo_core:hsdp' only");
    }
    c.dp = dp;
    c.tp = d.get("tp");
    c.cp = d.get("cp");
    c.pp = d.get("pp");
    c.ep = d.get("ep");
    c.num_nodes = d.get_or("num_nodes", 1);
    return olmo_core_mesh(c);
  }
  if (base == "megatron") {
    const Degrees d(base, degrees, {"world_size", "tp", "cp", "ep", "dp", "pp"});
    MegatronConfig c;
    c.world_size = d.required("world_size");
    c.tp = d.get_or("tp", 1);
    c.cp = d.get_or("cp", 1);
    c.ep = d.get_or("ep", 1);
    c.dp = d.get_or("dp", -1);
    c.pp = d.get_or("pp", 1);
    if (has_arg) c.order = arg;
    return megatron_mesh(c);
  }
  if (base == "jax") {
    const std::vector<std::string> names = preset_axis_names(base, arg);
    std::vector<std::string> accepted = names;
    accepted.emplace_back("num_devices");
    const Degrees d(base, degrees, accepted);
    std::vector<std::int64_t> shape;
    for (const auto& n : names) shape.push_back(d.required(n));
    return jax_device_mesh(shape, names, d.get("num_devices"));
  }
  if (base == "jax_hybrid") {
    const std::vector<std::string> names = preset_axis_names(base, arg);
    std::vector<std::string> accepted = names;
    for (const auto& n : names) accepted.push_back("dcn_" + n);
    accepted.emplace_back("num_devices");
    accepted.emplace_back("num_hosts");
    const Degrees d(base, degrees, accepted);
    std::vector<std::int64_t> ici;
    std::vector<std::int64_t> dcn;
    for (const auto& n : names) {
      ici.push_back(d.required(n));
      dcn.push_back(d.get_or("dcn_" + n, 1));
    }
    return jax_hybrid_device_mesh(ici, dcn, names, d.get("num_devices"), d.get("num_hosts")).placement;
  }
  if (base == "llama3_405b" || base == "llama3_405b_long_context") {
    no_arg();
    const Degrees d(base, degrees, {});
    return base == "llama3_405b" ? llama3_405b_mesh() : llama3_405b_long_context_mesh();
  }
  std::vector<std::string> names;
  for (const auto& p : list_presets()) names.push_back(p.name);
  raise(ErrorKind::KeyError, "Unknown preset '" + std::string(name) + "'; available: " + join(names, ", "));
}

}  // namespace meshloom
