#include "meshloom/comm/transport.hpp"

#include <array>

#include "json_read.hpp"

namespace meshloom::comm {

namespace {

// `name` is `prefix` or `prefix` followed by '_' and more.
bool is_or_under(std::string_view name, std::string_view prefix) noexcept {
  return name.starts_with(prefix) && (name.size() == prefix.size() || name[prefix.size()] == '_');
}

std::string shown(const TransportSettings& settings, const std::string& name) {
  const auto it = settings.find(name);
  return it == settings.end() ? std::string("unset") : "\"" + it->second + "\"";
}

// What a calibration file holds (calibration.cpp's reader): single-line UTF-8 of at most kMaxTransportChars bytes.
bool recordable(const std::string& text) {
  if (text.size() > kMaxTransportChars || !detail::valid_utf8(text)) return false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

}  // namespace

bool shapes_collective_cost(std::string_view name) noexcept {
  constexpr std::array<std::string_view, 7> kOpenMpi{"OMPI_MCA_btl", "OMPI_MCA_pml", "OMPI_MCA_mtl",
                                                     "OMPI_MCA_coll", "OMPI_MCA_osc", "OMPI_MCA_mpi_yield_when_idle",
                                                     "OMPI_MCA_mpi_leave_pinned"};
  for (const std::string_view prefix : kOpenMpi) {
    if (is_or_under(name, prefix)) return true;
  }
  if (name.starts_with("UCX_") && name.size() > 4) return !name.starts_with("UCX_LOG_");
  if (name.starts_with("NCCL_") && name.size() > 5) {
    constexpr std::array<std::string_view, 4> kNotCost{"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE",
                                                       "NCCL_COMM_ID"};
    for (const std::string_view other : kNotCost) {
      if (name == other) return false;
    }
    return true;
  }
  return false;
}

TransportSettings transport_settings(const std::vector<std::string>& environment) {
  TransportSettings out;
  for (const std::string& entry : environment) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    std::string value = entry.substr(eq + 1);
    if (!shapes_collective_cost(name) || !recordable(name) || !recordable(value)) continue;
    out[name] = std::move(value);
  }
  return out;
}

std::string transport_difference(const TransportSettings& a, std::string_view a_name, const TransportSettings& b,
                                 std::string_view b_name) {
  TransportSettings names = a;
  names.insert(b.begin(), b.end());
  std::string out;
  for (const auto& [name, unused] : names) {
    (void)unused;
    const auto in_a = a.find(name);
    const auto in_b = b.find(name);
    if (in_a != a.end() && in_b != b.end() && in_a->second == in_b->second) continue;
    if (!out.empty()) out += "; ";
    out += name + " is " + shown(a, name) + " in " + std::string(a_name) + " and " + shown(b, name) + " in " +
           std::string(b_name);
  }
  return out;
}

}  // namespace meshloom::comm
