// The canvas at scale, rendered offscreen into a 1200x800 image as the view would paint it:
//   BM_FittedFrame      the whole mesh fitted (plain cells and frames, no numbers), 4,096 and 16,384 ranks,
//                       without and with a slice colouring; and the Llama 3 405B mesh (dp 128 wrapped into a
//                       16 x 8 grid of its blocks: the one layout here that wraps);
//   BM_ViewFittedFrame  a 1200x800 MeshView fitted, grabbed whole (rulers, legend), plain and dp sliced, up to
//                       131,072 ranks (128, 16, 8, 8), where the grid draws hosts as blocks;
//   BM_ZoomedFrame      a 1200x800 window at 1:1 zoom over the middle of the mesh (borders, host outlines,
//                       rank numbers, frame labels);
//   BM_SliceRecolour    picking a slice: slice_groups + set_groups + a fitted repaint.
//   BM_AnimationFittedFrame / BM_AnimationZoomedFrame  the same frames with a BlockOverlayItem over the grid showing
//                       frame 1 of a plan (blocks per cell, the step's groups outlined): fitted (fill bars) and 1:1
//                       (block grids); BM_AnimationStep: set_frame of the next frame + a fitted repaint;
//                       BM_AnimationSetPlan: simulating the plan (PlanAnimation::set_plan).
// The goals: a fitted frame under 16 ms at 16,384 and 131,072 ranks (issue 16). Figures are reported in docs/, never asserted.
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QPalette>
#include <QPixmap>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "canvas/block_overlay_item.hpp"
#include "canvas/mesh_geometry.hpp"
#include "canvas/mesh_grid_item.hpp"
#include "canvas/mesh_view.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/planner.hpp"
#include "plan/plan_animation.hpp"
#include "mesh/slice.hpp"

namespace {

using meshloom::DeviceMesh;
using meshloom::app::MeshGridItem;

const std::vector<std::string> kNames{"pp", "dp", "cp", "tp"};
// Llama 3 405B: 16,384 ranks as (dp 128, pp 16, cp 1, tp 8); the same axis names, in its own order.
const std::vector<std::int64_t> kLlamaShape{128, 16, 1, 8};
const std::vector<std::string> kLlamaNames{"dp", "pp", "cp", "tp"};

std::vector<std::int64_t> shape_for(std::int64_t ranks) {
  if (ranks == 4096) return {8, 8, 8, 8};
  if (ranks == 131072) return {128, 16, 8, 8};
  return {16, 16, 8, 8};
}

// A scene holding the grid of one mesh (8 devices per host), as the window builds it.
struct Canvas {
  DeviceMesh mesh;
  QGraphicsScene scene;
  MeshGridItem* grid = nullptr;
  QImage image{1200, 800, QImage::Format_ARGB32_Premultiplied};

  // llama: the Llama 3 405B mesh (16,384 ranks) instead of shape_for(ranks).
  explicit Canvas(std::int64_t ranks, bool llama = false)
      : mesh(llama ? DeviceMesh::init(kLlamaShape, kLlamaNames) : DeviceMesh::init(shape_for(ranks), kNames)) {
    const auto values = mesh.instances().values;
    std::vector<std::int64_t> hosts;
    hosts.reserve(values.size());
    for (auto r : values) hosts.push_back(r / 8);
    grid = new MeshGridItem(meshloom::app::layout_mesh(mesh.shape()), values, std::move(hosts),
                            llama ? kLlamaNames : kNames);
    scene.addItem(grid);
    scene.setSceneRect(grid->boundingRect().adjusted(-24, -24, 24, 24));
  }

  // One frame: the `source` scene rect fitted into the image, as QGraphicsView::render does.
  void render(const QRectF& source) {
    image.fill(scene.palette().color(QPalette::Base));
    QPainter painter(&image);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    scene.render(&painter, QRectF(image.rect()), source, Qt::KeepAspectRatio);
  }
  void render_fitted() { render(scene.sceneRect()); }
  void render_zoomed() {
    const QPointF mid = grid->geometry().bounds.center();
    render(QRectF(mid - QPointF(600, 400), QSizeF(1200, 800)));  // 1:1, about 28 x 18 cells of 40 units
  }
};

// Args: ranks, slice coloured (0/1), Llama 3 405B mesh (0/1; 16,384 ranks).
void BM_FittedFrame(benchmark::State& state) {
  const bool llama = state.range(2) != 0;
  Canvas canvas(state.range(0), llama);
  if (state.range(1) != 0) {
    const auto s = meshloom::app::slice_groups(canvas.mesh, {"tp"});
    canvas.grid->set_groups(s.cell_group, static_cast<std::int32_t>(s.groups.size()));
    canvas.grid->set_emphasised_group(1);
  }
  for (auto _ : state) {
    canvas.render_fitted();
    benchmark::DoNotOptimize(canvas.image.constBits());
  }
  std::string label = state.range(1) != 0 ? "tp slice coloured" : "plain";
  if (llama) label += ", llama3-405b (128,16,1,8)";
  state.SetLabel(label);
}
BENCHMARK(BM_FittedFrame)
    ->Args({4096, 0, 0})
    ->Args({4096, 1, 0})
    ->Args({16384, 0, 0})
    ->Args({16384, 1, 0})
    ->Args({16384, 0, 1})
    ->Args({16384, 1, 1})
    ->Args({131072, 0, 0})
    ->Args({131072, 1, 0})
    ->Unit(benchmark::kMillisecond);

// The same through the widget: a 1200x800 MeshView fitted to the mesh, grabbed whole (QWidget::grab: the viewport,
// the rulers along its top and left edges, and the legend of the aggregated view). Arg 2: a dp slice coloured.
void BM_ViewFittedFrame(benchmark::State& state) {
  Canvas canvas(state.range(0));
  if (state.range(1) != 0) {
    const auto s = meshloom::app::slice_groups(canvas.mesh, {"dp"});
    canvas.grid->set_groups(s.cell_group, static_cast<std::int32_t>(s.groups.size()));
  }
  meshloom::app::MeshView view(&canvas.scene);
  view.resize(1200, 800);
  view.set_grid(canvas.grid);
  view.show();  // lays out the viewport at its size (offscreen platform: nothing appears)
  QApplication::processEvents();
  view.fit();
  for (auto _ : state) {
    const QPixmap frame = view.grab();
    benchmark::DoNotOptimize(frame.cacheKey());
  }
  state.SetLabel(canvas.grid->aggregated_at(view.transform().m11()) ? "hosts as blocks" : "cells");
}
BENCHMARK(BM_ViewFittedFrame)
    ->Args({4096, 0})
    ->Args({16384, 0})
    ->Args({16384, 1})
    ->Args({131072, 0})
    ->Args({131072, 1})
    ->Unit(benchmark::kMillisecond);

void BM_ZoomedFrame(benchmark::State& state) {
  Canvas canvas(state.range(0));
  const auto s = meshloom::app::slice_groups(canvas.mesh, {"dp"});
  canvas.grid->set_groups(s.cell_group, static_cast<std::int32_t>(s.groups.size()));
  for (auto _ : state) {
    canvas.render_zoomed();
    benchmark::DoNotOptimize(canvas.image.constBits());
  }
}
BENCHMARK(BM_ZoomedFrame)->Arg(4096)->Arg(16384)->Arg(131072)->Unit(benchmark::kMillisecond);

void BM_SliceRecolour(benchmark::State& state) {
  Canvas canvas(state.range(0));
  const std::vector<std::vector<std::string>> picks{{"tp"}, {"dp"}, {"pp", "cp"}, {"dp", "tp"}};
  std::size_t k = 0;
  for (auto _ : state) {
    const auto s = meshloom::app::slice_groups(canvas.mesh, picks[k++ % picks.size()]);
    canvas.grid->set_groups(s.cell_group, static_cast<std::int32_t>(s.groups.size()));
    canvas.render_fitted();
    benchmark::DoNotOptimize(canvas.image.constBits());
  }
}
BENCHMARK(BM_SliceRecolour)->Arg(4096)->Arg(16384)->Arg(131072)->Unit(benchmark::kMillisecond);

// The slice alone (no paint): what picking axes costs before the repaint.
void BM_SliceGroups(benchmark::State& state) {
  const auto mesh = DeviceMesh::init(shape_for(state.range(0)), kNames);
  for (auto _ : state) benchmark::DoNotOptimize(meshloom::app::slice_groups(mesh, {"dp", "tp"}));
}
BENCHMARK(BM_SliceGroups)->Arg(4096)->Arg(16384)->Unit(benchmark::kMicrosecond);

// Building the grid item (layout, frames, host outlines, labels): what opening a design costs the canvas.
void BM_BuildGrid(benchmark::State& state) {
  const auto mesh = DeviceMesh::init(shape_for(state.range(0)), kNames);
  const auto values = mesh.instances().values;
  std::vector<std::int64_t> hosts;
  for (auto r : values) hosts.push_back(r / 8);
  for (auto _ : state) {
    MeshGridItem grid(meshloom::app::layout_mesh(mesh.shape()), values, hosts, kNames);
    benchmark::DoNotOptimize(grid.boundingRect());
  }
}
BENCHMARK(BM_BuildGrid)->Arg(4096)->Arg(16384)->Arg(131072)->Unit(benchmark::kMillisecond);

// The animation overlay: a tensor [64, 64] moved from S(0)RRS(1) (dim 0 split by pp, dim 1 by tp) to RRRS(1) on the
// (pp, dp, cp, tp) mesh (an 8 x 8 grid of blocks per cell at 4,096 ranks: drawn block by block at 1:1); frame 1
// (after the first step, its groups outlined) drawn over the grid.
struct AnimatedCanvas : Canvas {
  meshloom::app::PlanAnimation animation;
  meshloom::app::BlockOverlayItem* overlay = nullptr;
  meshloom::PlanRequest request;
  meshloom::Plan plan;

  explicit AnimatedCanvas(std::int64_t ranks) : Canvas(ranks) {
    request.mesh_shape = shape_for(ranks);
    request.tensor_shape = {64, 64};
    request.src = meshloom::parse_state("S(0)RRS(1)");
    request.dst = meshloom::parse_state("RRRS(1)");
    plan = meshloom::plan_redistribution(request, meshloom::FixedCostModel());
    if (!animation.set_plan(request, plan, kNames)) throw std::runtime_error(animation.error().toStdString());
    overlay = new meshloom::app::BlockOverlayItem(grid->geometry());
    scene.addItem(overlay);
    show(std::min(1, animation.frame_count() - 1));
  }
  void show(int k) { overlay->set_frame(animation.grid(), animation.frame(k)); }
};

void BM_AnimationFittedFrame(benchmark::State& state) {
  AnimatedCanvas canvas(state.range(0));
  for (auto _ : state) {
    canvas.render_fitted();
    benchmark::DoNotOptimize(canvas.image.constBits());
  }
  state.SetLabel(std::to_string(canvas.animation.grid().block_count) + " blocks, " +
                 std::to_string(canvas.animation.step_count()) + " steps, fill bars");
}
BENCHMARK(BM_AnimationFittedFrame)->Arg(4096)->Arg(16384)->Unit(benchmark::kMillisecond);

void BM_AnimationZoomedFrame(benchmark::State& state) {
  AnimatedCanvas canvas(state.range(0));
  for (auto _ : state) {
    canvas.render_zoomed();
    benchmark::DoNotOptimize(canvas.image.constBits());
  }
  state.SetLabel(canvas.overlay->detailed(1.0) ? "block grids" : "fill bars");
}
BENCHMARK(BM_AnimationZoomedFrame)->Arg(4096)->Arg(16384)->Unit(benchmark::kMillisecond);

// One step of playback: the next frame handed to the overlay, then a fitted repaint.
void BM_AnimationStep(benchmark::State& state) {
  AnimatedCanvas canvas(state.range(0));
  int k = 0;
  for (auto _ : state) {
    k = (k + 1) % canvas.animation.frame_count();
    canvas.show(k);
    canvas.render_fitted();
    benchmark::DoNotOptimize(canvas.image.constBits());
  }
}
BENCHMARK(BM_AnimationStep)->Arg(4096)->Arg(16384)->Unit(benchmark::kMillisecond);

// Simulating the plan and building every frame's blocks and captions.
void BM_AnimationSetPlan(benchmark::State& state) {
  AnimatedCanvas canvas(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(canvas.animation.set_plan(canvas.request, canvas.plan, kNames));
  }
}
BENCHMARK(BM_AnimationSetPlan)->Arg(4096)->Arg(16384)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
