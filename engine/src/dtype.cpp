#include "meshloom/dtype.hpp"

#include <array>
#include <utility>

namespace meshloom {

namespace {
constexpr std::array<std::pair<DType, std::string_view>, 10> kDTypes{{
    {DType::Float32, "float32"},
    {DType::Float16, "float16"},
    {DType::BFloat16, "bfloat16"},
    {DType::Float64, "float64"},
    {DType::Int32, "int32"},
    {DType::Int64, "int64"},
    {DType::Int8, "int8"},
    {DType::UInt8, "uint8"},
    {DType::Float8E4M3, "float8_e4m3"},
    {DType::Float8E5M2, "float8_e5m2"},
}};
}  // namespace

std::string_view to_string(DType dtype) noexcept {
  for (const auto& [value, name] : kDTypes) {
    if (value == dtype) return name;
  }
  return "unknown";
}

std::optional<DType> dtype_from_string(std::string_view text) noexcept {
  for (const auto& [value, name] : kDTypes) {
    if (name == text) return value;
  }
  if (text == "float8_e4m3fn") return DType::Float8E4M3;  // PyTorch's name, as `plan --dtype` takes it
  return std::nullopt;
}

std::int64_t itemsize(DType dtype) noexcept {
  switch (dtype) {
    case DType::Float64:
    case DType::Int64: return 8;
    case DType::Float32:
    case DType::Int32: return 4;
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Int8:
    case DType::UInt8:
    case DType::Float8E4M3:
    case DType::Float8E5M2: return 1;
  }
  return 1;
}

std::vector<std::string_view> dtype_names() {
  std::vector<std::string_view> names;
  for (const auto& [value, name] : kDTypes) names.push_back(name);
  return names;
}

}  // namespace meshloom
