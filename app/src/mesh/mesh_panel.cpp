#include "mesh/mesh_panel.hpp"

#include <QAction>
#include <QDialog>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStyle>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>
#include <memory>

#include "mesh/axes_model.hpp"
#include "document/design_document.hpp"
#include "mesh/edit_dialog.hpp"
#include "mesh/typing_delegate.hpp"
#include "shell/inline_message.hpp"
#include "meshloom/design/edit.hpp"

namespace meshloom::app {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString joined(const std::vector<std::string>& names, const char* sep) {
  QStringList parts;
  for (const auto& n : names) parts << q(n);
  return parts.join(QString::fromLatin1(sep));
}


QAction* make_action(QWidget* owner, const QString& text, const QString& tip, const QKeySequence& keys) {
  auto* a = new QAction(text, owner);
  a->setToolTip(tip);
  a->setStatusTip(tip);
  if (!keys.isEmpty()) {
    a->setShortcut(keys);
    a->setToolTip(tip + QStringLiteral(" (%1)").arg(keys.toString(QKeySequence::NativeText)));
  }
  return a;
}

}  // namespace

bool parse_sizes(const QString& text, std::vector<std::int64_t>* sizes, QString* error) {
  sizes->clear();
  const QStringList tokens = text.split(QRegularExpression(QStringLiteral("[\\s,x×*()]+")), Qt::SkipEmptyParts);
  if (tokens.isEmpty()) {
    *error = QObject::tr("sizes \"%1\": give at least one size, e.g. 2, 4").arg(text);
    return false;
  }
  for (const QString& t : tokens) {
    bool ok = false;
    const qlonglong v = t.toLongLong(&ok);
    if (!ok || v < 1) {
      *error = QObject::tr("size \"%1\" in \"%2\" is not an integer >= 1").arg(t, text);
      return false;
    }
    sizes->push_back(v);
  }
  return true;
}

std::vector<std::string> parse_names(const QString& text) {
  std::vector<std::string> names;
  for (const QString& t : text.split(QRegularExpression(QStringLiteral("[\\s,()]+")), Qt::SkipEmptyParts)) {
    names.push_back(t.toStdString());
  }
  return names;
}

MeshPanel::MeshPanel(DesignDocument* doc, AxesModel* axes, QWidget* parent)
    : QWidget(parent), doc_(doc), axes_(axes) {
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  name_ = new QLineEdit(this);
  name_->setObjectName(QStringLiteral("design_name"));
  name_->setToolTip(tr("The design's title (saved in the file; 1..128 characters)"));
  name_message_ = make_message_label(this);
  world_ = new QSpinBox(this);
  world_->setRange(1, std::numeric_limits<int>::max());
  world_->setKeyboardTracking(false);
  world_->setToolTip(tr("Ranks in the job (WORLD_SIZE). The mesh may use fewer; it must not use more."));
  world_message_ = make_message_label(this);
  devices_ = new QSpinBox(this);
  devices_->setRange(1, std::numeric_limits<int>::max());
  devices_->setKeyboardTracking(false);
  devices_->setToolTip(tr("GPUs per host: rank r runs on host r / devices per host. It must divide the world."));
  devices_message_ = make_message_label(this);
  form->addRow(tr("&Name"), name_);
  form->addRow(QString(), name_message_);
  description_ = new QPlainTextEdit(this);
  description_->setObjectName(QStringLiteral("design_description"));
  description_->setTabChangesFocus(true);  // Tab leaves the field
  description_->setPlaceholderText(tr("What this design is for (optional)"));
  description_->setToolTip(tr("The design's description (saved in the file; a preset sets its own)"));
  description_->setFixedHeight(static_cast<int>(description_->fontMetrics().lineSpacing() * 2.2) +
                               2 * description_->frameWidth());
  description_->installEventFilter(this);
  description_message_ = make_message_label(this);
  form->addRow(tr("Descr&iption"), description_);
  form->addRow(QString(), description_message_);
  form->addRow(tr("&World"), world_);
  form->addRow(QString(), world_message_);
  form->addRow(tr("&Devices per host"), devices_);
  form->addRow(QString(), devices_message_);

  table_ = new QTableView(this);
  table_->setTabKeyNavigation(false);  // Tab leaves the table (arrows move between cells)
  table_->setModel(axes_);
  table_->setItemDelegate(new TypingDelegate(table_));  // typing in a cell survives edits that arrive meanwhile
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                          QAbstractItemView::AnyKeyPressed);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setToolTip(tr("Mesh axes (outer to inner), then flattened axes. Tick axes to slice; double-click a name or "
                        "size to edit."));
  axes_message_ = make_message_label(this);

  add_ = make_action(this, tr("&Add axis..."), tr("Add a mesh axis after the selected one"),
                     QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
  remove_ = make_action(this, tr("&Remove axis"), tr("Remove the selected axis (and the flattened axes that use it)"),
                        QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Delete));
  up_ = make_action(this, tr("Move &outer"), tr("Move the selected axis one place outer (left in the shape)"),
                    QKeySequence(Qt::ALT | Qt::Key_Up));
  down_ = make_action(this, tr("Move &inner"), tr("Move the selected axis one place inner (right in the shape)"),
                      QKeySequence(Qt::ALT | Qt::Key_Down));
  flatten_ = make_action(this, tr("&Flatten ticked axes..."),
                         tr("mesh[ticked axes]._flatten(name): one axis over the ticked axes"),
                         QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));
  unflatten_ = make_action(this, tr("&Unflatten axis..."),
                           tr("mesh._unflatten(axis, sizes, names): split the selected axis into several"),
                           QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_U));
  clear_picks_ = make_action(this, tr("&Clear slice"), tr("Untick every axis"), QKeySequence(Qt::Key_Escape));
  clear_picks_->setShortcutContext(Qt::WindowShortcut);
  connect(add_, &QAction::triggered, this, &MeshPanel::add_dialog);
  connect(remove_, &QAction::triggered, this, [this] { (void)remove_current(); });
  connect(up_, &QAction::triggered, this, [this] { (void)move_current(-1); });
  connect(down_, &QAction::triggered, this, [this] { (void)move_current(+1); });
  connect(flatten_, &QAction::triggered, this, &MeshPanel::flatten_dialog);
  connect(unflatten_, &QAction::triggered, this, &MeshPanel::unflatten_dialog);
  connect(clear_picks_, &QAction::triggered, this, [this] { axes_->set_picked({}); });

  auto* buttons = new QGridLayout;
  int slot = 0;
  for (QAction* a : {add_, up_, flatten_, remove_, down_, unflatten_}) {
    auto* b = new QToolButton(this);
    b->setDefaultAction(a);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    b->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    buttons->addWidget(b, slot / 3, slot % 3);
    ++slot;
  }

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(table_, 1);
  layout->addWidget(axes_message_);
  layout->addLayout(buttons);

  connect(name_, &QLineEdit::editingFinished, this, &MeshPanel::commit_name);
  connect(world_, &QSpinBox::valueChanged, this, [this](int v) {
    if (v != doc_->design().world) (void)set_world(v);
  });
  connect(devices_, &QSpinBox::valueChanged, this, [this](int v) {
    if (v != doc_->design().devices_per_host) (void)set_devices_per_host(v);
  });
  connect(axes_, &AxesModel::edit_refused, this,
          [this](const QModelIndex&, const QString& message) { show_message(axes_message_, message); });
  connect(axes_, &AxesModel::picked_changed, this, &MeshPanel::update_actions);
  // Every edit resets the model; the selection stays on its axis where the axis is still there (an undo that brings
  // back an axis before it moves it down a row: Remove would then take the axis the user did not pick), else on its
  // row.
  connect(axes_, &QAbstractItemModel::modelAboutToBeReset, this, [this] {
    const QModelIndex current = table_->currentIndex();
    row_before_reset_ = current.isValid() ? current.row() : -1;
    axis_before_reset_ = current.isValid() ? axes_->index(current.row(), AxesModel::Name).data().toString() : QString();
  });
  connect(axes_, &QAbstractItemModel::modelReset, this, [this] {
    int row = row_before_reset_;
    for (int r = 0; r < axes_->rowCount() && !axis_before_reset_.isEmpty(); ++r) {
      if (axes_->index(r, AxesModel::Name).data().toString() == axis_before_reset_) row = r;
    }
    if (row >= 0 && row < axes_->rowCount()) table_->setCurrentIndex(axes_->index(row, AxesModel::Name));
    update_actions();
  });
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &MeshPanel::update_actions);
  connect(doc_, &DesignDocument::design_changed, this, [this] {
    clear_messages();  // an edit that went through (or an undo, or another file) answers the last refusal
    sync_fields();
  });
  for (QSpinBox* box : {world_, devices_}) box->setFocusPolicy(Qt::StrongFocus);  // no edits by scrolling past
  sync_fields();
}

void MeshPanel::commit_pending() {
  world_->interpretText();
  devices_->interpretText();
  commit_name();
  commit_description();
}

// What was typed becomes the field's committed text first: the edit's design_changed then shows the design again
// (sync_fields keeps only uncommitted typing), and later edits and undos show theirs.
void MeshPanel::commit_name() {
  name_->setModified(false);
  if (name_->text() != q(doc_->design().name)) (void)set_design_name(name_->text());
}

void MeshPanel::commit_description() {
  if (description_->toPlainText() == description_shown_) return;
  description_shown_ = description_->toPlainText();
  (void)set_description(description_shown_);
}

bool MeshPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == description_ && event->type() == QEvent::FocusOut) commit_description();
  return QWidget::eventFilter(watched, event);
}

QList<QAction*> MeshPanel::actions_for_menu() const {
  return {add_, remove_, up_, down_, flatten_, unflatten_, clear_picks_};
}

void MeshPanel::sync_fields() {
  const Design& d = doc_->design();
  const QSignalBlocker b1(name_), b2(world_), b3(devices_);
  // What the user is typing and has not committed yet (a button of the dock takes no focus, so another edit can
  // arrive mid-word) stays: it is committed when the field is left, and wins then.
  if (!name_->isModified() && name_->text() != q(d.name)) name_->setText(q(d.name));
  const QString description = q(d.description.value_or(std::string()));
  const bool typing = description_->toPlainText() != description_shown_;
  if (!typing && description != description_given_) {
    const QSignalBlocker b4(description_);
    description_->setPlainText(description);
    description_given_ = description;
    description_shown_ = description_->toPlainText();
  }
  world_->setValue(static_cast<int>(d.world));
  world_->setSingleStep(static_cast<int>(d.devices_per_host));  // a step adds or removes a whole host
  devices_->setValue(static_cast<int>(d.devices_per_host));
  update_actions();
}

void MeshPanel::update_actions() {
  const int row = table_->currentIndex().isValid() ? table_->currentIndex().row() : -1;
  const auto ndim = static_cast<int>(doc_->design().mesh.names.size());
  const bool own = row >= 0 && row < ndim;
  remove_->setEnabled(row >= 0 && (!own || ndim > 1));
  up_->setEnabled(own && row > 0);
  down_->setEnabled(own && row + 1 < ndim);
  unflatten_->setEnabled(own);
  flatten_->setEnabled(!axes_->picked().empty());
  clear_picks_->setEnabled(!axes_->picked().empty());
}


void MeshPanel::clear_messages() {
  for (QLabel* l : {name_message_, world_message_, devices_message_, axes_message_}) show_message(l, QString());
}

QString MeshPanel::message(const QString& field) const {
  const QLabel* l = field == QLatin1String("name")      ? name_message_
                    : field == QLatin1String("world")   ? world_message_
                    : field == QLatin1String("devices") ? devices_message_
                                                        : axes_message_;
  return l->isHidden() ? QString() : l->text();
}

std::string MeshPanel::current_axis() const {
  const QModelIndex i = table_->currentIndex();
  return i.isValid() ? axes_->axis_name(i.row()) : std::string();
}

int MeshPanel::width_for_table() const {
  const QHeaderView* header = table_->horizontalHeader();
  const QAbstractItemView* view = table_;  // QTableView makes sizeHintForColumn protected; the base has it public
  int width = 2 * table_->frameWidth() + table_->verticalHeader()->sizeHint().width();
  for (int c = 0; c < header->count(); ++c) {
    width += std::max(header->sectionSizeHint(c), view->sizeHintForColumn(c));
  }
  const QMargins margins = layout() != nullptr ? layout()->contentsMargins() : QMargins();
  // And room for a vertical scroll bar, which the table takes when the plan area opens under the column.
  return width + margins.left() + margins.right() + table_->style()->pixelMetric(QStyle::PM_ScrollBarExtent);
}

void MeshPanel::select_axis(const std::string& name) {
  const int row = axes_->row_of(name);
  if (row < 0) return;
  table_->setCurrentIndex(axes_->index(row, AxesModel::Name));
  table_->selectRow(row);
}

bool MeshPanel::edit_field(QLabel* message, const QString& text, const std::function<Design(const Design&)>& edit) {
  QString error;
  const bool ok = doc_->edit(text, edit, &error);
  show_message(message, ok ? QString() : error);
  if (!ok) sync_fields();  // the field shows the design's value again
  return ok;
}

bool MeshPanel::set_design_name(const QString& name) {
  const std::string n = name.toStdString();
  return edit_field(name_message_, tr("Rename design to %1").arg(name), [&](const Design& d) {
    Design next = d;
    next.name = n;
    validate_design(next);
    return next;
  });
}

bool MeshPanel::set_description(const QString& text) {
  const QString trimmed = text.trimmed();
  const std::string t = trimmed.toStdString();
  const QString what = trimmed.isEmpty() ? tr("Clear description") : tr("Set description");
  return edit_field(description_message_, what, [&](const Design& d) {
    Design next = d;
    next.description = t.empty() ? std::nullopt : std::optional<std::string>(t);
    validate_design(next);
    return next;
  });
}

bool MeshPanel::set_world(std::int64_t world) {
  return edit_field(world_message_, tr("Set world to %1").arg(world),
                    [&](const Design& d) { return meshloom::set_world(d, world); });
}

bool MeshPanel::set_devices_per_host(std::int64_t devices) {
  return edit_field(devices_message_, tr("Set devices per host to %1").arg(devices),
                    [&](const Design& d) { return meshloom::set_devices_per_host(d, devices); });
}

bool MeshPanel::add_axis(const std::string& name, std::int64_t size) {
  const std::size_t at = insert_index();
  QString error;
  const bool ok = doc_->edit(tr("Add axis %1 of size %2").arg(q(name)).arg(size),
                             [&](const Design& d) { return meshloom::add_axis(d, at, name, size); }, &error);
  show_message(axes_message_, ok ? QString() : error);
  if (ok) select_axis(name);
  return ok;
}

bool MeshPanel::remove_current() {
  const QModelIndex cur = table_->currentIndex();
  if (!cur.isValid()) {
    show_message(axes_message_, tr("Select the axis to remove."));
    return false;
  }
  const std::string name = axes_->axis_name(cur.row());
  QString error;
  bool ok = false;
  if (axes_->is_flattened(cur.row())) {
    ok = doc_->edit(tr("Remove flattened axis %1").arg(q(name)),
                    [&](const Design& d) { return remove_flattened(d, name); }, &error);
  } else {
    const auto users = flattened_using(doc_->design(), name);
    const QString text = users.empty() ? tr("Remove axis %1").arg(q(name))
                                       : tr("Remove axis %1 (and flattened %2)").arg(q(name), joined(users, ", "));
    ok = doc_->edit(text, [&](const Design& d) { return remove_axis(d, name); }, &error);
  }
  show_message(axes_message_, ok ? QString() : error);
  return ok;
}

bool MeshPanel::move_current(int delta) {
  const QModelIndex cur = table_->currentIndex();
  const auto ndim = static_cast<int>(doc_->design().mesh.names.size());
  if (!cur.isValid() || cur.row() >= ndim) {
    show_message(axes_message_, tr("Select a mesh axis to move (flattened axes follow their axes)."));
    return false;
  }
  const int to = cur.row() + delta;
  if (to < 0 || to >= ndim) return false;
  const std::string name = axes_->axis_name(cur.row());
  QString error;
  const bool ok = doc_->edit(delta < 0 ? tr("Move %1 outer").arg(q(name)) : tr("Move %1 inner").arg(q(name)),
                             [&](const Design& d) { return move_axis(d, name, static_cast<std::size_t>(to)); }, &error);
  show_message(axes_message_, ok ? QString() : error);
  if (ok) select_axis(name);
  return ok;
}

bool MeshPanel::flatten_picked(const QString& name) {
  const auto picked = axes_->picked();
  if (picked.empty()) {
    show_message(axes_message_, tr("Tick the axes to flatten first."));
    return false;
  }
  const std::optional<std::string> flat_name =
      name.trimmed().isEmpty() ? std::nullopt : std::optional<std::string>(name.trimmed().toStdString());
  QString error;
  const QString label = flat_name ? q(*flat_name) : joined(picked, "_");
  const bool ok = doc_->edit(tr("Flatten %1 as %2").arg(joined(picked, ", "), label),
                             [&](const Design& d) { return flatten_axes(d, picked, flat_name); }, &error);
  show_message(axes_message_, ok ? QString() : error);
  if (ok) select_axis(label.toStdString());
  return ok;
}

bool MeshPanel::unflatten_current(const QString& sizes_text, const QString& names_text) {
  const std::string axis = current_axis();
  if (axis.empty() || axes_->is_flattened(axes_->row_of(axis))) {
    show_message(axes_message_, tr("Select the mesh axis to unflatten."));
    return false;
  }
  std::vector<std::int64_t> sizes;
  QString error;
  if (!parse_sizes(sizes_text, &sizes, &error)) {
    show_message(axes_message_, error);
    return false;
  }
  const auto names = parse_names(names_text);
  const bool ok = doc_->edit(tr("Unflatten %1 into %2").arg(q(axis), joined(names, ", ")),
                             [&](const Design& d) { return unflatten_axis(d, axis, sizes, names); }, &error);
  show_message(axes_message_, ok ? QString() : error);
  if (ok && !names.empty()) select_axis(names.front());
  return ok;
}

std::size_t MeshPanel::insert_index() const {
  const QModelIndex cur = table_->currentIndex();
  const std::size_t ndim = doc_->design().mesh.names.size();
  return cur.isValid() && static_cast<std::size_t>(cur.row()) < ndim ? static_cast<std::size_t>(cur.row()) + 1 : ndim;
}

std::unique_ptr<EditDialog> MeshPanel::make_add_dialog() {
  // A free name like axis2 and size 2 as the suggestion.
  int n = static_cast<int>(doc_->design().mesh.names.size());
  std::string suggestion;
  do {
    suggestion = "axis" + std::to_string(n++);
  } while (axes_->row_of(suggestion) >= 0);
  const std::size_t at = insert_index();
  const EditDialog::Check check = [this, at](const std::vector<QString>& t) -> EditDialog::Outcome {
    bool is_int = false;
    const qlonglong size = t[1].trimmed().toLongLong(&is_int);
    if (!is_int) return {std::nullopt, tr("Size \"%1\" is not a whole number").arg(t[1])};
    try {
      return {meshloom::add_axis(doc_->design(), at, t[0].trimmed().toStdString(), size), QString()};
    } catch (const std::exception& e) {
      return {std::nullopt, error_text(e)};
    }
  };
  return std::make_unique<EditDialog>(
      tr("Add axis"),
      std::vector<std::vector<QString>>{{tr("&Name"), q(suggestion), tr("e.g. cp")}, {tr("&Size"), QStringLiteral("2"), tr("e.g. 2")}},
      doc_->design(), check, this);
}

void MeshPanel::add_dialog() {
  const std::unique_ptr<EditDialog> dialog = make_add_dialog();
  if (dialog->exec() != QDialog::Accepted) return;
  (void)add_axis(dialog->field(0)->text().trimmed().toStdString(), dialog->field(1)->text().trimmed().toLongLong());
}

void MeshPanel::flatten_dialog() {
  const auto picked = axes_->picked();
  if (picked.empty()) {
    show_message(axes_message_, tr("Tick the axes to flatten first."));
    return;
  }
  // mesh[...] takes the axes in mesh order: ticked in another order, the dialog says so and flattens them in
  // mesh order (the same axis PyTorch would build from mesh[in order]).
  const auto in_order = axes_->picked_in_mesh_order();
  const QString prompt = in_order == picked
                             ? tr("Name of the flattened axis over %1:").arg(joined(picked, ", "))
                             : tr("Ticked %1; mesh[...] takes them in mesh order.\nName of the flattened axis over %2:")
                                   .arg(joined(picked, ", "), joined(in_order, ", "));
  bool ok = false;
  const QString name =
      QInputDialog::getText(this, tr("Flatten"), prompt, QLineEdit::Normal, joined(in_order, "_"), &ok);
  if (!ok) return;
  axes_->set_picked(in_order);
  (void)flatten_picked(name);
}

std::unique_ptr<EditDialog> MeshPanel::make_unflatten_dialog() {
  const std::string axis = current_axis();
  if (axis.empty() || axes_->is_flattened(axes_->row_of(axis))) return nullptr;
  const EditDialog::Check check = [this, axis](const std::vector<QString>& t) -> EditDialog::Outcome {
    std::vector<std::int64_t> sizes;
    QString error;
    if (!parse_sizes(t[0], &sizes, &error)) return {std::nullopt, error};
    try {
      return {unflatten_axis(doc_->design(), axis, sizes, parse_names(t[1])), QString()};
    } catch (const std::exception& e) {
      return {std::nullopt, error_text(e)};
    }
  };
  const std::int64_t size = doc_->mesh().size(AxisRef{axis});
  return std::make_unique<EditDialog>(
      tr("Unflatten %1").arg(q(axis)),
      std::vector<std::vector<QString>>{
          {tr("&Sizes"), QString(), tr("e.g. 2, %1 (their product is the axis size, %2)").arg(std::max<std::int64_t>(size / 2, 1)).arg(size)},
          {tr("&Names"), QString(), tr("e.g. %1_outer, %1_inner").arg(q(axis))}},
      doc_->design(), check, this);
}

void MeshPanel::unflatten_dialog() {
  const std::unique_ptr<EditDialog> dialog = make_unflatten_dialog();
  if (!dialog) {
    const std::string axis = current_axis();
    show_message(axes_message_, axis.empty() ? tr("Select the mesh axis to unflatten.")
                                             : tr("%1 is a flattened axis: unflatten splits mesh axes only.").arg(q(axis)));
    return;
  }
  if (dialog->exec() == QDialog::Accepted) (void)unflatten_current(dialog->field(0)->text(), dialog->field(1)->text());
}

}  // namespace meshloom::app
