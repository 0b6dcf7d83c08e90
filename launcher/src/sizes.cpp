#include "sizes.hpp"

#include <unistd.h>

#include <cstdio>
#include <limits>
#include <string>

#include "meshloom/error.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

std::int64_t parse_size(const std::string& text, const std::string& option) {
  const std::string s = trim(text);
  auto fail = [&](const std::string& why) -> std::int64_t {
    raise(ErrorKind::ValueError, option + " \"" + text + "\": " + why);
  };
  if (s.empty()) return fail("empty size (expected bytes, e.g. 8, 64K, 64M or 1G)");
  std::string digits = s;
  std::int64_t unit = 1;
  const char last = s.back();
  if (last < '0' || last > '9') {
    switch (last) {
      case 'K': case 'k': unit = std::int64_t{1} << 10; break;
      case 'M': case 'm': unit = std::int64_t{1} << 20; break;
      case 'G': case 'g': unit = std::int64_t{1} << 30; break;
      default: return fail(std::string("unknown size suffix '") + last + "' (expected K, M or G)");
    }
    digits.pop_back();
    if (digits.empty()) return fail("no number before the suffix");
  }
  for (const char c : digits) {
    if (c < '0' || c > '9') {
      if (c == '-') return fail("sizes must be >= 1 byte");
      return fail("not a size (expected bytes, e.g. 8, 64K, 64M or 1G)");
    }
  }
  const auto v = to_int(digits);
  if (!v) return fail("too large");
  if (*v > std::numeric_limits<std::int64_t>::max() / unit) return fail("too large");
  const std::int64_t bytes = *v * unit;
  if (bytes < 1) return fail("sizes must be >= 1 byte");
  return bytes;
}

std::vector<std::int64_t> size_sweep(std::int64_t min_bytes, std::int64_t max_bytes, std::int64_t factor) {
  if (min_bytes < 1) raise(ErrorKind::ValueError, "the smallest size (-b) must be >= 1 byte, not " + std::to_string(min_bytes));
  if (min_bytes > max_bytes) {
    raise(ErrorKind::ValueError, "the smallest size (-b " + std::to_string(min_bytes) +
                                     ") is larger than the largest (-e " + std::to_string(max_bytes) + ")");
  }
  if (factor < 2) raise(ErrorKind::ValueError, "-f " + std::to_string(factor) + ": the step factor must be >= 2");
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = min_bytes;;) {
    sizes.push_back(s);
    if (s > max_bytes / factor) break;
    s *= factor;
    if (s > max_bytes) break;
  }
  return sizes;
}

std::string format_size(std::int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t unit = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024.0 && unit + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++unit;
  }
  char buf[48];
  if (unit == 0 || v == static_cast<double>(static_cast<std::int64_t>(v))) {
    std::snprintf(buf, sizeof buf, "%lld %s", static_cast<long long>(v), kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g %s", v, kUnits[unit]);
  }
  return buf;
}

std::string format_size(std::int64_t bytes, bool overflowed) {
  return overflowed ? std::string("more than 8 EiB") : format_size(bytes);
}

std::int64_t host_memory_bytes() noexcept {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  std::int64_t bytes = 0;
  if (pages <= 0 || page <= 0 || __builtin_mul_overflow(std::int64_t{pages}, std::int64_t{page}, &bytes)) return 0;
  return bytes;
}

}  // namespace meshloom::launcher
