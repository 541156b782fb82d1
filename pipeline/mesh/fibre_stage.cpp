#include "mesh/fibre_stage.hpp"

#include <algorithm>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/fibres/frames.hpp"
#include "cardio/fibres/sampling.hpp"
#include "cardio/mechanics/sampled_axes.hpp"

namespace cardio::pipeline {

using imaging::RoleVolume;

fibres::RuleAngles rule_angles(const RuleAngles& a) {
  fibres::RuleAngles r;
  r.helix_endo = a.helix_endo;
  r.helix_epi = a.helix_epi;
  r.sheet_endo = a.sheet_endo;
  r.sheet_epi = a.sheet_epi;
  return r;
}

VoxelFibres voxel_fibres(const FibreParams& fp, const RoleVolume& roles,
                         const meshing::BoundaryClassification& boundary, const Imported& im) {
  VoxelFibres out;
  imaging::VoxelFrames& frames = out.frames;
  if (fp.source == FibreSource::rule) {
    frames = fibres::rule_based_frames(roles, boundary, rule_angles(fp.rule), nullptr, {}, &out.rule_fields);
  } else if (fp.source == FibreSource::uniform) {
    frames.voxels = imaging::voxels_with_role(roles, RoleVolume::kMyocardium);
    frames.fibre = fp.uniform_fibre.replicate(1, Eigen::Index(frames.voxels.size()));
    frames.sheet = fp.uniform_sheet.replicate(1, Eigen::Index(frames.voxels.size()));
  } else {
    imaging::VoxelFrames rule;
    // The rule gives the sheet when no sheet image is given (if there is an endocardium to build it
    // on; otherwise a fixed perpendicular is used) and fills invalid voxels when the config asks.
    const bool has_endocardium =
        std::any_of(boundary.faces.begin(), boundary.faces.end(),
                    [](const meshing::VoxelFace& f) { return f.tag >= meshing::SurfaceTag::kFirstEndocardium; });
    const bool need_rule = fp.fill_missing_by_rule || (im.sheet.values.empty() && has_endocardium);
    if (need_rule && fp.source != FibreSource::phantom)
      rule = fibres::rule_based_frames(roles, boundary, rule_angles(fp.rule));
    const std::string name = fp.source == FibreSource::vectors  ? fp.fibre_file.string()
                             : fp.source == FibreSource::angles ? fp.azimuth_file.string()
                                                                : "phantom fibres";
    frames = fibres::frames_from_vectors(roles, im.fibre, im.sheet.values.empty() ? nullptr : &im.sheet,
                                         rule.voxels.empty() ? nullptr : &rule, name, &out.filled_by_rule,
                                         fp.fill_missing_by_rule);
  }
  std::string why;
  CARDIO_CHECK(fibres::check_frames(frames, 1e-6, &why), "fibre frames: " << why);
  return out;
}

std::string sample_fibre_frames(meshing::VoxelMesh& m, const imaging::VoxelFrames& frames,
                                const std::optional<phantoms::PhantomSpec>& phantom, const fibres::LdrbFields* rule,
                                const fibres::RuleAngles& angles) {
  mechanics::HexMesh& mesh = m.mesh;
  const std::int64_t ne = mesh.n_elements();
  Eigen::Matrix3Xd points(3, 8 * ne);
  std::vector<std::int64_t> own(std::size_t(8 * ne));
  parallel_for(ne, [&](std::int64_t e) {
    points.middleCols<8>(8 * e) = mechanics::sample_points(mechanics::gather(mesh.rest, mesh.hexes[std::size_t(e)]));
    for (int g = 0; g < 8; ++g) own[std::size_t(8 * e + g)] = e;  // element e has frame e (same voxel order)
  });
  if (phantom) {
    mesh.sample_fibre.resize(3, 8 * ne);
    mesh.sample_sheet.resize(3, 8 * ne);
    parallel_for(8 * ne, [&](std::int64_t c) {
      const phantoms::FibreSheet fs =
          phantoms::phantom_fibre_sheet(*phantom, m.label[std::size_t(c / 8)], points.col(c));
      mesh.sample_fibre.col(c) = fs.fibre;
      mesh.sample_sheet.col(c) = fs.sheet;
    });
    return "analytic";
  }
  fibres::PointFrames pf = rule ? fibres::rule_frames_at(m.grid, *rule, angles, points, own)
                                : fibres::interpolate_frames(m.grid, frames, points, own);
  mesh.sample_fibre = std::move(pf.fibre);
  mesh.sample_sheet = std::move(pf.sheet);
  return rule ? "rule_at_samples" : "structure_tensor";
}

}  // namespace cardio::pipeline
