// Message sizes as nccl-tests takes them: `-b 8 -e 64M -f 2` (bytes, with K, M and G suffixes of 1024, 1024^2 and
// 1024^3, either case), swept from the smallest to the largest by a factor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshloom::launcher {

// Most sizes in one sweep (a factor of 2 from 1 byte to 2^62 is 63).
inline constexpr std::size_t kMaxSweepSizes = 64;

// "8" -> 8, "64M" -> 67108864, "1k" -> 1024, "2G" -> 2147483648. At least 1 byte. ValueError naming the option and the
// text otherwise: `-b "12X": unknown size suffix 'X' (expected K, M or G)`.
[[nodiscard]] std::int64_t parse_size(const std::string& text, const std::string& option);

// min, min*f, min*f^2, ... up to max inclusive. ValueError when min > max or factor < 2.
[[nodiscard]] std::vector<std::int64_t> size_sweep(std::int64_t min_bytes, std::int64_t max_bytes, std::int64_t factor);

// A size for people: "8 B", "4 KiB", "64 MiB", "1.5 KiB", "3 GiB".
[[nodiscard]] std::string format_size(std::int64_t bytes);
// format_size, or "more than 8 EiB" for a product that `overflowed` 64 bits (the memory guards' sums).
[[nodiscard]] std::string format_size(std::int64_t bytes, bool overflowed);

// This host's physical memory in bytes (sysconf), 0 when it cannot be told.
[[nodiscard]] std::int64_t host_memory_bytes() noexcept;

}  // namespace meshloom::launcher
