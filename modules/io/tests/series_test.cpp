// PVD collections and CSV tables: written atomically, read back as text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/io/series.hpp"

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("cardio_series_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(Series, PvdListsFramesWithTheirTimes) {
  const fs::path d = temp_dir("pvd");
  cardio::io::write_pvd(d / "series.pvd", {{0.0, "frames/f0.vtu"}, {12.5, "frames/f1.vtu"}});
  const std::string text = slurp(d / "series.pvd");
  const std::regex entry(R"re(<DataSet timestep="([^"]+)" group="" part="0" file="([^"]+)"/>)re");
  std::vector<std::pair<double, std::string>> got;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it)
    got.emplace_back(std::stod((*it)[1]), (*it)[2]);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].first, 12.5);
  EXPECT_EQ(got[1].second, "frames/f1.vtu");
  EXPECT_NE(text.find("type=\"Collection\""), std::string::npos);
  fs::remove_all(d);
}

TEST(Series, CsvRoundTripsNumbersExactly) {
  const fs::path d = temp_dir("csv");
  cardio::io::CsvTable t{{"time_ms", "volume_mL", "phase"}, {}};
  const double v = 0.1 + 0.2;  // not representable in few digits
  t.add_row({cardio::io::CsvTable::number(1.5), cardio::io::CsvTable::number(v), "ejection"});
  cardio::io::write_csv(d / "t.csv", t);
  std::istringstream in(slurp(d / "t.csv"));
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_EQ(header, "time_ms,volume_mL,phase");
  EXPECT_EQ(std::stod(row.substr(row.find(',') + 1)), v);
  EXPECT_THROW(t.add_row({"1", "2"}), cardio::Error);
  EXPECT_THROW(cardio::io::write_csv(d / "bad.csv", {{"a"}, {{"x,y"}}}), cardio::Error);
  EXPECT_FALSE(fs::exists(d / "bad.csv"));
  fs::remove_all(d);
}

}  // namespace
