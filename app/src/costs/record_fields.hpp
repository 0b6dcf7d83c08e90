// Reading the launcher's JSON Lines records, field by field, for the app's two readers (measurements.cpp: bench
// records; prediction_points.cpp: run and validate records), with one JSON policy (the engine's json_read: integers
// past int64 refused) and one wording of problems: `field "x" = <value>: expected ...`, thrown as Bad and reported by
// the reader per line. Internal to those two files (it includes nlohmann/json, which no app header does).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "json_read.hpp"
#include "meshloom/error.hpp"

namespace meshloom::app::records {

using json = nlohmann::json;

inline constexpr std::size_t kExcerptChars = 40;

// A value as compact JSON, cut to kExcerptChars ("...").
inline std::string show(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kExcerptChars) text = text.substr(0, kExcerptChars) + "...";
  return text;
}

// The start of a line, as a JSON string, for "not a JSON object" problems.
inline std::string excerpt(std::string_view line) {
  std::string text(line.substr(0, kExcerptChars));
  if (line.size() > kExcerptChars) text += "...";
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

// A field problem, caught per line.
struct Bad {
  std::string why;
};

inline const json& field(const json& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end()) throw Bad{std::string("missing field \"") + name + "\""};
  return *it;
}

// The engine's integer policy (json_read.hpp): a value past int64 is refused, never wrapped.
inline std::int64_t integer_value(const json& v, const std::string& what) {
  try {
    return detail::get_int(v, what);
  } catch (const Error& e) {
    throw Bad{e.message()};
  }
}
inline std::int64_t integer(const json& obj, const char* name) {
  return integer_value(field(obj, name), std::string("field \"") + name + "\"");
}

inline std::string text(const json& obj, const char* name) {
  const json& v = field(obj, name);
  if (!v.is_string()) throw Bad{std::string("field \"") + name + "\" = " + show(v) + ": expected a string"};
  return v.get<std::string>();
}

}  // namespace meshloom::app::records
