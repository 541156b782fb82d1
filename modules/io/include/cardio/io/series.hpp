#pragma once
/// @file series.hpp
/// Time series for ParaView and spreadsheets: a `.pvd` collection of VTU frames, and CSV tables
/// whose column names carry their units (e.g. `time_ms`, `volume_mL`). Both written atomically.
#include <filesystem>
#include <string>
#include <vector>

namespace cardio::io {

/// One frame of a PVD collection: simulated time [ms] and the frame file, relative to the .pvd.
struct PvdFrame {
  double time_ms = 0;
  std::string file;
};

/// Write `series.pvd` listing the frames (ParaView reads the times as its time steps).
void write_pvd(const std::filesystem::path& file, const std::vector<PvdFrame>& frames);

/// A CSV table: header names, then rows of the same width. Numbers are written with up to 17
/// significant digits (round-trip exact); text cells are written as is (no commas allowed).
struct CsvTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  void add_row(std::vector<std::string> row);
  static std::string number(double v);
};

void write_csv(const std::filesystem::path& file, const CsvTable& table);

}  // namespace cardio::io
