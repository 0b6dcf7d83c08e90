// Engine-internal helpers for reading (and writing) the engine's strict JSON file formats: the design and the
// calibration. Not installed; nlohmann/json stays private to the engine. The launcher (same project, same
// nlohmann/json) reads its JSON Lines with parse_json and get_int too, so that one policy holds everywhere:
// duplicate keys and integers outside int64 are refused, never silently taken.
//
// Every reading failure is a ValueError whose message names the offending field by its path ("mesh.shape[1]",
// "axes.tp.all_reduce.alpha_us") and, where there is one, its value: "<path> = <value>: <reason>".
// What differs between formats is passed in: the document's noun ("a design", "a calibration") and the
// nesting limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/error.hpp"

namespace meshloom::detail {

using json = nlohmann::json;

// Most JSON values (scalars, arrays, objects) a file may hold by default.
inline constexpr std::size_t kMaxJsonValues = std::size_t{1} << 20;
// Longest rendering of an offending value in a message.
inline constexpr std::size_t kMaxRendered = 80;

// ---- messages ----------------------------------------------------------------------------------------------

// A value as compact JSON, cut to kMaxRendered characters ("...").
[[nodiscard]] std::string render(const json& value);
// A string as a JSON string literal, cut like render().
[[nodiscard]] std::string render_text(std::string_view text);
// A double as JSON would print it; inf, -inf and nan (which JSON cannot hold) as those words.
[[nodiscard]] std::string render_number(double value);
// "path.key" (or "key" at the top level) and "path[index]".
[[nodiscard]] std::string field(const std::string& path, std::string_view key);
[[nodiscard]] std::string item(const std::string& path, std::size_t index);
// ValueError "<path>: <why>" and "<path> = <rendered>: <why>".
[[noreturn]] void bad(const std::string& path, const std::string& why);
[[noreturn]] void bad_value(const std::string& path, const std::string& rendered, const std::string& why);
// "null", "a boolean", "an integer", "a non-integer number", "a string", "an array", "an object".
[[nodiscard]] std::string type_word(const json& value);
// "a, b, c".
[[nodiscard]] std::string join(const std::vector<std::string>& words);

// ---- JSON reading ------------------------------------------------------------------------------------------

// Parses text into a DOM, rejecting duplicate keys, nesting deeper than max_depth and more than max_values
// values; every failure is a ValueError.
[[nodiscard]] json parse_json(std::string_view text, std::size_t max_depth, std::size_t max_values = kMaxJsonValues);

// ValueError unless `value` is an object: "<noun> is a JSON object, got ..." at the top level (empty path).
void expect_object(const json& value, const std::string& path, std::string_view noun);
// Rejects keys outside `known` (naming the known ones: "<path or noun> has a, b"), then requires `required`.
void check_fields(const json& object, const std::string& path, std::string_view noun,
                  std::initializer_list<std::string_view> known, std::initializer_list<std::string_view> required);

// What an integer outside int64 is refused with: "<path> = <value>: out of range for a 64-bit integer".
inline constexpr const char* kOutOfRange = "out of range for a 64-bit integer";
// A JSON integer that fits in int64 (one written beyond 64 bits, which the parser reads as a double, included in
// the out-of-range refusal); ValueError "expected an integer, got ..." for anything else.
[[nodiscard]] std::int64_t get_int(const json& value, const std::string& path);
// Any JSON number (integer or not), as a double.
[[nodiscard]] double get_number(const json& value, const std::string& path);
[[nodiscard]] std::string get_string(const json& value, const std::string& path);
// An array of at most max_size elements ("<n> <what>; at most <max_size>" otherwise).
[[nodiscard]] const json::array_t& get_array(const json& value, const std::string& path, std::size_t max_size,
                                             std::string_view what);
[[nodiscard]] std::vector<std::int64_t> get_ints(const json& value, const std::string& path, std::size_t max_size,
                                                 std::string_view what);
[[nodiscard]] std::vector<std::string> get_strings(const json& value, const std::string& path, std::size_t max_size,
                                                   std::string_view what);

// ---- validation --------------------------------------------------------------------------------------------

[[nodiscard]] bool valid_utf8(std::string_view s);
// Names of 1 to max_chars characters of [A-Za-z0-9_] (and '.' when dots).
void check_name(const std::string& name, const std::string& path, std::size_t max_chars, bool dots);
// Text of min..max bytes of valid UTF-8 without NUL (and, when single_line, without control characters).
void check_text(const std::string& text, const std::string& path, std::size_t min, std::size_t max, bool single_line);
[[nodiscard]] std::string render_ints(const std::vector<std::int64_t>& values);
[[nodiscard]] std::string render_strings(const std::vector<std::string>& values);

// ---- writing -----------------------------------------------------------------------------------------------

// A JSON string literal.
[[nodiscard]] std::string str(std::string_view s);
// A double with full precision (round-trip exact), as JSON; ValueError for inf and nan.
[[nodiscard]] std::string number(double value);
// "[1, 2]" and "[\"a\", \"b\"]".
[[nodiscard]] std::string ints_inline(const std::vector<std::int64_t>& values);
[[nodiscard]] std::string strings_inline(const std::vector<std::string>& values);

// ---- files -------------------------------------------------------------------------------------------------

// A path in double quotes, '"' and '\' escaped, control characters as '?'.
[[nodiscard]] std::string quote_path(const std::filesystem::path& path);
// RuntimeError "<what> <quoted path>: <detail><strerror(err)>" (no strerror when err is 0).
[[noreturn]] void io_error(const std::string& what, const std::filesystem::path& path, const std::string& detail,
                           int err);
// The whole file. RuntimeError "cannot read <noun> <quoted path>: <strerror>" when it cannot be read (a
// directory included); ValueError "<quoted path>: the file is larger than <max_bytes> bytes (<n> MiB)".
[[nodiscard]] std::string read_file(const std::filesystem::path& path, std::string_view noun, std::size_t max_bytes);

// Runs parse(text) and prefixes any Error's message with the quoted path, keeping its kind.
template <class Parse>
auto with_path(const std::filesystem::path& path, Parse&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const Error& e) {
    raise(e.kind(), quote_path(path) + ": " + e.message());
  }
}

}  // namespace meshloom::detail
