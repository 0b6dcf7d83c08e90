#include "meshloom/comm/transport.hpp"

#include <array>

#include "json_read.hpp"

namespace meshloom::comm {

namespace {

// `name` is `prefix`, or `prefix` followed by '_' (and anything after it).
bool is_or_under(std::string_view name, std::string_view prefix) noexcept {
  return name.starts_with(prefix) && (name.size() == prefix.size() || name[prefix.size()] == '_');
}

bool of_open_mpi(std::string_view name) noexcept {
  constexpr std::array<std::string_view, 7> kOpenMpi{"OMPI_MCA_btl", "OMPI_MCA_pml", "OMPI_MCA_mtl",
                                                     "OMPI_MCA_coll", "OMPI_MCA_osc", "OMPI_MCA_mpi_yield_when_idle",
                                                     "OMPI_MCA_mpi_leave_pinned"};
  if (name.ends_with("_verbose")) return false;
  for (const std::string_view prefix : kOpenMpi) {
    if (is_or_under(name, prefix)) return true;
  }
  return false;
}

bool of_ucx(std::string_view name) noexcept {
  return name.starts_with("UCX_") && name.size() > 4 && !name.starts_with("UCX_LOG_");
}

bool of_nccl(std::string_view name) noexcept {
  constexpr std::array<std::string_view, 4> kNotCost{"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE",
                                                     "NCCL_COMM_ID"};
  if (!name.starts_with("NCCL_") || name.size() == 5) return false;
  for (const std::string_view other : kNotCost) {
    if (name == other) return false;
  }
  return true;
}

std::string shown(const TransportSettings& settings, const std::string& name) {
  const auto it = settings.find(name);
  return it == settings.end() ? std::string("unset") : detail::str(it->second);
}

}  // namespace

bool recordable_setting(std::string_view text) noexcept {
  if (text.size() > kMaxTransportChars || !detail::valid_utf8(text)) return false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

bool shapes_collective_cost(std::string_view name) noexcept {
  return name == kSchedulerSetting || of_open_mpi(name) || of_ucx(name) || of_nccl(name);
}

TransportSettings transport_settings(const std::vector<std::string>& environment) {
  TransportSettings out;
  for (const std::string& entry : environment) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if (name == kSchedulerSetting || !shapes_collective_cost(name) || !recordable_setting(name)) continue;
    std::string value = entry.substr(eq + 1);
    out.emplace(name, recordable_setting(value) ? std::move(value) : std::string("?"));
  }
  return out;
}

TransportSettings settings_of_backend(const TransportSettings& settings, std::string_view backend) {
  TransportSettings out;
  for (const auto& [name, value] : settings) {
    const bool of_backend = backend == "mpi"    ? of_open_mpi(name) || of_ucx(name)
                            : backend == "nccl" ? of_nccl(name)
                                                : true;
    const bool used = name == kSchedulerSetting || of_backend;
    if (used) out.emplace(name, value);
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

std::string transport_difference(std::string_view backend, const TransportSettings& a, std::string_view a_name,
                                 const TransportSettings& b, std::string_view b_name) {
  return transport_difference(settings_of_backend(a, backend), a_name, settings_of_backend(b, backend), b_name);
}

}  // namespace meshloom::comm
