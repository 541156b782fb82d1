#pragma once
/// @file mesh_config.hpp
/// The schema of the image-to-mesh stages (sections `geometry`, `fibres`, `tissue`), parsed in one
/// place (mesh_config.cpp) with keys, defaults, ranges and units; docs/config.md lists them.
/// File paths in a config are relative to the config file's directory.
#include <Eigen/Core>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cardio/config/config.hpp"
#include "cardio/imaging/derive_cavities.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/imaging/resample.hpp"
#include "cardio/meshing/boundary.hpp"

namespace cardio::pipeline {

/// Which labels are myocardium and which are blood pools; every other label is outside.
struct LabelRoles {
  std::vector<std::int32_t> myocardium;
  std::vector<std::pair<std::string, std::vector<std::int32_t>>> cavities;  ///< (name, labels), config order
};

enum class GeometrySource { phantom, image, surface, box };
enum class PhantomKind { lv_ellipsoid, biventricular };
/// The analytic fibre field of a phantom: Land et al. 2015's helix rule, or Streeter's.
enum class PhantomFibres { land_benchmark, streeter };
enum class BoundaryFit { staircase, smooth };
enum class FibreSource { phantom, rule, vectors, angles, uniform };

/// The config names, for messages and reports.
std::string_view name_of(PhantomKind kind);
std::string_view name_of(FibreSource source);
std::string_view name_of(PhantomFibres fibres);

struct PhantomParams {
  PhantomKind kind = PhantomKind::lv_ellipsoid;
  double voxel_size = 1.0;  ///< [mm]
  PhantomFibres fibres = PhantomFibres::land_benchmark;
  Eigen::Vector3d rotation_axis{0, 0, 1};
  double rotation_angle = 0.0;  ///< [rad] rotation of the whole phantom (oblique direction matrix)
};

/// A rectangular block of voxels [origin, origin + size] (e.g. Land et al. 2015 problem 1's beam).
struct BoxParams {
  Eigen::Vector3d size{10, 1, 1};   ///< [mm]; each a multiple of voxel_size
  Eigen::Vector3d origin{0, 0, 0};  ///< [mm] corner
  double voxel_size = 0.5;          ///< [mm]
};

/// One surface file; without a class, its triangles are classified by SurfaceParams::class_array.
struct SurfacePatchParams {
  std::filesystem::path file;
  std::string role;  ///< for messages: "epicardium", "endocardium lv", "base", "valve mitral", "classes"
  std::optional<int> patch_class;
};

struct SurfaceParams {
  /// `file:` gives one patch classified by class_array; `patches:` gives them one by one.
  std::vector<SurfacePatchParams> patches;
  bool as_patches = false;        ///< given as `patches:`
  double stitch_width = 3.0;      ///< [mm] facing rims of different patches closer than this are stitched
  bool cap_open_rims = false;     ///< fan the rims left open (surfaces open by design) as base
  double voxel_size = 1.0;        ///< [mm]
  double merge_tolerance = 1e-3;  ///< [mm]
  std::string class_array = "class";
  int base_class = 1;
  int epicardium_class = 2;
  std::vector<std::pair<int, std::string>> endocardia{{3, "lv"}, {4, "rv"}};  ///< (class, cavity name)
};

/// The surface's file, or its patch files, for messages.
std::string surface_files_text(const SurfaceParams& s);

struct GeometryParams {
  GeometrySource source = GeometrySource::phantom;
  PhantomParams phantom;
  BoxParams box;
  std::filesystem::path labels_file;            ///< source: image (file, DICOM folder, or stack of 2-D slices)
  std::optional<imaging::StackGeometry> stack;  ///< geometry.stack: the grid of a stack of 2-D slices
  SurfaceParams surface;
  LabelRoles roles;
  /// geometry.derive_cavities: blood pools derived from a mask without them (roles.cavities empty).
  std::optional<imaging::DeriveCavitiesOptions> derive_cavities;
  std::optional<double> element_size;  ///< [mm]; auto (std::nullopt): keep the source's voxels
  imaging::LabelVote label_vote = imaging::LabelVote::majority;
  bool keep_islands = false;
  meshing::BaseSpec base;
  /// smooth (the default for hearts): boundary nodes moved onto the smooth surface
  /// (meshing/boundary_fit.hpp); staircase: the voxel faces as they are (the default for boxes).
  BoundaryFit boundary_fit = BoundaryFit::staircase;
  double volume_tolerance = 0.05;  ///< mesh vs source volumes: a larger relative difference is a warning
};

struct RuleAngles {
  double helix_endo = 60.0 * 3.14159265358979323846 / 180;
  double helix_epi = -60.0 * 3.14159265358979323846 / 180;
  double sheet_endo = -65.0 * 3.14159265358979323846 / 180;
  double sheet_epi = 25.0 * 3.14159265358979323846 / 180;
};

struct FibreParams {
  FibreSource source = FibreSource::rule;                          ///< default: phantom for phantoms, else rule
  Eigen::Vector3d uniform_fibre{1, 0, 0}, uniform_sheet{0, 1, 0};  ///< uniform (physical axes)
  std::filesystem::path fibre_file, sheet_file;                    ///< vectors
  imaging::VectorAxes components = imaging::VectorAxes::physical;
  std::filesystem::path azimuth_file, elevation_file;  ///< angles
  imaging::AngleUnit angle_unit = imaging::AngleUnit::degrees;
  Eigen::Matrix3d reference_axes =
      Eigen::Matrix3d::Identity();  ///< columns: azimuth 0, azimuth 90 deg, elevation 90 deg
  bool fill_missing_by_rule = false;
  RuleAngles rule;
};

struct MeshConfig {
  std::string name = "heart";
  GeometryParams geometry;
  FibreParams fibres;
  double density = 1.06;  ///< [mg/mm^3]
  bool write_surfaces = true;
  bool draw_figures = true;       ///< beat runs: `cardiac figures OUTDIR` at the end (output.figures)
  double max_output_bytes = 4e9;  ///< output.max_size_warning: warn above this estimate; 0: never
};

/// True if the document describes an image-based heart (has a `geometry` section).
bool is_heart_config(config::Document& doc);

/// Parse the geometry/fibres/tissue sections, `name` and the output keys. With `check_unknown`,
/// unknown keys are errors (false when a caller parses further sections of the same document).
MeshConfig parse_mesh_config(config::Document& doc, bool check_unknown = true);

/// Parse only what determines the mesh: the sections geometry, fibres and tissue (name and the
/// output keys keep their defaults). The mesh cache keys on exactly the values this reads.
MeshConfig parse_mesh_sections(config::Document& doc);

/// Every input file the config names (for `cardiac validate`: they must exist and be readable).
std::vector<std::filesystem::path> input_files(const MeshConfig& c);

}  // namespace cardio::pipeline
