#pragma once
/// @file units.hpp
/// The internal unit system (docs/config.md, Units): millimetre, millisecond, kilopascal, milligram,
/// millinewton (1 mN = 1 kPa mm^2 = 1 mg mm/ms^2). Config values may carry a unit suffix
/// ("10 kPa", "80 mmHg", "1.5 mm", "800 ms", "9.81 m/s^2"); a bare number is read in the
/// internal unit of its dimension.
#include <optional>
#include <string>
#include <string_view>

namespace cardio::units {

enum class Dimension {
  dimensionless,
  length,
  time,
  pressure,
  density,
  acceleration,
  force,
  mass,
  angle,
  volume,
  velocity,    ///< mm/ms (conduction velocities)
  resistance,  ///< kPa ms/mm^3 (hydraulic: Windkessel resistances and impedances)
  compliance,  ///< mm^3/kPa (Windkessel compliance)
  elastance,   ///< kPa/mm^3 (chamber elastance of the closed-loop circulation: pressure per volume)
  inertance,   ///< kPa ms^2/mm^3 (blood inertance of a vessel compartment)
  foundation,  ///< kPa/mm (elastic foundation: traction per displacement, e.g. the pericardium)
  data_size,   ///< GB (10^9 bytes: sizes of outputs on disk)
};

/// Name of the internal unit of a dimension, e.g. "kPa" for pressure.
std::string_view internal_unit(Dimension d);
/// Human-readable dimension name, e.g. "pressure".
std::string_view dimension_name(Dimension d);

/// Parse "VALUE [UNIT]" into the internal unit of `d`. Returns std::nullopt, with a reason in
/// `why`, if the text is not a number, the unit is unknown, or it has another dimension.
/// Angles are returned in radians; "deg" and "rad" are accepted.
std::optional<double> parse_quantity(std::string_view text, Dimension d, std::string* why = nullptr);

/// Useful constants in internal units.
inline constexpr double kStandardGravity = 9.80665e-3;  ///< [mm/ms^2] = 9.80665 m/s^2
inline constexpr double kMmHgInKPa = 0.133322387415;    ///< 1 mmHg in kPa

}  // namespace cardio::units
