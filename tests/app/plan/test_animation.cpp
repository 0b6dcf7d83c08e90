// The plan animation on the offscreen platform: for every tensor of every example design (and small requests built
// here), frame 0 and the last frame equal the engine's initial and expected distributions and every frame's blocks
// are read from the simulator's buffers; stepping forward, back and jumping give the same frames; play advances on
// the timer, pause stops it, speed sets its interval; captions name each step's collective and axis; uneven shards
// and Partial values show as such; the block overlay fills per cell what the frame holds and paints.
#include <QDir>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSignalSpy>
#include <QtTest>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "canvas/block_overlay_item.hpp"
#include "canvas/tensor_key.hpp"
#include "canvas/mesh_geometry.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/simulator.hpp"
#include "plan/plan_animation.hpp"

using namespace meshloom;
using namespace meshloom::app;

namespace {

// The animation's own default: every example, Llama 3 405B's 16,384 ranks included, fits once scaled.
constexpr std::int64_t kTestElements = PlanAnimation::kDefaultMaxElements;

PlanRequest request_for(const Design& d, const DesignTensor& t) {
  PlanRequest r;
  r.mesh_shape = d.mesh.shape;
  r.tensor_shape = t.shape;
  r.src = t.src;
  r.dst = t.dst;
  r.planner = PlannerKind::Graph;
  r.itemsize = itemsize(t.dtype);
  r.state_budget = 200'000;
  for (const auto& f : d.mesh.flattened) {
    std::vector<std::size_t> group;
    for (const auto& name : f.axes) {
      group.push_back(static_cast<std::size_t>(std::find(d.mesh.names.begin(), d.mesh.names.end(), name) -
                                               d.mesh.names.begin()));
    }
    if (group.size() > 1 && std::find(r.flattened.begin(), r.flattened.end(), group) == r.flattened.end()) {
      r.flattened.push_back(group);
    }
  }
  return r;
}

PlanRequest small(std::vector<std::int64_t> mesh, std::vector<std::int64_t> tensor, const char* src, const char* dst) {
  PlanRequest r;
  r.mesh_shape = std::move(mesh);
  r.tensor_shape = std::move(tensor);
  r.src = parse_state(src);
  r.dst = parse_state(dst);
  return r;
}

bool has_partial(const State& s) {
  return std::any_of(s.placements().begin(), s.placements().end(), [](const Placement& p) { return p.is_partial(); });
}

// The block (row-major over the grid's per-dim blocks) of a global flat index, found here from the boundaries.
std::int64_t block_of_flat(const BlockGrid& g, std::int64_t flat) {
  const auto& shape = g.tensor_shape;
  std::vector<std::int64_t> coord(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    coord[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::int64_t block = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const auto& b = g.boundaries[d];
    const auto i = std::upper_bound(b.begin(), b.end(), coord[d]) - b.begin() - 1;
    block = block * (static_cast<std::int64_t>(b.size()) - 1) + i;
  }
  return block;
}

// Checks one frame's blocks against a distribution whose buffers hold global values (no Partial): every value's
// block is held, and the held blocks hold exactly as many elements as the buffer has distinct values (shards are
// whole blocks). Returns what differs, or an empty string.
QString check_blocks(const BlockFrame& f, const BlockGrid& g, const Distribution& d) {
  if (f.ranks != d.ranks.size()) return QStringLiteral("ranks %1 != %2").arg(f.ranks).arg(d.ranks.size());
  for (std::size_t r = 0; r < f.ranks; ++r) {
    std::set<std::int64_t> values(d.ranks[r].data.begin(), d.ranks[r].data.end());
    for (auto v : values) {
      if (!f.holds(r, block_of_flat(g, v - 1))) return QStringLiteral("rank %1: value %2 in no held block").arg(r).arg(v);
    }
    std::int64_t held = 0;
    for (auto b : f.blocks_of(r, g.block_count)) held += g.block_elements(b);
    if (held != static_cast<std::int64_t>(values.size())) {
      return QStringLiteral("rank %1: held blocks have %2 elements, buffer %3").arg(r).arg(held).arg(values.size());
    }
  }
  return {};
}

// Everything checked for one animated plan; returns an empty string when all holds.
QString check_animation(PlanAnimation& anim, const std::vector<std::string>& names) {
  const PlanRequest& r = anim.request();
  const Plan& plan = anim.plan();
  const int last = anim.frame_count() - 1;
  if (last != static_cast<int>(plan.steps.size())) return QStringLiteral("%1 frames for %2 steps").arg(last + 1).arg(plan.steps.size());
  const auto init = initial_distribution(r.mesh_shape, r.tensor_shape, r.src, {.max_elements = kTestElements});
  if (anim.distribution(0) != init) return QStringLiteral("frame 0 is not the initial distribution");
  const Distribution end = anim.distribution(last);
  const auto verified = verify_distribution(end, r.tensor_shape, r.dst);
  if (!verified.ok) return QStringLiteral("last frame: ") + QString::fromStdString(verified.error);
  if (!has_partial(r.dst) && end != expected_distribution(r.mesh_shape, r.tensor_shape, r.dst, {.max_elements = kTestElements})) {
    return QStringLiteral("last frame is not the expected distribution");
  }
  // Blocks from buffers, frame by frame (Partial frames: the expected slice of the frame's state).
  Distribution dist = init;
  for (int k = 0; k <= last; ++k) {
    if (k > 0) apply_step(dist, plan.steps[static_cast<std::size_t>(k - 1)]);
    const State& s = anim.state(k);
    const Distribution& shown = has_partial(s) ? expected_distribution(r.mesh_shape, r.tensor_shape, s, {.max_elements = kTestElements}) : dist;
    if (auto why = check_blocks(anim.frame(k), anim.grid(), shown); !why.isEmpty()) return QStringLiteral("frame %1: ").arg(k) + why;
    for (std::size_t rank = 0; rank < anim.frame(k).ranks; ++rank) {
      if (anim.frame(k).is_partial(rank) != has_partial(s)) return QStringLiteral("frame %1: partial flag of rank %2").arg(k).arg(rank);
    }
    if (k > 0) {
      const PlanStep& step = plan.steps[static_cast<std::size_t>(k - 1)];
      const QString& c = anim.caption(k);
      if (!c.startsWith(QStringLiteral("Step %1 of %2: %3 on ").arg(k).arg(last).arg(QString::fromUtf8(to_string(step.collective).data())))) {
        return QStringLiteral("caption %1: %2").arg(k).arg(c);
      }
      for (auto a : step.axes) {
        if (a < names.size() && !c.contains(QString::fromStdString(names[a]))) return QStringLiteral("caption %1 lacks its axis: %2").arg(k).arg(c);
      }
    }
  }
  // Jumping to each frame, then stepping back from the end and forward from the start, shows the same frames.
  std::vector<BlockFrame> seen;
  for (int k = 0; k <= last; ++k) {
    anim.jump_to(k);
    if (anim.current() != k) return QStringLiteral("jump_to(%1) went to %2").arg(k).arg(anim.current());
    seen.push_back(anim.frame(anim.current()));
  }
  for (int k = last; k > 0; --k) {
    anim.step_back();
    if (anim.frame(anim.current()) != seen[static_cast<std::size_t>(k - 1)]) return QStringLiteral("step back to %1").arg(k - 1);
  }
  if (anim.current() != 0) return QStringLiteral("step back ended at %1").arg(anim.current());
  for (int k = 1; k <= last; ++k) {
    anim.step_forward();
    if (anim.current() != k || anim.frame(k) != seen[static_cast<std::size_t>(k)]) return QStringLiteral("step forward to %1").arg(k);
  }
  return {};
}

}  // namespace

class AnimationTest : public QObject {
  Q_OBJECT

private slots:
  void examples_match_the_simulator() {
    const FixedCostModel model;
    int animated = 0;
    int scaled = 0;
    int skipped = 0;
    const QDir dir(QStringLiteral(MESHLOOM_EXAMPLES_DIR));
    const auto files = dir.entryList({QStringLiteral("*.meshloom.json")}, QDir::Files, QDir::Name);
    QVERIFY(!files.isEmpty());
    for (const auto& file : files) {
      const Design d = load_design(dir.filePath(file).toStdString());
      for (const auto& t : d.tensors) {
        const PlanRequest r = request_for(d, t);
        Plan plan;
        try {
          plan = plan_redistribution(r, model);
        } catch (const std::exception&) {
          continue;  // an impossible request: nothing to animate (the panel shows why)
        }
        if (plan.steps.empty()) continue;
        PlanAnimation anim;
        anim.set_max_elements(kTestElements);
        if (!anim.set_plan(r, plan, d.mesh.names)) {
          ++skipped;
          QFAIL(qPrintable(file + QLatin1Char(' ') + QString::fromStdString(t.name) + QStringLiteral(": ") + anim.error()));
        }
        QCOMPARE(anim.original_shape(), t.shape);
        if (anim.scaled()) {
          ++scaled;
          QVERIFY(anim.caption(0).contains(QStringLiteral("scaled")));
        }
        const QString why = check_animation(anim, d.mesh.names);
        QVERIFY2(why.isEmpty(), qPrintable(file + QLatin1Char(' ') + QString::fromStdString(t.name) + QStringLiteral(": ") + why));
        ++animated;
      }
    }
    qInfo("animated %d example tensors (%d scaled down), %d refused", animated, scaled, skipped);
    QCOMPARE(skipped, 0);
    QVERIFY(animated >= 15);
  }

  void small_requests_match_the_simulator() {
    const FixedCostModel model;
    const std::vector<PlanRequest> requests{
        small({2, 2, 2}, {8, 8, 8}, "S(0)[0]S(0)[1]R", "RS(0)R"),
        small({2, 2, 2}, {8, 6}, "RS(0)[1]S(0)[0]", "RRS(0)"),
        small({2, 4}, {7, 5}, "P(avg)P(avg)", "RS(0)"),
        small({2, 2}, {6, 10}, "S(0)S(1)", "S(1)S(0)"),
        small({4}, {5}, "S(0)", "R"),
        small({4}, {4, 4}, "P(sum)", "R"),
        small({2, 2, 4, 2}, {8, 14}, "RP(avg)P(avg)S(1)", "RRS(0)S(1)"),
        small({3, 2}, {5, 3, 4}, "S(2)P(sum)", "RS(0)"),
    };
    for (const auto& r : requests) {
      const Plan plan = plan_redistribution(r, model);
      PlanAnimation anim;
      QVERIFY2(anim.set_plan(r, plan, {"a", "b", "c", "d"}), qPrintable(anim.error()));
      QVERIFY(!anim.scaled());
      const QString why = check_animation(anim, {"a", "b", "c", "d"});
      QVERIFY2(why.isEmpty(), qPrintable(QString::fromStdString(trace(plan)) + QStringLiteral(": ") + why));
    }
  }

  void playback_on_the_timer() {
    const PlanRequest r = small({2, 2, 2}, {8, 8, 8}, "S(0)[0]S(0)[1]R", "RS(0)R");
    const Plan plan = plan_redistribution(r, FixedCostModel());
    QVERIFY(plan.steps.size() >= 2);
    PlanAnimation anim;
    QVERIFY(anim.set_plan(r, plan));
    QCOMPARE(anim.speed(), PlanAnimation::kDefaultSpeed);
    QCOMPARE(anim.interval_ms(), 1000);
    anim.set_speed(4.0);
    QCOMPARE(anim.interval_ms(), 250);
    anim.set_speed(0.5);
    QCOMPARE(anim.interval_ms(), 2000);
    anim.set_speed(100.0);  // clamped
    QCOMPARE(anim.speed(), PlanAnimation::kMaxSpeed);
    QCOMPARE(anim.interval_ms(), 250);
    anim.set_speed(0.01);
    QCOMPARE(anim.speed(), PlanAnimation::kMinSpeed);
    QCOMPARE(anim.interval_ms(), 4000);
    anim.set_speed(4.0);

    QSignalSpy frames(&anim, &PlanAnimation::frame_changed);
    QSignalSpy playing(&anim, &PlanAnimation::playing_changed);
    anim.play();
    QVERIFY(anim.playing());
    QCOMPARE(anim.current(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(anim.current(), anim.frame_count() - 1, 5000);
    QVERIFY(!anim.playing());  // stops at the last frame
    QCOMPARE(frames.count(), anim.frame_count() - 1);
    for (int k = 0; k < frames.count(); ++k) QCOMPARE(frames.at(k).at(0).toInt(), k + 1);
    QCOMPARE(playing.count(), 2);

    // Play from the end starts again; pause stops it where it is.
    anim.play();
    QCOMPARE(anim.current(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(anim.current(), 1, 2000);
    anim.pause();
    QVERIFY(!anim.playing());
    const int at = anim.current();
    QTest::qWait(700);
    QCOMPARE(anim.current(), at);

    // Stepping pauses playback; jump clamps.
    anim.play();
    anim.step_forward();
    QVERIFY(!anim.playing());
    anim.jump_to(99);
    QCOMPARE(anim.current(), anim.frame_count() - 1);
    anim.step_forward();
    QCOMPARE(anim.current(), anim.frame_count() - 1);
    anim.jump_to(-5);
    QCOMPARE(anim.current(), 0);
    anim.step_back();
    QCOMPARE(anim.current(), 0);
  }

  void captions_in_words() {
    const PlanRequest r = small({2, 4}, {8, 8}, "RS(0)", "RR");
    const Plan plan = plan_redistribution(r, FixedCostModel());
    PlanAnimation anim;
    QVERIFY(anim.set_plan(r, plan, {"dp", "tp"}));
    QCOMPARE(anim.step_count(), 1);
    QCOMPARE(anim.caption(0), QStringLiteral("Before step 1 of 1: the tensor [8, 8] is laid out as RS(0); each rank holds 1/4 of it."));
    QCOMPARE(anim.caption(1), QStringLiteral("Step 1 of 1: all_gather on tp (groups of 4): each rank receives the 3 other "
                                             "shards of dim 0 from its tp group; all 8 ranks now hold dim 0 whole. Now RR."));
    // The step's groups: two tp groups, by dp coordinate.
    const BlockFrame& f = anim.frame(1);
    QCOMPARE(f.group_count, 2);
    for (std::size_t rank = 0; rank < 8; ++rank) QCOMPARE(f.group[rank], static_cast<std::int32_t>(rank / 4));
    QCOMPARE(anim.frame(0).group_count, 0);
  }

  void uneven_shards_show_empty() {
    const PlanRequest r = small({4}, {5}, "S(0)", "R");
    const Plan plan = plan_redistribution(r, FixedCostModel());
    PlanAnimation anim;
    QVERIFY(anim.set_plan(r, plan, {"tp"}));
    const BlockGrid& g = anim.grid();
    QCOMPARE(g.boundaries.at(0), (std::vector<std::int64_t>{0, 2, 4, 5}));
    QCOMPARE(g.block_count, 3);
    QCOMPARE(g.rows, 1);
    QCOMPARE(g.cols, 3);
    QCOMPARE(g.block_elements(2), 1);
    const BlockFrame& f0 = anim.frame(0);
    QCOMPARE(f0.blocks_of(0, 3), (std::vector<std::int64_t>{0}));
    QCOMPARE(f0.blocks_of(1, 3), (std::vector<std::int64_t>{1}));
    QCOMPARE(f0.blocks_of(2, 3), (std::vector<std::int64_t>{2}));
    QVERIFY(f0.blocks_of(3, 3).empty());
    QCOMPARE(f0.fraction[3], 0.0F);
    QVERIFY(anim.caption(0).contains(QStringLiteral("1 rank holds an empty shard")));
    const BlockFrame& f1 = anim.frame(anim.frame_count() - 1);
    for (std::size_t rank = 0; rank < 4; ++rank) QCOMPARE(f1.blocks_of(rank, 3), (std::vector<std::int64_t>{0, 1, 2}));

    BlockOverlayItem overlay(layout_mesh({4}));
    overlay.set_frame(anim.grid(), f0);
    QVERIFY(overlay.filled_blocks(3).empty());
    QCOMPARE(overlay.filled_blocks(2), (std::vector<std::int64_t>{2}));
    // The narrow last block is drawn narrower.
    QVERIFY(overlay.block_rect(0, 2).width() < overlay.block_rect(0, 1).width());
  }

  // The tensor key: for every block of every grid (1-D, 2-D, 3-D, uneven), its row lies in the row span whose dim-0
  // range holds the block's, and its columns inside the span of every dim across whose range holds the block's
  // (nested: a 3-D tensor's columns grouped by dim 1's blocks, the cells' grid drawing a stronger line between
  // groups). The key draws each range as Python's slice "first:end".
  void the_tensor_key_labels_every_block_by_its_ranges() {
    const std::vector<PlanRequest> requests{
        small({4}, {5}, "S(0)", "R"),
        small({2, 2}, {6, 10}, "S(0)S(1)", "S(1)S(0)"),
        small({2, 2, 2}, {8, 8, 8}, "S(0)[0]S(0)[1]R", "RS(0)R"),
        small({3, 2}, {5, 3, 4}, "S(2)P(sum)", "RS(0)"),
        small({2, 3}, {4, 6, 9}, "S(1)S(2)", "S(0)R"),
    };
    for (const auto& r : requests) {
      const Plan plan = plan_redistribution(r, FixedCostModel());
      PlanAnimation anim;
      QVERIFY2(anim.set_plan(r, plan, {"a", "b"}), qPrintable(anim.error()));
      const BlockGrid& g = anim.grid();
      const auto key = meshloom::app::tensor_key_layout(g);
      const std::size_t dims = g.tensor_shape.size();
      QCOMPARE(key.rows.size(), static_cast<std::size_t>(g.rows));
      QCOMPARE(key.columns.size(), dims == 1 ? std::size_t{1} : dims - 1);
      QCOMPARE(key.columns.back().size(), static_cast<std::size_t>(g.cols));
      if (dims > 2) QCOMPARE(g.col_group, g.cols / (static_cast<std::int64_t>(g.boundaries[1].size()) - 1));
      for (std::int64_t b = 0; b < g.block_count; ++b) {
        // The block's index range on every dim, from its block coordinate.
        std::vector<std::int64_t> coord(dims);
        std::int64_t rest = b;
        for (std::size_t d = dims; d-- > 0;) {
          const auto n = static_cast<std::int64_t>(g.boundaries[d].size()) - 1;
          coord[d] = rest % n;
          rest /= n;
        }
        const auto range = [&](std::size_t d) {
          return std::pair(g.boundaries[d][static_cast<std::size_t>(coord[d])],
                           g.boundaries[d][static_cast<std::size_t>(coord[d]) + 1]);
        };
        const auto row = static_cast<std::size_t>(g.row_of(b));
        const auto col = static_cast<std::size_t>(g.col_of(b));
        const auto& rs = key.rows[row];
        QVERIFY(std::abs(rs.from - g.row_edges[row]) < 1e-9 && std::abs(rs.to - g.row_edges[row + 1]) < 1e-9);
        if (dims >= 2) QCOMPARE(std::pair(rs.first, rs.end), range(0));
        for (std::size_t level = 0; level < key.columns.size(); ++level) {
          const auto d = static_cast<std::size_t>(key.column_dims[level]);
          const auto holds = std::count_if(key.columns[level].begin(), key.columns[level].end(), [&](const auto& s) {
            return s.from <= g.col_edges[col] + 1e-9 && g.col_edges[col + 1] <= s.to + 1e-9 &&
                   std::pair(s.first, s.end) == range(d);
          });
          QVERIFY2(holds == 1, qPrintable(QStringLiteral("block %1, dim %2").arg(b).arg(d)));
        }
      }
    }
    // [8, 8, 8] from S(0)[0]S(0)[1]R (dim 0 split by a, then by b inside) to RS(0)R: dim 0 in quarters, the rows
    // "0:2" ... "6:8"; dims 1 and 2 across, nested.
    const PlanRequest r = small({2, 2, 2}, {8, 8, 8}, "S(0)[0]S(0)[1]R", "RS(0)R");
    PlanAnimation anim;
    QVERIFY(anim.set_plan(r, plan_redistribution(r, FixedCostModel()), {"a", "b", "c"}));
    const auto key = meshloom::app::tensor_key_layout(anim.grid());
    QStringList rows;
    for (const auto& s : key.rows) rows << s.label();
    QCOMPARE(rows, (QStringList{QStringLiteral("0:2"), QStringLiteral("2:4"), QStringLiteral("4:6"), QStringLiteral("6:8")}));
    QCOMPARE(key.column_dims, (std::vector<int>{1, 2}));
    meshloom::app::TensorKey widget;
    widget.set_grid(anim.grid(), QStringLiteral("t [8, 8, 8]"));
    widget.resize(widget.sizeHint());
    (void)widget.grab();
    QCOMPARE(widget.drawn_labels().at(0), rows);
    QVERIFY(!widget.drawn_labels().at(1).isEmpty());
  }

  void partial_before_all_reduce_only() {
    const PlanRequest r = small({4}, {4, 4}, "P(sum)", "R");
    const Plan plan = plan_redistribution(r, FixedCostModel());
    QCOMPARE(plan.steps.size(), std::size_t{1});
    QCOMPARE(plan.steps[0].collective, Collective::AllReduce);
    PlanAnimation anim;
    QVERIFY(anim.set_plan(r, plan, {"dp"}));
    QVERIFY(anim.caption(0).contains(QStringLiteral("Partial")));
    QVERIFY(anim.caption(1).contains(QStringLiteral("all_reduce on dp")));
    QVERIFY(anim.caption(1).contains(QStringLiteral("no rank holds Partial values any more")));
    BlockOverlayItem overlay(layout_mesh({4}));
    overlay.set_frame(anim.grid(), anim.frame(0));
    for (std::size_t c = 0; c < 4; ++c) {
      QVERIFY(overlay.partial_mark(c));
      QCOMPARE(overlay.filled_blocks(c), (std::vector<std::int64_t>{0}));  // the whole tensor, not yet reduced
    }
    overlay.set_frame(anim.grid(), anim.frame(1));
    for (std::size_t c = 0; c < 4; ++c) {
      QVERIFY(!overlay.partial_mark(c));
      QCOMPARE(overlay.outline_group(c), 0);
    }
  }

  void overlay_state_and_paint() {
    const PlanRequest r = small({2, 2, 2}, {8, 8}, "RS(0)[1]S(0)[0]", "RRS(0)");
    const Plan plan = plan_redistribution(r, FixedCostModel());
    PlanAnimation anim;
    QVERIFY(anim.set_plan(r, plan, {"pp", "dp", "tp"}));
    QGraphicsScene scene;
    auto* overlay = new BlockOverlayItem(layout_mesh(r.mesh_shape));
    scene.addItem(overlay);
    QVERIFY(!overlay->has_frame());
    QObject::connect(&anim, &PlanAnimation::frame_changed, &anim,
                     [&](int k) { overlay->set_frame(anim.grid(), anim.frame(k)); });
    for (int k = 0; k < anim.frame_count(); ++k) {
      anim.jump_to(k);
      if (k == 0) overlay->set_frame(anim.grid(), anim.frame(0));  // jump_to(0) from 0 emits nothing
      const BlockFrame& f = anim.frame(k);
      for (std::size_t c = 0; c < overlay->cell_count(); ++c) {
        QCOMPARE(overlay->filled_blocks(c), f.blocks_of(c, anim.grid().block_count));
        for (std::int64_t b = 0; b < anim.grid().block_count; ++b) QCOMPARE(overlay->filled(c, b), f.holds(c, b));
        QCOMPARE(overlay->outline_group(c), f.group[c]);
        QCOMPARE(overlay->fill_fraction(c), f.fraction[c]);
        QVERIFY(overlay->geometry().cells[c].contains(overlay->block_rect(c, 0)));
      }
    }
    // A frame of another mesh is refused.
    BlockOverlayItem other(layout_mesh({4}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, other.set_frame(anim.grid(), anim.frame(0)));

    // Level of detail: block grids at 1:1, fill bars when blocks would be under kDetailPx.
    QVERIFY(overlay->detailed(1.0));
    QVERIFY(!overlay->detailed(0.05));

    // It paints: at 1:1 the colour of a block rank 0 holds appears inside its block rect.
    anim.jump_to(0);
    overlay->set_frame(anim.grid(), anim.frame(0));
    const auto held = overlay->filled_blocks(0);
    QVERIFY(!held.empty());
    const QRectF bounds = overlay->boundingRect();
    QImage image(bounds.size().toSize() + QSize(2, 2), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    {
      QPainter painter(&image);
      scene.render(&painter, QRectF(0, 0, bounds.width(), bounds.height()), bounds);
    }
    const QRectF block = overlay->block_rect(0, held.front()).translated(-bounds.topLeft());
    const QColor pixel = image.pixelColor(block.center().toPoint());
    QCOMPARE(pixel.rgb(), BlockOverlayItem::block_color(held.front(), anim.grid().block_count).rgb());
    // A block rank 0 does not hold stays unfilled (white).
    std::int64_t missing = -1;
    for (std::int64_t b = 0; b < anim.grid().block_count; ++b) {
      if (!overlay->filled(0, b)) missing = b;
    }
    QVERIFY(missing >= 0);
    QCOMPARE(image.pixelColor(overlay->block_rect(0, missing).translated(-bounds.topLeft()).center().toPoint()).rgb(),
             QColor(Qt::white).rgb());
  }

  // One timer: a step forward changes the frame at once and runs a transition from the frame before, 0 -> 1 over
  // kTransitionShare of the step; jumps show their frame settled, still from the frame before it.
  void transitions_on_the_one_timer() {
    const PlanRequest r = small({2, 2, 2}, {8, 8, 8}, "S(0)[0]S(0)[1]R", "RS(0)R");
    const Plan plan = plan_redistribution(r, FixedCostModel());
    PlanAnimation anim;
    QVERIFY(anim.set_plan(r, plan));
    QVERIFY(anim.step_count() >= 2);
    QCOMPARE(anim.transition(), 1.0);
    QCOMPARE(anim.transition_from(), -1);
    QVERIFY(!anim.timer()->isActive());
    anim.set_speed(4.0);  // 250 ms a step: the transition takes 150 ms

    QSignalSpy progress(&anim, &PlanAnimation::transition_changed);
    anim.step_forward();
    QCOMPARE(anim.current(), 1);
    QCOMPARE(anim.transition_from(), 0);
    QCOMPARE(anim.transition(), 0.0);
    QVERIFY(!anim.playing());
    QVERIFY(anim.timer()->isActive());  // the one timer drives the transition
    QTRY_COMPARE_WITH_TIMEOUT(anim.transition(), 1.0, 2000);
    QTRY_VERIFY_WITH_TIMEOUT(!anim.timer()->isActive(), 1000);  // nothing moves: the timer stops
    QVERIFY(progress.count() >= 2);
    double last = -1.0;
    for (const auto& args : progress) {  // rising from 0 to 1
      QVERIFY(args.at(0).toDouble() >= last);
      last = args.at(0).toDouble();
    }
    QCOMPARE(last, 1.0);
    QCOMPARE(anim.current(), 1);  // a transition never advances the frame by itself

    anim.jump_to(2);
    QCOMPARE(anim.transition(), 1.0);
    QCOMPARE(anim.transition_from(), 1);
    anim.step_back();
    QCOMPARE(anim.current(), 1);
    QCOMPARE(anim.transition_from(), 0);
    anim.jump_to(0);
    QCOMPARE(anim.transition_from(), -1);
  }

  // The overlay under a transition: what a rank gains arrives, what it drops leaves, bars move from the old share to
  // the new; an arriving block is invisible at t = 0 and in its colour at t = 1.
  void overlay_transition() {
    const PlanRequest r = small({2, 2}, {8, 8}, "S(0)S(1)", "RS(1)");
    const Plan plan = plan_redistribution(r, FixedCostModel());
    PlanAnimation anim;
    QVERIFY(anim.set_plan(r, plan, {"dp", "tp"}));
    QCOMPARE(anim.step_count(), 1);
    QGraphicsScene scene;
    auto* overlay = new BlockOverlayItem(layout_mesh(r.mesh_shape));
    scene.addItem(overlay);
    const BlockFrame& before = anim.frame(0);
    const BlockFrame& after = anim.frame(1);
    overlay->set_frame(anim.grid(), after);
    QVERIFY(!overlay->has_transition());
    overlay->set_transition(&before, 0.25);
    QVERIFY(overlay->has_transition());
    QCOMPARE(overlay->transition(), 0.25);
    std::int64_t gained_cell = -1;
    std::int64_t gained_block = -1;
    for (std::size_t c = 0; c < overlay->cell_count(); ++c) {
      for (std::int64_t b = 0; b < anim.grid().block_count; ++b) {
        QCOMPARE(overlay->arriving(c, b), after.holds(c, b) && !before.holds(c, b));
        QCOMPARE(overlay->leaving(c, b), before.holds(c, b) && !after.holds(c, b));
        if (overlay->arriving(c, b) && gained_cell < 0) {
          gained_cell = static_cast<std::int64_t>(c);
          gained_block = b;
        }
      }
      QCOMPARE(overlay->drawn_fraction(c), before.fraction[c] + (after.fraction[c] - before.fraction[c]) * 0.25F);
    }
    QVERIFY(gained_cell >= 0);  // an all_gather delivers blocks
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, [&] {
      BlockFrame wrong = before;
      wrong.ranks = 3;
      overlay->set_transition(&wrong, 0.5);
    }());

    const QRectF bounds = overlay->boundingRect();
    auto pixel_at = [&](double t) {
      overlay->set_transition(&before, t);
      QImage image(bounds.size().toSize() + QSize(2, 2), QImage::Format_ARGB32_Premultiplied);
      image.fill(Qt::white);
      {
        QPainter painter(&image);
        scene.render(&painter, QRectF(0, 0, bounds.width(), bounds.height()), bounds);
      }
      const QRectF block = overlay->block_rect(static_cast<std::size_t>(gained_cell), gained_block);
      return image.pixelColor(block.translated(-bounds.topLeft()).center().toPoint()).rgb();
    };
    QCOMPARE(pixel_at(0.0), QColor(Qt::white).rgb());
    QCOMPARE(pixel_at(1.0), BlockOverlayItem::block_color(gained_block, anim.grid().block_count).rgb());
    overlay->set_transition(nullptr, 0.0);
    QVERIFY(!overlay->has_transition());
    QVERIFY(!overlay->arriving(static_cast<std::size_t>(gained_cell), gained_block));
  }

  void refused_and_cleared() {
    PlanRequest r = small({4}, {1 << 20}, "S(0)", "R");
    const Plan plan = plan_redistribution(r, FixedCostModel());
    PlanAnimation anim;
    anim.set_max_elements(64);
    // Scaled: dim 0 is split 4 ways and 2^20 is a multiple of 4, so it is shown on 4 elements.
    QVERIFY2(anim.set_plan(r, plan), qPrintable(anim.error()));
    QVERIFY(anim.scaled());
    QCOMPARE(anim.request().tensor_shape, (std::vector<std::int64_t>{4}));
    anim.set_max_elements(8);  // 4 ranks x 4 elements > 8
    QVERIFY(!anim.set_plan(r, plan));
    QVERIFY(!anim.has_plan());
    QVERIFY(!anim.error().isEmpty());
    QCOMPARE(anim.frame_count(), 0);
    anim.play();
    QVERIFY(!anim.playing());
  }
};

QTEST_MAIN(AnimationTest)
#include "test_animation.moc"
