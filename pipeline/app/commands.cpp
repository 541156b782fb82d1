#include "app/commands.hpp"

#include <Eigen/Geometry>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numbers>
#include <optional>
#include <sstream>

#include "app/block_app.hpp"
#include "app/heart_app.hpp"
#include "bench.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/imaging/memory.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "cohort/batch.hpp"
#include "common/exit_codes.hpp"
#include "common/figures.hpp"
#include "mesh/input_check.hpp"
#include "mesh/memory_estimate.hpp"

namespace cardio::app {
namespace {

namespace fs = std::filesystem;
using pipeline::kExitFailed;
using pipeline::kExitUsage;

/// The Args of the run that wrote OUTDIR (its invocation.json), for run --resume OUTDIR.
Args resumed_args(const Args& a) {
  const fs::path file = fs::path(a.outdir) / "invocation.json";
  std::ifstream in(file);
  if (!in) throw UsageError(file.string() + ": not found (run --resume needs a directory written by cardiac run)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
    Args b = a;
    b.config = j.at("config").get<std::string>();
    b.overrides = j.at("overrides").get<std::vector<std::string>>();
    return b;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(file.string() + ": damaged (" + e.what() + ")");
  }
}

/// The checks of `cardiac validate`, used by `cardiac batch` for every case of a manifest (without
/// the memory estimate: the cases run elsewhere or side by side, and each `cardiac run` checks its own).
void validate_document(config::Document& doc) {
  if (!pipeline::is_heart_config(doc)) {
    pipeline::parse_run_config(doc);
    return;
  }
  const pipeline::HeartConfig cfg = pipeline::parse_heart_config(doc);
  pipeline::check_input_files(cfg.mesh, doc);
  pipeline::check_input_contents(cfg.mesh, doc);
}

}  // namespace

int run(const Args& given, Stage& stage) {
  const Args a = given.resume ? resumed_args(given) : given;
  std::shared_ptr<config::Document> doc;
  try {
    doc = config::Document::load_file(a.config);
    for (const auto& o : a.overrides) doc->set_override(o);
  } catch (const Error& e) {
    return invalid(e);
  }
  const bool heart = pipeline::is_heart_config(*doc);
  if (!heart && a.resume)
    throw UsageError("--resume: " + a.outdir + " is not a heart run (only beat runs write checkpoints)");
  if (!heart && a.command == "mesh") {
    std::cerr << "cardiac: " << a.config
              << " has no geometry section: nothing to mesh (block experiments are run with `cardiac run`)\n";
    return kExitUsage;
  }
  std::optional<HeartRun> heart_run;
  std::optional<BlockRun> block_run;
  try {  // the constructors check the config and its inputs
    if (heart)
      heart_run.emplace(a, doc);
    else
      block_run.emplace(a, *doc);
  } catch (const Error& e) {
    return invalid(e);
  }
  return heart ? heart_run->run(stage) : block_run->run(stage);
}

int validate(const Args& a, Stage& stage) {
  stage.what = "validating " + a.config;
  try {
    auto doc = config::Document::load_file(a.config);
    for (const auto& o : a.overrides) doc->set_override(o);
    if (pipeline::is_heart_config(*doc))
      (void)check_heart_config(pipeline::parse_heart_config(*doc), *doc);
    else
      pipeline::parse_run_config(*doc);
  } catch (const Error& e) {
    return invalid(e);
  }
  std::cout << a.config << ": valid\n";
  return 0;
}

int batch(const Args& a) {
  if (!a.overrides.empty()) throw UsageError("batch: --set does not apply (put overrides in the manifest's `set`)");
  pipeline::batch::BatchOptions o;
  o.manifest = a.config;
  o.batch_dir = a.outdir;
  o.executor = a.executor;
  o.jobs = a.jobs;
  o.threads = a.threads;
  o.submit = a.submit;
  o.wait = a.wait;
  o.skip_invalid = a.skip_invalid;
  o.validate = validate_document;
  return pipeline::batch::run_batch(o, std::cout, std::cerr);
}

int collect(const Args& a) { return pipeline::batch::collect({a.config, a.figures}, std::cout, std::cerr); }

int figures(const Args& a) { return cardio::figures::run_figure_script("run_figures.py", a.config, std::cout); }

int phantom(const Args& a, Stage& stage) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = a.voxel_size;
  spec.biventricular = a.config == "biv";
  spec.helix = a.fibres == "streeter" ? phantoms::HelixRule::streeter() : phantoms::HelixRule::land2015();
  if (!a.rotate.empty())
    spec.rotation = Eigen::AngleAxisd(a.rotate[3] * std::numbers::pi / 180.0,
                                      Eigen::Vector3d(a.rotate[0], a.rotate[1], a.rotate[2]).normalized())
                        .toRotationMatrix();
  const Eigen::Vector3d n = phantoms::phantom_grid_size(spec);
  std::ostringstream what;
  what << "building the phantom " << a.config << " at " << a.voxel_size << " mm (a grid of " << n.x() << " x " << n.y()
       << " x " << n.z() << " voxels, about " << pipeline::bytes_text(n.prod() * pipeline::kPhantomBytesPerVoxel)
       << ")";
  stage.what = what.str();
  const phantoms::Phantom ph = phantoms::make_phantom(spec);
  stage.what = "writing the phantom images";
  const fs::path out(a.outdir);
  pipeline::make_writable_directory(out);
  // Slices hold labels only, and no grid: the fibres go to .nrrd, the grid to the message.
  const bool slices = a.format == "tif" || a.format == "png";
  const std::string vectors = slices ? "nrrd" : a.format;
  const fs::path labels = out / (slices ? "labels" : "labels." + a.format);
  if (slices)
    imaging::write_label_stack(ph.labels, labels, "." + a.format);
  else
    imaging::write_label_image(ph.labels, labels);
  imaging::write_vector_image(ph.fibre, out / ("fibre." + vectors));
  imaging::write_vector_image(ph.sheet, out / ("sheet." + vectors));
  const imaging::Grid& g = ph.labels.grid;
  std::cout << "wrote " << labels.string() << (slices ? "/ (one slice per k)" : "") << ", fibre." << vectors
            << ", sheet." << vectors << " (" << g.size[0] << "x" << g.size[1] << "x" << g.size[2] << " voxels of "
            << a.voxel_size << " mm)\n";
  if (slices)
    std::cout << "the slices store no grid; read them with geometry.stack: {spacing: " << g.spacing[0]
              << " mm, origin: [" << g.origin[0] << " mm, " << g.origin[1] << " mm, " << g.origin[2] << " mm]}\n";
  return 0;
}

int bench(const Args& a) {
  bench::BenchOptions o;
  if (!a.sizes.empty()) o.sizes = a.sizes;
  if (!a.thread_list.empty()) o.threads = a.thread_list;
  std::erase_if(o.threads, [](int t) { return t > available_cpus(); });  // the default {1, 2} on one CPU
  if (!a.elements.empty()) o.elements = a.elements;
  o.seconds = a.seconds;
  o.all_isas = a.all_isas;
  o.json_path = a.json;
  bench::run_bench(o, std::cout);
  return 0;
}

int out_of_memory(const Stage& stage, const std::exception& e) {
  std::cerr << "cardiac: out of memory (" << e.what() << ") while " << stage.what << "; "
            << pipeline::bytes_text(double(imaging::available_memory_bytes()))
            << " are available (MemAvailable, capped by the container's memory limit and by ulimit -v)\n"
            << "cardiac: use a larger voxel or element size, or run where more memory is available\n";
  return kExitFailed;
}

}  // namespace cardio::app
