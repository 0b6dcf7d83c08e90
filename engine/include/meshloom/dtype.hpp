// Element types of tensors, shared by design files, the planner's itemsize, and the communication backends.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace meshloom {

enum class DType : std::uint8_t {
  Float32, Float16, BFloat16, Float64, Int32, Int64, Int8, UInt8, Float8E4M3, Float8E5M2
};

// "float32", "float16", "bfloat16", "float64", "int32", "int64", "int8", "uint8", "float8_e4m3", "float8_e5m2".
[[nodiscard]] std::string_view to_string(DType dtype) noexcept;
// The inverse of to_string, and PyTorch's name "float8_e4m3fn" for float8_e4m3; nullopt for anything else.
[[nodiscard]] std::optional<DType> dtype_from_string(std::string_view text) noexcept;
// Bytes per element: 4, 2, 2, 8, 4, 8, 1, 1, 1, 1.
[[nodiscard]] std::int64_t itemsize(DType dtype) noexcept;
// Every dtype's name, in the order above.
[[nodiscard]] std::vector<std::string_view> dtype_names();

}  // namespace meshloom
