#pragma once
/// @file derive_cavities.hpp
/// Blood pools of a myocardium mask that has none (a tissue-only segmentation with open chambers,
/// e.g. a HiP-CT or a CT heart mask): the background regions the myocardium encloses once its
/// openings (valves, an open base) are closed. docs/meshing.md, "Masks without chambers".
///
/// Algorithm (all distances in mm, physical spacing):
/// 1. Closing: the myocardium M closed by a ball of radius `closing_radius_mm` (exact, from
///    Euclidean distance maps) and its holes filled: F. A ball larger than an opening cannot pass
///    through it, so F covers every chamber the myocardium wraps, plus a cap in each opening.
/// 2. Candidates: the face-connected components of F \ M. Each is scored by its enclosure, the
///    share of its boundary area that touches myocardium (the rest touches the outside through the
///    openings). Pools have most of their boundary on the wall; the closing's fill of a concave
///    outer surface (an epicardial groove) has about half. Candidates with an enclosure below
///    `min_enclosure`, or smaller than `min_pool_fraction_of_myocardium` of the myocardium's
///    volume, are not pools, and pools smaller than `min_second_pool_fraction` of the largest are
///    ignored (vessel lumens in the wall); the two largest remaining are kept.
/// 3. Flat caps: a closing leaves a shallow spherical dent in each opening (depth
///    r - sqrt(r^2 - a^2) for an opening of radius a). For every opening of a pool the plane of
///    its rim (the myocardium voxels beside the opening) is fitted, and the outside voxels between
///    the pool and that plane, inside the rim, join the pool.
/// 4. LV and RV: the LV is the more compact pool (larger 36 pi V^2 / A^3: the LV cavity is
///    ellipsoidal, the RV a crescent wrapped around the septum); one pool only is the LV.
/// The myocardium voxels are never changed: derived voxels were outside before.
#include <cstdint>
#include <string>
#include <vector>

#include "cardio/imaging/volume.hpp"

namespace cardio::imaging {

struct DeriveCavitiesOptions {
  /// [mm] radius of the closing ball; larger than the radius of the widest opening (docs/config.md).
  double closing_radius_mm = 30.0;
  /// Share of a pool's boundary area on the myocardium (before capping) needed to count as a pool.
  double min_enclosure = 0.6;
  /// A pool holds at least this share of the myocardium's volume (a ventricle's blood at end-systole
  /// is about a third of its wall's volume; a concave outer surface the closing filled is less).
  double min_pool_fraction_of_myocardium = 0.05;
  /// A second pool counts if its volume is at least this share of the largest.
  double min_second_pool_fraction = 0.1;
};

/// One derived blood pool.
struct DerivedCavity {
  std::string name;             ///< "lv" or "rv"
  std::int64_t voxels = 0;      ///< in the volume (capped)
  double volume_mm3 = 0;        ///< voxels x voxel volume
  std::int64_t cap_voxels = 0;  ///< of those, added by the flat caps (step 3)
  double enclosure = 0;         ///< share of the boundary area on the myocardium, before capping
  double compactness = 0;       ///< 36 pi V^2 / A^3 of the voxel region (1 for a ball)
  std::int64_t openings = 0;    ///< openings found
  std::int64_t uncapped = 0;    ///< openings whose cap was refused (it would outgrow the pool: a leak)
};

struct DerivedCavities {
  std::vector<DerivedCavity> cavities;  ///< lv first, then rv if there are two pools
  double closing_radius_mm = 0;
  std::int64_t ignored_regions = 0;  ///< enclosed regions too small or too open to be pools
  double ignored_volume_mm3 = 0;
};

/// Derive the blood pools of `roles` (which must have myocardium and no cavities yet): the pool
/// voxels get the roles of cavities "lv" (and "rv"), roles.cavity_names is set; roles.labels is
/// unchanged. Throws cardio::Error saying why when no region is enclosed even after the closing.
DerivedCavities derive_cavities(RoleVolume& roles, const DeriveCavitiesOptions& options = {});

}  // namespace cardio::imaging
