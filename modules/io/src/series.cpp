#include "cardio/io/series.hpp"

#include <charconv>
#include <sstream>

#include "cardio/core/atomic_file.hpp"
#include "cardio/core/error.hpp"

namespace cardio::io {

void write_pvd(const std::filesystem::path& file, const std::vector<PvdFrame>& frames) {
  std::ostringstream os;
  os << "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
        "  <Collection>\n";
  for (const PvdFrame& f : frames)
    os << "    <DataSet timestep=\"" << CsvTable::number(f.time_ms) << "\" group=\"\" part=\"0\" file=\"" << f.file
       << "\"/>\n";
  os << "  </Collection>\n</VTKFile>\n";
  write_file_atomic(file, os.str());
}

std::string CsvTable::number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip representation
  return std::string(buf, r.ptr);
}

void CsvTable::add_row(std::vector<std::string> row) {
  CARDIO_CHECK(row.size() == columns.size(), "CSV row has " << row.size() << " cells, expected " << columns.size());
  rows.push_back(std::move(row));
}

void write_csv(const std::filesystem::path& file, const CsvTable& table) {
  std::ostringstream os;
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      CARDIO_CHECK(cells[i].find_first_of(",\n\"") == std::string::npos, "CSV cell '" << cells[i] << "' needs quoting");
      os << (i ? "," : "") << cells[i];
    }
    os << "\n";
  };
  line(table.columns);
  for (const auto& r : table.rows) line(r);
  write_file_atomic(file, os.str());
}

}  // namespace cardio::io
