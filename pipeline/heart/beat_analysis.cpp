#include "heart/beat_analysis.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

#include "cardio/analysis/aha.hpp"
#include "cardio/analysis/axis.hpp"
#include "cardio/analysis/clinical.hpp"
#include "cardio/core/error.hpp"
#include "cardio/mechanics/mesh.hpp"
#include "heart/heart_model.hpp"

namespace cardio::pipeline {
namespace {

/// Green-Lagrange normal strains, then the engineering strains e = sqrt(1 + 2E) - 1 along the same
/// directions (what echo and MR report, docs/analysis.md).
constexpr const char* kStrainNames[BeatAnalysis::kStrains] = {"E_cc", "E_ll", "E_rr", "E_ff",
                                                              "e_cc", "e_ll", "e_rr", "e_ff"};
/// What GLS and GCS mean here (summary.json; docs/analysis.md, "Global strain on the LV endocardium").
constexpr const char* kEndocardialDefinition =
    "LV endocardial surface (faces tagged endocardium_<lv cavity>) smoothed by a windowed-sinc filter with its own "
    "connectivity, engineering strain of each smoothed face along its meridional (GLS) or circumferential (GCS) "
    "tangent, mean weighted by face area x |meridional component of the long axis|, relative to the strain reference";
/// The peak of a strain is its most negative value for shortening strains (cc, ll, ff) and its
/// largest for radial thickening (rr): the sign convention of docs/analysis.md.
constexpr bool kPeakIsMinimum[BeatAnalysis::kStrains] = {true, true, false, true, true, true, false, true};

std::vector<std::string> strain_columns(const char* first, const char* second) {
  std::vector<std::string> c{first, second};
  for (const char* name : kStrainNames) c.emplace_back(name);
  return c;
}

/// The rotation slices of the LV: the nodes of LV elements (segment > 0) whose rest height above the
/// base plane lies within |h_a|/12 of the middle of the basal (h_a/6) or apical (5 h_a/6) AHA ring,
/// with h_a < 0 the height of the endocardial apex (docs/analysis.md, "LV twist and torsion").
std::array<std::vector<std::int32_t>, 2> twist_slices(const mechanics::HexMesh& mesh,
                                                      const std::vector<std::uint8_t>& segment,
                                                      const analysis::AhaSpec& spec) {
  std::vector<std::uint8_t> in_lv(std::size_t(mesh.n_nodes()), 0);
  for (std::size_t e = 0; e < mesh.hexes.size(); ++e)
    if (segment[e] > 0)
      for (const std::int32_t n : mesh.hexes[e]) in_lv[std::size_t(n)] = 1;
  std::vector<std::int32_t> lv_nodes;
  for (std::size_t n = 0; n < in_lv.size(); ++n)
    if (in_lv[n]) lv_nodes.push_back(std::int32_t(n));
  const Eigen::Vector3d l = analysis::unit_axis_direction(spec.axis);
  const double h_a = (spec.endocardial_apex - spec.base_point).dot(l);
  const auto slice = [&](double height) {
    return analysis::slice_nodes(mesh.rest, lv_nodes, spec.base_point, l, height, std::abs(h_a) / 12.0);
  };
  return {slice(h_a / 6.0), slice(5.0 * h_a / 6.0)};
}

/// Direction from the LV axis to the anterior RV insertion. Default: the septum direction (LV axis
/// to the RV cavity centroid, orthogonal to the axis) turned back by 60 degrees, since the AHA
/// sectors put the middle of the septum (between segments 2|8 and 3|9) 60 degrees after the
/// anterior insertion; without an RV, +y orthogonalised (a documented, arbitrary choice).
Eigen::Vector3d anterior_direction(const AnalysisParams& p, const meshing::VoxelMesh& m,
                                   const analysis::AhaSpec& spec) {
  const Eigen::Vector3d l = analysis::unit_axis_direction(spec.axis);
  const auto ortho = [&](Eigen::Vector3d d) { return (d - d.dot(l) * l).normalized(); };
  if (p.anterior_direction) return *p.anterior_direction;
  const auto rv = std::find_if(m.cavities.begin(), m.cavities.end(), [](const auto& c) { return c.name == "rv"; });
  if (rv != m.cavities.end()) {
    const Eigen::Vector3d septum = ortho(analysis::cavity_centroid(*rv, m.mesh.rest) - spec.axis.point);
    // theta grows clockwise seen from the base, a positive rotation about -l (aha.hpp): the
    // insertion at theta = 0 is the septum turned by -60 degrees about -l.
    const double sign = spec.clockwise_from_base ? -1.0 : 1.0;
    return Eigen::AngleAxisd(-std::numbers::pi / 3.0, sign * l) * septum;
  }
  Eigen::Vector3d y(0, 1, 0);
  if (std::abs(y.dot(l)) > 0.9) y = Eigen::Vector3d(1, 0, 0);
  return ortho(y);
}

/// The boundary faces tagged endocardium_<lv cavity> (none if the mesh has no such tag).
std::vector<mechanics::Quad> endocardial_faces(const meshing::VoxelMesh& m, const std::string& cavity) {
  SurfaceSelector endocardium;
  endocardium.tag = "endocardium_" + cavity;
  endocardium.where = "analysis: the LV endocardium for GLS and GCS";
  if (std::find(m.tag_names.begin(), m.tag_names.end(), endocardium.tag) == m.tag_names.end()) return {};
  return select_quads(endocardium, m);
}

/// The most negative finite value of `value(sample)` in [t_begin, t_end) and its time from t_begin (null if none).
template <class Samples, class Value>
std::pair<nlohmann::json, nlohmann::json> minimum_in(const Samples& samples, double t_begin, double t_end,
                                                     Value value) {
  double best = std::numeric_limits<double>::quiet_NaN(), when = best;
  for (const auto& s : samples) {
    const double v = value(s);
    if (s.t < t_begin || s.t >= t_end || !std::isfinite(v)) continue;
    if (std::isnan(best) || v < best) {
      best = v;
      when = s.t;
    }
  }
  if (std::isnan(best)) return {nullptr, nullptr};
  return {best, when - t_begin};
}

}  // namespace

BeatAnalysis::BeatAnalysis(const AnalysisParams& params, const meshing::VoxelMesh& m, const meshing::CavitySurface& lv)
    : m_params(params), m_mesh(m.mesh) {
  analysis::AhaSpec spec;
  spec.axis = analysis::cardiac_axis(m.axis, lv, m.mesh.rest);
  if (params.axis_point) spec.axis = {*params.axis_point, *params.axis_direction};  // analysis.long_axis
  const Eigen::Vector3d l = analysis::unit_axis_direction(spec.axis);
  spec.base_point = m.axis.base_point;
  spec.endocardial_apex = analysis::endocardial_apex(lv, m.mesh.rest, l);
  spec.anterior_rv_insertion = anterior_direction(params, m, spec);
  spec.lv_labels = params.lv_labels;
  m_segment = analysis::aha_segments(m.mesh, m.label, spec);
  m_axis_direction = l;
  m_slices = twist_slices(m.mesh, m_segment, spec);
  m_rest_dirs = analysis::rest_directions(m.mesh, spec.axis);
  m_ref = m.mesh.rest;
  m_strain_ref.emplace(m.mesh, m_rest_dirs);
  m_endocardium = analysis::endocardial_surface(endocardial_faces(m, lv.name));
  update_endocardial_frame();
  m_weight = mechanics::element_volumes(m.mesh, m.mesh.rest);
  m_labels = m.labels_used;
  CARDIO_CHECK(m_labels.size() < 256, "more than 255 myocardium labels");
  m_label_index.resize(m.label.size());
  for (std::size_t e = 0; e < m.label.size(); ++e)
    m_label_index[e] = std::uint8_t(std::lower_bound(m_labels.begin(), m_labels.end(), m.label[e]) - m_labels.begin());
}

void BeatAnalysis::update_endocardial_frame() {
  if (!m_endocardium.quads.empty())
    m_endocardial_frame = analysis::endocardial_frame(m_endocardium, analysis::smoothed_positions(m_endocardium, m_ref),
                                                      m_axis_direction);
}

analysis::ElementStrains BeatAnalysis::strains_now(const Eigen::Matrix3Xd& x) const { return m_strain_ref->strains(x); }

std::vector<io::Field> BeatAnalysis::frame_fields(const Eigen::Matrix3Xd& x) const {
  const analysis::ElementStrains s = strains_now(x);
  const Eigen::Index n = m_mesh.n_elements();
  Eigen::MatrixXd seg(1, n);
  for (Eigen::Index e = 0; e < n; ++e) seg(0, e) = m_segment[std::size_t(e)];
  return {{"E", s.E},
          {"E_ff", s.E_ff.transpose()},
          {"E_cc", s.E_cc.transpose()},
          {"E_rr", s.E_rr.transpose()},
          {"E_ll", s.E_ll.transpose()},
          {"J", s.J.transpose()},
          {"aha_segment", seg, true}};
}

void BeatAnalysis::sample(double t_ms, const Eigen::Matrix3Xd& x) {
  const analysis::ElementStrains s = strains_now(x);
  const Eigen::VectorXd e_cc = analysis::engineering_strain(s.E_cc), e_ll = analysis::engineering_strain(s.E_ll);
  const Eigen::VectorXd e_rr = analysis::engineering_strain(s.E_rr), e_ff = analysis::engineering_strain(s.E_ff);
  const Eigen::VectorXd* fields[kStrains] = {&s.E_cc, &s.E_ll, &s.E_rr, &s.E_ff, &e_cc, &e_ll, &e_rr, &e_ff};
  Sample smp{};
  smp.t = t_ms;
  smp.gls = smp.gcs = std::numeric_limits<double>::quiet_NaN();
  if (!m_endocardium.quads.empty()) {
    const analysis::EndocardialStrain g = analysis::endocardial_strain(m_endocardial_frame, m_endocardium,
                                                                       analysis::smoothed_positions(m_endocardium, x));
    smp.gls = g.longitudinal;
    smp.gcs = g.circumferential;
  }
  for (int k = 0; k < 2; ++k)
    smp.rotation_deg[k] = m_slices[std::size_t(k)].empty()
                              ? std::numeric_limits<double>::quiet_NaN()
                              : analysis::slice_rotation_deg(m_ref, x, m_slices[std::size_t(k)], m_axis_direction);
  for (int k = 0; k < kStrains; ++k) {
    const auto means = analysis::segment_means(*fields[k], m_weight, m_segment);
    for (int r = 1; r < kRegions; ++r) smp.mean[r][k] = means[std::size_t(r)];
    // Whole LV: the volume-weighted mean over segments 1..17 (element order: deterministic).
    double sw = 0, swv = 0;
    for (Eigen::Index e = 0; e < m_weight.size(); ++e)
      if (m_segment[std::size_t(e)] > 0) {
        sw += m_weight[e];
        swv += m_weight[e] * (*fields[k])[e];
      }
    smp.mean[0][k] = sw > 0 ? swv / sw : std::numeric_limits<double>::quiet_NaN();
  }
  // Label regions: volume-weighted means per myocardium label (element order: deterministic).
  const std::size_t nl = m_labels.size();
  std::vector<double> sw(nl, 0.0), swv(nl * kStrains, 0.0);
  for (Eigen::Index e = 0; e < m_weight.size(); ++e) {
    const std::size_t l = m_label_index[std::size_t(e)];
    sw[l] += m_weight[e];
    for (int k = 0; k < kStrains; ++k) swv[l * kStrains + std::size_t(k)] += m_weight[e] * (*fields[k])[e];
  }
  smp.label_mean.resize(nl * kStrains);
  for (std::size_t l = 0; l < nl; ++l)
    for (int k = 0; k < kStrains; ++k)
      smp.label_mean[l * kStrains + std::size_t(k)] = swv[l * kStrains + std::size_t(k)] / sw[l];
  m_samples.push_back(smp);
}

void BeatAnalysis::end_diastole(double, const Eigen::Matrix3Xd& x) {
  if (m_params.reference != StrainReference::end_diastole) return;
  m_ref = x;
  m_ref_is_rest = false;
  m_strain_ref.emplace(m_mesh, m_ref, analysis::push_forward(m_mesh, m_ref, m_rest_dirs));
  update_endocardial_frame();
}

io::CsvTable BeatAnalysis::regional_table() const {
  io::CsvTable t{strain_columns("time_ms", "segment"), {}};
  for (const Sample& s : m_samples)
    for (int r = 0; r < kRegions; ++r) {
      std::vector<std::string> row{io::CsvTable::number(s.t), std::to_string(r)};
      for (int k = 0; k < kStrains; ++k) row.push_back(io::CsvTable::number(s.mean[r][k]));
      t.add_row(std::move(row));
    }
  return t;
}

io::CsvTable BeatAnalysis::lv_global_table() const {
  io::CsvTable t{{"time_ms", "GLS_fraction", "GCS_fraction"}, {}};  // engineering strain, not %
  for (const Sample& s : m_samples)
    t.add_row({io::CsvTable::number(s.t), io::CsvTable::number(s.gls), io::CsvTable::number(s.gcs)});
  return t;
}

io::CsvTable BeatAnalysis::label_table() const {
  io::CsvTable t{strain_columns("time_ms", "label"), {}};
  for (const Sample& s : m_samples)
    for (std::size_t l = 0; l < m_labels.size(); ++l) {
      std::vector<std::string> row{io::CsvTable::number(s.t), std::to_string(m_labels[l])};
      for (int k = 0; k < kStrains; ++k)
        row.push_back(io::CsvTable::number(s.label_mean[l * kStrains + std::size_t(k)]));
      t.add_row(std::move(row));
    }
  return t;
}

nlohmann::json BeatAnalysis::peaks(double t_begin_ms, double t_end_ms) const {
  nlohmann::json regions = nlohmann::json::array();
  for (int r = 0; r < kRegions; ++r) {
    nlohmann::json j = {{"segment", r}};
    for (int k = 0; k < kStrains; ++k) {
      double best = std::numeric_limits<double>::quiet_NaN(), when = best;
      for (const Sample& s : m_samples) {
        if (s.t < t_begin_ms || s.t >= t_end_ms || std::isnan(s.mean[r][k])) continue;
        const double v = s.mean[r][k];
        if (std::isnan(best) || (kPeakIsMinimum[k] ? v < best : v > best)) {
          best = v;
          when = s.t;
        }
      }
      j[kStrainNames[k]] = std::isnan(best) ? nlohmann::json(nullptr) : nlohmann::json(best);
      j[std::string("time_to_peak_") + kStrainNames[k] + "_ms"] =
          std::isnan(when) ? nlohmann::json(nullptr) : nlohmann::json(when - t_begin_ms);
    }
    regions.push_back(j);
  }
  nlohmann::json global = regions[0];
  global.erase("segment");
  regions.erase(regions.begin());
  return {{"reference", name_of(m_params.reference)},
          {"window_ms", {t_begin_ms, t_end_ms}},
          {"global", global},
          {"lv_endocardial", endocardial_peaks(t_begin_ms, t_end_ms)},
          {"segments", regions}};
}

nlohmann::json BeatAnalysis::endocardial_peaks(double t_begin_ms, double t_end_ms) const {
  const auto [gls, gls_t] = minimum_in(m_samples, t_begin_ms, t_end_ms, [](const Sample& s) { return s.gls; });
  const auto [gcs, gcs_t] = minimum_in(m_samples, t_begin_ms, t_end_ms, [](const Sample& s) { return s.gcs; });
  return {{"GLS", gls},
          {"time_to_peak_GLS_ms", gls_t},
          {"GCS", gcs},
          {"time_to_peak_GCS_ms", gcs_t},
          {"faces", m_endocardium.quads.size()},
          {"definition", kEndocardialDefinition}};
}

nlohmann::json BeatAnalysis::twist(double t_begin_ms, double t_end_ms) const {
  const auto centroid_height = [&](const std::vector<std::int32_t>& nodes) {
    double h = 0;
    for (const std::int32_t n : nodes) h += m_ref.col(n).dot(m_axis_direction);
    return h / double(nodes.size());
  };
  nlohmann::json j = {{"basal_slice_nodes", m_slices[0].size()}, {"apical_slice_nodes", m_slices[1].size()}};
  if (m_slices[0].empty() || m_slices[1].empty()) return j;
  // Distance between the slices in the reference configuration (end-diastole), as torsion is defined.
  const double distance_mm = centroid_height(m_slices[0]) - centroid_height(m_slices[1]);
  const Sample* peak = nullptr;  // the sample of the largest |twist| in the window (first on ties)
  for (const Sample& s : m_samples) {
    if (s.t < t_begin_ms || s.t >= t_end_ms) continue;
    if (!peak || std::abs(s.twist_deg()) > std::abs(peak->twist_deg())) peak = &s;
  }
  j["slice_distance_mm"] = distance_mm;
  if (!peak) return j;
  j["peak_twist_deg"] = peak->twist_deg();
  j["time_to_peak_twist_ms"] = peak->t - t_begin_ms;
  j["basal_rotation_at_peak_deg"] = peak->rotation_deg[0];
  j["apical_rotation_at_peak_deg"] = peak->rotation_deg[1];
  j["torsion_deg_per_cm"] = peak->twist_deg() / (distance_mm / 10.0);
  return j;
}

void BeatAnalysis::save(BinaryWriter& out) const {
  out.i64(m_ref_is_rest);
  out.f64s(m_ref.data(), std::size_t(m_ref.size()));
  out.u64(m_samples.size());
  for (const Sample& s : m_samples) {
    out.f64(s.t);
    out.raw(s.mean, sizeof s.mean);
    out.raw(s.rotation_deg, sizeof s.rotation_deg);
    out.f64s(s.label_mean.data(), s.label_mean.size());
    out.f64(s.gls);
    out.f64(s.gcs);
  }
}

void BeatAnalysis::restore(BinaryReader& in) {
  m_ref_is_rest = in.i64() != 0;
  in.f64s(m_ref.data(), std::size_t(m_ref.size()));
  if (!m_ref_is_rest) m_strain_ref.emplace(m_mesh, m_ref, analysis::push_forward(m_mesh, m_ref, m_rest_dirs));
  update_endocardial_frame();
  const std::uint64_t n = in.u64();
  CARDIO_CHECK(n < 100000000, "checkpoint claims " << n << " strain samples");
  m_samples.resize(n);
  for (Sample& s : m_samples) {
    s.t = in.f64();
    in.raw(s.mean, sizeof s.mean);
    in.raw(s.rotation_deg, sizeof s.rotation_deg);
    s.label_mean.resize(m_labels.size() * kStrains);
    in.f64s(s.label_mean.data(), s.label_mean.size());
    s.gls = in.f64();
    s.gcs = in.f64();
  }
}

}  // namespace cardio::pipeline
