// Parts of a config that YAML would silently drop (issue 14): a key given twice in one map, a
// second section of the same name, and a second document after `---` are errors naming both lines.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"

namespace {

using cardio::config::Document;

std::string error_of(const std::string& yaml) {
  try {
    Document::load_string(yaml, "cfg.yaml");
  } catch (const cardio::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no cardio::Error for:\n" << yaml;
  return {};
}

#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "'" << (needle) << "' not in: " << (haystack)

TEST(ConfigStructureTest, DuplicateKeyNamesFileKeyAndBothLines) {
  const std::string e = error_of(
      "material:\n"          // 1
      "  model: guccione\n"  // 2
      "  C: 2 kPa\n"         // 3
      "  b_f: 8\n"           // 4
      "  C: 50 kPa\n");      // 5
  EXPECT_HAS(e, "cfg.yaml:5:3: material.C: key given twice");
  EXPECT_HAS(e, "at line 3 and again at line 5");
}

TEST(ConfigStructureTest, SecondSectionOfTheSameName) {
  const std::string e = error_of(
      "material:\n"                 // 1
      "  youngs_modulus: 10 kPa\n"  // 2
      "name: x\n"                   // 3
      "material:\n"                 // 4
      "  youngs_modulus: 99 kPa\n");
  EXPECT_HAS(e, "cfg.yaml:4:1: material: key given twice");
  EXPECT_HAS(e, "at line 1 and again at line 4");
}

TEST(ConfigStructureTest, DuplicatesInsideListItemsAndFlowMaps) {
  EXPECT_HAS(error_of("cavities:\n"
                      "  - name: lv\n"
                      "    name: rv\n"),
             "cfg.yaml:3:5: cavities[0].name: key given twice in the same map, at line 2 and again at line 3");
  EXPECT_HAS(error_of("a: {b: 1, b: 2}\n"), "a.b: key given twice in the same map, at line 1 and again at line 1");
}

TEST(ConfigStructureTest, SecondDocumentIsAnError) {
  const std::string e = error_of(
      "name: first\n"  // 1
      "---\n"          // 2
      "name: second\n");
  EXPECT_HAS(e, "cfg.yaml:2: a second YAML document starts at line 2");
  EXPECT_HAS(e, "after the one at line 1");
  // A document marker first, then a second document further down.
  EXPECT_HAS(error_of("---\nname: a\n# comment\n---\nmaterial: {E: 1}\n"), "cfg.yaml:4: a second YAML document");
}

TEST(ConfigStructureTest, SyntaxErrorInALaterDocumentIsReported) {
  EXPECT_HAS(error_of("a: 1\n---\nb: [1, 2\n"), "YAML syntax error");
}

TEST(ConfigStructureTest, EmptyDocumentsAndMarkersAreFine) {
  EXPECT_NO_THROW(Document::load_string("---\nname: a\n", "cfg.yaml"));
  EXPECT_NO_THROW(Document::load_string("name: a\n---\n# nothing here\n", "cfg.yaml"));
  EXPECT_NO_THROW(Document::load_string("name: a\n...\n", "cfg.yaml"));
  // Equal keys in different maps are not duplicates.
  EXPECT_NO_THROW(Document::load_string("a: {x: 1}\nb: {x: 1}\nl: [{x: 1}, {x: 2}]\n", "cfg.yaml"));
}

TEST(ConfigStructureTest, SetOverridesStillApply) {
  auto doc = Document::load_string("material:\n  C: 2 kPa\n", "cfg.yaml");
  doc->set_override("material.C=50 kPa");
  doc->set_override("material.b_f=8");
  auto m = doc->root().child("material");
  EXPECT_DOUBLE_EQ(m.quantity("C", cardio::units::Dimension::pressure, std::nullopt), 50.0);
  EXPECT_DOUBLE_EQ(m.number("b_f", std::nullopt), 8.0);
  EXPECT_NO_THROW(doc->check_no_unknown_keys());
}

TEST(ConfigStructureTest, LoadFileChecksToo) {
  const std::string path = ::testing::TempDir() + "/config_structure_dup.yaml";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("a: 1\na: 2\n", f);
    std::fclose(f);
  }
  try {
    Document::load_file(path);
    ADD_FAILURE() << "no error";
  } catch (const cardio::Error& e) {
    EXPECT_HAS(e.what(), path + ":2:1: a: key given twice");
  }
  std::remove(path.c_str());
}

}  // namespace
