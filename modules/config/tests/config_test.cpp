// Document / Node: typed, unit-aware, strict reading of YAML with located error messages.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <functional>
#include <memory>
#include <numbers>
#include <string>

#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"

namespace {

using cardio::config::Document;
using cardio::config::Node;
using cardio::config::Range;
using cardio::units::Dimension;

// The cardio::Error message thrown by f (test failure if it does not throw one).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const cardio::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-cardio exception: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no cardio::Error thrown";
  return {};
}

#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "'" << (needle) << "' not in: " << (haystack)

std::shared_ptr<Document> load(const std::string& yaml) { return Document::load_string(yaml, "test.yaml"); }

const char* kMaterial =
    "material:\n"                 // line 1
    "  model: isotropic\n"        // line 2
    "  youngs_modulus: 10 kPa\n"  // line 3
    "  poisson_ratio: 0.3\n";     // line 4

TEST(ConfigTest, QuantityWithUnits) {
  auto doc = load(
      "a:\n"
      "  p: 80 mmHg\n"
      "  l: 1.5 cm\n"
      "  t: 0.8 s\n"
      "  g: 9.81 m/s^2\n"
      "  rho: 1.06 g/cm^3\n"
      "  v: 120 mL\n"
      "  ang: 90 deg\n"
      "  bare: 12.5\n");
  const Node a = doc->root().child("a");
  EXPECT_NEAR(a.quantity("p", Dimension::pressure, std::nullopt), 10.6658, 1e-4);
  EXPECT_DOUBLE_EQ(a.quantity("l", Dimension::length, std::nullopt), 15.0);
  EXPECT_DOUBLE_EQ(a.quantity("t", Dimension::time, std::nullopt), 800.0);
  EXPECT_DOUBLE_EQ(a.quantity("g", Dimension::acceleration, std::nullopt), 9.81e-3);
  EXPECT_DOUBLE_EQ(a.quantity("rho", Dimension::density, std::nullopt), 1.06);
  EXPECT_DOUBLE_EQ(a.quantity("v", Dimension::volume, std::nullopt), 120000.0);
  EXPECT_DOUBLE_EQ(a.quantity("ang", Dimension::angle, std::nullopt), std::numbers::pi / 2);
  EXPECT_DOUBLE_EQ(a.quantity("bare", Dimension::pressure, std::nullopt), 12.5);
  EXPECT_NO_THROW(doc->check_no_unknown_keys());
}

TEST(ConfigTest, IntegerLists) {
  auto doc = load("a:\n  list: [1, 3, 42]\n  one: 7\n  bad: [1, 2.5]\n  big: [1, 99]\n");
  const Node a = doc->root().child("a");
  EXPECT_EQ(a.integers("list", std::nullopt, 0, 100), (std::vector<long>{1, 3, 42}));
  EXPECT_EQ(a.integers("one", std::nullopt, 0, 100), (std::vector<long>{7}));
  EXPECT_EQ(a.integers("absent", std::vector<long>{5}, 0, 100), (std::vector<long>{5}));
  try {
    a.integers("bad", std::nullopt, 0, 100);
    FAIL() << "2.5 is not an integer";
  } catch (const cardio::Error& e) {
    EXPECT_NE(std::string(e.what()).find("test.yaml:4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("item 1: expected an integer, got '2.5'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.integers("big", std::nullopt, 0, 50), cardio::Error);
  EXPECT_THROW(a.integers("missing", std::nullopt, 0, 50), cardio::Error);
  EXPECT_NE(doc->resolved_yaml().find("list: [1, 3, 42]"), std::string::npos) << doc->resolved_yaml();
}

TEST(ConfigTest, PathsAndLocations) {
  auto doc = load(kMaterial);
  const Node root = doc->root();
  EXPECT_EQ(root.path(), "");
  const Node m = root.child("material");
  EXPECT_EQ(m.path(), "material");
  EXPECT_EQ(m.key_path("youngs_modulus"), "material.youngs_modulus");
  EXPECT_EQ(m.where_of("youngs_modulus"), "test.yaml:3:19");
  EXPECT_EQ(m.where_of("poisson_ratio"), "test.yaml:4:18");
  EXPECT_TRUE(m.has("model"));
  EXPECT_FALSE(m.has("density"));
}

TEST(ConfigTest, DefaultsAreRecordedInResolvedYaml) {
  auto doc = load(kMaterial);
  const Node m = doc->root().child("material");
  EXPECT_EQ(m.choice("model", {"isotropic", "transversely_isotropic"}, "isotropic"), "isotropic");
  EXPECT_DOUBLE_EQ(m.quantity("youngs_modulus", Dimension::pressure, std::nullopt, Range::positive()), 10.0);
  EXPECT_DOUBLE_EQ(m.number("poisson_ratio", std::nullopt, Range::open(-1, 0.5)), 0.3);
  EXPECT_DOUBLE_EQ(m.quantity("density", Dimension::density, 1.06, Range::positive()), 1.06);
  const Node s = doc->root().child_or_empty("solver");
  EXPECT_EQ(s.path(), "solver");
  EXPECT_EQ(s.integer("load_steps", 4, 1, 100), 4);
  EXPECT_TRUE(s.boolean("force_dt", true));
  EXPECT_EQ(s.text("note", "hello"), "hello");
  EXPECT_NO_THROW(doc->check_no_unknown_keys());

  const std::string resolved = doc->resolved_yaml();
  EXPECT_HAS(resolved, "density: 1.06 mg/mm^3");
  EXPECT_HAS(resolved, "poisson_ratio: 0.3\n");  // shortest round-trip form
  EXPECT_HAS(resolved, "youngs_modulus: 10 kPa");
  EXPECT_HAS(resolved, "load_steps: 4");
  EXPECT_HAS(resolved, "force_dt: true");
  EXPECT_HAS(resolved, "solver:");

  // The resolved config is itself a valid config that reads back to the same values.
  auto again = Document::load_string(resolved, "resolved.yaml");
  const Node m2 = again->root().child("material");
  EXPECT_EQ(m2.choice("model", {"isotropic", "transversely_isotropic"}, std::nullopt), "isotropic");
  EXPECT_EQ(m2.quantity("youngs_modulus", Dimension::pressure, std::nullopt), 10.0);
  EXPECT_EQ(m2.number("poisson_ratio", std::nullopt), 0.3);  // bit-exact round trip
  EXPECT_EQ(m2.quantity("density", Dimension::density, std::nullopt), 1.06);
  const Node s2 = again->root().child("solver");
  EXPECT_EQ(s2.integer("load_steps", std::nullopt, 1, 100), 4);
  EXPECT_TRUE(s2.boolean("force_dt", std::nullopt));
  EXPECT_EQ(s2.text("note", std::nullopt), "hello");
  EXPECT_NO_THROW(again->check_no_unknown_keys());
}

TEST(ConfigTest, AutoQuantitiesAreShownAsAutoAndReadBack) {
  auto doc = Document::load_string("solver:\n  dt: 0.25 ms\n  step: auto\n", "auto.yaml");
  const Node s = doc->root().child("solver");
  EXPECT_EQ(s.quantity_or_auto("dt", Dimension::time, Range::positive()), std::optional<double>(0.25));
  EXPECT_EQ(s.quantity_or_auto("step", Dimension::time), std::nullopt);
  EXPECT_EQ(s.quantity_or_auto("absent", Dimension::time), std::nullopt);
  const std::string resolved = doc->resolved_yaml();
  EXPECT_HAS(resolved, "dt: 0.25 ms");
  EXPECT_HAS(resolved, "step: auto");
  EXPECT_HAS(resolved, "absent: auto");
  auto again = Document::load_string(resolved, "resolved.yaml");
  EXPECT_EQ(again->root().child("solver").quantity_or_auto("absent", Dimension::time), std::nullopt);
  // Anything else is checked as a quantity.
  auto bad = Document::load_string("solver:\n  dt: soon\n", "bad.yaml");
  EXPECT_THROW(bad->root().child("solver").quantity_or_auto("dt", Dimension::time), cardio::Error);
  auto neg = Document::load_string("solver:\n  dt: -1 ms\n", "neg.yaml");
  EXPECT_THROW(neg->root().child("solver").quantity_or_auto("dt", Dimension::time, Range::positive()), cardio::Error);
}

TEST(ConfigTest, ChoicesParseStraightIntoEnums) {
  enum class Mode { slow, fast };
  const std::vector<std::pair<std::string, Mode>> modes{{"slow", Mode::slow}, {"fast", Mode::fast}};
  auto doc = Document::load_string("solver:\n  mode: fast\n", "enum.yaml");
  const Node s = doc->root().child("solver");
  EXPECT_EQ(s.choice_of("mode", modes, Mode::slow), Mode::fast);
  EXPECT_EQ(s.choice_of("other", modes, Mode::slow), Mode::slow);
  EXPECT_HAS(doc->resolved_yaml(), "other: slow");
  auto bad = Document::load_string("solver:\n  mode: quick\n", "bad.yaml");
  try {
    bad->root().child("solver").choice_of("mode", modes, std::nullopt);
    FAIL() << "expected an error";
  } catch (const cardio::Error& e) {
    EXPECT_HAS(std::string(e.what()), "solver.mode");
    EXPECT_HAS(std::string(e.what()), "fast");
  }
}

TEST(ConfigTest, RangeErrorNamesLocationKeyAndRange) {
  auto doc = load(
      "material:\n"
      "  youngs_modulus: -5 kPa\n"
      "  poisson_ratio: 0.5\n");
  const Node m = doc->root().child("material");
  const std::string e1 =
      error_of([&] { m.quantity("youngs_modulus", Dimension::pressure, std::nullopt, Range::positive()); });
  EXPECT_HAS(e1, "test.yaml:2:19: material.youngs_modulus:");
  EXPECT_HAS(e1, "-5 kPa");
  EXPECT_HAS(e1, "out of range");
  EXPECT_HAS(e1, "(0, inf) kPa");
  const std::string e2 = error_of([&] { m.number("poisson_ratio", std::nullopt, Range::open(-1, 0.5)); });
  EXPECT_HAS(e2, "test.yaml:3:18: material.poisson_ratio: value 0.5 is out of range; expected (-1, 0.5)");
  EXPECT_EQ(e2.find(" 1"), std::string::npos) << "no unit suffix '1' for a plain number: " << e2;
  // Closed bounds are printed with brackets and include their end points.
  EXPECT_DOUBLE_EQ(m.number("poisson_ratio", std::nullopt, Range::closed(0, 0.5)), 0.5);
  const std::string e3 = error_of([&] { m.number("poisson_ratio", std::nullopt, Range::closed(0, 0.25)); });
  EXPECT_HAS(e3, "[0, 0.25]");
}

TEST(ConfigTest, DefaultsAreRangeChecked) {
  auto doc = load("a: {}\n");
  const Node a = doc->root().child("a");
  const std::string e = error_of([&] { a.quantity("dt", Dimension::time, -1.0, Range::non_negative()); });
  EXPECT_HAS(e, "a.dt");
  EXPECT_HAS(e, "[0, inf) ms");
}

TEST(ConfigTest, RangeDescribeAndContains) {
  EXPECT_EQ(Range::positive().describe(), "(0, inf)");
  EXPECT_EQ(Range::non_negative().describe(), "[0, inf)");
  EXPECT_EQ(Range().describe(), "(-inf, inf)");
  EXPECT_EQ(Range::closed(0, 1).describe(), "[0, 1]");
  EXPECT_EQ(Range::open(-1, 0.5).describe(), "(-1, 0.5)");
  EXPECT_FALSE(Range::positive().contains(0.0));
  EXPECT_TRUE(Range::non_negative().contains(0.0));
  EXPECT_FALSE(Range().contains(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(Range::open(-1, 0.5).contains(-1.0));
  EXPECT_TRUE(Range::open(-1, 0.5).contains(0.4999));
}

TEST(ConfigTest, WrongTypeMessage) {
  auto doc = load(
      "material:\n"
      "  youngs_modulus: abc\n"
      "  density: [1, 2]\n"
      "  steps: 2.5\n"
      "  flag: maybe\n"
      "  voxel_size: 1 kPa\n");
  const Node m = doc->root().child("material");
  const std::string e1 = error_of([&] { m.quantity("youngs_modulus", Dimension::pressure, std::nullopt); });
  EXPECT_HAS(e1, "test.yaml:2:19: material.youngs_modulus:");
  EXPECT_HAS(e1, "expected a pressure");
  EXPECT_HAS(e1, "'abc'");
  EXPECT_HAS(e1, "not a number");
  const std::string e2 = error_of([&] { m.quantity("density", Dimension::density, 1.0); });
  EXPECT_HAS(e2, "material.density");
  EXPECT_HAS(e2, "expected a density");
  const std::string e3 = error_of([&] { m.integer("steps", 1, 1, 10); });
  EXPECT_HAS(e3, "material.steps");
  EXPECT_HAS(e3, "expected an integer, got '2.5'");
  const std::string e4 = error_of([&] { m.boolean("flag", false); });
  EXPECT_HAS(e4, "material.flag");
  EXPECT_HAS(e4, "expected true or false, got 'maybe'");
  const std::string e5 = error_of([&] { m.quantity("voxel_size", Dimension::length, std::nullopt); });
  EXPECT_HAS(e5, "test.yaml:6:15: material.voxel_size:");
  EXPECT_HAS(e5, "pressure");
  EXPECT_HAS(e5, "length");
  const std::string e6 = error_of([&] { m.child("youngs_modulus"); });
  EXPECT_HAS(e6, "material.youngs_modulus");
  EXPECT_HAS(e6, "expected a map");
}

// A map or list where a value belongs is named as such, not quoted as an empty value (issue 14:
// `b_f: {a: 1}` said "expected a dimensionless such as '1 1'").
TEST(ConfigTest, MapOrListWhereAValueBelongs) {
  auto doc = load(
      "m:\n"
      "  b_f: {a: 1}\n"
      "  C: [1, 2]\n"
      "  n: {a: 1}\n"
      "  law: [x]\n"
      "  name: {a: 1}\n"
      "  flag: [1]\n"
      "  p: [1 mm, {a: 1}, 3 mm]\n"
      "  ids: [1, [2]]\n");
  const Node m = doc->root().child("m");
  EXPECT_EQ(error_of([&] { m.number("b_f", std::nullopt); }),
            "test.yaml:2:8: m.b_f: expected a number such as '1', found a map ({a: 1})");
  EXPECT_EQ(error_of([&] { m.quantity("C", Dimension::pressure, std::nullopt); }),
            "test.yaml:3:6: m.C: expected a pressure [kPa] such as '1 kPa', found a list ([1, 2])");
  EXPECT_HAS(error_of([&] { m.integer("n", 1, 0, 9); }), "m.n: expected an integer, found a map ({a: 1})");
  EXPECT_HAS(error_of([&] { m.choice("law", {"a", "b"}, "a"); }), "m.law: expected one of: a, b, found a list ([x])");
  EXPECT_HAS(error_of([&] { m.text("name", ""); }), "m.name: expected a string, found a map ({a: 1})");
  EXPECT_HAS(error_of([&] { m.boolean("flag", false); }), "m.flag: expected true or false, found a list ([1])");
  EXPECT_HAS(error_of([&] { m.vec3("p", Dimension::length, std::nullopt); }),
             "m.p: component 1: expected a length [mm], found a map ({a: 1})");
  EXPECT_HAS(error_of([&] { m.integers("ids", std::nullopt, 0, 9); }),
             "m.ids: item 1: expected an integer, found a list ([2])");
  EXPECT_HAS(error_of([&] { m.number("missing", std::nullopt); }), "required key is missing (expected a number)");
}

TEST(ConfigTest, MissingRequiredKeyAndSection) {
  auto doc = load(
      "material:\n"
      "  model: isotropic\n"
      "  poisson_ratio: 0.3\n");
  const Node root = doc->root();
  const Node m = root.child("material");
  const std::string e1 = error_of([&] { m.quantity("youngs_modulus", Dimension::pressure, std::nullopt); });
  EXPECT_HAS(e1, "test.yaml:2:");  // the material section
  EXPECT_HAS(e1, "material.youngs_modulus: required key is missing");
  EXPECT_HAS(e1, "pressure");
  const std::string e2 = error_of([&] { root.child("block"); });
  EXPECT_HAS(e2, "block: required section is missing");
  const std::string e3 = error_of([&] { m.choice("law", {"linear", "exponential"}, std::nullopt); });
  EXPECT_HAS(e3, "material.law: required key is missing");
  EXPECT_HAS(e3, "linear, exponential");
  EXPECT_HAS(error_of([&] { m.vec3("dir", Dimension::length, std::nullopt); }),
             "material.dir: required key is missing");
  EXPECT_HAS(error_of([&] { m.int3("vox", std::nullopt, 1, 9); }), "material.vox: required key is missing");
  EXPECT_HAS(error_of([&] { m.text("name", std::nullopt); }), "material.name: required key is missing");
  EXPECT_HAS(error_of([&] { m.boolean("b", std::nullopt); }), "material.b: required key is missing");
  EXPECT_HAS(error_of([&] { m.integer("i", std::nullopt, 0, 1); }), "material.i: required key is missing");
}

TEST(ConfigTest, MisspeltRequiredKeyIsSuggested) {
  // A misspelt required key is reported as missing at once (before the unknown-key check):
  // the message must still point at the misspelling.
  auto doc = load(
      "material:\n"
      "  youngs_modulos: 10 kPa\n");
  const Node m = doc->root().child("material");
  const std::string e = error_of([&] { m.quantity("youngs_modulus", Dimension::pressure, std::nullopt); });
  EXPECT_HAS(e, "material.youngs_modulus: required key is missing");
  EXPECT_HAS(e, "found 'youngs_modulos' at test.yaml:2:3");
  EXPECT_HAS(e, "did you mean 'youngs_modulus'?");

  // Same for a misspelt required section.
  auto doc2 = load("materal:\n  youngs_modulus: 10 kPa\n");
  const std::string e2 = error_of([&] { doc2->root().child("material"); });
  EXPECT_HAS(e2, "material: required section is missing; found 'materal' at test.yaml:1:1");

  // Keys already read are never offered as misspellings, nor are distant keys.
  auto doc3 = load("m:\n  b_s: 1\n  unrelated: 2\n");
  const Node m3 = doc3->root().child("m");
  m3.number("b_s", std::nullopt);
  const std::string e3 = error_of([&] { m3.number("b_f", std::nullopt); });
  EXPECT_HAS(e3, "m.b_f: required key is missing");
  EXPECT_EQ(e3.find("found"), std::string::npos) << e3;
}

TEST(ConfigTest, UnknownKeySuggestsClosest) {
  auto doc = load(
      "material:\n"
      "  youngs_modulos: 10 kPa\n"
      "  poisson_ratio: 0.3\n");
  const Node m = doc->root().child("material");
  m.quantity("youngs_modulus", Dimension::pressure, 1.0);
  m.number("poisson_ratio", std::nullopt);
  m.quantity("density", Dimension::density, 1.06);
  const std::string e = error_of([&] { doc->check_no_unknown_keys(); });
  EXPECT_HAS(e, "test.yaml:2:3: unknown key 'material.youngs_modulos'");
  EXPECT_HAS(e, "did you mean 'youngs_modulus'?");
}

TEST(ConfigTest, UnknownKeyFarFromAnyListsKnownKeys) {
  auto doc = load("material:\n  colour: red\n");
  const Node m = doc->root().child("material");
  m.quantity("youngs_modulus", Dimension::pressure, 1.0);
  m.number("poisson_ratio", 0.3);
  const std::string e = error_of([&] { doc->check_no_unknown_keys(); });
  EXPECT_HAS(e, "unknown key 'material.colour'");
  EXPECT_HAS(e, "known keys here: poisson_ratio youngs_modulus");
}

TEST(ConfigTest, UnknownTopLevelKeyAndUnreadSection) {
  auto doc = load("materal:\n  youngs_modulus: 1\nmaterial:\n  youngs_modulus: 1\n");
  doc->root().child("material").number("youngs_modulus", std::nullopt);
  const std::string e = error_of([&] { doc->check_no_unknown_keys(); });
  EXPECT_HAS(e, "test.yaml:1:1: unknown key 'materal'");
  EXPECT_HAS(e, "did you mean 'material'?");

  // Keys inside a section no read descended into are unknown too.
  auto doc2 = load("output:\n  vtu: true\n");
  EXPECT_TRUE(doc2->root().has("output"));
  const std::string e2 = error_of([&] { doc2->check_no_unknown_keys(); });
  EXPECT_HAS(e2, "unknown key 'output.vtu'");
}

TEST(ConfigTest, ChoiceWithSuggestion) {
  auto doc = load("element:\n  type: bourguignon_cany\n  law: quadratic\n");
  const Node e = doc->root().child("element");
  const std::string m1 = error_of([&] { e.choice("type", {"bourguignon_cani", "baudet_cube"}, "bourguignon_cani"); });
  EXPECT_HAS(m1, "test.yaml:2:9: element.type:");
  EXPECT_HAS(m1, "'bourguignon_cany' is not one of: bourguignon_cani, baudet_cube");
  EXPECT_HAS(m1, "did you mean 'bourguignon_cani'?");
  const std::string m2 = error_of([&] { e.choice("law", {"linear", "exponential"}, "linear"); });
  EXPECT_HAS(m2, "is not one of: linear, exponential");
  EXPECT_EQ(m2.find("did you mean"), std::string::npos) << m2;
  auto ok = load("element:\n  type: baudet_cube\n");
  EXPECT_EQ(ok->root().child("element").choice("type", {"bourguignon_cani", "baudet_cube"}, std::nullopt),
            "baudet_cube");
}

TEST(ConfigTest, Vec3AndInt3) {
  auto doc = load(
      "block:\n"
      "  origin: [1 mm, 2 cm, 0.5 m]\n"
      "  direction: [1, 0, 0]\n"
      "  voxels: [2, 3, 4]\n"
      "  short: [1, 2]\n"
      "  bad: [1 mm, 2 kPa, 3 mm]\n"
      "  big: [1, 500, 1]\n"
      "  frac: [1, 2.5, 1]\n");
  const Node b = doc->root().child("block");
  EXPECT_EQ(b.vec3("origin", Dimension::length, std::nullopt), Eigen::Vector3d(1, 20, 500));
  EXPECT_EQ(b.vec3("direction", Dimension::dimensionless, std::nullopt), Eigen::Vector3d(1, 0, 0));
  EXPECT_EQ(b.vec3("gravity", Dimension::acceleration, Eigen::Vector3d(0, 0, -1)), Eigen::Vector3d(0, 0, -1));
  EXPECT_EQ(b.int3("voxels", std::nullopt, 1, 400), Eigen::Vector3i(2, 3, 4));
  EXPECT_HAS(error_of([&] { b.vec3("short", Dimension::length, std::nullopt); }),
             "block.short: expected a list of 3 length values");
  const std::string e = error_of([&] { b.vec3("bad", Dimension::length, std::nullopt); });
  EXPECT_HAS(e, "test.yaml:6:8: block.bad: component 1");
  EXPECT_HAS(e, "'2 kPa'");
  EXPECT_HAS(error_of([&] { b.int3("short", std::nullopt, 1, 400); }), "expected a list of 3 integers");
  EXPECT_HAS(error_of([&] { b.int3("big", std::nullopt, 1, 400); }),
             "block.big: component 1 = 500 is out of range; expected [1, 400]");
  EXPECT_HAS(error_of([&] { b.int3("frac", std::nullopt, 1, 400); }), "component 1: expected an integer, got '2.5'");
  const std::string resolved = doc->resolved_yaml();
  EXPECT_HAS(resolved, "voxels: [2, 3, 4]");
  auto again = Document::load_string(resolved, "resolved.yaml");
  const Node b2 = again->root().child("block");
  EXPECT_EQ(b2.vec3("origin", Dimension::length, std::nullopt), Eigen::Vector3d(1, 20, 500));
  EXPECT_EQ(b2.vec3("gravity", Dimension::acceleration, std::nullopt), Eigen::Vector3d(0, 0, -1));
  EXPECT_EQ(b2.int3("voxels", std::nullopt, 1, 400), Eigen::Vector3i(2, 3, 4));
}

TEST(ConfigTest, Int3RejectsValuesBeyondIntRange) {
  // 2^32 + 2 must not wrap around to 2 and pass the range check.
  auto doc = load("block:\n  voxels: [4294967298, 1, 1]\n");
  const std::string e = error_of([&] { doc->root().child("block").int3("voxels", std::nullopt, 1, 400); });
  EXPECT_HAS(e, "block.voxels: component 0");
  EXPECT_HAS(e, "4294967298");
}

TEST(ConfigTest, IntegerAndBoolean) {
  auto doc = load("s:\n  n: 12\n  neg: -3\n  big: 1000\n  on: yes\n  off: false\n");
  const Node s = doc->root().child("s");
  EXPECT_EQ(s.integer("n", std::nullopt, 1, 100), 12);
  EXPECT_EQ(s.integer("neg", std::nullopt, -10, 10), -3);
  EXPECT_HAS(error_of([&] { s.integer("big", std::nullopt, 1, 100); }),
             "s.big: value 1000 is out of range; expected an integer in [1, 100]");
  EXPECT_TRUE(s.boolean("on", std::nullopt));
  EXPECT_FALSE(s.boolean("off", std::nullopt));
}

TEST(ConfigTest, ListOfMaps) {
  auto doc = load(
      "materials:\n"
      "  - name: healthy\n"
      "    youngs_modulus: 10 kPa\n"
      "  - name: scar\n"
      "    youngs_modulus: 50 kPa\n"
      "    colour: grey\n");
  const std::vector<Node> items = doc->root().list("materials");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].path(), "materials[0]");
  EXPECT_EQ(items[1].path(), "materials[1]");
  EXPECT_EQ(items[0].text("name", std::nullopt), "healthy");
  EXPECT_EQ(items[1].text("name", std::nullopt), "scar");
  EXPECT_DOUBLE_EQ(items[0].quantity("youngs_modulus", Dimension::pressure, std::nullopt), 10.0);
  EXPECT_DOUBLE_EQ(items[1].quantity("youngs_modulus", Dimension::pressure, std::nullopt), 50.0);
  EXPECT_DOUBLE_EQ(items[1].quantity("density", Dimension::density, 1.1), 1.1);
  const std::string e = error_of([&] { doc->check_no_unknown_keys(); });
  EXPECT_HAS(e, "test.yaml:6:5: unknown key 'materials[1].colour'");

  const std::string range =
      error_of([&] { items[1].quantity("youngs_modulus", Dimension::pressure, std::nullopt, Range::closed(0, 20)); });
  EXPECT_HAS(range, "test.yaml:5:21: materials[1].youngs_modulus:");

  const std::string resolved = doc->resolved_yaml();
  auto again = Document::load_string(resolved, "resolved.yaml");
  const std::vector<Node> items2 = again->root().list("materials");
  ASSERT_EQ(items2.size(), 2u) << resolved;
  EXPECT_EQ(items2[1].text("name", std::nullopt), "scar");
  EXPECT_DOUBLE_EQ(items2[1].quantity("density", Dimension::density, std::nullopt), 1.1);

  EXPECT_TRUE(doc->root().list("absent").empty());
  auto bad = load("materials: 3\nm2: [1, 2]\n");
  EXPECT_HAS(error_of([&] { bad->root().list("materials"); }), "materials: expected a list");
  EXPECT_HAS(error_of([&] { bad->root().list("m2"); }), "m2[0]: expected a map of keys");
}

TEST(ConfigTest, SetOverrideCreatesAndOverrides) {
  auto doc = load("a:\n  b: 1\n  c: 2 mm\n");
  doc->set_override("a.b=3");            // overrides
  doc->set_override("x.y.z=[1, 2, 3]");  // creates nested maps
  doc->set_override("a.d=5 kPa");        // new key in an existing map
  doc->set_override("top=hello");
  const Node root = doc->root();
  const Node a = root.child("a");
  EXPECT_EQ(a.integer("b", std::nullopt, 0, 10), 3);
  EXPECT_DOUBLE_EQ(a.quantity("c", Dimension::length, std::nullopt), 2.0);
  EXPECT_DOUBLE_EQ(a.quantity("d", Dimension::pressure, std::nullopt), 5.0);
  EXPECT_EQ(root.child("x").child("y").int3("z", std::nullopt, 0, 10), Eigen::Vector3i(1, 2, 3));
  EXPECT_EQ(root.text("top", std::nullopt), "hello");
  EXPECT_NO_THROW(doc->check_no_unknown_keys());

  auto empty = load("");
  empty->set_override("a.b=3");
  EXPECT_EQ(empty->root().child("a").integer("b", std::nullopt, 0, 10), 3);
}

TEST(ConfigTest, SetOverrideErrors) {
  auto doc = load("a: 1\n");
  EXPECT_HAS(error_of([&] { doc->set_override("a.b=3"); }), "'a' is not a map");
  EXPECT_HAS(error_of([&] { doc->set_override("novalue"); }), "expected KEY.PATH=VALUE");
  EXPECT_HAS(error_of([&] { doc->set_override("=3"); }), "expected KEY.PATH=VALUE");
  EXPECT_HAS(error_of([&] { doc->set_override("a=[1, 2"); }), "cannot parse value");
  // An empty part is the argument's fault, not line 1 of the config's (issue 14).
  for (const char* bad : {"material.=2", ".a=1", "a..b=1"})
    EXPECT_EQ(error_of([&] { doc->set_override(bad); }).rfind(std::string("--set '") + bad + "': empty key in", 0), 0u)
        << bad;
}

TEST(ConfigTest, SetOverrideListItems) {
  auto doc = load("c:\n  cavities:\n    - {name: lv, wk: {r: 1}}\n    - {name: rv, wk: {r: 2}}\nv: [1, 2, 3]\n");
  doc->set_override("c.cavities[1].wk.r=7");   // a key inside a list item
  doc->set_override("c.cavities[0].extra=x");  // a new key in an existing item
  doc->set_override("v[2]=9");                 // a list item itself
  const Node root = doc->root();
  const auto items = root.child("c").list("cavities");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].child("wk").integer("r", std::nullopt, 0, 10), 1);
  EXPECT_EQ(items[1].child("wk").integer("r", std::nullopt, 0, 10), 7);
  EXPECT_EQ(items[0].text("extra", std::nullopt), "x");
  EXPECT_EQ(root.integers("v", std::nullopt, 0, 10), (std::vector<long>{1, 2, 9}));
  // A range error in an item names the override, not a file position.
  doc->set_override("c.cavities[0].wk.r=70");
  const std::string e =
      error_of([&] { doc->root().child("c").list("cavities")[0].child("wk").integer("r", std::nullopt, 0, 10); });
  EXPECT_HAS(e, "--set 'c.cavities[0].wk.r=70'");
  // Errors: no such item, not a list, malformed index; lists are not extended.
  EXPECT_HAS(error_of([&] { doc->set_override("c.cavities[2].wk.r=1"); }), "'cavities' has 2 item(s), no item 2");
  EXPECT_HAS(error_of([&] { doc->set_override("c[0].x=1"); }), "'c' is not a list");
  EXPECT_HAS(error_of([&] { doc->set_override("c.cavities[x].name=a"); }), "expected KEY or KEY[INDEX]");
  EXPECT_HAS(error_of([&] { doc->set_override("c.cavities[].name=a"); }), "expected KEY or KEY[INDEX]");
  EXPECT_HAS(error_of([&] { doc->set_override("a..b=1"); }), "empty key");
}

TEST(ConfigTest, KeysAndYamlTextOfDataMaps) {
  auto doc = load("set:\n  geometry.voxel_size: 2 mm\n  v: [1, 2 mm, 3]\n  s: 'a: b'\nbad: {m: {x: 1}}\n");
  const Node root = doc->root();
  EXPECT_EQ(root.keys("set"), (std::vector<std::string>{"geometry.voxel_size", "v", "s"}));
  const Node set = root.child("set");
  EXPECT_EQ(set.yaml_text("geometry.voxel_size"), "2 mm");
  EXPECT_EQ(set.yaml_text("v"), "[1, 2 mm, 3]");
  // The text round-trips through set_override.
  auto target = load("a: 1\n");
  target->set_override("s=" + set.yaml_text("s"));
  EXPECT_EQ(target->root().text("s", std::nullopt), "a: b");
  EXPECT_TRUE(root.keys("absent").empty());
  EXPECT_HAS(error_of([&] { root.child("bad").yaml_text("m"); }), "not a map");
  EXPECT_HAS(error_of([&] { root.keys("set"), root.child("set").keys("v"); }), "expected a map of keys");
}

TEST(ConfigTest, OverriddenValuesAreStillChecked) {
  auto doc = load("material:\n  youngs_modulus: 10 kPa\n");
  doc->set_override("material.youngs_modulus=-1 kPa");
  const std::string e = error_of([&] {
    doc->root().child("material").quantity("youngs_modulus", Dimension::pressure, std::nullopt, Range::positive());
  });
  EXPECT_HAS(e, "material.youngs_modulus");
  EXPECT_HAS(e, "out of range");
}

TEST(ConfigTest, ErrorsInOverriddenValuesNameTheOverride) {
  // A value from set_override has no place in the file: its errors must name the override,
  // not a file:line that points at an unrelated line of the file.
  auto doc = load("name: x\nblock:\n  voxels: [2, 2, 2]\n  voxel_size: 1 mm\n");
  doc->set_override("block.voxels=[0, 2, 2]");
  doc->set_override("block.extra=1");
  doc->root().text("name", std::nullopt);
  const Node b = doc->root().child("block");
  const std::string e = error_of([&] { b.int3("voxels", std::nullopt, 1, 400); });
  EXPECT_HAS(e, "--set 'block.voxels=[0, 2, 2]': block.voxels: component 0 = 0 is out of range");
  EXPECT_EQ(e.find("test.yaml:1:"), std::string::npos) << e;
  EXPECT_DOUBLE_EQ(b.quantity("voxel_size", Dimension::length, std::nullopt), 1.0);
  EXPECT_EQ(b.where_of("voxel_size"), "test.yaml:4:15");  // untouched keys keep their location
  const std::string u = error_of([&] { doc->check_no_unknown_keys(); });
  EXPECT_HAS(u, "--set 'block.extra=1': unknown key 'block.extra'");

  // A whole list set by an override: errors in its items name the override too.
  auto doc2 = load("a: 1\n");
  doc2->set_override("items=[{e: 1}, {e: -1}]");
  const auto items = doc2->root().list("items");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_HAS(error_of([&] { items[1].number("e", std::nullopt, Range::positive()); }),
             "--set 'items=[{e: 1}, {e: -1}]': items[1].e: value -1 is out of range");
}

// Found by the fuzz test (issue 14): a section an override creates with a misspelt name was blamed
// on the file, without a line.
TEST(ConfigTest, AnUnknownSectionMadeByAnOverrideNamesIt) {
  auto doc = load("name: x\nsimulation: {beats: 2}\n");
  doc->set_override("simulationb.eats=1");
  doc->root().text("name", std::nullopt);
  (void)doc->root().child("simulation").integer("beats", 1, 1, 9);
  EXPECT_EQ(error_of([&] { doc->check_no_unknown_keys(); }),
            "--set 'simulationb.eats=1': unknown key 'simulationb'; did you mean 'simulation'?");
}

// A misspelt key that leaves a default in place is named with the error it causes (issue 14).
TEST(ConfigTest, AMisspeltKeyIsNamedWhereItsAbsenceCausesTheError) {
  auto doc = load(
      "fibres:\n  soruce: uniform\n  direction: [1, 0, 0]\nroles: {myocaridum: [1]}\nm: {E: 1, poisosn_ratio: 0.3}\n");
  const Node f = doc->root().child("fibres");
  EXPECT_EQ(f.choice("source", {"rule", "uniform"}, "rule"), "rule");
  EXPECT_EQ(error_of([&] { f.reject_if_present("direction", "used with source: uniform only"); }),
            "test.yaml:3:14: fibres.direction: does not apply here: used with source: uniform only; found 'soruce' at "
            "test.yaml:2:3, did you mean 'source'?");
  // A required key missing, whose absence another misspelt key explains.
  const Node r = doc->root().child("roles");
  (void)r.has("cavities");
  EXPECT_HAS(error_of([&] { r.integers("myocardium", std::nullopt, 0, 9); }), "did you mean 'myocardium'?");
  const Node m = doc->root().child("m");
  (void)m.has("poisson_ratio");
  EXPECT_HAS(error_of([&] { m.fail("", "give exactly one of E or poisson_ratio"); }),
             "m: give exactly one of E or poisson_ratio; found 'poisosn_ratio' at test.yaml:5:11, "
             "did you mean 'poisson_ratio'?");
}

TEST(ConfigTest, YamlSyntaxErrorNamesLine) {
  const std::string e = error_of([&] {
    load(
        "a:\n"
        "  b: 1\n"
        "  c: [1, 2\n"
        "d: 3\n");
  });
  EXPECT_HAS(e, "test.yaml:");
  EXPECT_HAS(e, "YAML syntax error");
  // yaml-cpp reports the unterminated flow sequence where it notices it (line 3 or 4).
  EXPECT_TRUE(e.find("test.yaml:3:") != std::string::npos || e.find("test.yaml:4:") != std::string::npos) << e;

  const std::string e2 = error_of([&] { load("a: 1\n  b: 2\n"); });
  EXPECT_HAS(e2, "test.yaml:2:");
  EXPECT_HAS(e2, "YAML syntax error");
}

TEST(ConfigTest, RootMustBeAMap) {
  EXPECT_HAS(error_of([&] { load("- 1\n- 2\n"); }), "must be a map of keys");
  EXPECT_HAS(error_of([&] { load("just a scalar\n"); }), "must be a map of keys");
  EXPECT_NO_THROW(load("# only a comment\n"));
}

TEST(ConfigTest, LoadFile) {
  EXPECT_HAS(error_of([&] { Document::load_file("/nonexistent/dir/cfg.yaml"); }),
             "/nonexistent/dir/cfg.yaml: cannot open config file: it does not exist");
  // A directory opens as an empty stream: it must not read as an empty config (issue 14).
  const std::string dir = std::string(CARDIO_SOURCE_DIR) + "/configs";
  EXPECT_EQ(error_of([&] { Document::load_file(dir); }), dir + ": is a directory; expected a YAML config file");
  auto doc = Document::load_file(std::string(CARDIO_SOURCE_DIR) + "/configs/experiments/elongation.yaml");
  EXPECT_EQ(doc->root().text("name", std::nullopt), "elongation");
  EXPECT_HAS(doc->file_name(), "elongation.yaml");
}

TEST(ConfigTest, TextWithQuotesSurvivesResolvedYaml) {
  auto doc = load("name: 'say \"hi\" \\ there'\n");
  EXPECT_EQ(doc->root().text("name", std::nullopt), "say \"hi\" \\ there");
  const std::string resolved = doc->resolved_yaml();
  auto again = Document::load_string(resolved, "resolved.yaml");
  EXPECT_EQ(again->root().text("name", std::nullopt), "say \"hi\" \\ there") << resolved;
}

}  // namespace
