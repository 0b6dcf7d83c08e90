// The layout advisor (advisor.hpp): candidates, with_layout, and the ranking of a design's layouts for its workload.
#include "meshloom/advisor/advisor.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "meshloom/dtype.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"
#include "meshloom/workload/workload.hpp"
#include "json_read.hpp"

namespace meshloom {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using detail::join;  // "a, b, c"

// "tp", "tp and cp", "tp, cp and ep".
std::string words(const std::vector<std::string>& parts) {
  if (parts.size() <= 1) return parts.empty() ? std::string() : parts.front();
  return join(std::vector<std::string>(parts.begin(), parts.end() - 1)) + " and " + parts.back();
}

// ---- Enumeration -------------------------------------------------------------------------------------------------

// a * b, saturating at `cap` (every count here is compared with a cap and nothing else).
std::uint64_t capped_mul(std::uint64_t a, std::uint64_t b, std::uint64_t cap) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r > cap) return cap;
  return r;
}

std::uint64_t count_orders(std::size_t axes, std::uint64_t cap) {
  std::uint64_t n = 1;
  for (std::size_t k = 2; k <= axes; ++k) n = capped_mul(n, k, cap);
  return n;
}

// The prime exponents of p (p >= 1).
std::vector<std::int64_t> prime_exponents(std::int64_t p) {
  std::vector<std::int64_t> exponents;
  for (std::int64_t f = 2; f * f <= p; ++f) {
    std::int64_t e = 0;
    while (p % f == 0) {
      p /= f;
      ++e;
    }
    if (e > 0) exponents.push_back(e);
  }
  if (p > 1) exponents.push_back(1);
  return exponents;
}

// Ordered factorizations of p into `axes` factors: the product over p's primes of C(e + axes - 1, axes - 1).
std::uint64_t count_factorizations(std::int64_t p, std::size_t axes, std::uint64_t cap) {
  std::uint64_t n = 1;
  for (const std::int64_t e : prime_exponents(p)) {
    // C(e + k, k) with k = axes - 1, computed as a running product (exact at every step).
    std::uint64_t c = 1;
    const auto k = static_cast<std::uint64_t>(axes - 1);
    for (std::uint64_t i = 1; i <= static_cast<std::uint64_t>(e); ++i) {
      const std::uint64_t numerator = k + i;
      std::uint64_t r = 0;
      if (__builtin_mul_overflow(c, numerator, &r)) return cap;
      c = r / i;
      if (c > cap) return cap;
    }
    n = capped_mul(n, c, cap);
  }
  return n;
}

// Every permutation of 0..n-1, the identity first, then in lexicographic order.
std::vector<std::vector<std::size_t>> permutations(std::size_t n) {
  std::vector<std::size_t> p(n);
  std::iota(p.begin(), p.end(), std::size_t{0});
  std::vector<std::vector<std::size_t>> out;
  do {
    out.push_back(p);
  } while (std::next_permutation(p.begin(), p.end()));
  return out;
}

// Every ordered factorization of p into `axes` factors, ascending lexicographically.
std::vector<std::vector<std::int64_t>> factorizations(std::int64_t p, std::size_t axes) {
  std::vector<std::int64_t> divisors;
  for (std::int64_t d = 1; d * d <= p; ++d) {
    if (p % d != 0) continue;
    divisors.push_back(d);
    if (d != p / d) divisors.push_back(p / d);
  }
  std::sort(divisors.begin(), divisors.end());
  std::vector<std::vector<std::int64_t>> out;
  std::vector<std::int64_t> current(axes, 1);
  // Axis i takes a divisor of what is left; the last axis takes the rest.
  auto fill = [&](auto&& self, std::size_t axis, std::int64_t left) -> void {
    if (axis + 1 == axes) {
      current[axis] = left;
      out.push_back(current);
      return;
    }
    for (const std::int64_t d : divisors) {
      if (d > left) break;
      if (left % d != 0) continue;
      current[axis] = d;
      self(self, axis + 1, left / d);
    }
  };
  fill(fill, 0, p);
  return out;
}

// The mesh `sizes` (one per design axis, in the design's order) with its axes in the order `order` (indices of the
// design's axes): names and sizes permuted, flattened axes with their members in the new order.
MeshSpec arranged(const MeshSpec& design_mesh, const std::vector<std::int64_t>& sizes,
                  const std::vector<std::size_t>& order) {
  MeshSpec mesh;
  for (const std::size_t old : order) {
    mesh.shape.push_back(sizes[old]);
    mesh.names.push_back(design_mesh.names[old]);
  }
  std::vector<std::size_t> position(order.size());
  for (std::size_t j = 0; j < order.size(); ++j) position[order[j]] = j;
  for (const FlattenSpec& f : design_mesh.flattened) {
    FlattenSpec g{f.name, {}};
    std::vector<std::size_t> members;
    for (const std::string& name : f.axes) {
      const auto it = std::find(design_mesh.names.begin(), design_mesh.names.end(), name);
      members.push_back(position[static_cast<std::size_t>(it - design_mesh.names.begin())]);
    }
    std::sort(members.begin(), members.end());
    for (const std::size_t m : members) g.axes.push_back(mesh.names[m]);
    mesh.flattened.push_back(std::move(g));
  }
  return mesh;
}

std::int64_t ranks_of(const std::vector<std::int64_t>& shape) {
  std::int64_t ranks = 1;
  for (const std::int64_t s : shape) {
    if (__builtin_mul_overflow(ranks, s, &ranks)) raise(ErrorKind::ValueError, "the mesh holds more than 2^63-1 ranks");
  }
  return ranks;
}

// ---- Hosts -------------------------------------------------------------------------------------------------------

// The most hosts one group of mesh axis `axis` spans when the ranks are placed row-major on hosts of `per_host`
// consecutive ranks (rank r on host r / per_host). Arithmetic, without enumerating the ranks: a group is
// r0 + k*stride (k < n); when stride >= per_host its members sit on n different hosts; otherwise no host between
// its first and last member is skipped, and the group spans floor(L/D) + 1 hosts, one more when
// (r0 mod D) + (L mod D) >= D (L = (n-1)*stride, D = per_host). The largest r0 mod D over the groups' first
// members r0 = o*n*stride + i (o < outer, i < stride) is min(D - 1, max_o(o*n*stride mod D) + stride - 1).
std::int64_t hosts_spanned(const std::vector<std::int64_t>& shape, std::size_t axis, std::int64_t per_host) {
  const std::int64_t n = shape[axis];
  if (n == 1) return 1;
  std::int64_t stride = 1;
  for (std::size_t a = axis + 1; a < shape.size(); ++a) stride *= shape[a];
  std::int64_t outer = 1;
  for (std::size_t a = 0; a < axis; ++a) outer *= shape[a];
  const std::int64_t d = per_host;
  if (stride >= d) return n;
  const std::int64_t span = (n - 1) * stride;
  const std::int64_t block = (n * stride) % d;  // o*n*stride mod D = o*block mod D: multiples of gcd(block, D)
  const std::int64_t step = std::gcd(block, d);   // (D when block is 0)
  std::int64_t max_start = 0;
  if (outer >= d / step) {
    max_start = d - step;  // o runs through a whole period: every multiple of step below D
  } else {
    for (std::int64_t o = 0, r = 0; o < outer; ++o, r = (r + block) % d) max_start = std::max(max_start, r);
  }
  const std::int64_t max_residue = std::min(d - 1, max_start + stride - 1);
  return span / d + 1 + (max_residue + span % d >= d ? 1 : 0);
}

// ---- Plans -------------------------------------------------------------------------------------------------------

// What the ranking needs of a plan: its cost and, per step after merging, the axes, collective and cost.
struct StepSummary {
  std::vector<std::size_t> axes;
  Collective collective = Collective::Chunk;
  double cost = 0;
};
struct PlanSummary {
  double cost = 0;
  std::vector<StepSummary> steps;
  std::string error;  // not empty: no plan (the planner's message)
};

PlanSummary summarize(const PlanRequest& request, const CostModel& model) {
  PlanSummary s;
  try {
    const Plan plan = plan_redistribution(request, model);
    s.cost = plan.cost;
    for (const PlanStep& step : plan.steps) s.steps.push_back({step.axes, step.collective, step.cost});
  } catch (const Error& e) {
    s.error = e.message();
  }
  return s;
}

// The cache key: a candidate's model prices by its mesh shape (the group shapes of every axis follow from the mesh
// shape and the hosts, which every candidate shares), and the flattened groups decide which steps merge.
struct PlanKey {
  std::vector<std::int64_t> mesh;
  std::vector<std::int64_t> tensor;
  std::int64_t itemsize = 0;
  State src;
  State dst;
  std::vector<std::vector<std::size_t>> flattened;
  friend bool operator==(const PlanKey&, const PlanKey&) = default;
};

struct PlanKeyHash {
  static void mix(std::size_t& h, std::size_t v) noexcept { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }
  std::size_t operator()(const PlanKey& k) const noexcept {
    std::size_t h = 0;
    for (const auto* v : {&k.mesh, &k.tensor}) {
      mix(h, v->size());
      for (const std::int64_t x : *v) mix(h, static_cast<std::size_t>(x));
    }
    mix(h, static_cast<std::size_t>(k.itemsize));
    mix(h, std::hash<State>{}(k.src));
    mix(h, std::hash<State>{}(k.dst));
    for (const auto& group : k.flattened) {
      mix(h, group.size());
      for (const std::size_t a : group) mix(h, a);
    }
    return h;
  }
};

// Plans shared by every candidate of one advise() call. Thread-safe; a plan two threads miss at once is planned by
// both and stored once (the counts come from the number of keys, so they do not depend on the race).
class SharedPlans {
public:
  std::shared_ptr<const PlanSummary> get(const PlanRequest& request, const CostModel& model) {
    PlanKey key{request.mesh_shape, request.tensor_shape, request.itemsize, request.src, request.dst,
                request.flattened};
    {
      const std::lock_guard lock(mutex_);
      if (const auto it = plans_.find(key); it != plans_.end()) return it->second;
    }
    auto planned = std::make_shared<const PlanSummary>(summarize(request, model));
    const std::lock_guard lock(mutex_);
    return plans_.emplace(std::move(key), std::move(planned)).first->second;
  }
  [[nodiscard]] std::size_t size() const {
    const std::lock_guard lock(mutex_);
    return plans_.size();
  }

private:
  mutable std::mutex mutex_;
  std::unordered_map<PlanKey, std::shared_ptr<const PlanSummary>, PlanKeyHash> plans_;
};

void add_cost(AxisCost& axis, const std::string& collective, double cost, std::int64_t count, bool issued) {
  axis.cost += cost;
  axis.by_collective[collective] += cost;
  if (issued) {
    std::int64_t& n = axis.counts[collective];
    if (__builtin_add_overflow(n, count, &n)) n = std::numeric_limits<std::int64_t>::max();  // saturate
  }
}

// One candidate priced: every work item of its design, planned (or sent), times its count.
CandidateCost price(const Design& design, const MeshSpec& mesh, const CostModel& model, SharedPlans* shared,
                    std::size_t& lookups) {
  CandidateCost c;
  c.mesh = mesh;
  for (std::size_t a = 0; a < mesh.shape.size(); ++a) {
    AxisCost axis;
    axis.name = mesh.names[a];
    axis.size = mesh.shape[a];
    axis.hosts = hosts_spanned(mesh.shape, a, design.devices_per_host);
    c.axes.push_back(std::move(axis));
  }
  const Design candidate = with_layout(design, mesh);
  std::vector<std::vector<std::size_t>> flattened;
  for (const FlattenSpec& f : mesh.flattened) {
    std::vector<std::size_t> group;
    for (const std::string& name : f.axes) {
      group.push_back(static_cast<std::size_t>(std::find(mesh.names.begin(), mesh.names.end(), name) -
                                               mesh.names.begin()));
    }
    std::sort(group.begin(), group.end());
    if (group.size() >= 2) flattened.push_back(std::move(group));
  }
  std::vector<WorkItem> items;
  try {
    items = expand_workload(candidate);
  } catch (const Error& e) {  // a size-dependent failure (a shape beyond 2^63-1 bytes): this candidate only
    c.unpriced = "the workload does not expand on this layout: " + e.message();
    c.cost = kInf;
    return c;
  }
  for (const WorkItem& item : items) {
    const double count = static_cast<double>(item.count);
    if (item.kind == WorkItemKind::Send) {
      std::int64_t numel = 1;
      for (const std::int64_t s : item.shape) numel *= s;
      const double t = model.send_cost(mesh.shape, item.axis, numel * itemsize(item.dtype));
      if (!std::isfinite(t)) {
        c.unpriced = item.name + ": the " + std::string(model.name()) + " model cannot price a send on " +
                     mesh.names[item.axis];
        break;
      }
      add_cost(c.axes[item.axis], "send", t * count, item.count, true);
      c.by_category[item.category] += t * count;
      c.cost += t * count;
      continue;
    }
    PlanRequest request;
    request.mesh_shape = mesh.shape;
    request.tensor_shape = item.shape;
    request.src = item.src;
    request.dst = item.dst;
    request.planner = PlannerKind::Graph;
    request.variant = PartialVariant::Newest;
    request.itemsize = itemsize(item.dtype);
    request.flattened = flattened;
    ++lookups;
    const std::shared_ptr<const PlanSummary> plan =
        shared != nullptr ? shared->get(request, model)
                          : std::make_shared<const PlanSummary>(summarize(request, model));
    if (!plan->error.empty()) {
      c.unpriced = item.name + ": no plan: " + plan->error;
      // A calibration without a curve the path needs is the usual cause: say which curves this layout lacks.
      if (const auto* calibrated = dynamic_cast<const CalibratedCostModel*>(&model)) {
        std::vector<CalibratedCostModel::Gap> gaps = calibrated->gap_list(mesh.shape, flattened);
        // Named first: a gap on an axis whose placement the item changes (one its plan cannot avoid), or on a
        // flattened group two of whose axes change (where the plan's merged step runs).
        std::stable_partition(gaps.begin(), gaps.end(), [&item](const CalibratedCostModel::Gap& gap) {
          const auto moves = std::count_if(gap.axes.begin(), gap.axes.end(), [&item](std::size_t a) {
            return a < item.src.ndim() && item.src.placement(a) != item.dst.placement(a);
          });
          return gap.axes.size() == 1 ? moves == 1 : moves >= 2;
        });
        if (!gaps.empty()) {
          c.unpriced += "; the calibration cannot price: " + gaps.front().text +
                        (gaps.size() > 1 ? " (and " + std::to_string(gaps.size() - 1) + " more)" : std::string());
        }
      }
      break;
    }
    for (const StepSummary& step : plan->steps) {
      const bool issued = communicates(step.collective);
      if (!issued && step.cost == 0) continue;
      const std::string name(to_string(step.collective));
      if (step.axes.size() == 1) {
        add_cost(c.axes[step.axes.front()], name, step.cost * count, item.count, issued);
        continue;
      }
      // A merged step on a flattened group: its cost split over its axes in proportion to the logs of their sizes.
      double total_log = 0;
      for (const std::size_t a : step.axes) total_log += std::log(static_cast<double>(mesh.shape[a]));
      for (const std::size_t a : step.axes) {
        const double share = total_log > 0 ? std::log(static_cast<double>(mesh.shape[a])) / total_log
                                            : 1.0 / static_cast<double>(step.axes.size());
        add_cost(c.axes[a], name, step.cost * count * share, item.count, issued);
      }
    }
    c.by_category[item.category] += plan->cost * count;
    c.cost += plan->cost * count;
  }
  if (!c.unpriced.empty()) {
    c.cost = kInf;
    c.by_category.clear();
    for (AxisCost& a : c.axes) {
      a.cost = 0;
      a.by_collective.clear();
      a.counts.clear();
    }
  }
  return c;
}

// ---- Constraints -------------------------------------------------------------------------------------------------

void check_constraints(const AdvisorConstraints& constraints, const Design& design) {
  const auto known = [&design](const std::string& name) {
    return std::find(design.mesh.names.begin(), design.mesh.names.end(), name) != design.mesh.names.end();
  };
  const std::string axes = " (axes: " + join(design.mesh.names) + ")";
  for (const auto& [name, size] : constraints.fixed) {
    if (!known(name)) raise(ErrorKind::ValueError, "constraints.fixed: no mesh axis is named \"" + name + "\"" + axes);
    if (size < 1) {
      raise(ErrorKind::ValueError, "constraints.fixed." + name + " = " + std::to_string(size) + ": sizes must be >= 1");
    }
  }
  for (const std::string& name : constraints.within_host) {
    if (!known(name)) {
      raise(ErrorKind::ValueError, "constraints.within_host: no mesh axis is named \"" + name + "\"" + axes);
    }
  }
  if (constraints.pp_divides_layers && !design.workload->model) {
    raise(ErrorKind::ValueError,
          "constraints.pp_divides_layers: the workload has no model (nothing says how many layers it has)");
  }
}

std::int64_t size_of(const MeshSpec& mesh, const std::string& name) {
  const auto it = std::find(mesh.names.begin(), mesh.names.end(), name);
  return mesh.shape[static_cast<std::size_t>(it - mesh.names.begin())];
}

bool satisfies(const MeshSpec& mesh, const AdvisorConstraints& constraints, const Design& design) {
  for (const auto& [name, size] : constraints.fixed) {
    if (size_of(mesh, name) != size) return false;
  }
  for (const std::string& name : constraints.within_host) {
    const auto axis = static_cast<std::size_t>(std::find(mesh.names.begin(), mesh.names.end(), name) -
                                               mesh.names.begin());
    if (hosts_spanned(mesh.shape, axis, design.devices_per_host) != 1) return false;
  }
  if (constraints.pp_divides_layers) {
    const ModelSpec& model = *design.workload->model;
    if (!model.axes.pp.empty() && model.layers % size_of(mesh, model.axes.pp) != 0) return false;
  }
  return true;
}

std::string constraints_text(const AdvisorConstraints& constraints) {
  std::vector<std::string> parts;
  for (const auto& [name, size] : constraints.fixed) parts.push_back(name + " = " + std::to_string(size));
  for (const std::string& name : constraints.within_host) parts.push_back(name + " within a host");
  if (constraints.pp_divides_layers) parts.push_back("pp divides the layers");
  return join(parts);
}

// ---- The reason --------------------------------------------------------------------------------------------------

// "all_gather" -> "all-gathers", "send" -> "sends".
std::string plural(const std::string& collective) {
  std::string s = collective;
  std::replace(s.begin(), s.end(), '_', '-');
  return s + "s";
}

// A ratio as people read it: 2 significant digits, more when that would read "1".
std::string ratio_text(double ratio) {
  char buf[64];
  for (int digits = 2; digits <= 6; ++digits) {
    const auto r = std::to_chars(buf, buf + sizeof buf, ratio, std::chars_format::general, digits);
    const std::string s(buf, r.ptr);
    if (s != "1" || digits == 6) return s + "x";
  }
  return "1x";
}

const AxisCost* axis_named(const CandidateCost& c, const std::string& name) {
  for (const AxisCost& a : c.axes) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

double collective_cost(const AxisCost* a, const std::string& collective) {
  if (a == nullptr) return 0;
  const auto it = a->by_collective.find(collective);
  return it == a->by_collective.end() ? 0 : it->second;
}

bool ties(double a, double b) {
  if (a == b) return true;
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

// What the winner does well: which axes stay inside a host, and where most of its cost goes.
std::string winner_text(const CandidateCost& w) {
  std::vector<std::string> inside;
  std::size_t communicating = 0;
  for (const AxisCost& a : w.axes) {
    if (a.size == 1) continue;
    ++communicating;
    if (a.hosts == 1) inside.push_back(a.name);
  }
  const AxisCost* top_axis = nullptr;
  std::string top_collective;
  double top = 0;
  for (const AxisCost& a : w.axes) {
    for (const auto& [collective, cost] : a.by_collective) {
      if (cost > top) {
        top = cost;
        top_axis = &a;
        top_collective = collective;
      }
    }
  }
  if (top_axis == nullptr) return layout_text(w.mesh) + " communicates nothing";
  if (inside.size() == 1 && inside.front() == top_axis->name) {
    return top_axis->name + " stays inside a host, where its " + plural(top_collective) + " cost the most";
  }
  std::string text;
  if (!inside.empty()) {
    text = inside.size() == communicating && communicating >= 2 ? "every axis stays inside a host"
                                                                 : words(inside) +
                                                                       (inside.size() == 1 ? " stays" : " stay") +
                                                                       " inside a host";
    text += "; ";
  }
  text += top_axis->name + "'s " + plural(top_collective);
  text += top_axis->hosts > 1 ? " cross " + std::to_string(top_axis->hosts) + " hosts" : " cost the most";
  return text;
}

// What a costlier layout `r` loses on against the winner: the (axis, collective) whose cost grows the most.
std::string loser_text(const CandidateCost& w, const CandidateCost& r, const std::string& layout) {
  if (!std::isfinite(r.cost)) return layout + " cannot be priced (" + r.unpriced + ")";
  std::string text = layout + " costs " + (w.cost > 0 ? ratio_text(r.cost / w.cost) : std::string("more"));
  const AxisCost* worst = nullptr;
  std::string worst_collective;
  double grown = 0;
  for (const AxisCost& a : r.axes) {
    for (const auto& [collective, cost] : a.by_collective) {
      const double delta = cost - collective_cost(axis_named(w, a.name), collective);
      if (delta > grown) {
        grown = delta;
        worst = &a;
        worst_collective = collective;
      }
    }
  }
  if (worst == nullptr) return text;
  const AxisCost* before = axis_named(w, worst->name);
  const double was = collective_cost(before, worst_collective);
  text += ": its " + worst->name + " " + plural(worst_collective);
  if (before != nullptr && worst->hosts > before->hosts) {
    return text + " cross " + std::to_string(worst->hosts) + " hosts";
  }
  if (was > 0) {
    text += " cost " + ratio_text(collective_cost(worst, worst_collective) / was) + " as much";
    if (before != nullptr && before->size != worst->size) {
      text += " (" + worst->name + " " + std::to_string(worst->size) + " instead of " + std::to_string(before->size) +
              ")";
    }
    return text;
  }
  return text + " (" + worst->name + " " + std::to_string(worst->size) + ") are new";
}

// The axes of `c` that PyTorch's comm model prices as inside a host (mesh_topology: the axis' size times the inner
// axes' is at most per_host) while their groups span more than one (AxisCost::hosts): groups that do not line up
// with the hosts (3 ranks per group on hosts of 4). "tp in (dp 4, tp 3) as inside a host (PyTorch's rule: ...)".
std::vector<std::string> comm_rule_misses(const CandidateCost& c, std::int64_t per_host) {
  std::vector<std::string> misses;
  // The comm model's own topology decides (mesh_topology: an axis within a host keeps the in-host latency); the
  // running product only counts the ranks for the message.
  std::vector<std::int64_t> shape;
  for (const AxisCost& axis : c.axes) shape.push_back(axis.size);
  const MeshTopology topology = mesh_topology(shape, per_host);
  const double in_host_latency = mesh_topology({1}, 1).latency_us.front();
  std::int64_t ranks = 1;  // the axis' size times the inner axes', saturating past per_host
  for (std::size_t a = c.axes.size(); a-- > 0;) {
    const AxisCost& axis = c.axes[a];
    ranks = ranks > per_host / std::max<std::int64_t>(axis.size, 1) ? per_host + 1 : ranks * axis.size;
    if (topology.latency_us[a] == in_host_latency && axis.hosts > 1) {
      misses.push_back(axis.name + " in " + layout_text(c.mesh) + " as inside a host (PyTorch's rule: it and the " +
                       "axes after it hold " + std::to_string(ranks) + " ranks, at most " + std::to_string(per_host) +
                       " per host) though its groups cross " + std::to_string(axis.hosts) + " hosts");
    }
  }
  return misses;
}

}  // namespace

// ---- Public functions --------------------------------------------------------------------------------------------

std::string_view to_string(AdvisorSearch search) noexcept {
  switch (search) {
    case AdvisorSearch::Orders: return "orders";
    case AdvisorSearch::Factorizations: return "factorizations";
    case AdvisorSearch::Both: return "both";
  }
  return "orders";
}

AdvisorSearch advisor_search_from_string(std::string_view text) {
  if (text == "orders") return AdvisorSearch::Orders;
  if (text == "factorizations") return AdvisorSearch::Factorizations;
  if (text == "both") return AdvisorSearch::Both;
  raise(ErrorKind::ValueError,
        "search \"" + std::string(text) + "\": unknown search (expected orders, factorizations or both)");
}

std::string layout_text(const MeshSpec& mesh) {
  std::vector<std::string> parts;
  for (std::size_t a = 0; a < mesh.shape.size(); ++a) {
    parts.push_back((a < mesh.names.size() ? mesh.names[a] : std::to_string(a)) + " " + std::to_string(mesh.shape[a]));
  }
  return "(" + join(parts) + ")";
}

std::vector<MeshSpec> advisor_candidates(const Design& design, AdvisorSearch search, std::size_t max_candidates) {
  const MeshSpec& mesh = design.mesh;
  const std::size_t axes = mesh.shape.size();
  if (axes == 0 || mesh.names.size() != axes) {
    raise(ErrorKind::ValueError,
          "design \"" + design.name + "\": the mesh needs one name per axis and at least one axis");
  }
  const std::int64_t ranks = ranks_of(mesh.shape);
  const std::uint64_t cap = std::numeric_limits<std::uint64_t>::max();  // counts saturate there
  const std::uint64_t orders = search == AdvisorSearch::Factorizations ? 1 : count_orders(axes, cap);
  const std::uint64_t sizes = search == AdvisorSearch::Orders ? 1 : count_factorizations(ranks, axes, cap);
  const std::uint64_t count = capped_mul(orders, sizes, cap);
  if (count > max_candidates) {
    raise(ErrorKind::ValueError, "search \"" + std::string(to_string(search)) + "\" on " + layout_text(mesh) +
                                     " enumerates more than max_candidates = " + std::to_string(max_candidates) +
                                     " candidates (" +
                                     (count < cap ? std::to_string(count) : "over 2^64") + ")");
  }
  std::vector<std::vector<std::int64_t>> shapes{mesh.shape};
  if (search != AdvisorSearch::Orders) {
    for (auto& f : factorizations(ranks, axes)) {
      if (f != mesh.shape) shapes.push_back(std::move(f));
    }
  }
  std::vector<std::vector<std::size_t>> order_list;
  if (search == AdvisorSearch::Factorizations) {
    order_list.emplace_back(axes);
    std::iota(order_list.back().begin(), order_list.back().end(), std::size_t{0});
  } else {
    order_list = permutations(axes);
  }
  // Two candidates that differ only in where their axes of size 1 sit are one layout: every group of every axis is
  // the same (an axis of size 1 has one-rank groups and does not change the others' strides). The first one
  // enumerated stands for them (the design's own mesh first).
  std::vector<MeshSpec> out;
  out.reserve(shapes.size() * order_list.size());
  std::set<std::vector<std::pair<std::string, std::int64_t>>> seen;
  for (const auto& shape : shapes) {
    for (const auto& order : order_list) {
      MeshSpec m = arranged(mesh, shape, order);
      std::vector<std::pair<std::string, std::int64_t>> key;
      for (std::size_t a = 0; a < m.shape.size(); ++a) {
        if (m.shape[a] > 1) key.emplace_back(m.names[a], m.shape[a]);
      }
      if (seen.insert(std::move(key)).second) out.push_back(std::move(m));
    }
  }
  return out;
}

Design with_layout(const Design& design, const MeshSpec& mesh) {
  const MeshSpec& old = design.mesh;
  const std::string shown = layout_text(mesh);
  if (mesh.shape.size() != mesh.names.size()) {
    raise(ErrorKind::ValueError, "layout " + shown + ": " + std::to_string(mesh.shape.size()) + " sizes for " +
                                     std::to_string(mesh.names.size()) + " names");
  }
  std::vector<std::size_t> order;  // order[j]: the design axis the new axis j is
  for (const std::string& name : mesh.names) {
    const auto it = std::find(old.names.begin(), old.names.end(), name);
    if (it == old.names.end() || std::find(order.begin(), order.end(), it - old.names.begin()) != order.end()) {
      order.clear();
      break;
    }
    order.push_back(static_cast<std::size_t>(it - old.names.begin()));
  }
  if (order.size() != old.names.size()) {
    raise(ErrorKind::ValueError, "layout " + shown + ": its axes are not the design's axes (" + join(old.names) +
                                     ") in some order");
  }
  for (std::size_t j = 0; j < mesh.shape.size(); ++j) {
    if (mesh.shape[j] < 1) {
      raise(ErrorKind::ValueError, "layout " + shown + ": " + mesh.names[j] + " = " + std::to_string(mesh.shape[j]) +
                                       " (sizes must be >= 1)");
    }
  }
  std::int64_t ranks = 1;
  for (const std::int64_t s : mesh.shape) {
    if (__builtin_mul_overflow(ranks, s, &ranks) || ranks > design.world) {
      raise(ErrorKind::ValueError, "layout " + shown + " holds more ranks than the design's world of " +
                                       std::to_string(design.world));
    }
  }
  std::vector<std::size_t> position(order.size());
  for (std::size_t j = 0; j < order.size(); ++j) position[order[j]] = j;
  const auto moved = [&](const State& s) {
    std::vector<Placement> placements;
    placements.reserve(order.size());
    for (const std::size_t o : order) placements.push_back(s.placement(o));
    std::vector<ShardOrderEntry> shard_order = s.shard_order();
    for (ShardOrderEntry& e : shard_order) {
      for (std::size_t& a : e.axes) a = position[a];
    }
    return State(std::move(placements), std::move(shard_order));
  };
  Design out = design;
  // Sizes in the design's order, then arranged in the new order (which also re-lists the flattened axes).
  std::vector<std::int64_t> sizes(order.size());
  for (std::size_t j = 0; j < order.size(); ++j) sizes[order[j]] = mesh.shape[j];
  out.mesh = arranged(old, sizes, order);
  for (DesignTensor& t : out.tensors) {
    t.src = moved(t.src);
    t.dst = moved(t.dst);
  }
  return out;
}

AdvisorResult advise(const Design& design, const CostModelFactory& models, const AdvisorOptions& options) {
  if (!design.workload) {
    raise(ErrorKind::ValueError, "design \"" + design.name + "\" has no workload: nothing to rank its layouts by");
  }
  validate_workload(*design.workload, design);
  check_constraints(options.constraints, design);
  if (!models) raise(ErrorKind::ValueError, "advise: no cost model factory");

  AdvisorResult result;
  const std::vector<MeshSpec> all = advisor_candidates(design, options.search, options.max_candidates);
  result.candidates = all.size();
  std::vector<MeshSpec> kept;
  for (const MeshSpec& m : all) {
    if (satisfies(m, options.constraints, design)) kept.push_back(m);
  }
  result.rejected = all.size() - kept.size();
  if (kept.empty()) {
    raise(ErrorKind::ValueError, "no candidate layout satisfies the constraints (" +
                                     constraints_text(options.constraints) + "): all " +
                                     std::to_string(all.size()) + " of search \"" +
                                     std::string(to_string(options.search)) + "\" were rejected");
  }
  // The models first, on this thread: the factory need not be thread-safe.
  std::vector<std::shared_ptr<const CostModel>> priced_by;
  std::vector<bool> by_comm;
  priced_by.reserve(kept.size());
  for (const MeshSpec& m : kept) {
    priced_by.push_back(models(m.shape, design.devices_per_host));
    if (!priced_by.back()) {
      raise(ErrorKind::ValueError, "the cost model factory returned no model for " + layout_text(m));
    }
    by_comm.push_back(dynamic_cast<const CommCostModel*>(priced_by.back().get()) != nullptr);
  }

  std::vector<CandidateCost> costs(kept.size());
  SharedPlans shared;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> lookups{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto work = [&] {
    std::size_t mine = 0;
    for (std::size_t i = next++; i < kept.size(); i = next++) {
      if (options.cancel != nullptr && options.cancel->load()) {
        next = kept.size();
        break;
      }
      try {
        costs[i] = price(design, kept[i], *priced_by[i], options.reuse_plans ? &shared : nullptr, mine);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = kept.size();
      }
    }
    lookups += mine;
  };
  std::size_t threads = options.threads != 0 ? options.threads : std::max(1U, std::thread::hardware_concurrency());
  threads = std::min(threads, kept.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  if (options.cancel != nullptr && options.cancel->load()) raise(ErrorKind::RuntimeError, "advise: cancelled");
  result.unpriced = static_cast<std::size_t>(
      std::count_if(costs.begin(), costs.end(), [](const CandidateCost& c) { return !c.unpriced.empty(); }));
  result.plans_computed = options.reuse_plans ? shared.size() : lookups.load();
  result.plans_reused = lookups.load() - result.plans_computed;

  std::vector<std::size_t> rank(costs.size());
  std::iota(rank.begin(), rank.end(), std::size_t{0});
  std::stable_sort(rank.begin(), rank.end(),
                   [&costs](std::size_t a, std::size_t b) { return costs[a].cost < costs[b].cost; });
  // The candidates tied with the best (within 1e-9 relative, so a last-bit difference of summation is a tie) lead,
  // in enumeration order: the design's own layout first when it is among them.
  const double best = costs[rank.front()].cost;
  result.tied_with_best = static_cast<std::size_t>(
      std::count_if(costs.begin(), costs.end(), [best](const CandidateCost& c) { return ties(c.cost, best); }));
  std::sort(rank.begin(), rank.begin() + static_cast<std::ptrdiff_t>(result.tied_with_best));
  result.ranked.reserve(costs.size());
  for (const std::size_t i : rank) result.ranked.push_back(std::move(costs[i]));
  const CandidateCost& winner = result.ranked.front();
  if (!std::isfinite(winner.cost)) {
    result.reason = "no candidate can be priced: " + layout_text(winner.mesh) + " fails on " + winner.unpriced;
  } else {
    // The winner's strengths, then the layouts tied with it, then what the next one loses on.
    result.reason = winner_text(winner);
    const std::size_t others = result.tied_with_best - 1;
    if (others == 1) result.reason += "; " + layout_text(result.ranked[1].mesh) + " costs the same";
    if (others > 1) result.reason += "; " + std::to_string(others) + " other layouts cost the same";
    if (result.tied_with_best < result.ranked.size()) {
      const CandidateCost& following = result.ranked[result.tied_with_best];
      const std::string layout = layout_text(following.mesh);
      result.reason += "; " + loser_text(winner, following, others == 0 ? layout : "the next, " + layout + ",");
    }
  }
  if (options.top != 0 && result.ranked.size() > options.top) result.ranked.resize(options.top);
  std::vector<std::string> misses;
  for (std::size_t k = 0; k < result.ranked.size(); ++k) {
    if (!by_comm[rank[k]]) continue;
    for (std::string& miss : comm_rule_misses(result.ranked[k], design.devices_per_host)) {
      misses.push_back(std::move(miss));
    }
  }
  if (!misses.empty()) {
    const std::size_t more = misses.size() - 1;
    result.host_rule_note = "the comm model prices " + misses.front() +
                            (more > 0 ? "; " + std::to_string(more) + " more axis" + (more == 1 ? "" : "es") +
                                            " of the layouts shown too"
                                      : std::string()) +
                            "; a calibrated model prices groups where they fall";
  }
  return result;
}

}  // namespace meshloom
