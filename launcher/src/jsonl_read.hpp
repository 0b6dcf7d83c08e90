// Reading the launcher's JSON Lines records (bench's, run's and validate's), one line at a time: every failure is a
// ValueError naming the file, the line and the field, `"run.jsonl" line 3: field "time_us" = "x": expected a
// number`. Lines are read by the engine's strict reader (json_read.hpp: duplicate keys and integers outside int64
// are refused, never silently taken).
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "batch_io.hpp"
#include "json_read.hpp"
#include "meshloom/comm/transport.hpp"
#include "meshloom/error.hpp"

namespace meshloom::launcher::jsonl {

// Deepest nesting of a record (the config's mesh and flattened axes need 4 levels).
constexpr std::size_t kMaxRecordDepth = 16;

struct LineContext {
  using json = nlohmann::json;
  const std::string& source;
  std::size_t line;
  [[noreturn]] void fail(const std::string& why) const {
    raise(ErrorKind::ValueError, "\"" + source + "\" line " + std::to_string(line) + ": " + why);
  }
  const json& field(const json& obj, const char* name) const {
    const auto it = obj.find(name);
    if (it == obj.end()) fail(std::string("missing field \"") + name + "\"");
    return *it;
  }
  // The engine's policy (detail::get_int): an integer that fits in int64, never one that wraps.
  std::int64_t integer_at(const json& v, const std::string& path) const {
    try {
      return detail::get_int(v, "field " + jsonl::quote(path));
    } catch (const Error& e) {
      fail(e.message());
    }
  }
  std::int64_t integer(const json& obj, const char* name) const { return integer_at(field(obj, name), name); }
  // The line as a JSON object, read by the engine's reader: duplicate keys are refused (naming the key).
  json record(const std::string& text) const {
    json j;
    try {
      j = detail::parse_json(text, kMaxRecordDepth);
    } catch (const Error& e) {
      // A syntax error reads as "not a JSON object"; valid syntax the reader cannot hold (a number past a double's
      // range: "not valid JSON: number overflow parsing '1e400'") keeps the reader's words.
      if (e.message().starts_with("not valid JSON") && !e.message().starts_with("not valid JSON: number overflow")) {
        fail("not a JSON object");
      }
      fail(e.message());
    }
    if (!j.is_object()) fail("not a JSON object");
    return j;
  }
  double number(const json& obj, const char* name) const {
    const json& v = field(obj, name);
    if (!v.is_number()) fail(std::string("field \"") + name + "\" = " + jsonl::show(v) + ": expected a number");
    return v.get<double>();
  }
  std::string text(const json& obj, const char* name) const {
    const json& v = field(obj, name);
    if (!v.is_string()) fail(std::string("field \"") + name + "\" = " + jsonl::show(v) + ": expected a string");
    return v.get<std::string>();
  }
};

// Every record of `text` in order: `visit(ctx, record, type)` for each line that is not blank, `ctx` naming `source`
// and the line, `record` the line read as a JSON object, `type` its "type" field (a line without one is a ValueError).
// A line may end in "\r\n". A last line without its newline that is not JSON is a record cut off mid-write (the
// writer killed, the disk full): it ends the file, as if the run had stopped before it.
template <typename Visit>
void for_each_record(const std::string& text, const std::string& source, Visit&& visit) {
  std::istringstream in(text);
  std::size_t number = 0;
  const bool unterminated = !text.empty() && text.back() != '\n';
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (unterminated && in.peek() == std::char_traits<char>::eof() && !nlohmann::json::accept(line)) return;
    const LineContext ctx{source, number};
    const nlohmann::json record = ctx.record(line);
    visit(ctx, record, ctx.text(record, "type"));
  }
}

// A config record's "command" must be one of `accepted` (when `required`, a config without one is refused too):
// another command's records are named as such, `field "command" = "bench": these are bench's records, and <reads>`.
inline void check_command(const LineContext& ctx, const nlohmann::json& config,
                          std::initializer_list<std::string_view> accepted, bool required, const std::string& reads) {
  if (!required && !config.contains("command")) return;
  const std::string command = config.contains("command") ? ctx.text(config, "command") : std::string();
  if (std::find(accepted.begin(), accepted.end(), command) != accepted.end()) return;
  ctx.fail("field \"command\" = \"" + command + "\": these are " + (command.empty() ? "another command" : command) +
           "'s records, and " + reads);
}

// A config record's list of strings `name`, one per rank (ValueError naming the field and `what` otherwise).
inline std::vector<std::string> per_rank_strings(const LineContext& ctx, const nlohmann::json& config, const char* name,
                                                 std::string_view what) {
  const nlohmann::json& list = ctx.field(config, name);
  const auto bad = [&] {
    ctx.fail("field \"" + std::string(name) + "\" = " + show(list) + ": expected a list of " + std::string(what) +
             " (strings)");
  };
  if (!list.is_array()) bad();
  std::vector<std::string> out;
  for (const auto& h : list) {
    if (!h.is_string()) bad();
    out.push_back(h.get<std::string>());
  }
  return out;
}

// A config record's "hosts": every rank's host.
inline std::vector<std::string> hosts_of(const LineContext& ctx, const nlohmann::json& config) {
  return per_rank_strings(ctx, config, "hosts", "hosts");
}

// A config record's "cpus": every rank's CPU list ("0-3,8").
inline std::vector<std::string> cpus_of(const LineContext& ctx, const nlohmann::json& config) {
  return per_rank_strings(ctx, config, "cpus", "CPU lists");
}

// A config record's "transport" (comm/transport.hpp): an object of settings that shape a collective's cost and their
// values, each as a record holds it (comm::recordable_setting), as a calibration file must hold them.
inline comm::TransportSettings transport_of(const LineContext& ctx, const nlohmann::json& config) {
  const nlohmann::json& value = ctx.field(config, "transport");
  if (!value.is_object()) ctx.fail("field \"transport\" = " + show(value) + ": expected an object of strings");
  comm::TransportSettings out;
  for (const auto& [name, setting] : value.items()) {
    const std::string what = "field \"transport\" has " + show(nlohmann::json(name));
    if (!comm::recordable_setting(name) || !comm::shapes_collective_cost(name)) {
      ctx.fail(what + ": not a setting that shapes a collective's cost (meshloom/comm/transport.hpp lists them)");
    }
    if (!setting.is_string() || !comm::recordable_setting(setting.get<std::string>())) {
      ctx.fail(what + " = " + show(setting) + ": expected a string of at most " +
               std::to_string(comm::kMaxTransportChars) + " bytes on one line");
    }
    out[name] = setting.get<std::string>();
  }
  return out;
}

// The whole of a records file: RuntimeError "cannot read records \"v.jsonl\": <strerror>" when it cannot be read (a
// directory included), ValueError when it holds more than `max_bytes` ("\"v.jsonl\" is larger than 256 MiB; not a
// bench JSON Lines file", `what` naming the kind).
inline std::string read_records_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what) {
  try {
    return detail::read_file(path, "records", max_bytes);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::ValueError) throw;
    raise(ErrorKind::ValueError, detail::quote_path(path) + " is larger than " + std::to_string(max_bytes >> 20) +
                                     " MiB; not " + std::string(what));
  }
}

}  // namespace meshloom::launcher::jsonl
