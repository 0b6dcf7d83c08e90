// Cost models for redistribution steps. One interface, injected into the planners:
//
//   fixed        PyTorch's seed weights per collective (all_reduce 4, all_to_all 1, all_gather 2,
//                reduce_scatter 2, chunk 0), configurable.
//   comm         PyTorch's newest size-aware model (one_step_redistribute_cost): ring latency and bandwidth
//                per axis, with the inter-host factors for axes that cross hosts. Microseconds.
//   calibrated   measured curves, fitted by `meshloom-launch calibrate` (the calibration file of the launcher's
//                contract). Microseconds. A calibration keys its curves by what sets a collective's cost on a
//                cluster: the collective and the group's shape (ranks n, hosts spanned, ranks per host), under one
//                backend and one timing protocol; a step on any mesh axis is priced by the shape of that axis'
//                groups on the calibrated job's hosts, so one calibration prices every layout of its machine.
//                Files without curves (written before them) are priced per (axis name, collective) by alpha-beta.
//
// A model prices one edge of the planner's graph: one collective on one axis, seen from the state before it, and
// (send_cost) one point-to-point transfer between neighbouring coordinates of an axis, as a pipeline stage sends its
// activations to the next.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "meshloom/comm/transport.hpp"
#include "meshloom/plan/plan.hpp"

namespace meshloom {

// What a cost model may look at for one step.
struct StepCostInput {
  Collective collective = Collective::Chunk;
  std::size_t axis = 0;
  const std::vector<std::int64_t>* mesh_shape = nullptr;  // axis sizes
  std::int64_t itemsize = 4;
  std::int64_t global_numel = 0;    // elements of the whole tensor
  std::int64_t source_shards = 1;   // product of the sizes of the axes that shard the tensor before the step
  std::int64_t local_bytes = 0;     // bytes each rank holds before the step (real, possibly uneven, shapes)
};

class CostModel {
public:
  virtual ~CostModel() = default;
  // The cost of one step; +infinity when the model cannot perform it.
  [[nodiscard]] virtual double step_cost(const StepCostInput& step) const = 0;
  // The cost of one send of `bytes` from a rank to its neighbour on mesh axis `axis` (coordinate k to k+1, every
  // pair at once: the slowest pair's time); 0 on an axis of size 1 (no neighbour, nothing leaves the rank). The
  // default is +infinity: a model that cannot price a send. Example: CommCostModel({2, 4}, 4).send_cost({2, 4}, 0,
  // 1 << 20) = 6.6 + 2.7 + (1/1024 GiB) / 19.294 GB/s * 1e6 = 59.9 us.
  [[nodiscard]] virtual double send_cost(const std::vector<std::int64_t>& mesh_shape, std::size_t axis,
                                         std::int64_t bytes) const;
  // The cost of a merged step: one collective on the flattened group of `axes` (ascending, two or more), `step`
  // describing it from the state before it (step.axis is axes.front(), local_bytes what each rank holds before).
  // nullopt (the default): the model prices it as the sum of the edges it merges, as the planner's search and
  // PyTorch's planner do. A model that knows the flattened group's own cost (the calibrated one) returns it.
  [[nodiscard]] virtual std::optional<double> flattened_step_cost(const StepCostInput& step,
                                                                  const std::vector<std::size_t>& axes) const;
  // Whether flattened_step_cost prices any merged step (then a plan's cost as it runs can order plans differently
  // from the search's sum of edges, and the graph planner compares its cheapest paths as they run). False here.
  [[nodiscard]] virtual bool prices_flattened_groups() const noexcept { return false; }
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;

protected:
  CostModel() = default;
  CostModel(const CostModel&) = default;
  CostModel& operator=(const CostModel&) = default;
};

// ---- fixed ------------------------------------------------------------------------------------------------

struct FixedWeights {
  double all_reduce = 4;
  double all_to_all = 1;
  double all_gather = 2;
  double reduce_scatter = 2;
  double chunk = 0;  // R -> S and R -> P
  double send = 1;   // one point-to-point send (send_cost), priced like the cheapest collective
  friend bool operator==(const FixedWeights&, const FixedWeights&) = default;
};

class FixedCostModel final : public CostModel {
public:
  explicit FixedCostModel(FixedWeights weights = {});
  [[nodiscard]] double step_cost(const StepCostInput& step) const override;
  // weights().send whatever the bytes, on an axis of size > 1.
  [[nodiscard]] double send_cost(const std::vector<std::int64_t>& mesh_shape, std::size_t axis,
                                 std::int64_t bytes) const override;
  [[nodiscard]] std::string_view name() const noexcept override { return "fixed"; }
  [[nodiscard]] const FixedWeights& weights() const noexcept { return weights_; }

private:
  FixedWeights weights_;
};

// ---- comm -------------------------------------------------------------------------------------------------

// PyTorch's MeshTopoInfo for a mesh: per axis, bandwidth (GB/s) and latency per hop (us). Walking the axes from
// the last to the first with a running product of sizes, once the product exceeds devices_per_host that axis
// and every outer one crosses hosts: bandwidth x 0.22 and 2.7 us per hop instead of 87.7 GB/s and 0.6 us.
struct MeshTopology {
  std::vector<double> bandwidth_gbps;
  std::vector<double> latency_us;
};
[[nodiscard]] MeshTopology mesh_topology(const std::vector<std::int64_t>& mesh_shape, std::int64_t devices_per_host);

class CommCostModel final : public CostModel {
public:
  // The model needs the mesh to know which axes cross hosts.
  CommCostModel(const std::vector<std::int64_t>& mesh_shape, std::int64_t devices_per_host);
  [[nodiscard]] double step_cost(const StepCostInput& step) const override;
  // One hop of the axis as PyTorch's ring formulas price a hop: 6.6 us base + the axis' latency per hop + the bytes
  // (in GiB) at its bandwidth. The topology is the one the model was built for (mesh_shape must have its axes).
  [[nodiscard]] double send_cost(const std::vector<std::int64_t>& mesh_shape, std::size_t axis,
                                 std::int64_t bytes) const override;
  [[nodiscard]] std::string_view name() const noexcept override { return "comm"; }
  [[nodiscard]] const MeshTopology& topology() const noexcept { return topology_; }

private:
  MeshTopology topology_;
};

// ---- calibrated -------------------------------------------------------------------------------------------

// One fitted (axis, collective): time_us(bytes) = alpha_us + factor(n) * bytes / (busbw_gbps * 1e3).
struct CollectiveFit {
  double alpha_us = 0;
  double busbw_gbps = 0;
  double r2 = 0;
  std::int64_t samples = 0;
  friend bool operator==(const CollectiveFit&, const CollectiveFit&) = default;
};

// What sets a collective's cost on a cluster besides its bytes (autoparallel keys its NCCL tables the same way):
// the ranks of the group, the hosts it spans, and the most ranks it has on one host.
//   groups [[0,1,2,3],[4,5,6,7]] on hosts a,a,a,a,b,b,b,b   -> {n 4, hosts 1, ranks_per_host 4}
//   groups [[0,4],[1,5],[2,6],[3,7]] on the same hosts       -> {n 2, hosts 2, ranks_per_host 1}
struct GroupShape {
  std::int64_t n = 1;
  std::int64_t hosts = 1;
  std::int64_t ranks_per_host = 1;
  friend auto operator<=>(const GroupShape&, const GroupShape&) = default;
};
// "4 ranks on 1 host (4 per host)".
[[nodiscard]] std::string to_string(const GroupShape& shape);

// The distinct shapes of the groups of mesh axis `axis` when the mesh's ranks are 0..N-1 in row-major order
// (init_device_mesh) and world rank r sits on host rank_hosts[r]; ascending. ValueError for an axis out of range, or
// a mesh of more ranks than rank_hosts places (unless `repeat_hosts`: ranks past the end sit as the first ones do,
// on hosts of their own: host(r) = rank_hosts[r mod W] + (r div W) * hosts(rank_hosts)).
[[nodiscard]] std::vector<GroupShape> axis_group_shapes(const std::vector<std::int64_t>& mesh_shape, std::size_t axis,
                                                        const std::vector<std::int64_t>& rank_hosts,
                                                        bool repeat_hosts = false);
// The same for the groups of a flattened axis: the ranks whose coordinates differ only on `axes` (ascending, at
// least one) form one group of prod(mesh_shape[a] for a in axes) ranks. group_shapes(m, {a}, ...) is
// axis_group_shapes(m, a, ...). Example: on mesh (2, 2, 2) with 4 ranks per host (rank_hosts 0,0,0,0,1,1,1,1), axes
// {0, 2} give groups {0,1,4,5} and {2,3,6,7}: one shape, 4 ranks on 2 hosts (2 per host); axes {1, 2} give 4 ranks
// on 1 host.
[[nodiscard]] std::vector<GroupShape> group_shapes(const std::vector<std::int64_t>& mesh_shape,
                                                   const std::vector<std::size_t>& axes,
                                                   const std::vector<std::int64_t>& rank_hosts,
                                                   bool repeat_hosts = false);

// One measured point of a curve: nccl-tests' size of the run (bytes) and the time of one collective (us: the p50
// single-shot, the mean pipelined, as the run reported it).
struct CurvePoint {
  double bytes = 0;
  double time_us = 0;
  friend bool operator==(const CurvePoint&, const CurvePoint&) = default;
};

// How a curve predicts between and beyond its points.
//   alpha_beta   alpha + factor(n) * bytes / busbw everywhere (its fit)
//   piecewise    between two measured sizes: the straight line through them in log(bytes), log(time) (a power law
//                per segment, which follows the latency ramp of small messages); below the smallest size: the
//                smallest size's time (no collective is faster than its latency floor); above the largest: the
//                largest size's time plus the extra bytes at the largest point's algbw, or at the last segment's
//                bandwidth where that is slower (never faster than the largest size ran: a segment that rises by
//                noise alone would price them at an absurd bandwidth); one point: its time at and below it, its
//                algbw above.
enum class CurveModel : std::uint8_t { AlphaBeta, Piecewise };
[[nodiscard]] std::string_view to_string(CurveModel model) noexcept;

// Fit quality on points the fit did not see: relative errors |predicted - measured| / measured.
struct HoldoutError {
  double median = 0;
  double p90 = 0;  // nearest rank: the ceil(0.9 k)-th smallest of k errors
  std::int64_t points = 0;
  friend bool operator==(const HoldoutError&, const HoldoutError&) = default;
};

// One point of a curve's as-run correction (meshloom-launch refine): at one of the curve's sizes `bytes`, how plans
// run for real (the step records of meshloom-launch run and validate) measured its collectives against the curve's
// benchmark time, `factor` = measured / benchmark (refine: the mean over the records files of each file's median),
// over `steps` collectives. A benchmark times a collective back to back on buffers it keeps; a plan's step meets it
// after packing fresh ones, and the two differ by size (on the 2-core VM of docs/benchmarks.md 1.4-1.7x the curves
// at 512 KiB-1 MiB and 0.7-0.9x at 32-64 MiB, run after run).
struct AsRunPoint {
  double bytes = 0;
  double factor = 1;
  std::int64_t steps = 0;
  friend bool operator==(const AsRunPoint&, const AsRunPoint&) = default;
};

// The as-run factor at `bytes`: 1 without points; at a point its factor; between two points the straight line
// through them in log(bytes), log(factor) (the geometric mean halfway in log size); beyond the ends the nearest
// end's factor. Example: points [[1024, 1.2, 5], [1048576, 1.5, 4]] give 1.2 at 512 bytes, sqrt(1.2 x 1.5) = 1.342
// at 32 KiB, 1.5 at 64 MiB.
[[nodiscard]] double as_run_factor(const std::vector<AsRunPoint>& points, double bytes) noexcept;

// One keyed curve of a calibration.
struct GroupCurve {
  std::string collective;  // all_reduce, all_gather, reduce_scatter, all_to_all, broadcast
  GroupShape shape;
  CurveModel model = CurveModel::Piecewise;
  // Alpha-beta over every point: alpha_beta's curve, reported beside piecewise ones; absent when the points admit
  // none (a time that does not grow with the size), when the curve must be piecewise.
  std::optional<CollectiveFit> fit;
  std::vector<CurvePoint> points;      // strictly ascending bytes > 0, times > 0
  std::optional<HoldoutError> holdout; // the chosen model's held-out error; absent with fewer than 3 points (or no fit)
  // The as-run correction (strictly ascending bytes > 0, factors > 0, steps >= 1); empty: none (calibrate writes
  // none, meshloom-launch refine adds it). Every price of the curve is its time times as_run_factor.
  std::vector<AsRunPoint> as_run;
  friend bool operator==(const GroupCurve&, const GroupCurve&) = default;
};

// How one axis (or flattened axes) of the calibrated mesh ran against the curve of its group shape, from the
// calibration's own sweep: at each size the curve has, `factor` = the axis' time / the curve's price there
// (benchmark_time_us: its point, the median over every axis of that shape, or its alpha-beta fit), over `steps`
// timed iterations, so that on the calibrated mesh a step is priced at its own axis' time. Two axes of one shape share a curve, but the
// ranks of one axis may sit closer than those of the other (the same core, socket or switch: what no host count
// says), and on the calibrated mesh itself a step is priced by its own axis. calibrate writes corrections only for
// shapes that two or more axes share, and only when every rank was bound to CPUs (Calibration::rank_cpus): unbound,
// the OS places ranks anew in every job and which axis is faster changes with it. Example, on 4 ranks of a 2-core
// VM bound by core (mpirun --bind-to core:overload-allowed --map-by core): on (2, 2) axis 0's groups share a core
// and axis 1's span two, and in one calibration axis 0 ran all_gather at 0.73-0.99x the shared curve over its 17
// sizes, axis 1 at 1.01-1.27x.
struct AxisCorrection {
  std::vector<std::size_t> axes;  // ascending axes of the calibration's mesh: one, or the axes a flattened group spans
  std::string collective;
  std::vector<AsRunPoint> factors;  // strictly ascending bytes > 0, factors > 0, steps >= 1; at least one
  // The axis' own as-run correction (meshloom-launch refine, from records whose ranks sat on rank_cpus): what its
  // steps measured in plans over its price, curve times `factors`. Empty: none, and the axis' steps take the curve's
  // as_run. Non-empty: they take this one instead, so on the calibrated mesh a step costs
  //   benchmark_time_us(curve) * as_run_factor(factors) * as_run_factor(as_run),
  // at every size, as_run_factor's rule included: beyond the axis' own points their nearest one's factor (refine
  // fits them from the same steps as the curve's, so they cover its sizes but those of too few steps on the axis).
  // The two axes of one shape run the plans' collectives unlike each other as well as unlike the sweep (on the VM
  // above, dp's 64 MiB all_gather steps measured 0.5-0.64x its price, tp's 0.71-0.95x), which one factor per curve
  // cannot follow.
  std::vector<AsRunPoint> as_run;
  friend bool operator==(const AxisCorrection&, const AxisCorrection&) = default;
};

// The piecewise curve through `points` (ascending bytes, times > 0) at `bytes` (see CurveModel). 0 for no point.
[[nodiscard]] double piecewise_time_us(const std::vector<CurvePoint>& points, double bytes) noexcept;
// The curve's time at `bytes` under its model, times its as-run factor there.
[[nodiscard]] double curve_time_us(const GroupCurve& curve, double bytes);
// The same without the as-run correction: what the benchmark measured (interpolated), as refine compares with.
[[nodiscard]] double benchmark_time_us(const GroupCurve& curve, double bytes);

// The calibration file of the launcher's contract:
// {"format": "meshloom-calibration", "version": 1, "backend": "mpi", "timing": "single_shot", "world": 8,
//  "mesh": {"shape": [2, 4], "names": ["dp", "tp"]},
//  "axes": {"tp": {"all_reduce": {"alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 14}, ...}, ...},
//  "rank_hosts": [0, 0, 0, 0, 1, 1, 1, 1],
//  "groups": [{"collective": "all_reduce", "n": 4, "hosts": 1, "ranks_per_host": 4, "model": "piecewise",
//              "alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 14,
//              "holdout": {"median": 0.04, "p90": 0.11, "points": 7},
//              "points": [[4096, 20.5], [16384, 24.1], ...],
//              "as_run": [[4096, 1.21, 12], [1048576, 1.48, 9], ...]}, ...]}
// "timing" (optional: files written before it existed have none) is the launcher's timing protocol the fits come
// from: "pipelined" (nccl-tests' back-to-back figure) or "single_shot" (one collective after a barrier, as a
// training step and `meshloom-launch run` meet it). "axes" are the per-axis alpha-beta views of the run's mesh (the
// contract's version-1 content). "rank_hosts" (the host index of every world rank, from the job itself) and
// "groups" (the keyed curves) are optional: files written before them have neither, and are priced by "axes".
// A curve's "as_run" ([bytes, factor, steps] per point, AsRunPoint) is optional too: only refine writes it.
// "rank_cpus" (every world rank's CPU binding in the calibrated job, as Linux lists CPUs: "0", "0-3", "0,2") and
// "axis_corrections" ([{"axes": [0], "collective": "all_gather", "factors": [[bytes, factor, steps], ...]}, ...],
// AxisCorrection) are optional: calibrate writes the corrections only when every rank was bound.
// "transport" ({"OMPI_MCA_btl_vader_single_copy_mechanism": "none", ...}, comm/transport.hpp: the settings of the
// environment, and the ranks' scheduling policy, that shape a collective's cost; {} when none was set) is optional:
// files written before it have none, and are not checked against the settings of the measurements they are set
// against.
struct Calibration {
  std::string backend;
  std::string timing;  // "pipelined", "single_shot", or empty (not recorded)
  std::int64_t world = 0;
  std::vector<std::int64_t> mesh_shape;
  std::vector<std::string> mesh_names;
  // axis name (or flattened name) -> collective name -> fit
  std::map<std::string, std::map<std::string, CollectiveFit>> axes;
  std::vector<std::int64_t> rank_hosts;  // world entries when `groups` is not empty
  std::vector<GroupCurve> groups;        // at most one per (collective, shape)
  std::vector<std::string> rank_cpus;    // world entries (parse_cpu_list's form), or empty (not recorded)
  // At most one per (axes, collective), each of a curve the calibration has (the collective on the shape of its
  // axes' groups); needs `rank_cpus`.
  std::vector<AxisCorrection> axis_corrections;
  std::optional<comm::TransportSettings> transport;  // nullopt: not recorded
  friend bool operator==(const Calibration&, const Calibration&) = default;
};

// The CPUs of a list as Linux writes one (/sys/devices/system/cpu/online, sched_getaffinity's set printed by
// taskset): comma-separated CPU numbers and ranges "a-b" with a < b, ascending and not overlapping. Example:
// "0-2,4,6-7" -> {0, 1, 2, 4, 6, 7}. nullopt for anything else ("", "3-1", "0,,1", "1,0", "0-1,1").
[[nodiscard]] std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

// The correction of (axes, collective) in `calibration`; nullptr when it has none.
[[nodiscard]] const AxisCorrection* find_axis_correction(const Calibration& calibration,
                                                         const std::vector<std::size_t>& axes,
                                                         std::string_view collective) noexcept;

// The correction a step of `collective` on `axes` of a mesh of `mesh_shape` takes: the calibration's correction for
// (those axes, collective) when the mesh lays its ranks out as the calibrated mesh does, i.e. has its shape once the
// axes of size 1 are left out of both (they change no group: (dp 2, cp 1, tp 2) and (cp 1, dp 2, tp 2) form the same
// groups), `axes` matched to the calibrated mesh's by their place among the axes of size > 1; nullptr for another
// layout, or where the calibration has no such correction. Example: calibrated on (2, 1, 2) with a correction of
// axis 2, a step on axis 2 of (1, 2, 2) takes it (both the groups {0, 1}, {2, 3}); one on axis 1 of (2, 2, 1) too.
// Whether meshes of shapes `a` and `b` (ranks 0..N-1, row-major) form the same groups: the same sizes once the axes
// of size 1 are left out of both. (2, 1, 2) and (1, 2, 2) do; (2, 2) and (4) do not.
[[nodiscard]] bool same_layout(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) noexcept;

[[nodiscard]] const AxisCorrection* correction_on_mesh(const Calibration& calibration,
                                                       const std::vector<std::int64_t>& mesh_shape,
                                                       const std::vector<std::size_t>& axes,
                                                       std::string_view collective) noexcept;

// The factor a step of `collective` on `axes` of a mesh of `mesh_shape` is priced with at nccl-tests' size `bytes`:
// as_run_factor of correction_on_mesh (the mesh forms the calibrated job's groups), 1 otherwise.
[[nodiscard]] double axis_correction_factor(const Calibration& calibration, const std::vector<std::int64_t>& mesh_shape,
                                            const std::vector<std::size_t>& axes, std::string_view collective,
                                            double bytes) noexcept;

// The curve of (collective, shape) in `calibration`; nullptr when it has none.
[[nodiscard]] const GroupCurve* find_curve(const Calibration& calibration, std::string_view collective,
                                           const GroupShape& shape) noexcept;

// Strict parsing: ValueError naming the field and value (unknown fields, wrong types, negative or zero
// bandwidth, an unknown collective, a mesh that is not the calibrated one's shape, curve points out of order, two
// curves of one key, "groups" without "rank_hosts" for every rank of the world, a curve of more hosts or more ranks per
// host than "rank_hosts" has, a holdout of more than half of its curve's points).
[[nodiscard]] Calibration parse_calibration(std::string_view json_text);
[[nodiscard]] Calibration load_calibration(const std::filesystem::path& path);
[[nodiscard]] std::string to_json_text(const Calibration& calibration);

// Why `calibration` cannot price a mesh of `mesh_shape` at all, or nullopt when it can. Per-axis fits (no curves)
// price only the mesh they were measured on; curves by group shape can price any mesh of at most the calibrated
// job's ranks (any mesh when `extrapolate`), each step by the curve of its group's shape: a shape never measured
// still costs +infinity there (CalibratedCostModel::gaps lists them). Examples: fits from (2) for (2, 4): "the calibration was measured on a (2) mesh and
// holds per-axis fits only, which price that mesh alone, not (2, 4)"; curves from 2 ranks for (2, 4): "the
// calibration's job placed 2 ranks and this mesh holds 8: calibrate on at least 8 ranks, or extrapolate".
[[nodiscard]] std::optional<std::string> calibration_mismatch(const Calibration& calibration,
                                                              const std::vector<std::int64_t>& mesh_shape,
                                                              bool extrapolate = false);

// nccl-tests' bus factor for a collective on n ranks: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all
// (n-1)/n; broadcast 1.
[[nodiscard]] double bus_factor(std::string_view collective, std::int64_t n);

struct CalibratedOptions {
  // Price group shapes the calibration never measured from the nearest measured one (same collective; fewest
  // differences in hosts, then in ranks per host, then the nearest n in log2), its time scaled by the ratio of the
  // bus factors, and meshes larger than the calibrated world by repeating its host placement; without curves, a
  // per-axis fit at another size of its axis than the calibrated mesh's, scaled the same way. A guess: off by
  // default, when such a step costs +infinity.
  bool extrapolate = false;
};

class CalibratedCostModel final : public CostModel {
public:
  // With curves ("groups"), a step on axis a of a mesh is priced by the shapes of a's groups (every group runs at
  // once; the step takes as long as its slowest shape): the curve of (collective, shape) at the step's nccl-tests
  // size, times axis_correction_factor (on the calibrated mesh itself; where the axis' correction has its own as_run,
  // that one instead of the curve's: AxisCorrection::as_run); mesh names are not used. Without curves, by the
  // alpha-beta fit of (mesh_names[a], collective). A step the
  // calibration cannot price costs +infinity (the planner then avoids it, or fails clearly when it cannot);
  // gaps() says which.
  CalibratedCostModel(Calibration calibration, const std::vector<std::string>& mesh_names,
                      CalibratedOptions options = {});
  [[nodiscard]] double step_cost(const StepCostInput& step) const override;
  // With curves: every pair of neighbouring coordinates (k, k+1) of the axis is a 2-rank group, {2, 1 host, 2 per
  // host} or {2, 2 hosts, 1 per host} on the calibrated job's hosts, priced by the "broadcast" curve of its shape
  // at `bytes` (a broadcast on 2 ranks is one send); the slowest pair's shape sets the cost; on the calibrated mesh
  // an axis of 2 ranks (its own pair) takes its broadcast correction too, as step_cost does. Shapes never measured
  // are extrapolated as other steps are (options().extrapolate), else +infinity. Without curves: the alpha-beta
  // broadcast fit of mesh_names[axis] (alpha + bytes / busbw), +infinity when there is none.
  [[nodiscard]] double send_cost(const std::vector<std::int64_t>& mesh_shape, std::size_t axis,
                                 std::int64_t bytes) const override;
  // With curves: the flattened group's own shapes (group_shapes over `axes`), each priced by its curve at the merged
  // collective's nccl-tests size (all_gather: local_bytes x the group's size), the slowest shape, times
  // axis_correction_factor of `axes` (on the calibrated mesh itself, its as_run as in step_cost); +infinity for a
  // shape the calibration cannot price. Without curves (per-axis fits only): nullopt, the sum of the edges.
  // Example: on a (2, 2) mesh of one host, S(0)S(0) -> RR merged on the flattened (0, 1) is one all_gather of 4 ranks
  // on 1 host, priced by that curve rather than by two all_gathers of 2 ranks.
  [[nodiscard]] std::optional<double> flattened_step_cost(const StepCostInput& step,
                                                          const std::vector<std::size_t>& axes) const override;
  // With curves.
  [[nodiscard]] bool prices_flattened_groups() const noexcept override { return !calibration_.groups.empty(); }
  [[nodiscard]] std::string_view name() const noexcept override { return "calibrated"; }
  [[nodiscard]] const Calibration& calibration() const noexcept { return calibration_; }
  [[nodiscard]] const CalibratedOptions& options() const noexcept { return options_; }
  // The time of `collective` on a group of `shape` at nccl-tests' size `bytes`; nullopt when the calibration has no
  // curve for it (and options().extrapolate is off) or holds no curves at all.
  [[nodiscard]] std::optional<double> predict_us(std::string_view collective, const GroupShape& shape,
                                                 double bytes) const;
  // The same without the curve's as-run correction: what the benchmark measured there (interpolated), as the app's
  // fit view draws it over a sweep's points.
  [[nodiscard]] std::optional<double> benchmark_us(std::string_view collective, const GroupShape& shape,
                                                   double bytes) const;
  // What the calibration cannot price on a mesh: "all_to_all on axis 0: 4 ranks on 1 host (4 per host) never
  // measured" ("all_gather on axis 'dp': no fit" for fits keyed by axis name), one per (axis, collective, shape); then,
  // for curves by group shape, the collectives that merge (all_reduce, all_gather, reduce_scatter) on each group of
  // `flattened` (axes ascending, two of size > 1) that no curve prices: "all_gather on axes 0,1: 4 ranks on 1 host
  // (4 per host) never measured", its axes the group's, as a merged step's are. Each with its axes and
  // collective (neither for the whole mesh: "the mesh holds 8 ranks but the calibrated job placed 4"); empty when
  // every communicating collective of every axis of size > 1 (and group) has a price.
  struct Gap {
    std::vector<std::size_t> axes;
    std::string collective;
    std::string text;
  };
  [[nodiscard]] std::vector<Gap> gap_list(const std::vector<std::int64_t>& mesh_shape,
                                          const std::vector<std::vector<std::size_t>>& flattened = {}) const;
  // gap_list's texts, for the axes alone.
  [[nodiscard]] std::vector<std::string> gaps(const std::vector<std::int64_t>& mesh_shape) const;

private:
  // predict_us (with the curve's as-run factor) or benchmark_us (without): one lookup of the pricing curve.
  [[nodiscard]] std::optional<double> priced_us(std::string_view collective, const GroupShape& shape, double bytes,
                                                bool as_run) const;
  // The curve predict_us prices (collective, shape) by: the exact one, or when extrapolating the nearest measured
  // shape's; nullptr when there is none.
  [[nodiscard]] const GroupCurve* pricing_curve(std::string_view collective, const GroupShape& shape) const;
  // Without curves: the alpha-beta fit of (mesh_names[axis], collective) at the axis' size, +infinity without a fit
  // or, unless extrapolating, on an axis whose size is not the one the calibrated mesh gave that name.
  [[nodiscard]] double axis_fit_cost(const StepCostInput& step, double size) const;
  // Whether the groups of a mesh of `mesh_shape` can be placed on the calibrated job's hosts: a mesh (every size >=
  // 1, no overflow) of at most kMaxEnumeratedRanks ranks, and at most the job's ranks unless extrapolating.
  [[nodiscard]] bool placeable(const std::vector<std::int64_t>& mesh_shape) const;
  // One group shape's curve for one collective, as predict_us uses it: time(bytes) * factor / curve_factor when
  // extrapolated from another shape (scaled), time(bytes) otherwise.
  struct ResolvedCurve {
    const GroupCurve* curve = nullptr;
    bool scaled = false;
    double factor = 1.0;
    double curve_factor = 1.0;
  };
  // How steps on one axis of one mesh are priced: the shapes of its groups (axis_group_shapes; empty when the mesh
  // cannot be placed: more ranks than the calibrated job without extrapolation, or more than kMaxEnumeratedRanks)
  // and, per communicating collective (indexed by Collective: all_gather, all_reduce, reduce_scatter, all_to_all),
  // every shape's curve; `priced` is false when some shape has none. Resolved once per mesh and axis (the planner
  // asks for every edge of every state).
  struct AxisPricing {
    std::vector<GroupShape> shapes;
    std::array<std::vector<ResolvedCurve>, 4> curves;
    std::array<bool, 4> priced{};
    std::array<const AxisCorrection*, 4> corrections{};  // on the calibrated mesh: the axis' correction, if any
  };
  [[nodiscard]] const AxisPricing& pricing_of(const std::vector<std::int64_t>& mesh_shape, std::size_t axis) const;
  [[nodiscard]] const std::vector<GroupShape>& shapes_of(const std::vector<std::int64_t>& mesh_shape,
                                                        std::size_t axis) const {
    return pricing_of(mesh_shape, axis).shapes;
  }
  // The same for the 2-rank groups of neighbouring coordinates of an axis (send_cost).
  [[nodiscard]] const std::vector<GroupShape>& pair_shapes_of(const std::vector<std::int64_t>& mesh_shape,
                                                             std::size_t axis) const;
  Calibration calibration_;
  std::vector<std::string> names_;
  CalibratedOptions options_;
  std::uint64_t id_;  // unique per model, for the per-thread memo of pricing_of
  mutable std::mutex shapes_mutex_;
  mutable std::map<std::pair<std::vector<std::int64_t>, std::size_t>, AxisPricing> shapes_;
  mutable std::map<std::pair<std::vector<std::int64_t>, std::size_t>, std::vector<GroupShape>> pair_shapes_;
};

// The most ranks a mesh may hold for the calibrated model to place its groups (2^24): beyond, a step costs +infinity.
inline constexpr std::int64_t kMaxEnumeratedRanks = std::int64_t{1} << 24;

}  // namespace meshloom
