// Text helpers shared by the launcher's commands: parsing the integers and lists the user types, writing integer
// lists (flat or nested) and word lists, and reporting a command's error. Header-only, so every command uses the
// same single version.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "meshloom/error.hpp"

namespace meshloom::launcher {

// ---- Parsing -------------------------------------------------------------------------------------------------

// `s` without its leading and trailing spaces and tabs.
[[nodiscard]] inline std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// "a, b,c" split at `sep`, each part trimmed (empty parts kept).
[[nodiscard]] inline std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  for (;;) {
    const auto end = text.find(sep);
    parts.push_back(trim(text.substr(0, end)));
    if (end == std::string_view::npos) return parts;
    text.remove_prefix(end + 1);
  }
}

// A decimal 64-bit integer, optionally signed ("-3", "+3"); surrounding spaces and tabs are ignored. nullopt for
// anything else, an out-of-range value included.
[[nodiscard]] inline std::optional<std::int64_t> to_int(std::string_view text) {
  const std::string s = trim(text);
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (first != last && *first == '+') ++first;
  std::int64_t v = 0;
  const auto r = std::from_chars(first, last, v);
  if (first == last || r.ec != std::errc() || r.ptr != last) return std::nullopt;
  return v;
}

// Why to_int refused `text`: "out of range for a 64-bit integer" for a decimal integer past int64, else "not an
// integer".
[[nodiscard]] inline std::string not_an_int_why(std::string_view text) {
  std::string s = trim(text);
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.erase(0, 1);
  const bool digits = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  return digits ? "out of range for a 64-bit integer" : "not an integer";
}

// An option value as an integer; ValueError `<option> "<text>": not an integer` (or `: out of range for a 64-bit
// integer`) otherwise.
[[nodiscard]] inline std::int64_t parse_int(const std::string& text, const std::string& option) {
  const auto v = to_int(text);
  if (!v) raise(ErrorKind::ValueError, option + " \"" + text + "\": " + not_an_int_why(text));
  return *v;
}

// "2,4" -> {2, 4}. `option` names the option in errors.
[[nodiscard]] inline std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<std::int64_t> values;
  for (const auto& part : split(text, ',')) {
    if (part.empty()) {
      raise(ErrorKind::ValueError,
            option + " \"" + text + "\": empty entry (expected integers separated by commas)");
    }
    const auto v = to_int(part);
    if (!v) raise(ErrorKind::ValueError, option + " \"" + text + "\": \"" + part + "\" is " + not_an_int_why(part));
    values.push_back(*v);
  }
  return values;
}

// "dp,tp" -> {"dp", "tp"}; empty names are rejected.
[[nodiscard]] inline std::vector<std::string> parse_name_list(const std::string& text, const std::string& option) {
  auto names = split(text, ',');
  for (const auto& n : names) {
    if (n.empty()) {
      raise(ErrorKind::ValueError, option + " \"" + text + "\": empty name (expected names separated by commas)");
    }
  }
  return names;
}

// ---- Writing -------------------------------------------------------------------------------------------------

// A share as a percentage with one decimal: 0.1234 -> "12.3%".
[[nodiscard]] inline std::string percent_text(double share) {
  char cell[32];
  std::snprintf(cell, sizeof cell, "%.1f%%", 100 * share);
  return cell;
}

inline void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// `v` right-aligned in `width` characters (no padding when it is wider).
inline void append_int(std::string& out, std::int64_t v, std::size_t width) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  const auto len = static_cast<std::size_t>(r.ptr - buf);
  if (len < width) out.append(width - len, ' ');
  out.append(buf, r.ptr);
}

inline void append_item(std::string& out, std::int64_t v, std::size_t width) { append_int(out, v, width); }
inline void append_item(std::string& out, const std::string& s, std::size_t width) {
  if (s.size() < width) out.append(width - s.size(), ' ');
  out += s;
}

struct JoinStyle {
  std::string_view separator = " ";
  std::size_t width = 0;  // right-align every item to this width
  // After this many items: "<separator>... (<count> in all)".
  std::size_t max_items = std::numeric_limits<std::size_t>::max();
};

// {0, 1, 2} -> "0 1 2"; {"a", "b"} with separator ", " -> "a, b".
template <class T>
[[nodiscard]] std::string join(const std::vector<T>& items, const JoinStyle& style = {}) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i == style.max_items) {
      s += style.separator;
      s += "... (" + std::to_string(items.size()) + " in all)";
      return s;
    }
    if (i > 0) s += style.separator;
    append_item(s, items[i], style.width);
  }
  return s;
}

// `values` from `pos` on, in row-major order, as nested lists of the given dims: dims {2, 2} -> [[0,1],[2,3]].
// `pos` advances past the values written. Recursion depth = dims.size().
inline void append_nested(std::string& out, std::span<const std::int64_t> dims, const std::vector<std::int64_t>& values,
                          std::size_t& pos, std::string_view separator = ",", std::size_t width = 0) {
  if (dims.empty()) {
    append_int(out, values[pos++], width);
    return;
  }
  out += '[';
  for (std::int64_t i = 0; i < dims.front(); ++i) {
    if (i > 0) out += separator;
    append_nested(out, dims.subspan(1), values, pos, separator, width);
  }
  out += ']';
}

// ---- Errors --------------------------------------------------------------------------------------------------

// Runs a command's `body` and returns the exit status it returns. When it throws, writes "error: <Kind>: <message>"
// to `err` (anything but an engine Error as "error: RuntimeError: <what()>") and returns 2.
template <class Body>
[[nodiscard]] int status_or_error(std::ostream& err, Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    err << "error: " << e.text() << "\n";
  } catch (const std::exception& e) {
    err << "error: RuntimeError: " << e.what() << "\n";
  }
  return 2;
}

// ---- Tables --------------------------------------------------------------------------------------------------

// `rows` as columns padded to their widest cell, two spaces apart; right[c] aligns column c to the right (the last
// column of a left-aligned row is not padded).
inline void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                        const std::vector<bool>& right) {
  std::vector<std::size_t> width(right.size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      const std::string pad(width[c] - row[c].size(), ' ');
      line += right[c] ? pad + row[c] : (c + 1 == row.size() ? row[c] : row[c] + pad);
    }
    out << line << "\n";
  }
}

}  // namespace meshloom::launcher
