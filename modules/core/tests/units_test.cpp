// parse_quantity: one case per dimension, bare numbers, and every rejection path.
#include <gtest/gtest.h>

#include <limits>
#include <numbers>
#include <string>

#include "cardio/core/units.hpp"

namespace {

using cardio::units::Dimension;
using cardio::units::parse_quantity;

// Parse text that must be accepted; fails the test (and returns NaN) otherwise.
double parse_ok(const std::string& text, Dimension d) {
  std::string why;
  const auto q = parse_quantity(text, d, &why);
  EXPECT_TRUE(q.has_value()) << "'" << text << "' rejected: " << why;
  return q.value_or(std::numeric_limits<double>::quiet_NaN());
}

// Parse text that must be rejected; returns the reason.
std::string parse_err(const std::string& text, Dimension d) {
  std::string why;
  const auto q = parse_quantity(text, d, &why);
  EXPECT_FALSE(q.has_value()) << "'" << text << "' accepted as " << q.value_or(0.0);
  EXPECT_FALSE(why.empty()) << "no reason given for rejecting '" << text << "'";
  return why;
}

TEST(UnitsTest, Pressure) {
  EXPECT_DOUBLE_EQ(parse_ok("10 kPa", Dimension::pressure), 10.0);
  EXPECT_NEAR(parse_ok("80 mmHg", Dimension::pressure), 10.6658, 1e-4);
  EXPECT_DOUBLE_EQ(parse_ok("80 mmHg", Dimension::pressure), 80 * cardio::units::kMmHgInKPa);
  // Hydraulic units of the circulation: 1 mmHg s/mL = 0.133322 kPa / (1000 mm^3 / 1000 ms).
  EXPECT_NEAR(parse_ok("1 mmHg*s/mL", Dimension::resistance), 0.133322387415, 1e-12);
  EXPECT_NEAR(parse_ok("1000 mmHg*ms/mL", Dimension::resistance), 0.133322387415, 1e-12);
  EXPECT_NEAR(parse_ok("1.5 mL/mmHg", Dimension::compliance), 1.5e3 / 0.133322387415, 1e-6);
  EXPECT_DOUBLE_EQ(parse_ok("0.6 m/s", Dimension::velocity), 0.6);
  EXPECT_DOUBLE_EQ(parse_ok("60 cm/s", Dimension::velocity), 0.6);
  EXPECT_DOUBLE_EQ(parse_ok("1500 Pa", Dimension::pressure), 1.5);
  EXPECT_DOUBLE_EQ(parse_ok("0.002 MPa", Dimension::pressure), 2.0);
}

TEST(UnitsTest, Length) {
  EXPECT_DOUBLE_EQ(parse_ok("1.5 cm", Dimension::length), 15.0);
  EXPECT_DOUBLE_EQ(parse_ok("1.5 mm", Dimension::length), 1.5);
  EXPECT_DOUBLE_EQ(parse_ok("0.02 m", Dimension::length), 20.0);
  EXPECT_DOUBLE_EQ(parse_ok("250 um", Dimension::length), 0.25);
}

TEST(UnitsTest, Time) {
  EXPECT_DOUBLE_EQ(parse_ok("0.8 s", Dimension::time), 800.0);
  EXPECT_DOUBLE_EQ(parse_ok("800 ms", Dimension::time), 800.0);
  EXPECT_DOUBLE_EQ(parse_ok("50 us", Dimension::time), 0.05);
}

TEST(UnitsTest, Acceleration) {
  EXPECT_DOUBLE_EQ(parse_ok("9.81 m/s^2", Dimension::acceleration), 9.81e-3);
  EXPECT_DOUBLE_EQ(parse_ok("1 g0", Dimension::acceleration), cardio::units::kStandardGravity);
  EXPECT_DOUBLE_EQ(parse_ok("0.5 mm/ms^2", Dimension::acceleration), 0.5);
}

TEST(UnitsTest, Density) {
  EXPECT_DOUBLE_EQ(parse_ok("1.06 g/cm^3", Dimension::density), 1.06);
  EXPECT_DOUBLE_EQ(parse_ok("1.06 mg/mm^3", Dimension::density), 1.06);
  EXPECT_DOUBLE_EQ(parse_ok("1060 kg/m^3", Dimension::density), 1.06);
}

TEST(UnitsTest, Volume) {
  EXPECT_DOUBLE_EQ(parse_ok("120 mL", Dimension::volume), 120000.0);
  EXPECT_DOUBLE_EQ(parse_ok("120 cm^3", Dimension::volume), 120000.0);
  EXPECT_DOUBLE_EQ(parse_ok("3 uL", Dimension::volume), 3.0);
  EXPECT_DOUBLE_EQ(parse_ok("0.5 L", Dimension::volume), 5e5);
}

TEST(UnitsTest, Angle) {
  EXPECT_DOUBLE_EQ(parse_ok("90 deg", Dimension::angle), std::numbers::pi / 2);
  EXPECT_DOUBLE_EQ(parse_ok("-60 deg", Dimension::angle), -std::numbers::pi / 3);
  EXPECT_DOUBLE_EQ(parse_ok("1.25 rad", Dimension::angle), 1.25);
}

TEST(UnitsTest, ForceMassDimensionless) {
  EXPECT_DOUBLE_EQ(parse_ok("2 N", Dimension::force), 2000.0);
  EXPECT_DOUBLE_EQ(parse_ok("3 g", Dimension::mass), 3000.0);
  EXPECT_DOUBLE_EQ(parse_ok("25 %", Dimension::dimensionless), 0.25);
}

// Output sizes (output.max_size_warning): decimal and binary prefixes, GB internally.
TEST(UnitsTest, DataSize) {
  EXPECT_DOUBLE_EQ(parse_ok("4 GB", Dimension::data_size), 4.0);
  EXPECT_DOUBLE_EQ(parse_ok("4", Dimension::data_size), 4.0);
  EXPECT_DOUBLE_EQ(parse_ok("500 MB", Dimension::data_size), 0.5);
  EXPECT_DOUBLE_EQ(parse_ok("1 TB", Dimension::data_size), 1000.0);
  EXPECT_DOUBLE_EQ(parse_ok("2 kB", Dimension::data_size), 2e-6);
  EXPECT_DOUBLE_EQ(parse_ok("1e9 B", Dimension::data_size), 1.0);
  EXPECT_DOUBLE_EQ(parse_ok("1 GiB", Dimension::data_size), 1.073741824);
  EXPECT_DOUBLE_EQ(parse_ok("1 MiB", Dimension::data_size), 1.048576e-3);
  const std::string mm = parse_err("4 mm", Dimension::data_size);
  EXPECT_NE(mm.find("expected a data size (e.g. GB)"), std::string::npos) << mm;
  const std::string gb = parse_err("4 GB", Dimension::length);
  EXPECT_NE(gb.find("'GB' is a data size"), std::string::npos) << gb;
}

TEST(UnitsTest, BareNumbersAreInternalUnits) {
  EXPECT_DOUBLE_EQ(parse_ok("10", Dimension::pressure), 10.0);
  EXPECT_DOUBLE_EQ(parse_ok("0.8", Dimension::time), 0.8);
  EXPECT_DOUBLE_EQ(parse_ok("-2.5e-3", Dimension::length), -2.5e-3);
  EXPECT_DOUBLE_EQ(parse_ok("  7  ", Dimension::dimensionless), 7.0);
  EXPECT_DOUBLE_EQ(parse_ok("3", Dimension::angle), 3.0);  // radians
}

TEST(UnitsTest, SpaceBetweenValueAndUnitIsOptional) {
  EXPECT_DOUBLE_EQ(parse_ok("10kPa", Dimension::pressure), 10.0);
  EXPECT_DOUBLE_EQ(parse_ok("  1.5   cm  ", Dimension::length), 15.0);
}

TEST(UnitsTest, WrongDimensionNamesBoth) {
  const std::string why = parse_err("10 mm", Dimension::pressure);
  EXPECT_NE(why.find("length"), std::string::npos) << why;
  EXPECT_NE(why.find("pressure"), std::string::npos) << why;
  EXPECT_NE(why.find("'mm'"), std::string::npos) << why;

  const std::string why2 = parse_err("1 s", Dimension::length);
  EXPECT_NE(why2.find("time"), std::string::npos) << why2;
  EXPECT_NE(why2.find("length"), std::string::npos) << why2;
  // "g" is a mass, not the gravity acceleration g0.
  const std::string why3 = parse_err("1 g", Dimension::acceleration);
  EXPECT_NE(why3.find("mass"), std::string::npos) << why3;
  EXPECT_NE(why3.find("acceleration"), std::string::npos) << why3;
}

TEST(UnitsTest, UnknownUnit) {
  const std::string why = parse_err("10 furlong", Dimension::length);
  EXPECT_NE(why.find("unknown unit 'furlong'"), std::string::npos) << why;
  EXPECT_NE(why.find("length"), std::string::npos) << why;
  // Units are case-sensitive: "KPA" is not "kPa".
  EXPECT_NE(parse_err("10 KPA", Dimension::pressure).find("unknown unit"), std::string::npos);
}

TEST(UnitsTest, NotANumber) {
  for (const char* text : {"abc", "", "   ", "kPa", "ten kPa"}) {
    const std::string why = parse_err(text, Dimension::pressure);
    EXPECT_NE(why.find("not a number"), std::string::npos) << "'" << text << "': " << why;
  }
}

TEST(UnitsTest, NonFiniteRejected) {
  for (const char* text : {"nan", "NaN kPa", "inf", "-inf kPa", "infinity"}) {
    const std::string why = parse_err(text, Dimension::pressure);
    EXPECT_NE(why.find("finite"), std::string::npos) << "'" << text << "': " << why;
  }
  // Out of the double range is not silently clamped to inf, and is said to be so.
  EXPECT_EQ(parse_err("1e999", Dimension::pressure), "not a finite number (beyond the range of a double)");
}

// Grammar of the messages (issue 14): "an angle", and no "a dimensionless such as 1".
TEST(UnitsTest, MessagesReadAsEnglish) {
  EXPECT_EQ(parse_err("10 deg", Dimension::length), "unit 'deg' is an angle, expected a length (e.g. mm)");
  EXPECT_EQ(parse_err("10 kPa", Dimension::dimensionless),
            "unit 'kPa' is a pressure, expected a plain number (no unit, or %)");
  EXPECT_EQ(parse_err("2 furlong", Dimension::dimensionless),
            "unknown unit 'furlong' (expected a plain number: no unit, or %)");
  EXPECT_EQ(parse_err("2 furlong", Dimension::acceleration),
            "unknown unit 'furlong' (expected an acceleration such as mm/ms^2)");
}

TEST(UnitsTest, WhyIsOptional) {
  EXPECT_FALSE(parse_quantity("abc", Dimension::length).has_value());
  EXPECT_FALSE(parse_quantity("1 kPa", Dimension::length).has_value());
  EXPECT_DOUBLE_EQ(parse_quantity("1 cm", Dimension::length).value(), 10.0);
}

TEST(UnitsTest, InternalUnitAndDimensionNames) {
  EXPECT_EQ(cardio::units::internal_unit(Dimension::pressure), "kPa");
  EXPECT_EQ(cardio::units::internal_unit(Dimension::length), "mm");
  EXPECT_EQ(cardio::units::internal_unit(Dimension::time), "ms");
  EXPECT_EQ(cardio::units::internal_unit(Dimension::acceleration), "mm/ms^2");
  EXPECT_EQ(cardio::units::dimension_name(Dimension::density), "density");
  EXPECT_EQ(cardio::units::dimension_name(Dimension::angle), "angle");
}

}  // namespace
