#include "document/design_document.hpp"

#include <QDir>
#include <QFileInfo>
#include <QStringList>
#include <QUndoCommand>
#include <QUndoStack>

#include <exception>
#include <filesystem>
#include <utility>

#include "meshloom/error.hpp"
#include "shell/inline_message.hpp"

namespace meshloom::app {

namespace {

// A document's file, named absolutely: the path outlives the working directory it was typed in (the autosave's
// record of it is read by a later session, started elsewhere, to recover the changes onto this file and no other).
QString absolute_path(const QString& path) { return path.isEmpty() ? QString() : QFileInfo(path).absoluteFilePath(); }

Design first_design() {
  Design d;
  d.name = "untitled";
  d.world = 8;
  d.devices_per_host = 8;
  d.mesh.shape = {8};
  d.mesh.names = {"dp"};
  return d;
}

// `design` with a relative calibration, which named a file from the folder `from`, naming the same file from `to`:
// relative where the file lies in `to` or below, absolute otherwise. An absolute path, or none, stays as it is.
// Example: "cal/c.json" from /a to /a/b is "/a/cal/c.json"; from /a/b to /a, "b/cal/c.json".
Design rebased(Design design, const QDir& from, const QDir& to) {
  if (!design.calibration || std::filesystem::path(*design.calibration).is_absolute()) return design;
  // Resolved as the file system does (a symbolic link, then ".."), where the file is there to resolve.
  const QString named = from.absoluteFilePath(QString::fromStdString(*design.calibration));
  const QString canonical = QFileInfo(named).canonicalFilePath();
  const QString file = canonical.isEmpty() ? QDir::cleanPath(named) : canonical;
  const QString relative = to.relativeFilePath(file);
  design.calibration = (relative.startsWith(QLatin1String("..")) ? file : relative).toStdString();
  return design;
}

}  // namespace

std::optional<std::string> calibration_file(const Design& design, const QString& design_path) {
  if (!design.calibration) return std::nullopt;
  const QString named = QString::fromStdString(*design.calibration);
  if (design_path.isEmpty() && !std::filesystem::path(*design.calibration).is_absolute()) return design.calibration;
  return QDir::cleanPath(QFileInfo(design_path).absoluteDir().absoluteFilePath(named)).toStdString();
}

Design with_absolute_calibration(Design design, const QString& design_path) {
  design.calibration = calibration_file(design, design_path);
  return design;
}

// One edit of the design: the values before and after, swapped by undo and redo.
class DesignEditCommand : public QUndoCommand {
public:
  DesignEditCommand(DesignDocument* doc, Design before, Design after, const QString& text)
      : QUndoCommand(text), doc_(doc), before_(std::move(before)), after_(std::move(after)) {}
  void redo() override { doc_->set_design(after_); }
  void undo() override { doc_->set_design(before_); }
  // The design moved from the folder `from` to `to` (save as): its paths name the same files from there.
  void rebase(const QDir& from, const QDir& to) {
    before_ = rebased(std::move(before_), from, to);
    after_ = rebased(std::move(after_), from, to);
  }

private:
  DesignDocument* doc_;
  Design before_;
  Design after_;
};

DesignDocument::DesignDocument(QObject* parent)
    : QObject(parent), design_(first_design()), mesh_(build_mesh(design_.mesh, design_.world)),
      undo_(new QUndoStack(this)) {
  connect(undo_, &QUndoStack::cleanChanged, this, [this](bool clean) {
    if (!resetting_) emit modified_changed(!clean);
  });
}

QString DesignDocument::display_name() const {
  if (!path_.isEmpty()) return QFileInfo(path_).fileName();
  return template_.isEmpty() ? tr("untitled") : tr("untitled (from %1)").arg(template_);
}

bool DesignDocument::is_modified() const { return !undo_->isClean(); }

void DesignDocument::new_design() { reset(first_design(), QString()); }

bool DesignDocument::open(const QString& path, QString* error) {
  try {
    Design design = load_design(path.toStdString());
    reset(std::move(design), path);
    return true;
  } catch (const std::exception& e) {
    if (error) *error = error_text(e);
    return false;
  }
}

bool DesignDocument::open_copy(const QString& path, QString* error) {
  try {
    // The copy has no folder of its own: a relative calibration would lose its file, so it points at it.
    Design design = with_absolute_calibration(load_design(path.toStdString()), path);
    reset(std::move(design), QString());
    template_ = QFileInfo(path).fileName();
    emit path_changed(path_);  // the name shown changed
    return true;
  } catch (const std::exception& e) {
    if (error) *error = error_text(e);
    return false;
  }
}

void DesignDocument::reset(Design design, const QString& path, bool modified) {
  DeviceMesh mesh = build_mesh(design.mesh, design.world);  // may throw: then nothing changes
  const bool was_modified = is_modified();
  // The stack's own signals must reach the undo and redo actions; only the relay of cleanChanged is held
  // back, and modified_changed is emitted once below, after the new design is in place.
  resetting_ = true;
  undo_->clear();
  if (modified) undo_->resetClean();
  resetting_ = false;
  design_ = std::move(design);
  mesh_ = std::move(mesh);
  path_ = absolute_path(path);
  template_.clear();
  emit path_changed(path_);
  emit design_changed();
  emit document_replaced();
  if (was_modified != modified) emit modified_changed(modified);
}

bool DesignDocument::save(const QString& path, QString* error) {
  // Saved into another folder, a calibration named relative to the old one is named from the new one, in the file
  // and in every design the undo stack holds, so that it still names the same file.
  const QDir from = QFileInfo(path_).absoluteDir();
  const QDir to = QFileInfo(path).absoluteDir();
  const bool moved = !path_.isEmpty() && from != to;
  Design saved = moved ? rebased(design_, from, to) : design_;
  try {
    save_design(saved, path.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = error_text(e);
    return false;
  }
  const bool renamed = absolute_path(path) != path_;
  const bool rebased_now = moved && !(saved == design_);
  if (moved) {
    design_ = std::move(saved);
    for (int i = 0; i < undo_->count(); ++i) {
      // Every command on the stack is one this document pushed (edit()), so it may be changed.
      if (auto* c = dynamic_cast<DesignEditCommand*>(const_cast<QUndoCommand*>(undo_->command(i)))) c->rebase(from, to);
    }
  }
  path_ = absolute_path(path);
  template_.clear();
  undo_->setClean();
  if (renamed) emit path_changed(path_);
  if (rebased_now) emit design_changed();  // the same file, named otherwise
  return true;
}

bool DesignDocument::edit(const QString& text, const std::function<Design(const Design&)>& edit, QString* error) {
  Design next;
  try {
    next = edit(design_);
    (void)build_mesh(next.mesh, next.world);  // the edits validate; this only proves the mesh builds
  } catch (const std::exception& e) {
    if (error) *error = error_text(e);
    return false;
  }
  if (next == design_) return true;
  const QString said = text + side_effects(design_, next);
  undo_->push(new DesignEditCommand(this, design_, std::move(next), said));
  emit edited(said);
  return true;
}

QString DesignDocument::side_effects(const Design& before, const Design& after) {
  QStringList changes;
  if (after.world != before.world) changes << tr("world %1 → %2").arg(before.world).arg(after.world);
  if (after.devices_per_host != before.devices_per_host) {
    changes << tr("devices per host %1 → %2").arg(before.devices_per_host).arg(after.devices_per_host);
  }
  return changes.isEmpty() ? QString() : QStringLiteral("; ") + changes.join(QStringLiteral(", "));
}

void DesignDocument::set_design(Design design) {
  mesh_ = build_mesh(design.mesh, design.world);
  design_ = std::move(design);
  emit design_changed();
}

}  // namespace meshloom::app
