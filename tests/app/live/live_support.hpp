// What the live-run tests share: reading a run's files as lines.
#pragma once

#include <QFile>
#include <QString>
#include <QStringList>

namespace meshloom::app::testing {

// The lines of a text file, without the empty ones at its end; none when it cannot be read.
inline QStringList lines_of(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
  QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
  while (!lines.isEmpty() && lines.back().isEmpty()) lines.pop_back();
  return lines;
}

}  // namespace meshloom::app::testing
