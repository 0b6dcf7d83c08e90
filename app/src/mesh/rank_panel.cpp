#include "mesh/rank_panel.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "document/design_document.hpp"

namespace meshloom::app {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

constexpr std::int64_t kMaxListedGroup = 65536;  // larger groups are described, not enumerated

QString ints(const std::vector<std::int64_t>& values, int limit = 32) {
  QStringList parts;
  for (std::size_t i = 0; i < values.size() && static_cast<int>(i) < limit; ++i) parts << QString::number(values[i]);
  if (static_cast<int>(values.size()) > limit) parts << QStringLiteral("… %1 in all").arg(values.size());
  return parts.join(QStringLiteral(", "));
}

}  // namespace

RankPanel::RankPanel(const DesignDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  title_ = new QLabel(this);
  title_->setWordWrap(true);
  title_->setAlignment(Qt::AlignLeft | Qt::AlignTop);  // one line at the top while the table is hidden
  tree_ = new QTreeWidget(this);
  tree_->setColumnCount(3);
  tree_->setHeaderLabels({tr("Item"), tr("Value"), tr("Group")});
  tree_->setRootIsDecorated(false);
  tree_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  tree_->setToolTip(tr("Local rank: the rank's index in its group of that axis (mesh.get_local_rank(axis))."));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addWidget(tree_, 1);
  show_rank(std::nullopt);
}

void RankPanel::show_rank(std::optional<std::int64_t> rank) {
  rank_ = rank;
  tree_->clear();
  tree_->setVisible(false);  // no empty table: the title's one line says what to do or what is wrong
  if (!rank) {
    title_->setText(tr("Hover or click a rank on the canvas to see its coordinate and groups."));
    return;
  }
  const bool previewed = preview_design_ != nullptr && preview_mesh_ != nullptr;
  const Design& design = previewed ? *preview_design_ : doc_->design();
  const DeviceMesh& mesh = previewed ? *preview_mesh_ : doc_->mesh();
  if (*rank < 0 || *rank >= design.world) {
    title_->setText(tr("Rank %1 is not in the world of %2 ranks.").arg(*rank).arg(design.world));
    return;
  }
  title_->setText(previewed ? tr("<b>Rank %1</b> in the previewed layout").arg(*rank)
                            : tr("<b>Rank %1</b>").arg(*rank));
  tree_->setVisible(true);
  const std::int64_t host = *rank / design.devices_per_host;
  new QTreeWidgetItem(tree_, {tr("Host"), tr("%1 (device %2 of %3)")
                                              .arg(host)
                                              .arg(*rank % design.devices_per_host)
                                              .arg(design.devices_per_host)});
  const auto coord = mesh.coordinate(*rank);
  if (!coord) {
    new QTreeWidgetItem(tree_, {tr("Coordinate"), tr("not in the mesh")});
    return;
  }
  QStringList named;
  for (std::size_t a = 0; a < coord->size(); ++a) named << QStringLiteral("%1=%2").arg(q(design.mesh.names[a])).arg((*coord)[a]);
  new QTreeWidgetItem(tree_, {tr("Coordinate"), QStringLiteral("(%1)").arg(named.join(QStringLiteral(", ")))});
  const auto add_axis_row = [&](const std::string& name, bool flattened) {
    const AxisRef axis{name};
    const std::int64_t size = mesh.size(axis);
    // The group itself only while it is small enough to list; its size and the local rank always.
    const QString group = size <= kMaxListedGroup ? QStringLiteral("[%1]").arg(ints(mesh.group_of(*rank, axis)))
                                                  : tr("(%1 ranks)").arg(size);
    auto* item = new QTreeWidgetItem(
        tree_, {q(name), tr("local rank %1 of %2").arg(mesh.local_rank(*rank, axis)).arg(size), group});
    if (flattened) {
      QFont f = item->font(0);
      f.setItalic(true);
      item->setFont(0, f);
    }
  };
  for (const auto& name : design.mesh.names) add_axis_row(name, false);
  for (const auto& f : design.mesh.flattened) add_axis_row(f.name, true);
}

void RankPanel::set_preview(const Design* design, const DeviceMesh* mesh) {
  preview_design_ = design;
  preview_mesh_ = mesh;
  show_rank(rank_);
}

QString RankPanel::value(const QString& item) const {
  const auto found = tree_->findItems(item, Qt::MatchExactly, 0);
  return found.isEmpty() ? QString() : found.front()->text(1);
}

}  // namespace meshloom::app
