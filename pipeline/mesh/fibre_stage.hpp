#pragma once
/// @file fibre_stage.hpp
/// The fibre stage of the mesh (internal to pipeline/mesh): fibre/sheet frames per myocardium voxel
/// from the configured source, and at the 8 samples of every element once meshed.
#include <cstdint>
#include <optional>
#include <string>

#include "cardio/fibres/rule_based.hpp"
#include "cardio/imaging/volume.hpp"
#include "cardio/meshing/boundary.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "config/mesh_config.hpp"
#include "mesh/import_stage.hpp"

namespace cardio::pipeline {

/// The config's rule angles as the fibres module takes them.
fibres::RuleAngles rule_angles(const RuleAngles& a);

/// Frames per myocardium voxel, checked orthonormal.
struct VoxelFibres {
  imaging::VoxelFrames frames;
  std::int64_t filled_by_rule = 0;  ///< voxels of imported vectors filled by the rule (fibres.missing: rule)
  fibres::LdrbFields rule_fields;   ///< source rule: the LDRB fields, for the samples
};

/// The frames of fibres.source: the LDRB rule, a uniform field, or imported vectors (a phantom's,
/// or files'), with the rule giving the sheet where no sheet image is given.
VoxelFibres voxel_fibres(const FibreParams& fp, const imaging::RoleVolume& roles,
                         const meshing::BoundaryClassification& boundary, const Imported& im);

/// Fibre frames at the 8 samples of every element (the sampled-axes element): the phantom's
/// analytic rule where the fibres come from it, the LDRB rule evaluated at the samples where they
/// come from it (`rule` given), else the voxel frames interpolated as structure tensors
/// (fibres/sampling.hpp). Returns how they were obtained, for the report.
std::string sample_fibre_frames(meshing::VoxelMesh& m, const imaging::VoxelFrames& frames,
                                const std::optional<phantoms::PhantomSpec>& phantom, const fibres::LdrbFields* rule,
                                const fibres::RuleAngles& angles);

}  // namespace cardio::pipeline
