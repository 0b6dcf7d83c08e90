// RankPanel: what the mesh says about one rank (the hovered one, else the selected one): its host, its
// coordinate, and its local rank and group on every axis and flattened axis. All answers are the engine's
// (DeviceMesh::coordinate, local_rank, group_of); the panel only lays them out.
#pragma once

#include <QWidget>

#include <cstdint>
#include <optional>

class QLabel;
class QTreeWidget;

namespace meshloom {
struct Design;
class DeviceMesh;
}  // namespace meshloom

namespace meshloom::app {

class DesignDocument;

class RankPanel : public QWidget {
  Q_OBJECT

public:
  explicit RankPanel(const DesignDocument* doc, QWidget* parent = nullptr);

  // Shows `rank` (nullopt: a one-line hint to hover or click a cell, and no table).
  void show_rank(std::optional<std::int64_t> rank);
  // The design and mesh the canvas shows instead of the document's (an Advisor layout preview: its rank numbers are
  // that layout's), or nullptr for the document's own; kept by the caller until it sets another. Shows the rank again.
  void set_preview(const Design* design, const DeviceMesh* mesh);
  [[nodiscard]] std::optional<std::int64_t> rank() const noexcept { return rank_; }
  // The text of the row `item` ("Host", "Coordinate", or an axis name) in column 1; empty when absent.
  [[nodiscard]] QString value(const QString& item) const;

private:
  const DesignDocument* doc_;
  const Design* preview_design_ = nullptr;
  const DeviceMesh* preview_mesh_ = nullptr;
  QLabel* title_ = nullptr;
  QTreeWidget* tree_ = nullptr;
  std::optional<std::int64_t> rank_;
};

}  // namespace meshloom::app
