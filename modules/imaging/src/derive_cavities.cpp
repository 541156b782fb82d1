// Blood pools of a myocardium mask without cavities (algorithm: derive_cavities.hpp).
#include "cardio/imaging/derive_cavities.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numbers>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/imaging/memory.hpp"
#include "cavity_caps.hpp"
#include "itk_morphology.hpp"

namespace cardio::imaging {
namespace {

using Mask = itk_morphology::Image<std::uint8_t>;

/// Bytes per voxel of the working box: masks (myocardium, filled, added, pools), components, and
/// ITK's two float distance maps with their scratch and the fill's label map.
constexpr double kBytesPerBoxVoxel = 40;

/// The myocardium's bounding box padded by more than the closing radius (the closing must see
/// background all round; voxels beyond the image are background).
BoxGrid working_box(const RoleVolume& roles, double radius_mm) {
  const Grid& g = roles.role.grid;
  Index3 lo{g.size[0], g.size[1], g.size[2]}, hi{-1, -1, -1};
  for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
    if (roles.role.values[std::size_t(v)] != RoleVolume::kMyocardium) continue;
    const Index3 ijk = g.index(v);
    for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], ijk[a]), hi[a] = std::max(hi[a], ijk[a]);
  }
  CARDIO_CHECK(hi[0] >= 0, "derive_cavities: no myocardium voxel");
  BoxGrid box;
  box.grid = &g;
  for (int a = 0; a < 3; ++a) {
    const std::int64_t pad = std::int64_t(std::ceil(radius_mm / g.spacing[a])) + 2;
    box.lo[a] = lo[a] - pad;
    box.size[a] = hi[a] - lo[a] + 1 + 2 * pad;
  }
  return box;
}

Mask myocardium_in_box(const RoleVolume& roles, const BoxGrid& box) {
  const Grid& g = roles.role.grid;
  Mask m{box.size, {g.spacing[0], g.spacing[1], g.spacing[2]}, std::vector<std::uint8_t>(std::size_t(box.n_voxels()))};
  for (std::int64_t b = 0; b < box.n_voxels(); ++b) {
    const std::int64_t v = box.image_voxel(b);
    m.values[std::size_t(b)] = v >= 0 && roles.role.values[std::size_t(v)] == RoleVolume::kMyocardium;
  }
  return m;
}

/// A component of (closed and filled) \ myocardium, with its boundary areas [mm^2].
struct Candidate {
  std::int32_t component = 0;
  std::int64_t voxels = 0;
  double area_on_myocardium = 0, area_open = 0;
  double enclosure() const { return area_on_myocardium / std::max(area_on_myocardium + area_open, 1e-300); }
};

std::vector<Candidate> score_candidates(const std::vector<std::int32_t>& component, const Mask& myo,
                                        const BoxGrid& box) {
  std::int32_t n = 0;
  for (std::int32_t c : component) n = std::max(n, c);
  std::vector<Candidate> out(std::size_t(n) + 1);
  for (std::int32_t c = 0; c <= n; ++c) out[std::size_t(c)].component = c;
  const std::array<double, 3> face_area = box.face_areas();
  for (std::int64_t b = 0; b < box.n_voxels(); ++b) {
    const std::int32_t c = component[std::size_t(b)];
    if (c == 0) continue;
    Candidate& cand = out[std::size_t(c)];
    ++cand.voxels;
    // Candidates lie inside the padding, so every face neighbour is in the box.
    for (int a = 0; a < 3; ++a)
      for (const std::int64_t nb : {b - box.stride(a), b + box.stride(a)}) {
        if (myo.values[std::size_t(nb)])
          cand.area_on_myocardium += face_area[std::size_t(a)];
        else if (component[std::size_t(nb)] != c)
          cand.area_open += face_area[std::size_t(a)];
      }
  }
  out.erase(out.begin());
  return out;
}

/// The pools among the candidates (largest first); the rest is counted as ignored. A pool is walled
/// by the myocardium (enclosure) and holds a share of its volume, as a ventricle's blood does.
std::vector<Candidate> select_pools(std::vector<Candidate> cands, const DeriveCavitiesOptions& o,
                                    std::int64_t myocardium_voxels, DerivedCavities& report, double voxel_volume) {
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) { return a.voxels > b.voxels; });
  const double min_voxels = o.min_pool_fraction_of_myocardium * double(myocardium_voxels);
  std::vector<Candidate> pools;
  for (const Candidate& c : cands) {
    const double n = double(c.voxels);
    const bool pool = c.enclosure() >= o.min_enclosure && pools.size() < 2 && n >= min_voxels &&
                      (pools.empty() || n >= o.min_second_pool_fraction * double(pools[0].voxels));
    if (pool) {
      pools.push_back(c);
    } else {
      ++report.ignored_regions;
      report.ignored_volume_mm3 += n * voxel_volume;
    }
  }
  if (!pools.empty()) return pools;
  std::ostringstream why;
  why << "no region is enclosed by the myocardium, even after closing its openings with a ball of radius "
      << o.closing_radius_mm << " mm";
  if (cands.empty())
    why << " (the closing filled no background voxel)";
  else
    why << " (the largest region the closing added, " << double(cands[0].voxels) * voxel_volume / 1000.0 << " mL, is "
        << std::setprecision(2) << 100.0 * double(cands[0].voxels) / double(myocardium_voxels)
        << " % of the myocardium's volume and has " << std::lround(100 * cands[0].enclosure())
        << " % of its boundary on the myocardium; a blood pool needs "
        << std::lround(100 * o.min_pool_fraction_of_myocardium) << " % and " << std::lround(100 * o.min_enclosure)
        << " %)";
  CARDIO_FAIL(why.str());
}

/// 36 pi V^2 / A^3 of a pool (1 for a ball; the staircase inflates A alike for every pool).
double compactness(const std::vector<std::uint8_t>& pool, std::uint8_t id, const BoxGrid& box) {
  const std::array<double, 3> face_area = box.face_areas();
  double area = 0;
  std::int64_t voxels = 0;
  for (std::int64_t b = 0; b < box.n_voxels(); ++b) {
    if (pool[std::size_t(b)] != id) continue;
    const Index3 i = box.index(b);
    for (int a = 0; a < 3; ++a)
      CARDIO_CHECK(i[a] > 0 && i[a] + 1 < box.size[a], "derive_cavities: a pool reaches the working box's border");
    ++voxels;
    for (int a = 0; a < 3; ++a)
      for (const std::int64_t nb : {b - box.stride(a), b + box.stride(a)})
        area += pool[std::size_t(nb)] != id ? face_area[std::size_t(a)] : 0.0;
  }
  const double volume = double(voxels) * box.voxel_volume();
  return area > 0 ? 36 * std::numbers::pi * volume * volume / (area * area * area) : 0.0;
}

/// The pools named (lv: the more compact; rv: the other) and written into the roles.
std::vector<DerivedCavity> name_and_write_pools(const std::vector<std::uint8_t>& pool,
                                                const std::vector<Candidate>& pools, const std::vector<CapReport>& caps,
                                                const BoxGrid& box, RoleVolume& roles) {
  std::vector<double> compact(pools.size());
  for (std::size_t p = 0; p < pools.size(); ++p) compact[p] = compactness(pool, std::uint8_t(p + 1), box);
  std::vector<std::size_t> order{0};
  if (pools.size() == 2)
    order = compact[1] > compact[0] ? std::vector<std::size_t>{1, 0} : std::vector<std::size_t>{0, 1};
  const char* names[] = {"lv", "rv"};
  std::vector<DerivedCavity> out;
  for (std::size_t c = 0; c < order.size(); ++c) {
    const std::size_t p = order[c];
    DerivedCavity d;
    d.name = names[c];
    d.enclosure = pools[p].enclosure();
    d.compactness = compact[p];
    d.cap_voxels = caps[p].voxels;
    d.openings = caps[p].openings;
    d.uncapped = caps[p].refused;
    roles.cavity_names.push_back(d.name);
    for (std::int64_t b = 0; b < box.n_voxels(); ++b) {
      if (pool[std::size_t(b)] != std::uint8_t(p + 1)) continue;
      const std::int64_t v = box.image_voxel(b);
      if (v < 0) continue;  // beyond the image: the mask was cut there
      roles.role.values[std::size_t(v)] = RoleVolume::cavity_role(c);
      ++d.voxels;
    }
    d.volume_mm3 = double(d.voxels) * box.voxel_volume();
    out.push_back(d);
  }
  return out;
}

}  // namespace

DerivedCavities derive_cavities(RoleVolume& roles, const DeriveCavitiesOptions& o) {
  CARDIO_CHECK(roles.cavity_names.empty(), "derive_cavities: the volume has cavities already");
  CARDIO_CHECK(o.closing_radius_mm > 0, "derive_cavities: closing radius " << o.closing_radius_mm << " mm");
  DerivedCavities report;
  report.closing_radius_mm = o.closing_radius_mm;
  const BoxGrid box = working_box(roles, o.closing_radius_mm);
  std::ostringstream what;
  what << "deriving the cavities (the myocardium's box padded by the closing radius " << o.closing_radius_mm
       << " mm: " << box.n_voxels() << " voxels)";
  check_fits_in_memory(std::uint64_t(double(box.n_voxels()) * kBytesPerBoxVoxel), what.str());
  const Mask myo = myocardium_in_box(roles, box);
  const std::vector<std::uint8_t> filled = itk_morphology::closed_and_filled(myo, o.closing_radius_mm);
  Mask added{myo.size, myo.spacing, std::vector<std::uint8_t>(filled.size())};
  for (std::size_t b = 0; b < filled.size(); ++b) added.values[b] = filled[b] && !myo.values[b];
  const std::vector<std::int32_t> component = itk_morphology::face_connected_components(added);
  const std::vector<Candidate> pools =
      select_pools(score_candidates(component, myo, box), o,
                   std::count(myo.values.begin(), myo.values.end(), std::uint8_t(1)), report, box.voxel_volume());

  // Pool masks (1, 2 in size order), capped flat in their openings.
  std::vector<std::uint8_t> pool(filled.size(), 0);
  for (std::size_t b = 0; b < pool.size(); ++b)
    for (std::size_t p = 0; p < pools.size(); ++p)
      if (component[b] == pools[p].component) pool[b] = std::uint8_t(p + 1);
  std::vector<CapReport> caps;
  for (std::size_t p = 0; p < pools.size(); ++p)
    caps.push_back(cap_openings(pool, std::uint8_t(p + 1), myo.values, filled, box, o.closing_radius_mm));

  report.cavities = name_and_write_pools(pool, pools, caps, box, roles);
  return report;
}

}  // namespace cardio::imaging
