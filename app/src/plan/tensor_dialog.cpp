#include "plan/tensor_dialog.hpp"

#include <QComboBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QRegularExpression>
#include <QStringList>

#include <exception>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "costs/cost_chart.hpp"
#include "meshloom/design/edit.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/plan/state.hpp"
#include "shell/dialog_foot.hpp"
#include "shell/inline_message.hpp"

namespace meshloom::app {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

bool parse_shape(const QString& text, std::vector<std::int64_t>* shape, QString* error) {
  shape->clear();
  QString body = text.trimmed();
  if ((body.startsWith(QLatin1Char('[')) && body.endsWith(QLatin1Char(']'))) ||
      (body.startsWith(QLatin1Char('(')) && body.endsWith(QLatin1Char(')')))) {
    body = body.mid(1, body.size() - 2);
  }
  // "1024x512", "1024 × 512": an x between two sizes separates them as a comma does.
  static const QRegularExpression times(QStringLiteral("(?<=\\d)\\s*[x×*]\\s*(?=[-+]?\\d)"));
  body.replace(times, QStringLiteral(","));
  static const QRegularExpression separators(QStringLiteral("[\\s,]+"));
  for (const QString& token : body.split(separators, Qt::SkipEmptyParts)) {
    bool ok = false;
    const qlonglong size = token.toLongLong(&ok);
    if (!ok) {
      if (error) *error = QObject::tr("shape \"%1\": \"%2\" is not a whole number").arg(text.trimmed(), token);
      shape->clear();
      return false;
    }
    shape->push_back(size);
  }
  return true;
}

void add_dtype_items(QComboBox* box) {
  for (const std::string_view name : dtype_names()) {
    const std::int64_t bytes = itemsize(*dtype_from_string(name));
    box->addItem(bytes == 1 ? QObject::tr("%1 (1 byte)").arg(q(name)) : QObject::tr("%1 (%2 bytes)").arg(q(name)).arg(bytes),
                 q(name));
  }
}

TensorDialog::TensorDialog(Design before, const DesignTensor& initial, QWidget* parent)
    : QDialog(parent), before_(std::move(before)) {
  setWindowTitle(tr("Add tensor"));
  setMinimumWidth(480);
  auto* form = new QFormLayout(this);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  name_ = new QLineEdit(q(initial.name), this);
  name_->setPlaceholderText(tr("e.g. layers.0.attention.wq"));
  name_->setToolTip(tr("1 to 256 characters of A-Z, a-z, 0-9, _ and . (module paths), unique in the design"));
  shape_ = new QLineEdit(shape_text(initial.shape), this);
  shape_->setPlaceholderText(tr("e.g. 1024, 512 (empty: a scalar)"));
  shape_->setToolTip(tr("The global shape: one size per dim, separated by commas"));
  dtype_ = new QComboBox(this);
  add_dtype_items(dtype_);
  dtype_->setCurrentIndex(dtype_->findData(q(to_string(initial.dtype))));
  dtype_->setToolTip(tr("The element type (its size is the planner's itemsize)"));
  src_ = new QLineEdit(q(to_string(initial.src)), this);
  src_->setToolTip(tr("Where the tensor starts: one placement per mesh axis, R, S(d), P(op), e.g. S(0)R"));
  dst_ = new QLineEdit(q(to_string(initial.dst)), this);
  dst_->setToolTip(tr("Where the tensor must end, in the same form as the source"));
  form->addRow(tr("&Name"), name_);
  form->addRow(tr("S&hape"), shape_);
  form->addRow(tr("D&type"), dtype_);
  form->addRow(tr("&Source"), src_);
  form->addRow(tr("T&arget"), dst_);
  foot_ = std::make_unique<DialogFoot>(this, form);
  for (QLineEdit* field : {name_, shape_, src_, dst_}) connect(field, &QLineEdit::textChanged, this, &TensorDialog::update);
  connect(dtype_, &QComboBox::currentIndexChanged, this, &TensorDialog::update);
  update();
}

TensorDialog::Outcome TensorDialog::check() const {
  DesignTensor t;
  t.name = name_->text().trimmed().toStdString();
  QString error;
  if (!parse_shape(shape_->text(), &t.shape, &error)) return {std::nullopt, error};
  const std::optional<DType> dtype = dtype_from_string(dtype_->currentData().toString().toStdString());
  if (!dtype) return {std::nullopt, tr("Choose a dtype")};
  t.dtype = *dtype;
  for (const auto& [field, key, state] : {std::tuple{src_, "src", &t.src}, std::tuple{dst_, "dst", &t.dst}}) {
    std::string why;
    const std::optional<State> parsed = try_parse_state(field->text().trimmed().toStdString(), &why);
    if (!parsed) {
      return {std::nullopt, QStringLiteral("%1 = \"%2\": %3").arg(QLatin1String(key), field->text().trimmed(), q(why))};
    }
    *state = *parsed;
  }
  try {
    (void)add_tensor(before_, t);
  } catch (const std::exception& e) {
    return {std::nullopt, error_text(e)};
  }
  return {std::move(t), QString()};
}

std::optional<DesignTensor> TensorDialog::tensor() const { return check().tensor; }
TensorDialog::~TensorDialog() = default;

QString TensorDialog::preview() const { return foot_->preview(); }
QString TensorDialog::error() const { return foot_->error(); }
bool TensorDialog::can_accept() const { return foot_->can_accept(); }

void TensorDialog::update() {
  const Outcome o = check();
  QString said;
  if (o.tensor) {
    double bytes = static_cast<double>(itemsize(o.tensor->dtype));
    for (const auto size : o.tensor->shape) bytes *= static_cast<double>(size);
    said = tr("Adds %1: %2 %3 (%4), %5 → %6")
               .arg(q(o.tensor->name), shape_text(o.tensor->shape), q(to_string(o.tensor->dtype)), format_bytes(bytes),
                    q(to_string(o.tensor->src)), q(to_string(o.tensor->dst)));
  }
  foot_->show(said, o.error, o.tensor.has_value());
}

}  // namespace meshloom::app
