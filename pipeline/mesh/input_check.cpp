#include "mesh/input_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cardio/imaging/image_io.hpp"
#include "cardio/surfaces/rasterize.hpp"
#include "config/surface_options.hpp"

namespace cardio::pipeline {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail_at(const config::Node& n, const std::string& key, const std::string& message) {
  throw InvalidInput(n.where_of(key) + ": " + n.key_path(key) + ": " + message);
}

/// An input file of the config and the key that names it.
struct InputFile {
  enum class Kind { labels, surface, image };
  config::Node node;
  std::string key;
  fs::path path;
  Kind kind;
};

std::vector<InputFile> input_files(const MeshConfig& c, config::Document& doc) {
  const config::Node geo = doc.root().child("geometry");
  std::vector<InputFile> out;
  if (c.geometry.source == GeometrySource::image)
    out.push_back({geo, "labels", c.geometry.labels_file, InputFile::Kind::labels});
  if (c.geometry.source == GeometrySource::surface) {
    const config::Node surface = geo.child("surface");
    if (!c.geometry.surface.as_patches)
      out.push_back({surface, "file", c.geometry.surface.patches.at(0).file, InputFile::Kind::surface});
    const std::vector<config::Node> patches =
        c.geometry.surface.as_patches ? surface.list("patches") : std::vector<config::Node>{};
    for (std::size_t p = 0; p < patches.size(); ++p)
      out.push_back({patches[p], "file", c.geometry.surface.patches[p].file, InputFile::Kind::surface});
  }
  const config::Node fibres = doc.root().child_or_empty("fibres");
  const std::pair<const char*, const fs::path*> images[] = {{"fibre", &c.fibres.fibre_file},
                                                            {"sheet", &c.fibres.sheet_file},
                                                            {"azimuth", &c.fibres.azimuth_file},
                                                            {"elevation", &c.fibres.elevation_file}};
  for (const auto& [key, path] : images)
    if (!path->empty()) out.push_back({fibres, key, *path, InputFile::Kind::image});
  return out;
}

/// A stack of 2-D slices needs geometry.stack (its files carry no 3-D grid), and only a stack takes
/// it; a stack's every slice header is read. False if the labels are not a stack.
bool check_stack(const InputFile& f, const GeometryParams& g) {
  const bool stack = imaging::is_slice_stack(f.path);
  const std::string name = f.path.string();
  if (stack && !g.stack)
    fail_at(f.node, f.key,
            name +
                ": a stack of 2-D slices carries no 3-D voxel spacing: give geometry.stack.spacing (one length "
                "such as 0.02 mm for cubic voxels, or [x, y, z] with a length each) and, for its place in space, "
                "geometry.stack.origin (default [0, 0, 0])");
  if (!stack && g.stack)
    fail_at(f.node, "stack",
            "is for a stack of 2-D slices (a folder or glob pattern of .tif/.tiff/.png files); " + name +
                " is not one and carries its own grid: remove geometry.stack");
  if (stack) (void)imaging::read_image_info(f.path, g.stack);
  return stack;
}

/// Exists, is a readable non-empty file (a folder only as a DICOM series or a stack of slices of
/// labels), and its header reads in the expected format.
void check_file(const InputFile& f, const MeshConfig& cfg) {
  std::error_code ec;
  const std::string name = f.path.string();
  if (f.kind == InputFile::Kind::labels && check_stack(f, cfg.geometry)) return;
  if (!fs::exists(f.path, ec)) fail_at(f.node, f.key, name + ": input file does not exist");
  if (fs::is_directory(f.path, ec)) {
    if (f.kind != InputFile::Kind::labels) fail_at(f.node, f.key, name + ": is a directory; expected a file");
    (void)imaging::read_image_info(f.path);  // a DICOM series
    return;
  }
  std::ifstream in(f.path, std::ios::binary);
  if (!in) fail_at(f.node, f.key, name + ": cannot be read (" + std::strerror(errno) + ")");
  if (in.peek() == std::ifstream::traits_type::eof()) fail_at(f.node, f.key, name + ": is empty");
  if (f.kind == InputFile::Kind::surface && !cfg.geometry.surface.as_patches)
    surfaces::check_surface_patches(f.path, rasterize_options(cfg.geometry.surface));
  else if (f.kind == InputFile::Kind::surface)  // one of several: its classes are checked with the others'
    (void)surfaces::surface_grid_size({{f.path, {}}}, rasterize_options(cfg.geometry.surface));
  else
    (void)imaging::read_image_info(f.path);
}

/// `text` on one line (ITK's messages span several), without surrounding blanks.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  const auto b = text.find_first_not_of(' '), e = text.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
}

/// What the readers' libraries print straight to stderr while it lives (niftilib's "** ERROR:
/// nifti_convert_nhdr2nim: bad dim[0]", ITK's warnings), kept off the console: cardiac's own
/// message is then the first line, and says it.
class StderrCapture {
 public:
  StderrCapture() : m_file(std::tmpfile()) {
    std::fflush(stderr);
    if (m_file) m_saved = ::dup(2);
    if (m_saved >= 0) ::dup2(::fileno(m_file), 2);
  }
  ~StderrCapture() { (void)text(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  /// Restores stderr; what was printed meanwhile, on one line.
  std::string text() {
    std::string out;
    if (m_saved >= 0) {
      std::fflush(stderr);
      ::dup2(m_saved, 2);
      ::close(m_saved);
      m_saved = -1;
      std::rewind(m_file);
      for (int c; (c = std::fgetc(m_file)) != EOF;) out += static_cast<char>(c);
    }
    if (m_file) std::fclose(m_file);
    m_file = nullptr;
    return one_line(out);
  }

 private:
  std::FILE* m_file = nullptr;
  int m_saved = -1;
};

/// Runs `check`; a cardio::Error it throws (the readers name the file) is located at the key, and
/// so is an exception of a library under them (ITK's, which does not name the file).
/// What the libraries printed meanwhile joins the message; after a success, it is a warning.
template <class F>
void at_key(const InputFile& f, F&& check) {
  StderrCapture printed;
  auto said = [&] {
    const std::string t = printed.text();
    return t.empty() ? t : " (the reader printed: " + t + ")";
  };
  try {
    check();
  } catch (const InvalidInput&) {
    throw;
  } catch (const Error& e) {
    fail_at(f.node, f.key, e.what() + said());
  } catch (const std::bad_alloc&) {
    throw;  // main says what was being built
  } catch (const std::length_error&) {
    throw;
  } catch (const std::exception& e) {
    fail_at(f.node, f.key, f.path.string() + ": cannot be read: " + one_line(e.what()) + said());
  }
  if (const std::string t = printed.text(); !t.empty())
    std::cerr << "cardiac: warning: " << f.path.string() << ": the reader printed: " << t << "\n";
}

/// The labels of the geometry source and their voxel counts (-1: not counted, a built-in source),
/// with the source's name for messages.
struct SourceLabels {
  std::string source;
  std::map<std::int32_t, std::int64_t> count;  ///< the role labels, and up to 50 others (for messages)
};

SourceLabels source_labels(const MeshConfig& c, const std::vector<InputFile>& files) {
  const GeometryParams& g = c.geometry;
  SourceLabels s;
  if (g.source == GeometrySource::phantom) {
    s.source = "the phantom " + std::string(name_of(g.phantom.kind));
    for (std::int32_t l : g.phantom.kind == PhantomKind::biventricular ? std::vector<std::int32_t>{0, 1, 2, 3, 4}
                                                                       : std::vector<std::int32_t>{0, 1, 2})
      s.count[l] = -1;
  } else if (g.source == GeometrySource::box) {
    s.source = "the box";
    s.count[1] = -1;
  } else if (g.source == GeometrySource::surface) {
    s.source = "the rasterized surface " + surface_files_text(g.surface);
    for (std::size_t l = 0; l < 2 + g.surface.endocardia.size(); ++l) s.count[std::int32_t(l)] = -1;
  } else {
    s.source = g.labels_file.string();
    std::set<std::int32_t> roles(g.roles.myocardium.begin(), g.roles.myocardium.end());
    for (const auto& [name, labels] : g.roles.cavities) roles.insert(labels.begin(), labels.end());
    imaging::LabelVolume labels;
    at_key(files.front(), [&] { labels = imaging::read_label_image(g.labels_file, g.stack); });
    for (std::int32_t l : labels.values)
      if (auto it = s.count.find(l); it != s.count.end())
        ++it->second;
      else if (roles.count(l) || s.count.size() < 50)
        s.count[l] = 1;
  }
  return s;
}

std::string labels_text(const std::vector<std::int32_t>& labels) {
  std::string t;
  for (std::int32_t l : labels) t += (t.empty() ? "" : ", ") + std::to_string(l);
  return t;
}

/// The myocardium, and each cavity, must have a label that is in some voxel of the source (else
/// `mesh` fails on the myocardium, or meshes a heart without that cavity).
void check_roles(const MeshConfig& c, config::Document& doc, const std::vector<InputFile>& files) {
  const SourceLabels s = source_labels(c, files);
  auto found = [&](const std::vector<std::int32_t>& labels) {
    for (std::int32_t l : labels)
      if (auto it = s.count.find(l); it != s.count.end() && it->second != 0) return true;
    return false;
  };
  std::ostringstream present;
  const bool counted = !s.count.empty() && s.count.begin()->second >= 0;
  present << "; labels present" << (counted ? " (voxel counts):" : ":");
  for (auto it = s.count.begin(); it != s.count.end(); ++it)
    present << (it == s.count.begin() ? " " : ", ") << it->first
            << (counted ? " (" + std::to_string(it->second) + ")" : "");
  const config::Node roles = doc.root().child("geometry").child_or_empty("roles");
  const LabelRoles& r = c.geometry.roles;
  if (!found(r.myocardium))
    fail_at(roles, "myocardium",
            "no voxel of " + s.source + " has a myocardium label (" + labels_text(r.myocardium) + ")" + present.str());
  const std::vector<config::Node> items = roles.list("cavities");
  for (std::size_t i = 0; i < r.cavities.size(); ++i) {
    const auto& [name, labels] = r.cavities[i];
    if (found(labels)) continue;
    const std::string message = "no voxel of " + s.source + " has a label of cavity '" + name + "' (" +
                                labels_text(labels) + ")" + present.str();
    if (i < items.size()) fail_at(items[i], "labels", message);
    fail_at(roles, "cavities", message);
  }
}

}  // namespace

void check_input_files(const MeshConfig& cfg, config::Document& doc) {
  for (const InputFile& f : input_files(cfg, doc)) at_key(f, [&] { check_file(f, cfg); });
  const SurfaceParams& s = cfg.geometry.surface;
  if (cfg.geometry.source == GeometrySource::surface && s.as_patches) {
    const config::Node surface = doc.root().child("geometry").child("surface");
    try {
      surfaces::check_surface_patches(surface_patches(s), rasterize_options(s));
    } catch (const cardio::Error& e) {
      fail_at(surface, "patches", one_line(e.what()));
    }
  }
}

void check_input_contents(const MeshConfig& cfg, config::Document& doc) {
  const std::vector<InputFile> files = input_files(cfg, doc);
  check_roles(cfg, doc, files);
  const imaging::VectorAxes axes = cfg.fibres.components;
  for (const InputFile& f : files) {
    if (f.kind != InputFile::Kind::image) continue;
    if (f.key == "fibre" || f.key == "sheet")
      at_key(f, [&] { (void)imaging::read_vector_image(f.path, axes); });
    else
      at_key(f, [&] { (void)imaging::read_scalar_image(f.path); });
  }
}

}  // namespace cardio::pipeline
