// What every `--batch` interface of the launcher shares (mesh_batch.cpp, plan_batch.cpp): the JSON Lines loop
// (one answer line per input line, flushed, bounded line length, read errors), the checks every line gets before
// it is parsed, strict field access with messages that name the offending value, and JSON writing helpers.
//
// Messages follow one pattern: `<path> = <value>: <reason>`, where <path> names the field ("mesh[1]",
// "ops[0].rank") and <value> is the offending JSON value, compact and cut after 80 characters.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iosfwd>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "meshloom/error.hpp"

namespace meshloom::launcher::jsonl {

using json = nlohmann::json;

// Most entries in one list of a request (axes, names, sizes, ...).
inline constexpr std::size_t kMaxListEntries = 64;

[[noreturn]] void value_error(const std::string& message);

// ---- JSON text -----------------------------------------------------------------------------------------------

// `s` as a JSON string literal (invalid UTF-8 replaced).
[[nodiscard]] std::string quote(const std::string& s);
// A JSON value as quoted in an error message: compact, cut after 80 characters.
[[nodiscard]] std::string show(const json& v);
[[nodiscard]] std::string show_key(const std::string& key);
// "an integer", "a string", "an array", ...
[[nodiscard]] std::string type_word(const json& v);
// "a, b, c", cut after max_words words.
[[nodiscard]] std::string join_words(const std::vector<std::string>& words,
                                     std::size_t max_words = std::numeric_limits<std::size_t>::max());

// {"ok":false,"error":"<what>"}; `what` is "<Kind>: <message>".
[[nodiscard]] std::string error_object(const std::string& what);
void append_ints(std::string& out, const std::vector<std::int64_t>& values);
void append_strings(std::string& out, const std::vector<std::string>& values);
// A double as a JSON number that reads back to the same double ("6.0", "0.30000000000000004", "1e+20"); a value
// that is not finite, which JSON cannot hold, as null.
void append_double(std::string& out, double v);

// ---- Field access --------------------------------------------------------------------------------------------

// A JSON integer that fits in 64 bits; ValueError `<path> = <value>: expected an integer, got ...` or `<path> =
// <value>: out of range for a 64-bit integer` otherwise (the engine's detail::get_int: one policy everywhere).
[[nodiscard]] std::int64_t get_int(const json& v, const std::string& path);
// A JSON number (integer or not) as a double.
[[nodiscard]] double get_number(const json& v, const std::string& path);
[[nodiscard]] std::string get_string(const json& v, const std::string& path);
// A list of at most kMaxListEntries entries; `what` names them in the error ("integers").
void check_list(const json& v, const std::string& path, const std::string& what);
[[nodiscard]] std::vector<std::int64_t> get_ints(const json& v, const std::string& path);
[[nodiscard]] std::vector<std::string> get_strings(const json& v, const std::string& path);

// Rejects any field of `obj` not in `allowed`: `<where>unknown field "x"<context> (expected a, b, c)`.
void check_fields(const json& obj, const std::string& where, const std::vector<std::string>& allowed,
                  const std::string& context);
// The field, or nullptr when `obj` has none of that name.
[[nodiscard]] const json* find_field(const json& obj, const char* name);
// The field; `<where>missing field "name"<context>` otherwise.
[[nodiscard]] const json& require_field(const json& obj, const char* name, const std::string& where,
                                        const std::string& context);

// ---- Lines ---------------------------------------------------------------------------------------------------

// The line parsed as a JSON object, after the checks every batch line gets first: at most max_line_bytes
// bytes, not blank, nested at most max_depth levels (checked before the parser sees it), valid JSON without
// duplicate keys (the engine's reader, detail::parse_json: `<path>: duplicate key "k"`), an object.
// ValueError otherwise.
[[nodiscard]] json parse_line_object(const std::string& line, std::size_t max_line_bytes, std::size_t max_depth);

// Runs `body` (which answers one line) and turns whatever it throws into an error object: an engine Error as
// "<Kind>: <message>", anything else as a RuntimeError. Never throws.
template <class Body>
[[nodiscard]] std::string guarded_answer(Body&& body) noexcept {
  try {
    try {
      return body();
    } catch (const Error& e) {
      return error_object(e.text());
    } catch (const std::bad_alloc&) {
      return error_object("RuntimeError: out of memory while answering the line");
    } catch (const std::exception& e) {
      return error_object(std::string("RuntimeError: ") + e.what());
    }
  } catch (...) {
    return R"({"ok":false,"error":"RuntimeError: the line could not be answered"})";
  }
}

// Answers one input line (without its newline) with one output line (without a newline); must not throw.
using LineAnswerer = std::function<std::string(const std::string& line)>;

// Reads JSON Lines from `in` until its end and writes exactly one answer line per input line to `out`, in order,
// flushing after each. A final line without a newline counts; a trailing "\r" is dropped; a line longer than
// max_line_bytes is answered with a ValueError (and only max_line_bytes + 1 of its bytes are kept). Returns 0, or
// 1 when `in` or `out` fails: a read error (an exception from `in`'s streambuf, as libstdc++'s file buffer
// throws) sets badbit on `in` and ends the input, the lines before it answered and a partial last line not.
int run_json_lines(std::istream& in, std::ostream& out, std::size_t max_line_bytes, const LineAnswerer& answer);

}  // namespace meshloom::launcher::jsonl
