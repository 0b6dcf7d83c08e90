// The shared parts of the launcher's `--batch` interfaces (see batch_io.hpp).
#include "batch_io.hpp"

#include <algorithm>
#include <cmath>
#include <istream>
#include <ostream>
#include <streambuf>
#include <string_view>

#include "json_read.hpp"
#include "text_format.hpp"

namespace meshloom::launcher::jsonl {

namespace {
// Longest JSON value quoted in an error message.
constexpr std::size_t kMaxShown = 80;
}  // namespace

void value_error(const std::string& message) { raise(ErrorKind::ValueError, message); }

// ---- JSON text -----------------------------------------------------------------------------------------------

std::string quote(const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

std::string show(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > kMaxShown) {
    s.resize(kMaxShown - 3);
    s += "...";
  }
  return s;
}

std::string show_key(const std::string& key) { return show(json(key)); }

std::string type_word(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_float: return "a non-integer number";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    default: return "an unsupported value";
  }
}

std::string join_words(const std::vector<std::string>& words, std::size_t max_words) {
  return join(words, {.separator = ", ", .max_items = max_words});
}

std::string error_object(const std::string& what) { return "{\"ok\":false,\"error\":" + quote(what) + "}"; }

void append_ints(std::string& out, const std::vector<std::int64_t>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    append_int(out, values[i]);
  }
  out += ']';
}

void append_strings(std::string& out, const std::vector<std::string>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += quote(values[i]);
  }
  out += ']';
}

void append_double(std::string& out, double v) {
  // nlohmann/json writes the shortest text that reads back to the same double, and keeps a ".0" on integral
  // values, so a cost reads as a number with a fraction ("6.0") whatever its value.
  out += std::isfinite(v) ? json(v).dump() : "null";
}

// ---- Field access --------------------------------------------------------------------------------------------

std::int64_t get_int(const json& v, const std::string& path) { return detail::get_int(v, path); }

double get_number(const json& v, const std::string& path) {
  if (!v.is_number()) value_error(path + " = " + show(v) + ": expected a number, got " + type_word(v));
  return v.get<double>();
}

std::string get_string(const json& v, const std::string& path) {
  if (!v.is_string()) value_error(path + " = " + show(v) + ": expected a string, got " + type_word(v));
  return v.get<std::string>();
}

void check_list(const json& v, const std::string& path, const std::string& what) {
  if (!v.is_array()) value_error(path + " = " + show(v) + ": expected a list of " + what + ", got " + type_word(v));
  if (v.size() > kMaxListEntries) {
    value_error(path + " holds " + std::to_string(v.size()) + " entries: at most " +
                std::to_string(kMaxListEntries) + " are allowed");
  }
}

std::vector<std::int64_t> get_ints(const json& v, const std::string& path) {
  check_list(v, path, "integers");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(get_int(v[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

std::vector<std::string> get_strings(const json& v, const std::string& path) {
  check_list(v, path, "strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(get_string(v[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

void check_fields(const json& obj, const std::string& where, const std::vector<std::string>& allowed,
                  const std::string& context) {
  for (const auto& item : obj.items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end()) {
      value_error(where + "unknown field " + show_key(item.key()) + context + " (expected " + join_words(allowed) +
                  ")");
    }
  }
}

const json* find_field(const json& obj, const char* name) {
  const auto it = obj.find(name);
  return it == obj.end() ? nullptr : &*it;
}

const json& require_field(const json& obj, const char* name, const std::string& where, const std::string& context) {
  const json* v = find_field(obj, name);
  if (v == nullptr) value_error(where + "missing field \"" + name + "\"" + context);
  return *v;
}

// ---- Lines ---------------------------------------------------------------------------------------------------

namespace {

// Rejects nesting deeper than max_depth before the parser sees the line.
void check_depth(const std::string& line, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char ch : line) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (ch == '\\') {
        escaped = true;
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > max_depth) {
        value_error("the line nests JSON arrays and objects more than " + std::to_string(max_depth) + " levels deep");
      }
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
}

// The parser's message (its "[json.exception...] " prefix already dropped by the engine's reader), cut short.
std::string parse_message(const char* what) {
  std::string s = what;
  if (s.size() > 240) {
    s.resize(237);
    s += "...";
  }
  return s;
}

std::string too_long_message(std::size_t length, std::size_t max_line_bytes) {
  return "the line holds " + std::to_string(length) + " bytes, over the limit of " + std::to_string(max_line_bytes);
}

// Reads one line (without its newline) from `buf`, keeping at most max_bytes + 1 of its bytes in `line` (so that
// a trailing "\r" can still be dropped) and its full length in `length`; returns false at the end of the input.
// Byte by byte through the streambuf's own buffer: no sentry per character, and no read past the newline, so an
// interactive writer gets each answer before it sends the next line. A streambuf reports a read error by
// throwing from underflow (libstdc++'s filebuf does, with an ios_base::failure); that is marked on `in` as badbit,
// as istream's own reads do, and ends the input.
bool read_line(std::istream& in, std::streambuf& buf, std::size_t max_bytes, std::string& line, std::size_t& length) {
  constexpr auto eof = std::char_traits<char>::eof();
  line.clear();
  length = 0;
  bool any = false;
  try {
    for (int c = buf.sbumpc(); c != eof; c = buf.sbumpc()) {
      any = true;
      if (c == '\n') return true;
      ++length;
      if (line.size() <= max_bytes) line.push_back(static_cast<char>(c));
    }
  } catch (...) {
    try {
      in.setstate(std::ios::badbit);
    } catch (...) {  // in.exceptions() asks for a throw: the state is set all the same
    }
    return false;  // a partial line is not answered
  }
  return any;
}

}  // namespace

json parse_line_object(const std::string& line, std::size_t max_line_bytes, std::size_t max_depth) {
  if (line.size() > max_line_bytes) value_error(too_long_message(line.size(), max_line_bytes));
  if (line.find_first_not_of(" \t\r\n") == std::string::npos) value_error("empty line: expected a JSON object");
  check_depth(line, max_depth);
  json doc;
  try {
    // The engine's reader: duplicate keys are refused ("mesh.shape: duplicate key ..."), as in design files.
    doc = detail::parse_json(line, max_depth);
  } catch (const Error& e) {
    constexpr std::string_view kSyntax = "not valid JSON: ";
    if (e.message().starts_with(kSyntax)) value_error("the line is " + parse_message(e.message().c_str()));
    throw;
  }
  if (!doc.is_object()) value_error("the line must be a JSON object, got " + type_word(doc) + ": " + show(doc));
  return doc;
}

int run_json_lines(std::istream& in, std::ostream& out, std::size_t max_line_bytes, const LineAnswerer& answer) {
  std::streambuf* buf = in.rdbuf();
  if (buf == nullptr || in.bad()) return 1;
  std::string line;
  std::size_t length = 0;
  while (read_line(in, *buf, max_line_bytes, line, length)) {
    const bool too_long = length > max_line_bytes + 1;  // bytes were dropped
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string answer_line =
        too_long ? error_object("ValueError: " + too_long_message(length, max_line_bytes)) : answer(line);
    out << answer_line << '\n' << std::flush;
    if (!out) return 1;
  }
  return in.bad() ? 1 : 0;
}

}  // namespace meshloom::launcher::jsonl
