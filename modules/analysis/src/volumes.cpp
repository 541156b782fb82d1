#include "cardio/analysis/volumes.hpp"

#include <cmath>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::analysis {
namespace {

void check_series(const Eigen::VectorXd& t, const Eigen::VectorXd& y, const char* what) {
  if (t.size() != y.size()) CARDIO_FAIL(what << ": " << t.size() << " times but " << y.size() << " values");
  for (Eigen::Index i = 0; i < t.size(); ++i) {
    if (!std::isfinite(t(i))) CARDIO_FAIL(what << ": time " << i << " is not finite");
    if (i > 0 && !(t(i) > t(i - 1)))
      CARDIO_FAIL(what << ": times must increase; t[" << i - 1 << "] = " << t(i - 1) << " ms, t[" << i << "] = " << t(i)
                       << " ms");
  }
}

/// First and one-past-last sample index with t_begin <= t <= t_end.
std::pair<Eigen::Index, Eigen::Index> window(const Eigen::VectorXd& t, double t_begin, double t_end, const char* what) {
  Eigen::Index b = 0;
  while (b < t.size() && t(b) < t_begin) ++b;
  Eigen::Index e = b;
  while (e < t.size() && t(e) <= t_end) ++e;
  if (e == b) CARDIO_FAIL(what << ": no sample in [" << t_begin << ", " << t_end << "] ms");
  return {b, e};
}

}  // namespace

double tissue_volume(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x) {
  CARDIO_CHECK(x.cols() == mesh.n_nodes(),
               "tissue volume: " << x.cols() << " node positions for a mesh of " << mesh.n_nodes() << " nodes");
  return deterministic_sum(mesh.n_elements(), [&](std::int64_t e) {
    return mechanics::hex_volume(mechanics::gather(x, mesh.hexes[std::size_t(e)]));
  });
}

double relative_volume_change(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x) {
  const double v0 = tissue_volume(mesh, mesh.rest);
  CARDIO_CHECK(v0 > 0, "relative volume change: rest tissue volume " << v0 << " mm^3 is not positive");
  return tissue_volume(mesh, x) / v0 - 1.0;
}

BeatVolumes beat_volumes(const Eigen::VectorXd& t, const Eigen::VectorXd& volume, const BeatWindow& beat) {
  check_series(t, volume, "beat volumes");
  const auto [b, e] = window(t, beat.t_begin_ms, beat.t_end_ms, "beat volumes");
  BeatVolumes r;
  Eigen::Index i_max = b, i_min = b;
  for (Eigen::Index i = b; i < e; ++i) {
    if (!std::isfinite(volume(i))) CARDIO_FAIL("beat volumes: volume at t = " << t(i) << " ms is not finite");
    if (volume(i) > volume(i_max)) i_max = i;
    if (volume(i) < volume(i_min)) i_min = i;
  }
  if (std::isfinite(beat.t_end_diastole_ms)) {
    const double ted = beat.t_end_diastole_ms;
    if (ted < t(b) || ted > t(e - 1))
      CARDIO_FAIL("beat volumes: end-diastole t = " << ted << " ms lies outside the beat's samples [" << t(b) << ", "
                                                    << t(e - 1) << "] ms");
    Eigen::Index i = b;
    while (i + 1 < e && t(i + 1) <= ted) ++i;
    const double w = i + 1 < e ? (ted - t(i)) / (t(i + 1) - t(i)) : 0.0;
    r.edv = w == 0.0 ? volume(i) : (1 - w) * volume(i) + w * volume(i + 1);
    r.t_ed_ms = ted;
  } else {
    r.edv = volume(i_max);
    r.t_ed_ms = t(i_max);
  }
  r.esv = volume(i_min);
  r.t_es_ms = t(i_min);
  if (!(r.edv > 0)) CARDIO_FAIL("beat volumes: end-diastolic volume " << r.edv << " is not positive");
  r.sv = r.edv - r.esv;
  r.ef = r.sv / r.edv;
  return r;
}

std::vector<BeatWindow> beats_from_boundaries(const std::vector<double>& boundaries) {
  if (boundaries.size() < 2) CARDIO_FAIL("beat boundaries: need at least two, got " << boundaries.size());
  std::vector<BeatWindow> beats;
  for (std::size_t k = 0; k + 1 < boundaries.size(); ++k) {
    if (!(boundaries[k + 1] > boundaries[k]))
      CARDIO_FAIL("beat boundaries must increase: " << boundaries[k] << " then " << boundaries[k + 1] << " ms");
    beats.push_back({boundaries[k], boundaries[k + 1]});
  }
  return beats;
}

Peak find_peak(const Eigen::VectorXd& t, const Eigen::VectorXd& y, PeakKind kind, double t_begin, double t_end) {
  check_series(t, y, "peak");
  const auto [b, e] = window(t, t_begin, t_end, "peak");
  Eigen::Index best = b;
  for (Eigen::Index i = b; i < e; ++i) {
    if (!std::isfinite(y(i))) CARDIO_FAIL("peak: value at t = " << t(i) << " ms is not finite");
    if (kind == PeakKind::minimum ? y(i) < y(best) : y(i) > y(best)) best = i;
  }
  Peak p;
  p.value = y(best);
  p.time_ms = t(best);
  p.index = best;
  p.time_to_peak_ms = t(best) - (std::isfinite(t_begin) ? t_begin : t(b));
  return p;
}

}  // namespace cardio::analysis
