// batch --skip-invalid: the valid cases of a manifest run, the invalid ones are reported per case.
#include <ostream>

#include "cohort/batch.hpp"

namespace cardio::pipeline::batch {

std::optional<Manifest> without_invalid_cases(const ManifestCheck& check) {
  if (check.manifest_problems > 0 || check.case_problems.size() != check.manifest.cases.size()) return std::nullopt;
  Manifest m = check.manifest;
  m.cases.clear();
  for (std::size_t i = 0; i < check.manifest.cases.size(); ++i) {
    const Case& c = check.manifest.cases[i];
    if (check.case_problems[i].empty())
      m.cases.push_back(c);
    else
      m.skipped.push_back({c.name, check.case_problems[i]});
  }
  if (m.cases.empty()) return std::nullopt;
  return m;
}

void report_skipped(const Manifest& m, const std::string& header, std::ostream& err) {
  if (m.skipped.empty()) return;
  err << header;
  for (const SkippedCase& s : m.skipped)
    err << "  " << (s.name.empty() ? "(no name)" : s.name) << ": invalid: " << s.reason << "\n";
}

}  // namespace cardio::pipeline::batch
