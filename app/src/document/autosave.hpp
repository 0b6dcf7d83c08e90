// Autosave: while the document has unsaved changes, a copy of it is written every `interval` to a private
// directory (atomically, in the design format), with the path of the file it belongs to beside it. Saving or
// discarding removes the copy. After a crash the copy stays; the next start finds it (pending()) and offers
// to recover it. Each running window holds a lock next to its copy, so a second instance never offers the
// live copy of the first.
//
// Files, per session key K: K.meshloom.json (the design), K.origin (the original path, UTF-8, empty for an
// untitled design), K.lock (QLockFile, held while the session runs).
#pragma once

#include <QDateTime>
#include <QObject>
#include <QString>

#include <memory>
#include <vector>

class QLockFile;
class QTimer;

namespace meshloom::app {

class DesignDocument;

class Autosave : public QObject {
  Q_OBJECT

public:
  // A copy left by a session that is no longer running.
  struct Recovery {
    QString copy;    // the autosaved design
    QString origin;  // the file it belongs to; empty for an untitled design
    QDateTime when;  // when it was written
  };

  Autosave(DesignDocument* doc, QString dir, int interval_ms, QObject* parent = nullptr);
  ~Autosave() override;

  // Writes the copy now if the document has unsaved changes and removes it otherwise. Returns false with the
  // cause in *error when the copy cannot be written (the document is untouched either way).
  bool write_now(QString* error = nullptr);
signals:
  // A timed write failed (disk full, directory not writable): the cause, naming the path.
  void failed(const QString& message);

public:
  // Removes this session's copy (after a save, or when the user discards the changes).
  void discard();
  [[nodiscard]] QString copy_path() const;
  [[nodiscard]] const QString& dir() const noexcept { return dir_; }

  // Copies in `dir` whose session is gone, newest first.
  [[nodiscard]] static std::vector<Recovery> pending(const QString& dir);
  // Removes a recovered (or declined) copy and its origin file.
  static void remove(const Recovery& recovery);
  // <AppLocalDataLocation>/autosave.
  [[nodiscard]] static QString default_dir();

private:
  DesignDocument* doc_;
  QString dir_;
  QString key_;
  QTimer* timer_;
  std::unique_ptr<QLockFile> lock_;
};

}  // namespace meshloom::app
