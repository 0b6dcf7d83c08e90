#include "json_read.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

namespace meshloom::detail {

// ---- messages ----------------------------------------------------------------------------------------

std::string render(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kMaxRendered) {
    text.resize(kMaxRendered);
    text += "...";
  }
  return text;
}

std::string render_text(std::string_view text) { return render(json(std::string(text))); }

std::string render_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return render(json(value));
}

std::string field(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string item(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

void bad(const std::string& path, const std::string& why) { raise(ErrorKind::ValueError, path + ": " + why); }

void bad_value(const std::string& path, const std::string& rendered, const std::string& why) {
  raise(ErrorKind::ValueError, path + " = " + rendered + ": " + why);
}

std::string type_word(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a non-integer number";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "an unsupported value";
  }
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// ---- JSON reading ------------------------------------------------------------------------------------

json parse_json(std::string_view text, std::size_t max_depth, std::size_t max_values) {
  struct Frame {
    bool is_array = false;
    std::size_t count = 0;  // arrays: elements completed
    std::string key;        // objects: current key
    std::set<std::string> keys;
  };
  std::vector<Frame> stack;
  std::size_t values = 0;
  auto where = [&stack]() {
    std::string path;
    for (std::size_t i = 0; i + 1 < stack.size(); ++i) {
      path = stack[i].is_array ? item(path, stack[i].count) : field(path, stack[i].key);
    }
    return path.empty() ? std::string("top level") : path;
  };
  auto element_done = [&stack]() {
    if (!stack.empty() && stack.back().is_array) ++stack.back().count;
  };
  json::parser_callback_t callback = [&](int /*depth*/, json::parse_event_t event, json& parsed) -> bool {
    if (++values > max_values) {
      raise(ErrorKind::ValueError, "the JSON holds more than " + std::to_string(max_values) + " values");
    }
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        stack.push_back(Frame{event == json::parse_event_t::array_start, 0, {}, {}});
        if (stack.size() > max_depth) {
          raise(ErrorKind::ValueError, where() + ": JSON nested deeper than " + std::to_string(max_depth) + " levels");
        }
        break;
      case json::parse_event_t::key: {
        std::string key = parsed.get<std::string>();
        if (!stack.back().keys.insert(key).second) {
          stack.back().key = key;
          stack.push_back(Frame{});
          raise(ErrorKind::ValueError, where() + ": duplicate key " + render_text(key));
        }
        stack.back().key = std::move(key);
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        stack.pop_back();
        element_done();
        break;
      case json::parse_event_t::value: element_done(); break;
    }
    return true;
  };
  // nlohmann's reader takes a NUL byte for the end of the input, which would accept whatever follows it.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const std::string_view before = text.substr(0, nul);
    const std::size_t line_start = before.rfind('\n');
    const std::size_t column = line_start == std::string_view::npos ? nul + 1 : nul - line_start;
    raise(ErrorKind::ValueError, "not valid JSON: a NUL byte at line " +
                                     std::to_string(1 + std::count(before.begin(), before.end(), '\n')) +
                                     ", column " + std::to_string(column) + " (JSON text holds none)");
  }
  try {
    return json::parse(text.begin(), text.end(), callback, true, false);
  } catch (const json::exception& e) {
    std::string what = e.what();
    if (what.starts_with("[json.exception.")) {
      const auto close = what.find("] ");
      if (close != std::string::npos) what = what.substr(close + 2);
    }
    raise(ErrorKind::ValueError, "not valid JSON: " + what);
  }
}

void expect_object(const json& value, const std::string& path, std::string_view noun) {
  if (!value.is_object()) {
    if (path.empty()) raise(ErrorKind::ValueError, std::string(noun) + " is a JSON object, got " + type_word(value));
    bad_value(path, render(value), "expected an object, got " + type_word(value));
  }
}

void check_fields(const json& object, const std::string& path, std::string_view noun,
                  std::initializer_list<std::string_view> known, std::initializer_list<std::string_view> required) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::vector<std::string> words(known.begin(), known.end());
      bad(field(path, key), "unknown field; " + (path.empty() ? std::string(noun) : path) + " has " + join(words));
    }
  }
  for (std::string_view key : required) {
    if (!object.contains(key)) bad(field(path, key), "required field is missing");
  }
}

std::int64_t get_int(const json& value, const std::string& path) {
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      bad_value(path, render(value), kOutOfRange);
    }
    return static_cast<std::int64_t>(value.get<std::uint64_t>());
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) {
    // An integer written beyond 64 bits reaches here as a double (the parser keeps what it cannot hold exactly).
    const double d = value.get<double>();
    constexpr double kTwo63 = 9223372036854775808.0;
    if (std::isfinite(d) && std::trunc(d) == d && (d >= kTwo63 || d <= -kTwo63)) {
      bad_value(path, render(value), kOutOfRange);
    }
  }
  bad_value(path, render(value), "expected an integer, got " + type_word(value));
}

double get_number(const json& value, const std::string& path) {
  if (value.is_number_unsigned()) return static_cast<double>(value.get<std::uint64_t>());
  if (value.is_number_integer()) return static_cast<double>(value.get<std::int64_t>());
  if (value.is_number_float()) return value.get<double>();
  bad_value(path, render(value), "expected a number, got " + type_word(value));
}

std::string get_string(const json& value, const std::string& path) {
  if (!value.is_string()) bad_value(path, render(value), "expected a string, got " + type_word(value));
  return value.get<std::string>();
}

const json::array_t& get_array(const json& value, const std::string& path, std::size_t max_size, std::string_view what) {
  if (!value.is_array()) bad_value(path, render(value), "expected an array, got " + type_word(value));
  const auto& array = value.get_ref<const json::array_t&>();
  if (array.size() > max_size) {
    bad_value(path, render(value),
              std::to_string(array.size()) + " " + std::string(what) + "; at most " + std::to_string(max_size));
  }
  return array;
}

std::vector<std::int64_t> get_ints(const json& value, const std::string& path, std::size_t max_size, std::string_view what) {
  const auto& array = get_array(value, path, max_size, what);
  std::vector<std::int64_t> out;
  out.reserve(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) out.push_back(get_int(array[i], item(path, i)));
  return out;
}

std::vector<std::string> get_strings(const json& value, const std::string& path, std::size_t max_size, std::string_view what) {
  const auto& array = get_array(value, path, max_size, what);
  std::vector<std::string> out;
  out.reserve(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) out.push_back(get_string(array[i], item(path, i)));
  return out;
}

// ---- validation --------------------------------------------------------------------------------------

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t extra = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xe0) == 0xc0) {
      extra = 1;
      cp = c & 0x1fU;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2;
      cp = c & 0x0fU;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3;
      cp = c & 0x07U;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3fU);
    }
    const std::uint32_t min = extra == 1 ? 0x80U : extra == 2 ? 0x800U : 0x10000U;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += extra + 1;
  }
  return true;
}

void check_name(const std::string& name, const std::string& path, std::size_t max_chars, bool dots) {
  const bool ok = !name.empty() && name.size() <= max_chars && std::all_of(name.begin(), name.end(), [dots](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (dots && c == '.');
  });
  if (!ok) {
    bad_value(path, render_text(name), "names must be 1 to " + std::to_string(max_chars) + " characters of A-Z, a-z, 0-9" +
                                           (dots ? ", _ and ." : " and _"));
  }
}

void check_text(const std::string& text, const std::string& path, std::size_t min, std::size_t max, bool single_line) {
  if (text.size() < min || text.size() > max) {
    bad_value(path, render_text(text), "must be " + std::to_string(min) + " to " + std::to_string(max) + " bytes long, not " +
                                      std::to_string(text.size()));
  }
  if (!valid_utf8(text)) bad_value(path, render_text(text), "not valid UTF-8");
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u == 0 || (single_line && (u < 0x20 || u == 0x7f))) {
      bad_value(path, render_text(text), "control characters are not allowed here");
    }
  }
}

std::string render_ints(const std::vector<std::int64_t>& values) { return render(json(values)); }
std::string render_strings(const std::vector<std::string>& values) { return render(json(values)); }

// ---- writing -----------------------------------------------------------------------------------------

std::string str(std::string_view s) { return json(std::string(s)).dump(); }

std::string number(double value) {
  if (!std::isfinite(value)) raise(ErrorKind::ValueError, render_number(value) + " cannot be written as JSON");
  // nlohmann prints the shortest digits that read back to the same double (and ".0" for integral values).
  return json(value).dump();
}

std::string ints_inline(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

std::string strings_inline(const std::vector<std::string>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + str(values[i]);
  return out + "]";
}

// ---- files -------------------------------------------------------------------------------------------

std::string quote_path(const std::filesystem::path& path) {
  std::string out = "\"";
  for (char c : path.string()) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void io_error(const std::string& what, const std::filesystem::path& path, const std::string& detail, int err) {
  raise(ErrorKind::RuntimeError, what + " " + quote_path(path) + ": " + detail + (err != 0 ? std::strerror(err) : ""));
}

std::string read_file(const std::filesystem::path& path, std::string_view noun, std::size_t max_bytes) {
  const std::string what = "cannot read " + std::string(noun);
  // Opened without blocking, so that a FIFO nobody writes reads as empty instead of hanging; reads then block as usual
  // (a pipe that has a writer, as `<(...)` gives, is read to its end).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) io_error(what, path, "", errno);
  if (const int flags = ::fcntl(fd, F_GETFL); flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
    const int err = errno;
    ::close(fd);
    io_error(what, path, "", err);
  }
  std::string text;
  std::array<char, 65536> buffer{};
  while (true) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      io_error(what, path, "", err);
    }
    if (n == 0) break;
    text.append(buffer.data(), static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      constexpr std::size_t kMiB = std::size_t{1} << 20;
      const std::string mib = max_bytes % kMiB == 0 ? " (" + std::to_string(max_bytes / kMiB) + " MiB)" : "";
      raise(ErrorKind::ValueError,
            quote_path(path) + ": the file is larger than " + std::to_string(max_bytes) + " bytes" + mib);
    }
  }
  ::close(fd);
  return text;
}

}  // namespace meshloom::detail
