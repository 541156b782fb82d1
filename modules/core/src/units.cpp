#include "cardio/core/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <numbers>

namespace cardio::units {
namespace {

struct UnitDef {
  std::string_view name;
  Dimension dim;
  double factor;  // value in internal units of 1 of this unit
};

// Factors to mm, ms, kPa, mg, mN (and GB for data sizes).
constexpr std::array<UnitDef, 58> kUnits{{
    {"mm", Dimension::length, 1.0},
    {"cm", Dimension::length, 10.0},
    {"m", Dimension::length, 1000.0},
    {"um", Dimension::length, 1e-3},
    {"ms", Dimension::time, 1.0},
    {"s", Dimension::time, 1000.0},
    {"us", Dimension::time, 1e-3},
    {"kPa", Dimension::pressure, 1.0},
    {"Pa", Dimension::pressure, 1e-3},
    {"MPa", Dimension::pressure, 1e3},
    {"mmHg", Dimension::pressure, kMmHgInKPa},
    {"mg/mm^3", Dimension::density, 1.0},
    {"g/cm^3", Dimension::density, 1.0},
    {"g/mL", Dimension::density, 1.0},
    {"kg/m^3", Dimension::density, 1e-3},
    {"mm/ms^2", Dimension::acceleration, 1.0},
    {"m/s^2", Dimension::acceleration, 1e-3},
    {"g0", Dimension::acceleration, kStandardGravity},
    {"mN", Dimension::force, 1.0},
    {"N", Dimension::force, 1e3},
    {"uN", Dimension::force, 1e-3},
    {"mg", Dimension::mass, 1.0},
    {"g", Dimension::mass, 1e3},
    {"kg", Dimension::mass, 1e6},
    {"rad", Dimension::angle, 1.0},
    {"deg", Dimension::angle, std::numbers::pi / 180.0},
    {"mm^3", Dimension::volume, 1.0},
    {"mL", Dimension::volume, 1e3},
    {"uL", Dimension::volume, 1.0},
    {"L", Dimension::volume, 1e6},
    {"cm^3", Dimension::volume, 1e3},
    {"1", Dimension::dimensionless, 1.0},
    {"%", Dimension::dimensionless, 1e-2},
    {"mm/ms", Dimension::velocity, 1.0},
    {"m/s", Dimension::velocity, 1.0},
    {"cm/s", Dimension::velocity, 1e-2},
    {"kPa*ms/mm^3", Dimension::resistance, 1.0},
    {"mmHg*ms/mL", Dimension::resistance, kMmHgInKPa / 1e3},
    {"mmHg*s/mL", Dimension::resistance, kMmHgInKPa},
    {"mm^3/kPa", Dimension::compliance, 1.0},
    {"mL/mmHg", Dimension::compliance, 1e3 / kMmHgInKPa},
    {"mL/kPa", Dimension::compliance, 1e3},
    {"kPa/mm^3", Dimension::elastance, 1.0},
    {"mmHg/mL", Dimension::elastance, kMmHgInKPa / 1e3},
    {"kPa*ms^2/mm^3", Dimension::inertance, 1.0},
    {"mmHg*s^2/mL", Dimension::inertance, kMmHgInKPa * 1e3},
    {"mmHg*ms^2/mL", Dimension::inertance, kMmHgInKPa / 1e3},
    {"kPa/mm", Dimension::foundation, 1.0},
    {"Pa/mm", Dimension::foundation, 1e-3},
    {"B", Dimension::data_size, 1e-9},
    {"kB", Dimension::data_size, 1e-6},
    {"MB", Dimension::data_size, 1e-3},
    {"GB", Dimension::data_size, 1.0},
    {"TB", Dimension::data_size, 1e3},
    {"KiB", Dimension::data_size, 1024.0 / 1e9},
    {"MiB", Dimension::data_size, 1048576.0 / 1e9},
    {"GiB", Dimension::data_size, 1073741824.0 / 1e9},
    {"TiB", Dimension::data_size, 1099511627776.0 / 1e9},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string_view internal_unit(Dimension d) {
  switch (d) {
    case Dimension::length:
      return "mm";
    case Dimension::time:
      return "ms";
    case Dimension::pressure:
      return "kPa";
    case Dimension::density:
      return "mg/mm^3";
    case Dimension::acceleration:
      return "mm/ms^2";
    case Dimension::force:
      return "mN";
    case Dimension::mass:
      return "mg";
    case Dimension::angle:
      return "rad";
    case Dimension::volume:
      return "mm^3";
    case Dimension::velocity:
      return "mm/ms";
    case Dimension::resistance:
      return "kPa*ms/mm^3";
    case Dimension::compliance:
      return "mm^3/kPa";
    case Dimension::elastance:
      return "kPa/mm^3";
    case Dimension::inertance:
      return "kPa*ms^2/mm^3";
    case Dimension::foundation:
      return "kPa/mm";
    case Dimension::data_size:
      return "GB";
    case Dimension::dimensionless:
      return "1";
  }
  return "?";
}

std::string_view dimension_name(Dimension d) {
  switch (d) {
    case Dimension::length:
      return "length";
    case Dimension::time:
      return "time";
    case Dimension::pressure:
      return "pressure";
    case Dimension::density:
      return "density";
    case Dimension::acceleration:
      return "acceleration";
    case Dimension::force:
      return "force";
    case Dimension::mass:
      return "mass";
    case Dimension::angle:
      return "angle";
    case Dimension::volume:
      return "volume";
    case Dimension::velocity:
      return "velocity";
    case Dimension::resistance:
      return "hydraulic resistance";
    case Dimension::compliance:
      return "compliance";
    case Dimension::elastance:
      return "elastance";
    case Dimension::inertance:
      return "inertance";
    case Dimension::foundation:
      return "foundation stiffness";
    case Dimension::data_size:
      return "data size";
    case Dimension::dimensionless:
      return "dimensionless";
  }
  return "?";
}

namespace {
/// "a length", "an angle", "a pressure"; with a dimensionless value: "a plain number".
std::string a_dimension(Dimension d) {
  if (d == Dimension::dimensionless) return "a plain number";
  const std::string name(dimension_name(d));
  return (std::string("aeiou").find(name.front()) != std::string::npos ? "an " : "a ") + name;
}
}  // namespace

std::optional<double> parse_quantity(std::string_view text, Dimension d, std::string* why) {
  const std::string_view s = trim(text);
  // std::from_chars for double is locale-independent and strict.
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) {
    if (why) *why = "not a finite number (beyond the range of a double)";
    return std::nullopt;
  }
  if (ec != std::errc() || ptr == s.data()) {
    if (why) *why = "not a number";
    return std::nullopt;
  }
  if (!std::isfinite(value)) {
    if (why) *why = "not a finite number";
    return std::nullopt;
  }
  const std::string_view unit = trim(std::string_view(ptr, s.data() + s.size() - ptr));
  if (unit.empty()) return value;
  for (const UnitDef& u : kUnits) {
    if (u.name != unit) continue;
    if (u.dim != d) {
      if (why)
        *why = "unit '" + std::string(unit) + "' is " + a_dimension(u.dim) + ", expected " + a_dimension(d) +
               (d == Dimension::dimensionless ? " (no unit, or %)" : " (e.g. " + std::string(internal_unit(d)) + ")");
      return std::nullopt;
    }
    return value * u.factor;
  }
  if (why)
    *why = "unknown unit '" + std::string(unit) + "' (expected " + a_dimension(d) +
           (d == Dimension::dimensionless ? ": no unit, or %)" : " such as " + std::string(internal_unit(d)) + ")");
  return std::nullopt;
}

}  // namespace cardio::units
