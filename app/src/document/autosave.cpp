#include "document/autosave.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QSaveFile>
#include <QStandardPaths>
#include <QTimer>
#include <QUuid>

#include <algorithm>
#include <exception>

#include "document/design_document.hpp"
#include "meshloom/design/design.hpp"
#include "shell/inline_message.hpp"

namespace meshloom::app {

namespace {

const QString kCopySuffix = QStringLiteral(".meshloom.json");

QString sibling(const QString& copy, const QString& suffix) {
  return copy.left(copy.size() - kCopySuffix.size()) + suffix;
}

}  // namespace

Autosave::Autosave(DesignDocument* doc, QString dir, int interval_ms, QObject* parent)
    : QObject(parent), doc_(doc), dir_(std::move(dir)),
      key_(QUuid::createUuid().toString(QUuid::Id128).left(12)), timer_(new QTimer(this)) {
  QDir().mkpath(dir_);
  lock_ = std::make_unique<QLockFile>(QDir(dir_).filePath(key_ + QStringLiteral(".lock")));
  (void)lock_->tryLock(0);  // a fresh key: nobody else holds it
  timer_->setInterval(interval_ms);
  connect(timer_, &QTimer::timeout, this, [this] {
    QString error;
    if (!write_now(&error)) emit failed(error);
  });
  connect(doc_, &DesignDocument::modified_changed, this, [this](bool modified) {
    if (modified) {
      timer_->start();
    } else {
      timer_->stop();
      discard();
    }
  });
}

Autosave::~Autosave() = default;  // the lock is released; a copy left here means unsaved changes were dropped
                                  // by the caller on purpose (it discards on a clean close)

QString Autosave::copy_path() const { return QDir(dir_).filePath(key_ + kCopySuffix); }

bool Autosave::write_now(QString* error) {
  if (!doc_->is_modified()) {
    discard();
    return true;
  }
  const auto fail = [error](const QString& why) {
    if (error) *error = why;
    return false;
  };
  std::string text;
  try {
    text = to_json_text(doc_->design());
  } catch (const std::exception& e) {
    return fail(error_text(e));
  }
  for (const auto& [path, bytes] : {std::pair{copy_path(), QByteArray::fromStdString(text)},
                                    std::pair{sibling(copy_path(), QStringLiteral(".origin")), doc_->path().toUtf8()}}) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
      return fail(tr("cannot write autosave %1: %2").arg(path, file.errorString()));
    }
  }
  return true;
}

void Autosave::discard() {
  QFile::remove(copy_path());
  QFile::remove(sibling(copy_path(), QStringLiteral(".origin")));
}

std::vector<Autosave::Recovery> Autosave::pending(const QString& dir) {
  std::vector<Recovery> found;
  const QDir d(dir);
  for (const QFileInfo& info : d.entryInfoList({QStringLiteral("*") + kCopySuffix}, QDir::Files)) {
    const QString copy = info.absoluteFilePath();
    QLockFile lock(sibling(copy, QStringLiteral(".lock")));
    if (!lock.tryLock(0)) continue;  // its session is still running
    lock.unlock();
    QFile origin(sibling(copy, QStringLiteral(".origin")));
    const QString origin_path = origin.open(QIODevice::ReadOnly) ? QString::fromUtf8(origin.readAll()) : QString();
    found.push_back(Recovery{copy, origin_path, info.lastModified()});
  }
  std::sort(found.begin(), found.end(), [](const Recovery& a, const Recovery& b) { return a.when > b.when; });
  return found;
}

void Autosave::remove(const Recovery& recovery) {
  QFile::remove(recovery.copy);
  QFile::remove(sibling(recovery.copy, QStringLiteral(".origin")));
  QFile::remove(sibling(recovery.copy, QStringLiteral(".lock")));
}

QString Autosave::default_dir() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation)).filePath(QStringLiteral("autosave"));
}

}  // namespace meshloom::app
