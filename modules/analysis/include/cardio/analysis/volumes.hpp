#pragma once
/// @file volumes.hpp
/// Tissue volume and its change (incompressibility check), per-beat volume indices (EDV, ESV, SV,
/// EF) from a sampled cavity volume curve, and the peak of a sampled curve (e.g. a strain).
#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <vector>

#include "cardio/mechanics/mesh.hpp"

namespace cardio::analysis {

/// Tissue volume at x [mm^3]: the sum of the trilinear hexahedron volumes (mechanics::hex_volume),
/// summed in fixed chunks (bit-identical for any thread count).
double tissue_volume(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x);

/// Relative tissue volume change V(x) / V(rest) - 1 (0 for an incompressible motion).
double relative_volume_change(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x);

/// One beat: the samples with t_begin <= t <= t_end belong to it. If `t_end_diastole` is finite
/// (the start of isovolumic contraction, known from the beat phases), EDV is the volume there
/// (linear interpolation between samples); otherwise EDV is the maximum over the beat.
struct BeatWindow {
  double t_begin_ms = 0;
  double t_end_ms = 0;
  double t_end_diastole_ms = std::numeric_limits<double>::quiet_NaN();
};

/// Volume indices of one beat, in the units of the volume samples (mL in outputs).
struct BeatVolumes {
  double edv = 0;                   ///< end-diastolic volume
  double esv = 0;                   ///< end-systolic volume = the minimum over the beat
  double sv = 0;                    ///< stroke volume EDV - ESV
  double ef = 0;                    ///< ejection fraction SV / EDV (a fraction; x 100 for %)
  double t_ed_ms = 0, t_es_ms = 0;  ///< times of EDV and ESV
};

/// EDV, ESV, SV, EF of one beat from samples (t ascending, same size as volume). Throws
/// cardio::Error if the beat holds no sample, t is not ascending, a value is not finite,
/// t_end_diastole lies outside the samples of the beat, or EDV <= 0.
BeatVolumes beat_volumes(const Eigen::VectorXd& t_ms, const Eigen::VectorXd& volume, const BeatWindow& beat);

/// Windows [b_k, b_{k+1}] from ascending beat boundaries (e.g. the activation onsets and the end).
std::vector<BeatWindow> beats_from_boundaries(const std::vector<double>& boundaries_ms);

/// Which extreme a peak is: `minimum` for shortening strains (E_cc, E_ll, E_ff: peak = the most
/// negative value), `maximum` for thickening (E_rr), pressures, volumes.
enum class PeakKind { minimum, maximum };

struct Peak {
  double value = 0;
  double time_ms = 0;
  double time_to_peak_ms = 0;  ///< time_ms - the window start (t_begin, or the first sample if -inf)
  std::int64_t index = -1;     ///< sample index
};

/// The sample extreme of y over t_begin <= t <= t_end (first one on ties; no interpolation between
/// samples). Throws cardio::Error for sizes that differ, t not ascending, a non-finite y in the
/// window, or no sample in it.
Peak find_peak(const Eigen::VectorXd& t_ms, const Eigen::VectorXd& y, PeakKind kind,
               double t_begin_ms = -std::numeric_limits<double>::infinity(),
               double t_end_ms = std::numeric_limits<double>::infinity());

}  // namespace cardio::analysis
